package main

// The database commands — put, get, del, scan, stats — and what they share:
// the -db and -hex flags, opening and closing the DB, and how keys and values
// are read from the command line and printed.

import (
	"bufio"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/bloomkv/bloomkv"
	"github.com/bloomkv/bloomkv/internal/humanize"
)

// stdin is what put -value-file - reads; tests replace it.
var stdin io.Reader = os.Stdin

func runPut(args []string, stdout io.Writer) error {
	f := newDBFlags("put", "KEY [VALUE]")
	f.addHex("KEY and VALUE are given in hexadecimal (-value-file is read as is)")
	valueFile := f.String("value-file", "", "read the value, as is (never hex), from file `F` instead of VALUE; - for standard input")
	ttl := f.Duration("ttl", 0, "the key expires `DURATION` after the put (e.g. 90s, 24h): reads find it deleted from then on; 0 never")
	ops, err := f.parse(args)
	if err != nil {
		return err
	}
	if *ttl < 0 {
		return usageError{fmt.Errorf("-ttl %v is negative: give a positive duration, or 0 for a key that never expires", *ttl)}
	}
	var key, value []byte
	if *valueFile != "" {
		if err := wantOperands(ops, "KEY"); err != nil {
			return err
		}
		value, err = readValue(*valueFile)
	} else {
		if err := wantOperands(ops, "KEY", "VALUE"); err != nil {
			return err
		}
		value, err = f.decode("VALUE", ops[1])
	}
	if err != nil {
		return err
	}
	if key, err = f.decode("KEY", ops[0]); err != nil {
		return err
	}
	// Refused before the Open, which would create the database.
	if len(key) > bloomkv.MaxKeySize {
		return usageError{fmt.Errorf("KEY is %s, more than a key may hold (MaxKeySize, %s)", sizeOf(int64(len(key))), sizeOf(bloomkv.MaxKeySize))}
	}
	if len(value) > bloomkv.MaxValueSize {
		return valueTooLarge("VALUE", "more")
	}
	return f.withDB(createDB, func(db *bloomkv.DB) error {
		if *ttl > 0 {
			return db.PutWithTTL(key, value, *ttl, nil)
		}
		return db.Put(key, value, nil)
	})
}

// sizeOf renders n bytes exactly, and from 1 KiB also in the binary unit
// a person reads: "104,857,600 bytes (100 MiB)".
func sizeOf(n int64) string {
	if n < 1024 {
		return fmt.Sprintf("%d bytes", n)
	}
	return fmt.Sprintf("%s bytes (%s)", fmtCount(n), humanize.Bytes(uint64(n)))
}

// readValue reads the value in file name, or standard input for "-". It
// refuses a value larger than a value may hold before the Open, which
// would create the database: a regular file by its size, unread; standard
// input (or a file that grew) once it has read one byte past the limit.
func readValue(name string) ([]byte, error) {
	what, r := "the value on standard input", stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		what, r = "the value in "+name, f
		if info, err := f.Stat(); err == nil && info.Mode().IsRegular() && info.Size() > bloomkv.MaxValueSize {
			return nil, valueTooLarge(what, sizeOf(info.Size())+", more")
		}
	}
	value, err := io.ReadAll(io.LimitReader(r, bloomkv.MaxValueSize+1))
	if err == nil && len(value) > bloomkv.MaxValueSize {
		return nil, valueTooLarge(what, "more")
	}
	return value, err
}

// valueTooLarge is the usage error for a value, named by what, of size
// ("more", or its size and "more") than a value may hold.
func valueTooLarge(what, size string) error {
	return usageError{fmt.Errorf("%s is %s than a value may hold (MaxValueSize, %s)", what, size, sizeOf(bloomkv.MaxValueSize))}
}

func runGet(args []string, stdout io.Writer) error {
	f := newDBFlags("get", "KEY")
	arg, key, err := f.parseKey(args, "KEY is given, and the value printed, in hexadecimal")
	if err != nil {
		return err
	}
	return f.withDB(readDB, func(db *bloomkv.DB) error {
		v, err := db.Get(key)
		if errors.Is(err, bloomkv.ErrNotFound) {
			return keyNotFoundError{arg}
		}
		if err != nil {
			return err
		}
		if f.hex {
			v = []byte(hex.EncodeToString(v))
		}
		_, err = stdout.Write(append(v, '\n'))
		return err
	})
}

// keyNotFoundError is get's report of an absent key, as the command line
// gave it; run exits with exitNotFound for it.
type keyNotFoundError struct{ key string }

