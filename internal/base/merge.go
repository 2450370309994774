package base

import "fmt"

// MergeFunc is a merge operator's combining function (bloomkv.Merger's
// Merge): the value that newer, a merge operand, makes of older, the
// key's value (or the fold of older operands) below it. It must be
// associative, so that operands may be folded in any grouping: by a
// read over the base value, or by a compaction into one operand before
// the base is known. It may modify older's bytes (append to them) and
// return them; it must neither modify nor keep newer.
type MergeFunc func(key, older, newer []byte) ([]byte, error)

// Merger is a merge operator as the engine's internals take it: its name,
// for messages, and its MergeFunc. Passed by pointer, it keeps the option
// structs that hold it comparable.
type Merger struct {
	Name  string
	Merge MergeFunc
}

// Fold folds operands, oldest first, over base with merge: base is the
// key's value below the oldest operand when hasBase, and with no base the
// oldest operand stands for it (associativity makes that the fold any
// later base would see under the same operands). It never modifies base or
// an operand: the first Merge's older is a copy. operands must not be
// empty when hasBase is false.
//
// The error names the key and the step that failed.
func Fold(merge MergeFunc, key, base []byte, hasBase bool, operands [][]byte) ([]byte, error) {
	if !hasBase {
		base, operands = operands[0], operands[1:]
	}
	acc := append(make([]byte, 0, len(base)+8), base...)
	for i, op := range operands {
		var err error
		if acc, err = merge(key, acc, op); err != nil {
			return nil, fmt.Errorf("merging operand %d of %d into key %q: %w", i+1, len(operands), key, err)
		}
	}
	return acc, nil
}
