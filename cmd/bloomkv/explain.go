package main

// explain: the path of one lookup through the tree, as DB.Explain records
// it; of a batch, as DB.ExplainMultiGet records it; or of one range scan,
// as DB.ExplainRange records it.

import (
	"errors"
	"io"

	"github.com/bloomkv/bloomkv"
)

// runExplain looks a key up and prints every place the lookup consulted;
// with -multi, it reads its keys as one MultiGet and prints the batch's
// rounds and each key's path; with -range, it scans [LO, HI) and prints
// every table the scan skipped or sought.
func runExplain(args []string, stdout io.Writer) error {
	f := newDBFlags("explain", "KEY | -multi KEY... | -range LO HI")
	multi := f.Bool("multi", false, "read the keys (one or more) as one MultiGet and show its rounds and shared blocks")
	scan := f.Bool("range", false, "explain a scan of [LO, HI) instead: every table, skipped by its range filter or sought")
	f.addHex("KEY, LO and HI are given, and the keys printed, in hexadecimal")
	ops, err := f.parse(args)
	if err != nil {
		return err
	}
	switch {
	case *multi && *scan:
		return usageError{errors.New("-multi and -range: choose one")}
	case *scan:
		if err := wantOperands(ops, "LO", "HI"); err != nil {
			return err
		}
	case *multi:
		if len(ops) == 0 {
			return usageError{errors.New("-multi wants one or more KEYs after the flags")}
		}
	default:
		if err := wantOperands(ops, "KEY"); err != nil {
			return err
		}
	}
	names := []string{"LO", "HI"}
	keys := make([][]byte, len(ops))
	for i, op := range ops {
		name := "KEY"
		if *scan {
			name = names[i]
		}
		if keys[i], err = f.decode(name, op); err != nil {
			return err
		}
	}
	return f.withDB(readDB, func(db *bloomkv.DB) error {
		var out interface{ String() string }
		var err error
		switch {
		case *scan:
			t, terr := db.ExplainRange(keys[0], keys[1])
			if t != nil {
				out = t
			}
			err = terr
		case *multi:
			mt, terr := db.ExplainMultiGet(keys)
			if mt != nil {
				out = mt
			}
			err = terr
		default:
			t, terr := db.Explain(keys[0])
			if t != nil {
				out = t
			}
			err = terr
		}
		if out != nil {
			io.WriteString(stdout, out.String())
		}
		return err
	})
}
