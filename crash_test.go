//go:build linux || darwin || freebsd

package bloomkv

// A real crash test: a child process (this test binary, re-executed) writes
// to a real directory and reports every acknowledged write on stdout; the
// parent kills it with SIGKILL at a random moment and checks what survived.
//
// Long form: go test -count=1 -run TestCrashSIGKILL -crash.cycles=500 .

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bloomkv/bloomkv/internal/manifest"
	"github.com/bloomkv/bloomkv/internal/race"
	"github.com/bloomkv/bloomkv/vfs"
	"github.com/cespare/xxhash/v2"
)

var (
	crashCycles = flag.Int("crash.cycles", 20, "SIGKILL crash cycles TestCrashSIGKILL runs (-race, left at its default: 8)")
	crashSeed   = flag.Int64("crash.seed", -1, "seed of TestCrashSIGKILL (default: time-based, printed)")
)

const crashChildEnv = "BLOOMKV_CRASH_CHILD"

// crashKeys is the key space of the crash workload: small, so that writes
// overwrite each other and compactions have shadowed versions to drop.
const crashKeys = 1500

func crashKey(i int) string { return fmt.Sprintf("ck%05d", i) }

// crashOptions are the options of cycle seed, child and parent alike: tiny
// memtables, levels and tables, so that flushes and compactions run all the
// time and a kill often lands in the middle of one; the level sizing, the
// compactions at once and the L0 thresholds (low, so that writes are paced
// often), how the compaction slots open, L0's and the base level's
// compression, and value separation chosen by the seed, so that one directory is opened under
// all of them in turn. Separation alternates from one cycle to the next (the
// cycles' seeds are consecutive), so that every run, short or long, opens
// blob files written under separation with it off and inline values with
// it on.
func crashOptions(seed uint64) *Options {
	return &Options{
		TopLevelCompression:      []Compression{DefaultCompression, SnappyCompression}[seed/18%2],
		MemtableSize:             64 << 10,
		BaseLevelSize:            96 << 10,
		TargetFileSize:           32 << 10,
		BlockSize:                1024,
		L0CompactionTrigger:      2,
		L0SlowdownTrigger:        2 + int(seed%3),
		L0StopTrigger:            5 + int(seed%3),
		LevelSizing:              []LevelSizing{DynamicLevelSizing, StaticLevelSizing}[seed/3%2],
		MaxConcurrentCompactions: 1 + int(seed/6%3),
		L0CompactionConcurrency:  []int{0, 1}[seed/36%2],
		ValueSeparation:          crashSeparation(seed),
		Merger:                   AppendMerger(), // crashOps merges; kvModel folds as it does
	}
}

// crashSeparation is cycle seed's value separation: on in every other
// cycle, at a size drawn from 100–499 bytes (about half of the values in
// blob files), reclaimed at a tenth dead or at half.
func crashSeparation(seed uint64) ValueSeparation {
	if seed%2 == 0 {
		return ValueSeparation{MinSize: ValueSeparationOff}
	}
	return ValueSeparation{
		MinSize:   100 + int(seed/2%400),
		DeadShare: []float64{0.1, 0.5}[seed/4%2],
	}
}

// crashOptionsAt is crashOptions with the clock stopped at now (Unix
// nanoseconds): the cycle's instant, which child and parent share.
func crashOptionsAt(seed uint64, now int64) *Options {
	o := crashOptions(seed)
	o.Clock = stoppedClock(now)
	return o
}

// crashOp is op index i of a cycle: a batch of writes (crashWrites);
// an update transaction, which reads a key first and sets one to a value
// made of what it read, then makes more writes; or an ingest of tables
// (randomIngestTables). The child runs it (run), the parent regenerates
// it from the seed and knows what it writes (effects). Each is one commit
// of the DB: acknowledged, it survives; in flight at the kill, it is all
// there or none of it.
type crashOp struct {
	seed   uint64
	i      int
	ops    []kvOp   // a batch's; a transaction's after its first, the set made of its read
	txn    bool     // ops in a transaction, after it reads read and sets set
	read   string   // txn
	set    string   // txn
	tables [][]kvOp // an ingest's tables, one file each
}

