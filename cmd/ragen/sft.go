package main

import (
	"io"

	"github.com/ragen-go/ragen/starpo/sft"
)

func init() {
	register(command{name: "sft", summary: "fine-tune a checkpoint on the environments' solver demonstrations (supervised warm start)", run: runSFT})
}

func runSFT(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("sft", stderr)
	rf := addRunFlags(fs, "", "preset YAML (configs/*.yaml): its train environments and sft section", "output folder (default runs/<name>-sft); the result goes to OUT/export")
	dir := fs.String("model", "", modelHelp)
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	if err := noArgs(fs); err != nil {
		return err
	}
	if err := singleProcess("sft"); err != nil {
		return err
	}
	cfg, out, path, opts, err := rf.loadFor(*dir, "-sft")
	if err != nil {
		return err
	}
	stop, release := onInterrupt("finishing this step, then exporting the weights so far")
	defer release()
	res, err := sft.Run(cfg, path, out, opts, stop)
	if err != nil {
		return err
	}
	_, err = io.WriteString(stdout, res.Export+"\n")
	return err
}
