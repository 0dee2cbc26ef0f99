package tokenizer

import (
	"testing"

	"github.com/ragen-go/ragen/tokenizer/tokenizertest"
)

func TestTranscript(t *testing.T) {
	tok, err := Load(tokenizertest.Path(t))
	if err != nil {
		t.Fatal(err)
	}
	text := "<think>Push 箱子 right</think><answer>Right</answer>"
	tr := tok.NewTranscript([]string{"</answer>"})
	ids := tok.Encode(text)
	for i, id := range ids {
		tr.Add(id)
		if stopped := tr.Stopped(); stopped != (i == len(ids)-1) {
			t.Fatalf("after token %d of %d: Stopped() = %v (text %q)", i+1, len(ids), stopped, tr.Text())
		}
	}
	tr.Finish()
	if tr.Text() != text {
		t.Fatalf("transcript %q, want %q", tr.Text(), text)
	}
	got := tok.StopIDs()
	want := []int{151645, 151643} // eos is <|im_end|>; then <|endoftext|>
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("StopIDs() = %v, want %v", got, want)
	}
}
