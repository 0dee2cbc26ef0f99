// Command ragen trains and evaluates LLM agents on multi-turn environments
// with StarPO (RAGEN's trajectory-level PPO/GRPO), on libtorch through gotch.
//
// Each subcommand lives in its own file and registers itself with
// register; main only dispatches and turns errors into a sentence and a
// non-zero exit.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/spf13/pflag"

	"github.com/ragen-go/ragen/internal/torchrt"
)

// command is one subcommand of the ragen binary.
type command struct {
	name    string
	summary string
	// run parses args (everything after the subcommand name) and does the work.
	run func(args []string, stdout, stderr io.Writer) error
}

var commands = map[string]command{}

// register adds a subcommand; it is called from init functions.
func register(c command) {
	if _, dup := commands[c.name]; dup {
		panic("ragen: subcommand registered twice: " + c.name)
	}
	commands[c.name] = c
}

// errUsage marks an error whose message already says what was wrong with the
// command line; main prints it as it is.
var errUsage = errors.New("usage")

func main() {
	// Before any work: OpenBLAS picks its kernels when it is loaded, and on
	// a CPU newer than it knows it falls back to generic ones.
	torchrt.RestartWithFastBLAS()
	os.Exit(runMain(os.Args[1:], os.Stdout, os.Stderr))
}

func runMain(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		printUsage(stdout)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "ragen: unknown command %q; run 'ragen help' for the list\n", args[0])
		return 2
	}
	if err := c.run(args[1:], stdout, stderr); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return 0
		}
		fmt.Fprintf(stderr, "ragen %s: %v\n", c.name, err)
		return 1
	}
	return 0
}

func printUsage(w io.Writer) {
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString("usage: ragen COMMAND [flags]\n\ncommands:\n")
	for _, n := range names {
		fmt.Fprintf(&b, "  %-10s %s\n", n, commands[n].summary)
	}
	b.WriteString("\nrun 'ragen COMMAND --help' for the flags of one command\n")
	io.WriteString(w, b.String())
}

// newFlags returns a flag set for a subcommand that reports errors instead of
// exiting, writing help to stderr.
func newFlags(name string, stderr io.Writer) *pflag.FlagSet {
	fs := pflag.NewFlagSet("ragen "+name, pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.SortFlags = false
	return fs
}

// noArgs is the check for commands that take flags only.
func noArgs(fs *pflag.FlagSet) error {
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q (this command takes flags only)", fs.Arg(0))
	}
	return nil
}
