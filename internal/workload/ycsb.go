package workload

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
)

// The YCSB workloads: YCSB's CoreWorkload (site.ycsb.workloads), its load
// phase and its core workloads A–F, with YCSB's property names, defaults
// and key-choosing laws, so that a result here can be set beside
// go-ycsb's and the YCSB papers'.
//
// A record is YCSB's row of fieldcount fields of fieldlength bytes, stored
// as one value of fieldcount·fieldlength bytes, the fields one after the
// other, under the key "user" followed by the decimal digits of the
// record's number hashed (insertorder hashed: fnvHash64, so that the load
// writes in an order unrelated to key order) or not (ordered). The
// operations on a Store, as go-ycsb's key-value adapters do them:
//
//	read             Get the record (readallfields: all of it)
//	update           Get the record, replace one random field, Put it back
//	                 (writeallfields=true: Put a whole new record, no Get)
//	insert           Put a new record, numbered after the last one
//	scan             Scan from a record's key, a length drawn from
//	                 scanlengthdistribution over [1, maxscanlength]
//	readmodifywrite  a read, then an update of the same record
//
// requestdistribution chooses the record of a read, update, scan and
// readmodifywrite: uniform, zipfian (YCSB's ScrambledZipfianGenerator,
// θ = 0.99, over the records and the inserts expected, 2·operationcount·
// insertproportion; a number not yet inserted is drawn again) or latest
// (SkewedLatestGenerator: the newest records the most popular).

// YCSB is one YCSB core workload's properties, under YCSB's names (see
// SetProperty).
type YCSB struct {
	RecordCount               int64   // recordcount: records the load inserts
	OperationCount            int64   // operationcount: operations of a run
	ReadProportion            float64 // readproportion
	UpdateProportion          float64 // updateproportion
	InsertProportion          float64 // insertproportion
	ScanProportion            float64 // scanproportion
	ReadModifyWriteProportion float64 // readmodifywriteproportion
	RequestDistribution       string  // requestdistribution: uniform, zipfian or latest
	FieldCount                int     // fieldcount
	FieldLength               int     // fieldlength (fieldlengthdistribution constant)
	MaxScanLength             int     // maxscanlength
	ScanLengthDistribution    string  // scanlengthdistribution: uniform or zipfian
	InsertOrder               string  // insertorder: hashed or ordered
	WriteAllFields            bool    // writeallfields
}

// YCSB's CoreWorkload defaults, before a workload's own properties.
var ycsbDefaults = YCSB{
	ReadProportion: 0.95, UpdateProportion: 0.05,
	RequestDistribution: "uniform", FieldCount: 10, FieldLength: 100,
	MaxScanLength: 1000, ScanLengthDistribution: "uniform", InsertOrder: "hashed",
}

// The YCSB workloads' names.
const (
	YCSBLoad Workload = "ycsb-load"
	YCSBA    Workload = "ycsb-a"
	YCSBB    Workload = "ycsb-b"
	YCSBC    Workload = "ycsb-c"
	YCSBD    Workload = "ycsb-d"
	YCSBE    Workload = "ycsb-e"
	YCSBF    Workload = "ycsb-f"
)

// ycsbCore are the properties of YCSB's workloads/workloada … workloadf
// files (their recordcount and operationcount aside: Config gives them).
var ycsbCore = map[Workload]string{
	YCSBLoad: "",
	YCSBA:    "readproportion=0.5,updateproportion=0.5,requestdistribution=zipfian",                     // update heavy
	YCSBB:    "readproportion=0.95,updateproportion=0.05,requestdistribution=zipfian",                   // read mostly
	YCSBC:    "readproportion=1,updateproportion=0,requestdistribution=zipfian",                         // read only
	YCSBD:    "readproportion=0.95,updateproportion=0,insertproportion=0.05,requestdistribution=latest", // read latest
	YCSBE: "readproportion=0,updateproportion=0,scanproportion=0.95,insertproportion=0.05," + // short ranges
		"requestdistribution=zipfian,maxscanlength=100,scanlengthdistribution=uniform",
	YCSBF: "readproportion=0.5,updateproportion=0,readmodifywriteproportion=0.5,requestdistribution=zipfian", // read-modify-write
}

// IsYCSB reports whether w is one of the YCSB workloads.
func (w Workload) IsYCSB() bool { _, ok := ycsbCore[w]; return ok }

