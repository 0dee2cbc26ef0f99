package starpo

import (
	"github.com/ragen-go/ragen/model"
	"github.com/ragen-go/ragen/starpo/config"
	"github.com/ragen-go/ragen/starpo/rollout"
	"github.com/ragen-go/ragen/tokenizer"
)

// GenOptions are the per-turn sampling settings of a rollout.
type GenOptions struct {
	model.Sampling
	MaxTokens int      // response tokens per turn (RAGEN: 400; 500 for Bandit)
	Seed      int64    // seeds libtorch's sampler for this rollout
	Stop      []string // stop once the text ends with one of these (e.g. "</answer>")
	// StaticCache and CUDAGraphs choose the decode path (model.GenerateOptions).
	StaticCache, CUDAGraphs bool
}

// genOptions are cfg's rollout sampling settings at temperature (the
// training or the validation one); a turn stops at "</answer>".
func genOptions(cfg config.Config, temperature float64) GenOptions {
	r := cfg.Rollout
	return GenOptions{
		Sampling:  model.Sampling{Temperature: temperature, TopP: r.TopP, TopK: r.TopK},
		MaxTokens: r.ResponseLength, Seed: cfg.Seed, Stop: []string{"</answer>"},
		StaticCache: r.StaticCache, CUDAGraphs: r.CUDAGraphs,
	}
}

// NewGenerator returns a rollout.Generator that samples with the policy:
// prompts are generated as one batch, each sequence stopping on an end
// token (the tokenizer's StopIDs and the model config's eos ids), a stop
// string, or MaxTokens. The text handed to
// the environment is the decoding with special tokens skipped, as RAGEN
// parses it. Each call reuses the keys and values of the previous call's
// sequences (a model.Session), so a turn prefills only what the environment
// added. Call it on the goroutine that owns libtorch, and release once the
// rollout is done.
func NewGenerator(m *model.CausalLM, tok *tokenizer.Tokenizer, o GenOptions) (gen rollout.Generator, release func()) {
	eos := append(tok.StopIDs(), m.Cfg.EOSTokenID...)
	call := 0
	sess := model.NewSession()
	return func(prompts [][]int) ([]rollout.Generation, error) {
		texts := make([]*tokenizer.Transcript, len(prompts))
		for i := range texts {
			texts[i] = tok.NewTranscript(o.Stop)
		}
		opt := model.GenerateOptions{
			Sampling: o.Sampling, MaxNewTokens: o.MaxTokens, EOS: eos,
			// Each call of a rollout gets its own seed, so turns differ and a
			// rerun of the same rollout is identical.
			Seed:        o.Seed + int64(call),
			OnToken:     func(seq, id int) { texts[seq].Add(id) },
			Session:     sess,
			StaticCache: o.StaticCache, CUDAGraphs: o.CUDAGraphs,
		}
		call++
		if len(o.Stop) > 0 {
			opt.Stop = func(seq int, _ []int) bool { return texts[seq].Stopped() }
		}
		gens, err := m.Generate(prompts, opt)
		if err != nil {
			return nil, err
		}
		out := make([]rollout.Generation, len(gens))
		for i, g := range gens {
			texts[i].Finish()
			out[i] = rollout.Generation{IDs: g.IDs, LogProbs: g.LogProbs, Text: texts[i].Text()}
		}
		return out, nil
	}, sess.Drop
}
