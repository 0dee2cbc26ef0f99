package safetensors

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
)

// Checkpoint is a HuggingFace checkpoint folder: one model.safetensors or
// the shards a model.safetensors.index.json names, presented as one set of
// tensors.
type Checkpoint struct {
	dir   string
	files []*File          // in file-name order
	owner map[string]*File // tensor name → the file holding it
	names []string         // sorted
}

// OpenDir opens the checkpoint in dir. Like transformers it prefers
// model.safetensors and otherwise reads model.safetensors.index.json. The
// index and the shards must agree exactly: a missing shard, a tensor the
// index lists but its shard lacks, or a shard tensor the index does not
// place in that shard is an error naming the file and the tensor. Files
// the index does not name are not read, as in transformers.
func OpenDir(dir string) (*Checkpoint, error) {
	single := filepath.Join(dir, SingleFileName)
	if _, err := os.Stat(single); err == nil {
		f, err := Open(single)
		if err != nil {
			return nil, err
		}
		c := &Checkpoint{dir: dir, files: []*File{f}, owner: map[string]*File{}, names: f.Names()}
		for _, name := range c.names {
			c.owner[name] = f
		}
		return c, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("opening checkpoint: %w", err)
	}
	indexPath := filepath.Join(dir, IndexFileName)
	data, err := os.ReadFile(indexPath)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("opening checkpoint %s: found neither %s nor %s", dir, SingleFileName, IndexFileName)
	}
	if err != nil {
		return nil, fmt.Errorf("opening checkpoint: %w", err)
	}
	c, err := openIndexed(dir, indexPath, data)
	if err != nil {
		return nil, err
	}
	return c, nil
}

// openIndexed opens the shards an index names and checks both ways that
// the index and the shards list the same tensors in the same places.
func openIndexed(dir, indexPath string, data []byte) (_ *Checkpoint, err error) {
	var idx index
	if err := json.Unmarshal(data, &idx); err != nil {
		return nil, fmt.Errorf("%s: not a valid index: %w", indexPath, err)
	}
	if len(idx.WeightMap) == 0 {
		return nil, fmt.Errorf("%s: weight_map is missing or empty", indexPath)
	}
	c := &Checkpoint{dir: dir, owner: map[string]*File{}}
	defer func() {
		if err != nil {
			c.Close()
		}
	}()
	byShard := map[string]*File{}
	tensors := slices.Sorted(maps.Keys(idx.WeightMap))
	for _, name := range tensors {
		shard := idx.WeightMap[name]
		if filepath.Base(shard) != shard || !filepath.IsLocal(shard) {
			return nil, fmt.Errorf("%s: tensor %q: shard %q is not a file name in the checkpoint folder", indexPath, name, shard)
		}
		f, ok := byShard[shard]
		if !ok {
			if f, err = Open(filepath.Join(dir, shard)); err != nil {
				return nil, fmt.Errorf("%s: tensor %q: shard %s: %w", indexPath, name, shard, err)
			}
			byShard[shard] = f
			c.files = append(c.files, f)
		}
		if _, err := f.Info(name); err != nil {
			return nil, fmt.Errorf("%s: tensor %q is listed in %s but missing from the shard", f.Path(), name, indexPath)
		}
		c.owner[name] = f
	}
	for shard, f := range byShard {
		for _, name := range f.Names() {
			if want, ok := idx.WeightMap[name]; !ok {
				return nil, fmt.Errorf("%s: tensor %q is not in %s", f.Path(), name, indexPath)
			} else if want != shard {
				return nil, fmt.Errorf("%s: tensor %q is here but %s places it in %s", f.Path(), name, indexPath, want)
			}
		}
	}
	sort.Slice(c.files, func(i, j int) bool { return c.files[i].Path() < c.files[j].Path() })
	c.names = tensors
	return c, nil
}

// Dir is the checkpoint folder.
func (c *Checkpoint) Dir() string { return c.dir }

// Files lists the paths of the safetensors files, sorted.
func (c *Checkpoint) Files() []string {
	paths := make([]string, len(c.files))
	for i, f := range c.files {
		paths[i] = f.Path()
	}
	return paths
}

// Names lists every tensor name, sorted.
func (c *Checkpoint) Names() []string { return slices.Clone(c.names) }

// file finds the file holding the named tensor.
func (c *Checkpoint) file(name string) (*File, error) {
	f, ok := c.owner[name]
	if !ok {
		return nil, fmt.Errorf("checkpoint %s: no tensor %q", c.dir, name)
	}
	return f, nil
}

// Info describes the named tensor.
func (c *Checkpoint) Info(name string) (TensorInfo, error) {
	f, err := c.file(name)
	if err != nil {
		return TensorInfo{}, err
	}
	return f.Info(name)
}

// Bytes is the named tensor's raw data, a view of the mapping valid until
// Close (see File.Bytes).
func (c *Checkpoint) Bytes(name string) ([]byte, error) {
	f, err := c.file(name)
	if err != nil {
		return nil, err
	}
	return f.Bytes(name)
}

// Float32 is a float32 copy of a BF16, F16 or F32 tensor.
func (c *Checkpoint) Float32(name string) ([]float32, error) {
	f, err := c.file(name)
	if err != nil {
		return nil, err
	}
	return f.Float32(name)
}

// Close unmaps every file, returning the first error.
func (c *Checkpoint) Close() error {
	var first error
	for _, f := range c.files {
		if err := f.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}
