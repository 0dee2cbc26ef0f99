package optim

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/sugarme/gotch/ts"

	"github.com/ragen-go/ragen/model"
	"github.com/ragen-go/ragen/model/safetensors"
)

// FuzzLoadState: no optimiser state file makes Load panic; a file it
// accepts holds step counts ≥ 0. Load checks the whole file before it
// overwrites a moment, so one optimiser serves every input.
func FuzzLoadState(f *testing.F) {
	names := []string{"model.layers.0.mlp.up_proj.weight", "score.bias"}
	ps := make([]model.Param, len(names))
	for i, name := range names {
		x, err := ts.OfSlice(stateInit[i])
		if err == nil {
			x, err = x.Reshape(stateShapes[i], true)
		}
		if err == nil {
			err = x.RequiresGrad_(true)
		}
		if err != nil {
			f.Fatal(err)
		}
		ps[i] = model.Param{Name: name, T: x}
	}
	a, err := NewAdamW(ps, DefaultOptions(0.01))
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(a.Drop)
	dir := f.TempDir()
	path := filepath.Join(dir, "actor_optim.safetensors")
	if err := a.Save(path); err != nil {
		f.Fatal(err)
	}
	saved, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(saved)
	zeros := func(n int) []byte { return make([]byte, 4*n) }
	for _, c := range []struct {
		tensors []safetensors.Tensor
		meta    map[string]string
	}{
		{ // a step count that is not one
			[]safetensors.Tensor{{Name: "exp_avg/score.bias", DType: safetensors.F32, Shape: []int64{2}, Data: zeros(2)}},
			map[string]string{"step": "-1", "step/score.bias": "99999999999999999999"},
		},
		{ // the moments in another dtype
			[]safetensors.Tensor{{Name: "exp_avg/score.bias", DType: safetensors.F16, Shape: []int64{2}, Data: zeros(1)},
				{Name: "exp_avg_sq/score.bias", DType: safetensors.F32, Shape: []int64{2, 1}, Data: zeros(2)}},
			map[string]string{"step": "3", "step/score.bias": "3", "step/other": "1"},
		},
	} {
		p := filepath.Join(dir, "seed.safetensors")
		if err := safetensors.Write(p, c.tensors, c.meta); err != nil {
			f.Fatal(err)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := a.Load(path); err != nil {
			return
		}
		if a.Steps() < 0 {
			t.Fatalf("loaded a step count of %d", a.Steps())
		}
		for i, st := range a.state {
			if st.t < 0 {
				t.Fatalf("parameter %d: loaded a step count of %d", i, st.t)
			}
		}
	})
}
