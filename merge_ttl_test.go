package bloomkv

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"testing"
	"time"
)

// TestMergeOverTTL checks merge operands over values with a time-to-live
// against the model (kvModel folds the operands, kvExpiries expires the
// bases and keeps the operands merged over them): by every read path
// (Get, MultiGet, iterators both ways, a snapshot, an indexed batch with
// operands of its own) with the versions in the memtable, then in tables,
// before and after the bases' expiries, and after compactions run at
// each of those instants — one that finds a base live keeps it below the
// operands, one that finds it expired folds them over nothing. Values are
// inline, or separated (a base in a blob file).
func TestMergeOverTTL(t *testing.T) {
	for _, sep := range []bool{false, true} {
		t.Run(fmt.Sprintf("separated=%v", sep), func(t *testing.T) {
			opts := Options{Merger: AppendMerger()}
			if sep {
				opts.ValueSeparation = ValueSeparation{MinSize: 32}
			}
			db, clock := openWithClock(t, opts)
			rng := rand.New(rand.NewPCG(39, 4))
			ks := &keySpace{}
			m, exp := kvModel{}, kvExpiries{}
			write := func(ops ...kvOp) {
				t.Helper()
				if err := applyOps(db, ops, NoSync); err != nil {
					t.Fatal(err)
				}
				m.apply(ops)
				applyExpiries(exp, ops, clock.nanos())
			}
			const n = 300
			for i := range n {
				k := fmt.Sprintf("key%04d", i)
				ks.keys = append(ks.keys, []byte(k))
				base := fmt.Sprintf("base-%d-%s", i, string(randValue(rng, "v")))
				op := func(j int) kvOp { return kvOp{merge: true, key: k, value: fmt.Sprintf("+%d.%d", i, j)} }
				switch i % 6 {
				case 0: // expires at 1h, operands over it
					write(kvOp{key: k, value: base, ttl: time.Hour})
					write(op(1), op(2))
				case 1: // expires at 3h, operands over it, one in the same batch
					write(kvOp{key: k, value: base, ttl: 3 * time.Hour}, op(1))
					write(op(2))
				case 2: // no time-to-live
					write(kvOp{key: k, value: base})
					write(op(1))
				case 3: // operands only
					write(op(1), op(2))
				case 4: // expires at 1h, an operand, then a Delete and an operand
					write(kvOp{key: k, value: base, ttl: time.Hour})
					write(op(1))
					write(kvOp{del: true, key: k}, op(2))
				default: // expires at 1h, no operands
					write(kvOp{key: k, value: base, ttl: time.Hour})
				}
			}
			snap, err := db.NewSnapshot()
			if err != nil {
				t.Fatal(err)
			}
			defer snap.Close()
			snapM, snapE := m.clone(), maps.Clone(exp)

			check := func(when string) {
				t.Helper()
				now := clock.nanos()
				live := liveAt(m, exp, now)
				if err := checkEveryRead(rng, db, ks, live, 1, 3); err != nil {
					t.Fatalf("%s, DB: %v", when, err)
				}
				if err := checkEveryRead(rng, snap, ks, liveAt(snapM, snapE, now), 7, 1); err != nil {
					t.Fatalf("%s, snapshot: %v", when, err)
				}
				// An indexed batch merging into some keys folds its
				// operands over what the DB holds below them.
				ib, err := db.NewIndexedBatch()
				if err != nil {
					t.Fatal(err)
				}
				defer ib.Close()
				bm, be := m.clone(), maps.Clone(exp)
				var ops []kvOp
				for i := 0; i < n; i += 5 {
					ops = append(ops, kvOp{merge: true, key: fmt.Sprintf("key%04d", i), value: "+ib"})
				}
				for _, op := range ops {
					if err := op.addTo(ib); err != nil {
						t.Fatal(err)
					}
				}
				bm.apply(ops)
				applyExpiries(be, ops, now)
				if err := checkEveryRead(rng, multiGets{ib}, ks, liveAt(bm, be, now), 7, 1); err != nil {
					t.Fatalf("%s, indexed batch: %v", when, err)
				}
			}

			check("in the memtable, nothing expired")
			if err := db.Flush(); err != nil {
				t.Fatal(err)
			}
			check("in tables, nothing expired")
			if err := db.Compact(nil, nil); err != nil {
				t.Fatal(err)
			}
			check("compacted with every base live")

			clock.advance(time.Hour)
			check("the 1h bases expired")
			for i := 0; i < n; i += 6 { // operands after the expiry
				write(kvOp{merge: true, key: fmt.Sprintf("key%04d", i), value: "+late"})
			}
			check("operands over the expired bases")
			if err := db.Compact(nil, nil); err != nil {
				t.Fatal(err)
			}
			check("compacted with the 1h bases expired, the 3h ones live")

			clock.advance(2 * time.Hour)
			check("every base expired")
			if err := db.Compact(nil, nil); err != nil {
				t.Fatal(err)
			}
			check("compacted with every base expired")
			if got := db.Metrics().ExpiredDropped; got == 0 {
				t.Error("Metrics.ExpiredDropped = 0: no compaction met an expired base")
			}
		})
	}
}
