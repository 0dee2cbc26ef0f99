"""Rebuilds SmolLM2's HuggingFace tokenizer files from its GGUF, for
ragen-go's tokenizer parity test (parity/tokenizer_test.go).

Usage: gguf_tokenizer_json.py MODEL.gguf OUTDIR

SmolLM2's original tokenizer.json cannot be downloaded here, but the GGUF
holds everything it is made of: tokenizer.ggml.tokens (the vocabulary, in
byte-level text, special tokens included), tokenizer.ggml.merges (in order),
tokenizer.ggml.token_type (3, control, marks the special added tokens) and
the special token ids. This writes OUTDIR/tokenizer.json in the layout of
HuggingFaceTB/SmolLM2-135M-Instruct's own file: a BPE model without
ignore_merges, no normalizer, the pre-tokenizer
Sequence[Digits(individual_digits), ByteLevel(use_regex)], ByteLevel
post-processor and decoder, and the control tokens as special added tokens;
and OUTDIR/tokenizer_config.json with the bos, eos, pad and unk tokens and
the chat template. It then loads tokenizer.json with the tokenizers package
and checks that it has the GGUF's tokens at the GGUF's ids and that each
special token in text encodes to its id. It prints the path of
tokenizer.json.
"""

import json
import os
import sys

import gguf
import tokenizers

CONTROL, USER_DEFINED = 3, 4


def field(reader, key, default=None):
    f = reader.fields.get(key)
    return default if f is None else f.contents()


def build(path):
    r = gguf.GGUFReader(path)
    model = field(r, "tokenizer.ggml.model")
    if model != "gpt2":
        sys.exit(f"{path}: tokenizer.ggml.model is {model!r}, not gpt2 (byte-level BPE)")
    tokens = field(r, "tokenizer.ggml.tokens")
    types = field(r, "tokenizer.ggml.token_type", [1] * len(tokens))
    merges = field(r, "tokenizer.ggml.merges")
    added = [
        {
            "id": i,
            "content": tok,
            "single_word": False,
            "lstrip": False,
            "rstrip": False,
            "normalized": False,
            "special": types[i] == CONTROL,
        }
        for i, tok in enumerate(tokens)
        if types[i] in (CONTROL, USER_DEFINED)
    ]
    byte_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}
    tok_json = {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": added,
        "normalizer": None,
        "pre_tokenizer": {
            "type": "Sequence",
            "pretokenizers": [{"type": "Digits", "individual_digits": True}, byte_level],
        },
        "post_processor": dict(byte_level, add_prefix_space=True, trim_offsets=False),
        "decoder": dict(byte_level, add_prefix_space=True),
        "model": {
            "type": "BPE",
            "dropout": None,
            "unk_token": None,
            "continuing_subword_prefix": None,
            "end_of_word_suffix": None,
            "fuse_unk": False,
            "byte_fallback": False,
            "vocab": {tok: i for i, tok in enumerate(tokens)},
            "merges": list(merges),
        },
    }

    def name(key):
        i = field(r, key)
        return None if i is None else tokens[i]

    cfg = {
        "add_prefix_space": False,
        "bos_token": name("tokenizer.ggml.bos_token_id"),
        "eos_token": name("tokenizer.ggml.eos_token_id"),
        "pad_token": name("tokenizer.ggml.padding_token_id"),
        "unk_token": name("tokenizer.ggml.unknown_token_id"),
        "chat_template": field(r, "tokenizer.chat_template"),
        "clean_up_tokenization_spaces": False,
        "model_max_length": 8192,
        "tokenizer_class": "GPT2Tokenizer",
        "vocab_size": len(tokens),
    }
    return tok_json, cfg, tokens, types


def check(path, tokens, types):
    tok = tokenizers.Tokenizer.from_file(path)
    if tok.get_vocab_size(with_added_tokens=True) != len(tokens):
        sys.exit(f"{path}: tokenizers sees {tok.get_vocab_size(with_added_tokens=True)} tokens, the GGUF has {len(tokens)}")
    for i, t in enumerate(tokens):
        if tok.id_to_token(i) != t:
            sys.exit(f"{path}: id {i} is {tok.id_to_token(i)!r} in tokenizers, {t!r} in the GGUF")
    for i, t in enumerate(tokens):
        if types[i] == CONTROL and tok.encode(t, add_special_tokens=False).ids != [i]:
            sys.exit(f"{path}: special token {t!r} does not encode to its id {i}")


def main():
    gguf_path, out = sys.argv[1], sys.argv[2]
    tok_json, cfg, tokens, types = build(gguf_path)
    os.makedirs(out, exist_ok=True)
    path = os.path.join(out, "tokenizer.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(tok_json, f, ensure_ascii=False)
    with open(os.path.join(out, "tokenizer_config.json"), "w", encoding="utf-8") as f:
        json.dump(cfg, f, ensure_ascii=False, indent=1)
    check(path, tokens, types)
    print(path)


if __name__ == "__main__":
    main()
