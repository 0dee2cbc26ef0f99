package starpo

import (
	"strings"

	"github.com/ragen-go/ragen/model"
	"github.com/ragen-go/ragen/starpo/rollout"
	"github.com/ragen-go/ragen/tokenizer"
)

// GenOptions are the per-turn sampling settings of a rollout.
type GenOptions struct {
	model.Sampling
	MaxTokens int      // response tokens per turn (RAGEN: 400; 500 for Bandit)
	Seed      int64    // seeds libtorch's sampler for this rollout
	Stop      []string // stop once the text ends with one of these (e.g. "</answer>")
}

// NewGenerator returns a rollout.Generator that samples with the policy:
// prompts are generated as one batch, each sequence stopping on
// <|im_end|>/<|endoftext|>, a stop string, or MaxTokens. The text handed to
// the environment is the decoding with special tokens skipped, as RAGEN
// parses it. Call it on the goroutine that owns libtorch.
func NewGenerator(m *model.CausalLM, tok *tokenizer.Tokenizer, o GenOptions) rollout.Generator {
	var eos []int
	for _, s := range []string{"<|im_end|>", "<|endoftext|>"} {
		if id, ok := tok.TokenID(s); ok {
			eos = append(eos, id)
		}
	}
	call := 0
	return func(prompts [][]int) ([]rollout.Generation, error) {
		texts := make([]strings.Builder, len(prompts))
		streams := make([]*tokenizer.StreamDecoder, len(prompts))
		for i := range streams {
			streams[i] = tok.NewStreamDecoder(true)
		}
		opt := model.GenerateOptions{
			Sampling: o.Sampling, MaxNewTokens: o.MaxTokens, EOS: eos,
			// Each call of a rollout gets its own seed, so turns differ and a
			// rerun of the same rollout is identical.
			Seed: o.Seed + int64(call),
			OnToken: func(seq, id int) {
				piece, _ := streams[seq].Add(id)
				texts[seq].WriteString(piece)
			},
		}
		call++
		if len(o.Stop) > 0 {
			opt.Stop = func(seq int, _ []int) bool {
				t := texts[seq].String()
				for _, s := range o.Stop {
					if strings.HasSuffix(t, s) {
						return true
					}
				}
				return false
			}
		}
		gens, err := m.Generate(prompts, opt)
		if err != nil {
			return nil, err
		}
		out := make([]rollout.Generation, len(gens))
		for i, g := range gens {
			texts[i].WriteString(streams[i].Flush())
			out[i] = rollout.Generation{IDs: g.IDs, LogProbs: g.LogProbs, Text: texts[i].String()}
		}
		return out, nil
	}
}
