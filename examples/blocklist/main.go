// Command blocklist is the fraud-blocklist pre-check: a payment service
// keeps the cards it refuses in a bloomkv database, the source of truth,
// and puts a Bloom filter in front of it, so that the common case — a card
// that is not blocked — is answered from memory without a store lookup.
// The filter never says "absent" for a blocked card; when it says "maybe",
// the store decides, so a false positive costs one lookup and never refuses
// a good card.
//
//	go run ./examples/blocklist [-db DIR] [-list FILE | -blocked N] [-checks N]
//	                            [-blocked-share F] [-p RATE] [-redis ADDR [-name NAME]] [-verify]
//
// The blocklist is read from the database's card/ keys. An empty database
// is filled first, from -list (one card per line) or with -blocked
// generated card numbers; without -db the database lives in a temporary
// directory removed at exit. The filter is a local bloom.Classic, or with
// -redis a filter shared in Redis through bloom/redisbloom, which every
// replica of the service would use; it is filled from the store's keys
// (adding is idempotent, so a restart adds them again harmlessly). Then
// -checks payments are checked, -blocked-share of them with blocked cards,
// and the program reports how many store lookups the filter saved and how
// many of its "maybe" answers were false positives. With -verify it also
// looks up every card the filter cleared, to show that none was blocked.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"

	"github.com/bloomkv/bloomkv"
	"github.com/bloomkv/bloomkv/bloom"
	"github.com/bloomkv/bloomkv/bloom/redisbloom"
	"github.com/redis/go-redis/v9"
)

// config is the command line.
type config struct {
	dir          string  // the database; "" for a temporary one
	list         string  // a file of cards to load into an empty database
	blocked      int     // cards to generate into an empty database without -list
	checks       int     // payments to check
	blockedShare float64 // the share of payments made with blocked cards
	p            float64 // the filter's target false-positive rate
	redisAddr    string  // a Redis server for the shared filter; "" for a local one
	name         string  // the shared filter's name in Redis
	seed         uint64  // the generated cards and payments
	verify       bool    // look up the cards the filter cleared, too
}

// report is what a run counted.
type report struct {
	Stored        int     // cards in the store's blocklist
	Filter        string  // which filter stood in front, and its size
	LoadFactor    float64 // the filter's fraction of bits set
	ExpectedFPR   float64 // the rate its load factor predicts: LoadFactor^k
	Checks        int     // payments checked
	Cleared       int     // the filter said absent: allowed, no store lookup (saved)
	Lookups       int     // the filter said maybe: confirmed against the store
	Refused       int     // of those, the store holds the card: payment refused
	FalsePositive int     // of those, the store does not: allowed after the lookup
	Verified      int     // -verify: cleared cards looked up anyway, all absent
}

// keyPrefix is where the blocklist lives in the store: card/NUMBER → reason.
const keyPrefix = "card/"

func main() {
	// go-redis logs each failed dial of its pool on its own, lines this
	// program's one error already covers: it reports what failed itself.
	redis.SetLogger(quietLogger{})
	os.Exit(runMain(os.Args[1:], os.Stdout, os.Stderr))
}

// quietLogger is go-redis's logger in this program: it prints nothing.
type quietLogger struct{}

func (quietLogger) Printf(context.Context, string, ...any) {}

