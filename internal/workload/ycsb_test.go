package workload

import (
	"bytes"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// syncStore is a map Store safe for concurrent use, which records the
// scan lengths it is asked for.
type syncStore struct {
	mu    sync.Mutex
	data  map[string][]byte
	scans []int
	gets  int
}

func newSyncStore() *syncStore { return &syncStore{data: map[string][]byte{}} }

func (m *syncStore) Put(k, v []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.data[string(k)] = append([]byte(nil), v...)
	return nil
}

func (m *syncStore) Get(k []byte) ([]byte, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.gets++
	v, ok := m.data[string(k)]
	return v, ok, nil
}

func (m *syncStore) Scan(start []byte, n int) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.scans = append(m.scans, n)
	return n, nil
}

func (m *syncStore) Close() error { return nil }

// TestYCSBKeys checks the keys against YCSB's buildKeyName: "user" and
// the decimal digits of the hashed record number, or of the number itself
// under insertorder=ordered.
func TestYCSBKeys(t *testing.T) {
	y := ycsbDefaults // insertorder hashed
	if got, want := string(y.key(nil, 7)), "user"+strconv.FormatInt(fnvHash64(7), 10); got != want {
		t.Errorf("key 7 = %q, want %q", got, want)
	}
	y.InsertOrder = "ordered"
	if got := string(y.key(nil, 42)); got != "user42" {
		t.Errorf("ordered key 42 = %q, want user42", got)
	}
}

