package bloomkv_test

import (
	"fmt"
	"testing"

	"github.com/bloomkv/bloomkv"
)

// benchTxnKeys is the key space of the transaction benchmarks: small
// enough to stay in the memtable, so that what is timed is the commit
// path, not reads of tables.
const benchTxnKeys = 1 << 12

func benchTxnDB(b *testing.B) (*bloomkv.DB, [][]byte) {
	db, err := bloomkv.Open(b.TempDir(), &bloomkv.Options{MemtableSize: 64 << 20})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	keys := make([][]byte, benchTxnKeys)
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "key%012d", i)
		if err := db.Put(keys[i], make([]byte, 100), bloomkv.NoSync); err != nil {
			b.Fatal(err)
		}
	}
	return db, keys
}

// BenchmarkApplyBatch times the plain write path: a batch of four
// 100-byte Sets built and applied, NoSync. It exists beside the
// transactions to show they cost plain batches nothing.
func BenchmarkApplyBatch(b *testing.B) {
	db, keys := benchTxnDB(b)
	value := make([]byte, 100)
	batch := bloomkv.NewBatch()
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		batch.Reset()
		for range 4 {
			batch.Set(keys[i%benchTxnKeys], value)
			i += 7
		}
		if err := db.Apply(batch, bloomkv.NoSync); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTxnUpdate compares, uncontended (one goroutine), a
// read-modify-write of two keys as a transaction — two Gets and two Sets,
// Commit NoSync — with the same reads by DB.Get and the same writes by a
// plain Apply; and four blind writes as a transaction with the same
// writes by Apply. The difference is the transaction's overhead: its
// snapshot, indexed batch, read set and conflict check.
func BenchmarkTxnUpdate(b *testing.B) {
	value := make([]byte, 100)
	b.Run("rmw/Apply", func(b *testing.B) {
		db, keys := benchTxnDB(b)
		batch := bloomkv.NewBatch()
		i := 0
		b.ReportAllocs()
		for b.Loop() {
			batch.Reset()
			for range 2 {
				k := keys[i%benchTxnKeys]
				i += 7
				if _, err := db.Get(k); err != nil {
					b.Fatal(err)
				}
				batch.Set(k, value)
			}
			if err := db.Apply(batch, bloomkv.NoSync); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("rmw/Txn", func(b *testing.B) {
		db, keys := benchTxnDB(b)
		i := 0
		b.ReportAllocs()
		for b.Loop() {
			txn, err := db.NewTransaction(true)
			if err != nil {
				b.Fatal(err)
			}
			for range 2 {
				k := keys[i%benchTxnKeys]
				i += 7
				if _, err := txn.Get(k); err != nil {
					b.Fatal(err)
				}
				txn.Set(k, value)
			}
			if err := txn.Commit(bloomkv.NoSync); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("write/Apply", func(b *testing.B) {
		db, keys := benchTxnDB(b)
		batch := bloomkv.NewBatch()
		i := 0
		b.ReportAllocs()
		for b.Loop() {
			batch.Reset()
			for range 4 {
				batch.Set(keys[i%benchTxnKeys], value)
				i += 7
			}
			if err := db.Apply(batch, bloomkv.NoSync); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("write/Txn", func(b *testing.B) {
		db, keys := benchTxnDB(b)
		i := 0
		b.ReportAllocs()
		for b.Loop() {
			txn, err := db.NewTransaction(true)
			if err != nil {
				b.Fatal(err)
			}
			for range 4 {
				txn.Set(keys[i%benchTxnKeys], value)
				i += 7
			}
			if err := txn.Commit(bloomkv.NoSync); err != nil {
				b.Fatal(err)
			}
		}
	})
}
