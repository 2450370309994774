package raftstore

import (
	"encoding/binary"
	"fmt"

	"github.com/bloomkv/bloomkv"
)

// The op codes of a command; see the package documentation.
const (
	opSet    = 's'
	opDelete = 'd'
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

// maxCommandSize is the longest command the FSM applies. A command's batch
// is at most about twice its length (an op of a command costs at least 2
// bytes, its batch entry at most 3 bytes more), so one always fits in an
// empty batch.
const maxCommandSize = bloomkv.MaxBatchSize/2 - 64

// maxUserKey is the largest key a command may carry: the FSM stores it
// after a one-byte prefix.
const maxUserKey = bloomkv.MaxKeySize - 1

// addCommand decodes cmd and adds its ops to b, user keys under stateKey. It
// adds nothing and returns an error wrapping ErrBadCommand if cmd is not a
// well-formed command.
func addCommand(b *bloomkv.Batch, cmd []byte) error {
	ops, err := parseCommand(cmd)
	if err != nil {
		return err
	}
	for _, op := range ops {
		if op.del {
			err = b.Delete(stateKey(op.key))
		} else {
			err = b.Set(stateKey(op.key), op.value)
		}
		if err != nil {
			return fmt.Errorf("%w: %w", ErrBadCommand, err)
		}
	}
	return nil
}

// op is one decoded op of a command; key and value alias the command.
type op struct {
	del        bool
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
		switch code := d.byte(); code {
		case opSet, opDelete:
			o.del = code == opDelete
		default:
			return nil, fmt.Errorf("%w: op code %#x at byte %d", ErrBadCommand, code, d.size-len(d.b)-1)
		}
		o.key = d.slice()
		if !o.del {
			o.value = d.slice()
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
