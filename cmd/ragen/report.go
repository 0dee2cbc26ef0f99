package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/ragen-go/ragen/report"
	"github.com/ragen-go/ragen/starpo/study"
)

func init() {
	register(command{name: "report", summary: "write a run's HTML report, or a page comparing several runs", run: runReport})
}

func runReport(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("report", stderr)
	run := fs.String("run", "", "run folder: writes DIR/report.html (for a `ragen study` folder, its arms side by side)")
	compare := fs.Bool("compare", false, "compare the run folders given as arguments on one page")
	out := fs.String("out", "compare.html", "with --compare, the page to write")
	def := report.DefaultOptions()
	maxTrain := fs.Int("max-train-files", def.MaxTrainFiles, "with --run, training trajectory files embedded, evenly spaced; -1 embeds all")
	maxChars := fs.Int("max-message-chars", def.MaxMessageChars, "with --run, longer messages are cut; 0 keeps them whole")
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	switch {
	case *run != "" && *compare:
		return errors.New("--run and --compare cannot be combined")
	case *run == "" && !*compare:
		return errors.New("give --run DIR for one run's report, or --compare DIR1 DIR2 ... to compare runs")
	case *compare && fs.NArg() == 0:
		return errors.New("--compare needs the run folders as arguments")
	case *compare:
		if err := report.Compare(fs.Args(), *out); err != nil {
			return err
		}
		_, err := fmt.Fprintln(stdout, *out)
		return err
	case fs.Changed("out"):
		return errors.New("--out goes with --compare; --run always writes DIR/report.html")
	}
	if err := noArgs(fs); err != nil {
		return err
	}
	if study.IsFolder(*run) { // a `ragen study` folder: its arms side by side
		path, err := study.WriteReport(*run)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(stdout, path)
		return err
	}
	path, err := report.WriteWith(*run, report.Options{MaxTrainFiles: *maxTrain, MaxMessageChars: *maxChars})
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(stdout, path)
	return err
}
