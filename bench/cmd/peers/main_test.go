package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bloomkv/bloomkv/bench/peers"
	"github.com/bloomkv/bloomkv/internal/humanize"
	"github.com/bloomkv/bloomkv/internal/workload"
)

// TestMain lets this test binary act as the command's child process: with
// -shared-binary the parent re-executes os.Executable() — here, the test
// binary — with childEnv set and the child's flags.
func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// TestChildProcesses runs every engine in a child process of the shared
// binary (-shared-binary: this test binary) on a tiny data set and checks
// that each reports every workload's operations and a peak RSS above 0,
// and that the table shows it and says which binary the children ran.
func TestChildProcesses(t *testing.T) {
	o := &options{n: 2000, reads: 500, keySize: workload.DefaultKeySize, valueSize: workload.DefaultValueSize,
		scanLength: 20, missRatio: 0.5, seed: workload.DefaultSeed, dir: t.TempDir(),
		workloads: "fillrandom,readrandom,readmissing,readmixed,scan"}
	ws, err := workload.Parse(o.workloads)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := workload.NewKeys(o.n, o.keySize, o.valueSize, o.seed)
	if err != nil {
		t.Fatal(err)
	}
	cfg := &workload.Config{Keys: keys, Reads: o.reads, MissRatio: o.missRatio, ScanLength: o.scanLength}
	bins, err := sharedBinary(peers.Engines)
	if err != nil {
		t.Fatal(err)
	}
	runs, err := runEngines(o, peers.Engines, bins, cfg, ws, io.Discard, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != len(peers.Engines) {
		t.Fatalf("%d runs for %d engines", len(runs), len(peers.Engines))
	}
	for _, r := range runs {
		if r.MaxRSS <= 0 {
			t.Errorf("%s: peak RSS %d", r.Name, r.MaxRSS)
		}
		if r.Binary == nil || !r.Binary.Shared || r.Binary.Size <= 0 {
			t.Errorf("%s: binary %+v, want the shared one with its size", r.Name, r.Binary)
		}
		for j, res := range r.Results {
			if res.Workload != ws[j] || res.Ops != cfg.Ops(ws[j]) || res.opsPerSec() <= 0 {
				t.Errorf("%s: %s: %+v", r.Name, ws[j], res)
			}
		}
		t.Logf("%s: peak RSS %.1f MiB", r.Name, mib(r.MaxRSS))
	}
	var out bytes.Buffer
	written := make([]int64, len(ws))
	for j, w := range ws {
		written[j] = cfg.WrittenBytes(w)
	}
	printTables(&out, runs, ws, written)
	if !strings.Contains(out.String(), "peak RSS") || !strings.Contains(out.String(), "Each child ran the runner's own binary, every engine linked in (-shared-binary): ") {
		t.Errorf("no peak RSS, or no note of the shared binary, in the output:\n%s", out.String())
	}
}

// TestRunInProcess runs the whole command in this process with
// -in-process, and a child's -engine mode, on a tiny data set.
func TestRunInProcess(t *testing.T) {
	var out, errs bytes.Buffer
	args := []string{"-n", "1000", "-reads", "200", "-engines", "bloomkv,pebble", "-workloads", "fillrandom,readrandom", "-in-process", "-dir", t.TempDir()}
	if code := run(args, &out, &errs); code != 0 {
		t.Fatalf("exit %d: %s", code, errs.String())
	}
	if !strings.Contains(out.String(), "fillrandom") || strings.Contains(out.String(), "peak RSS") {
		t.Errorf("output:\n%s", out.String())
	}
	out.Reset()
	args = []string{"-engine", "bloomkv", "-n", "1000", "-reads", "200", "-workloads", "fillrandom", "-dir", t.TempDir()}
	if code := run(args, &out, &errs); code != 0 {
		t.Fatalf("child exit %d: %s", code, errs.String())
	}
	if !strings.HasPrefix(out.String(), `[{"workload":"fillrandom","ops":1000,`) {
		t.Errorf("child output: %s", out.String())
	}
}

// TestReportColumns runs the command with engines in child processes (of
// this test binary: -shared-binary) on a small filloverwrite and
// readrandom with -space-amp, and checks the report's new columns: every
// engine's four latencies, parsed and ordered (p50 ≤ p99 ≤ p99.9 ≤ max);
// L0 during the fill, within the engine's stop; and the tree after the
// fill with its sizes, last level, write and space amplification.
func TestReportColumns(t *testing.T) {
	const n, perKey = 20000, 2
	var out, errs bytes.Buffer
	args := []string{"-n", strconv.Itoa(n), "-reads", "5000", "-engines", "bloomkv,pebble", "-workloads", "filloverwrite,readrandom",
		"-writes-per-key", strconv.Itoa(perKey), "-sample-interval", "10ms", "-space-amp", "-shared-binary", "-dir", t.TempDir()}
	if code := run(args, &out, &errs); code != 0 {
		t.Fatalf("exit %d: %s", code, errs.String())
	}
	report := out.String()
	t.Log(report)
	section := func(title string) []string {
		_, rest, ok := strings.Cut(report, "\n"+title)
		if !ok {
			t.Fatalf("no %q in the report", title)
		}
		body, _, _ := strings.Cut(rest, "\n\n")
		return strings.Split(body, "\n")[1:] // past the title's line
	}
	row := func(lines []string, name string) string {
		for _, l := range lines {
			if f := strings.Fields(l); len(f) > 0 && f[0] == name {
				return l
			}
		}
		t.Fatalf("no row %s in %q", name, lines)
		return ""
	}

	// Latencies: one cell of four per engine in each workload's row.
	lat := section("p50 / p99 / p99.9 / max latency")
	cell := regexp.MustCompile(`([0-9.]+)(µs|ms|s) / ([0-9.]+)(µs|ms|s) / ([0-9.]+)(µs|ms|s) / ([0-9.]+)(µs|ms|s)`)
	unit := map[string]float64{"µs": 1e3, "ms": 1e6, "s": 1e9}
	for _, w := range []string{"filloverwrite", "readrandom"} {
		cells := cell.FindAllStringSubmatch(row(lat, w), -1)
		if len(cells) != 2 {
			t.Fatalf("%s: %d latency cells, want 2 (bloomkv, pebble)", w, len(cells))
		}
		for _, c := range cells {
			var ns [4]float64
			for i := range ns {
				v, err := strconv.ParseFloat(c[1+2*i], 64)
				if err != nil {
					t.Fatalf("%s: %q: %v", w, c[0], err)
				}
				ns[i] = v * unit[c[2+2*i]]
			}
			if !(0 < ns[0] && ns[0] <= ns[1] && ns[1] <= ns[2] && ns[2] <= ns[3]) {
				t.Errorf("%s: latencies %q out of order", w, c[0])
			}
		}
	}

	// L0 during the fill: bloomkv counts tables, pebble sublevels.
	l0 := row(section("L0 during each fill"), "filloverwrite")
	bm := regexp.MustCompile(`max (\d+) \(stop (\d+)\) over (\d+) samples`).FindStringSubmatch(l0)
	pm := regexp.MustCompile(`max (\d+) sublevels, (\d+) tables \(stop (\d+) sublevels\) over (\d+) samples`).FindStringSubmatch(l0)
	if bm == nil || pm == nil {
		t.Fatalf("L0 row %q: want bloomkv's and pebble's cells", l0)
	}
	atoi := func(s string) int {
		v, err := strconv.Atoi(s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	// At its stop an engine stops writes, not the flush of a memtable
	// already full: one table or sublevel more.
	if max, stop, samples := atoi(bm[1]), atoi(bm[2]), atoi(bm[3]); stop != 36 || max < 0 || max > stop+1 || samples < 1 {
		t.Errorf("bloomkv's L0: %q", bm[0])
	}
	if sub, tables, stop, samples := atoi(pm[1]), atoi(pm[2]), atoi(pm[3]), atoi(pm[4]); stop != 12 || sub < 0 || sub > stop+1 || tables < sub || samples < 1 {
		t.Errorf("pebble's L0: %q", pm[0])
	}

	// The filters after the read: bloomkv's alone, uniform Bloom filters
	// of 10 bits per key (no MemoryLimit), so its expected reads are
	// uniform's, and a count of false positives per Get.
	filters := section("filters after each read workload")
	fm := regexp.MustCompile(`^\s*bloomkv\s+readrandom\s+([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)×\s+([0-9.]+)\s*$`).FindStringSubmatch(row(filters, "bloomkv"))
	if fm == nil {
		t.Fatalf("filters row %q: want bloomkv's readrandom with five numbers", row(filters, "bloomkv"))
	}
	parse := func(s string) float64 {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	if bits, expected, uniform, ratio, measured := parse(fm[1]), parse(fm[2]), parse(fm[3]), parse(fm[4]), parse(fm[5]); math.Abs(bits-10) > 0.3 || expected <= 0 || math.Abs(expected-uniform) > 0.0002 || ratio != 1 || measured > 1 {
		t.Errorf("bloomkv's filters: %q", fm[0])
	}
	for _, l := range filters {
		if f := strings.Fields(l); len(f) > 0 && f[0] == "pebble" {
			t.Errorf("pebble reports no filters, yet has a row %q", l)
		}
	}

	// The tree: L0–L6, a total, the last level's share, and both
	// amplifications for both engines.
	tree := section("tree after filloverwrite and its settle")
	if h := strings.Fields(tree[0]); strings.Join(h, " ") != "engine L0 L1 L2 L3 L4 L5 L6 total last level write amp space amp" {
		t.Errorf("tree header %q", tree[0])
	}
	tail := regexp.MustCompile(`([0-9.]+) (B|KiB|MiB|GiB)\s+L([0-6]) ([0-9.]+)%\s+([0-9.]+)\s+([0-9.]+)\s*$`)
	for _, e := range []string{"bloomkv", "pebble"} {
		m := tail.FindStringSubmatch(row(tree, e))
		if m == nil {
			t.Errorf("%s's tree row %q: no total, last level, write amp and space amp", e, row(tree, e))
			continue
		}
		total, _ := strconv.ParseFloat(m[1], 64)
		share, _ := strconv.ParseFloat(m[4], 64)
		wamp, _ := strconv.ParseFloat(m[5], 64)
		samp, _ := strconv.ParseFloat(m[6], 64)
		if total <= 0 || share <= 0 || share > 100 || wamp <= 0 || wamp > 20 || samp < 0.9 || samp > 5 {
			t.Errorf("%s's tree: total %v %s, last level L%s %v%%, write amp %v, space amp %v", e, total, m[2], m[3], share, wamp, samp)
		}
	}
	if !strings.Contains(report, "; filloverwrite writes each key 2 times") {
		t.Error("the report's first line does not say filloverwrite's writes per key")
	}
	if !strings.Contains(report, "(space amp: the total over the table bytes after a compaction of the whole key range: bloomkv ") {
		t.Error("the report does not say what the space amp is over")
	}
}

// TestFlags checks the new flags' bounds and that the child gets them.
func TestFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"-writes-per-key", "-1"}, 2},
		{[]string{"-writes-per-key", "129"}, 2},
		{[]string{"-sample-interval", "soon"}, 2},
		{[]string{"-threads", "0"}, 2},
		{[]string{"-ycsb", "readproportion=2"}, 2},
		{[]string{"-sizes", "10Q"}, 2},
		{[]string{"-workloads", "readrandom"}, 2},
		{[]string{"-shared-binary"}, 2}, // with -in-process
	} {
		if code := run(append(tc.args, "-n", "100", "-in-process"), io.Discard, io.Discard); code != tc.code {
			t.Errorf("%q: exit %d, want %d", tc.args, code, tc.code)
		}
	}
	o := &options{writesPerKey: 5, sampleInterval: 30 * time.Millisecond, spaceAmp: true, cold: true, threads: 3, ycsb: "fieldcount=1", cpuProfile: "/tmp/p",
		bloomkvMemoryLimit: 1 << 20, bloomkvMmap: "all"}
	args := strings.Join(o.childArgs("pebble"), " ")
	for _, want := range []string{"-writes-per-key 5", "-sample-interval 30ms", "-space-amp=true", "-cold=true", "-threads 3", "-ycsb fieldcount=1", "-cpuprofile /tmp/p",
		"-bloomkv-memory-limit 1048576", "-bloomkv-mmap all"} {
		if !strings.Contains(args, want) {
			t.Errorf("child args %q lack %q", args, want)
		}
	}
	// A child's JSON carries the fill's shape, and -cpuprofile leaves its
	// profile, a gzipped protocol buffer, at FILE.ENGINE.N.pprof.
	var out bytes.Buffer
	prof := filepath.Join(t.TempDir(), "cpu")
	args2 := []string{"-engine", "bloomkv", "-n", "1000", "-reads", "200", "-workloads", "filloverwrite,readrandom", "-dir", t.TempDir(), "-cpuprofile", prof}
	if code := run(args2, &out, io.Discard); code != 0 {
		t.Fatalf("child exit %d", code)
	}
	if f, err := os.Open(prof + ".bloomkv.1000.pprof"); err != nil {
		t.Error(err)
	} else {
		zr, err := gzip.NewReader(f)
		if err == nil {
			_, err = io.Copy(io.Discard, zr)
		}
		if err != nil {
			t.Errorf("-cpuprofile: not a gzipped profile: %v", err)
		}
		f.Close()
	}
	var rs []result
	if err := json.Unmarshal(out.Bytes(), &rs); err != nil {
		t.Fatal(err)
	}
	if len(rs) != 2 || rs[0].Ops != 3000 || rs[0].L0 == nil || rs[0].Tree == nil || rs[0].Compacted != nil || rs[0].MaxNS < rs[0].P999NS ||
		rs[1].L0 != nil || rs[1].Tree != nil {
		t.Errorf("child results %+v", rs)
	}
}

