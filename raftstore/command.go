package raftstore

import (
	"encoding/binary"
	"fmt"

	"github.com/bloomkv/bloomkv"
)

// The op codes of a command; see the package documentation.
const (
	opSet     = 's'
	opDelete  = 'd'
	opCompare = 'c'
)

// AppendSet appends to cmd an op that sets key to value, and returns the
// extended command. A command is a sequence of such ops, which FSM.Apply
// applies in order in one atomic batch; nil is the empty command.
func AppendSet(cmd, key, value []byte) []byte {
	cmd = append(cmd, opSet)
	cmd = binary.AppendUvarint(cmd, uint64(len(key)))
	cmd = append(cmd, key...)
	cmd = binary.AppendUvarint(cmd, uint64(len(value)))
	return append(cmd, value...)
}

// AppendDelete appends to cmd an op that deletes key, and returns the
// extended command.
func AppendDelete(cmd, key []byte) []byte {
	cmd = append(cmd, opDelete)
	cmd = binary.AppendUvarint(cmd, uint64(len(key)))
	return append(cmd, key...)
}

// AppendCompare appends to cmd a condition on key: that it holds want, or,
// with want nil, that it is absent (an empty non-nil want asks for the empty
// value). A command holding conditions applies its sets and deletes only if
// every condition holds in the state before it, and otherwise changes
// nothing and responds ErrCompareFailed: a compare-and-set is
// AppendSet(AppendCompare(nil, k, old), k, new), decided by the FSM in log
// order on every node alike.
func AppendCompare(cmd, key, want []byte) []byte {
	cmd = append(cmd, opCompare)
	cmd = binary.AppendUvarint(cmd, uint64(len(key)))
	cmd = append(cmd, key...)
	if want == nil {
		return append(cmd, 0)
	}
	cmd = append(cmd, 1)
	cmd = binary.AppendUvarint(cmd, uint64(len(want)))
	return append(cmd, want...)
}

// CheckCommand returns nil if FSM.Apply would take cmd as a well-formed
// command, or the error wrapping ErrBadCommand it would respond: a node
// refuses a bad request before it reaches the log.
func CheckCommand(cmd []byte) error {
	_, err := parseCommand(cmd)
	return err
}

// MaxCommandSize is the length of the longest command the FSM applies.
const MaxCommandSize = maxCommandSize

// maxCommandSize is the longest command the FSM applies. A command's batch
// is at most about twice its length (an op of a command costs at least 2
// bytes, its batch entry at most 3 bytes more), so one always fits in an
// empty batch.
const maxCommandSize = bloomkv.MaxBatchSize/2 - 64

// maxUserKey is the largest key a command may carry: the FSM stores it
// after a one-byte prefix.
const maxUserKey = bloomkv.MaxKeySize - 1

// addCommand adds the sets and deletes of ops, a parsed command, to b, user
// keys under stateKey; its conditions are the caller's to check first.
func addCommand(b *bloomkv.Batch, ops []op) error {
	var err error
	for _, op := range ops {
		switch op.code {
		case opDelete:
			err = b.Delete(stateKey(op.key))
		case opSet:
			err = b.Set(stateKey(op.key), op.value)
		}
		if err != nil {
			return fmt.Errorf("%w: %w", ErrBadCommand, err)
		}
	}
	return nil
}

// hasCompare reports whether ops hold a condition.
func hasCompare(ops []op) bool {
	for _, o := range ops {
		if o.code == opCompare {
			return true
		}
	}
	return false
}

// op is one decoded op of a command; key and value alias the command. A
// compare's value is the one it wants, nil for absent.
type op struct {
	code       byte
	key, value []byte
}

// parseCommand decodes every op of cmd, checking the whole command before
// any of it is applied.
func parseCommand(cmd []byte) ([]op, error) {
	if len(cmd) > maxCommandSize {
		return nil, fmt.Errorf("%w: %d bytes, more than %d", ErrBadCommand, len(cmd), maxCommandSize)
	}
	var ops []op
	d := newDecoder(cmd)
	for len(d.b) > 0 {
		var o op
		switch o.code = d.byte(); o.code {
		case opSet, opDelete, opCompare:
		default:
			return nil, fmt.Errorf("%w: op code %#x at byte %d", ErrBadCommand, o.code, d.size-len(d.b)-1)
		}
		o.key = d.slice()
		switch o.code {
		case opSet:
			o.value = d.slice()
		case opCompare:
			switch has := d.byte(); {
			case d.err != nil:
			case has == 1:
				o.value = append([]byte{}, d.slice()...) // non-nil even when empty
			case has != 0:
				return nil, fmt.Errorf("%w: compare flag %#x at byte %d", ErrBadCommand, has, d.size-len(d.b)-1)
			}
		}
		if d.err != nil {
			return nil, fmt.Errorf("%w: %w", ErrBadCommand, d.err)
		}
		if len(o.key) > maxUserKey {
			return nil, fmt.Errorf("%w: key of %d bytes, more than %d", ErrBadCommand, len(o.key), maxUserKey)
		}
		if len(o.value) > bloomkv.MaxValueSize {
			return nil, fmt.Errorf("%w: value of %d bytes, more than bloomkv.MaxValueSize", ErrBadCommand, len(o.value))
		}
		ops = append(ops, o)
	}
	return ops, nil
}
