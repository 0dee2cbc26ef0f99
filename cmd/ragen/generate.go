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

// generateOutput is what `ragen generate --json` prints.
type generateOutput struct {
	IDs      []int     `json:"ids"`
	Text     string    `json:"text"`
	LogProbs []float32 `json:"logprobs"`
	Reason   string    `json:"finish_reason"`
}

func runGenerate(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("generate", stderr)
	dir := fs.String("model", "", "HuggingFace checkpoint folder (config.json, safetensors, tokenizer files)")
	prompt := fs.String("prompt", "", "prompt text")
	promptIDs := fs.String("prompt-ids", "", "prompt as comma-separated token ids (needs no tokenizer)")
	chat := fs.Bool("chat", false, "wrap --prompt as a user message with the chat template and add the generation prompt")
	maxNew := fs.Int("max-new-tokens", 128, "most tokens to generate")
	temp := fs.Float64("temperature", 0, "sampling temperature; 0 = greedy")
	topP := fs.Float64("top-p", 1, "nucleus sampling mass")
	topK := fs.Int("top-k", 0, "sample among the k most likely tokens; 0 = all")
	seed := fs.Int64("seed", 0, "random seed for sampling")
	stops := fs.StringArray("stop", nil, "stop once the text ends with this string (repeatable)")
	place := addPlacementFlags(fs)
	asJSON := fs.Bool("json", false, `print one JSON object {"ids","text","logprobs"} instead of streaming text`)
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	if err := noArgs(fs); err != nil {
		return err
	}
	if *dir == "" {
		return errors.New("--model is required")
	}
	if (*prompt == "") == (*promptIDs == "") {
		return errors.New("give exactly one of --prompt and --prompt-ids")
	}
	if *chat && *promptIDs != "" {
		return errors.New("--chat applies to --prompt text, not to --prompt-ids")
	}
	opts, err := place.options()
	if err != nil {
		return err
	}
	tok, err := optionalTokenizer(*dir, *promptIDs == "")
	if err != nil {
		return err
	}
	ids, err := promptTokens(tok, *prompt, *promptIDs, *chat)
	if err != nil {
		return err
	}
	m, err := model.LoadCausalLM(*dir, opts)
	if err != nil {
		return err
	}
	defer m.Drop()

	opt := model.GenerateOptions{
		Sampling:     model.Sampling{Temperature: *temp, TopP: *topP, TopK: *topK},
		MaxNewTokens: *maxNew, Seed: *seed, EOS: stopIDs(m.Cfg, tok),
	}
	var text *tokenizer.Transcript
	if tok != nil {
		text = tok.NewTranscript(*stops)
		opt.OnToken = func(_ int, id int) {
			if piece := text.Add(id); !*asJSON {
				io.WriteString(stdout, piece)
			}
		}
		if len(*stops) > 0 {
			opt.Stop = func(int, []int) bool { return text.Stopped() }
		}
	} else if len(*stops) > 0 {
		return errors.New("--stop needs a tokenizer in the model folder")
	}
	gens, err := m.Generate([][]int{ids}, opt)
	if err != nil {
		return err
	}
	g := gens[0]
	out := generateOutput{IDs: g.IDs, LogProbs: g.LogProbs, Reason: g.Reason}
	if text != nil {
		rest := text.Finish()
		if !*asJSON {
			fmt.Fprintln(stdout, rest)
		}
		out.Text = text.Text()
	}
	if *asJSON {
		return json.NewEncoder(stdout).Encode(out)
	}
	if tok == nil {
		fmt.Fprintln(stdout, joinInts(g.IDs))
	}
	return nil
}

// optionalTokenizer loads the folder's tokenizer; it is required only for
// text prompts.
func optionalTokenizer(dir string, required bool) (*tokenizer.Tokenizer, error) {
	if _, err := os.Stat(filepath.Join(dir, "tokenizer.json")); err != nil && !required {
		return nil, nil
	}
	return tokenizer.Load(dir)
}

func promptTokens(tok *tokenizer.Tokenizer, prompt, promptIDs string, chat bool) ([]int, error) {
	if promptIDs != "" {
		var ids []int
		for _, f := range strings.Split(promptIDs, ",") {
			id, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || id < 0 {
				return nil, fmt.Errorf("--prompt-ids: %q is not a token id", f)
			}
			ids = append(ids, id)
		}
		return ids, nil
	}
	text := prompt
	if chat {
		s, err := tokenizer.RenderChat([]tokenizer.Message{{Role: "user", Content: prompt}}, true)
		if err != nil {
			return nil, err
		}
		text = s
	}
	return tok.Encode(text), nil
}

// stopIDs are the ids that end generation: the config's eos and the
// tokenizer's turn ends.
func stopIDs(cfg model.Config, tok *tokenizer.Tokenizer) []int {
	var ids []int
	if cfg.EOSTokenID != nil {
		ids = append(ids, *cfg.EOSTokenID)
	}
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
