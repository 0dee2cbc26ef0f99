package parity

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/sugarme/gotch"
	"github.com/sugarme/gotch/ts"

	"github.com/ragen-go/ragen/internal/torchrt"
	"github.com/ragen-go/ragen/model"
	"github.com/ragen-go/ragen/starpo/loss"
)

// The per-token entropy and log-probabilities of the training scorer
// (model.ScoreForTraining: the lm head in chunks, its gradient in closed
// form) against verl's entropy_from_logits, logprobs_from_logits and
// compute_entropy_loss on the same final hidden states and head weight, and
// the head weight's gradient of entropy and log-prob losses against autograd
// through verl's functions.

// scorerFixture is a random tiny Qwen2 with a 300-token vocabulary, untied
// (so lm_head.weight's gradient is the head's alone), and a left-padded
// batch.
type scorerFixture struct {
	m         *model.CausalLM
	ids, mask *ts.Tensor    // [B, T] int64
	respMask  [][]float64   // [B][T−1]: trained positions, some of the real ones
	labels    [][]int64     // [B][T−1]: ids[:, 1:]
	hidden    [][][]float64 // [B][T−1][d] final hidden states
	weight    [][]float64   // [V][d]
}

const scorerChunkRows = 5 // several chunks, the last one partial

var scorer = sync.OnceValues(func() (*scorerFixture, error) {
	dir, err := os.MkdirTemp("", "ragen-parity-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	eos := 1
	cfg := model.Config{
		ModelType: "qwen2", Architectures: []string{"Qwen2ForCausalLM"},
		HiddenSize: 32, IntermediateSize: 48, NumHiddenLayers: 2,
		NumAttentionHeads: 4, NumKeyValueHeads: 2, RopeTheta: 10000, RMSNormEps: 1e-6,
		VocabSize: 300, MaxPositionEmbeddings: 128, TorchDtype: "float32", HiddenAct: "silu", EOSTokenID: model.TokenIDs{eos},
	}
	ckpt := filepath.Join(dir, "ckpt")
	if err := model.WriteRandomCheckpoint(ckpt, cfg, model.InitOptions{Seed: 11, Std: 0.3, BiasStd: 0.1, NormNoise: 0.1}); err != nil {
		return nil, err
	}
	m, err := model.LoadCausalLM(ckpt, model.Options{Device: gotch.CPU, DType: gotch.Float})
	if err != nil {
		return nil, err
	}
	if err := model.SetTrainable(m.Params(), true); err != nil {
		return nil, err
	}
	r := newRand(8, 0)
	B, T := 4, 12
	lengths := []int{12, 9, 5, 11}
	iv, mv := make([]int64, B*T), make([]int64, B*T)
	f := &scorerFixture{m: m, respMask: make([][]float64, B), labels: make([][]int64, B)}
	for b, n := range lengths {
		for j := T - n; j < T; j++ {
			iv[b*T+j], mv[b*T+j] = int64(r.IntN(cfg.VocabSize)), 1
		}
	}
	for b := range B {
		f.respMask[b] = make([]float64, T-1)
		f.labels[b] = iv[b*T+1 : b*T+T]
		for j := range T - 1 {
			if mv[b*T+j] != 0 && r.IntN(4) != 0 { // a real input; some not trained
				f.respMask[b][j] = 1
			}
		}
	}
	f.ids, f.mask = torchrt.Matrix(iv, int64(B), int64(T), gotch.CPU), torchrt.Matrix(mv, int64(B), int64(T), gotch.CPU)
	if err := f.readHidden(); err != nil {
		return nil, err
	}
	return f, nil
})

// readHidden runs the backbone as ScoreForTraining does and keeps the final
// hidden states of the scored positions and the head weight. Left-padding
// positions are untrained; non-finite values there would only be noise in
// verl's gradient, so they are sent as 0.
func (f *scorerFixture) readHidden() (err error) {
	defer torchrt.Catch(&err, "reading hidden states")
	return torchrt.NoGrad(func() error {
		pos, err := model.PositionsFromMask(f.mask)
		if err != nil {
			return err
		}
		defer pos.MustDrop()
		sh := torchrt.Size(f.ids)
		bias, err := model.AttentionBias(f.mask, sh[1], f.m.DType)
		if err != nil {
			return err
		}
		defer bias.MustDrop()
		h := f.m.Forward(model.Inputs{IDs: f.ids, Positions: pos, Bias: bias}, nil) // [B, T, d]
		defer h.MustDrop()
		hv := h.Float64Values()
		B, T, d := int(sh[0]), int(sh[1]), len(hv)/int(sh[0]*sh[1])
		f.hidden = make([][][]float64, B)
		for b := range B {
			f.hidden[b] = make([][]float64, T-1)
			for j := range T - 1 {
				row := hv[(b*T+j)*d : (b*T+j+1)*d]
				f.hidden[b][j] = make([]float64, d)
				for k, v := range row {
					if !math.IsNaN(v) && !math.IsInf(v, 0) {
						f.hidden[b][j][k] = v
					}
				}
			}
		}
		wv := f.m.LMHead.Float64Values()
		f.weight = make([][]float64, len(wv)/d)
		for i := range f.weight {
			f.weight[i] = wv[i*d : (i+1)*d]
		}
		return nil
	})
}

// The loss whose head gradient is compared: coefficients of the entropy
// loss and of the aggregated log-probabilities.
const coefEntropy, coefLogp = -0.7, 1.3

func entropyRequests() []request {
	f, err := scorer()
	if err != nil {
		panic(fmt.Sprintf("parity: building the scorer fixture: %v", err))
	}
	var rs []request
	for _, mode := range aggModes {
		rs = append(rs, request{"name": "entropy/" + string(mode), "fn": "entropy", "dtype": "float32",
			"hidden": f.hidden, "weight": f.weight, "labels": f.labels, "mask": f.respMask, "mode": string(mode),
			"coef_entropy": coefEntropy, "coef_logp": coefLogp})
	}
	return rs
}

// TestScorerEntropy: for every aggregation mode, and with the head run on
// every position or on the trained ones only (ScoreForTraining's only), the
// entropies and log-probabilities on trained positions, EntropyLoss, and
// the lm head's gradient (up to aggScale, loss_test.go) against verl.
// fp32 on both sides; the tolerance is the fp32 one.
func TestScorerEntropy(t *testing.T) {
	f, err := scorer()
	if err != nil {
		t.Fatal(err)
	}
	ent := &maxDiff{t: t, what: "scorer entropy", tol: tolerance["float32"]}
	lp := &maxDiff{t: t, what: "scorer log-prob", tol: tolerance["float32"]}
	el := &maxDiff{t: t, what: "EntropyLoss", tol: tolerance["float32"]}
	gw := &maxDiff{t: t, what: "lm head grad", tol: tolerance["float32"]}
	for _, mode := range aggModes {
		var v struct {
			Entropy    [][]num
			LogProb    [][]num `json:"log_prob"`
			Loss       num
			GradWeight [][]num `json:"grad_weight"`
		}
		verlAnswer(t, "entropy/"+string(mode), &v)
		for _, selective := range []bool{false, true} {
			name := fmt.Sprintf("%s/only=%v", mode, selective)
			rm := tensor(t, f.respMask, "float32")
			var only *ts.Tensor
			if selective {
				only = rm
			}
			sc, err := f.m.ScoreForTraining(f.ids, f.mask, only, scorerChunkRows)
			if err != nil {
				t.Fatal(err)
			}
			ent.matrix(name, rowsOf(t, sc.Entropy, f.respMask), nums(v.Entropy), f.respMask)
			lp.matrix(name, rowsOf(t, sc.LogProbs, f.respMask), nums(v.LogProb), f.respMask)
			le, leVal, err := loss.EntropyLoss(sc.Entropy, rm, mode)
			if err != nil {
				t.Fatal(err)
			}
			k := aggScale(mode, f.respMask)
			el.scalar(name, leVal, float64(v.Loss)*k)
			ll, err := loss.Aggregate(sc.LogProbs, rm, mode)
			if err != nil {
				t.Fatal(err)
			}
			total := le.MustMulScalar(ts.FloatScalar(coefEntropy), false).MustAdd(ll.MustMulScalar(ts.FloatScalar(coefLogp), false), true)
			if err := total.Backward(); err != nil {
				t.Fatal(err)
			}
			f.m.LMHead.ZeroGrad()
			if err := sc.Backward(); err != nil {
				t.Fatal(err)
			}
			g, err := f.m.LMHead.Grad(false)
			if err != nil {
				t.Fatal(err)
			}
			gw.matrix(name, rowsOf(t, g, f.weight), scaled(nums(v.GradWeight), k), nil)
			for _, x := range []*ts.Tensor{g, total, le, ll} {
				x.MustDrop()
			}
			sc.Drop()
		}
	}
	for _, d := range []*maxDiff{ent, lp, el, gw} {
		d.report()
	}
}
