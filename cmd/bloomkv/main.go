// Command bloomkv is the bloomkv tool: it sizes Bloom, binary fuse and
// Ribbon filters, and reads and writes a database from the command line.
//
//	bloomkv help [COMMAND]
//	bloomkv calc [-n items] [-p rate | -bits-per-key c] [-k probes]
//	bloomkv calc -family fuse|ribbon [-n items] [-p rate | -bits w]
//	bloomkv put -db DIR [-hex] [-ttl DURATION] KEY VALUE
//	bloomkv put -db DIR [-hex] [-ttl DURATION] -value-file F KEY
//	bloomkv get -db DIR [-hex] KEY
//	bloomkv del -db DIR [-hex] KEY
//	bloomkv scan -db DIR [-hex] [-start K] [-end K] [-limit N] [-keys-only]
//	bloomkv stats -db DIR
//	bloomkv bench [-n keys] [-reads n] [-workloads list] [-bits-per-key c] [-allocation a]
//	              [-filter family:param | -levels list] [-sweep] [-out DIR] …
//	bloomkv explain -db DIR [-hex] KEY
//	bloomkv explain -db DIR [-hex] -multi KEY...
//	bloomkv explain -db DIR [-hex] -range LO HI
//	bloomkv tree -db DIR [-hex]
//	bloomkv inspect [-v] [-type T] FILE
//	bloomkv web [-addr HOST:PORT] [-db DIR | -demo [-rate N]]
//	bloomkv checkpoint -db DIR OUT
//	bloomkv ingest -db DIR FILE...
//	bloomkv version
//
// help, -h, or COMMAND -h prints the usage — of the tool, or of the
// command: its synopsis, its summary and its flags — to standard output.
// calc's -n takes a whole number written out or in e-notation (1e9).
//
// calc prints, for the classic and the blocked filter of package bloom, the
// bits, probes, bytes and expected false-positive rate, beside the
// information-theoretic lower bound; with -k, each filter beside the same
// one probing k times instead of the optimal number — the rate that k
// reaches in the same memory, and the bits per item it needs for the rate p
// (or, with -bits-per-key, for the rate the optimal k reaches) against the
// optimal k's; with -family fuse, for a binary fuse
// filter (package fuse) of w-bit fingerprints — -bits, or the narrowest
// width with 2^-w ≤ p — its bytes, bits per item and rate 2^-w, a
// comparison with the blocked Bloom filter of the same rate (which is
// smaller, by how much), and what a table of n keys would spend (a table
// falls back to that Bloom filter where it is smaller).
//
// bench runs db_bench-style workloads (package workload) on a fresh
// database in a temporary directory and prints their throughput, latency
// and read amplification per Get — tables considered, filter negatives,
// data blocks read from the file and the cache — with the measured and
// predicted false-positive rate and the filter family of each level;
// -filter and -levels choose the filters (bloom:10, fuse:8, ribbon:8, one
// per level), -allocation how the memory is spread (uniform, optimal, best,
// progressive); -sweep runs the bits-per-key × policy sweep, the prefix
// workloads and the filter families' rates and costs by table size, and
// -out DIR writes CSV, JSON and SVG charts.
// 'bloomkv bench -h' lists its flags, grouped by what they are for, and
// their defaults.
//
// version prints the module's version, as the build recorded it, and the
// on-disk formats this build reads and writes, with their versions.
//
// # Database commands
//
// Each opens the database in DIR, does its work and closes it. put sets KEY
// to VALUE, or to the bytes of file F (- for standard input) — with -ttl,
// until DURATION after the put (DB.PutWithTTL; 0, the default, never
// expires, a negative duration is refused); get prints
// KEY's value; del deletes KEY (an absent key is no error); scan prints the
// keys in [-start, -end) in key order, at most -limit of them (0: all);
// stats prints the tables and filter metrics of each level, headed by a
// note that its counters cover only its own read-only open (so that the
// lookup counters are zero): no file keeps a database's counters. Writes are
// durable — in the fsynced log — once the command exits 0. checkpoint
// writes a consistent copy of the database into OUT, a missing or empty
// directory, that opens as a database of its own (DB.Checkpoint; the tables
// are hard links where the file system allows). ingest adds the tables
// FILE..., written with package sstable, in one atomic step (DB.Ingest:
// each file checked first; all of them or none), and prints how many
// tables and bytes it added; the files are hard-linked (copied across file
// systems) and left as they were. put and ingest create the database if
// DIR holds none; the other commands refuse such a directory.
// One process at a time may have a database open: a command on a database
// another process has open fails at once.
//
// Flags come before the operands (a flag after them is refused, with that
// hint); a KEY that begins with '-' follows "--". put refuses a key or
// value past MaxKeySize or MaxValueSize, giving its size, before it opens
// (and would create) the database.
// With -hex, KEY, VALUE, -start and -end are given in hexadecimal (-value-file
// is read as is), and keys and values are printed in lowercase hexadecimal:
// the way to work with binary keys.
//
// get prints the value's bytes as they are, then a newline. scan prints a
// line per key: the key, a tab and the value, or the key alone with
// -keys-only. There, a key or value is printed as it is when it is valid
// UTF-8 of printable characters (strconv.IsPrint: no tab, newline or other
// control character) not beginning with a double quote, and otherwise as a
// Go double-quoted string (strconv.Quote; strconv.Unquote reverses it), so
// that each line splits at its one tab.
//
// # Seeing how it works
//
// explain looks KEY up as get does and prints each place the lookup
// consulted, in order — the memtables, then each level and table — with the
// table's key range, whether the key fell in it, the filter's verdict,
// whether the data block came from the block cache or the file and how many
// bytes were read, then a one-line summary; with -multi it reads its keys
// as one MultiGet and prints the batch's rounds (keys sent to tables,
// distinct blocks, blocks shared by several keys, from the cache or the
// file, reads at once), each key's path with the round and how many keys
// shared its block, and the batch's summary. The index of every table is
// pinned in memory, so it costs no read. With -range it scans [LO, HI)
// instead, as an iterator with those bounds does, and prints each memtable
// searched and each table whose key range overlaps the range, with its
// range filter's verdict — absent: skipped, neither opened nor sought;
// maybe, or none for a table without a range filter: sought — then the
// keys found (see Options.RangeFilterBits). tree draws the levels and their
// tables from the manifest (sizes, key ranges, each table's filter family,
// parameter and bits per key, and each level's mix of families and its
// filter bits over its keys); it
// only reads, and needs no lock. inspect prints what any one file of a DB
// holds, telling its type from its bytes (a table's footer, a log's first
// record, a manifest's name in CURRENT), or from its name where they say
// nothing (an empty WAL), or -type: a table (footer, block list with sizes and
// compression ratios, properties, its filter's family, size and bits per
// key — a Bloom filter's probes and fill ratio, a fuse filter's
// fingerprint width and slots — its expected false-positive rate and the
// rate measured on 100,000 random hashes, the prefix extractor its filter
// holds prefixes under, if any; key range), a WAL (records, writes, torn tail),
// a manifest (its version edits) or CURRENT; -v adds every entry. A damaged
// file is reported in one line, with the offset of the damage, and exits 1;
// a missing one says "no such file".
//
// # In a browser
//
// web serves the pages of package web until Ctrl-C (SIGINT) or SIGTERM,
// then shuts down, letting requests in flight finish: a Bloom filter
// playground, a filter calculator and, with -db DIR (opened read-only) or
// -demo, the live LSM tree with an explain box. It listens on
// 127.0.0.1:8080 by default, this machine only; -addr changes that. -demo
// opens a database in a temporary directory (removed on exit) with a 64
// KiB memtable and small levels, and a writer doing -rate writes per
// second (400 by default; one in twenty a delete) and as many lookups, so
// that a flush comes every second or two and compactions follow.
//
// # Exit status
//
//	0  success
//	1  failure, reported on standard error as "bloomkv CMD: reason"
//	2  usage error: an unknown command, a bad flag or argument, a missing -db
//	3  get: the key is not found ("bloomkv get: key not found: KEY")
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