// deviceTable runs the command with args and returns its report and the
// body of its table of device bytes, which follows title: its title and
// header lines, then a row per workload.
func deviceTable(t *testing.T, title string, args ...string) (report, body string) {
	t.Helper()
	var out, errs bytes.Buffer
	if code := run(args, &out, &errs); code != 0 {
		t.Fatalf("exit %d: %s", code, errs.String())
	}
	report = out.String()
	_, rest, ok := strings.Cut(report, title)
	if !ok {
		t.Fatalf("no device table %q in the report:\n%s", title, report)
	}
	body, _, _ = strings.Cut(rest, "\n\n")
	return report, body
}

// TestCold runs the command with -cold, engines in child processes (of
// this test binary: -shared-binary), on a database in the package's
// directory (on the checkout's disk: a tmpfs keeps its pages whatever is
// dropped), and checks the device table: a cell per engine for each read
// workload, present-key Gets reading from the device, and bloomkv's
// missing-key Gets, which its filters answer, reading less than its
// present-key ones. It needs Linux and root.
func TestCold(t *testing.T) {
	dir, err := os.MkdirTemp(".", "cold-test-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	report, body := deviceTable(t, "\ndevice bytes read per operation",
		"-n", "20000", "-reads", "5000", "-engines", "bloomkv,pebble,badger", "-workloads", "fillrandom,readrandom,readmissing", "-cold", "-shared-binary", "-dir", dir)
	cells := map[string][]float64{}
	for _, line := range strings.Split(body, "\n")[2:] { // past the title and the header
		f := strings.Fields(line)
		for i := 1; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil || f[i+1] != "B" {
				t.Fatalf("row %q: cell %q %q", line, f[i], f[i+1])
			}
			cells[f[0]] = append(cells[f[0]], v)
		}
	}
	present, missing := cells["readrandom"], cells["readmissing"]
	if len(present) != 3 || len(missing) != 3 {
		t.Fatalf("device table %q: want three cells (bloomkv, pebble, badger) for readrandom and readmissing", body)
	}
	// badger maps its tables: only the close and reopen around the drop
	// makes its present-key Gets read from the device.
	if present[0] <= 0 || present[1] <= 0 || present[2] <= 0 || missing[0] >= present[0] {
		t.Errorf("device bytes per Get: readrandom %v, readmissing %v (bloomkv, pebble, badger)", present, missing)
	}
	if !strings.Contains(report, "(badger: tables memory-mapped, so closed before each drop and opened again after it") {
		t.Errorf("no note of badger's reopen in the report:\n%s", report)
	}
}

