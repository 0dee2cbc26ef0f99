package tokenizer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Reduction is a sub-vocabulary of a tokenizer: what a small model trained
// on a known domain (the environments' prompts and answers) needs, instead
// of all 151k Qwen tokens whose embedding and output rows would be most of
// its weights and most of its compute.
//
// It is lossless both ways. Reduced id r is the base tokenizer's id IDs[r];
// the reduced tokenizer's file holds those tokens, with the same byte
// strings, and the merges among them in the base order. So decoding reduced
// ids gives exactly the text the base ids give; every one of the 256 byte
// tokens is kept, so any text can be encoded; and every text the reduction
// was built from encodes to exactly the base tokenizer's ids, mapped (Reduce
// checks this). Text from outside the domain still encodes and decodes, but
// may split into more, smaller tokens than the base tokenizer would use.
type Reduction struct {
	IDs      []int `json:"ids"`             // reduced id → base id, ascending
	BaseSize int   `json:"base_vocab_size"` // the base tokenizer's vocabulary size
}

// VocabMapFile is the name of the reduced vocabulary's map in a checkpoint.
const VocabMapFile = "vocab_map.json"

// Reduce builds the smallest sub-vocabulary that keeps every added token,
// every byte token, every token of texts' encodings and every token the
// merges pass through on the way to them, and writes a self-contained
// tokenizer for it into dir: tokenizer.json, tokenizer_config.json (when the
// base has one) and VocabMapFile. It loads the result back and checks that
// it encodes every text to the base tokenizer's ids, mapped.
func (t *Tokenizer) Reduce(texts []string, dir string) (Reduction, error) {
	if len(texts) == 0 {
		return Reduction{}, fmt.Errorf("reduce %s: no domain text to keep the tokens of", t.path)
	}
	if len(t.post.prefix)+len(t.post.suffix) > 0 {
		return Reduction{}, fmt.Errorf("reduce %s: the post-processor adds special tokens, whose ids Reduce does not remap", t.path)
	}
	var file map[string]any
	if err := decodeGeneric(t.path, &file); err != nil {
		return Reduction{}, err
	}
	mdl, _ := file["model"].(map[string]any)
	vocab, _ := mdl["vocab"].(map[string]any)
	merges, _ := mdl["merges"].([]any)
	if vocab == nil || merges == nil {
		return Reduction{}, fmt.Errorf("reduce %s: no model.vocab or model.merges", t.path)
	}
	pairs := make([][2]string, len(merges))
	for i, m := range merges {
		a, b, err := mergePair(m)
		if err != nil {
			return Reduction{}, fmt.Errorf("reduce %s: merge %d: %w", t.path, i, err)
		}
		pairs[i] = [2]string{a, b}
	}
	encoded := make([][]int, len(texts))
	for i, text := range texts {
		encoded[i] = t.Encode(text)
	}
	keep := t.closure(encoded, pairs)
	red := Reduction{BaseSize: t.vocabSize}
	for id := range t.vocabSize {
		if keep[id] {
			red.IDs = append(red.IDs, id)
		}
	}
	newID := make(map[int]int, len(red.IDs))
	for r, id := range red.IDs {
		newID[id] = r
	}
	// The vocabulary and the merges among kept tokens.
	newVocab := map[string]any{}
	for s, v := range vocab {
		id, err := jsonInt(v)
		if err != nil {
			return Reduction{}, fmt.Errorf("reduce %s: vocab %q: %w", t.path, s, err)
		}
		if r, ok := newID[id]; ok {
			newVocab[s] = r
		}
	}
	var newMerges []any
	for i, p := range pairs {
		if _, ok := newVocab[p[0]]; !ok {
			continue
		}
		if _, ok := newVocab[p[1]]; !ok {
			continue
		}
		if _, ok := newVocab[p[0]+p[1]]; ok {
			newMerges = append(newMerges, merges[i])
		}
	}
	mdl["vocab"], mdl["merges"] = newVocab, newMerges
	added, _ := file["added_tokens"].([]any)
	for _, a := range added {
		if err := remapID(a, newID); err != nil {
			return Reduction{}, fmt.Errorf("reduce %s: added token: %w", t.path, err)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Reduction{}, err
	}
	if err := writeJSONFile(filepath.Join(dir, "tokenizer.json"), file); err != nil {
		return Reduction{}, err
	}
	if err := t.reduceConfig(dir, newID); err != nil {
		return Reduction{}, err
	}
	if err := writeJSONFile(filepath.Join(dir, VocabMapFile), red); err != nil {
		return Reduction{}, err
	}
	return red, checkReduction(dir, red, texts, encoded)
}

// closure marks the ids to keep, given the domain's encodings.
func (t *Tokenizer) closure(encoded [][]int, pairs [][2]string) []bool {
	keep := make([]bool, t.vocabSize)
	for _, a := range t.added {
		keep[a.ID] = true
	}
	for b := range 256 {
		if id, ok := t.ranks[string([]byte{byte(b)})]; ok {
			keep[id] = true
		}
	}
	// parents: token (byte string) → the pairs whose merge makes it.
	parents := map[string][][2][]byte{}
	for _, p := range pairs {
		a, okA := byteLevelDecode(p[0])
		b, okB := byteLevelDecode(p[1])
		if okA && okB {
			k := string(a) + string(b)
			parents[k] = append(parents[k], [2][]byte{a, b})
		}
	}
	var stack []int
	for _, ids := range encoded {
		for _, id := range ids {
			if !keep[id] {
				keep[id] = true
				stack = append(stack, id)
			}
		}
	}
	for len(stack) > 0 {
		id := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, p := range parents[string(t.tokens[id])] {
			for _, part := range p {
				if pid, ok := t.ranks[string(part)]; ok && !keep[pid] {
					keep[pid] = true
					stack = append(stack, pid)
				}
			}
		}
	}
	return keep
}

// reduceConfig rewrites tokenizer_config.json's added_tokens_decoder ids.
func (t *Tokenizer) reduceConfig(dir string, newID map[int]int) error {
	src := filepath.Join(filepath.Dir(t.path), "tokenizer_config.json")
	if _, err := os.Stat(src); err != nil {
		return nil
	}
	var cfg map[string]any
	if err := decodeGeneric(src, &cfg); err != nil {
		return err
	}
	if dec, ok := cfg["added_tokens_decoder"].(map[string]any); ok {
		out := map[string]any{}
		for k, v := range dec {
			id, err := strconv.Atoi(k)
			if err != nil {
				return fmt.Errorf("reduce %s: added_tokens_decoder key %q is not an id", src, k)
			}
			if r, ok := newID[id]; ok {
				out[strconv.Itoa(r)] = v
			}
		}
		cfg["added_tokens_decoder"] = out
	}
	return writeJSONFile(filepath.Join(dir, "tokenizer_config.json"), cfg)
}

// checkReduction loads the reduced tokenizer and holds its encoding of
// every text to the base tokenizer's (want).
func checkReduction(dir string, red Reduction, texts []string, want [][]int) error {
	rt, err := Load(dir)
	if err != nil {
		return fmt.Errorf("reduce: the reduced tokenizer does not load: %w", err)
	}
	if rt.VocabSize() != len(red.IDs) {
		return fmt.Errorf("reduce: the reduced tokenizer has %d tokens, the map %d", rt.VocabSize(), len(red.IDs))
	}
	for i, text := range texts {
		got := rt.Encode(text)
		mapped := make([]int, len(got))
		for k, r := range got {
			mapped[k] = red.IDs[r]
		}
		if !slices.Equal(mapped, want[i]) {
			return fmt.Errorf("reduce: text %d encodes differently with the reduced vocabulary: %.60q", i, text)
		}
	}
	return nil
}

// LoadReduction reads a checkpoint's VocabMapFile; ok is false when the
// checkpoint has the full vocabulary (no map).
func LoadReduction(dir string) (red Reduction, ok bool, err error) {
	path := filepath.Join(dir, VocabMapFile)
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return red, false, nil
	}
	if err != nil {
		return red, false, err
	}
	if red, err = parseReduction(path, data); err != nil {
		return red, false, err
	}
	return red, true, nil
}

