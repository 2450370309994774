package main

import (
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/bloomkv/bloomkv"
)

// mergers are the merge operators the tool knows, by the names -merger
// takes.
var mergers = map[string]func() *bloomkv.Merger{
	"int64add": bloomkv.Int64AddMerger,
	"append":   bloomkv.AppendMerger,
}

// mergerNamed returns the known merger whose Name (as the DB records
// it) is name, nil if none is.
func mergerNamed(name string) *bloomkv.Merger {
	for _, m := range mergers {
		if mm := m(); mm.Name == name {
			return mm
		}
	}
	return nil
}

func runMerge(args []string, stdout io.Writer) error {
	f := newDBFlags("merge", "KEY OPERAND")
	f.addHex("KEY and OPERAND (append's) are given, and the value printed, in hexadecimal")
	name := f.String("merger", "", "the merge operator: int64add (OPERAND a decimal integer, added) or append (OPERAND appended); "+
		"empty: the one the database was written with")
	ops, err := f.parse(args)
	if err != nil {
		return err
	}
	if err := wantOperands(ops, "KEY", "OPERAND"); err != nil {
		return err
	}
	var m *bloomkv.Merger
	if *name != "" {
		mk, ok := mergers[*name]
		if !ok {
			return usageError{fmt.Errorf("-merger %q: want int64add or append", *name)}
		}
		m = mk()
	}
	key, err := f.decode("KEY", ops[0])
	if err != nil {
		return err
	}
	db, err := openDBWith(f.dir, createDB, m)
	if err != nil {
		return err
	}
	err = mergeAndPrint(db, f, key, ops[1], stdout)
	if cerr := db.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		return dbError(err)
	}
	return nil
}

// mergeAndPrint merges operand into key and prints the key's new value:
// int64add's as a decimal integer.
func mergeAndPrint(db *bloomkv.DB, f *dbFlags, key []byte, arg string, stdout io.Writer) error {
	m := db.Merger()
	if m == nil {
		return usageError{errors.New("the database has no merger: give -merger (it is then recorded, for good)")}
	}
	isInt := m.Name == bloomkv.Int64AddMerger().Name
	var operand []byte
	if isInt {
		n, err := strconv.ParseInt(arg, 10, 64)
		if err != nil {
			return usageError{fmt.Errorf("OPERAND %q: int64add adds a decimal integer", arg)}
		}
		operand = bloomkv.EncodeInt64(n)
	} else {
		var err error
		if operand, err = f.decode("OPERAND", arg); err != nil {
			return err
		}
	}
	if err := db.Merge(key, operand, nil); err != nil {
		return err
	}
	v, err := db.Get(key)
	if err != nil {
		return err
	}
	if isInt {
		n, err := bloomkv.DecodeInt64(v)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(stdout, n)
		return err
	}
	_, err = fmt.Fprintln(stdout, f.format(v))
	return err
}
