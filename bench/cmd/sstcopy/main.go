// Command sstcopy shows that package sstable stands on its own outside the
// store's module: it reads a bloomkv table, writes its entries to a new table
// with other block, compression and filter settings — what an ingest or
// compaction tool does — then opens the copy, checks every entry against the
// source, and prints both tables' properties.
//
//	sstcopy [-block-size N] [-compression none|snappy|zstd] [-filter none|bloom:B|fuse:W] SRC.sst DST.sst
//
// Without SRC and DST (sstcopy -demo DIR) it first writes a source table of
// -n keys into DIR.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/bloomkv/bloomkv/sstable"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("sstcopy", flag.ContinueOnError)
	fs.SetOutput(stderr)
	blockSize := fs.Int("block-size", 16<<10, "data block size of the copy")
	compression := fs.String("compression", "zstd", "compression of the copy: none, snappy or zstd")
	filter := fs.String("filter", "fuse:16", "filter of the copy: none, bloom:BITS_PER_KEY or fuse:FINGERPRINT_BITS")
	demo := fs.String("demo", "", "write a source table of -n keys in `DIR`, then copy it there")
	n := fs.Int("n", 10_000, "keys of the -demo source table")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	c, ok := map[string]sstable.Compression{"none": sstable.NoCompression, "snappy": sstable.SnappyCompression, "zstd": sstable.ZstdCompression}[*compression]
	if !ok {
		fmt.Fprintf(stderr, "sstcopy: -compression %q: want none, snappy or zstd\n", *compression)
		return 2
	}
	spec, err := sstable.ParseFilterSpec(*filter)
	if err != nil {
		fmt.Fprintf(stderr, "sstcopy: -filter: %v\n", err)
		return 2
	}
	var src, dst string
	switch {
	case *demo != "" && fs.NArg() == 0:
		src, dst = filepath.Join(*demo, "source.sst"), filepath.Join(*demo, "copy.sst")
		if err := writeDemo(src, *n); err != nil {
			fmt.Fprintln(stderr, "sstcopy:", err)
			return 1
		}
	case *demo == "" && fs.NArg() == 2:
		src, dst = fs.Arg(0), fs.Arg(1)
	default:
		fmt.Fprintln(stderr, "usage: sstcopy [flags] SRC.sst DST.sst, or sstcopy -demo DIR")
		return 2
	}
	opts := sstable.WriterOptions{BlockSize: *blockSize, Compression: c, Filter: spec}
	if err := copyTable(src, dst, opts, stdout); err != nil {
		fmt.Fprintln(stderr, "sstcopy:", err)
		return 1
	}
	return 0
}

// writeDemo writes a table of n keys, each with two versions (a value and,
// for every tenth key, a newer tombstone), as a flush would.
func writeDemo(path string, n int) error {
	return writeTable(path, sstable.WriterOptions{Filter: sstable.Bloom(10)}, func(w *sstable.Writer) error {
		for i := range n {
			k := fmt.Appendf(nil, "key%08d", i)
			seq := sstable.SeqNum(2*i + 1)
			if i%10 == 0 {
				if err := w.Add(sstable.MakeInternalKey(k, seq+1, sstable.KindDelete), nil); err != nil {
					return err
				}
			}
			if err := w.Add(sstable.MakeInternalKey(k, seq, sstable.KindSet), fmt.Appendf(nil, "value %d", i)); err != nil {
				return err
			}
		}
		return nil
	})
}

// writeTable creates path and writes a table to it with add.
func writeTable(path string, opts sstable.WriterOptions, add func(*sstable.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w, err := sstable.NewWriter(f, opts)
	if err == nil {
		err = add(w)
	}
	if err == nil {
		_, err = w.Finish()
	}
	if err == nil {
		err = f.Sync()
	}
	return errors.Join(err, f.Close())
}

// openTable opens the table at path; close it with the returned function.
func openTable(path string) (*sstable.Reader, func(), error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	r, err := sstable.Open(f, info.Size(), sstable.ReaderOptions{FileName: path})
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return r, func() { r.Close(); f.Close() }, nil
}

// copyTable copies every entry of src to a new table dst written with opts,
// then checks the copy entry by entry and by point lookups.
func copyTable(src, dst string, opts sstable.WriterOptions, out io.Writer) error {
	r, closeSrc, err := openTable(src)
	if err != nil {
		return err
	}
	defer closeSrc()
	entries := 0
	err = writeTable(dst, opts, func(w *sstable.Writer) error {
		it := r.NewScanIterator()
		defer it.Close()
		for ok := it.First(); ok; ok = it.Next() {
			if err := w.Add(it.Key(), it.Value()); err != nil {
				return err
			}
			entries++
		}
		return it.Error()
	})
	if err != nil {
		return fmt.Errorf("writing %s: %w", dst, err)
	}

	c, closeDst, err := openTable(dst)
	if err != nil {
		return err
	}
	defer closeDst()
	a, b := r.NewIterator(), c.NewIterator()
	defer a.Close()
	defer b.Close()
	okA, okB := a.First(), b.First()
	for ; okA && okB; okA, okB = a.Next(), b.Next() {
		ka, kb := a.Key(), b.Key()
		if !bytes.Equal(ka.UserKey, kb.UserKey) || ka.Trailer != kb.Trailer || !bytes.Equal(a.Value(), b.Value()) {
			return fmt.Errorf("the copy differs at %v: %v", ka, kb)
		}
		// The newest version of each key, by point lookup in both.
		lk := sstable.MakeLookupKey(ka.UserKey, sstable.SeqNumMax)
		va, kindA, foundA, errA := r.Get(lk, nil)
		vb, kindB, foundB, errB := c.Get(lk, nil)
		if errA != nil || errB != nil || !foundB || foundA != foundB || kindA != kindB || !bytes.Equal(va, vb) {
			return fmt.Errorf("Get(%q): source %q %v %v %v, copy %q %v %v %v", ka.UserKey, va, kindA, foundA, errA, vb, kindB, foundB, errB)
		}
	}
	if okA || okB || a.Error() != nil || b.Error() != nil {
		return fmt.Errorf("the tables end apart: source %v (%v), copy %v (%v)", okA, a.Error(), okB, b.Error())
	}
	fmt.Fprintf(out, "copied %d entries\n", entries)
	for _, t := range []struct {
		name string
		p    sstable.Properties
	}{{src, r.Properties()}, {dst, c.Properties()}} {
		fmt.Fprintf(out, "%s: %d entries, %d data blocks, compression %v, filter %.1f bits/key\n",
			filepath.Base(t.name), t.p.Entries, t.p.DataBlocks, t.p.Compression, t.p.FilterBitsPer)
	}
	return nil
}