// SetProperty sets the property of YCSB's name to value, checking it.
func (y *YCSB) SetProperty(name, value string) error {
	bad := func(want string) error {
		return fmt.Errorf("workload: YCSB property %s=%q: want %s", name, value, want)
	}
	prop := func(p *float64) error {
		x, err := strconv.ParseFloat(value, 64)
		if err != nil || !(x >= 0 && x <= 1) {
			return bad("a proportion in [0, 1]")
		}
		*p = x
		return nil
	}
	count := func(p *int64, least int64) error {
		x, err := strconv.ParseInt(value, 10, 64)
		if err != nil || x < least {
			return bad(fmt.Sprintf("an integer of at least %d", least))
		}
		*p = x
		return nil
	}
	size := func(p *int, least int) error {
		x, err := strconv.Atoi(value)
		if err != nil || x < least || x > 1<<20 {
			return bad(fmt.Sprintf("an integer in [%d, %d]", least, 1<<20))
		}
		*p = x
		return nil
	}
	oneOf := func(p *string, have ...string) error {
		for _, h := range have {
			if value == h {
				*p = value
				return nil
			}
		}
		return bad(strings.Join(have, " or "))
	}
	switch name {
	case "recordcount":
		return count(&y.RecordCount, 1)
	case "operationcount":
		return count(&y.OperationCount, 1)
	case "readproportion":
		return prop(&y.ReadProportion)
	case "updateproportion":
		return prop(&y.UpdateProportion)
	case "insertproportion":
		return prop(&y.InsertProportion)
	case "scanproportion":
		return prop(&y.ScanProportion)
	case "readmodifywriteproportion":
		return prop(&y.ReadModifyWriteProportion)
	case "requestdistribution":
		return oneOf(&y.RequestDistribution, "uniform", "zipfian", "latest")
	case "fieldcount":
		return size(&y.FieldCount, 1)
	case "fieldlength":
		return size(&y.FieldLength, 1)
	case "maxscanlength":
		return size(&y.MaxScanLength, 1)
	case "scanlengthdistribution":
		return oneOf(&y.ScanLengthDistribution, "uniform", "zipfian")
	case "insertorder":
		return oneOf(&y.InsertOrder, "hashed", "ordered")
	case "writeallfields":
		b, err := strconv.ParseBool(value)
		if err != nil {
			return bad("true or false")
		}
		y.WriteAllFields = b
		return nil
	case "readallfields":
		if value != "true" {
			return bad("true (a read gets the whole record)")
		}
		return nil
	case "fieldlengthdistribution":
		if value != "constant" {
			return bad("constant (every field fieldlength bytes)")
		}
		return nil
	}
	return fmt.Errorf("workload: unknown YCSB property %q (have %s)", name, strings.Join(ycsbPropertyNames, ", "))
}

var ycsbPropertyNames = []string{"recordcount", "operationcount", "readproportion", "updateproportion",
	"insertproportion", "scanproportion", "readmodifywriteproportion", "requestdistribution", "fieldcount",
	"fieldlength", "fieldlengthdistribution", "maxscanlength", "scanlengthdistribution", "insertorder",
	"readallfields", "writeallfields"}

// SetProperties sets a comma-separated list of name=value properties.
func (y *YCSB) SetProperties(list string) error {
	for _, item := range strings.Split(list, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		name, value, ok := strings.Cut(item, "=")
		if !ok {
			return fmt.Errorf("workload: YCSB property %q: want name=value", item)
		}
		if err := y.SetProperty(strings.TrimSpace(name), strings.TrimSpace(value)); err != nil {
			return err
		}
	}
	return nil
}

// ParseYCSBProperties checks a list of name=value properties (Config.YCSB).
func ParseYCSBProperties(list string) error {
	var y YCSB
	return y.SetProperties(list)
}

// ycsb returns workload w's properties under c: YCSB's defaults, then w's
// own, then c.YCSB's; recordcount Keys.N and operationcount Reads unless
// c.YCSB sets them.
func (c *Config) ycsb(w Workload) (*YCSB, error) {
	y := ycsbDefaults
	y.RecordCount, y.OperationCount = int64(c.Keys.N), int64(c.Reads)
	if err := y.SetProperties(ycsbCore[w]); err != nil {
		return nil, err
	}
	if err := y.SetProperties(c.YCSB); err != nil {
		return nil, err
	}
	if w != YCSBLoad && y.ReadProportion+y.UpdateProportion+y.InsertProportion+y.ScanProportion+y.ReadModifyWriteProportion == 0 {
		return nil, fmt.Errorf("workload: %s: every operation's proportion is 0", w)
	}
	return &y, nil
}

