package model

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/sugarme/gotch"

	"github.com/ragen-go/ragen/internal/torchrt"
	"github.com/ragen-go/ragen/tokenizer"

	"github.com/ragen-go/ragen/model/safetensors"
)

// DefaultShardBytes is the shard size of exports, HuggingFace's default
// max_shard_size (5 GB).
const DefaultShardBytes = 5_000_000_000

// ExportOptions says how to write a checkpoint folder.
type ExportOptions struct {
	DType      gotch.DType // dtype of the stored weights (config.json's torch_dtype)
	ShardBytes int64       // shard above this size; 0 = DefaultShardBytes
	// TokenizerFrom is a folder whose tokenizer files are copied along
	// (tokenizer.json, tokenizer_config.json, vocab.json, merges.txt, ...),
	// or a GGUF file whose tokenizer is written out in HuggingFace's format.
	TokenizerFrom string
	// Generation is written as generation_config.json; nil writes one with
	// the config's bos/eos ids.
	Generation map[string]any
	// Metadata goes into the safetensors header (e.g. "format": "pt").
	Metadata map[string]string
}

// Export writes params as a folder that HuggingFace transformers loads with
// Qwen2ForCausalLM.from_pretrained: config.json, model.safetensors (or
// shards plus model.safetensors.index.json), generation_config.json and the
// tokenizer files. It writes a sibling folder first and renames it into
// place, so a crash never leaves a half-written export at dir.
func Export(cfg Config, params []Param, dir string, o ExportOptions) (err error) {
	if o.ShardBytes == 0 {
		o.ShardBytes = DefaultShardBytes
	}
	st, err := toSafetensors(o.DType)
	if err != nil {
		return err
	}
	tmp := dir + ".partial"
	if err := os.RemoveAll(tmp); err != nil {
		return err
	}
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return fmt.Errorf("creating export folder: %w", err)
	}
	defer func() {
		if err != nil {
			os.RemoveAll(tmp)
		}
	}()
	cfg.TorchDtype = DTypeName(o.DType)
	cfg.Architectures = []string{cfg.Architecture()}
	if err := writeJSON(filepath.Join(tmp, "config.json"), cfg); err != nil {
		return err
	}
	gen := o.Generation
	if gen == nil && o.TokenizerFrom != "" && !IsGGUF(o.TokenizerFrom) {
		// The source's own generation settings (stop ids, sampling
		// defaults) travel with its weights.
		if data, err := os.ReadFile(filepath.Join(o.TokenizerFrom, "generation_config.json")); err == nil {
			if err := json.Unmarshal(data, &gen); err != nil {
				return fmt.Errorf("%s: %w", filepath.Join(o.TokenizerFrom, "generation_config.json"), err)
			}
		}
	}
	if gen == nil {
		gen = map[string]any{"_from_model_config": true}
		if cfg.BOSTokenID != nil {
			gen["bos_token_id"] = *cfg.BOSTokenID
		}
		if cfg.EOSTokenID != nil {
			gen["eos_token_id"] = cfg.EOSTokenID
		}
	}
	if err := writeJSON(filepath.Join(tmp, "generation_config.json"), gen); err != nil {
		return err
	}
	tensors := make([]safetensors.Tensor, 0, len(params))
	for _, p := range params {
		p := p
		tensors = append(tensors, safetensors.Tensor{
			Name: p.Name, DType: st, Shape: size(p.T),
			Source: func() ([]byte, error) { return torchrt.TensorBytes(p.T, o.DType) },
		})
	}
	meta := map[string]string{"format": "pt"}
	for k, v := range o.Metadata {
		meta[k] = v
	}
	if err := safetensors.WriteSharded(tmp, tensors, o.ShardBytes, meta); err != nil {
		return err
	}
	if o.TokenizerFrom != "" {
		if err := CopyTokenizerFiles(o.TokenizerFrom, tmp); err != nil {
			return err
		}
	}
	return replaceDir(tmp, dir)
}

// tokenizerFiles are the files HuggingFace tokenizers for Qwen2 use.
// vocab_map.json is a reduced vocabulary's map to the base tokenizer's ids
// (tokenizer.VocabMapFile): it must travel with the weights it describes.
var tokenizerFiles = []string{"tokenizer.json", "tokenizer_config.json", "vocab.json", "merges.txt", "special_tokens_map.json", "added_tokens.json", "vocab_map.json", "chat_template.jinja"}

// CopyTokenizerFiles copies the tokenizer files (tokenizerFiles) that
// folder from has into folder to; from a GGUF file it writes its tokenizer
// as tokenizer.json and tokenizer_config.json.
func CopyTokenizerFiles(from, to string) error {
	if IsGGUF(from) {
		tok, err := tokenizer.LoadGGUF(from)
		if err != nil {
			return err
		}
		return tok.WriteHF(to)
	}
	for _, name := range tokenizerFiles {
		src := filepath.Join(from, name)
		if _, err := os.Stat(src); err != nil {
			continue
		}
		if err := copyFile(src, filepath.Join(to, name)); err != nil {
			return fmt.Errorf("copying tokenizer file %s: %w", src, err)
		}
	}
	return nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

func writeJSON(path string, v any) error {
	var data []byte
	var err error
	if c, ok := v.(Config); ok {
		data, err = c.JSON()
	} else {
		data, err = json.MarshalIndent(v, "", "  ")
	}
	if err != nil {
		return fmt.Errorf("encoding %s: %w", filepath.Base(path), err)
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}

// replaceDir moves tmp to dir, replacing a previous dir only once tmp is
// complete.
func replaceDir(tmp, dir string) error {
	old := dir + ".old"
	os.RemoveAll(old)
	if _, err := os.Stat(dir); err == nil {
		if err := os.Rename(dir, old); err != nil {
			return fmt.Errorf("moving the previous export aside: %w", err)
		}
	}
	if err := os.Rename(tmp, dir); err != nil {
		return fmt.Errorf("moving the export into place: %w", err)
	}
	return os.RemoveAll(old)
}
