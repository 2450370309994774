package redisbloom

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/bloomkv/bloomkv/bloom"
	"github.com/redis/go-redis/v9"
)

// MaxBits is the largest filter Redis can hold: a string value is at most
// 512 MiB, 2^32 bits, so bit offsets run from 0 to 2^32−1.
const MaxBits = 1 << 32

// formatVersion is the layout version stored in the meta hash's format field.
const formatVersion = "1"

// maxPositionsPerScript bounds the bit positions one script call handles, so
// that a huge batch does not block Redis for long; larger batches are split
// into several scripts sent in one pipeline.
const maxPositionsPerScript = 8192

// Filter is a handle on a Bloom filter stored in Redis under a name. It
// holds no bits, only the filter's parameters and the client, so any number
// of handles in any number of processes share one filter, and a Filter is
// safe for concurrent use.
type Filter struct {
	rdb  redis.UniversalClient
	name string
	keys []string // meta, bits: the scripts' KEYS
	m    uint64
	k    int
	n    uint64
	p    float64
	// The m and k the scripts compare with the meta hash's fields, as the
	// strings stored there.
	mArg, kArg string
}

// Keys returns the names of the two Redis keys of the filter called name:
// its meta hash and its bits string.
func Keys(name string) (meta, bits string) {
	return "bloom:{" + name + "}:meta", "bloom:{" + name + "}:bits"
}

func tmpKey(name string) string { return "bloom:{" + name + "}:tmp" }

func checkName(name string) error {
	if name == "" || strings.Contains(name, "}") {
		return &bloom.ArgumentError{Arg: "name", Value: strconv.Quote(name),
			Reason: "a filter name must be non-empty and contain no '}', which would split its keys' hash tag"}
	}
	return nil
}

// Create opens the filter called name, creating it empty, sized for n items
// at false-positive rate p (bloom.ClassicParams), if it does not exist. If
// it exists with the same size and probes it is opened as is, so replicas
// that all call Create at start agree on one filter; if it exists with
// others, the error wraps ErrConflict and says what differs. Invalid n or p,
// or a filter larger than MaxBits, return a *bloom.ArgumentError.
func Create(ctx context.Context, rdb redis.UniversalClient, name string, n int, p float64) (*Filter, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	m, k, err := bloom.ClassicParams(n, p)
	if err != nil {
		return nil, err
	}
	if m > MaxBits {
		return nil, &bloom.ArgumentError{Arg: "n", Value: n, Reason: fmt.Sprintf(
			"at p = %v the filter needs %d bits, more than the %d a Redis string holds", p, m, uint64(MaxBits))}
	}
	want := meta{format: formatVersion, m: m, k: k, n: uint64(n), p: p}
	f, _, err := runMeta(ctx, rdb, name, "create", want, nil)
	return f, err
}

// Open opens the existing filter called name, reading its parameters from
// Redis. A missing filter returns an error wrapping ErrNotFound.
func Open(ctx context.Context, rdb redis.UniversalClient, name string) (*Filter, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	f, _, err := runMeta(ctx, rdb, name, "open", meta{}, nil)
	return f, err
}

// Delete removes the filter called name, both keys at once, whatever state
// they are in; handles still open on it then fail with ErrNotFound. Deleting
// a missing filter is not an error.
func Delete(ctx context.Context, rdb redis.UniversalClient, name string) error {
	if err := checkName(name); err != nil {
		return err
	}
	metaKey, bitsKey := Keys(name)
	_, err := withContext(ctx, func() (int64, error) {
		return rdb.Del(ctx, metaKey, bitsKey, tmpKey(name)).Result()
	})
	if err != nil {
		return opError("delete", name, err)
	}
	return nil
}

// meta is the content of a filter's meta hash.
type meta struct {
	format string
	m      uint64
	k      int
	n      uint64
	p      float64
}

func (x meta) args() []any {
	return []any{x.format, strconv.FormatUint(x.m, 10), strconv.Itoa(x.k),
		strconv.FormatUint(x.n, 10), strconv.FormatFloat(x.p, 'g', -1, 64)}
}

