package optim

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/sugarme/gotch"
	"github.com/sugarme/gotch/ts"

	"github.com/ragen-go/ragen/internal/torchrt"
	"github.com/ragen-go/ragen/model/safetensors"
)

// The state file holds, for every parameter, its moments as F32 tensors
// named "exp_avg/{name}" and "exp_avg_sq/{name}" (PyTorch's state keys),
// and in the metadata the optimiser's step count under "step" and each
// parameter's own step count under "step/{name}".
const (
	expAvgPrefix   = "exp_avg/"
	expAvgSqPrefix = "exp_avg_sq/"
	stepKey        = "step"
	stepPrefix     = "step/"
)

// State lists the moments as safetensors tensors whose bytes are copied
// from the device when written, and the metadata with the step counts.
func (a *AdamW) State() ([]safetensors.Tensor, map[string]string) {
	tensors := make([]safetensors.Tensor, 0, 2*len(a.params))
	meta := map[string]string{stepKey: strconv.Itoa(a.steps)}
	for i, p := range a.params {
		st := a.state[i]
		shape := sizeOfOr(st.m)
		for _, x := range []struct {
			prefix string
			t      *ts.Tensor
		}{{expAvgPrefix, st.m}, {expAvgSqPrefix, st.v}} {
			t := x.t
			tensors = append(tensors, safetensors.Tensor{
				Name: x.prefix + p.Name, DType: "F32", Shape: shape,
				Source: func() ([]byte, error) { return torchrt.TensorBytes(t, gotch.Float) },
			})
		}
		meta[stepPrefix+p.Name] = strconv.Itoa(st.t)
	}
	return tensors, meta
}

func sizeOfOr(t *ts.Tensor) []int64 {
	s, err := t.Size()
	if err != nil {
		return nil // Write then reports the size mismatch with the tensor's name
	}
	return s
}

// Save writes the state to one safetensors file at path, atomically: path
// is either the old file or the complete new one.
func (a *AdamW) Save(path string) error {
	tensors, meta := a.State()
	if err := safetensors.Write(path, tensors, meta); err != nil {
		return fmt.Errorf("saving optimiser state: %w", err)
	}
	return nil
}

// Load restores the state Save wrote onto the parameters' device. The file
// must hold exactly the tensors and step counts of this optimiser's
// parameters, with their shapes; it is checked whole before any state is
// overwritten, and errors name the file and the tensor or key at fault.
func (a *AdamW) Load(path string) (err error) {
	f, err := safetensors.Open(path)
	if err != nil {
		return fmt.Errorf("loading optimiser state: %w", err)
	}
	defer f.Close()
	steps, perParam, err := a.checkState(f)
	if err != nil {
		return fmt.Errorf("loading optimiser state: %s: %w", path, err)
	}
	defer torchrt.Catch(&err, "loading optimiser state from "+path)
	err = torchrt.NoGrad(func() error {
		for i, p := range a.params {
			for _, x := range []struct {
				prefix string
				t      *ts.Tensor
			}{{expAvgPrefix, a.state[i].m}, {expAvgSqPrefix, a.state[i].v}} {
				b, err := f.Bytes(x.prefix + p.Name)
				torchrt.Check(err)
				c := torchrt.Must(torchrt.TensorFromBytes(b, torchrt.Size(x.t), gotch.Float))
				torchrt.CopyInto(x.t, c)
				c.MustDrop()
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for i := range a.state {
		a.state[i].t = perParam[i]
	}
	a.steps = steps
	return nil
}

// checkState checks the names, dtypes, shapes and step counts in f against
// the optimiser's parameters and returns the step counts.
func (a *AdamW) checkState(f *safetensors.File) (steps int, perParam []int, err error) {
	meta := f.Metadata()
	if steps, err = metaInt(meta, stepKey); err != nil {
		return 0, nil, err
	}
	want := make(map[string]bool, 2*len(a.params))
	for i, p := range a.params {
		n, err := metaInt(meta, stepPrefix+p.Name)
		if err != nil {
			return 0, nil, err
		}
		perParam = append(perParam, n)
		shape, err := a.params[i].T.Size()
		if err != nil {
			return 0, nil, fmt.Errorf("parameter %q: %w", p.Name, err)
		}
		for _, name := range []string{expAvgPrefix + p.Name, expAvgSqPrefix + p.Name} {
			want[name] = true
			info, err := f.Info(name)
			if err != nil {
				return 0, nil, fmt.Errorf("missing tensor %q", name)
			}
			if info.DType != "F32" {
				return 0, nil, fmt.Errorf("tensor %q has dtype %s, want F32", name, info.DType)
			}
			if !slices.Equal(info.Shape, shape) {
				return 0, nil, fmt.Errorf("tensor %q has shape %v, the parameter has %v", name, info.Shape, shape)
			}
		}
	}
	for _, name := range f.Names() {
		if !want[name] {
			return 0, nil, fmt.Errorf("tensor %q matches no parameter of the optimiser", name)
		}
	}
	for k := range meta {
		if name, ok := strings.CutPrefix(k, stepPrefix); ok && !want[expAvgPrefix+name] {
			return 0, nil, fmt.Errorf("metadata %q matches no parameter of the optimiser", k)
		}
	}
	return steps, perParam, nil
}

func metaInt(meta map[string]string, key string) (int, error) {
	s, ok := meta[key]
	if !ok {
		return 0, fmt.Errorf("missing metadata %q", key)
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("metadata %q = %q is not a step count", key, s)
	}
	return n, nil
}
