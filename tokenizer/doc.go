// Package tokenizer is Qwen's byte-level BPE tokenizer and chat format in pure
// Go, agreeing with HuggingFace's tokenizers to the token id.
//
// Load reads a HuggingFace tokenizer.json (and tokenizer_config.json beside
// it, when present). Encoding follows the HuggingFace pipeline:
//
//  1. added tokens (<|im_start|>, <|endoftext|>, <think>, ...) are cut out of
//     the raw text, leftmost-longest, and become their ids;
//  2. the rest is normalised as the file asks (NFC for Qwen);
//  3. the pre-tokenizer splits it into pieces with the file's pattern;
//  4. each piece's UTF-8 bytes are byte-pair merged; a piece that is a
//     whole vocabulary token is that token.
//
// The reference implementation of steps 3 and 4 is the general one: the
// file's pattern run by regexp2 and tiktoken-go's rank-based merges (ranks are
// the vocabulary ids; Load checks that the merge list is in id order and
// makes every token, which makes rank-based and merge-list BPE agree). Encode
// takes a faster path that gives the same ids: when the file's pattern is
// byte for byte Qwen2's, a hand-written splitter replaces regexp2, and the
// merges run on token ids over the merge list, without tiktoken-go's
// per-piece regexp2 match. The tests hold the two paths to identical output
// on a megabyte of mixed text and on random strings, and both to
// HuggingFace's ids.
//
// Decoding turns ids back into bytes and replaces invalid UTF-8 the way Rust's
// String::from_utf8_lossy does; StreamDecoder does the same incrementally for
// generation, holding back a character until all of its bytes have arrived.
//
// RenderChat produces the exact text of Qwen2.5-Instruct's chat template, and
// GenerationPrefix the tag RAGEN appends to force the start of an answer.
//
// A Tokenizer is immutable after Load and safe for concurrent use.
package tokenizer