// runMain runs the command line args and returns the exit code: 0, 1 for a
// failure, 2 for a bad command line.
func runMain(args []string, stdout, stderr io.Writer) int {
	var cfg config
	fs := flag.NewFlagSet("blocklist", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are printed once, below; -h's usage to stdout
	fs.StringVar(&cfg.dir, "db", "", "the bloomkv database holding the blocklist (default: a temporary one)")
	fs.StringVar(&cfg.list, "list", "", "a file of card numbers, one per line, to load into an empty database")
	fs.IntVar(&cfg.blocked, "blocked", 10_000, "card numbers to generate into an empty database when there is no -list")
	fs.IntVar(&cfg.checks, "checks", 100_000, "payments to check")
	fs.Float64Var(&cfg.blockedShare, "blocked-share", 0.01, "the share of payments made with blocked cards, in [0, 1]")
	fs.Float64Var(&cfg.p, "p", 0.01, "the filter's target false-positive rate, in (0, 1)")
	fs.StringVar(&cfg.redisAddr, "redis", "", "host:port of a Redis server: share the filter there instead of keeping it in memory")
	fs.StringVar(&cfg.name, "name", "blocklist", "the shared filter's name in Redis")
	fs.Uint64Var(&cfg.seed, "seed", 1, "the seed of the generated cards and payments")
	fs.BoolVar(&cfg.verify, "verify", false, "also look up every card the filter cleared, to show none is blocked")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stdout, "usage: blocklist [flags]\n\nflags:")
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			return 0
		}
		fmt.Fprintln(stderr, "blocklist:", err)
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "blocklist: unexpected arguments %q\n", fs.Args())
		return 2
	}
	r, err := run(context.Background(), cfg)
	if err != nil {
		fmt.Fprintln(stderr, "blocklist:", err)
		return 1
	}
	r.print(stdout)
	return 0
}

// run opens (or makes) the store, fills the filter from it and checks the
// payments.
func run(ctx context.Context, cfg config) (_ report, err error) {
	if err := cfg.validate(); err != nil {
		return report{}, err
	}
	dir := cfg.dir
	if dir == "" {
		tmp, err := os.MkdirTemp("", "blocklist-*")
		if err != nil {
			return report{}, err
		}
		defer os.RemoveAll(tmp) // made by this run, so its own to remove
		dir = filepath.Join(tmp, "db")
	}
	db, err := bloomkv.Open(dir, nil)
	if err != nil {
		return report{}, err
	}
	defer func() {
		if cerr := db.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}()

	cards, err := storedCards(db)
	if err != nil {
		return report{}, err
	}
	if len(cards) == 0 {
		if err := fillStore(db, cfg); err != nil {
			return report{}, err
		}
		if cards, err = storedCards(db); err != nil {
			return report{}, err
		}
	}
	if len(cards) == 0 {
		return report{}, errors.New("the blocklist is empty: nothing to check against")
	}

	filter, err := newFilter(ctx, cfg, len(cards))
	if err != nil {
		return report{}, err
	}
	defer filter.close()
	if err := filter.add(ctx, cards); err != nil {
		return report{}, err
	}
	r := report{Stored: len(cards), Filter: filter.describe()}
	if r.LoadFactor, err = filter.loadFactor(ctx); err != nil {
		return report{}, err
	}
	r.ExpectedFPR = math.Pow(r.LoadFactor, float64(filter.probes()))

	payments := paymentCards(cfg, cards)
	const batch = 512 // cards per filter query: one Redis round trip each
	for start := 0; start < len(payments); start += batch {
		chunk := payments[start:min(start+batch, len(payments))]
		maybe, err := filter.mayContain(ctx, chunk)
		if err != nil {
			// Never treat an unanswered query as "absent": fail instead
			// (a service would fall back to the store for every card).
			return report{}, err
		}
		for i, card := range chunk {
			if err := r.check(db, card, maybe[i], cfg.verify); err != nil {
				return report{}, err
			}
		}
	}
	return r, nil
}

// check counts one payment: cleared by the filter, or looked up.
func (r *report) check(db *bloomkv.DB, card []byte, maybe, verify bool) error {
	r.Checks++
	if !maybe {
		r.Cleared++
		if verify {
			blocked, err := inStore(db, card)
			if err != nil {
				return err
			}
			if blocked {
				return fmt.Errorf("the filter cleared blocked card %s: a false negative", card)
			}
			r.Verified++
		}
		return nil
	}
	r.Lookups++
	blocked, err := inStore(db, card)
	if err != nil {
		return err
	}
	if blocked {
		r.Refused++
	} else {
		r.FalsePositive++
	}
	return nil
}

