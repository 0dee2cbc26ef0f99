package bench

import (
	"math"

	"github.com/sugarme/gotch"
	"github.com/sugarme/gotch/ts"

	"github.com/ragen-go/ragen/internal/torchrt"
	"github.com/ragen-go/ragen/model"
)

// Threads on the CPU depend on the dtype. fp32 matmuls go to OpenBLAS,
// which runs its own pool on every core: libtorch's OpenMP pool then stays
// at one thread, since two spinning pools on the same cores halve the GEMM
// rate (torchrt.ConfigureThreads' default). bf16 matmuls go to oneDNN,
// which runs on libtorch's pool while OpenBLAS idles: with one thread a
// bf16 decode was 1.2× fp32's, with every core 1.8×. So a bf16 run on the
// CPU, and the bf16 peak, use every core for libtorch ($RAGEN_TORCH_THREADS
// still overrides both).

// useThreadsFor configures the thread pools for dt and returns the libtorch
// thread count in force.
func useThreadsFor(dt gotch.DType, dev gotch.Device) (int, error) {
	allCores := dev.IsCuda() || dt == gotch.BFloat16 || dt == gotch.Half
	th, err := torchrt.ConfigureThreads(allCores)
	return th.Torch, err
}

// Accuracy compares the run dtype's per-token log-probabilities with
// fp32's on the same sequences: the error PPO's importance ratio
// exp(logp − logp_old) sees when rollouts sample in one dtype and the
// update scores in the other.
type Accuracy struct {
	DType         string  `json:"dtype"`
	Tokens        int     `json:"tokens"`
	MeanAbsLogp   float64 `json:"mean_abs_logp_diff"`
	MaxAbsLogp    float64 `json:"max_abs_logp_diff"`
	MeanAbsRatio1 float64 `json:"mean_abs_ratio_minus_1"` // mean |exp(Δlogp) − 1|
	Top1Agreement float64 `json:"top1_agreement"`         // share of positions whose argmax token is the same
}

// accuracy scores Prompts(8, 128) teacher-forced with the run's model and
// with an fp32 copy.
func (r *runner) accuracy() (acc *Accuracy, err error) {
	defer torchrt.Catch(&err, "dtype accuracy")
	ref, err := model.LoadCausalLM(r.dir, model.Options{Device: r.place.Device, DType: gotch.Float})
	if err != nil {
		return nil, err
	}
	defer ref.Drop()
	const B, T = 8, 128
	ps := Prompts(B, T, r.m.Cfg.VocabSize, r.o.Seed+1)
	flat := make([]int64, 0, B*T)
	ones := make([]int64, B*T)
	for _, p := range ps {
		for _, id := range p {
			flat = append(flat, int64(id))
		}
	}
	for i := range ones {
		ones[i] = 1
	}
	var s torchrt.Scope
	defer s.Drop()
	ids := s.Keep(torchrt.Matrix(flat, B, T, r.place.Device))
	mask := s.Keep(torchrt.Matrix(ones, B, T, r.place.Device))
	var lps [2][]float32
	var tops [2][]int64
	for i, m := range []*model.CausalLM{r.m, ref} {
		sc, err := m.Score(ids, mask, model.ScoreOptions{})
		if err != nil {
			return nil, err
		}
		lps[i] = model.Float32s(sc.LogProbs)
		sc.Drop()
		l, err := lastLogitsArgmax(m, ids, mask)
		if err != nil {
			return nil, err
		}
		tops[i] = l
	}
	acc = &Accuracy{DType: r.dtName, Tokens: len(lps[0])}
	for k := range lps[0] {
		d := math.Abs(float64(lps[0][k] - lps[1][k]))
		acc.MeanAbsLogp += d
		acc.MaxAbsLogp = max(acc.MaxAbsLogp, d)
		acc.MeanAbsRatio1 += math.Abs(math.Expm1(float64(lps[0][k] - lps[1][k])))
	}
	acc.MeanAbsLogp /= float64(len(lps[0]))
	acc.MeanAbsRatio1 /= float64(len(lps[0]))
	same := 0
	for k := range tops[0] {
		if tops[0][k] == tops[1][k] {
			same++
		}
	}
	acc.Top1Agreement = float64(same) / float64(len(tops[0]))
	return acc, nil
}

// lastLogitsArgmax is the most likely next token at every position [B·T].
func lastLogitsArgmax(m *model.CausalLM, ids, mask *ts.Tensor) ([]int64, error) {
	var out []int64
	err := torchrt.NoGrad(func() (err error) {
		defer torchrt.Catch(&err, "argmax")
		var s torchrt.Scope
		defer s.Drop()
		T := torchrt.Size(ids)[1]
		pos := s.Op(model.PositionsFromMask(mask))
		bias := s.Op(model.AttentionBias(mask, T, m.DType))
		h := s.Keep(m.Forward(model.Inputs{IDs: ids, Positions: pos, Bias: bias}, nil))
		z := s.Keep(m.Logits(h))
		out = model.Int64s(s.Op(z.Argmax([]int64{-1}, false, false)))
		return nil
	})
	return out, err
}