func (e keyNotFoundError) Error() string { return "key not found: " + printable(e.key) }

func runDel(args []string, stdout io.Writer) error {
	f := newDBFlags("del", "KEY")
	_, key, err := f.parseKey(args, "KEY is given in hexadecimal")
	if err != nil {
		return err
	}
	return f.withDB(writeDB, func(db *bloomkv.DB) error { return db.Delete(key, nil) })
}

func runScan(args []string, stdout io.Writer) error {
	f := newDBFlags("scan", "")
	f.addHex("-start and -end are given, and the keys and values printed, in hexadecimal")
	start := f.String("start", "", "first `key` shown (inclusive); empty: from the first key")
	end := f.String("end", "", "first `key` not shown (exclusive); empty: to the last key")
	limit := f.Int("limit", 0, "show at most `N` keys; 0: no limit")
	keysOnly := f.Bool("keys-only", false, "print the keys only")
	ops, err := f.parse(args)
	if err != nil {
		return err
	}
	if err := wantOperands(ops); err != nil {
		return err
	}
	if *limit < 0 {
		return usageError{fmt.Errorf("invalid -limit %d: must not be negative", *limit)}
	}
	var opts bloomkv.IterOptions
	// An empty bound is no bound: no key is below the empty key.
	if *start != "" {
		if opts.LowerBound, err = f.decode("-start", *start); err != nil {
			return err
		}
	}
	if *end != "" {
		if opts.UpperBound, err = f.decode("-end", *end); err != nil {
			return err
		}
	}
	return f.withDB(readDB, func(db *bloomkv.DB) error {
		it, err := db.NewIter(&opts)
		if err != nil {
			return err
		}
		w := bufio.NewWriter(stdout)
		n := 0
		for k, v := range it.All() {
			w.WriteString(f.format(k))
			if !*keysOnly {
				w.WriteByte('\t')
				w.WriteString(f.format(v))
			}
			w.WriteByte('\n')
			if n++; n == *limit {
				break
			}
		}
		// Print what was read, then report a failure that cut the scan short.
		werr := w.Flush()
		if err := it.Close(); err != nil {
			return err
		}
		return werr
	})
}

// statsNote heads stats' output: the DB's counters start at its Open, and
// stats' open is read-only and looks nothing up.
const statsNote = `The levels, tables, sizes and bits per key are the database's. The counters
(lookups, filter checks, blocks read, writes, flushes, compactions) cover
this command's own read-only open alone, which looks nothing up: they are
not the database's history, which no file keeps.

`

func runStats(args []string, stdout io.Writer) error {
	f := newDBFlags("stats", "")
	ops, err := f.parse(args)
	if err != nil {
		return err
	}
	if err := wantOperands(ops); err != nil {
		return err
	}
	return f.withDB(readDB, func(db *bloomkv.DB) error {
		_, err := io.WriteString(stdout, statsNote+db.Metrics().String())
		return err
	})
}

// dbFlags is the flag set of a database command, with the flags they share.
type dbFlags struct {
	*flag.FlagSet
	dir string // -db
	hex bool   // -hex, for the commands with keys
}

// newDBFlags returns the flag set of command name, whose operands the usage
// line shows after the flags.
func newDBFlags(name, operands string) *dbFlags {
	f := &dbFlags{FlagSet: newFlagSet(name, "-db DIR [flags] "+operands)}
	f.StringVar(&f.dir, "db", "", "the database `directory` (required)")
	return f
}

// addHex adds the -hex flag, whose help says what it turns to
// hexadecimal in this command: only what the command has.
func (f *dbFlags) addHex(help string) {
	f.BoolVar(&f.hex, "hex", false, help+": the way to work with binary keys")
}

// parse parses args, checks that -db is set, and returns the operands.
func (f *dbFlags) parse(args []string) ([]string, error) {
	if err := parseFlags(f.FlagSet, args); err != nil {
		return nil, err
	}
	if f.dir == "" {
		return nil, usageError{errors.New("missing -db DIR")}
	}
	return f.Args(), nil
}

// parseKey parses the flags, with -hex (of help hexHelp), of a command
// whose one operand is KEY, and returns the operand as given and the key
// it spells.
func (f *dbFlags) parseKey(args []string, hexHelp string) (arg string, key []byte, err error) {
	f.addHex(hexHelp)
	ops, err := f.parse(args)
	if err == nil {
		err = wantOperands(ops, "KEY")
	}
	if err != nil {
		return "", nil, err
	}
	key, err = f.decode("KEY", ops[0])
	return ops[0], key, err
}