// crashKeySpace holds the crash workload's keys, for randomIngestTables.
var crashKeySpace = func() *keySpace {
	ks := &keySpace{}
	for i := range crashKeys {
		ks.keys = append(ks.keys, []byte(crashKey(i)))
	}
	return ks
}()

// crashOps returns op index i of cycle seed: one in 8 a transaction, one
// in 50 an ingest, the others a batch.
func crashOps(seed uint64, i int) crashOp {
	rng := rand.New(rand.NewPCG(seed, uint64(i)^0x7a11))
	op := crashOp{seed: seed, i: i}
	switch r := rng.IntN(50); {
	case r == 0:
		// A step number unique to the cycle and op: the values say which
		// ingest wrote them.
		op.tables = randomIngestTables(rng, crashKeySpace, int(seed%1_000_000)*10_000_000+i)
	case r < 7:
		op.txn = true
		op.read, op.set = crashKey(rng.IntN(crashKeys)), crashKey(rng.IntN(crashKeys))
		op.ops = crashWrites(seed, i)
	default:
		op.ops = crashWrites(seed, i)
	}
	return op
}

// txnValue is what transaction op sets op.set to, having read v (found or
// not) at op.read.
func (op crashOp) txnValue(v []byte, found bool) string {
	read := "none"
	if found {
		read = fmt.Sprintf("%016x", xxhash.Sum64(v))
	}
	return fmt.Sprintf("%s=txn/%d/%d/read:%s", op.set, op.seed, op.i, read)
}

// effects returns op's writes as the model applies them, for a DB that
// shows live before it.
func (op crashOp) effects(live kvModel) []kvOp {
	if op.tables != nil {
		return slices.Concat(op.tables...) // disjoint tables, distinct keys: their order does not matter
	}
	if !op.txn {
		return op.ops
	}
	v, ok := live[op.read]
	return append([]kvOp{{key: op.set, value: op.txnValue([]byte(v), ok)}}, op.ops...)
}

// run runs op on d, durably; an ingest's files are written in staging
// first, and removed once it is acknowledged.
func (op crashOp) run(d *DB, staging string) error {
	switch {
	case op.tables != nil:
		var paths []string
		for j, t := range op.tables {
			path := filepath.Join(staging, fmt.Sprintf("%d-%d-%d.sst", op.seed, op.i, j))
			if err := writeIngestFile(vfs.Default, path, t); err != nil {
				return err
			}
			paths = append(paths, path)
		}
		if err := d.Ingest(paths); err != nil {
			return err
		}
		for _, p := range paths {
			if err := os.Remove(p); err != nil {
				return err
			}
		}
		return nil
	case op.txn:
		// Single-threaded, the child's transactions never conflict:
		// ErrConflict is an error like any other.
		return d.Update(func(txn *Transaction) error {
			v, err := txn.Get([]byte(op.read))
			if err != nil && err != ErrNotFound {
				return err
			}
			if err := txn.Set([]byte(op.set), []byte(op.txnValue(v, err == nil))); err != nil {
				return err
			}
			for _, w := range op.ops {
				if err := w.addTo(txn); err != nil {
					return err
				}
			}
			return nil
		})
	}
	return applyOps(d, op.ops, nil)
}

// crashWrites returns the batch of op index i of cycle seed: a Put (now
// and then with a time-to-live of 1 to 3 cycles), a Delete, a DeleteRange,
// a Merge or a batch of them.
func crashWrites(seed uint64, i int) []kvOp {
	rng := rand.New(rand.NewPCG(seed, uint64(i)))
	n := 1
	if rng.IntN(4) == 0 {
		n = 2 + rng.IntN(8)
	}
	ops := make([]kvOp, n)
	for j := range ops {
		k := rng.IntN(crashKeys)
		key := crashKey(k)
		if rng.IntN(40) == 0 {
			// A range deletion of up to 40 keys.
			ops[j] = kvOp{rangeDel: true, key: key, end: crashKey(k + 1 + rng.IntN(40))}
			continue
		}
		if rng.IntN(6) == 0 {
			ops[j] = kvOp{del: true, key: key}
			continue
		}
		if rng.IntN(5) == 0 {
			ops[j] = kvOp{merge: true, key: key, value: fmt.Sprintf("+%d/%d/%d", seed, i, j)}
			continue
		}
		v := fmt.Sprintf("%s=%d/%d/%d|", key, seed, i, j)
		v += strings.Repeat(string(rune('a'+rng.IntN(26))), rng.IntN(600))
		ops[j] = kvOp{key: key, value: v}
		if rng.IntN(8) == 0 {
			// Expiring after this cycle (its clock is stopped), in one
			// of the next three.
			ops[j].ttl = time.Duration(1+rng.IntN(3)) * ttlTick
		}
	}
	return ops
}

