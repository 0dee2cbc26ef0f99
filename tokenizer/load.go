package tokenizer

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Tokenizer is a loaded byte-level BPE tokenizer. It is immutable and safe
// for concurrent use.
type Tokenizer struct {
	path string // tokenizer.json, for messages

	// tokens[id] is the byte string of id: a vocabulary entry, or an added
	// token's text; nil for ids the file does not assign.
	tokens  [][]byte
	special []bool // ids that DecodeSkipSpecial leaves out

	ranks       map[string]int   // vocabulary: byte string -> id
	addedIDs    map[string]int   // added token text -> id
	added       []addedTokenJSON // the added tokens, for export
	rawAdded    addedSplitter    // added tokens matched in the raw text
	normAdded   addedSplitter    // added tokens matched after normalisation
	normJSON    json.RawMessage  // the normalizer as the file gives it, for export
	normalize   func(string) string
	pre         splitter  // the file's pre-tokenizer (regexp2)
	fast        splitter  // hand-written equivalent of pre, or nil
	preSteps    []preStep // pre's steps as the file gives them
	pieces      *pieceEncoder
	merges      mergeList // the merge list in order, for export
	post        template  // what EncodeSpecial adds
	eos, pad    int       // -1 when tokenizer_config.json names none
	bos, unk    int       // likewise
	chatTempl   string    // the chat template's source
	chatName    string    // where it comes from, for messages
	chat        chat      // chatTempl parsed, on first use
	vocabSize   int       // len(tokens)
	modelTokens int       // entries of model.vocab, ids below the added tokens for Qwen
}

// DefaultQwenPath is where `make deps` (scripts/fetch-tokenizer-data.sh)
// puts Qwen's tokenizer.json, relative to the repository root: the
// vocabulary the built-in model's is carved from, and the tests'.
const DefaultQwenPath = ".cache/tokenizer-data/qwen2.5/tokenizer.json"

// Load reads a HuggingFace tokenizer, or a GGUF file's (LoadGGUF). path is
// a tokenizer.json file or a checkpoint folder holding one;
// tokenizer_config.json in the same folder, when present, supplies the eos
// and pad tokens, extra special tokens and the chat template.
//
// Only what this package reproduces exactly is accepted: a BPE model over
// GPT-2's byte-level alphabet (with or without ignore_merges), Split,
// Digits and ByteLevel pre-tokenizers, Unicode normalizers, ByteLevel and
// TemplateProcessing post-processors (the single template), and added
// tokens without strip or single-word rules. Anything else is an error
// naming the file and the setting.
func Load(path string) (*Tokenizer, error) {
	if st, err := os.Stat(path); err == nil && !st.IsDir() && strings.EqualFold(filepath.Ext(path), ".gguf") {
		return LoadGGUF(path)
	}
	tokPath, cfgPath, err := locate(path)
	if err != nil {
		return nil, err
	}
	src, err := readSource(tokPath)
	if err != nil {
		return nil, err
	}
	var cfg *configJSON
	if cfgPath != "" {
		if cfg, err = readConfig(cfgPath); err != nil {
			return nil, err
		}
	}
	t, err := build(src, cfg, cfgPath)
	if err != nil {
		return nil, err
	}
	// transformers ≥ 4.43 saves the template beside the config, and reads
	// that file over the config's chat_template.
	jinjaPath := filepath.Join(filepath.Dir(tokPath), "chat_template.jinja")
	if data, err := os.ReadFile(jinjaPath); err == nil {
		t.chatTempl, t.chatName = string(data), jinjaPath
	}
	return t, nil
}

// readConfig reads tokenizer_config.json.
func readConfig(path string) (*configJSON, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return parseConfig(path, data)
}

// parseConfig parses tokenizer_config.json's bytes; path names the file in
// errors.
func parseConfig(path string, data []byte) (*configJSON, error) {
	cfg := new(configJSON)
	if err := unmarshal(path, data, cfg); err != nil {
		return nil, err
	}
	if err := checkConfigKeys(data); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return cfg, nil
}

// locate resolves Load's argument to tokenizer.json and, if it exists,
// tokenizer_config.json beside it.
func locate(path string) (tokPath, cfgPath string, err error) {
	st, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", "", fmt.Errorf("tokenizer %s: no such file or folder", path)
		}
		return "", "", fmt.Errorf("tokenizer: %w", err)
	}
	tokPath = path
	if st.IsDir() {
		tokPath = filepath.Join(path, "tokenizer.json")
		if _, err := os.Stat(tokPath); err != nil {
			return "", "", fmt.Errorf("tokenizer: folder %s has no tokenizer.json", path)
		}
	}
	cfgPath = filepath.Join(filepath.Dir(tokPath), "tokenizer_config.json")
	if _, err := os.Stat(cfgPath); err != nil {
		cfgPath = ""
	}
	return tokPath, cfgPath, nil
}

// source is a read tokenizer.json: the small settings decoded, the
// vocabulary and merges located in data for their own parsers.
type source struct {
	path          string
	data          []byte
	file          fileJSON
	vocab, merges span
}

