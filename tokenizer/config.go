package tokenizer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
)

// The JSON shapes below are the parts of HuggingFace's tokenizer.json and
// tokenizer_config.json that this package reads. tokenizer.json's keys are
// checked against what HuggingFace writes (keys.go): an unknown one is an
// error, while known settings that do not change token ids (truncation,
// offsets) are accepted. tokenizer_config.json carries transformers'
// settings of every kind (model_max_length, ...), and only its
// added_tokens_decoder entries are checked.

// fileJSON is tokenizer.json.
type fileJSON struct {
	AddedTokens   []addedTokenJSON `json:"added_tokens"`
	Normalizer    json.RawMessage  `json:"normalizer"`
	PreTokenizer  json.RawMessage  `json:"pre_tokenizer"`
	PostProcessor json.RawMessage  `json:"post_processor"`
	Decoder       json.RawMessage  `json:"decoder"`
	Model         modelJSON        `json:"model"`
}

// addedTokenJSON is one entry of added_tokens (and of tokenizer_config.json's
// added_tokens_decoder, which has no id field: the id is the key).
type addedTokenJSON struct {
	ID         int    `json:"id"`
	Content    string `json:"content"`
	SingleWord bool   `json:"single_word"`
	LStrip     bool   `json:"lstrip"`
	RStrip     bool   `json:"rstrip"`
	Normalized bool   `json:"normalized"`
	Special    bool   `json:"special"`
}

// modelJSON is the "model" object of a BPE tokenizer.json, less vocab and
// merges, which are parsed separately (see jsonscan.go).
type modelJSON struct {
	Type                    string   `json:"type"`
	Dropout                 *float64 `json:"dropout"`
	ContinuingSubwordPrefix *string  `json:"continuing_subword_prefix"`
	EndOfWordSuffix         *string  `json:"end_of_word_suffix"`
	ByteFallback            bool     `json:"byte_fallback"`
	IgnoreMerges            bool     `json:"ignore_merges"`
}

// componentJSON is a normalizer, pre-tokenizer, post-processor or decoder:
// a type name plus that type's fields, of which these are the ones read.
type componentJSON struct {
	Type           string            `json:"type"`
	Normalizers    []json.RawMessage `json:"normalizers"`
	Pretokenizers  []json.RawMessage `json:"pretokenizers"`
	Pattern        *patternJSON      `json:"pattern"`
	Behavior       string            `json:"behavior"`
	Invert         bool              `json:"invert"`
	AddPrefixSpace bool              `json:"add_prefix_space"`
	UseRegex       *bool             `json:"use_regex"`
	// Digits
	IndividualDigits bool `json:"individual_digits"`
	// Sequence of post-processors, TemplateProcessing
	Processors    []json.RawMessage              `json:"processors"`
	Single        []templateItemJSON             `json:"single"`
	SpecialTokens map[string]templateSpecialJSON `json:"special_tokens"`
}

// templateItemJSON is one item of a TemplateProcessing template: a special
// token, or the place of sequence A or B.
type templateItemJSON struct {
	SpecialToken *struct {
		ID string `json:"id"`
	} `json:"SpecialToken"`
	Sequence *struct {
		ID string `json:"id"`
	} `json:"Sequence"`
}

// templateSpecialJSON is an entry of TemplateProcessing's special_tokens:
// the ids a SpecialToken item stands for.
type templateSpecialJSON struct {
	IDs []int `json:"ids"`
}

// patternJSON is a Split pattern: a regular expression or a literal string.
type patternJSON struct {
	Regex  *string `json:"Regex"`
	String *string `json:"String"`
}

// configJSON is tokenizer_config.json.
type configJSON struct {
	EOSToken                  tokenRef                  `json:"eos_token"`
	PadToken                  tokenRef                  `json:"pad_token"`
	BOSToken                  tokenRef                  `json:"bos_token"`
	UnkToken                  tokenRef                  `json:"unk_token"`
	AdditionalSpecialTokens   []tokenRef                `json:"additional_special_tokens"`
	AddedTokensDecoder        map[string]addedTokenJSON `json:"added_tokens_decoder"`
	ChatTemplate              chatTemplateJSON          `json:"chat_template"`
	CleanUpTokenizationSpaces bool                      `json:"clean_up_tokenization_spaces"`
	// transformers applies clean_up_tokenization_spaces to a BPE
	// tokenizer's decode only with this set as well.
	CleanUpForBPE      bool `json:"clean_up_tokenization_spaces_for_bpe_even_though_it_will_corrupt_output"`
	SplitSpecialTokens bool `json:"split_special_tokens"`
}

// tokenRef is a token named in tokenizer_config.json: null, a string, or an
// AddedToken object {"content": ...}.
type tokenRef struct {
	Content string
	Set     bool
}

func (r *tokenRef) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case bytes.Equal(b, []byte("null")):
		*r = tokenRef{}
		return nil
	case len(b) > 0 && b[0] == '"':
		r.Set = true
		return json.Unmarshal(b, &r.Content)
	default:
		var obj struct {
			Content *string `json:"content"`
		}
		if err := json.Unmarshal(b, &obj); err != nil {
			return err
		}
		if obj.Content == nil {
			return errors.New("token object has no \"content\"")
		}
		r.Content, r.Set = *obj.Content, true
		return nil
	}
}

// chatTemplateJSON is chat_template: a string, or a list of named templates
// of which "default" is the one apply_chat_template uses.
type chatTemplateJSON string

func (c *chatTemplateJSON) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if bytes.Equal(b, []byte("null")) {
		*c = ""
		return nil
	}
	if len(b) > 0 && b[0] == '"' {
		var s string
		err := json.Unmarshal(b, &s)
		*c = chatTemplateJSON(s)
		return err
	}
	var named []struct {
		Name     string `json:"name"`
		Template string `json:"template"`
	}
	if err := json.Unmarshal(b, &named); err != nil {
		return err
	}
	for _, n := range named {
		if n.Name == "default" {
			*c = chatTemplateJSON(n.Template)
		}
	}
	return nil
}

// readJSON decodes the file at path into v.
func readJSON(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return unmarshal(path, data, v)
}

// unmarshal is json.Unmarshal with errors that name the file, line and
// column, which encoding/json reports only as a byte offset.
func unmarshal(path string, data []byte, v any) error {
	err := json.Unmarshal(data, v)
	if err == nil {
		return nil
	}
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		line, col := lineCol(data, se.Offset)
		return fmt.Errorf("%s:%d:%d: malformed JSON: %w", path, line, col, err)
	case errors.As(err, &te):
		line, col := lineCol(data, te.Offset)
		return fmt.Errorf("%s:%d:%d: %w", path, line, col, err)
	default:
		return fmt.Errorf("%s: %w", path, err)
	}
}

// lineCol converts a byte offset into a 1-based line and column.
func lineCol(data []byte, off int64) (line, col int) {
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	before := data[:off]
	line = bytes.Count(before, []byte("\n")) + 1
	col = int(off) - (bytes.LastIndexByte(before, '\n') + 1)
	if col == 0 {
		col = 1
	}
	return line, col
}
