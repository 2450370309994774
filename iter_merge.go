package bloomkv

import (
	"bytes"

	"github.com/bloomkv/bloomkv/internal/base"
)

// An Iterator shows a key whose newest visible version is a merge
// operand as the fold of its operands over the version below them, as a
// Get reads it (merge.go).
//
// Forward, foldForward meets the operands newest first: it steps inner
// over them to the first version that is not one — a Set, or one whose
// time-to-live has not ended, the base; a tombstone, an expired version,
// or a version a range tombstone deletes: none — or to the
// next user key, and leaves inner there (the versions of the key left
// are passed over by the next move, as after any key). Backward, findPrev
// meets the versions oldest first: a (live) Set starts the fold afresh, a
// tombstone, an expired or a deleted version leaves nothing, and each operand joins
// it (it.ops), so when the user key changes it holds the operands above
// the newest base, and foldBackward folds them over it. The fold is kept
// in key and value (merged): a fold's value is computed, so it is read
// eagerly, with the base's blob if separated.

// foldForward shows the key whose newest visible version inner is at, an
// operand no range tombstone deletes: it folds the key's operands and
// returns true, or on a failure stops the iterator and returns false.
func (it *Iterator) foldForward() bool {
	k := it.inner.Key()
	it.key = append(it.key[:0], k.UserKey...)
	it.ops.reset()
	it.ops.add(it.inner.Value())
	var (
		baseVal []byte
		hasBase bool
	)
	ok := it.inner.Next()
	for ok {
		k := it.inner.Key()
		if !bytes.Equal(k.UserKey, it.key) {
			break
		}
		if it.hidden(k.SeqNum()) { // an indexed batch's read: DB versions newer than its snapshot
			ok = it.inner.Next()
			continue
		}
		if it.rangeDeletion(k) != nil {
			break
		}
		if k.Kind() == base.KindMerge {
			it.ops.add(it.inner.Value())
			ok = it.inner.Next()
			continue
		}
		// The base: a Set, or one with a time-to-live not ended at the
		// Iterator's clock reading (without its expiry); a version
		// expired then is a tombstone, no base.
		if it.sets(k) {
			var blob bool
			baseVal, blob = withoutExpiry(k.Kind(), it.inner.Value())
			hasBase = true
			if blob {
				if baseVal = it.blobValue(baseVal, true); it.err != nil {
					return it.stop(false, posNone)
				}
			}
		} else if it.err != nil {
			return it.stop(false, posNone)
		}
		break
	}
	if !ok && it.inner.Error() != nil {
		return it.stop(false, posNone) // the fold would miss what failed to load
	}
	v, err := it.db.fold(it.key, &it.ops, true, baseVal, hasBase)
	if err != nil {
		it.err, it.pos = err, posNone
		return false
	}
	it.value, it.merged, it.innerOK, it.pos = append(it.value[:0], v...), true, ok, posAt
	return true
}

// foldBackward folds the operands findPrev collected over the value it
// holds (hasBase) or none, into key and value; on a failure it stops the
// iterator and returns false.
func (it *Iterator) foldBackward(hasBase bool) bool {
	var baseVal []byte
	if hasBase {
		baseVal = it.value
		if it.blob.backward {
			if baseVal = it.blobValue(baseVal, false); it.err != nil {
				return false
			}
		}
	}
	v, err := it.db.fold(it.key, &it.ops, false, baseVal, hasBase)
	if err != nil {
		it.err = err
		return false
	}
	it.value, it.merged, it.blob.backward = append(it.value[:0], v...), true, false
	return true
}