// TestCrashChild is the child of TestCrashSIGKILL; it does nothing unless
// BLOOMKV_CRASH_CHILD=dir,seed,clock is set (clock: the cycle's instant,
// Unix nanoseconds, at which its clock stands). It runs ops 0, 1, …
// durably (crashOps), its ingests' files written in dir.ingest, and
// prints "ack i" after op i returns, until it is killed.
func TestCrashChild(t *testing.T) {
	env := os.Getenv(crashChildEnv)
	if env == "" {
		t.Skip("only run by TestCrashSIGKILL")
	}
	dir, rest, _ := strings.Cut(env, ",")
	seedStr, clockStr, _ := strings.Cut(rest, ",")
	seed, err := strconv.ParseUint(seedStr, 10, 64)
	if err != nil {
		fmt.Printf("err bad seed %q\n", seedStr)
		os.Exit(2)
	}
	now, err := strconv.ParseInt(clockStr, 10, 64)
	if err != nil {
		fmt.Printf("err bad clock %q\n", clockStr)
		os.Exit(2)
	}
	d, err := Open(dir, crashOptionsAt(seed, now))
	if err != nil {
		fmt.Printf("err open: %v\n", err)
		os.Exit(2)
	}
	fmt.Println("open")
	for i := 0; ; i++ {
		if err := crashOps(seed, i).run(d, dir+".ingest"); err != nil {
			fmt.Printf("err op %d: %v\n", i, err)
			os.Exit(2)
		}
		// One write(2) of a line shorter than PIPE_BUF: atomic, and in the
		// pipe once it returns, even if the process dies right after.
		os.Stdout.WriteString("ack " + strconv.Itoa(i) + "\n")
	}
}

// crashStats are the counts a TestCrashSIGKILL run reports.
type crashStats struct {
	cycles, acked, inflightApplied, killsBeforeOpen, keysVerified int
	// separated counts the cycles whose child separated values.
	separated int
	// ttlAcked counts the acknowledged writes with a time-to-live, and
	// expiredVerified the keys found gone at a check because their
	// time-to-live had ended.
	ttlAcked, expiredVerified int
	// orphanCycles counts crashes that left a table or blob file no
	// version lists.
	orphanCycles int
	// merges counts the acknowledged writes that were merge operands.
	merges int
	// txns and ingests count the acknowledged transactions and ingests;
	// inflightTxns and inflightIngests those in flight found applied.
	txns, ingests, inflightTxns, inflightIngests int
}