// runMeta runs metaScript in mode for the filter name and returns a handle
// with the parameters stored in Redis, and for "export" the bitmap.
func runMeta(ctx context.Context, rdb redis.UniversalClient, name, mode string, want meta, bitmap []byte) (*Filter, string, error) {
	metaKey, bitsKey := Keys(name)
	keys := []string{metaKey, bitsKey, tmpKey(name)}
	args := append([]any{mode}, want.args()...)
	if mode == "import" {
		args = append(args, bitmap)
	}
	reply, err := withContext(ctx, func() (any, error) {
		return metaScript.Run(ctx, rdb, keys, args...).Result()
	})
	if err != nil {
		return nil, "", opError(mode, name, err)
	}
	vals, ok := reply.([]any)
	if !ok || len(vals) < 6 {
		return nil, "", fmt.Errorf("redisbloom: %s %q: unexpected reply %v", mode, name, reply)
	}
	str := make([]string, len(vals))
	for i, v := range vals {
		if str[i], ok = v.(string); !ok {
			return nil, "", fmt.Errorf("redisbloom: %s %q: unexpected reply %v", mode, name, reply)
		}
	}
	got, err := parseMeta(str[1:6])
	if err != nil {
		return nil, "", fmt.Errorf("%w: %s %q: %v", ErrCorrupt, mode, name, err)
	}
	if str[0] == "conflict" {
		return nil, "", fmt.Errorf("%w: %s %q: %s", ErrConflict, mode, name, conflictDetail(got, want))
	}
	if got.format != formatVersion {
		return nil, "", fmt.Errorf("%w: %s %q: stored format version %q, this package reads %q",
			ErrConflict, mode, name, got.format, formatVersion)
	}
	f := &Filter{
		rdb: rdb, name: name, keys: keys[:2],
		m: got.m, k: got.k, n: got.n, p: got.p,
		mArg: strconv.FormatUint(got.m, 10), kArg: strconv.Itoa(got.k),
	}
	var bits string
	if mode == "export" {
		if len(str) < 7 {
			return nil, "", fmt.Errorf("redisbloom: %s %q: reply lacks the bitmap", mode, name)
		}
		bits = str[6]
	}
	return f, bits, nil
}

// parseMeta reads the fields format, m, k, n, p as the meta hash stores
// them, refusing values no Create or ToRedis writes.
func parseMeta(s []string) (meta, error) {
	var x meta
	var err error
	x.format = s[0]
	if x.m, err = strconv.ParseUint(s[1], 10, 64); err != nil || x.m < 1 || x.m > MaxBits {
		return x, fmt.Errorf("field m = %q is not a size in [1, %d]", s[1], uint64(MaxBits))
	}
	k, err := strconv.Atoi(s[2])
	if err != nil || k < 1 || k > bloom.MaxProbes {
		return x, fmt.Errorf("field k = %q is not a probe count in [1, %d]", s[2], bloom.MaxProbes)
	}
	x.k = k
	if x.n, err = strconv.ParseUint(s[3], 10, 64); err != nil {
		return x, fmt.Errorf("field n = %q is not a count", s[3])
	}
	if x.p, err = strconv.ParseFloat(s[4], 64); err != nil || !(x.p >= 0 && x.p < 1) {
		return x, fmt.Errorf("field p = %q is not a rate in [0, 1)", s[4])
	}
	return x, nil
}

// conflictDetail says how the stored filter differs from the one asked for.
func conflictDetail(got, want meta) string {
	var diff []string
	if got.format != want.format {
		diff = append(diff, fmt.Sprintf("format version %s, not %s", got.format, want.format))
	}
	if got.m != want.m {
		diff = append(diff, fmt.Sprintf("m = %d bits, not %d", got.m, want.m))
	}
	if got.k != want.k {
		diff = append(diff, fmt.Sprintf("k = %d probes, not %d", got.k, want.k))
	}
	return fmt.Sprintf("the stored filter (sized for n = %d at p = %v) has %s", got.n, got.p, strings.Join(diff, " and "))
}