// The kinds of a YCSB operation, in YCSB's order of its operation chooser.
const (
	OpRead = iota
	OpUpdate
	OpInsert
	OpScan
	OpReadModifyWrite
	NumOpKinds
)

// OpNames are the kinds' names, by YCSB's operation names.
var OpNames = [NumOpKinds]string{"read", "update", "insert", "scan", "readmodifywrite"}

// ycsbRecords is what a run's YCSB workloads share: the records inserted
// so far (the load's and each workload's inserts since), so that the
// workloads after the load ask only for records that exist.
type ycsbRecords struct {
	inserts *ackCounter
}

// ycsbRun is one YCSB workload's plan, shared by its threads.
type ycsbRun struct {
	y        *YCSB
	records  *ycsbRecords
	load     *ackCounter // the load's: numbers 0 … recordcount−1
	weights  [NumOpKinds]float64
	chooser  func(r *rand.Rand) keyChooser
	scanLens func(r *rand.Rand) func() int64
}

// keyChooser draws record numbers.
type keyChooser func() int64

// existing returns the chooser that draws from next until it draws a
// record inserted and acknowledged, YCSB's CoreWorkload.nextKeynum.
func (c *ackCounter) existing(next func() int64) keyChooser {
	return func() int64 {
		for {
			if k := next(); k <= c.last() {
				return k
			}
		}
	}
}

// newYCSBRun plans w: the load resets the records.
func (c *Config) newYCSBRun(w Workload) (*ycsbRun, error) {
	y, err := c.ycsb(w)
	if err != nil {
		return nil, err
	}
	run := &ycsbRun{y: y}
	if w == YCSBLoad {
		c.records = &ycsbRecords{inserts: newAckCounter(y.RecordCount)}
		run.records, run.load = c.records, newAckCounter(0)
		return run, nil
	}
	if c.records == nil {
		return nil, fmt.Errorf("workload: %s needs the records of %s, run before it", w, YCSBLoad)
	}
	run.records = c.records
	run.weights = [NumOpKinds]float64{y.ReadProportion, y.UpdateProportion, y.InsertProportion, y.ScanProportion, y.ReadModifyWriteProportion}
	inserted := run.records.inserts
	// The records the key choosers draw from: those of the load, as YCSB's
	// insertstart 0 and insertcount recordcount; inserts come after.
	records := y.RecordCount
	switch y.RequestDistribution {
	case "uniform":
		run.chooser = func(r *rand.Rand) keyChooser {
			return func() int64 { return r.Int64N(records) }
		}
	case "zipfian":
		expectedNew := int64(float64(y.OperationCount) * y.InsertProportion * 2) // YCSB's fudge factor of 2
		proto := newScrambledZipfian(0, records+expectedNew, ZipfianConstant, nil)
		run.chooser = func(r *rand.Rand) keyChooser { return inserted.existing(proto.clone(r).next) }
	case "latest":
		if records < 2 {
			return nil, fmt.Errorf("workload: %s: requestdistribution latest needs a recordcount of at least 2", w)
		}
		proto := newSkewedLatest(inserted, nil)
		run.chooser = func(r *rand.Rand) keyChooser { return inserted.existing(proto.clone(r).next) }
	}
	maxScan := int64(y.MaxScanLength)
	switch y.ScanLengthDistribution {
	case "uniform":
		run.scanLens = func(r *rand.Rand) func() int64 {
			return func() int64 { return 1 + r.Int64N(maxScan) }
		}
	case "zipfian":
		proto := newZipfian(1, maxScan, ZipfianConstant, nil)
		run.scanLens = func(r *rand.Rand) func() int64 { return proto.clone(r).next }
	}
	return run, nil
}

// key appends record number n's key to dst[:0]: "user" and the decimal
// digits of n, hashed unless insertorder is ordered (YCSB's buildKeyName
// with zeropadding 1).
func (y *YCSB) key(dst []byte, n int64) []byte {
	if y.InsertOrder == "hashed" {
		n = fnvHash64(n)
	}
	return strconv.AppendInt(append(dst[:0], "user"...), n, 10)
}

// recordSize is the bytes of a record's value.
func (y *YCSB) recordSize() int { return y.FieldCount * y.FieldLength }

