"""HuggingFace tokenizers as the reference for ragen-go's tokenizer parity test
(parity/tokenizer_test.go).

Usage: tokenizers_ref.py encode|probe REQUEST.json ANSWER.json

encode: the request is {"tokenizer": path to tokenizer.json, "texts": [str],
"decode": [[id]]}. The answer holds, computed by the `tokenizers` package on
that file: "ids", the encoding of each text (no post-processing, as ragen-go's
Encode); "ids_special", the encoding with add_special_tokens=True (the
post-processor's tokens, as ragen-go's EncodeSpecial) of the first
"special" texts (all without it); "decoded" and
"decoded_skip_special", tokenizer.decode of each id list with
skip_special_tokens off and on; and "encode_seconds" and "decode_seconds",
the wall time of encoding and decoding everything in one thread (the caller
sets RAYON_NUM_THREADS=1 for a one-core figure). With "transformers": N in
the request, it also holds "transformers_decoded": the first N id lists
decoded by transformers' AutoTokenizer loaded from the file's folder (with
its tokenizer_config.json), which applies clean_up_tokenization_spaces where
transformers does.

probe: how the file's pre-tokenizer and normalizer see each code point, to
find where their Unicode tables differ from Go's. The request is
{"tokenizer", "normalize": [str]}; the answer holds "classes", one letter per
code point from U+0080 to U+10FFFF as the pre-tokenizer's pattern treats it
(L letter, N number, S space, P anything else, ? a surrogate, not probed),
"normalized", the normalizer's output for each string of "normalize" (the
string itself without a normalizer), and "has_normalizer".

Files, not pipes: the texts are megabytes.
"""

import json
import sys
import time

import tokenizers


def classes(tok):
    """The pattern's class of each code point c, from how the pre-tokenizer
    splits two probes per code point, P1 = "x" c "!" and P2 = "x" c "  ": a
    letter joins the x in P1; a space starts a piece of P2 that goes on
    into the following spaces; anything else but a number joins the "!" in
    P1. These hold for the patterns of Qwen2, Llama 3 and GPT-2 alike (and
    for Digits before GPT-2's)."""
    cps = [c for c in range(0x80, 0x110000) if not 0xD800 <= c <= 0xDFFF]
    p1 = "".join("x" + chr(c) + "!\n" for c in cps)
    p2 = "".join("x" + chr(c) + "  \n" for c in cps)
    end1 = {a: b for _, (a, b) in tok.pre_tokenizer.pre_tokenize_str(p1)}
    end2 = {a: b for _, (a, b) in tok.pre_tokenizer.pre_tokenize_str(p2)}
    out = ["?"] * 0x110000
    for i, c in enumerate(cps):
        x1, x2 = 4 * i, 5 * i  # offsets of x in p1 and p2
        if end1.get(x1, x1 + 1) > x1 + 1:
            out[c] = "L"  # "xc" is one piece
        elif end2.get(x2 + 1, x2 + 2) > x2 + 2:
            out[c] = "S"  # "c " starts a piece
        elif end1.get(x1 + 1, x1 + 2) > x1 + 2:
            out[c] = "P"  # "c!" is one piece
        else:
            out[c] = "N"
    return "".join(out[0x80:])


def probe(tok, req):
    norm = tok.normalizer.normalize_str if tok.normalizer is not None else (lambda s: s)
    return {
        "classes": classes(tok),
        "has_normalizer": tok.normalizer is not None,
        "normalized": [norm(s) for s in req["normalize"]],
    }


def main():
    mode = sys.argv.pop(1)
    with open(sys.argv[1], encoding="utf-8") as f:
        req = json.load(f)
    tok = tokenizers.Tokenizer.from_file(req["tokenizer"])
    if mode == "probe":
        with open(sys.argv[2], "w", encoding="utf-8") as f:
            json.dump(probe(tok, req), f)
        return

    start = time.perf_counter()
    encodings = tok.encode_batch(req["texts"], add_special_tokens=False)
    encode_seconds = time.perf_counter() - start
    ids = [e.ids for e in encodings]
    n_special = req.get("special", len(req["texts"]))
    ids_special = [e.ids for e in tok.encode_batch(req["texts"][:n_special], add_special_tokens=True)]

    start = time.perf_counter()
    decoded = tok.decode_batch(req["decode"], skip_special_tokens=False)
    decode_seconds = time.perf_counter() - start
    decoded_skip = tok.decode_batch(req["decode"], skip_special_tokens=True)
    ans = {
        "version": tokenizers.__version__,
        "ids": ids,
        "ids_special": ids_special,
        "decoded": decoded,
        "decoded_skip_special": decoded_skip,
        "encode_seconds": encode_seconds,
        "decode_seconds": decode_seconds,
    }
    if req.get("transformers"):
        import os

        import transformers

        auto = transformers.AutoTokenizer.from_pretrained(os.path.dirname(req["tokenizer"]))
        ans["transformers_version"] = transformers.__version__
        ans["transformers_decoded"] = [auto.decode(ids) for ids in req["decode"][: req["transformers"]]]

    with open(sys.argv[2], "w", encoding="utf-8") as f:
        json.dump(ans, f, ensure_ascii=False)


if __name__ == "__main__":
    main()
