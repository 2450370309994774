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
func BenchmarkApplyBatch(b *testing.B) { benchWrites(b, 0, 4, false) }

// BenchmarkTxnUpdate compares, uncontended (one goroutine), a
// read-modify-write of two keys as a transaction — two Gets and two Sets,
// Commit NoSync — with the same reads by DB.Get and the same writes by a
// plain Apply; and four blind writes as a transaction with the same
// writes by Apply. The difference is the transaction's overhead: its
// snapshot, indexed batch, read set and conflict check.
func BenchmarkTxnUpdate(b *testing.B) {
	b.Run("rmw/Apply", func(b *testing.B) { benchWrites(b, 2, 2, false) })
	b.Run("rmw/Txn", func(b *testing.B) { benchWrites(b, 2, 2, true) })
	b.Run("write/Apply", func(b *testing.B) { benchWrites(b, 0, 4, false) })
	b.Run("write/Txn", func(b *testing.B) { benchWrites(b, 0, 4, true) })
}

// benchWrites times writes of 100-byte values to keys of a fresh DB, the
// first reads of them read first, committed NoSync, as a transaction
// (txn) or as DB.Gets and a batch for Apply.
func benchWrites(b *testing.B, reads, writes int, txn bool) {
	db, keys := benchTxnDB(b)
	value := make([]byte, 100)
	batch := bloomkv.NewBatch()
	i := 0
	b.ReportAllocs()
	cpu := cpuTime()
	for b.Loop() {
		var t *bloomkv.Transaction
		get, set := db.Get, batch.Set
		if txn {
			var err error
			if t, err = db.NewTransaction(true); err != nil {
				b.Fatal(err)
			}
			get, set = t.Get, t.Set
		} else {
			batch.Reset()
		}
		for j := range writes {
			k := keys[i%benchTxnKeys]
			i += 7
			if j < reads {
				if _, err := get(k); err != nil {
					b.Fatal(err)
				}
			}
			set(k, value)
		}
		var err error
		if txn {
			err = t.Commit(bloomkv.NoSync)
		} else {
			err = db.Apply(batch, bloomkv.NoSync)
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	// The process's CPU time, which a loaded machine inflates less than
	// the wall time of ns/op.
	b.ReportMetric(float64((cpuTime()-cpu).Nanoseconds())/float64(b.N), "cpu-ns/op")
}
