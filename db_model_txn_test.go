package bloomkv

import (
	"errors"
	"fmt"
)

// txn runs a transaction in the model suite: Gets and now and then an
// iterator's random moves, checked against the model's state at the
// transaction's start under its own writes; a few writes; and, one time
// in three, a plain write by another between its reads and its Commit.
// The Commit must conflict exactly when that write was to a key the
// transaction read by Get without its own writes answering (scanning
// transactions get no such write: a scan's span is the subject of
// TestTransactionModel). Committed, its writes join the model; in
// conflict, nothing does.
func (r *modelRun) txn() error {
	txn, err := r.db.NewTransaction(true)
	if err != nil {
		return fmt.Errorf("NewTransaction: %w", err)
	}
	defer txn.Discard()
	view := r.live()
	read := map[string]bool{}
	var ops []kvOp
	scanned := false
	var log []string
	for range 1 + r.rng.IntN(6) {
		switch x := r.rng.IntN(10); {
		case x < 4:
			k := r.ks.pick(r.rng)
			log = append(log, fmt.Sprintf("Get(%s)", shortKey(string(k))))
			own := false
			for _, op := range ops {
				// A merge of the key leaves the read to go on below it.
				own = own || op.covers(string(k)) && !op.merge
			}
			if !own {
				read[string(k)] = true
				r.gets++ // answered by the DB, at the snapshot
			}
			if err := checkGet(multiGets{txn}, k, view); err != nil {
				return fmt.Errorf("transaction %v: %w", log, err)
			}
		case x < 5:
			scanned = true
			log = append(log, "iterate")
			if err := checkIter(r.rng, multiGets{txn}, view, r.ks, 10); err != nil {
				return fmt.Errorf("transaction %v: %w", log, err)
			}
		default:
			op := r.randOp()
			log = append(log, op.String())
			if err := op.addTo(txn); err != nil {
				return fmt.Errorf("transaction %v: %w", log, err)
			}
			ops = append(ops, op)
			view.apply([]kvOp{op})
		}
	}
	conflict := false
	if !scanned && r.rng.IntN(3) == 0 {
		other := kvOp{key: string(r.ks.pick(r.rng)), value: "other"}
		log = append(log, "other "+other.String())
		if err := r.write([]kvOp{other}); err != nil {
			return err
		}
		conflict = read[other.key] && len(ops) > 0
	}
	wo, sync := r.randWriteOptions()
	r.note("transaction %v sync=%v", log, sync)
	err = txn.Commit(wo)
	switch {
	case conflict && !errors.Is(err, ErrConflict):
		return fmt.Errorf("transaction %v: Commit: %v, want ErrConflict", log, err)
	case !conflict && err != nil:
		return fmt.Errorf("transaction %v: Commit: %w", log, err)
	case !conflict && len(ops) > 0:
		r.committed(ops, sync)
	}
	r.stats.txns++
	r.stats.txnConflicts += b2i(conflict)
	return nil
}
