"""gguf-py (llama.cpp's Python package) as the reference for ragen-go's GGUF
reader and writer (parity/gguf_test.go).

The request, JSON on standard input, has a "mode":

write: {"mode": "write", "dir": D, "seed": S}. Writes D/ref.gguf with
gguf.GGUFWriter: metadata of every value type (every scalar type, an array
of each, strings with non-ASCII text, extreme integers) and, aligned to 64,
one tensor of each type. The types gguf-py quantizes (F32, F16, BF16, Q8_0,
Q4_0, Q4_1, Q5_0, Q5_1) hold random floats quantized by gguf.quants.quantize,
their float32 source saved as D/NAME.src; the K-quants (Q2_K ... Q6_K), which
gguf-py only dequantizes, hold random blocks whose half-precision scales are
finite. It then reads ref.gguf back with gguf.GGUFReader and saves each
tensor's gguf.quants.dequantize as D/NAME.deq. Raw files are little-endian
float32. The answer: {"meta": [...], "tensors": [{"name", "type", "shape",
"src"}]}.

read: {"mode": "read", "path": P}. Reads P with gguf.GGUFReader and answers
{"meta": [...], "tensors": [{"name", "type", "shape", "offset", "raw_sha256",
"deq_sha256"}], "seconds"}: the SHA-256 of each tensor's bytes and of its
dequantization as little-endian float32 (null where gguf-py cannot
dequantize the type), and the wall time of the dequantization.

Metadata entries are [key, type, element type or null, value], in the file's
order, without the GGUF.* pseudo-keys; values are JSON numbers (integers
exact, floats the float64 of the stored value), booleans, strings or lists.
"""

import hashlib
import json
import os
import sys
import time

import numpy as np

import gguf
from gguf import GGMLQuantizationType as T
from gguf import GGUFValueType as V

QUANTIZABLE = [T.F32, T.F16, T.BF16, T.Q8_0, T.Q4_0, T.Q4_1, T.Q5_0, T.Q5_1]
# Offsets of the half-precision fields in a block of each K-quant.
K_QUANTS = {T.Q2_K: [80, 82], T.Q3_K: [108], T.Q4_K: [0, 2], T.Q5_K: [0, 2], T.Q6_K: [208]}


def metadata(w):
    """Adds a key of every scalar type and an array of every element type."""
    w.add_key_value("test.uint8", 255, V.UINT8)
    w.add_key_value("test.int8", -128, V.INT8)
    w.add_key_value("test.uint16", 65535, V.UINT16)
    w.add_key_value("test.int16", -32768, V.INT16)
    w.add_key_value("test.uint32", 4294967295, V.UINT32)
    w.add_key_value("test.int32", -2147483648, V.INT32)
    w.add_key_value("test.float32", 1e-5, V.FLOAT32)
    w.add_key_value("test.bool", True, V.BOOL)
    w.add_key_value("test.string", "héllo, 世界 🙂", V.STRING)
    w.add_key_value("test.uint64", 18446744073709551615, V.UINT64)
    w.add_key_value("test.int64", -9223372036854775808, V.INT64)
    w.add_key_value("test.float64", -1.2345678901234567e-300, V.FLOAT64)
    arrays = {
        V.UINT8: [0, 1, 255], V.INT8: [-128, 0, 127], V.UINT16: [0, 65535], V.INT16: [-32768, 32767],
        V.UINT32: [0, 4294967295], V.INT32: [-2147483648, 2147483647], V.FLOAT32: [0.5, -3.25, 1e30],
        V.BOOL: [True, False, True], V.STRING: ["", "a", "ü", "<|im_end|>"],
        V.UINT64: [0, 18446744073709551615], V.INT64: [-9223372036854775808, 9223372036854775807],
        V.FLOAT64: [0.1, -2.5e-310, 1.7976931348623157e308],
    }
    for t, v in arrays.items():
        w.add_key_value("test.array." + t.name.lower(), v, V.ARRAY, sub_type=t)