// command is one subcommand: its name, a one-line summary, and its body,
// which parses its own flags from args.
type command struct {
	name, summary string
	run           func(args []string, stdout io.Writer) error
}

// commands are the subcommands, in the order the help lists them. They are
// set by init, since their bodies' usage texts look their summaries up.
var commands []command

func init() {
	commands = []command{
		{"calc", "size Bloom, binary fuse or Ribbon filters for n items at a false-positive rate or size", runCalc},
		{"put", "set a key to a value", runPut},
		{"get", "print a key's value (exit status 3 if it has none)", runGet},
		{"del", "delete a key", runDel},
		{"merge", "merge an operand into a key (a counter: -merger int64add) and print its new value", runMerge},
		{"scan", "print the keys and values in a key range, in key order", runScan},
		{"stats", "print the levels, tables and filter metrics", runStats},
		{"bench", "run db_bench-style workloads and report the reads the filters avoid", runBench},
		{"explain", "look a key up and show every table and filter it consulted", runExplain},
		{"tree", "draw the levels and their tables", runTree},
		{"inspect", "show what a table, WAL, manifest or CURRENT file holds", runInspect},
		{"web", "serve the filter playground, the calculator and the live tree to a browser", runWeb},
		{"checkpoint", "copy the database, consistently, into a new directory", runCheckpoint},
		{"ingest", "add tables written with package sstable to the database, all at once", runIngest},
		{"version", "print the module's version and the on-disk formats it reads and writes", runVersion},
	}
}

