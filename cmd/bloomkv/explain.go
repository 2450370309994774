package main

// explain: the path of one lookup through the tree, as DB.Explain records
// it, or of one range scan, as DB.ExplainRange records it.

import (
	"io"

	"github.com/bloomkv/bloomkv"
)

// runExplain looks a key up, or with -range scans [LO, HI), and prints
// every place the lookup or scan consulted.
func runExplain(args []string, stdout io.Writer) error {
	f := newDBFlags("explain", "KEY | -range LO HI")
	var scan bool
	f.BoolVar(&scan, "range", false, "explain a scan of [LO, HI) instead: every table, skipped by its range filter or sought")
	f.addHex()
	ops, err := f.parse(args)
	if err != nil {
		return err
	}
	if !scan {
		if err := wantOperands(ops, "KEY"); err != nil {
			return err
		}
		key, err := f.decode("KEY", ops[0])
		if err != nil {
			return err
		}
		return f.withDB(readDB, func(db *bloomkv.DB) error {
			t, err := db.Explain(key)
			if t != nil {
				io.WriteString(stdout, t.String())
			}
			return err
		})
	}
	if err := wantOperands(ops, "LO", "HI"); err != nil {
		return err
	}
	lo, err := f.decode("LO", ops[0])
	if err != nil {
		return err
	}
	hi, err := f.decode("HI", ops[1])
	if err != nil {
		return err
	}
	return f.withDB(readDB, func(db *bloomkv.DB) error {
		t, err := db.ExplainRange(lo, hi)
		if t != nil {
			io.WriteString(stdout, t.String())
		}
		return err
	})
}