// wantOperands checks that ops are as many as names.
func wantOperands(ops []string, names ...string) error {
	if len(ops) == len(names) {
		return nil
	}
	if len(names) == 0 {
		return usageError{fmt.Errorf("unexpected arguments %q", ops)}
	}
	return usageError{fmt.Errorf("want %s after the flags, got %q", strings.Join(names, " "), ops)}
}

// decode returns the bytes of the command-line argument what: s itself, or
// with -hex the bytes s spells in hexadecimal.
func (f *dbFlags) decode(what, s string) ([]byte, error) {
	if !f.hex {
		return []byte(s), nil
	}
	b, err := hex.DecodeString(s)
	if err != nil {
		return nil, usageError{fmt.Errorf("%s %q is not hexadecimal: %v", what, s, err)}
	}
	return b, nil
}

// format renders a key or value for output: lowercase hexadecimal with
// -hex, else as printable renders it.
func (f *dbFlags) format(b []byte) string {
	if f.hex {
		return hex.EncodeToString(b)
	}
	return printable(string(b))
}

// printable returns s itself if it is valid UTF-8 of printable characters
// (strconv.IsPrint: no tab, newline or other control character) not
// beginning with a double quote, and otherwise s as a Go double-quoted string,
// which strconv.Unquote reverses. Either way the result is one line with no
// tab, and tells the two forms apart by its first byte.
func printable(s string) string {
	if utf8.ValidString(s) && !strings.HasPrefix(s, `"`) &&
		strings.IndexFunc(s, func(r rune) bool { return !strconv.IsPrint(r) }) < 0 {
		return s
	}
	return strconv.Quote(s)
}

// openMode is how a command opens the database.
type openMode int

const (
	// readDB opens an existing database read-only: looking never changes
	// it, and works while other read-only commands look too.
	readDB openMode = iota
	// writeDB opens an existing database to change it: a delete never
	// creates a database in a mistyped directory.
	writeDB
	// createDB opens the database, creating it if the directory holds
	// none (and is missing or empty).
	createDB
)

// withDB opens the database in -db as mode says, calls fn with it, and
// closes it.
func (f *dbFlags) withDB(mode openMode, fn func(*bloomkv.DB) error) error {
	db, err := openDB(f.dir, mode)
	if err != nil {
		return err
	}
	err = fn(db)
	if cerr := db.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		return dbError(err)
	}
	return nil
}

// openDB opens the database in dir as mode says, its errors worded for
// run to print: a directory in use or holding no database says so. A
// database written with one of the mergers the tool knows (mergers) is
// opened with it.
func openDB(dir string, mode openMode) (*bloomkv.DB, error) {
	return openDBWith(dir, mode, nil)
}

// openDBWith is openDB with merger m (nil: the recorded one, if any).
func openDBWith(dir string, mode openMode, m *bloomkv.Merger) (*bloomkv.DB, error) {
	opts := &bloomkv.Options{ReadOnly: mode == readDB, ErrorIfNotExists: mode != createDB, Merger: m}
	db, err := bloomkv.Open(dir, opts)
	var mm *bloomkv.MergerMismatchError
	if errors.As(err, &mm) && m == nil {
		if known := mergerNamed(mm.Recorded); known != nil {
			opts.Merger = known
			db, err = bloomkv.Open(dir, opts)
		}
	}
	switch {
	case errors.Is(err, bloomkv.ErrLocked):
		return nil, fmt.Errorf("%s is in use: another process has the database open", dir)
	case errors.Is(err, bloomkv.ErrDBDoesNotExist):
		return nil, fmt.Errorf("%s holds no bloomkv database", dir)
	case err != nil:
		return nil, dbError(err)
	}
	return db, nil
}

// dbError adapts an error of the DB for run to print: an argument the DB
// refused is a usage error, and the library's "bloomkv: " prefix is dropped,
// run's "bloomkv CMD: " taking its place.
func dbError(err error) error {
	if errors.As(err, new(*bloomkv.ArgumentError)) {
		return usageError{trimmedError{err}}
	}
	return trimmedError{err}
}

// trimmedError is an error of the DB without its leading "bloomkv: ".
type trimmedError struct{ error }

func (e trimmedError) Error() string { return strings.TrimPrefix(e.error.Error(), "bloomkv: ") }
func (e trimmedError) Unwrap() error { return e.error }
