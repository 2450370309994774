package raftstore

import (
	"errors"
	"reflect"
	"testing"

	"github.com/hashicorp/raft"

	"github.com/bloomkv/bloomkv"
)

// FuzzDecodeLog feeds decodeLog arbitrary values: it never panics, refuses
// with an error wrapping ErrCorruption, and what it accepts encodes back to
// an entry that decodes the same.
func FuzzDecodeLog(f *testing.F) {
	for i := range uint64(6) {
		f.Add(appendLog(nil, fullLog(i+1)))
	}
	f.Add(appendLog(nil, testLog(1, "")))
	f.Add([]byte{})
	f.Add([]byte{logFormat, 0x80})
	f.Fuzz(func(t *testing.T, v []byte) {
		var l raft.Log
		if err := decodeLog(9, v, &l); err != nil {
			if !errors.Is(err, bloomkv.ErrCorruption) {
				t.Fatalf("decodeLog(%x): %v, not ErrCorruption", v, err)
			}
			return
		}
		var again raft.Log
		if err := decodeLog(9, appendLog(nil, &l), &again); err != nil || !reflect.DeepEqual(again, l) {
			t.Fatalf("decodeLog(%x) = %+v; re-encoded it decodes to %+v, %v", v, l, again, err)
		}
	})
}

// FuzzParseCommand feeds parseCommand arbitrary commands: it never panics,
// refuses with an error wrapping ErrBadCommand, and the ops it accepts
// rebuilt with AppendSet, AppendDelete and AppendCompare parse the same.
func FuzzParseCommand(f *testing.F) {
	f.Add(AppendDelete(AppendSet(nil, []byte("k"), []byte("v")), []byte("k")))
	f.Add(AppendSet(nil, nil, nil))
	f.Add([]byte{opSet, 5, 'a'})
	f.Add([]byte{'x'})
	f.Add(AppendSet(AppendCompare(AppendCompare(nil, []byte("k"), nil), []byte("j"), []byte{}), []byte("k"), []byte("v")))
	f.Add([]byte{opCompare, 1, 'k', 2})
	f.Fuzz(func(t *testing.T, cmd []byte) {
		ops, err := parseCommand(cmd)
		if err != nil {
			if !errors.Is(err, ErrBadCommand) {
				t.Fatalf("parseCommand(%x): %v, not ErrBadCommand", cmd, err)
			}
			return
		}
		var rebuilt []byte
		for _, o := range ops {
			switch o.code {
			case opDelete:
				rebuilt = AppendDelete(rebuilt, o.key)
			case opSet:
				rebuilt = AppendSet(rebuilt, o.key, o.value)
			case opCompare:
				rebuilt = AppendCompare(rebuilt, o.key, o.value)
			}
		}
		again, err := parseCommand(rebuilt)
		if err != nil || len(again) != len(ops) {
			t.Fatalf("parseCommand(%x): %d ops; rebuilt, %d ops, %v", cmd, len(ops), len(again), err)
		}
		for i := range ops {
			if again[i].code != ops[i].code || (again[i].value == nil) != (ops[i].value == nil) || string(again[i].key) != string(ops[i].key) || string(again[i].value) != string(ops[i].value) {
				t.Fatalf("parseCommand(%x): op %d %+v; rebuilt %+v", cmd, i, ops[i], again[i])
			}
		}
	})
}