// inStore reports whether the store's blocklist holds card.
func inStore(db *bloomkv.DB, card []byte) (bool, error) {
	_, err := db.Get(append([]byte(keyPrefix), card...))
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, bloomkv.ErrNotFound):
		return false, nil
	}
	return false, err
}

func (cfg config) validate() error {
	switch {
	case cfg.checks < 0:
		return fmt.Errorf("-checks %d: must not be negative", cfg.checks)
	case cfg.blocked < 0:
		return fmt.Errorf("-blocked %d: must not be negative", cfg.blocked)
	case !(cfg.blockedShare >= 0 && cfg.blockedShare <= 1):
		return fmt.Errorf("-blocked-share %v: must be in [0, 1]", cfg.blockedShare)
	case !(cfg.p > 0 && cfg.p < 1):
		return fmt.Errorf("-p %v: must be in (0, 1)", cfg.p)
	}
	return nil
}

// storedCards returns the card numbers of the store's blocklist, in key
// order.
func storedCards(db *bloomkv.DB) ([][]byte, error) {
	var cards [][]byte
	// The keys from "card/" up to "card0", '0' being the byte after '/'.
	err := db.Scan([]byte(keyPrefix), []byte("card0"), func(key, _ []byte) error {
		cards = append(cards, []byte(strings.TrimPrefix(string(key), keyPrefix)))
		return nil
	})
	return cards, err
}

// fillStore writes the blocklist into an empty store, from cfg.list or
// generated, in one atomic batch.
func fillStore(db *bloomkv.DB, cfg config) error {
	var cards []string
	if cfg.list != "" {
		f, err := os.Open(cfg.list)
		if err != nil {
			return err
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if card := strings.TrimSpace(sc.Text()); card != "" {
				cards = append(cards, card)
			}
		}
		if err := sc.Err(); err != nil {
			return fmt.Errorf("%s: %w", cfg.list, err)
		}
	} else {
		rng := rand.New(rand.NewPCG(cfg.seed, 1))
		for range cfg.blocked {
			cards = append(cards, cardNumber(rng))
		}
	}
	b := bloomkv.NewBatch()
	for _, card := range cards {
		if err := b.Set([]byte(keyPrefix+card), []byte("reported stolen")); err != nil {
			return err
		}
	}
	return db.Apply(b, nil) // nil: durable
}

// cardNumber draws a 16-digit card number.
func cardNumber(rng *rand.Rand) string { return fmt.Sprintf("4%015d", rng.Uint64N(1e15)) }

// paymentCards draws the cards of cfg.checks payments: a share
// cfg.blockedShare from the blocklist, the rest new numbers (almost never
// on the list; the store decides either way).
func paymentCards(cfg config, blocked [][]byte) [][]byte {
	rng := rand.New(rand.NewPCG(cfg.seed, 2))
	out := make([][]byte, cfg.checks)
	for i := range out {
		if rng.Float64() < cfg.blockedShare {
			out[i] = blocked[rng.IntN(len(blocked))]
		} else {
			out[i] = []byte(cardNumber(rng))
		}
	}
	return out
}

// prefilter is the filter in front of the store: local or in Redis.
type prefilter interface {
	add(ctx context.Context, cards [][]byte) error
	mayContain(ctx context.Context, cards [][]byte) ([]bool, error)
	loadFactor(ctx context.Context) (float64, error)
	probes() int
	describe() string
	close()
}