func TestCrashSIGKILL(t *testing.T) {
	if os.Getenv(crashChildEnv) != "" {
		t.Skip("in the child")
	}
	t.Parallel() // one of the package's longest: it runs beside the others
	seed := uint64(time.Now().UnixNano())
	if *crashSeed >= 0 {
		seed = uint64(*crashSeed)
	}
	cycles := race.Size("crash.cycles", *crashCycles, 8)
	t.Logf("seed %d (-crash.seed=%d reproduces), %d cycles", seed, seed, cycles)
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	dir := t.TempDir()
	model, exp := kvModel{}, kvExpiries{}
	var st crashStats
	start := time.Now()
	for c := range cycles {
		cycleSeed := seed*1_000_003 + uint64(c)
		now := newTestClock().after(time.Duration(c) * ttlTick) // a tick a cycle
		if err := crashCycle(t, dir, cycleSeed, now, rng, model, exp, &st); err != nil {
			t.Fatalf("cycle %d (seed %d, cycle seed %d): %v", c, seed, cycleSeed, err)
		}
		st.cycles++
		if crashSeparation(cycleSeed).MinSize > 0 {
			st.separated++
		}
	}
	t.Logf("%d crash cycles (%d with values separated) in %v: %d acknowledged writes verified, %d merge operands in them, %d transactions and %d ingests among them (%d in-flight writes found applied, %d transactions and %d ingests; %d with a time-to-live, %d keys checked gone once it ended), %d kills mid-flush or mid-compaction (a table or blob file left that no version lists), %d kills before the child had opened the DB, %d key checks",
		st.cycles, st.separated, time.Since(start).Round(time.Millisecond), st.acked, st.merges, st.txns, st.ingests, st.inflightApplied, st.inflightTxns, st.inflightIngests, st.ttlAcked, st.expiredVerified, st.orphanCycles, st.killsBeforeOpen, st.keysVerified)
}