// The exit codes.
const (
	exitFailure  = 1
	exitUsage    = 2
	exitNotFound = 3 // get: the key is not found
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run executes the command line and returns the process exit code: 0 on
// success, else exitFailure, exitUsage or exitNotFound. Help asked for
// (help, -h, help CMD, CMD -h) goes to stdout with exit code 0; a command
// line that is wrong gets its error and exit code 2 on stderr.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return exitUsage
	}
	switch args[0] {
	case "help", "-h", "-help", "--help":
		if len(args) == 1 {
			usage(stdout)
			return 0
		}
		if args[0] == "help" && len(args) == 2 {
			return run([]string{args[1], "-h"}, stdout, stderr)
		}
		fmt.Fprintf(stderr, "bloomkv: %s takes at most one command, got %q\n", args[0], args[1:])
		return exitUsage
	}
	for _, c := range commands {
		if c.name != args[0] {
			continue
		}
		err := c.run(args[1:], stdout)
		var help helpText
		switch {
		case err == nil:
			return 0
		case errors.As(err, &help):
			io.WriteString(stdout, string(help))
			return 0
		}
		// The library's errors begin "bloomkv: ", wrapped or not; the
		// line names the tool once, in its own prefix.
		msg := strings.ReplaceAll(strings.TrimPrefix(err.Error(), "bloomkv: "), ": bloomkv: ", ": ")
		fmt.Fprintf(stderr, "bloomkv %s: %s\n", c.name, msg)
		switch {
		case errors.As(err, new(usageError)):
			return exitUsage
		case errors.As(err, new(keyNotFoundError)):
			return exitNotFound
		}
		return exitFailure
	}
	fmt.Fprintf(stderr, "bloomkv: unknown command %q\n\n", args[0])
	usage(stderr)
	return exitUsage
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: bloomkv COMMAND [flags] [operands]\n\ncommands:")
	for _, c := range commands {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nRun 'bloomkv help COMMAND' (or 'bloomkv COMMAND -h') for a command's flags.")
	fmt.Fprintln(w, "Exit status: 0 success, 1 failure, 2 usage error, 3 key not found (get).")
}

// summary returns the one-line summary of command name.
func summary(name string) string {
	for _, c := range commands {
		if c.name == name {
			return c.summary
		}
	}
	return ""
}

// helpText is a command's usage, asked for with -h: run prints it to
// stdout and exits 0.
type helpText string

func (h helpText) Error() string { return string(h) }

// usageError is a mistake in the command line, reported with exit code 2.
type usageError struct{ error }

// newFlagSet returns the flag set of command name, which reports errors
// instead of exiting. Its usage, the one format of every command, is the
// synopsis (what follows "bloomkv NAME"), the command's summary and its
// flags.
func newFlagSet(name, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet("bloomkv "+name, flag.ContinueOnError)
	// Parse errors are reported once, by run; only -h prints the flags.
	fs.SetOutput(io.Discard)
	fs.Usage = func() {
		writeSynopsis(fs.Output(), name, synopsis)
		fmt.Fprintln(fs.Output(), "flags:")
		fs.PrintDefaults()
	}
	return fs
}

// writeSynopsis writes the first lines of every command's usage: the
// usage line and the command's summary.
func writeSynopsis(w io.Writer, name, synopsis string) {
	fmt.Fprintf(w, "usage: %s\n\n%s%s.\n\n", strings.TrimSpace("bloomkv "+name+" "+synopsis),
		strings.ToUpper(summary(name)[:1]), summary(name)[1:])
}

// parseFlags parses args, turning flag errors into usage errors and -h
// into the command's usage text. A flag given after the operands (which
// the flag package takes for an operand) gets a hint.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			var b strings.Builder
			fs.SetOutput(&b)
			fs.Usage()
			fs.SetOutput(io.Discard)
			return helpText(b.String())
		}
		return usageError{err}
	}
	// After "--" every argument is an operand, flag-like or not.
	if n := len(args) - fs.NArg(); n > 0 && args[n-1] == "--" {
		return nil
	}
	return lateFlag(fs)
}

// lateFlag returns a usage error naming the first operand that is one of
// fs's flags: flags come before the operands.
func lateFlag(fs *flag.FlagSet) error {
	for _, a := range fs.Args() {
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if strings.HasPrefix(a, "-") && fs.Lookup(name) != nil {
			return usageError{fmt.Errorf("flag %s after the operands: flags come first (%s -h shows the order)", a, fs.Name())}
		}
	}
	return nil
}

// flagGroup is a heading and the names of the flags listed under it.
type flagGroup struct {
	heading string
	names   []string
}

// printFlagGroups lists fs's flags under the groups' headings, each as
// flag.PrintDefaults prints it.
func printFlagGroups(fs *flag.FlagSet, groups []flagGroup) {
	w := fs.Output()
	for _, g := range groups {
		fmt.Fprintf(w, "\n%s:\n", g.heading)
		one := flag.NewFlagSet("", flag.ContinueOnError)
		one.SetOutput(w)
		for _, name := range g.names {
			if f := fs.Lookup(name); f != nil {
				one.Var(f.Value, f.Name, f.Usage)
				one.Lookup(f.Name).DefValue = f.DefValue
			}
		}
		one.PrintDefaults()
	}
}

// parse is parseFlags for a command that takes no operands.
func parse(fs *flag.FlagSet, args []string) error {
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Errorf("unexpected arguments %q", fs.Args())}
	}
	return nil
}
