package gguf

import (
	"bytes"
	"encoding/binary"
	"math"
	"strings"
	"testing"
)

// raw assembles GGUF bytes by hand, independently of the writer, so that
// tests can build files the writer refuses to make.
type raw struct{ bytes.Buffer }

func (r *raw) u8(v uint8) *raw   { r.WriteByte(v); return r }
func (r *raw) u16(v uint16) *raw { r.Write(binary.LittleEndian.AppendUint16(nil, v)); return r }
func (r *raw) u32(v uint32) *raw { r.Write(binary.LittleEndian.AppendUint32(nil, v)); return r }
func (r *raw) u64(v uint64) *raw { r.Write(binary.LittleEndian.AppendUint64(nil, v)); return r }
func (r *raw) f32(v float32) *raw {
	return r.u32(math.Float32bits(v))
}
func (r *raw) str(s string) *raw { r.u64(uint64(len(s))); r.WriteString(s); return r }

// header writes the magic, version and counts.
func (r *raw) header(version uint32, nTensors, nKV uint64) *raw {
	r.WriteString("GGUF")
	return r.u32(version).u64(nTensors).u64(nKV)
}

// kv writes a key and a value of type t whose bytes body writes.
func (r *raw) kv(key string, t valueType, body func(*raw)) *raw {
	r.str(key).u32(uint32(t))
	body(r)
	return r
}

// info writes a tensor info; dims are GGUF's (ne[0] first).
func (r *raw) info(name string, dims []uint64, t Type, offset uint64) *raw {
	r.str(name).u32(uint32(len(dims)))
	for _, d := range dims {
		r.u64(d)
	}
	return r.u32(uint32(t)).u64(offset)
}

// pad writes zeros up to a multiple of align.
func (r *raw) pad(align int) *raw {
	for r.Len()%align != 0 {
		r.WriteByte(0)
	}
	return r
}

// zeros writes n zero bytes.
func (r *raw) zeros(n int) *raw { r.Write(make([]byte, n)); return r }

// mustParse parses b or fails the test.
func mustParse(t testing.TB, b []byte) *File {
	t.Helper()
	f, err := Parse(b, "test.gguf")
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// checkSentence fails unless err is one sentence about file name: it
// starts "gguf NAME: ", has no line break and no second sentence.
func checkSentence(t testing.TB, err error, name string) {
	t.Helper()
	msg := err.Error()
	prefix := "gguf " + name + ": "
	if name == "" {
		prefix = "gguf: "
	}
	rest, ok := strings.CutPrefix(msg, prefix)
	if !ok || strings.ContainsAny(msg, "\n\r") || strings.Contains(rest, ". ") || strings.HasSuffix(msg, ".") || strings.Contains(rest, ": gguf") {
		t.Errorf("not one sentence about %s: %q", name, msg)
	}
}