// crashCycle runs one child on dir, its clock stopped at now, kills it, and
// verifies the directory against model and exp (its keys' expiries), which
// hold the state before the cycle and are updated to the state after it.
func crashCycle(t *testing.T, dir string, seed uint64, now int64, rng *rand.Rand, model kvModel, exp kvExpiries, st *crashStats) error {
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s,%d,%d", crashChildEnv, dir, seed, now))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	lines := make(chan string, 1024)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()

	// Kill after a number of acks or after a delay, whichever the draw
	// chose; a short delay now and then kills the child during recovery.
	killAcks, killAfter := -1, time.Duration(0)
	switch r := rng.IntN(10); {
	case r < 1:
		killAfter = time.Duration(rng.IntN(30)) * time.Millisecond
	case r < 5:
		killAfter = time.Duration(20+rng.IntN(400)) * time.Millisecond
	default:
		killAcks = 1 + rng.IntN(600)
	}
	acks, opened, exited := 0, false, false
	var problem string
	handle := func(line string) {
		switch {
		case line == "open":
			opened = true
		case strings.HasPrefix(line, "ack "):
			n, err := strconv.Atoi(line[4:])
			if err != nil || n != acks {
				problem = fmt.Sprintf("child printed %q after %d acks", line, acks)
			}
			acks++
		case strings.HasPrefix(line, "err "):
			problem = "child failed: " + line
		}
	}
	timer := time.NewTimer(10 * time.Second)
	if killAfter > 0 || killAcks < 0 {
		timer.Reset(killAfter)
	}
wait:
	for killAcks < 0 || acks < killAcks {
		select {
		case line, ok := <-lines:
			if !ok {
				exited = true
				break wait
			}
			handle(line)
			if problem != "" {
				break wait
			}
		case <-timer.C:
			break wait
		}
	}
	timer.Stop()
	cmd.Process.Signal(syscall.SIGKILL)
	// Everything the child wrote before it died is in the pipe: read it all.
	for line := range lines {
		handle(line)
	}
	cmd.Wait()
	if exited || problem != "" {
		return fmt.Errorf("child exited before the kill (%s); stderr:\n%s", problem, stderr.String())
	}
	if !opened {
		st.killsBeforeOpen++
	}

	// The expected state: every acknowledged op applied; the one op in
	// flight (index acks) applied whole or not at all.
	for i := range acks {
		op := crashOps(seed, i)
		st.txns += b2i(op.txn)
		st.ingests += b2i(op.tables != nil)
		ops := op.effects(liveAt(model, exp, now))
		for _, op := range ops {
			if op.merge {
				st.merges++
			}
			if op.ttl > 0 {
				st.ttlAcked++
			}
		}
		model.apply(ops)
		applyExpiries(exp, ops, now)
	}
	st.acked += acks
	inflightOp := crashOps(seed, acks)
	inflight := inflightOp.effects(liveAt(model, exp, now))
	withInflight, expInflight := model.clone(), maps.Clone(exp)
	withInflight.apply(inflight)
	applyExpiries(expInflight, inflight, now)
	// What reads must show: the keys not expired at the cycle's clock.
	acked, ackedInflight := liveAt(model, exp, now), liveAt(withInflight, expInflight, now)

	// Tables the crash left that no version lists: the kill landed in a
	// flush or a compaction (or before its inputs were deleted).
	before, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	d, err := Open(dir, crashOptionsAt(seed, now))
	if err != nil {
		return fmt.Errorf("reopen after %d acks: %w", acks, err)
	}
	d.mu.Lock()
	live := map[uint64]bool{}
	for num := range d.mu.current.FileNums() {
		live[num] = true
	}
	current := d.mu.current.Version
	d.mu.Unlock()
	for _, e := range before {
		if ft, num, ok := manifest.ParseFilename(e.Name()); ok && (ft == manifest.FileTypeTable || ft == manifest.FileTypeBlob) {
			if _, listed := current.BlobFile(num); !live[num] && !listed {
				st.orphanCycles++
				break
			}
		}
	}
	// Open deleted the blob files no version lists: a kill mid-flush or
	// mid-rewrite leaves none behind. Once no flush or compaction runs,
	// and while d.mu keeps one from starting, every blob file on disk is
	// Open's or a finished job's: the version lists it.
	_ = d.lockIdle() // a sticky error fails the checks that follow
	idle := d.mu.current.Version
	after, err := os.ReadDir(dir)
	d.mu.Unlock()
	if err != nil {
		d.Close()
		return err
	}
	for _, e := range after {
		if ft, num, ok := manifest.ParseFilename(e.Name()); ok && ft == manifest.FileTypeBlob {
			if _, listed := idle.BlobFile(num); !listed {
				d.Close()
				return fmt.Errorf("after %d acks, reopened: blob file %s left on disk, in no version", acks, e.Name())
			}
		}
	}
	defer func() {
		if d != nil {
			d.Close()
		}
	}()
	got, err := readAll(d)
	if err != nil {
		return err
	}
	var want kvModel
	switch {
	case diffModels(got, acked) == "":
		want = acked
	case diffModels(got, ackedInflight) == "":
		want = ackedInflight
		clear(exp)
		maps.Copy(exp, expInflight)
		st.inflightApplied++
		st.inflightTxns += b2i(inflightOp.txn)
		st.inflightIngests += b2i(inflightOp.tables != nil)
	default:
		return fmt.Errorf("after %d acks, the DB holds neither the acknowledged state nor it plus the op in flight %v:\n%s",
			acks, inflight, diffModels(got, acked))
	}
	for i := range crashKeys {
		k := []byte(crashKey(i))
		if err := checkGet(d, k, want); err != nil {
			return err
		}
		st.keysVerified++
	}
	for k, e := range exp {
		if _, ok := model[k]; ok && now >= e.at && !e.merged {
			st.expiredVerified++
		}
	}
	// The model becomes what the reads saw: an expired key is gone, or
	// holds the operands merged over it; its expiry is spent.
	clear(model)
	maps.Copy(model, want)
	maps.DeleteFunc(exp, func(_ string, e kvExpiry) bool { return now >= e.at })

	// The DB takes new writes, and keeps them across a clean reopen.
	for j := range 3 {
		k := crashKey(rng.IntN(crashKeys))
		v := fmt.Sprintf("%s=after-crash/%d/%d", k, seed, j)
		if err := d.Put([]byte(k), []byte(v), nil); err != nil {
			return fmt.Errorf("Put after recovery: %w", err)
		}
		model[k] = v
		delete(exp, k)
	}
	if err := d.Close(); err != nil {
		return fmt.Errorf("Close after recovery: %w", err)
	}
	d = nil
	d2, err := Open(dir, crashOptionsAt(seed, now))
	if err != nil {
		return fmt.Errorf("second reopen: %w", err)
	}
	got, err = readAll(d2)
	if cerr := d2.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("Close: %w", cerr)
	}
	if err != nil {
		return err
	}
	if diff := diffModels(got, model); diff != "" {
		return fmt.Errorf("after a clean reopen: %s", diff)
	}
	return nil
}