func readSource(path string) (*source, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	return parseSource(path, data)
}

// parseSource parses tokenizer.json's bytes; path names the file in errors.
func parseSource(path string, data []byte) (*source, error) {
	src := &source{path: path, data: data}
	var err error
	src.vocab, src.merges, err = findModelParts(data)
	if err != nil {
		return nil, src.syntaxError(err)
	}
	blanked := blankOut(data, src.vocab, src.merges)
	if err := unmarshal(path, blanked, &src.file); err != nil {
		// Offsets in the blanked copy are not the file's: let encoding/json
		// find the error in the file itself.
		if err2 := unmarshal(path, data, new(fileJSON)); err2 != nil {
			return nil, err2
		}
		return nil, err
	}
	if err := checkFileKeys(blanked); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return src, nil
}

// syntaxError reports an error of the scanner (jsonscan.go) with the file,
// line and column.
func (src *source) syntaxError(err error) error {
	var se *scanError
	if errors.As(err, &se) {
		// encoding/json's wording is the familiar one where it sees the
		// same fault.
		if jerr := unmarshal(src.path, src.data, new(any)); jerr != nil {
			return jerr
		}
		line, col := lineCol(src.data, int64(se.Offset))
		return fmt.Errorf("%s:%d:%d: %s", src.path, line, col, se.Msg)
	}
	return fmt.Errorf("%s: %w", src.path, err)
}

func build(src *source, cfg *configJSON, cfgPath string) (*Tokenizer, error) {
	path, f := src.path, &src.file
	t := &Tokenizer{path: path, eos: -1, pad: -1, bos: -1, unk: -1}
	fail := func(format string, a ...any) error {
		return fmt.Errorf("%s: %s", path, fmt.Sprintf(format, a...))
	}
	if err := checkModel(&f.Model, fail); err != nil {
		return nil, err
	}
	ranks, err := t.readVocab(src, fail)
	if err != nil {
		return nil, err
	}
	t.ranks = ranks
	merges, err := t.readMerges(src, ranks, fail)
	if err != nil {
		return nil, err
	}
	t.merges = merges
	// tiktoken-go's constructor indexes and sorts the whole vocabulary;
	// overlap it with the checks below.
	type coreResult struct {
		p   *pieceEncoder
		err error
	}
	core := make(chan coreResult, 1)
	go func() {
		p, err := newPieceEncoder(ranks, merges, f.Model.IgnoreMerges, false)
		core <- coreResult{p, err}
	}()
	defer func() {
		if t.pieces == nil {
			<-core // do not leave the goroutine running after a failed Load
		}
	}()

	if t.normalize, err = parseNormalizer(f.Normalizer); err != nil {
		return nil, fail("normalizer: %v", err)
	}
	if t.normalize != nil {
		t.normJSON = f.Normalizer
	}
	added := f.AddedTokens
	if cfg != nil {
		if added, err = mergeConfigAdded(added, cfg.AddedTokensDecoder, cfgPath); err != nil {
			return nil, err
		}
	}
	if err := t.buildAdded(added, ranks, fail); err != nil {
		return nil, err
	}
	if t.pre, t.fast, t.preSteps, err = parsePreTokenizer(f.PreTokenizer); err != nil {
		return nil, fail("pre_tokenizer: %v", err)
	}
	if t.post, err = parsePostProcessor(f.PostProcessor); err != nil {
		return nil, fail("post_processor: %v", err)
	}
	if err := t.checkTemplate(); err != nil {
		return nil, fail("post_processor: %v", err)
	}
	if err := checkDecoder(f.Decoder); err != nil {
		return nil, fail("decoder: %v", err)
	}
	if cfg != nil {
		if err := t.applyConfig(cfg, cfgPath); err != nil {
			return nil, err
		}
	}
	r := <-core
	if r.err != nil {
		return nil, fail("%v", r.err)
	}
	t.pieces = r.p
	return t, nil
}

// mergeConfigAdded adds to tokenizer.json's added tokens those that
// tokenizer_config.json's added_tokens_decoder lists and it lacks, as
// transformers does, and rejects an id the two files disagree on.
func mergeConfigAdded(added []addedTokenJSON, dec map[string]addedTokenJSON, cfgPath string) ([]addedTokenJSON, error) {
	byID := make(map[int]string, len(added))
	for _, a := range added {
		byID[a.ID] = a.Content
	}
	keys := make([]int, 0, len(dec))
	for k := range dec {
		id, err := strconv.Atoi(k)
		if err != nil || id < 0 || id > maxTokenID || strconv.Itoa(id) != k { // not "07" or "+7"
			return nil, fmt.Errorf("%s: added_tokens_decoder key %q is not a token id (0…%d)", cfgPath, k, maxTokenID)
		}
		keys = append(keys, id)
	}
	sort.Ints(keys)
	for _, id := range keys {
		a := dec[strconv.Itoa(id)]
		a.ID = id
		if c, ok := byID[id]; ok {
			if c != a.Content {
				return nil, fmt.Errorf("%s: added_tokens_decoder gives id %d to %q but tokenizer.json gives it to %q",
					cfgPath, id, a.Content, c)
			}
			continue
		}
		added = append(added, a)
	}
	return added, nil
}