// Name returns the filter's name.
func (f *Filter) Name() string { return f.name }

// Bits returns m, the filter's size in bits.
func (f *Filter) Bits() uint64 { return f.m }

// Probes returns k, the number of bits per item.
func (f *Filter) Probes() int { return f.k }

// ExpectedItems returns the n the filter was sized for, or 0 if it was sized
// by bits (imported by ToRedis).
func (f *Filter) ExpectedItems() uint64 { return f.n }

// TargetRate returns the false-positive rate p the filter was sized for, or
// 0 if it was sized by bits (imported by ToRedis).
func (f *Filter) TargetRate() float64 { return f.p }

// Add inserts items, in one round trip. On error some of them may have been
// added; adding is idempotent, so the call can be retried.
func (f *Filter) Add(ctx context.Context, items ...[]byte) error {
	_, err := f.run(ctx, "add", hashItems(items))
	return err
}

// AddHashes is Add for the items whose bloom.Hash values are hashes.
func (f *Filter) AddHashes(ctx context.Context, hashes ...uint64) error {
	_, err := f.run(ctx, "add", hashes)
	return err
}

// MayContain reports, in one round trip, for each item whether it may have
// been added: false is certain, true is wrong with the filter's
// false-positive rate. On any error it returns a nil slice, never false.
func (f *Filter) MayContain(ctx context.Context, items ...[]byte) ([]bool, error) {
	return f.run(ctx, "get", hashItems(items))
}

// MayContainHashes is MayContain for the items whose bloom.Hash values are
// hashes.
func (f *Filter) MayContainHashes(ctx context.Context, hashes ...uint64) ([]bool, error) {
	return f.run(ctx, "get", hashes)
}

// TestAndAdd inserts items, in one round trip, and reports for each whether
// it may have been present before — before this call, or earlier in items.
// Each item's test and add are one atomic step in Redis, so of concurrent
// calls with the same new item exactly one reports false (unless the item
// is a false positive). On any error it returns a nil slice; some items may
// have been added.
func (f *Filter) TestAndAdd(ctx context.Context, items ...[]byte) ([]bool, error) {
	return f.run(ctx, "test", hashItems(items))
}

// TestAndAddHashes is TestAndAdd for the items whose bloom.Hash values are
// hashes.
func (f *Filter) TestAndAddHashes(ctx context.Context, hashes ...uint64) ([]bool, error) {
	return f.run(ctx, "test", hashes)
}

// LoadFactor returns the fraction of the filter's bits that are set, in one
// round trip: one BITCOUNT over the bits key, in the script that first
// checks the filter is still the one this handle opened. After n distinct
// items it is expected near 1 − e^(−kn/m), about one half at the n the
// filter was sized for; well above that, more went in than it was sized
// for and its false-positive rate has grown. BITCOUNT reads the whole
// bitmap, up to 512 MiB, and Redis serves nothing else meanwhile, so call
// it to monitor a large filter, not per request.
func (f *Filter) LoadFactor(ctx context.Context) (float64, error) {
	reply, err := withContext(ctx, func() (any, error) {
		return opScript.Run(ctx, f.rdb, f.keys, f.mArg, f.kArg, "count").Result()
	})
	if err != nil {
		return 0, opError("load factor", f.name, err)
	}
	set, ok := reply.(int64)
	if !ok || set < 0 || uint64(set) > f.m {
		return 0, fmt.Errorf("%w: load factor %q: BITCOUNT of %v for a filter of %d bits", ErrCorrupt, f.name, reply, f.m)
	}
	return float64(set) / float64(f.m), nil
}

func hashItems(items [][]byte) []uint64 {
	hashes := make([]uint64, len(items))
	for i, item := range items {
		hashes[i] = bloom.Hash(item)
	}
	return hashes
}

var opNames = map[string]string{"add": "add", "get": "query", "test": "test-and-add"}

