package tokenizer

import (
	"unicode/utf8"
)

// Encode returns the token ids of text, as HuggingFace's
// tokenizer.encode(text, add_special_tokens=False) does: added tokens
// written in the text (<|im_start|>, <think>, ...) become their ids, and
// the post-processor adds nothing (no BOS: chat templates write their own,
// and rollouts append to rendered text). EncodeSpecial adds what it adds.
//
// text is read as UTF-8; invalid bytes are first replaced by U+FFFD the way
// Rust's String::from_utf8_lossy replaces them.
func (t *Tokenizer) Encode(text string) []int {
	pre := t.pre
	if t.fast != nil {
		pre = t.fast
	}
	return t.encode(text, pre, t.pieces.encode)
}

// EncodeSpecial is Encode with the special tokens of the post-processor
// around the text, as HuggingFace's tokenizer.encode(text) (with
// add_special_tokens=True) does: TemplateProcessing's single template,
// such as Llama 3's <|begin_of_text|> before the text. It equals Encode for
// tokenizers without one (Qwen's).
func (t *Tokenizer) EncodeSpecial(text string) []int {
	ids := t.Encode(text)
	if len(t.post.prefix)+len(t.post.suffix) == 0 {
		return ids
	}
	out := make([]int, 0, len(t.post.prefix)+len(ids)+len(t.post.suffix))
	out = append(out, t.post.prefix...)
	out = append(out, ids...)
	return append(out, t.post.suffix...)
}

// encodeReference is Encode on the general path: the file's pattern run by
// regexp2 and tiktoken-go's merges. Encode is tested against it.
func (t *Tokenizer) encodeReference(text string) []int {
	return t.encode(text, t.pre, t.pieces.encodeTiktoken)
}

func (t *Tokenizer) encode(text string, pre splitter, bpe func([]int, string) []int) []int {
	if !utf8.ValidString(text) {
		text = string(appendLossy(nil, []byte(text)))
	}
	ids := make([]int, 0, len(text)/4+1)
	addID := func(id int) { ids = append(ids, id) }
	addPiece := func(p string) { ids = bpe(ids, p) }
	ordinary := func(seg string) { pre.split(seg, addPiece) }
	t.rawAdded.split(text, func(seg string) {
		if t.normalize != nil {
			seg = t.normalize(seg)
		}
		t.normAdded.split(seg, ordinary, addID)
	}, addID)
	return ids
}

// TokenID returns the id of a token given as text: an added token such as
// "<|im_end|>", or a vocabulary entry that is a whole piece such as "Hello"
// or " world".
func (t *Tokenizer) TokenID(token string) (int, bool) {
	if id, ok := t.addedIDs[token]; ok {
		return id, true
	}
	id, ok := t.ranks[token]
	return id, ok
}

// VocabSize is one more than the largest token id; ids below it may still be
// unassigned (Qwen's model embeds 151,936 rows, more than it has tokens).
func (t *Tokenizer) VocabSize() int { return t.vocabSize }

// EOS is the id of tokenizer_config.json's eos_token (<|im_end|> for
// Qwen2.5-Instruct), or -1 when there is no config or it names none.
func (t *Tokenizer) EOS() int { return t.eos }

// BOS is the id of tokenizer_config.json's bos_token (<|begin_of_text|>
// for Llama 3), or -1 when there is no config or it names none.
func (t *Tokenizer) BOS() int { return t.bos }

// AddsBOS reports whether EncodeSpecial starts with BOS, as Llama 3's
// post-processor makes it do; Encode never adds it.
func (t *Tokenizer) AddsBOS() bool {
	return t.bos >= 0 && len(t.post.prefix) > 0 && t.post.prefix[0] == t.bos
}

// Pad is the id of tokenizer_config.json's pad_token (<|endoftext|> for
// Qwen2.5), or -1 when there is no config or it names none.
func (t *Tokenizer) Pad() int { return t.pad }

// IsSpecial reports whether DecodeSkipSpecial leaves id out: added tokens
// marked special, and the tokens tokenizer_config.json names as eos, pad,
// bos, unk or additional special tokens.
func (t *Tokenizer) IsSpecial(id int) bool {
	return id >= 0 && id < len(t.special) && t.special[id]
}

// ChatTemplate is tokenizer_config.json's chat_template, "" when there is
// none. RenderChat does not read it; compare it with Qwen25ChatTemplate to
// check that a checkpoint uses the format RenderChat produces.
func (t *Tokenizer) ChatTemplate() string { return t.chatTempl }

// Path is the tokenizer.json the tokenizer was loaded from.
func (t *Tokenizer) Path() string { return t.path }
