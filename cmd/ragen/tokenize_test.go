package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ragen-go/ragen/tokenizer/tokenizertest"
)

// runTokenizeCmd runs `ragen tokenize args...` through runMain with stdin,
// returning the exit code, standard output and standard error.
func runTokenizeCmd(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	old := stdinReader
	stdinReader = strings.NewReader(stdin)
	defer func() { stdinReader = old }()
	var stdout, stderr bytes.Buffer
	code := runMain(append([]string{"tokenize"}, args...), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// Ids checked by hand against the vocabulary (see tokenizer's TestKnownIDs);
// the test vocabulary is Qwen3's, where <think> is one token (151667).
func TestTokenizeEncodeDecode(t *testing.T) {
	vocab := tokenizertest.Path(t)
	in := `"Hello world"` + "\n" + `"<|im_start|>user\nHi<|im_end|>"` + "\n" + `""` + "\n" + `"<think>"`
	code, out, errOut := runTokenizeCmd(t, in, "--tokenizer", vocab)
	want := "[9707,1879]\n[151644,872,198,13048,151645]\n[]\n[151667]\n"
	if code != 0 || out != want {
		t.Fatalf("encode: exit %d, stdout %q, stderr %q; want %q", code, out, errOut, want)
	}
	// Decoding prints JSON strings, without HTML escaping.
	code, out, errOut = runTokenizeCmd(t, strings.TrimSpace(want)+"\n", "--tokenizer", vocab, "--decode")
	wantText := `"Hello world"` + "\n" + `"<|im_start|>user\nHi<|im_end|>"` + "\n" + `""` + "\n" + `"<think>"` + "\n"
	if code != 0 || out != wantText {
		t.Fatalf("decode: exit %d, stdout %q, stderr %q; want %q", code, out, errOut, wantText)
	}
	code, out, _ = runTokenizeCmd(t, "[151644,872,198,13048,151645]\r\n", "--tokenizer", vocab, "--decode", "--skip-special")
	if code != 0 || out != `"user\nHi"`+"\n" {
		t.Fatalf("decode --skip-special: exit %d, stdout %q", code, out)
	}
	code, out, _ = runTokenizeCmd(t, "[9707, 151643]", "--tokenizer", vocab, "--decode")
	if code != 0 || out != `"Hello<|endoftext|>"`+"\n" {
		t.Fatalf("decode without a final newline: exit %d, stdout %q", code, out)
	}
}

func TestTokenizeErrors(t *testing.T) {
	vocab := tokenizertest.Path(t)
	dir := t.TempDir()
	notBPE := filepath.Join(dir, "tokenizer.json")
	if err := os.WriteFile(notBPE, []byte(`{"model": {"type": "WordPiece", "vocab": {"a": 0}, "merges": []}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	// The real file with a misspelt key in its first added token.
	data, err := os.ReadFile(vocab)
	if err != nil {
		t.Fatal(err)
	}
	typo := filepath.Join(t.TempDir(), "tokenizer.json")
	if err := os.WriteFile(typo, bytes.Replace(data, []byte(`"special":`), []byte(`"specicl":`), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, stdin string
		args        []string
		want        string
	}{
		{"no tokenizer", `"a"`, nil, "--tokenizer is required"},
		{"unknown key", `"a"`, []string{"--tokenizer", typo}, typo + `: added_tokens[0] ("<|endoftext|>") has unknown key "specicl"`},
		{"missing file", `"a"`, []string{"--tokenizer", filepath.Join(dir, "nope.json")}, "nope.json"},
		{"not BPE", `"a"`, []string{"--tokenizer", notBPE}, `model type "WordPiece"`},
		{"malformed line", "\"ok\"\n{\"a\"\n", []string{"--tokenizer", vocab}, "line 2: want a JSON string"},
		{"not a string", "[1,2]\n", []string{"--tokenizer", vocab}, "line 1: want a JSON string"},
		{"empty line", "\"a\"\n\n\"b\"\n", []string{"--tokenizer", vocab}, "line 2 is empty"},
		{"id out of range", "[9707]\n[1, 99999999]\n", []string{"--tokenizer", vocab, "--decode"}, "line 2: token id 99999999 is out of range"},
		{"negative id", "[-3]\n", []string{"--tokenizer", vocab, "--decode"}, "token id -3"},
		{"float id", "[1.5]\n", []string{"--tokenizer", vocab, "--decode"}, "line 1: want a JSON array of token ids"},
		{"skip without decode", `"a"`, []string{"--tokenizer", vocab, "--skip-special"}, "--skip-special only applies with --decode"},
		{"argument", `"a"`, []string{"--tokenizer", vocab, "extra"}, `unexpected argument "extra"`},
		{"chat with decode", `[]`, []string{"--tokenizer", vocab, "--chat", "--decode"}, "--chat encodes conversations; it does not combine with --decode"},
		{"generation prompt without chat", `"a"`, []string{"--tokenizer", vocab, "--generation-prompt=false"}, "--generation-prompt only applies with --chat"},
		{"chat not messages", "\"Hi\"\n", []string{"--tokenizer", vocab, "--chat"}, "line 1: want a JSON array of messages"},
		{"chat no messages", "[{\"role\":\"user\",\"content\":\"a\"}]\n[]\n", []string{"--tokenizer", vocab, "--chat"}, "line 2: chat: no messages"},
	} {
		code, _, errOut := runTokenizeCmd(t, c.stdin, c.args...)
		if code == 0 || !strings.Contains(errOut, c.want) || !strings.HasPrefix(errOut, "ragen tokenize: ") {
			t.Errorf("%s: exit %d, stderr %q; want non-zero and %q", c.name, code, errOut, c.want)
		}
	}
	// Lines before the bad one are still printed.
	_, out, _ := runTokenizeCmd(t, "\"Hello\"\n{\n", "--tokenizer", vocab)
	if out != "[9707]\n" {
		t.Errorf("output before the bad line = %q, want [9707]", out)
	}
}

// --chat prints the rendering and its ids: a RAGEN-style conversation
// (system, user, assistant, user) with and without the generation prompt.
// The assistant's content is not in NFC, as a sampled answer may not be:
// the text keeps it, the ids are those of the normalised text.
func TestTokenizeChat(t *testing.T) {
	vocab := tokenizertest.Path(t)
	conv := `[{"role":"system","content":"You are a helpful assistant."},{"role":"user","content":"Turn 1:\n_#_"},` +
		`{"role":"assistant","content":"<think>\uf95b</think><answer>Up</answer>"},{"role":"user","content":"Reward:\n0"}]`
	want := "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\nTurn 1:\n_#_<|im_end|>\n" +
		"<|im_start|>assistant\n<think>\uf95b</think><answer>Up</answer><|im_end|>\n<|im_start|>user\nReward:\n0<|im_end|>\n"
	for _, tc := range []struct {
		args []string
		text string
	}{
		{[]string{"--chat"}, want + "<|im_start|>assistant\n"},
		{[]string{"--chat", "--generation-prompt=false"}, want},
	} {
		code, out, errOut := runTokenizeCmd(t, conv+"\n", append([]string{"--tokenizer", vocab}, tc.args...)...)
		var got chatOutput
		if code != 0 || json.Unmarshal([]byte(out), &got) != nil {
			t.Fatalf("%v: exit %d, stdout %q, stderr %s", tc.args, code, out, errOut)
		}
		if got.Text != tc.text {
			t.Errorf("%v: text %q, want %q", tc.args, got.Text, tc.text)
		}
		wantJSON, _ := json.Marshal(tc.text)
		_, enc, _ := runTokenizeCmd(t, string(wantJSON)+"\n", "--tokenizer", vocab)
		if ids, _ := json.Marshal(got.IDs); string(ids)+"\n" != enc {
			t.Errorf("%v: ids %s, want the encoding of the text %s", tc.args, ids, enc)
		}
		ids, _ := json.Marshal(got.IDs)
		_, dec, _ := runTokenizeCmd(t, string(ids)+"\n", "--tokenizer", vocab, "--decode")
		var back string
		if json.Unmarshal([]byte(dec), &back) != nil || back != strings.Replace(tc.text, "\uf95b", "\u62cf", 1) {
			t.Errorf("%v: ids decode to %q, want the text in NFC (U+F95B as U+62CF)", tc.args, dec)
		}
	}
}