// TestMemLimit runs the command with -memlimit, bloomkv's and pebble's
// children (of this test binary: -shared-binary) each in a memory cgroup,
// and checks the device table — a cell per engine for every workload, the
// fill's too — and each engine's cgroup peak, above 0 and within the cap;
// and that -memlimit with -in-process, which runs no child, is refused.
// It needs Linux, root and a memory cgroup (CI runs as root) and fails
// without them. The cap is generous: the race detector's shadow memory
// counts against it.
func TestMemLimit(t *testing.T) {
	const limit = 512 << 20
	report, body := deviceTable(t, "\ndevice bytes read per operation, each engine in a memory cgroup of 512.0 MiB that counts its page cache",
		"-n", "20000", "-reads", "5000", "-engines", "bloomkv,pebble", "-workloads", "fillrandom,readrandom", "-memlimit", "512MiB", "-shared-binary", "-dir", t.TempDir())
	rows := map[string]int{}
	for _, line := range strings.Split(body, "\n")[2:] { // past the title and the header
		f := strings.Fields(line)
		rows[f[0]] = strings.Count(line, " B")
	}
	if rows["fillrandom"] != 2 || rows["readrandom"] != 2 {
		t.Errorf("device table %q: want a cell per engine for fillrandom and readrandom", body)
	}
	m := regexp.MustCompile(`memory cgroup peaks, the process and its page cache: bloomkv (\S+ \S+), pebble (\S+ \S+)\)`).FindStringSubmatch(report)
	if m == nil {
		t.Fatalf("no line of the cgroups' peaks in:\n%s", report)
	}
	for i, name := range []string{"bloomkv", "pebble"} {
		peak, err := humanize.ParseBytes(m[i+1])
		if err != nil || peak <= 0 || peak > limit {
			t.Errorf("%s's cgroup peak %q (%d, %v): want within (0, %d]", name, m[i+1], peak, err, limit)
		}
	}
	var errs bytes.Buffer
	if code := run([]string{"-memlimit", "64MiB", "-in-process"}, io.Discard, &errs); code != 2 || !strings.Contains(errs.String(), "not with -in-process") {
		t.Errorf("-memlimit -in-process: exit %d, %q; want 2 and the reason", code, errs.String())
	}
}

