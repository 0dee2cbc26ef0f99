package safetensors

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"unicode/utf8"
)

// maxHeaderSize is the largest JSON header accepted, the limit of
// HuggingFace's reference implementation.
const maxHeaderSize = 100_000_000

// metadataKey is the reserved header key holding the string metadata.
const metadataKey = "__metadata__"

// TensorInfo describes one stored tensor.
type TensorInfo struct {
	DType DType   // element type
	Shape []int64 // dimensions, outermost first (row-major)
	Begin int64   // first byte in the data buffer
	End   int64   // one past the last byte in the data buffer
}

// header is a parsed and validated safetensors header.
type header struct {
	tensors   map[string]TensorInfo
	names     []string          // sorted
	metadata  map[string]string // nil when absent
	dataStart int64             // offset of the data buffer in the file
}

// rawInfo is a header entry as written; pointers tell absent from empty.
type rawInfo struct {
	DType       *string  `json:"dtype"`
	Shape       *[]int64 `json:"shape"`
	DataOffsets *[]int64 `json:"data_offsets"`
}

// parseHeader reads and validates the header of the file whose whole
// contents are buf: every check is made before any offset is trusted.
func parseHeader(buf []byte) (*header, error) {
	if len(buf) < 8 {
		return nil, fmt.Errorf("file is %d bytes, too short for the 8-byte header length (truncated?)", len(buf))
	}
	n := binary.LittleEndian.Uint64(buf)
	if n > maxHeaderSize {
		return nil, fmt.Errorf("header length %d exceeds the %d-byte limit", n, maxHeaderSize)
	}
	if 8+n > uint64(len(buf)) {
		return nil, fmt.Errorf("header length %d runs past the end of the %d-byte file (truncated?)", n, len(buf))
	}
	h := &header{tensors: map[string]TensorInfo{}, dataStart: int64(8 + n)}
	js := buf[8:h.dataStart]
	if err := h.decode(js); err != nil {
		return nil, err
	}
	if err := h.checkLayout(int64(len(buf)) - h.dataStart); err != nil {
		return nil, err
	}
	return h, nil
}

// decode parses the JSON header, checking each entry on its own.
func (h *header) decode(js []byte) error {
	if len(js) == 0 || js[0] != '{' {
		return errors.New("header is not a JSON object (it must start with '{')")
	}
	if !utf8.Valid(js) {
		return errors.New("header is not valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(js))
	if _, err := dec.Token(); err != nil { // the opening '{'
		return fmt.Errorf("header is not valid JSON: %w", err)
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return fmt.Errorf("header is not valid JSON: %w", err)
		}
		name, _ := tok.(string) // object keys are always strings
		if seen[name] {
			return fmt.Errorf("tensor %q appears twice in the header", name)
		}
		seen[name] = true
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return fmt.Errorf("header is not valid JSON at %q: %w", name, err)
		}
		if name == metadataKey {
			if err := json.Unmarshal(raw, &h.metadata); err != nil {
				return fmt.Errorf("%s must be an object of strings: %w", metadataKey, err)
			}
			continue
		}
		info, err := decodeInfo(raw)
		if err != nil {
			return fmt.Errorf("tensor %q: %w", name, err)
		}
		h.tensors[name] = info
		h.names = append(h.names, name)
	}
	if _, err := dec.Token(); err != nil { // the closing '}'
		return fmt.Errorf("header is not valid JSON: %w", err)
	}
	// Writers pad the header with spaces to align the data buffer.
	if rest := bytes.TrimLeft(js[dec.InputOffset():], " \t\r\n"); len(rest) > 0 {
		return fmt.Errorf("header has %d bytes of trailing data after the JSON object", len(rest))
	}
	sort.Strings(h.names)
	return nil
}

// decodeInfo parses and checks one tensor entry.
func decodeInfo(raw json.RawMessage) (TensorInfo, error) {
	var r rawInfo
	if err := json.Unmarshal(raw, &r); err != nil {
		return TensorInfo{}, fmt.Errorf("bad entry %s: %w", raw, err)
	}
	if r.DType == nil || r.Shape == nil || r.DataOffsets == nil {
		return TensorInfo{}, fmt.Errorf("entry %s lacks dtype, shape or data_offsets", raw)
	}
	info := TensorInfo{DType: DType(*r.DType), Shape: *r.Shape}
	if !info.DType.Valid() {
		return TensorInfo{}, fmt.Errorf("unknown dtype %q", *r.DType)
	}
	off := *r.DataOffsets
	if len(off) != 2 || off[0] < 0 || off[1] < off[0] {
		return TensorInfo{}, fmt.Errorf("data_offsets %v are not [begin, end] with 0 <= begin <= end", off)
	}
	info.Begin, info.End = off[0], off[1]
	size, err := byteSize(info.DType, info.Shape)
	if err != nil {
		return TensorInfo{}, err
	}
	if size != info.End-info.Begin {
		return TensorInfo{}, fmt.Errorf("shape %v of %s needs %d bytes but data_offsets [%d, %d] span %d",
			info.Shape, info.DType, size, info.Begin, info.End, info.End-info.Begin)
	}
	return info, nil
}

// checkLayout requires the tensors to tile the data buffer of dataLen
// bytes: each within it, none overlapping, no gaps, nothing left over.
func (h *header) checkLayout(dataLen int64) error {
	order := make([]string, 0, len(h.names))
	for _, name := range h.names {
		info := h.tensors[name]
		if info.End > dataLen {
			return fmt.Errorf("tensor %q: data_offsets [%d, %d] run past the end of the %d-byte data buffer (truncated?)",
				name, info.Begin, info.End, dataLen)
		}
		order = append(order, name)
	}
	sort.SliceStable(order, func(i, j int) bool {
		a, b := h.tensors[order[i]], h.tensors[order[j]]
		return a.Begin < b.Begin || (a.Begin == b.Begin && a.End < b.End)
	})
	var end int64
	prev := ""
	for _, name := range order {
		info := h.tensors[name]
		switch {
		case info.Begin < end:
			p := h.tensors[prev]
			return fmt.Errorf("tensor %q [%d, %d) overlaps tensor %q [%d, %d)", name, info.Begin, info.End, prev, p.Begin, p.End)
		case info.Begin > end:
			return fmt.Errorf("tensor %q starts at %d, leaving a gap after byte %d", name, info.Begin, end)
		}
		end, prev = info.End, name
	}
	if end != dataLen {
		return fmt.Errorf("data buffer is %d bytes but the tensors cover only %d", dataLen, end)
	}
	return nil
}
