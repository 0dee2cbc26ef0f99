package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/rs/zerolog"
	"github.com/rs/zerolog/log"
	"github.com/spf13/pflag"
)

// logFlags are the logging flags every subcommand accepts.
type logFlags struct {
	format string
	level  string
}

func addLogFlags(fs *pflag.FlagSet) *logFlags {
	lf := &logFlags{}
	fs.StringVar(&lf.format, "log-format", "console", "log format: console (for people) or json (for machines)")
	fs.StringVar(&lf.level, "log-level", "info", "log level: debug, info, warn or error")
	return lf
}

// setup points the global zerolog logger at stderr in the chosen format.
func (lf *logFlags) setup(stderr io.Writer) error {
	lvl, err := zerolog.ParseLevel(lf.level)
	if err != nil || lf.level == "" {
		return fmt.Errorf("--log-level %q is not one of debug, info, warn, error", lf.level)
	}
	var w io.Writer
	switch lf.format {
	case "console":
		noColor := true
		if f, ok := stderr.(*os.File); ok {
			if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
				noColor = false
			}
		}
		w = zerolog.ConsoleWriter{Out: stderr, TimeFormat: time.TimeOnly, NoColor: noColor}
	case "json":
		w = stderr
	default:
		return fmt.Errorf("--log-format %q is not one of console, json", lf.format)
	}
	log.Logger = zerolog.New(w).Level(lvl).With().Timestamp().Logger()
	return nil
}

// parseFlags parses a subcommand's flags, including the logging ones, and
// configures logging.
func parseFlags(fs *pflag.FlagSet, args []string, stderr io.Writer) error {
	lf := addLogFlags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	return lf.setup(stderr)
}