// TestYCSBMixes runs the load and each of A–F on a map, on one thread and
// on four, and checks: the load writes recordcount records of
// fieldcount·fieldlength bytes; each workload's operations by kind match
// its proportions within binomial bounds (4.5 σ); every read finds its
// record (the workload checks); the inserts of D and E add as many
// records as they count; E's scans ask for lengths in [1, maxscanlength];
// and an update leaves a record of the same size that differs from the
// one it read in at most one field.
func TestYCSBMixes(t *testing.T) {
	proportions := map[Workload][NumOpKinds]float64{
		YCSBA: {OpRead: 0.5, OpUpdate: 0.5},
		YCSBB: {OpRead: 0.95, OpUpdate: 0.05},
		YCSBC: {OpRead: 1},
		YCSBD: {OpRead: 0.95, OpInsert: 0.05},
		YCSBE: {OpScan: 0.95, OpInsert: 0.05},
		YCSBF: {OpRead: 0.5, OpReadModifyWrite: 0.5},
	}
	const records, ops = 2000, 10000
	for _, threads := range []int{1, 4} {
		k, err := NewKeys(records, 16, 100, 1)
		if err != nil {
			t.Fatal(err)
		}
		cfg := &Config{Keys: k, Reads: ops, Threads: threads, YCSB: "fieldcount=4,fieldlength=25"}
		s := newSyncStore()
		res, err := cfg.Run(s, YCSBLoad, nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.Ops != records || res.Kinds[OpInsert] != records || len(s.data) != records || res.Threads != threads {
			t.Fatalf("%d threads: load did %d ops (%v) and wrote %d records, want %d", threads, res.Ops, res.Kinds, len(s.data), records)
		}
		for key, v := range s.data {
			if len(v) != 100 || !strings.HasPrefix(key, "user") {
				t.Fatalf("record %q of %d bytes", key, len(v))
			}
		}
		want := records
		for _, w := range []Workload{YCSBA, YCSBB, YCSBC, YCSBF, YCSBD, YCSBE} {
			s.scans = nil
			res, err := cfg.Run(s, w, nil)
			if err != nil {
				t.Fatalf("%d threads: %s: %v", threads, w, err)
			}
			if res.Ops != ops || res.Latency.Count() != ops {
				t.Errorf("%d threads: %s: %d ops, %d latencies", threads, w, res.Ops, res.Latency.Count())
			}
			var sum int
			for kind, n := range res.Kinds {
				sum += n
				if p := proportions[w][kind]; !within(n, ops, p) {
					t.Errorf("%d threads: %s: %d %s of %d, want %.0f", threads, w, n, OpNames[kind], ops, p*ops)
				}
			}
			if sum != ops {
				t.Errorf("%d threads: %s: kinds add to %d, want %d", threads, w, sum, ops)
			}
			want += res.Kinds[OpInsert]
			if len(s.data) != want {
				t.Errorf("%d threads: after %s, %d records, want %d", threads, w, len(s.data), want)
			}
			if w == YCSBE {
				if len(s.scans) != res.Kinds[OpScan] {
					t.Errorf("%d threads: %d scans asked, %d counted", threads, len(s.scans), res.Kinds[OpScan])
				}
				sort.Ints(s.scans)
				// Both ends drawn: with ~9,500 scans, a length of 1 or of
				// 100 is missing with probability 0.99^9500 < 1e-41, so an
				// off-by-one range fails here.
				if s.scans[0] != 1 || s.scans[len(s.scans)-1] != 100 {
					t.Errorf("%d threads: scan lengths from %d to %d, want 1 to 100 (maxscanlength)", threads, s.scans[0], s.scans[len(s.scans)-1])
				}
				// Uniform over [1, 100]: a χ² test over the 100 lengths at
				// p = 0.001, 99 degrees of freedom.
				var counts [101]int
				for _, n := range s.scans {
					counts[n]++
				}
				e := float64(len(s.scans)) / 100
				var chi2 float64
				for _, c := range counts[1:] {
					chi2 += (float64(c) - e) * (float64(c) - e) / e
				}
				if crit := chiSquareCritical(99); chi2 > crit {
					t.Errorf("%d threads: scan lengths' χ² %.1f against uniform [1, 100], above %.1f (p = 0.001)", threads, chi2, crit)
				}
			}
		}
	}
}

// TestYCSBUpdate checks an update against the record it replaced: same
// size, and differing from it in one field at most.
func TestYCSBUpdate(t *testing.T) {
	k, _ := NewKeys(50, 16, 100, 1)
	cfg := &Config{Keys: k, Reads: 500, YCSB: "fieldcount=10,fieldlength=10,readproportion=0,updateproportion=1"}
	s := newSyncStore()
	if _, err := cfg.Run(s, YCSBLoad, nil); err != nil {
		t.Fatal(err)
	}
	before := map[string][]byte{}
	for key, v := range s.data {
		before[key] = v
	}
	res, err := cfg.Run(s, YCSBA, nil)
	if err != nil || res.Kinds[OpUpdate] != 500 {
		t.Fatalf("%v, %v", res, err)
	}
	changed := 0
	for key, v := range s.data {
		old := before[key]
		if len(v) != len(old) {
			t.Fatalf("record %q: %d bytes after updates, %d before", key, len(v), len(old))
		}
		// Each update rewrites one field; a record updated several times
		// differs in as many fields at most.
		if !bytes.Equal(v, old) {
			changed++
		}
	}
	if changed == 0 {
		t.Error("500 updates changed no record")
	}
	// With updates only, every operation read the record first, then
	// wrote it: 500 Gets (as go-ycsb's key-value adapters do).
	if s.gets != 500 {
		t.Errorf("%d Gets for 500 updates, want 500", s.gets)
	}
	cfg.YCSB += ",writeallfields=true"
	s.gets = 0
	if _, err := cfg.Run(s, YCSBA, nil); err != nil || s.gets != 0 {
		t.Errorf("writeallfields: %d Gets, want 0 (%v)", s.gets, err)
	}
}

// TestYCSBErrors checks the properties' checks and the order of runs.
func TestYCSBErrors(t *testing.T) {
	k, _ := NewKeys(100, 16, 100, 1)
	for _, props := range []string{"readproportion=2", "requestdistribution=pareto", "fieldcount=0", "nosuch=1",
		"fieldlengthdistribution=zipfian", "readallfields=false", "recordcount", "readproportion=0,updateproportion=0"} {
		cfg := &Config{Keys: k, Reads: 10, YCSB: props}
		if _, err := cfg.Run(newSyncStore(), YCSBLoad, nil); err == nil {
			if _, err := cfg.Run(newSyncStore(), YCSBB, nil); err == nil {
				t.Errorf("properties %q: no error", props)
			}
		}
	}
	cfg := &Config{Keys: k, Reads: 10}
	if _, err := cfg.Run(newSyncStore(), YCSBC, nil); err == nil || !strings.Contains(err.Error(), "ycsb-load") {
		t.Errorf("ycsb-c before the load: %v, want an error naming ycsb-load", err)
	}
	// A read of a record the store lacks is an error, not a number.
	s := newSyncStore()
	if _, err := cfg.Run(s, YCSBLoad, nil); err != nil {
		t.Fatal(err)
	}
	for key := range s.data {
		delete(s.data, key)
	}
	if _, err := cfg.Run(s, YCSBC, nil); err == nil {
		t.Error("reads of an emptied store: no error")
	}
}

// TestThreads runs the db_bench workloads on four goroutines: the fills
// write every key once (a share each), the reads check their answers and
// count every operation, readmixed's miss share stays within binomial
// bounds; filloverwrite refuses more than one thread.
func TestThreads(t *testing.T) {
	const n = 5000
	k, _ := NewKeys(n, 16, 50, 1)
	cfg := &Config{Keys: k, Reads: 8000, MissRatio: 0.25, ScanLength: 10, Threads: 4}
	s := newSyncStore()
	for _, w := range []Workload{FillRandom, ReadRandom, ReadMissing, ReadMixed, Scan} {
		res, err := cfg.Run(s, w, nil)
		if err != nil {
			t.Fatalf("%s: %v", w, err)
		}
		if res.Ops != cfg.Ops(w) || res.Latency.Count() != uint64(res.Ops) || res.Threads != 4 {
			t.Errorf("%s: %d ops, %d latencies, %d threads", w, res.Ops, res.Latency.Count(), res.Threads)
		}
		if w == ReadMixed && !within(res.Missing, res.Ops, 0.25) {
			t.Errorf("readmixed: %d of %d missing, want about %d", res.Missing, res.Ops, res.Ops/4)
		}
	}
	if len(s.data) != n {
		t.Errorf("fillrandom on 4 threads wrote %d keys, want %d", len(s.data), n)
	}
	if _, err := cfg.Run(newSyncStore(), FillOverwrite, nil); err == nil {
		t.Error("filloverwrite on 4 threads: no error")
	}
	var calls []int
	var mu sync.Mutex
	cfg.Threads = 2
	if _, err := cfg.Run(s, ReadRandom, func(done int) { mu.Lock(); calls = append(calls, done); mu.Unlock() }); err != nil {
		t.Fatal(err)
	}
	if len(calls) < 2 || calls[len(calls)-1] != cfg.Reads {
		t.Errorf("progress calls %v: want several, the last %d", calls, cfg.Reads)
	}
}
