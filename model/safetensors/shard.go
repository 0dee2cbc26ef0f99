package safetensors

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
)

// The file names transformers gives a checkpoint.
const (
	SingleFileName = "model.safetensors"
	IndexFileName  = "model.safetensors.index.json"
)

// shardPattern matches every weight file name WriteSharded may write.
var shardPattern = regexp.MustCompile(`^model-\d{5}-of-\d{5}\.safetensors$`)

// ShardFileName is the name transformers gives shard i (1-based) of n.
func ShardFileName(i, n int) string { return fmt.Sprintf("model-%05d-of-%05d.safetensors", i, n) }

// index is the JSON of model.safetensors.index.json.
type index struct {
	Metadata  map[string]any    `json:"metadata"`
	WeightMap map[string]string `json:"weight_map"`
}

// WriteSharded writes tensors into dir as transformers' save_pretrained
// does: one model.safetensors when they fit in maxShardBytes (or when
// maxShardBytes <= 0), else shards model-00001-of-0000N.safetensors … plus
// model.safetensors.index.json mapping each tensor to its shard, with
// {"metadata": {"total_size": bytes}}. Tensors are split in the order given
// (pass them in module order, as a state dict would list them): a shard is
// closed when the next tensor would take it past maxShardBytes, and a tensor
// larger than that gets a shard of its own. metadata goes into every
// shard's header (see Write).
//
// Each file is written atomically, the index last; then weight files of an
// earlier save that the new one does not use are removed, so the folder
// never holds two checkpoints.
func WriteSharded(dir string, tensors []Tensor, maxShardBytes int64, metadata map[string]string) error {
	shards, total, err := splitShards(tensors, maxShardBytes)
	if err != nil {
		return fmt.Errorf("writing checkpoint %s: %w", dir, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("writing checkpoint: %w", err)
	}
	keep := map[string]bool{}
	if len(shards) == 1 {
		keep[SingleFileName] = true
		if err := Write(filepath.Join(dir, SingleFileName), shards[0], metadata); err != nil {
			return err
		}
		return removeStale(dir, keep)
	}
	idx := index{Metadata: map[string]any{"total_size": total}, WeightMap: map[string]string{}}
	for i, shard := range shards {
		name := ShardFileName(i+1, len(shards))
		keep[name] = true
		for _, t := range shard {
			idx.WeightMap[t.Name] = name
		}
		if err := Write(filepath.Join(dir, name), shard, metadata); err != nil {
			return err
		}
	}
	keep[IndexFileName] = true
	path := filepath.Join(dir, IndexFileName)
	err = writeAtomic(path, func(w io.Writer) error {
		// json.dumps(index, indent=2, sort_keys=True) + "\n", as transformers.
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		return enc.Encode(idx)
	})
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return removeStale(dir, keep)
}

// splitShards groups tensors as huggingface_hub's
// split_state_dict_into_shards does, and returns the total byte size.
func splitShards(tensors []Tensor, maxShardBytes int64) ([][]Tensor, int64, error) {
	var shards [][]Tensor
	var cur []Tensor
	var curSize, total int64
	seen := map[string]bool{}
	for _, t := range tensors {
		n, err := t.size()
		if err != nil {
			return nil, 0, err
		}
		if seen[t.Name] {
			return nil, 0, fmt.Errorf("tensor %q given twice", t.Name)
		}
		seen[t.Name] = true
		total += n
		if maxShardBytes <= 0 {
			cur = append(cur, t)
			continue
		}
		if n > maxShardBytes {
			shards = append(shards, []Tensor{t})
			continue
		}
		if curSize+n > maxShardBytes && len(cur) > 0 {
			shards = append(shards, cur)
			cur, curSize = nil, 0
		}
		cur = append(cur, t)
		curSize += n
	}
	if len(cur) > 0 || len(shards) == 0 {
		shards = append(shards, cur)
	}
	return shards, total, nil
}

// removeStale deletes weight files in dir that an earlier save wrote and
// the new one does not use.
func removeStale(dir string, keep map[string]bool) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("cleaning checkpoint %s: %w", dir, err)
	}
	for _, e := range entries {
		name := e.Name()
		ours := name == SingleFileName || name == IndexFileName || shardPattern.MatchString(name)
		if !ours || keep[name] || e.IsDir() {
			continue
		}
		if err := os.Remove(filepath.Join(dir, name)); err != nil {
			return fmt.Errorf("cleaning checkpoint %s: %w", dir, err)
		}
	}
	return nil
}
