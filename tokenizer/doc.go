// Package tokenizer is a byte-level BPE tokenizer and Qwen's chat format in
// pure Go, agreeing with HuggingFace's tokenizers to the token id on the
// tokenizers of Qwen2.5/Qwen3, Llama 3 and SmolLM2, and with llama.cpp on
// tokenizers read from GGUF metadata.
//
// Load reads a HuggingFace tokenizer.json (and tokenizer_config.json beside
// it, when present). Encoding follows the HuggingFace pipeline:
//
//  1. added tokens (<|im_start|>, <|endoftext|>, <think>, ...) are cut out of
//     the raw text, leftmost-longest, and become their ids;
//  2. the rest is normalised as the file asks (NFC for Qwen);
//  3. the pre-tokenizer splits it into pieces: Split patterns (Qwen2's,
//     Llama 3's), Digits (SmolLM2's) and ByteLevel's own pattern (GPT-2's);
//  4. each piece's UTF-8 bytes are byte-pair merged, the earliest merge of
//     the merge list first; with the file's ignore_merges (Llama 3), a piece
//     that is a whole vocabulary token is that token.
//
// Encode stops there, as HuggingFace's encode(text,
// add_special_tokens=False) does; EncodeSpecial adds what the
// post-processor's template adds (Llama 3's <|begin_of_text|>).
//
// Patterns run on regexp2, with case-insensitive groups rewritten to match
// as Oniguruma (HuggingFace's engine) folds case; when the file's pattern is
// byte for byte Qwen2's or Llama 3's, a hand-written splitter replaces
// regexp2. Merges run on token ids over an integer-keyed table. The tests
// hold the fast paths to the general ones on a megabyte of mixed text and on
// random strings, and, for Qwen's vocabulary, the merge loop to tiktoken-go's
// rank-based one; the parity tests hold all to HuggingFace's ids on 10 MB
// of generated text per tokenizer.
//
// FromGGUF builds the tokenizer llama.cpp builds from a GGUF file's
// metadata; GGUFVocab and WriteHF go the other way, to GGUF metadata and to
// HuggingFace files.
//
// Decoding turns ids back into bytes and replaces invalid UTF-8 the way Rust's
// String::from_utf8_lossy does; StreamDecoder does the same incrementally for
// generation, holding back a character until all of its bytes have arrived.
// Neither applies clean_up_tokenization_spaces (Llama 3.2's
// tokenizer_config.json sets it): transformers 5 ignores it for BPE
// tokenizers, and vLLM's incremental detokenizer does not apply it either.
//
// RenderChat produces the exact text of Qwen2.5-Instruct's chat template, and
// GenerationPrefix the tag RAGEN appends to force the start of an answer.
//
// A Tokenizer is immutable after Load and safe for concurrent use.
package tokenizer
