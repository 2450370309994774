package main

// The pages of bloomkv web in a real browser: headless Chromium driven by
// chromedp, one browser for every subtest, against `bloomkv web -demo`.

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/bloomkv/bloomkv"
	"github.com/bloomkv/bloomkv/bloom"
	"github.com/bloomkv/bloomkv/web"
)

var screenshotDir = flag.String("web.screenshots", "", "write the browser tests' screenshot of each page into `DIR` (docs/web holds the README's)")

// chromiumPath finds a headless Chromium on PATH: Debian's
// chromium-headless-shell, which scripts/ensure-chromium installs, or a full
// chromium.
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium-headless-shell", "chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("Chromium is not installed: run ./scripts/ensure-chromium (it installs Debian's chromium-headless-shell package)")
	return ""
}

// newBrowser starts one headless Chromium for the test, with a fresh
// profile, and returns a context of its first tab.
func newBrowser(t *testing.T) context.Context {
	t.Helper()
	profile := t.TempDir()
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(chromiumPath(t)),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(profile),
		chromedp.WindowSize(1280, 1000),
	)
	ctx, cancel := chromedp.NewContext(alloc)
	// Cleanups run last first: the browser exits before its profile goes.
	t.Cleanup(cancelAlloc)
	t.Cleanup(cancel)
	if err := chromedp.Do(ctx); err != nil { // starts the browser
		t.Fatalf("starting Chromium: %v", err)
	}
	return ctx
}

