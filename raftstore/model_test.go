package raftstore

import (
	"fmt"
	"maps"
	"slices"
	"sync/atomic"
	"time"
)

// kvModel is the oracle of the cluster tests: for each key, the values the
// replicated state may hold ("" standing for absent). A write acknowledged by
// the leader fixes its key to its value; a write that failed in a way that
// leaves it unknown (a lost leadership, a killed node) adds its value to the
// possible ones. The client writes one command at a time, so every later
// command gets a later log index than any earlier one that commits: an
// acknowledged write decides its key, whatever came before.
type kvModel map[string]map[string]bool

func (m kvModel) acked(key, value string) { m[key] = map[string]bool{value: true} }

func (m kvModel) unknown(key, value string) {
	unknownWrites.Add(1)
	if m[key] == nil {
		m[key] = map[string]bool{"": true}
	}
	m[key][value] = true
}

// unknownWrites counts the writes of unknown outcome, for the tests' logs.
var unknownWrites atomic.Int64

// check returns an error naming the first key whose value state cannot hold.
func (m kvModel) check(state map[string]string) error {
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if v := state[k]; !m[k][v] {
			return fmt.Errorf("key %q holds %q, want one of %v", k, v, slices.Sorted(maps.Keys(m[k])))
		}
	}
	for k, v := range state {
		if m[k] == nil {
			return fmt.Errorf("key %q holds %q, never written", k, v)
		}
	}
	return nil
}

// waitFor polls cond until it is true or timeout passes.
func waitFor(timeout time.Duration, cond func() bool) bool {
	for deadline := time.Now().Add(timeout); ; {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
}
