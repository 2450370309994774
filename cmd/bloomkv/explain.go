package main

// explain: the path of one lookup through the tree, as DB.Explain records it.

import (
	"io"

	"github.com/bloomkv/bloomkv"
)

// runExplain looks a key up and prints every place the lookup consulted.
func runExplain(args []string, stdout io.Writer) error {
	f := newDBFlags("explain", "KEY")
	_, key, err := f.parseKey(args)
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
