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
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bloomkv/bloomkv/internal/manifest"
	"github.com/bloomkv/bloomkv/internal/race"
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

// crashOps returns the batch of op index i of cycle seed: a Put (now and
// then with a time-to-live of 1 to 3 cycles), a Delete, a DeleteRange, a
// Merge or a batch of them. The parent regenerates the child's ops from
// the seed.
func crashOps(seed uint64, i int) []kvOp {
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
// Unix nanoseconds, at which its clock stands). It writes ops 0, 1, … durably and
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
		if err := applyOps(d, crashOps(seed, i), nil); err != nil {
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
	t.Logf("%d crash cycles (%d with values separated) in %v: %d acknowledged writes verified, %d merge operands in them (%d in-flight writes found applied; %d with a time-to-live, %d keys checked gone once it ended), %d kills mid-flush or mid-compaction (a table or blob file left that no version lists), %d kills before the child had opened the DB, %d key checks",
		st.cycles, st.separated, time.Since(start).Round(time.Millisecond), st.acked, st.merges, st.inflightApplied, st.ttlAcked, st.expiredVerified, st.orphanCycles, st.killsBeforeOpen, st.keysVerified)
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
		ops := crashOps(seed, i)
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
	inflight := crashOps(seed, acks)
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
	// mid-rewrite leaves none behind.
	after, err := os.ReadDir(dir)
	if err != nil {
		d.Close()
		return err
	}
	for _, e := range after {
		if ft, num, ok := manifest.ParseFilename(e.Name()); ok && ft == manifest.FileTypeBlob {
			if _, listed := current.BlobFile(num); !listed {
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