def source(rng, t):
    """Random float32 rows of 64, with rows that probe the rounding: an
    all-zero block, ties at half a step, tiny (subnormal-half) and huge
    (half-overflowing) scales, and for the plain types values past half's
    range and between its subnormals."""
    x = rng.standard_normal((6, 64)).astype(np.float32) * np.float32(0.05)
    x[1, :32] = 0
    x[2, :32] = np.arange(32, dtype=np.float32) - np.float32(15.5)
    x[2, 31] = 127  # Q8_0 step 1: the others are exact ties
    x[3] *= np.float32(1e-6)
    x[4, :32] *= np.float32(1e7)
    if t in (T.F32, T.F16, T.BF16):
        x[5, :8] = [65504, 65520, 1e5, 2**-24, 2**-25, 3 * 2**-26, 1 + 2**-11, -(2**-14)]
    return x


def k_blocks(rng, t, n_blocks):
    """Random blocks of a K-quant with finite, modest half scales."""
    size = gguf.GGML_QUANT_SIZES[t][1]
    b = rng.integers(0, 256, (n_blocks, size), dtype=np.uint8)
    for off in K_QUANTS[t]:
        half = (rng.uniform(-1, 1, n_blocks) * 2.0 ** rng.integers(-12, -2, n_blocks)).astype(np.float16)
        b[:, off:off + 2] = half.view(np.uint8).reshape(n_blocks, 2)
    return b


def write(req):
    d, rng = req["dir"], np.random.default_rng(req["seed"])
    path = os.path.join(d, "ref.gguf")
    w = gguf.GGUFWriter(path, "llama")
    w.add_custom_alignment(64)
    metadata(w)
    out = []
    for t in QUANTIZABLE:
        x = source(rng, t)
        x.astype("<f4").tofile(os.path.join(d, t.name + ".src"))
        w.add_tensor(t.name, gguf.quants.quantize(x, t), raw_dtype=t)
        out.append({"name": t.name, "src": True})
    for t in K_QUANTS:
        w.add_tensor(t.name, k_blocks(rng, t, 6).reshape(3, -1), raw_dtype=t)
        out.append({"name": t.name, "src": False})
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()

    r = gguf.GGUFReader(path)
    for o, rt in zip(out, r.tensors):
        deq = gguf.quants.dequantize(rt.data, rt.tensor_type)
        deq.astype("<f4").tofile(os.path.join(d, rt.name + ".deq"))
        o.update(type=rt.tensor_type.name, shape=list(deq.shape))
    return {"meta": meta(r), "tensors": out}


def meta(r):
    """The file's metadata as [key, type, element type, value] entries."""
    out = []
    for key, f in r.fields.items():
        if key.startswith("GGUF."):
            continue
        elem = f.types[-1].name if f.types[0] == V.ARRAY else None
        out.append([key, f.types[0].name, elem, f.contents()])
    return out


def read(req):
    r = gguf.GGUFReader(req["path"])
    tensors, seconds = [], 0.0
    for t in r.tensors:
        entry = {"name": t.name, "type": t.tensor_type.name, "offset": int(t.data_offset),
                 "shape": [int(n) for n in reversed(t.shape.tolist())],
                 "raw_sha256": hashlib.sha256(t.data.tobytes()).hexdigest(), "deq_sha256": None}
        try:
            start = time.perf_counter()
            deq = gguf.quants.dequantize(t.data, t.tensor_type)
            seconds += time.perf_counter() - start
            entry["deq_sha256"] = hashlib.sha256(np.ascontiguousarray(deq, dtype="<f4").tobytes()).hexdigest()
        except NotImplementedError:
            pass
        tensors.append(entry)
    return {"meta": meta(r), "tensors": tensors, "seconds": seconds}


def main():
    np.seterr(all="ignore")  # the huge and tiny rows overflow on purpose
    req = json.load(sys.stdin)
    ans = {"write": write, "read": read}[req["mode"]](req)
    json.dump(ans, sys.stdout, allow_nan=False)


if __name__ == "__main__":
    main()
