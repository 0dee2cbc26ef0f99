"""llama.cpp's tokenizer as the reference for ragen-go's GGUF tokenizers
(parity/gguf_tokenizer_test.go), through llama-cpp-python.

Usage: llamacpp_tokenizer_ref.py vocab|write|tokenize ARGS

vocab MODEL.gguf ANSWER.json
    The tokenizer metadata of a GGUF file, read with the gguf package, in
    the shape of ragen-go's tokenizer.GGUFVocab: {"model", "pre", "tokens",
    "token_types", "merges", "bos", "eos", "pad", "unk" (-1 when absent),
    "add_bos" (null when absent), "chat_template"}.

write VOCAB.json OUT.gguf
    A vocabulary-only GGUF (no tensors) holding VOCAB.json (the shape vocab
    writes) as its tokenizer, and SmolLM2-135M's llama hyperparameters,
    which llama.cpp reads even when it loads the vocabulary only. It lets the
    test put any vocabulary and pre-tokenizer name before llama.cpp.

tokenize MODEL.gguf REQUEST.json ANSWER.json
    The request is {"texts": [str]}. The answer holds, from llama.cpp
    (Llama(vocab_only=True)): "ids", tokenize(text, add_bos=False,
    special=True) of each text, which parses control and user-defined tokens
    written in the text; "ids_special", the same with add_bos=True (llama.cpp
    adds BOS only when the vocabulary asks for it); and "version".

Files, not pipes: the texts can be megabytes.
"""

import json
import sys

import gguf


def field(reader, key, default=None):
    f = reader.fields.get(key)
    return default if f is None else f.contents()


def vocab(path, out):
    r = gguf.GGUFReader(path)
    tokens = field(r, "tokenizer.ggml.tokens")

    def ident(key):
        v = field(r, key)
        return -1 if v is None else int(v)

    ans = {
        "model": field(r, "tokenizer.ggml.model"),
        "pre": field(r, "tokenizer.ggml.pre", ""),
        "tokens": tokens,
        "token_types": [int(t) for t in field(r, "tokenizer.ggml.token_type", [])],
        "merges": field(r, "tokenizer.ggml.merges", []),
        "bos": ident("tokenizer.ggml.bos_token_id"),
        "eos": ident("tokenizer.ggml.eos_token_id"),
        "pad": ident("tokenizer.ggml.padding_token_id"),
        "unk": ident("tokenizer.ggml.unknown_token_id"),
        "add_bos": field(r, "tokenizer.ggml.add_bos_token"),
        "chat_template": field(r, "tokenizer.chat_template", ""),
    }
    with open(out, "w", encoding="utf-8") as f:
        json.dump(ans, f, ensure_ascii=False)


def write(vocab_path, out):
    with open(vocab_path, encoding="utf-8") as f:
        v = json.load(f)
    w = gguf.GGUFWriter(out, "llama")
    w.add_name("ragen-go tokenizer parity")
    w.add_context_length(8192)
    w.add_embedding_length(576)
    w.add_block_count(30)
    w.add_feed_forward_length(1536)
    w.add_head_count(9)
    w.add_head_count_kv(3)
    w.add_rope_dimension_count(64)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_vocab_size(len(v["tokens"]))
    w.add_tokenizer_model(v["model"])
    w.add_tokenizer_pre(v["pre"])
    w.add_token_list(v["tokens"])
    w.add_token_types(v["token_types"])
    w.add_token_merges(v["merges"])
    for key, add in (("bos", w.add_bos_token_id), ("eos", w.add_eos_token_id),
                     ("pad", w.add_pad_token_id), ("unk", w.add_unk_token_id)):
        if v.get(key, -1) >= 0:
            add(v[key])
    if v.get("add_bos") is not None:
        w.add_add_bos_token(v["add_bos"])
    if v.get("chat_template"):
        w.add_chat_template(v["chat_template"])
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def tokenize(model, req_path, out):
    import llama_cpp

    with open(req_path, encoding="utf-8") as f:
        req = json.load(f)
    llm = llama_cpp.Llama(model_path=model, vocab_only=True, verbose=False)
    texts = [t.encode("utf-8") for t in req["texts"]]
    ans = {
        "version": llama_cpp.__version__,
        "ids": [llm.tokenize(t, add_bos=False, special=True) for t in texts],
        "ids_special": [llm.tokenize(t, add_bos=True, special=True) for t in texts],
    }
    with open(out, "w", encoding="utf-8") as f:
        json.dump(ans, f)


def main():
    mode, args = sys.argv[1], sys.argv[2:]
    {"vocab": vocab, "write": write, "tokenize": tokenize}[mode](*args)


if __name__ == "__main__":
    main()