// TestModes runs the new modes together on a tiny data set, in this
// process: the YCSB load and two workloads on two threads at two sizes,
// with -out; and checks the amplification table, the YCSB mix, the scale
// table (a row per size), peers.json (machine, command, both sizes) and
// the charts, and that -chart draws them again from peers.json.
func TestModes(t *testing.T) {
	dir, out := t.TempDir(), t.TempDir()
	var stdout, errs bytes.Buffer
	args := []string{"-sizes", "1000,2K", "-reads", "400", "-engines", "bloomkv,pebble", "-threads", "2", "-ycsb", "fieldcount=2,fieldlength=20",
		"-workloads", "ycsb-load,ycsb-a,ycsb-e", "-in-process", "-dir", dir, "-out", out}
	if code := run(args, &stdout, &errs); code != 0 {
		t.Fatalf("exit %d: %s", code, errs.String())
	}
	report := stdout.String()
	for _, want := range []string{"amplification and cost, per workload and engine", "ycsb-a: read ", ", update ", "ycsb-e: insert ", ", scan ",
		"scale: each read workload's ops/s", "; 2 thread(s)"} {
		if !strings.Contains(report, want) {
			t.Errorf("no %q in the report:\n%s", want, report)
		}
	}
	_, scale, _ := strings.Cut(report, "scale: ")
	for _, w := range []string{"ycsb-a", "ycsb-e"} {
		_, body, ok := strings.Cut(scale, "\n"+w+"\n")
		if !ok {
			t.Fatalf("no scale table for %s:\n%s", w, scale)
		}
		var sizes []string
		for _, line := range strings.Split(body, "\n")[1:] {
			f := strings.Fields(line)
			if len(f) == 0 {
				break
			}
			sizes = append(sizes, f[0])
		}
		if strings.Join(sizes, " ") != "1K 2K" {
			t.Errorf("%s: scale rows %q, want 1K and 2K", w, sizes)
		}
	}
	rep, err := readReport(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Sizes) != 2 || rep.Sizes[1].Keys != 2000 || rep.Machine.Cores < 1 || !strings.Contains(rep.Command, "-sizes 1000,2K") || rep.Date == "" {
		t.Errorf("peers.json: %d sizes, machine %+v, command %q, date %q", len(rep.Sizes), rep.Machine, rep.Command, rep.Date)
	}
	for _, run := range rep.Sizes[1].Runs {
		load := run.Results[0]
		if load.Ops != 2000 || load.Kinds[workload.OpInsert] != 2000 || load.LiveBytes <= 0 || load.DiskBytes <= 0 || load.CPUNS <= 0 {
			t.Errorf("%s: ycsb-load %+v", run.Name, load)
		}
		if a := run.Results[1]; a.Ops != 400 || a.Threads != 2 || a.Kinds[workload.OpRead]+a.Kinds[workload.OpUpdate] != 400 {
			t.Errorf("%s: ycsb-a %+v", run.Name, a)
		}
	}
	charts := []string{"ops-1K", "ops-2K", "scale-ycsb-a-ops", "scale-ycsb-a-p99", "scale-ycsb-a-reads", "scale-ycsb-e-ops"}
	for _, c := range charts {
		for _, ext := range []string{".png", ".svg"} {
			if err := os.Remove(filepath.Join(out, c+ext)); err != nil {
				t.Errorf("chart %s%s: %v", c, ext, err)
			}
		}
	}
	stdout.Reset()
	if code := run([]string{"-chart", out}, &stdout, &errs); code != 0 {
		t.Fatalf("-chart: exit %d: %s", code, errs.String())
	}
	if !strings.Contains(stdout.String(), "amplification and cost") || !strings.Contains(stdout.String(), "scale: ") {
		t.Errorf("-chart printed no tables:\n%s", stdout.String())
	}
	for _, c := range charts {
		if _, err := os.Stat(filepath.Join(out, c+".png")); err != nil {
			t.Errorf("-chart did not draw %s again: %v", c, err)
		}
	}
}