// ycsbThread is one thread's generators of a YCSB workload.
type ycsbThread struct {
	run      *ycsbRun
	r        *rand.Rand
	keys     keyChooser
	scanLen  func() int64
	key, rec []byte
	big      []byte // a new record longer than values, repeated
	values   []byte // the bytes new fields are cut from (Keys' values)
}

func (run *ycsbRun) thread(r *rand.Rand, values []byte) *ycsbThread {
	t := &ycsbThread{run: run, r: r, values: values}
	if run.chooser != nil {
		t.keys = run.chooser(r)
		t.scanLen = run.scanLens(r)
	}
	return t
}

// bytesOf returns n bytes of the values buffer from a random offset: a
// new field or record (Store.Put does not keep it).
func (t *ycsbThread) bytesOf(n int) []byte {
	if n >= len(t.values) {
		t.big = t.big[:0]
		for len(t.big) < n {
			t.big = append(t.big, t.values[:min(n-len(t.big), len(t.values))]...)
		}
		return t.big
	}
	off := t.r.IntN(len(t.values) - n + 1)
	return t.values[off : off+n]
}

// choose returns the kind of the next operation, by YCSB's
// DiscreteGenerator: one uniform draw against the proportions in order.
func (t *ycsbThread) choose() int {
	w := &t.run.weights
	var sum float64
	for _, x := range w {
		sum += x
	}
	u := t.r.Float64()
	last := 0
	for kind, x := range w {
		if x == 0 {
			continue
		}
		if u < x/sum {
			return kind
		}
		u -= x / sum
		last = kind
	}
	return last // rounding left u at the end
}

// op runs one operation of the workload and returns its kind. For the
// load, every call inserts the next of its records.
func (t *ycsbThread) op(s Store) (int, error) {
	y := t.run.y
	if t.run.load != nil {
		n := t.run.load.nextValue()
		t.key = y.key(t.key, n)
		return OpInsert, s.Put(t.key, t.bytesOf(y.recordSize()))
	}
	kind := t.choose()
	var err error
	switch kind {
	case OpRead:
		t.key = y.key(t.key, t.keys())
		err = t.read(s)
	case OpUpdate:
		t.key = y.key(t.key, t.keys())
		err = t.update(s)
	case OpInsert:
		ins := t.run.records.inserts
		n := ins.nextValue()
		t.key = y.key(t.key, n)
		if err = s.Put(t.key, t.bytesOf(y.recordSize())); err == nil {
			ins.acknowledge(n)
		}
	case OpScan:
		t.key = y.key(t.key, t.keys())
		_, err = s.Scan(t.key, int(t.scanLen()))
	case OpReadModifyWrite:
		t.key = y.key(t.key, t.keys())
		if err = t.read(s); err == nil {
			err = t.update(s)
		}
	}
	return kind, err
}

// read gets the record of t.key and checks that it is whole.
func (t *ycsbThread) read(s Store) error {
	_, err := t.get(s)
	return err
}

func (t *ycsbThread) get(s Store) ([]byte, error) {
	v, found, err := s.Get(t.key)
	switch {
	case err != nil:
		return nil, err
	case !found:
		return nil, fmt.Errorf("record %q not found (was the store loaded with %s?)", t.key, YCSBLoad)
	case len(v) != t.run.y.recordSize():
		return nil, fmt.Errorf("record %q has %d bytes, want %d (fieldcount·fieldlength)", t.key, len(v), t.run.y.recordSize())
	}
	return v, nil
}

// update replaces one random field of t.key's record (all of it with
// writeallfields).
func (t *ycsbThread) update(s Store) error {
	y := t.run.y
	if y.WriteAllFields {
		return s.Put(t.key, t.bytesOf(y.recordSize()))
	}
	v, err := t.get(s)
	if err != nil {
		return err
	}
	rec := append(t.rec[:0], v...)
	f := t.r.IntN(y.FieldCount)
	copy(rec[f*y.FieldLength:], t.bytesOf(y.FieldLength))
	t.rec = rec
	return s.Put(t.key, rec)
}

// loadBytes returns the user bytes, keys and values, of the records the
// load writes.
func (y *YCSB) loadBytes() int64 {
	total := y.RecordCount * int64(y.recordSize())
	var key []byte
	for n := range y.RecordCount {
		key = y.key(key, n)
		total += int64(len(key))
	}
	return total
}
