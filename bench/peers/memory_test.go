package peers

import (
	"errors"
	"testing"
)

// fakeReporter accounts for memory in two parts, or fails.
type fakeReporter struct {
	calls int
	fail  bool
}

func (f *fakeReporter) MemoryParts() ([]MemoryPart, error) {
	f.calls++
	if f.fail {
		return nil, errors.New("no memory")
	}
	return []MemoryPart{{"a", 1}, {"b", int64(f.calls)}}, nil
}

// TestSampleMemory checks the memory sampler without a ticker (interval
// 0: one sample, at the finish): the sample is the process's resident
// memory, with the reporter's parts, marked as the settle's once settling
// was called; a store that reports nothing gets the Go runtime's parts; a
// reporter's error is returned.
func TestSampleMemory(t *testing.T) {
	f := &fakeReporter{}
	p := sampleMemory(f, 0)
	p.settling()
	got, err := p.finish()
	if err != nil {
		t.Fatal(err)
	}
	if got.Samples != 1 || f.calls != 1 || got.RSS <= 0 || got.RSS != got.Anon+got.File+got.Shmem || !got.Settle {
		t.Errorf("%+v after %d calls: want one sample of a positive RSS, in the settle", got, f.calls)
	}
	if len(got.Parts) != 2 || got.Parts[0] != (MemoryPart{"a", 1}) || got.Parts[1] != (MemoryPart{"b", 1}) {
		t.Errorf("parts %+v, want the reporter's", got.Parts)
	}

	got, err = sampleMemory(struct{}{}, 0).finish()
	if err != nil {
		t.Fatal(err)
	}
	var sum int64
	for _, part := range got.Parts {
		sum += part.Bytes
	}
	if len(got.Parts) != 4 || got.Parts[0].Name != "go heap objects" || got.Parts[0].Bytes <= 0 || sum > got.Anon+got.File {
		t.Errorf("a store without an account: parts %+v, want the Go runtime's four, within RSS %d", got.Parts, got.RSS)
	}
	if got.Settle {
		t.Error("a sample before settling is marked as the settle's")
	}

	if _, err := sampleMemory(&fakeReporter{fail: true}, 0).finish(); err == nil {
		t.Error("a failing reporter: no error")
	}
}
