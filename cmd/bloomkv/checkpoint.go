package main

// checkpoint: a consistent copy of a database, made while it stays usable.

import (
	"errors"
	"io"

	"github.com/bloomkv/bloomkv"
)

// runCheckpoint writes a checkpoint of the database in -db into OUT, which
// must not exist or must be empty, and prints nothing: the checkpoint is
// complete and durable once the command exits 0. It opens the database
// read-only, as the reading commands do, so it runs beside other
// read-only commands and changes nothing in -db; the checkpoint's tables
// are hard links to the database's where the file system allows, copies
// otherwise.
func runCheckpoint(args []string, stdout io.Writer) error {
	f := newDBFlags("checkpoint", "OUT")
	ops, err := f.parse(args)
	if err != nil {
		return err
	}
	if err := wantOperands(ops, "OUT"); err != nil {
		return err
	}
	out := ops[0]
	if out == "" {
		return usageError{errors.New("OUT is empty: a checkpoint needs a directory")}
	}
	return f.withDB(readDB, func(db *bloomkv.DB) error { return db.Checkpoint(out, nil) })
}
