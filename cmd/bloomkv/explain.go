package main

// explain: the path of one lookup through the tree, as DB.Explain records
// it, or of a batch, as DB.ExplainMultiGet records it.

import (
	"errors"
	"io"

	"github.com/bloomkv/bloomkv"
)

// runExplain looks a key up and prints every place the lookup consulted;
// with -multi, it reads its keys as one MultiGet and prints the batch's
// rounds and each key's path.
func runExplain(args []string, stdout io.Writer) error {
	f := newDBFlags("explain", "KEY | -multi KEY...")
	multi := f.Bool("multi", false, "read the keys (one or more) as one MultiGet and show its rounds and shared blocks")
	f.addHex()
	ops, err := f.parse(args)
	if err != nil {
		return err
	}
	if !*multi {
		if err := wantOperands(ops, "KEY"); err != nil {
			return err
		}
	} else if len(ops) == 0 {
		return usageError{errors.New("-multi wants one or more KEYs after the flags")}
	}
	keys := make([][]byte, len(ops))
	for i, op := range ops {
		if keys[i], err = f.decode("KEY", op); err != nil {
			return err
		}
	}
	return f.withDB(readDB, func(db *bloomkv.DB) error {
		if *multi {
			mt, err := db.ExplainMultiGet(keys)
			if mt != nil {
				io.WriteString(stdout, mt.String())
			}
			return err
		}
		t, err := db.Explain(keys[0])
		if t != nil {
			io.WriteString(stdout, t.String())
		}
		return err
	})
}