// startWeb runs serveWeb for cfg and returns its base URL and a func that
// stops it and waits for it to return; the test's end stops it too.
func startWeb(t *testing.T, cfg webConfig) (string, func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	addrs := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() { done <- serveWeb(ctx, cfg, io.Discard, func(a net.Addr) { addrs <- a }) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("serveWeb: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	select {
	case a := <-addrs:
		return "http://" + a.String() + "/", stop
	case err := <-done:
		t.Fatalf("serveWeb: %v", err)
	}
	return "", stop
}

// page drives one tab with a deadline, failing the test on any error.
type page struct {
	t   *testing.T
	ctx context.Context
}

func newPage(t *testing.T, browser context.Context, url string) *page {
	ctx, cancel := context.WithTimeout(browser, 90*time.Second)
	t.Cleanup(cancel)
	p := &page{t, ctx}
	p.do(chromedp.Navigate(url))
	return p
}

func (p *page) do(actions ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	if err := chromedp.Do(p.ctx, actions...); err != nil {
		p.t.Fatal(err)
	}
}

// wait polls the JavaScript condition until it holds, within the page's
// deadline: not chromedp's own 30 s, which an explain outran once on a
// machine at load 20 (go test -count=3 ./... beside two builds).
func (p *page) wait(cond string) {
	p.t.Helper()
	poll := chromedp.Poll[chromedp.Void](cond, chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(0))
	if _, err := chromedp.Run(p.ctx, poll); err != nil {
		p.t.Fatalf("waiting for %s: %v", cond, err)
	}
}

func eval[T any](p *page, js string) T {
	p.t.Helper()
	v, err := chromedp.Run(p.ctx, chromedp.Evaluate[T](js))
	if err != nil {
		p.t.Fatalf("%s: %v", js, err)
	}
	return v
}

// noError fails the test if the page shows an error.
func (p *page) noError() {
	p.t.Helper()
	if msg := eval[string](p, `document.getElementById("error").textContent`); msg != "" {
		p.t.Errorf("the page shows an error: %s", msg)
	}
}

// screenshot writes the page to DIR/name.png under -web.screenshots.
func (p *page) screenshot(name string) {
	p.t.Helper()
	if *screenshotDir == "" {
		return
	}
	png, err := chromedp.Run(p.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		p.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(*screenshotDir, name+".png"), png, 0o644); err != nil {
		p.t.Fatal(err)
	}
}

// loaded checks that the page's loading placeholders are gone: its first
// fetch has been drawn.
func (p *page) loaded() {
	p.t.Helper()
	if n := eval[int](p, `document.querySelectorAll(".loading").length`); n != 0 {
		p.t.Errorf("%d loading placeholders still shown after the page's first fetch", n)
	}
}

// clear empties a text box.
func (p *page) clear(id string) {
	p.t.Helper()
	eval[bool](p, fmt.Sprintf(`(() => { document.getElementById(%q).value = ""; return true })()`, id))
}

// setRange moves a slider as a user does: a new value and an input event.
func (p *page) setRange(id string, value string) {
	p.t.Helper()
	eval[bool](p, fmt.Sprintf(`(() => { const e = document.getElementById(%q); e.value = %q; e.dispatchEvent(new Event("input")); return true })()`, id, value))
}

func TestWebBrowser(t *testing.T) {
	// A demo writer brisk enough that flushes and compactions come within
	// seconds (a flush every half second), while the other pages are tested.
	base, _ := startWeb(t, webConfig{addr: "127.0.0.1:0", demo: true, rate: 1000})
	browser := newBrowser(t)
	t.Run("index", func(t *testing.T) { testIndex(t, browser, base) })
	t.Run("mounted", func(t *testing.T) { testMounted(t, browser) })
	t.Run("playground", func(t *testing.T) { testPlayground(t, browser, base) })
	t.Run("calc", func(t *testing.T) { testCalc(t, browser, base) })
	t.Run("tree", func(t *testing.T) { testTree(t, browser, base) })
	t.Run("tree-polling", func(t *testing.T) { testTreePolling(t, browser) })
}

// testIndex follows the index's links to each page.
func testIndex(t *testing.T, browser context.Context, base string) {
	p := newPage(t, browser, base)
	links := eval[[]string](p, `[...document.querySelectorAll("main a")].map(a => a.href)`)
	if want := []string{base + "playground", base + "calc", base + "tree"}; !slices.Equal(links, want) {
		t.Fatalf("the index links to %q, want %q", links, want)
	}
	for _, link := range links {
		p.do(chromedp.Navigate(link))
		p.wait(fmt.Sprintf(`document.body.dataset.page === %q`, strings.TrimPrefix(link, base)))
	}
}

// testMounted serves the filter pages under a prefix, as an application
// mounts them, and checks that a page finds its script, its style and the
// API there.
func testMounted(t *testing.T, browser context.Context) {
	mux := http.NewServeMux()
	mux.Handle("/debug/bloomkv/", http.StripPrefix("/debug/bloomkv", web.FilterHandler()))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	p := newPage(t, browser, srv.URL+"/debug/bloomkv")
	p.wait(`location.pathname === "/debug/bloomkv/"`) // the mux's redirect
	p.do(chromedp.Navigate(srv.URL + "/debug/bloomkv/calc"))
	p.wait(`document.body.dataset.ready >= 1 && document.querySelectorAll("#sizes tbody tr").length === 2`)
	if bg := eval[string](p, `getComputedStyle(document.querySelector("header")).borderBottomStyle`); bg != "solid" {
		t.Errorf("the stylesheet is not applied under the prefix (header border %q)", bg)
	}
	p.noError()
}

var fruits = []string{"apple", "banana", "cherry", "grape", "lemon", "mango", "orange", "peach", "pear", "plum"}

// positionsOf is what the bloom package says of a word: its probe
// positions, as the page must show them.
func positionsOf(word string, m uint64, k int) []uint64 {
	return bloom.ClassicLocations(nil, bloom.Hash([]byte(word)), m, k)
}

// bitsOf lists the bits f has set, read from its bitmap.
func bitsOf(f *bloom.Classic) []uint64 {
	bm := f.AppendBitmap(nil)
	var out []uint64
	for i := range f.Bits() {
		if bm[i/8]&(0x80>>(i%8)) != 0 {
			out = append(out, i)
		}
	}
	return out
}

func joinInts(s []uint64) string {
	parts := make([]string, len(s))
	for i, v := range s {
		parts[i] = strconv.FormatUint(v, 10)
	}
	return strings.Join(parts, ",")
}

func fruitFilter(t *testing.T, m uint64, k int) *bloom.Classic {
	f, err := bloom.NewClassicSize(m, k)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range fruits {
		f.Add([]byte(w))
	}
	return f
}

// checkedVerdict is the page's verdict on the last word checked, and the
// bits it outlined green (set) and red (clear).
type checkedVerdict struct {
	Word, Verdict, Positions string
	Set, Clear               []uint64
}

const verdictJS = `(() => {
	const v = document.getElementById("verdict");
	const bits = cls => [...document.querySelectorAll("#bits rect." + cls)].map(r => +r.dataset.bit).sort((a, b) => a - b);
	return {word: v.dataset.word, verdict: v.dataset.verdict, positions: v.dataset.positions, set: bits("probe-set"), clear: bits("probe-clear")};
})()`

func testPlayground(t *testing.T, browser context.Context, base string) {
	p := newPage(t, browser, base+"playground")
	p.wait(`document.body.dataset.ready >= 1`)
	p.do(chromedp.Click(chromedp.ID("fruits")))
	p.wait(`document.querySelectorAll("#words .chip").length === 10`)

	const m, k = 64, 3 // the page's defaults
	f := fruitFilter(t, m, k)
	if got, want := eval[[]uint64](p, `[...document.querySelectorAll("#bits rect.bit.on")].map(r => +r.dataset.bit)`), bitsOf(f); !slices.Equal(got, want) {
		t.Errorf("lit bits %v, want the bloom package's %v", got, want)
	}
	chips := eval[map[string]string](p, `Object.fromEntries([...document.querySelectorAll("#words .chip")].map(c => [c.dataset.word, c.dataset.positions]))`)
	for _, w := range fruits {
		if want := joinInts(positionsOf(w, m, k)); chips[w] != want {
			t.Errorf("%s at %q, want %q", w, chips[w], want)
		}
	}

	check := func(word string) checkedVerdict {
		t.Helper()
		p.clear("word")
		p.do(chromedp.SendKeys(chromedp.ID("word"), word), chromedp.Click(chromedp.ID("check")))
		p.wait(fmt.Sprintf(`document.getElementById("verdict").dataset.word === %q`, word))
		return eval[checkedVerdict](p, verdictJS)
	}
	// A fruit: present, every bit green.
	pos := positionsOf("banana", m, k)
	v := check("banana")
	if sorted := slices.Compact(slices.Sorted(slices.Values(pos))); v.Verdict != "present" || v.Positions != joinInts(pos) || !slices.Equal(v.Set, sorted) || len(v.Clear) != 0 {
		t.Errorf("banana: %+v, want present at %v, all green", v, pos)
	}
	// A word the filter rules out: absent, the clear bits red.
	absent := ""
	for _, w := range []string{"kiwi", "fig", "lime", "date", "melon", "papaya", "quince", "guava"} {
		if !f.MayContain([]byte(w)) {
			absent = w
			break
		}
	}
	pos = positionsOf(absent, m, k)
	var set, clear []uint64
	for _, b := range pos {
		if slices.Contains(bitsOf(f), b) {
			set = append(set, b)
		} else {
			clear = append(clear, b)
		}
	}
	slices.Sort(set)
	slices.Sort(clear)
	v = check(absent)
	if v.Verdict != "absent" || v.Positions != joinInts(pos) || !slices.Equal(v.Set, slices.Compact(set)) || !slices.Equal(v.Clear, slices.Compact(clear)) {
		t.Errorf("%s: %+v, want absent at %v, green %v and red %v", absent, v, pos, set, clear)
	}
	// The measured false positives: the probe words the filter says maybe to.
	fp := 0
	for i := range 10000 {
		if f.MayContain([]byte("probe-" + strconv.Itoa(i))) {
			fp++
		}
	}
	measured := eval[string](p, `document.querySelector('#rates tr[data-rate="measured"] td:last-child').textContent`)
	if want := fmt.Sprintf("(%s of 10,000)", fmtCount(int64(fp))); !strings.Contains(measured, want) {
		t.Errorf("measured %q, want %s false positives", measured, want)
	}
	formula := eval[string](p, `document.querySelector('#rates tr[data-rate="formula"] td:last-child').textContent`)
	if want := fmt.Sprintf("%.2f%%", 100*bloom.ClassicFalsePositiveRate(m, k, 10)); formula != want {
		t.Errorf("formula %q, want %q", formula, want)
	}
	// A wider filter: the bits are redrawn from the bloom package.
	p.setRange("m-range", "128")
	p.wait(`document.querySelectorAll("#bits rect.bit").length === 128`)
	if got, want := eval[[]uint64](p, `[...document.querySelectorAll("#bits rect.bit.on")].map(r => +r.dataset.bit)`), bitsOf(fruitFilter(t, 128, k)); !slices.Equal(got, want) {
		t.Errorf("m = 128: lit bits %v, want %v", got, want)
	}
	p.setRange("m-range", "64")
	p.wait(`document.querySelectorAll("#bits rect.bit").length === 64`)
	p.loaded()
	// Each y label of the rate chart is its tick's value, to the digit.
	ticks := eval[[][2]string](p, `[...document.querySelectorAll("#fpr-chart text[data-tick]")].map(e => [e.dataset.tick, e.textContent])`)
	if len(ticks) < 3 {
		t.Fatalf("y ticks %q, want at least 3", ticks)
	}
	for _, tick := range ticks {
		v, err1 := strconv.ParseFloat(tick[0], 64)
		pct, err2 := strconv.ParseFloat(strings.TrimSuffix(tick[1], "%"), 64)
		if err1 != nil || err2 != nil || !strings.HasSuffix(tick[1], "%") || math.Abs(pct-100*v) > 1e-9*math.Max(1, 100*v) {
			t.Errorf("y tick at %s labelled %q", tick[0], tick[1])
		}
	}
	p.noError()
	p.screenshot("playground")
}

// calcRows are the calculator's table, filter by filter, field by field.
type calcRows map[string]map[string]float64

const calcRowsJS = `Object.fromEntries([...document.querySelectorAll("#sizes tbody tr")].map(r =>
	[r.dataset.filter, Object.fromEntries([...r.querySelectorAll("td[data-field]")].map(td => [td.dataset.field, +td.dataset.value]))]))`

func testCalc(t *testing.T, browser context.Context, base string) {
	p := newPage(t, browser, base+"calc")
	p.wait(`document.body.dataset.ready >= 1`)
	check := func(nExp, pExp float64, k int) {
		t.Helper()
		q, err := url.ParseQuery(eval[string](p, `document.body.dataset.query`))
		if err != nil {
			t.Fatal(err)
		}
		n, _ := strconv.Atoi(q.Get("n"))
		rate, _ := strconv.ParseFloat(q.Get("p"), 64)
		if float64(n) != math.Round(math.Pow(10, nExp)) || math.Abs(rate/math.Pow(10, pExp)-1) > 0.005 {
			t.Fatalf("the sliders at 10^%v, 10^%v asked for n = %d, p = %v", nExp, pExp, n, rate)
		}
		rows := eval[calcRows](p, calcRowsJS)
		// The classic filter: m = ⌈−n·ln p/(ln 2)²⌉, k = round(m/n·ln 2).
		m := math.Ceil(-float64(n) * math.Log(rate) / (math.Ln2 * math.Ln2))
		c := rows["classic"]
		if c["m"] != m || c["k"] != math.Max(1, math.Round(m/float64(n)*math.Ln2)) || c["bitsPerKey"] != m/float64(n) ||
			c["fpr"] != bloom.ClassicFalsePositiveRate(uint64(m), int(c["k"]), float64(n)) {
			t.Errorf("n = %d, p = %v: classic %v, want m = %v", n, rate, c, m)
		}
		// The blocked filter: whole 512-bit blocks at the bits per key
		// reaching p, with the best probes.
		b, bpk := rows["blocked"], bloom.BlockedBitsPerKey(rate)
		if blocks := math.Max(1, math.Ceil(float64(n)*bpk/512)); b["m"] != 512*blocks || b["k"] != float64(bloom.BlockedProbes(bpk)) ||
			b["fpr"] != bloom.BlockedFalsePositiveRate(b["m"]/float64(n), int(b["k"])) {
			t.Errorf("n = %d, p = %v: blocked %v, want %v blocks at %v bits/key", n, rate, b, blocks, bpk)
		}
		if got := eval[float64](p, `+document.getElementById("bound-note").dataset.value`); got != math.Log2(1/rate) {
			t.Errorf("bound %v bits/key, want log2(1/p) = %v", got, math.Log2(1/rate))
		}
		fk, ok := rows["fixedK"]
		switch {
		case k == 0 && ok:
			t.Errorf("a fixed-k row without fixed k: %v", fk)
		case k > 0:
			// The fewest bits at which k probes reach p.
			if !ok || fk["k"] != float64(k) || bloom.ClassicFalsePositiveRate(uint64(fk["m"]), k, float64(n)) > rate*(1+1e-12) ||
				bloom.ClassicFalsePositiveRate(uint64(fk["m"])-1, k, float64(n)) <= rate {
				t.Errorf("n = %d, p = %v: fixed k = %d row %v, want the fewest bits reaching p", n, rate, k, fk)
			}
		}
	}
	// moveTo moves the sliders, all at once, and waits for the answer to
	// exactly their values to be drawn (the page draws only its latest).
	moveTo := func(nExp, pExp float64, k int) {
		t.Helper()
		eval[bool](p, fmt.Sprintf(`(() => {
			const set = (id, v) => { document.getElementById(id).value = v; };
			set("n-range", %q); set("p-range", %q); if (%d > 0) set("k-range", %q);
			for (const id of ["n-range", "p-range", "k-range"]) document.getElementById(id).dispatchEvent(new Event("input"));
			return true;
		})()`, strconv.FormatFloat(nExp, 'f', -1, 64), strconv.FormatFloat(pExp, 'f', -1, 64), k, strconv.Itoa(k)))
		p.wait(`document.body.dataset.query === queryOf(params())`)
		check(nExp, pExp, k)
	}
	check(6, -2, 0) // the page's defaults: n = 10^6, p = 1%
	p.loaded()
	// Fixed k off: no fixed-k line, though api/chart computes one.
	if series := eval[[]string](p, `[...document.querySelectorAll("#chart path.line")].map(e => e.dataset.series)`); !slices.Equal(series, []string{"classic", "blocked", "bound"}) {
		t.Errorf("fixed k off: chart lines %v, want classic, blocked and bound", series)
	}
	moveTo(5, -3, 0)
	p.do(chromedp.Click(chromedp.ID("fixk")))
	moveTo(7.5, -5.5, 4)
	moveTo(3, -1, 2)
	series := eval[[]string](p, `[...document.querySelectorAll("#chart path.line")].map(e => e.dataset.series)`)
	if !slices.Equal(series, []string{"classic", "fixedK", "blocked", "bound"}) {
		t.Errorf("chart lines %v, want classic, fixedK, blocked and bound", series)
	}
	if eval[int](p, `document.querySelectorAll("#chart [data-marker]").length`) != 1 {
		t.Error("no marker for n and p on the chart")
	}
	moveTo(6, -2, 4)
	p.noError()
	p.screenshot("calc")
}

// traceSeen is the page's drawing of a trace.
type traceSeen struct {
	Found, Source string
	Steps         []struct{ Place, Result string }
	Lit           string // the name of the table drawn as where the key was found
}

const traceJS = `(() => {
	const s = document.getElementById("summary");
	const lit = document.querySelector(".tbl.t-found");
	return {found: s.dataset.found, source: s.dataset.source, lit: lit ? lit.dataset.name : "",
		steps: [...document.querySelectorAll("#trace li")].map(li => ({place: li.dataset.place, result: li.dataset.result}))};
})()`

func testTree(t *testing.T, browser context.Context, base string) {
	p := newPage(t, browser, base+"tree")
	// Flushes and compactions appear as the demo writer fills the tree.
	p.wait(`document.querySelector('#events li[data-kind="flush"]') && document.querySelector('#events li[data-kind="compaction"]')`)
	p.wait(`document.querySelectorAll(".level[data-level] .tbl").length >= 2`)
	p.loaded()
	if note := eval[string](p, `document.getElementById("score-note").textContent`); !strings.Contains(note, "score") || !strings.Contains(note, "due for compaction") {
		t.Errorf("the tree page does not say what a level's score is: %q", note)
	}

	explain := func(key string) traceSeen {
		t.Helper()
		p.clear("key")
		p.do(chromedp.SendKeys(chromedp.ID("key"), key), chromedp.Click(chromedp.ID("explain")))
		p.wait(fmt.Sprintf(`document.getElementById("summary").textContent.startsWith("lookup " + %q + " ")`, key))
		return eval[traceSeen](p, traceJS)
	}
	// A key of a table: its smallest, as the page draws it.
	key := eval[string](p, `document.querySelector(".tbl .mono").textContent.split(" … ")[0]`)
	tr := explain(key)
	i := slices.IndexFunc(tr.Steps, func(s struct{ Place, Result string }) bool { return s.Result == "found" })
	if tr.Found != "true" || i < 0 || tr.Steps[i].Place != tr.Source || i != len(tr.Steps)-1 {
		t.Errorf("explain %s: %+v, want found, the last step where", key, tr)
	}
	if strings.HasPrefix(tr.Source, "L") && tr.Lit != "" && tr.Lit != tr.Source {
		t.Errorf("explain %s: found in %s, but the tree lights %s", key, tr.Source, tr.Lit)
	}
	// A key never written, between two keys of the demo's: every step
	// drawn, none finding it, the tables ruled out or read in vain.
	tr = explain(key + "~")
	tables := 0
	for _, s := range tr.Steps {
		if s.Result == "found" {
			t.Errorf("explain %s~: step %+v found a key never written", key, s)
		}
		if strings.Contains(s.Place, ".sst") {
			tables++
		}
	}
	if tr.Found != "false" || tr.Source != "" || tables == 0 {
		t.Errorf("explain %s~: %+v, want not found after consulting tables", key, tr)
	}
	p.noError()
	p.screenshot("tree")
}

// testTreePolling mounts the handler for a DB without an EventLog, as an
// application that opened its DB long before does, and checks that the
// page still shows a flush and a compaction as they happen, from Metrics.
func testTreePolling(t *testing.T, browser context.Context) {
	db, err := bloomkv.Open(t.TempDir(), &bloomkv.Options{MemtableSize: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	srv := httptest.NewServer(web.Handler(db, nil))
	t.Cleanup(srv.Close)
	p := newPage(t, browser, srv.URL+"/tree")
	p.wait(`document.body.dataset.polls >= 1`)
	write := func(from int) {
		for i := range 500 {
			if err := db.Put(fmt.Appendf(nil, "k%05d", from+i), []byte("v"), bloomkv.NoSync); err != nil {
				t.Fatal(err)
			}
		}
		if err := db.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	write(0)
	p.wait(`document.querySelector('#events li[data-kind="flush"]') && document.querySelectorAll('.level[data-level="0"] .tbl').length === 1`)
	write(500)
	if err := db.Compact(nil, nil); err != nil {
		t.Fatal(err)
	}
	p.wait(`document.querySelector('#events li[data-kind="compaction"]') && document.querySelectorAll('.level[data-level="0"] .tbl').length === 0`)
	if note := eval[string](p, `document.getElementById("events-note").textContent`); !strings.Contains(note, "Metrics") {
		t.Errorf("the events note %q does not say they are counted from Metrics", note)
	}
	p.noError()
}
