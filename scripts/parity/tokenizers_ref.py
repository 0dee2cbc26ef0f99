"""HuggingFace tokenizers as the reference for ragen-go's tokenizer parity test
(parity/tokenizer_test.go).

Usage: tokenizers_ref.py encode|probe REQUEST.json ANSWER.json

encode: the request is {"tokenizer": path to tokenizer.json, "texts": [str],
"decode": [[id]]}. The answer holds, computed by the `tokenizers` package on
that file: "ids", the encoding of each text (no post-processing, as ragen-go's
Encode); "decoded" and "decoded_skip_special", tokenizer.decode of each id
list with skip_special_tokens off and on; and "encode_seconds" and
"decode_seconds", the wall time of encoding and decoding everything in one
thread (the caller sets RAYON_NUM_THREADS=1 for a one-core figure).

probe: how the file's pre-tokenizer and normalizer see each code point, to
find where their Unicode tables differ from Go's. The request is
{"tokenizer", "normalize": [str]}; the answer holds "classes", one letter per
code point from U+0080 to U+10FFFF as the pre-tokenizer's pattern treats it
(L letter, N number, S space, P anything else, ? a surrogate, not probed),
and "normalized", the normalizer's output for each string of "normalize".

Files, not pipes: the texts are megabytes.
"""

import json
import sys
import time

import tokenizers


def classes(tok):
    """The pattern's class of each code point, from how it splits two probes
    per code point c: P1 = "x" c "!" and P2 = c "y". A letter joins the x in
    P1; a number stands alone in P2 (\\p{N} matches one character); anything
    else joins the "!" in P1 unless it is a space."""
    cps = [c for c in range(0x80, 0x110000) if not 0xD800 <= c <= 0xDFFF]
    p1 = "".join("x" + chr(c) + "!\n" for c in cps)
    p2 = "".join(chr(c) + "y\n" for c in cps)
    start1 = {}  # offset in p1 -> (start, end) of the piece holding it
    for _, (a, b) in tok.pre_tokenizer.pre_tokenize_str(p1):
        start1[a] = b
    pieces2 = set(a for _, (a, b) in tok.pre_tokenizer.pre_tokenize_str(p2))
    out = ["?"] * 0x110000
    for i, c in enumerate(cps):
        x, y = 4 * i, 3 * i + 1  # offsets of x in p1, of y in p2
        if start1.get(x, x + 1) > x + 1:
            out[c] = "L"  # "xc" is one piece
        elif y in pieces2:
            out[c] = "N"  # "c" | "y"
        elif start1.get(x + 1, x + 2) > x + 2:
            out[c] = "P"  # "c!" is one piece
        else:
            out[c] = "S"
    return "".join(out[0x80:])


def probe(tok, req):
    return {"classes": classes(tok), "normalized": [tok.normalizer.normalize_str(s) for s in req["normalize"]]}


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

    start = time.perf_counter()
    decoded = tok.decode_batch(req["decode"], skip_special_tokens=False)
    decode_seconds = time.perf_counter() - start
    decoded_skip = tok.decode_batch(req["decode"], skip_special_tokens=True)

    with open(sys.argv[2], "w", encoding="utf-8") as f:
        json.dump(
            {
                "version": tokenizers.__version__,
                "ids": ids,
                "decoded": decoded,
                "decoded_skip_special": decoded_skip,
                "encode_seconds": encode_seconds,
                "decode_seconds": decode_seconds,
            },
            f,
            ensure_ascii=False,
        )


if __name__ == "__main__":
    main()
