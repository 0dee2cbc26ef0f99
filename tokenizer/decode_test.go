package tokenizer

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// streamDecode feeds ids one at a time and checks that no piece of output
// is broken UTF-8; it returns the whole output with Flush.
func streamDecode(t *testing.T, tk *Tokenizer, ids []int, skipSpecial bool) string {
	t.Helper()
	d := tk.NewStreamDecoder(skipSpecial)
	var b strings.Builder
	for _, id := range ids {
		s, err := d.Add(id)
		if err != nil {
			t.Fatalf("Add(%d): %v", id, err)
		}
		if !utf8.ValidString(s) {
			t.Fatalf("Add(%d) emitted broken UTF-8 %q", id, s)
		}
		b.WriteString(s)
	}
	b.WriteString(d.Flush())
	return b.String()
}

// Random Unicode text survives Encode then Decode, and the stream decoder
// gives the same text in valid pieces.
func TestRoundTrip(t *testing.T) {
	tk := qwen3(t)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 3000; i++ {
		var s string
		if i%2 == 0 {
			s = randomText(rng, rng.IntN(60))
		} else {
			s = anyRunes(rng, rng.IntN(30))
		}
		// The normalizer composes; on NFC text Encode changes nothing.
		// (Added tokens are ASCII, so cutting them out keeps text NFC.)
		s = norm.NFC.String(s)
		ids := tk.Encode(s)
		got, err := tk.Decode(ids)
		if err != nil {
			t.Fatal(err)
		}
		if got != s {
			t.Fatalf("Decode(Encode(%q)) = %q (ids %v)", s, got, ids)
		}
		if st := streamDecode(t, tk, ids, false); st != s {
			t.Fatalf("streamed %q, want %q", st, s)
		}
	}
}

// anyRunes draws from all of Unicode but the surrogates.
func anyRunes(rng *rand.Rand, n int) string {
	var b strings.Builder
	for b.Len() < n*4 && n > 0 {
		r := rune(rng.IntN(utf8.MaxRune + 1))
		if rng.IntN(3) == 0 {
			r = rune(rng.IntN(0x3000))
		}
		if utf8.ValidRune(r) {
			b.WriteRune(r)
		}
		n--
	}
	return b.String()
}

// Random id sequences, including lone byte tokens that split and break
// characters and special tokens between them: the stream decoder emits only
// valid UTF-8 and ends with Decode's text.
func TestStreamMatchesDecode(t *testing.T) {
	tk := qwen3(t)
	rng := rand.New(rand.NewPCG(3, 4))
	byteID := func(b byte) int { return int(tk.pieces.byteIDs[b]) }
	for i := 0; i < 5000; i++ {
		ids := make([]int, rng.IntN(20))
		for j := range ids {
			switch rng.IntN(6) {
			case 0:
				ids[j] = rng.IntN(tk.VocabSize())
			case 1:
				ids[j] = 151643 + rng.IntN(tk.VocabSize()-151643) // added tokens
			case 2:
				ids[j] = byteID(byte(0x80 + rng.IntN(0x40))) // continuation bytes
			case 3:
				ids[j] = byteID(byte(0xC0 + rng.IntN(0x40))) // lead bytes, valid or not
			default:
				enc := tk.Encode(anyRunes(rng, 1))
				if len(enc) == 0 {
					enc = []int{9707}
				}
				ids[j] = enc[rng.IntN(len(enc))] // a piece of a character
			}
		}
		for _, skip := range []bool{false, true} {
			want, err := tk.decode(ids, skip)
			if err != nil {
				t.Fatal(err)
			}
			if !utf8.ValidString(want) {
				t.Fatalf("Decode(%v) = %q is not valid UTF-8", ids, want)
			}
			if got := streamDecode(t, tk, ids, skip); got != want {
				t.Fatalf("ids %v skip %v: streamed %q, Decode %q", ids, skip, got, want)
			}
		}
	}
}

// A character split over tokens comes out whole, once all of it is there.
func TestStreamHoldsBackPartialCharacter(t *testing.T) {
	tk := qwen3(t)
	d := tk.NewStreamDecoder(false)
	b := []byte("你") // e4 bd a0
	for i, c := range b {
		s, err := d.Add(int(tk.pieces.byteIDs[c]))
		if err != nil {
			t.Fatal(err)
		}
		want := ""
		if i == len(b)-1 {
			want = "你"
		}
		if s != want {
			t.Errorf("after byte %d: %q, want %q", i, s, want)
		}
	}
	if s := d.Flush(); s != "" {
		t.Errorf("Flush = %q, want empty", s)
	}
	// An unfinished character is one U+FFFD at Flush.
	d.Add(int(tk.pieces.byteIDs[0xe4]))
	d.Add(int(tk.pieces.byteIDs[0xbd]))
	if s := d.Flush(); s != "\uFFFD" {
		t.Errorf("Flush of a truncated character = %q, want U+FFFD", s)
	}
}

// appendLossy replaces as Rust's String::from_utf8_lossy (and Python's
// errors="replace", and the WHATWG decoder) do: one U+FFFD per maximal
// invalid subpart.
func TestAppendLossy(t *testing.T) {
	const r = "\uFFFD"
	for _, c := range []struct{ in, want string }{
		{"abc", "abc"},
		{"\xe4\xbd\xa0", "你"},
		{"\xe4\xbd", r},
		{"\xe4\xbdA", r + "A"},
		{"\xe4A\xbd", r + "A" + r},
		{"\xff", r},
		{"\xc0\x80", r + r},                 // overlong: C0 never starts a sequence
		{"\xed\xa0\x80", r + r + r},         // a surrogate: ED allows only 80-9F next
		{"\xf0\x9f\x98", r},                 // a truncated emoji
		{"\xf0\x9f\x98\x80", "😀"},           // the whole emoji
		{"\xf4\x90\x80\x80", r + r + r + r}, // beyond U+10FFFF
		{"\xe0\x80\x80", r + r + r},         // overlong three-byte
		{"a\xf1\x80\x80\xe4b", "a" + r + r + "b"},
		{"\uFFFD", r},
	} {
		if got := string(appendLossy(nil, []byte(c.in))); got != c.want {
			t.Errorf("appendLossy(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestDecodeErrors(t *testing.T) {
	tk := qwen3(t)
	for _, id := range []int{-1, tk.VocabSize(), 1 << 40} {
		if _, err := tk.Decode([]int{9707, id}); err == nil || !strings.Contains(err.Error(), "token id") {
			t.Errorf("Decode with id %d: err = %v, want an error naming the id", id, err)
		}
		d := tk.NewStreamDecoder(false)
		if _, err := d.Add(id); err == nil {
			t.Errorf("StreamDecoder.Add(%d): no error", id)
		}
	}
}

func TestDecodeSkipSpecial(t *testing.T) {
	tk := qwen3(t)
	ids := tk.Encode("<|im_start|>assistant\n<think>hm</think><answer>Up</answer><|im_end|><|endoftext|>")
	got, err := tk.DecodeSkipSpecial(ids)
	if err != nil {
		t.Fatal(err)
	}
	// <think> and </think> are added tokens but not special: RAGEN parses them.
	if want := "assistant\n<think>hm</think><answer>Up</answer>"; got != want {
		t.Errorf("DecodeSkipSpecial = %q, want %q", got, want)
	}
	for id, want := range map[int]bool{151643: true, 151644: true, 151645: true, 151657: false, 151667: false, 9707: false} {
		if tk.IsSpecial(id) != want {
			t.Errorf("IsSpecial(%d) = %v, want %v", id, !want, want)
		}
	}
}
