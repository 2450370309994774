package compaction

import (
	"errors"
	"math"
	"testing"

	"github.com/bloomkv/bloomkv/sstable"
)

func TestOptionsDefaults(t *testing.T) {
	var nilOpts *Options
	for _, o := range []*Options{nilOpts, {}} {
		got, err := o.WithDefaults()
		if err != nil {
			t.Fatal(err)
		}
		want := Options{
			L0CompactionTrigger: 4, L0SlowdownTrigger: 20, L0StopTrigger: 36,
			BaseLevelSize: 16 << 20, LevelMultiplier: 10, TargetFileSize: 2 << 20,
			BitsPerKey: 10, FilterPolicy: Uniform,
		}
		if got != want {
			t.Errorf("defaults %+v, want %+v", got, want)
		}
	}
	// The L0 thresholds follow a changed trigger.
	got, err := (&Options{L0CompactionTrigger: 10}).WithDefaults()
	if err != nil || got.L0SlowdownTrigger != 50 || got.L0StopTrigger != 90 {
		t.Errorf("trigger 10: %+v, %v", got, err)
	}
	got, _ = (&Options{DisableFilters: true, BitsPerKey: 12}).WithDefaults()
	if got.BitsPerKey != 0 {
		t.Errorf("DisableFilters leaves %v bits/key", got.BitsPerKey)
	}
}

func TestOptionsValidation(t *testing.T) {
	for _, tc := range []struct {
		opts  Options
		field string
	}{
		{Options{L0CompactionTrigger: 4, L0SlowdownTrigger: 3}, "L0SlowdownTrigger"},
		{Options{L0SlowdownTrigger: 10, L0StopTrigger: 9}, "L0StopTrigger"},
		{Options{BaseLevelSize: 1000}, "BaseLevelSize"},
		{Options{LevelMultiplier: 1}, "LevelMultiplier"},
		{Options{LevelMultiplier: 1001}, "LevelMultiplier"},
		{Options{TargetFileSize: 100}, "TargetFileSize"},
		{Options{BitsPerKey: 0.5}, "BitsPerKey"},
		{Options{BitsPerKey: -1}, "BitsPerKey"},
		{Options{BitsPerKey: 65}, "BitsPerKey"},
		{Options{BitsPerKey: math.NaN()}, "BitsPerKey"},
		{Options{FilterPolicy: 2}, "FilterPolicy"},
		{Options{TableOptions: sstable.WriterOptions{Compression: 9}}, "TableOptions"},
	} {
		_, err := tc.opts.WithDefaults()
		var oe *OptionError
		if !errors.As(err, &oe) || oe.Field != tc.field {
			t.Errorf("%+v: error %v, want one naming %s", tc.opts, err, tc.field)
		}
	}
	for _, o := range []Options{
		{BaseLevelSize: 1024, TargetFileSize: 1024, LevelMultiplier: 2, BitsPerKey: 1},
		{L0CompactionTrigger: 1, L0SlowdownTrigger: 1, L0StopTrigger: 1, BitsPerKey: 64, FilterPolicy: Optimal},
		{DisableFilters: true, BitsPerKey: -3},
	} {
		if _, err := o.WithDefaults(); err != nil {
			t.Errorf("%+v: %v", o, err)
		}
	}
	if s := Optimal.String() + " " + Uniform.String() + " " + FilterPolicy(7).String(); s != "optimal uniform FilterPolicy(7)" {
		t.Errorf("policy names: %s", s)
	}
}
