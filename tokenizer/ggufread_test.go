package tokenizer

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// The tests read the tokenizer metadata of a real GGUF file themselves: a
// minimal reader of the key-value section (GGUF versions 2 and 3), so that
// package tokenizer does not depend on the project's GGUF package.

// smolLM2GGUF is SmolLM2-135M-Instruct's GGUF under the repository root.
const smolLM2GGUF = ".cache/models/SmolLM2-135M-Instruct.Q4_1.gguf"

// smolLM2 returns FromGGUF of SmolLM2's GGUF, skipping the test without it.
func smolLM2(tb testing.TB) *Tokenizer {
	tb.Helper()
	path := filepath.Join("..", smolLM2GGUF)
	if _, err := os.Stat(path); err != nil {
		tb.Skipf("%s is missing (the model cache of the repository)", smolLM2GGUF)
	}
	v, err := readGGUFVocab(path)
	if err != nil {
		tb.Fatal(err)
	}
	tk, err := FromGGUF(v)
	if err != nil {
		tb.Fatal(err)
	}
	return tk
}

// readGGUFVocab reads the tokenizer keys of a GGUF file.
func readGGUFVocab(path string) (GGUFVocab, error) {
	v := GGUFVocab{Source: path, BOS: -1, EOS: -1, Pad: -1, Unk: -1}
	f, err := os.Open(path)
	if err != nil {
		return v, err
	}
	defer f.Close()
	r := &ggufReader{r: bufio.NewReaderSize(f, 1<<20)}
	if magic := r.u32(); magic != 0x46554747 { // "GGUF"
		return v, fmt.Errorf("%s: not a GGUF file", path)
	}
	if ver := r.u32(); ver != 2 && ver != 3 {
		return v, fmt.Errorf("%s: GGUF version %d", path, ver)
	}
	r.u64() // tensors
	n := r.u64()
	for i := uint64(0); i < n && r.err == nil; i++ {
		key := r.str()
		val := r.value(r.u32())
		switch key {
		case "tokenizer.ggml.model":
			v.Model, _ = val.(string)
		case "tokenizer.ggml.pre":
			v.Pre, _ = val.(string)
		case "tokenizer.ggml.tokens":
			for _, x := range val.([]any) {
				v.Tokens = append(v.Tokens, x.(string))
			}
		case "tokenizer.ggml.token_type":
			for _, x := range val.([]any) {
				v.TokenTypes = append(v.TokenTypes, int32(x.(int64)))
			}
		case "tokenizer.ggml.merges":
			for _, x := range val.([]any) {
				v.Merges = append(v.Merges, x.(string))
			}
		case "tokenizer.ggml.bos_token_id":
			v.BOS = int(val.(int64))
		case "tokenizer.ggml.eos_token_id":
			v.EOS = int(val.(int64))
		case "tokenizer.ggml.padding_token_id":
			v.Pad = int(val.(int64))
		case "tokenizer.ggml.unknown_token_id":
			v.Unk = int(val.(int64))
		case "tokenizer.ggml.add_bos_token":
			v.AddBOS, _ = val.(bool)
		case "tokenizer.chat_template":
			v.ChatTemplate, _ = val.(string)
		}
	}
	if r.err != nil {
		return v, fmt.Errorf("%s: %w", path, r.err)
	}
	return v, nil
}

type ggufReader struct {
	r   *bufio.Reader
	err error
}

func (g *ggufReader) read(n int) []byte {
	b := make([]byte, n)
	if g.err == nil {
		_, g.err = io.ReadFull(g.r, b)
	}
	return b
}

func (g *ggufReader) u32() uint32 { return binary.LittleEndian.Uint32(g.read(4)) }
func (g *ggufReader) u64() uint64 { return binary.LittleEndian.Uint64(g.read(8)) }
func (g *ggufReader) str() string {
	n := g.u64()
	if n > 1<<24 {
		g.err = errors.New("string too long")
		return ""
	}
	return string(g.read(int(n)))
}

// value reads a value of GGUF type typ: integers as int64, floats as
// float64, arrays as []any.
func (g *ggufReader) value(typ uint32) any {
	switch typ {
	case 0:
		return int64(g.read(1)[0])
	case 1:
		return int64(int8(g.read(1)[0]))
	case 2:
		return int64(binary.LittleEndian.Uint16(g.read(2)))
	case 3:
		return int64(int16(binary.LittleEndian.Uint16(g.read(2))))
	case 4:
		return int64(g.u32())
	case 5:
		return int64(int32(g.u32()))
	case 6:
		return float64(math.Float32frombits(g.u32()))
	case 7:
		return g.read(1)[0] != 0
	case 8:
		return g.str()
	case 9:
		et, n := g.u32(), g.u64()
		if n > 1<<24 {
			g.err = errors.New("array too long")
			return nil
		}
		out := make([]any, 0, n)
		for i := uint64(0); i < n && g.err == nil; i++ {
			out = append(out, g.value(et))
		}
		return out
	case 10, 11:
		return int64(g.u64())
	case 12:
		return math.Float64frombits(g.u64())
	}
	g.err = fmt.Errorf("unknown value type %d", typ)
	return nil
}
