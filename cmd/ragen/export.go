package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/ragen-go/ragen/gguf"
	"github.com/ragen-go/ragen/model"
	"github.com/ragen-go/ragen/model/ggufmodel"
	"github.com/ragen-go/ragen/tokenizer"
)

func init() {
	register(command{name: "export", summary: "write a model as a HuggingFace folder or, with --gguf, a GGUF file for llama.cpp and ollama", run: runExport})
}

func runExport(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("export", stderr)
	dir := fs.String("model", "", modelHelp)
	out := fs.String("out", "", "where to write: a folder (HuggingFace) or a .gguf file (--gguf)")
	asGGUF := fs.Bool("gguf", false, "write a GGUF file for llama.cpp and ollama instead of a HuggingFace folder")
	typ := fs.String("type", "f16", "with --gguf: how the matrices are stored: f32, f16, bf16 or q8_0 (vectors are always f32)")
	dtype := fs.String("dtype", "fp32", "without --gguf: the dtype of the written weights: fp32, bf16 or fp16")
	skipVerify := addSkipVerify(fs)
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	if err := noArgs(fs); err != nil {
		return err
	}
	path, err := resolveModel(*dir)
	if err != nil {
		return err
	}
	if *out == "" {
		return errors.New("--out is required")
	}
	if err := verifyModel(path, *skipVerify); err != nil {
		return err
	}
	if *asGGUF {
		if !strings.EqualFold(filepath.Ext(*out), ".gguf") {
			return fmt.Errorf("--out %s: a GGUF export is a file whose name ends in .gguf", *out)
		}
		gt, err := ggufmodel.ParseType(*typ)
		if err != nil {
			return fmt.Errorf("--type: %w", err)
		}
		return exportGGUF(path, *out, gt, stdout)
	}
	if fs.Changed("type") {
		return errors.New("--type applies to --gguf exports; a HuggingFace export takes --dtype")
	}
	if st, err := os.Stat(*out); err == nil && !st.IsDir() {
		return fmt.Errorf("--out %s is a file; a HuggingFace export is a folder (add --gguf for a GGUF file)", *out)
	}
	opts, err := modelOptions(*dtype, "cpu", "--dtype", "--device")
	if err != nil {
		return err
	}
	if *dtype == "auto" {
		return errors.New("--dtype: give fp32, bf16 or fp16")
	}
	if err := exportHF(path, *out, opts); err != nil {
		return err
	}
	fmt.Fprintln(stdout, *out)
	return nil
}

// exportHF writes the model at path (a folder or a GGUF file), with its
// tokenizer, as a HuggingFace folder in opts' dtype.
func exportHF(path, out string, opts model.Options) error {
	m, err := model.LoadCausalLM(path, opts)
	if err != nil {
		return err
	}
	defer m.Drop()
	return model.Export(m.Cfg, m.Params(), out, model.ExportOptions{DType: opts.DType, TokenizerFrom: path})
}

// exportGGUF writes the model at path, with its tokenizer, as a GGUF file.
func exportGGUF(path, out string, typ gguf.Type, stdout io.Writer) error {
	tok, err := tokenizer.Load(path)
	if err != nil {
		return err
	}
	vocab, err := tok.GGUFVocab()
	if err != nil {
		return fmt.Errorf("--gguf: the tokenizer of %s cannot be written for llama.cpp: %w", path, err)
	}
	opts, err := modelOptions("fp32", "cpu", "--dtype", "--device")
	if err != nil {
		return err
	}
	m, err := model.LoadCausalLM(path, opts)
	if err != nil {
		return err
	}
	defer m.Drop()
	if m.Cfg.VocabSize < len(vocab.Tokens) {
		return fmt.Errorf("--gguf: %s has %d embedding rows for a tokenizer of %d tokens", path, m.Cfg.VocabSize, len(vocab.Tokens))
	}
	// llama.cpp needs a token for every embedding row: Qwen2.5 pads its
	// embedding beyond the tokenizer, as convert_hf_to_gguf.py pads the
	// token list.
	vocab.PadTo(m.Cfg.VocabSize)
	if err := model.ExportGGUF(m.Cfg, m.Params(), out, typ, vocab.Metadata()); err != nil {
		return err
	}
	fmt.Fprintln(stdout, out)
	return nil
}
