package optim

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/sugarme/gotch/ts"

	"github.com/ragen-go/ragen/internal/torchrt"
	"github.com/ragen-go/ragen/model"
	"github.com/ragen-go/ragen/model/safetensors"
)

var (
	stateInit   = [][]float32{{1, -2, 0.5, 3, -0.25, 0.75}, {0.1, -0.2}}
	stateShapes = [][]int64{{3, 2}, {2}}
)

func stateParams(t *testing.T) []model.Param {
	return []model.Param{
		{Name: "model.layers.0.mlp.up_proj.weight", T: leaf(t, stateInit[0], stateShapes[0]...)},
		{Name: "score.bias", T: leaf(t, stateInit[1], stateShapes[1]...)},
	}
}

// trainSteps runs steps k0..k1-1 of a fixed gradient sequence.
func trainSteps(t *testing.T, a *AdamW, k0, k1 int) {
	t.Helper()
	ps := a.Params()
	for k := k0; k < k1; k++ {
		if err := a.ZeroGrad(); err != nil {
			t.Fatal(err)
		}
		var cs []*ts.Tensor
		for j := range ps {
			g := make([]float64, len(stateInit[j]))
			for i := range g {
				g[i] = gradAt(k+10*j, i)
			}
			cs = append(cs, constant(t, g, stateShapes[j]...))
		}
		backwardLinear(t, ps, cs)
		if _, stepped, err := StepIfFinite(a, 1); err != nil || !stepped {
			t.Fatalf("step %d: stepped %v, err %v", k, stepped, err)
		}
	}
}

func TestStateRoundTripIsBitIdentical(t *testing.T) {
	o := Options{LR: 0.01, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightDecay: 0.01}
	a := newOpt(t, stateParams(t), o)
	trainSteps(t, a, 0, 3)
	path := filepath.Join(t.TempDir(), "optim.safetensors")
	if err := a.Save(path); err != nil {
		t.Fatal(err)
	}
	f, err := safetensors.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if md := f.Metadata(); md["step"] != "3" || md["step/score.bias"] != "3" {
		t.Errorf("metadata %v, want step 3 and step/score.bias 3", md)
	}
	if _, err := f.Info("exp_avg_sq/model.layers.0.mlp.up_proj.weight"); err != nil {
		t.Error(err)
	}
	f.Close()

	// A copy of the parameters, as a checkpoint would restore them.
	copies := stateParams(t)
	torchrt.NoGrad(func() error {
		for j, p := range a.Params() {
			torchrt.CopyInto(copies[j].T, p.T)
		}
		return nil
	})
	b := newOpt(t, copies, o)
	if err := b.Load(path); err != nil {
		t.Fatal(err)
	}
	if b.Steps() != 3 {
		t.Errorf("loaded Steps() = %d, want 3", b.Steps())
	}
	trainSteps(t, a, 3, 5)
	trainSteps(t, b, 3, 5)
	for j, p := range a.Params() {
		wa, wb := values(t, p.T), values(t, copies[j].T)
		for i := range wa {
			if wa[i] != wb[i] {
				t.Errorf("%s[%d] = %v, after save/load %v: not bit-identical", p.Name, i, wa[i], wb[i])
			}
		}
	}
}

func TestLoadErrorsNameTheTensor(t *testing.T) {
	dir := t.TempDir()
	save := func(name string, ps []model.Param) string {
		a := newOpt(t, ps, DefaultOptions(0.01))
		path := filepath.Join(dir, name)
		if err := a.Save(path); err != nil {
			t.Fatal(err)
		}
		return path
	}
	small := save("small", []model.Param{{Name: "a", T: leaf(t, []float32{1, 2})}})
	wide := save("wide", []model.Param{{Name: "a", T: leaf(t, []float32{1, 2, 3})}})
	two := save("two", []model.Param{{Name: "a", T: leaf(t, []float32{1, 2})}, {Name: "b", T: leaf(t, []float32{1})}})

	target := func() *AdamW {
		return newOpt(t, []model.Param{{Name: "a", T: leaf(t, []float32{0, 0})}, {Name: "b", T: leaf(t, []float32{0})}},
			DefaultOptions(0.01))
	}
	for _, c := range []struct {
		a    *AdamW
		path string
		want string
	}{
		{target(), small, `"step/b"`},
		{newOpt(t, []model.Param{{Name: "a", T: leaf(t, []float32{0, 0})}}, DefaultOptions(0.01)), wide,
			`"exp_avg/a" has shape [3]`},
		{newOpt(t, []model.Param{{Name: "a", T: leaf(t, []float32{0, 0})}}, DefaultOptions(0.01)), two,
			`"exp_avg/b" matches no parameter`},
		{target(), filepath.Join(dir, "absent"), "absent"},
	} {
		err := c.a.Load(c.path)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Load(%s) error %v, want one naming %s", filepath.Base(c.path), err, c.want)
		}
	}
	if err := target().Load(two); err != nil {
		t.Errorf("Load of a matching file: %v", err)
	}
}
