// Command bloomkv is the bloomkv tool. Today it sizes Bloom filters:
//
//	bloomkv calc [-n items] [-p rate | -bits-per-key c]
//
// prints, for the classic and the blocked filter of package bloom, the bits,
// probes, bytes and expected false-positive rate, beside the
// information-theoretic lower bound.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
)

// command is one subcommand: its name, a one-line summary, and its body,
// which parses its own flags from args.
type command struct {
	name, summary string
	run           func(args []string, stdout io.Writer) error
}

var commands = []command{
	{"calc", "size Bloom filters for n items at a false-positive rate or bits per key", runCalc},
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run executes the command line and returns the process exit code: 0 on
// success, 2 for a usage error, 1 for any other failure.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "-help" || args[0] == "help" {
		usage(stderr)
		return 2
	}
	for _, c := range commands {
		if c.name != args[0] {
			continue
		}
		err := c.run(args[1:], stdout)
		switch {
		case err == nil:
			return 0
		case errors.Is(err, flag.ErrHelp):
			return 2
		case errors.As(err, new(usageError)):
			fmt.Fprintf(stderr, "bloomkv %s: %v\n", c.name, err)
			return 2
		default:
			fmt.Fprintf(stderr, "bloomkv %s: %v\n", c.name, err)
			return 1
		}
	}
	fmt.Fprintf(stderr, "bloomkv: unknown command %q\n\n", args[0])
	usage(stderr)
	return 2
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: bloomkv <command> [flags]\n\ncommands:")
	for _, c := range commands {
		fmt.Fprintf(w, "  %-8s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nRun 'bloomkv <command> -h' for a command's flags.")
}

// usageError is a mistake in the command line, reported with exit code 2.
type usageError struct{ error }

// newFlagSet returns a flag set that reports errors instead of exiting, and
// prints its usage to stderr.
func newFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet("bloomkv "+name, flag.ContinueOnError)
	fs.SetOutput(os.Stderr)
	return fs
}

// parse parses args, turning flag errors into usage errors.
func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{err}
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Errorf("unexpected arguments %q", fs.Args())}
	}
	return nil
}
