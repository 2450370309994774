package main

// ingest: add tables written with package sstable to a database.

import (
	"errors"
	"fmt"
	"io"

	"github.com/bloomkv/bloomkv"
)

// runIngest adds the tables FILE... to the database in -db, creating it
// if the directory holds none, in one atomic step (DB.Ingest): every file
// is checked before anything changes, and the database holds all of them
// or none. It prints how many tables and bytes it added. The files are
// hard-linked into the database (copied across file systems) and never
// changed or removed.
func runIngest(args []string, stdout io.Writer) error {
	f := newDBFlags("ingest", "FILE...")
	ops, err := f.parse(args)
	if err != nil {
		return err
	}
	if len(ops) == 0 {
		return usageError{errors.New("want at least one FILE after the flags: a table written with package sstable")}
	}
	return f.withDB(createDB, func(db *bloomkv.DB) error {
		if err := db.Ingest(ops); err != nil {
			return err
		}
		m := db.Metrics()
		_, err := fmt.Fprintf(stdout, "ingested %d tables, %d bytes\n", m.TablesIngested, m.BytesIngested)
		return err
	})
}