// parseReduction parses and checks VocabMapFile's bytes: exactly the two
// keys Reduce writes, a base size of 1…maxTokenID+1 and reduced ids that
// ascend strictly inside it; path names the file in errors.
func parseReduction(path string, data []byte) (Reduction, error) {
	var red Reduction
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&red); err != nil {
		return Reduction{}, fmt.Errorf("%s: %w", path, err)
	}
	if err := dec.Decode(new(json.RawMessage)); err != io.EOF {
		return Reduction{}, fmt.Errorf("%s: data after the JSON object", path)
	}
	if red.BaseSize < 1 || red.BaseSize > maxTokenID+1 {
		return Reduction{}, fmt.Errorf("%s: base_vocab_size %d is outside 1…%d", path, red.BaseSize, maxTokenID+1)
	}
	if len(red.IDs) == 0 {
		return Reduction{}, fmt.Errorf("%s: ids is empty", path)
	}
	for r, id := range red.IDs {
		switch {
		case id < 0 || id >= red.BaseSize:
			return Reduction{}, fmt.Errorf("%s: ids[%d] = %d is not an id of the %d-token base vocabulary", path, r, id, red.BaseSize)
		case r > 0 && id <= red.IDs[r-1]:
			return Reduction{}, fmt.Errorf("%s: ids[%d] = %d does not follow ids[%d] = %d: the ids must ascend", path, r, id, r-1, red.IDs[r-1])
		}
	}
	return red, nil
}

func mergePair(m any) (string, string, error) {
	switch v := m.(type) {
	case string:
		a, b, ok := strings.Cut(v, " ")
		if !ok {
			return "", "", fmt.Errorf("%q is not two tokens", v)
		}
		return a, b, nil
	case []any:
		if len(v) == 2 {
			a, okA := v[0].(string)
			b, okB := v[1].(string)
			if okA && okB {
				return a, b, nil
			}
		}
	}
	return "", "", fmt.Errorf("unexpected form %v", m)
}

func remapID(entry any, newID map[int]int) error {
	obj, ok := entry.(map[string]any)
	if !ok {
		return fmt.Errorf("not an object")
	}
	id, err := jsonInt(obj["id"])
	if err != nil {
		return err
	}
	r, ok := newID[id]
	if !ok {
		return fmt.Errorf("id %d was not kept", id)
	}
	obj["id"] = r
	return nil
}

func jsonInt(v any) (int, error) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, fmt.Errorf("%v is not a number", v)
	}
	i, err := n.Int64()
	return int(i), err
}

func decodeGeneric(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

func writeJSONFile(path string, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", " ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}