// newFilter returns the filter for n cards at rate cfg.p.
func newFilter(ctx context.Context, cfg config, n int) (prefilter, error) {
	if cfg.redisAddr == "" {
		f, err := bloom.NewClassic(n, cfg.p)
		if err != nil {
			return nil, err
		}
		return localFilter{f}, nil
	}
	if cfg.name == "" {
		return nil, errors.New("-name: the shared filter needs a name")
	}
	rdb := redis.NewClient(&redis.Options{Addr: cfg.redisAddr, ContextTimeoutEnabled: true})
	// One question first, so that an address with no Redis behind it is
	// one error naming it, not a failure deep in the filter's first call.
	if err := rdb.Ping(ctx).Err(); err != nil {
		_ = rdb.Close()
		return nil, fmt.Errorf("-redis %s: no Redis answers there: %v", cfg.redisAddr, err)
	}
	f, err := redisbloom.Create(ctx, rdb, cfg.name, n, cfg.p)
	if errors.Is(err, redisbloom.ErrConflict) {
		err = fmt.Errorf("%w (the shared filter was made for another blocklist size; choose another -name)", err)
	}
	if err != nil {
		_ = rdb.Close()
		return nil, err
	}
	return sharedFilter{f, rdb}, nil
}

type localFilter struct{ f *bloom.Classic }

func (l localFilter) add(_ context.Context, cards [][]byte) error {
	for _, c := range cards {
		l.f.Add(c)
	}
	return nil
}

func (l localFilter) mayContain(_ context.Context, cards [][]byte) ([]bool, error) {
	out := make([]bool, len(cards))
	for i, c := range cards {
		out[i] = l.f.MayContain(c)
	}
	return out, nil
}

func (l localFilter) loadFactor(context.Context) (float64, error) { return l.f.LoadFactor(), nil }
func (l localFilter) probes() int                                 { return l.f.Probes() }
func (l localFilter) close()                                      {}
func (l localFilter) describe() string {
	return fmt.Sprintf("local bloom.Classic, %d bits (%d bytes), %d probes", l.f.Bits(), l.f.SizeBytes(), l.f.Probes())
}

type sharedFilter struct {
	f   *redisbloom.Filter
	rdb *redis.Client
}

func (s sharedFilter) add(ctx context.Context, cards [][]byte) error {
	const batch = 4096 // one round trip each
	for start := 0; start < len(cards); start += batch {
		if err := s.f.Add(ctx, cards[start:min(start+batch, len(cards))]...); err != nil {
			return err
		}
	}
	return nil
}

func (s sharedFilter) mayContain(ctx context.Context, cards [][]byte) ([]bool, error) {
	return s.f.MayContain(ctx, cards...)
}

func (s sharedFilter) loadFactor(ctx context.Context) (float64, error) { return s.f.LoadFactor(ctx) }
func (s sharedFilter) probes() int                                     { return s.f.Probes() }
func (s sharedFilter) close()                                          { _ = s.rdb.Close() }
func (s sharedFilter) describe() string {
	return fmt.Sprintf("Redis-shared filter %q, %d bits, %d probes", s.f.Name(), s.f.Bits(), s.f.Probes())
}

func (r report) print(w io.Writer) {
	fmt.Fprintf(w, "blocklist: %d cards in the store\n", r.Stored)
	fmt.Fprintf(w, "filter:    %s; load factor %.3f, expected false-positive rate %.3f%%\n", r.Filter, r.LoadFactor, 100*r.ExpectedFPR)
	fmt.Fprintf(w, "payments checked:           %d\n", r.Checks)
	fmt.Fprintf(w, "  cleared by the filter:    %d (store lookups saved: %.1f%%)\n", r.Cleared, pct(r.Cleared, r.Checks))
	fmt.Fprintf(w, "  \"maybe\", store looked up: %d\n", r.Lookups)
	fmt.Fprintf(w, "    blocked, refused:       %d\n", r.Refused)
	fmt.Fprintf(w, "    false positives:        %d (%.3f%% of the %d good cards)\n", r.FalsePositive, pct(r.FalsePositive, r.Checks-r.Refused), r.Checks-r.Refused)
	if r.Verified > 0 {
		fmt.Fprintf(w, "  verified: the store holds none of the %d cleared cards\n", r.Verified)
	}
}

func pct(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return 100 * float64(a) / float64(b)
}
