package compaction

import "testing"

// defaultOptions returns complete options at the values a DB resolves by
// default (bloomkv.Options documents them, and its tests check that the
// DB resolves to these), but for static level sizing and one compaction at
// a time: the package takes its options resolved, so its tests start from
// these and change what they test.
func defaultOptions() *Options {
	return &Options{
		L0CompactionTrigger: 4,
		L0SlowdownTrigger:   20,
		BaseLevelSize:       16 << 20,
		LevelMultiplier:     10,
		TargetFileSize:      2 << 20,
		BitsPerKey:          10,

		// The hand-built trees of the picker's and the filter
		// allocation's tests are shaped for static targets; dynamic
		// sizing has tests of its own (targets_test.go).
		LevelSizing:              StaticLevelSizing,
		MaxConcurrentCompactions: 1,
	}
}

// with returns a copy of o changed by f.
func with(o *Options, f func(*Options)) *Options {
	c := *o
	f(&c)
	return &c
}

func TestFilterAllocationString(t *testing.T) {
	if s := OptimalAllocation.String() + " " + UniformAllocation.String() + " " + FilterAllocation(7).String(); s != "optimal uniform FilterAllocation(7)" {
		t.Errorf("allocation names: %s", s)
	}
}
