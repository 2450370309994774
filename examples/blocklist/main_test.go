package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/bloomkv/bloomkv"
	"github.com/bloomkv/bloomkv/bloom"
	"github.com/bloomkv/bloomkv/bloom/redisbloom"
	"github.com/bloomkv/bloomkv/internal/redistest"
)

// tiny is a run small enough for -race: 300 blocked cards, 3,000
// payments, a fifth of them with blocked cards, at a 5% filter.
func tiny(dir string) config {
	return config{dir: dir, blocked: 300, checks: 3000, blockedShare: 0.2, p: 0.05, name: "blocklist", seed: 7, verify: true}
}

// oracle works out what a run must report from the store itself, opened
// after the run: the blocklist is its card/ keys, a payment is blocked when
// its card is one of them, and the filter's answers are those of a
// bloom.Classic of the same size holding those cards (the Redis-shared
// filter has the same bits). Every blocked payment must get a "maybe".
func oracle(t *testing.T, cfg config) report {
	t.Helper()
	db, err := bloomkv.Open(cfg.dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	blocked := map[string]bool{}
	var cards [][]byte // in key order, as the program reads them
	err = db.Scan(nil, nil, func(key, _ []byte) error {
		if card, ok := strings.CutPrefix(string(key), "card/"); ok {
			blocked[card] = true
			cards = append(cards, []byte(card))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	f, err := bloom.NewClassic(len(blocked), cfg.p)
	if err != nil {
		t.Fatal(err)
	}
	for card := range blocked {
		f.Add([]byte(card))
	}
	want := report{Stored: len(blocked), LoadFactor: f.LoadFactor()}
	for _, card := range paymentCards(cfg, cards) {
		want.Checks++
		maybe := f.MayContain(card)
		switch {
		case !maybe && blocked[string(card)]:
			t.Fatalf("the oracle's filter cleared blocked card %s", card)
		case !maybe:
			want.Cleared++
			if cfg.verify {
				want.Verified++
			}
		case blocked[string(card)]:
			want.Lookups++
			want.Refused++
		default:
			want.Lookups++
			want.FalsePositive++
		}
	}
	return want
}

// same fails the test unless got counts what want does. The filter's
// description is not compared; its load factor is, exactly.
func same(t *testing.T, what string, got, want report) {
	t.Helper()
	got.Filter, got.ExpectedFPR = "", 0
	if got != want {
		t.Fatalf("%s:\n got %+v\nwant %+v", what, got, want)
	}
}

// TestLocal runs the pre-check with a local filter and checks its counts
// against the oracle, then that the false positives are as many as the
// filter's rate predicts (within five binomial standard deviations), and
// that the store, not the filter, is the source of truth: after a card is
// removed from the store and another added, a second run reads the new
// list, refuses the new card and clears the removed one.
func TestLocal(t *testing.T) {
	cfg := tiny(filepath.Join(t.TempDir(), "db"))
	got, err := run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := oracle(t, cfg)
	same(t, "first run", got, want)
	if got.Stored != cfg.blocked || got.Refused == 0 || got.FalsePositive == 0 || got.Cleared == 0 {
		t.Fatalf("a run that tests nothing: %+v", got)
	}
	good := float64(got.Checks - got.Refused)
	if mean, sd := good*got.ExpectedFPR, math.Sqrt(good*got.ExpectedFPR*(1-got.ExpectedFPR)); math.Abs(float64(got.FalsePositive)-mean) > 5*sd {
		t.Fatalf("%d false positives of %v good cards; the filter's rate %.4f predicts %.1f ± %.1f", got.FalsePositive, good, got.ExpectedFPR, mean, sd)
	}

	// Change the store: one card removed, one added.
	db, err := bloomkv.Open(cfg.dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	cards, err := storedCards(db)
	if err != nil {
		t.Fatal(err)
	}
	removed, added := cards[0], []byte("4999999999999999")
	if err := db.Delete(append([]byte(keyPrefix), removed...), nil); err != nil {
		t.Fatal(err)
	}
	if err := db.Put(append([]byte(keyPrefix), added...), []byte("reported stolen"), nil); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	again, err := run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	same(t, "second run", again, oracle(t, cfg))
	if again.Stored != cfg.blocked {
		t.Fatalf("second run: %d cards stored, want %d (one removed, one added)", again.Stored, cfg.blocked)
	}
}

// TestShared runs the pre-check with the filter in Redis: the same counts
// as the oracle (the shared filter holds a local filter's bits), twice —
// the second run finds the filter there and adds the cards again — and a
// blocklist of another size refused with ErrConflict rather than checked
// against a filter sized for other parameters.
func TestShared(t *testing.T) {
	addr := redistest.Start(t).Addr()
	cfg := tiny(filepath.Join(t.TempDir(), "db"))
	cfg.redisAddr = addr
	for i := range 2 {
		got, err := run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(got.Filter, "Redis-shared filter") {
			t.Fatalf("run %d used %s", i, got.Filter)
		}
		same(t, fmt.Sprintf("run %d", i), got, oracle(t, cfg))
	}
	other := tiny(filepath.Join(t.TempDir(), "db"))
	other.redisAddr, other.blocked = addr, 500
	if _, err := run(context.Background(), other); !errors.Is(err, redisbloom.ErrConflict) {
		t.Fatalf("a blocklist of another size: %v, want ErrConflict", err)
	}
}

// TestList loads the blocklist from a file: blank lines and surrounding
// spaces are ignored, and the counts are the oracle's.
func TestList(t *testing.T) {
	dir := t.TempDir()
	list := filepath.Join(dir, "cards.txt")
	var b strings.Builder
	for i := range 50 {
		fmt.Fprintf(&b, "  5500%012d \n\n", i)
	}
	if err := os.WriteFile(list, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := tiny(filepath.Join(dir, "db"))
	cfg.list = list
	got, err := run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	same(t, "from a list", got, oracle(t, cfg))
	if got.Stored != 50 {
		t.Fatalf("%d cards stored from a list of 50", got.Stored)
	}
}

// TestCommandLine runs the program as its main does, flags and all, and
// checks the printed report against the oracle's counts.
func TestCommandLine(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	var stdout, stderr strings.Builder
	args := []string{"-db", dir, "-blocked", "300", "-checks", "3000", "-blocked-share", "0.2", "-p", "0.05", "-seed", "7", "-verify"}
	if code := runMain(args, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	want := oracle(t, tiny(dir))
	for _, line := range []string{
		fmt.Sprintf("blocklist: %d cards in the store\n", want.Stored),
		fmt.Sprintf("payments checked:           %d\n", want.Checks),
		fmt.Sprintf("  cleared by the filter:    %d (store lookups saved: %.1f%%)\n", want.Cleared, 100*float64(want.Cleared)/float64(want.Checks)),
		fmt.Sprintf("  \"maybe\", store looked up: %d\n", want.Lookups),
		fmt.Sprintf("    blocked, refused:       %d\n", want.Refused),
		fmt.Sprintf("    false positives:        %d (", want.FalsePositive),
		fmt.Sprintf("  verified: the store holds none of the %d cleared cards\n", want.Verified),
	} {
		if !strings.Contains(stdout.String(), line) {
			t.Errorf("the report lacks %q:\n%s", line, stdout.String())
		}
	}
	for _, bad := range [][]string{{"-checks", "x"}, {"extra"}, {"-nosuchflag"}} {
		stderr.Reset()
		if code := runMain(bad, io.Discard, &stderr); code != 2 || stderr.Len() == 0 {
			t.Errorf("%q: exit %d, stderr %q; want exit 2 with a reason", bad, code, stderr.String())
		}
	}
}

// TestErrors: bad arguments, a missing list, and an unreachable Redis are
// errors — never a run that clears every card.
func TestErrors(t *testing.T) {
	dead := "127.0.0.1:" + strconv.Itoa(redistest.FreePort(t)) // nothing listens there
	for _, tc := range []struct {
		name     string
		edit     func(c *config)
		mentions string
	}{
		{"p zero", func(c *config) { c.p = 0 }, "-p 0"},
		{"p one", func(c *config) { c.p = 1 }, "-p 1"},
		{"share", func(c *config) { c.blockedShare = 1.5 }, "-blocked-share 1.5"},
		{"checks", func(c *config) { c.checks = -1 }, "-checks -1"},
		{"blocked", func(c *config) { c.blocked = -1 }, "-blocked -1"},
		{"empty", func(c *config) { c.blocked = 0 }, "blocklist is empty"},
		{"no list", func(c *config) { c.list = filepath.Join(t.TempDir(), "none.txt") }, "none.txt"},
		{"no redis", func(c *config) { c.redisAddr = dead }, dead},
		{"no name", func(c *config) { c.redisAddr, c.name = dead, "" }, "-name"},
	} {
		cfg := tiny(filepath.Join(t.TempDir(), "db"))
		tc.edit(&cfg)
		if r, err := run(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), tc.mentions) {
			t.Errorf("%s: %+v, %v; want an error mentioning %q", tc.name, r, err, tc.mentions)
		}
	}
}

// TestBadRedisAddress runs the program, as a process of its own, against
// an address where no Redis listens (a loopback port just closed): its
// standard error is one line naming the address, and nothing of
// go-redis's own logging.
func TestBadRedisAddress(t *testing.T) {
	if os.Getenv("BLOCKLIST_MAIN") == "1" {
		os.Args = append([]string{"blocklist"}, strings.Fields(os.Getenv("BLOCKLIST_ARGS"))...)
		main()
		return
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	cmd := exec.Command(os.Args[0], "-test.run=^TestBadRedisAddress$")
	cmd.Env = append(os.Environ(), "BLOCKLIST_MAIN=1", "BLOCKLIST_ARGS=-redis "+addr+" -blocked 10 -checks 10")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("exit %v, want status 1; stderr %q", err, stderr.String())
	}
	want := "blocklist: -redis " + addr + ": no Redis answers there: "
	if msg := stderr.String(); !strings.HasPrefix(msg, want) || strings.Count(msg, "\n") != 1 {
		t.Errorf("stderr %q, want one line beginning %q", msg, want)
	}
	if stdout.Len() > 0 {
		t.Errorf("stdout %q, want nothing", stdout.String())
	}
}