// TestMemLimitKilled runs bloomkv's child in a memory cgroup too small for
// its memtable: the OOM killer kills it, and the run still ends with exit
// status 0, saying which engine the cap killed and why, since an engine
// that cannot run under a cap is a result of the comparison. Like
// TestMemLimit it needs Linux, root and a memory cgroup, and fails without
// them.
func TestMemLimitKilled(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := run([]string{"-n", "20000", "-reads", "1000", "-engines", "bloomkv", "-workloads", "fillrandom,readrandom",
		"-memlimit", "6MiB", "-shared-binary", "-dir", t.TempDir()}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr.String())
	}
	if want := "bloomkv: no results: killed by the memory cap: the OOM killer of its memory cgroup of 6291456 bytes (6 MiB) killed it"; !strings.Contains(stdout.String(), want) {
		t.Errorf("stdout lacks %q:\n%s", want, stdout.String())
	}
	if !strings.Contains(stderr.String(), "bloomkv killed after ") || strings.Contains(stderr.String(), "bloomkv done in") {
		t.Errorf("stderr does not say the engine was killed, or says it is done:\n%s", stderr.String())
	}
}

// TestReportKeepsKilledApart checks that a size's engines killed by the
// cap are kept apart from those that finished: the tables show the
// finished ones, each killed one gets its line, and peers.json keeps both.
func TestReportKeepsKilledApart(t *testing.T) {
	ws := []workload.Workload{workload.FillRandom}
	keys, err := workload.NewKeys(100, 16, 100, 1)
	if err != nil {
		t.Fatal(err)
	}
	finished := engineRun{Name: "bloomkv", Results: []result{{Workload: workload.FillRandom, Ops: 100, ElapsedNS: 1e6}}}
	killed := engineRun{Name: "badger", Killed: "killed by the memory cap", Memcg: &cgroupRun{Limit: 256 << 20, Peak: 255 << 20}}
	rep := &report{Workloads: ws}
	rep.add(100, &workload.Config{Keys: keys}, []engineRun{finished, killed})
	s := rep.Sizes[0]
	if len(s.Runs) != 1 || s.Runs[0].Name != "bloomkv" || len(s.Killed) != 1 || s.Killed[0].Name != "badger" {
		t.Fatalf("runs %v, killed %v", s.Runs, s.Killed)
	}
	var out bytes.Buffer
	s.printTables(&out, ws)
	if want := "badger: no results: killed by the memory cap (its cgroup's peak: 255.0 MiB)"; !strings.Contains(out.String(), want) {
		t.Errorf("tables lack %q:\n%s", want, out.String())
	}
	if strings.Contains(strings.SplitN(out.String(), "\n", 2)[0], "badger") {
		t.Errorf("the killed engine has a column:\n%s", out.String())
	}
	b, err := json.Marshal(rep)
	if err != nil || !strings.Contains(string(b), `"killed":[{"Name":"badger"`) {
		t.Errorf("peers.json %s, %v: want the killed engine kept", b, err)
	}
}
