package main

import (
	"path/filepath"

	"github.com/spf13/pflag"

	"github.com/ragen-go/ragen/model"
	"github.com/ragen-go/ragen/starpo/config"
)

// runFlags are the flags of the commands that run a configured job (train,
// sft, quickstart): a preset, overrides and a run folder.
type runFlags struct {
	cfgPath, out *string
	sets         *[]string
}

func addRunFlags(fs *pflag.FlagSet, defaultConfig, configHelp, outHelp string) runFlags {
	return runFlags{
		cfgPath: fs.String("config", defaultConfig, configHelp),
		out:     fs.String("out", "", outHelp),
		sets:    fs.StringArray("set", nil, "override a config key: key=value (repeatable)"),
	}
}

// load reads the config and defaults the run folder to
// runs/<name><suffix>.
func (r runFlags) load(suffix string) (config.Config, string, error) {
	cfg, err := config.Load(*r.cfgPath, *r.sets)
	if err != nil {
		return cfg, "", err
	}
	out := *r.out
	if out == "" {
		out = filepath.Join("runs", cfg.Name+suffix)
	}
	return cfg, out, nil
}

// configPlacement resolves the dtype and device the config asks for. With
// algorithm.autocast bf16, dtype auto holds the weights in fp32: they are
// the master weights the bf16 updates step.
func configPlacement(cfg config.Config) (model.Options, error) {
	dtype := cfg.DType
	if cfg.Algorithm.Autocast != "" && (dtype == "" || dtype == "auto") {
		dtype = "fp32"
	}
	return modelOptions(dtype, cfg.Device, "dtype", "device")
}

// loadFor is load for a job that starts from the model --model names: the
// config (its errors first), then the model (resolveModel: the path it
// returns is what the job loads), then the placement.
func (r runFlags) loadFor(modelArg, suffix string) (config.Config, string, string, model.Options, error) {
	cfg, out, err := r.load(suffix)
	if err != nil {
		return cfg, "", "", model.Options{}, err
	}
	path, err := resolveModel(modelArg)
	if err != nil {
		return cfg, "", "", model.Options{}, err
	}
	opts, err := configPlacement(cfg)
	return cfg, out, path, opts, err
}
