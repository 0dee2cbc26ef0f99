package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/ragen-go/ragen/model"
	"github.com/ragen-go/ragen/tokenizer"
)

func init() {
	register(command{name: "generate", summary: "continue a prompt with a checkpoint (streams text, or --json)", run: runGenerate})
}

// generateOutput is what `ragen generate --json` prints, one per prompt.
type generateOutput struct {
	PromptIDs []int     `json:"prompt_ids"`
	IDs       []int     `json:"ids"`
	Text      string    `json:"text"`
	LogProbs  []float32 `json:"logprobs"`
	Reason    string    `json:"finish_reason"`
}

func runGenerate(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("generate", stderr)
	dir := fs.String("model", "", modelHelp)
	adapter := fs.String("adapter", "", "a PEFT LoRA adapter folder (a LoRA run's export-adapter/) applied, unmerged, over --model")
	prompts := fs.StringArray("prompt", nil, "prompt text (repeatable: the prompts are generated together as one batch)")
	promptIDs := fs.StringArray("prompt-ids", nil, "prompt as comma-separated token ids, needs no tokenizer (repeatable, as --prompt)")
	chat := fs.Bool("chat", false, "wrap each --prompt as a user message with the chat template and add the generation prompt")
	maxNew := fs.Int("max-new-tokens", 128, "most tokens to generate per prompt")
	temp := fs.Float64("temperature", 0, "sampling temperature; 0 = greedy")
	topP := fs.Float64("top-p", 1, "nucleus sampling mass")
	topK := fs.Int("top-k", 0, "sample among the k most likely tokens; 0 = all")
	seed := fs.Int64("seed", 0, "random seed for sampling")
	stops := fs.StringArray("stop", nil, "stop once the text ends with this string (repeatable)")
	place := addPlacementFlags(fs)
	asJSON := fs.Bool("json", false, `print one JSON object {"prompt_ids","ids","text","logprobs","finish_reason"} per prompt and line instead of streaming text`)
	static := fs.Bool("static-cache", false, "decode with fixed shapes over a static KV cache (the same ids and log-probs; slower on the CPU)")
	graphs := fs.Bool("cuda-graphs", false, "replay each decode step as a CUDA graph over the static cache (CUDA only)")
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	if err := noArgs(fs); err != nil {
		return err
	}
	path, err := resolveModel(*dir)
	if err != nil {
		return err
	}
	switch {
	case len(*prompts) == 0 && len(*promptIDs) == 0:
		return errors.New("give exactly one of --prompt and --prompt-ids (either may be repeated for a batch)")
	case len(*prompts) > 0 && len(*promptIDs) > 0:
		return fmt.Errorf("give exactly one of --prompt and --prompt-ids, not both: a batch is all text or all ids (got %d --prompt and %d --prompt-ids)", len(*prompts), len(*promptIDs))
	}
	if *chat && len(*promptIDs) > 0 {
		return errors.New("--chat applies to --prompt text, not to --prompt-ids")
	}
	opts, err := place.options()
	if err != nil {
		return err
	}
	tok, err := optionalTokenizer(path, len(*promptIDs) == 0)
	if err != nil {
		return err
	}
	if tok == nil && len(*stops) > 0 {
		return errors.New("--stop needs a tokenizer in the model folder")
	}
	batch, err := promptBatch(tok, *prompts, *promptIDs, *chat)
	if err != nil {
		return err
	}
	m, err := model.LoadCausalLM(path, opts)
	if err != nil {
		return err
	}
	defer m.Drop()
	if *adapter != "" {
		if err := m.LoadAdapter(*adapter); err != nil {
			return fmt.Errorf("--adapter: %w", err)
		}
	}

	opt := model.GenerateOptions{
		Sampling:     model.Sampling{Temperature: *temp, TopP: *topP, TopK: *topK},
		MaxNewTokens: *maxNew, Seed: *seed, EOS: stopIDs(m.Cfg, tok),
		StaticCache: *static, CUDAGraphs: *graphs,
	}
	// Text streams only for a single prompt; a batch's sequences advance
	// together, so their texts are printed one after another at the end.
	stream := !*asJSON && len(batch) == 1
	var texts []*tokenizer.Transcript
	if tok != nil {
		for range batch {
			texts = append(texts, tok.NewTranscript(*stops))
		}
		opt.OnToken = func(seq int, id int) {
			if piece := texts[seq].Add(id); stream {
				io.WriteString(stdout, piece)
			}
		}
		if len(*stops) > 0 {
			opt.Stop = func(seq int, _ []int) bool { return texts[seq].Stopped() }
		}
	}
	gens, err := m.Generate(batch, opt)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(stdout)
	enc.SetEscapeHTML(false) // keep <|im_end|> readable
	for i, g := range gens {
		out := generateOutput{PromptIDs: batch[i], IDs: g.IDs, LogProbs: g.LogProbs, Reason: g.Reason}
		if texts != nil {
			rest := texts[i].Finish()
			out.Text = texts[i].Text()
			switch {
			case stream:
				fmt.Fprintln(stdout, rest)
			case !*asJSON:
				fmt.Fprintf(stdout, "==> prompt %d <==\n%s\n", i, out.Text)
			}
		}
		switch {
		case *asJSON:
			if err := enc.Encode(out); err != nil {
				return err
			}
		case texts == nil:
			fmt.Fprintln(stdout, joinInts(g.IDs))
		}
	}
	return nil
}

// optionalTokenizer loads the folder's tokenizer; it is required only for
// text prompts.
func optionalTokenizer(dir string, required bool) (*tokenizer.Tokenizer, error) {
	if _, err := os.Stat(filepath.Join(dir, "tokenizer.json")); err != nil && !required && !model.IsGGUF(dir) {
		return nil, nil // a GGUF file always carries its tokenizer
	}
	return tokenizer.Load(dir)
}

// promptBatch turns the prompt flags into token ids, one slice per
// prompt. Errors name the flag, and which one when several are given.
func promptBatch(tok *tokenizer.Tokenizer, prompts, promptIDs []string, chat bool) ([][]int, error) {
	name := func(flag string, i, n int) string {
		if n == 1 {
			return flag
		}
		return fmt.Sprintf("%s[%d]", flag, i)
	}
	var batch [][]int
	for i, p := range promptIDs {
		ids, err := parseIDs(p)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name("--prompt-ids", i, len(promptIDs)), err)
		}
		batch = append(batch, ids)
	}
	for i, p := range prompts {
		text := p
		if chat {
			s, err := tok.RenderChat([]tokenizer.Message{{Role: "user", Content: p}}, true)
			if err != nil {
				return nil, err
			}
			text = s
		}
		ids := tok.Encode(text)
		if len(ids) == 0 {
			return nil, fmt.Errorf("%s is empty", name("--prompt", i, len(prompts)))
		}
		batch = append(batch, ids)
	}
	return batch, nil
}

// parseIDs parses comma-separated token ids.
func parseIDs(s string) ([]int, error) {
	var ids []int
	for _, f := range strings.Split(s, ",") {
		id, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || id < 0 {
			return nil, fmt.Errorf("%q is not a token id", f)
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// stopIDs are the ids that end generation: the config's eos and the
// tokenizer's turn ends.
func stopIDs(cfg model.Config, tok *tokenizer.Tokenizer) []int {
	var ids []int
	ids = append(ids, cfg.EOSTokenID...)
	if tok != nil {
		ids = append(ids, tok.StopIDs()...)
	}
	return ids
}

func joinInts(ids []int) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = strconv.Itoa(id)
	}
	return strings.Join(parts, " ")
}
