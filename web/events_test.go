package web

import (
	"errors"
	"testing"
	"time"

	"github.com/bloomkv/bloomkv"
)

// TestEventLog checks that the listener records flushes and compactions,
// passes every event on to the listener it wraps, and that the log keeps
// the latest events only, numbered in order.
func TestEventLog(t *testing.T) {
	var flushes, compactions, stalls int
	next := &bloomkv.EventListener{
		FlushEnd:        func(bloomkv.FlushInfo) { flushes++ },
		CompactionEnd:   func(bloomkv.CompactionInfo) { compactions++ },
		WriteStallBegin: func(bloomkv.WriteStallBeginInfo) { stalls++ },
	}
	log := NewEventLog(3)
	el := log.Listener(next)
	el.FlushEnd(bloomkv.FlushInfo{JobID: 1, Output: bloomkv.TableInfo{FileNum: 7, Size: 100}, Duration: 2 * time.Millisecond})
	el.FlushEnd(bloomkv.FlushInfo{JobID: 2, Err: errors.New("disk full")})
	el.CompactionEnd(bloomkv.CompactionInfo{JobID: 3, Level: 0, OutputLevel: 6,
		Inputs:  []bloomkv.TableInfo{{FileNum: 7, Level: 0}, {FileNum: 5, Level: 6}},
		Outputs: []bloomkv.TableInfo{{FileNum: 8, Level: 6, Size: 300}}})
	el.WriteStallBegin(bloomkv.WriteStallBeginInfo{})
	if flushes != 2 || compactions != 1 || stalls != 1 {
		t.Errorf("the wrapped listener saw %d flushes, %d compactions, %d stalls; want 2, 1, 1", flushes, compactions, stalls)
	}
	events, latest := log.Since(0)
	if len(events) != 3 || latest != 3 {
		t.Fatalf("%d events, latest %d; want 3 and 3", len(events), latest)
	}
	if e := events[0]; e.Kind != "flush" || e.JobID != 1 || len(e.Outputs) != 1 || e.Outputs[0] != (EventTable{FileNum: 7, Size: 100}) || e.DurationMS != 2 || e.Err != "" {
		t.Errorf("first flush: %+v", e)
	}
	if e := events[1]; e.Kind != "flush" || len(e.Outputs) != 0 || e.Err != "disk full" {
		t.Errorf("failed flush: %+v", e)
	}
	if e := events[2]; e.Kind != "compaction" || e.Level != 0 || e.OutputLevel != 6 || len(e.Inputs) != 2 || e.Inputs[1] != (EventTable{FileNum: 5, Level: 6}) ||
		len(e.Outputs) != 1 || e.Outputs[0] != (EventTable{FileNum: 8, Level: 6, Size: 300}) {
		t.Errorf("compaction: %+v", e)
	}
	for range 2 {
		el.FlushEnd(bloomkv.FlushInfo{})
	}
	events, latest = log.Since(0)
	if len(events) != 3 || latest != 5 || events[0].Seq != 3 || events[2].Seq != 5 {
		t.Errorf("after 5 events in a log of 3: %+v, latest %d; want seqs 3–5", events, latest)
	}
	if events, _ = log.Since(4); len(events) != 1 || events[0].Seq != 5 {
		t.Errorf("since 4: %+v, want the 5th alone", events)
	}
	if l := NewEventLog(0); l.cap != DefaultEventLogSize {
		t.Errorf("NewEventLog(0) keeps %d, want %d", l.cap, DefaultEventLogSize)
	}
	if el := NewEventLog(1).Listener(nil); el.FlushEnd == nil || el.CompactionEnd == nil || el.FlushBegin != nil {
		t.Error("Listener(nil): want FlushEnd and CompactionEnd alone")
	}
}