// run runs opScript in mode over the items of hashes, one script per
// maxPositionsPerScript positions, all in one round trip, and returns one
// answer per item (none for "add").
func (f *Filter) run(ctx context.Context, mode string, hashes []uint64) ([]bool, error) {
	if len(hashes) == 0 {
		if mode == "add" {
			return nil, nil
		}
		return []bool{}, nil
	}
	perScript := max(1, maxPositionsPerScript/f.k)
	calls := make([][]any, 0, (len(hashes)+perScript-1)/perScript)
	locs := make([]uint64, 0, f.k)
	for start := 0; start < len(hashes); start += perScript {
		chunk := hashes[start:min(start+perScript, len(hashes))]
		args := make([]any, 3, 3+len(chunk)*f.k)
		args[0], args[1], args[2] = f.mArg, f.kArg, mode
		for _, h := range chunk {
			locs = bloom.ClassicLocations(locs[:0], h, f.m, f.k)
			for _, i := range locs {
				args = append(args, i)
			}
		}
		calls = append(calls, args)
	}
	replies, err := withContext(ctx, func() ([]any, error) {
		return evalAll(ctx, f.rdb, opScript, f.keys, calls)
	})
	if err != nil {
		return nil, opError(opNames[mode], f.name, err)
	}
	if mode == "add" {
		return nil, nil
	}
	answers := make([]bool, 0, len(hashes))
	for _, reply := range replies {
		vals, ok := reply.([]any)
		if !ok {
			return nil, fmt.Errorf("redisbloom: %s %q: unexpected reply %T", opNames[mode], f.name, reply)
		}
		for _, v := range vals {
			bit, ok := v.(int64)
			if !ok || (bit != 0 && bit != 1) {
				return nil, fmt.Errorf("redisbloom: %s %q: unexpected reply value %v", opNames[mode], f.name, v)
			}
			answers = append(answers, bit == 1)
		}
	}
	if len(answers) != len(hashes) {
		return nil, fmt.Errorf("redisbloom: %s %q: %d answers for %d items", opNames[mode], f.name, len(answers), len(hashes))
	}
	return answers, nil
}

// evalAll runs script once per element of calls, with those arguments, in
// one round trip, and returns the replies in order or the first error. Like
// (*redis.Script).Run it sends EVALSHA and falls back to EVAL when the
// server lacks the script (NOSCRIPT); a script refused so never ran, so
// running it again is safe even for a test-and-add.
func evalAll(ctx context.Context, rdb redis.UniversalClient, script *redis.Script, keys []string, calls [][]any) ([]any, error) {
	if len(calls) == 1 {
		v, err := script.Run(ctx, rdb, keys, calls[0]...).Result()
		if err == nil && v == nil {
			err = errNoReply
		}
		if err != nil {
			return nil, err
		}
		return []any{v}, nil
	}
	cmds := make([]*redis.Cmd, len(calls))
	// A pipeline's error is also set on its commands, except when go-redis
	// fails to connect on its last retry: then the commands are left with
	// neither a reply nor an error, and only this error says why.
	pipeErr := make([]error, len(calls))
	_, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, args := range calls {
			cmds[i] = script.EvalSha(ctx, p, keys, args...)
		}
		return nil
	})
	for i := range pipeErr {
		pipeErr[i] = err
	}
	var again []int
	for i, c := range cmds {
		if redis.HasErrorPrefix(c.Err(), "NOSCRIPT") {
			again = append(again, i)
		}
	}
	if len(again) > 0 {
		_, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for _, i := range again {
				cmds[i] = script.Eval(ctx, p, keys, calls[i]...)
			}
			return nil
		})
		for _, i := range again {
			pipeErr[i] = err
		}
	}
	replies := make([]any, len(cmds))
	for i, c := range cmds {
		v, err := c.Result()
		if err == nil && v == nil {
			err = pipeErr[i]
			if err == nil {
				err = errNoReply
			}
		}
		if err != nil {
			return nil, err
		}
		replies[i] = v
	}
	return replies, nil
}

// errNoReply reports a script that returned nothing, which the scripts
// here never do: they return a table or an error.
var errNoReply = errors.New("redisbloom: no reply from Redis")