// buildAdded registers the added tokens: their ids, bytes, special flags and
// the matchers that find them in text.
func (t *Tokenizer) buildAdded(added []addedTokenJSON, ranks map[string]int, fail func(string, ...any) error) error {
	t.addedIDs = make(map[string]int, len(added))
	var raw, norm []addedTokenJSON
	for _, a := range added {
		switch {
		case a.Content == "":
			return fail("added token %d has empty content", a.ID)
		case a.ID < 0 || a.ID > maxTokenID:
			return fail("added token %q has id %d, outside 0…%d", a.Content, a.ID, maxTokenID)
		case a.LStrip || a.RStrip || a.SingleWord:
			return fail("added token %q uses lstrip, rstrip or single_word, which are not supported", a.Content)
		}
		if id, ok := ranks[a.Content]; ok && id != a.ID {
			return fail("added token %q has id %d but the vocab gives it id %d", a.Content, a.ID, id)
		}
		if prev, dup := t.addedIDs[a.Content]; dup && prev != a.ID {
			return fail("added token %q has two ids, %d and %d", a.Content, prev, a.ID)
		}
		for a.ID >= len(t.tokens) {
			t.tokens = append(t.tokens, nil)
		}
		if b := t.tokens[a.ID]; b != nil && string(b) != addedBytes(a.Content) {
			return fail("added token %q has id %d, which the vocab gives to %q", a.Content, a.ID, byteLevelEncode(b))
		}
		t.tokens[a.ID] = []byte(addedBytes(a.Content))
		t.addedIDs[a.Content] = a.ID
		if a.Normalized {
			// Matched after normalisation, so against normalised text.
			if t.normalize != nil {
				a.Content = t.normalize(a.Content)
			}
			norm = append(norm, a)
		} else {
			raw = append(raw, a)
		}
	}
	t.special = make([]bool, len(t.tokens))
	for _, a := range added {
		t.special[a.ID] = t.special[a.ID] || a.Special
	}
	t.added = added
	t.rawAdded = newAddedMatcher(raw)
	t.normAdded = newAddedMatcher(norm)
	t.vocabSize = len(t.tokens)
	return nil
}

// addedBytes is what an added token decodes to: HuggingFace's ByteLevel
// decoder maps its runes through the byte-level alphabet when they all
// belong to it, and otherwise keeps the token's UTF-8 text.
func addedBytes(content string) string {
	if b, ok := byteLevelDecode(content); ok {
		return string(b)
	}
	return content
}

// checkTemplate requires the ids the post-processor adds to be tokens.
func (t *Tokenizer) checkTemplate() error {
	for _, id := range slices.Concat(t.post.prefix, t.post.suffix) {
		if _, err := t.tokenBytes(id); err != nil {
			return fmt.Errorf("TemplateProcessing adds id %d: %v", id, err)
		}
	}
	return nil
}

// applyConfig reads bos, eos, pad, unk and the extra special tokens from
// tokenizer_config.json.
//
// clean_up_tokenization_spaces is accepted and has no effect, as in
// transformers 5, whose decode ignores it for BPE tokenizers (it was made
// for WordPiece and deletes real spaces before punctuation) unless
// clean_up_tokenization_spaces_for_bpe_even_though_it_will_corrupt_output
// is set too, which is refused. add_bos_token is ignored, as transformers 5
// ignores it when there is a tokenizer.json: the post-processor decides.
func (t *Tokenizer) applyConfig(cfg *configJSON, cfgPath string) error {
	switch {
	case cfg.CleanUpTokenizationSpaces && cfg.CleanUpForBPE:
		return fmt.Errorf("%s: clean_up_tokenization_spaces with "+
			"clean_up_tokenization_spaces_for_bpe_even_though_it_will_corrupt_output is not supported "+
			"(it rewrites decoded text and cannot be streamed)", cfgPath)
	case cfg.SplitSpecialTokens:
		return fmt.Errorf("%s: split_special_tokens is true, which is not supported", cfgPath)
	}
	lookup := func(key string, r tokenRef) (int, error) {
		if !r.Set {
			return -1, nil
		}
		id, ok := t.TokenID(r.Content)
		if !ok {
			return -1, fmt.Errorf("%s: %s %q is not a token of %s", cfgPath, key, r.Content, t.path)
		}
		t.special[id] = true
		return id, nil
	}
	var err error
	if t.eos, err = lookup("eos_token", cfg.EOSToken); err != nil {
		return err
	}
	if t.pad, err = lookup("pad_token", cfg.PadToken); err != nil {
		return err
	}
	if t.bos, err = lookup("bos_token", cfg.BOSToken); err != nil {
		return err
	}
	if t.unk, err = lookup("unk_token", cfg.UnkToken); err != nil {
		return err
	}
	for _, r := range cfg.AdditionalSpecialTokens {
		if _, err = lookup("additional_special_tokens entry", r); err != nil {
			return err
		}
	}
	t.chatTempl, t.chatName = string(cfg.ChatTemplate), cfgPath
	return nil
}
