package redisbloom

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"
)

// ErrNotFound is wrapped by the error of Open, FromRedis, and of any call on
// a handle, when no filter of that name exists: it was never created, was
// deleted, or was lost by Redis (a restart without persistence).
var ErrNotFound = errors.New("redisbloom: filter not found")

// ErrConflict is wrapped by the error of Create and ToRedis when a filter of
// that name exists with another size, probe count or format, and by any call
// on a handle whose filter was since recreated with other parameters. The
// error says which values differ.
var ErrConflict = errors.New("redisbloom: conflicting filter parameters")

// ErrCorrupt is wrapped when a filter's keys are damaged: a field of the meta
// hash is missing or out of range, one of the two keys exists without the
// other (an eviction, a hand-made DEL), or the bitmap has bits past m.
var ErrCorrupt = errors.New("redisbloom: damaged filter keys")

// opError wraps err, from operation op on the filter name, so that the
// scripts' own error replies become the sentinels and everything else keeps
// its cause (a redis.Error such as WRONGTYPE, a network error, ctx.Err()).
func opError(op, name string, err error) error {
	var rerr redis.Error
	if errors.As(err, &rerr) {
		msg := rerr.Error()
		for _, s := range []struct {
			code     string
			sentinel error
		}{{codeNotFound, ErrNotFound}, {codeConflict, ErrConflict}, {codeCorrupt, ErrCorrupt}} {
			if detail, ok := strings.CutPrefix(msg, s.code+" "); ok {
				return fmt.Errorf("%w: %s %q: %s", s.sentinel, op, name, detail)
			}
		}
	}
	return fmt.Errorf("redisbloom: %s %q: %w", op, name, err)
}

// withContext runs call, returning as soon as ctx is done even when the
// client would not notice (go-redis ignores deadlines for socket I/O unless
// ContextTimeoutEnabled). call then finishes in the background; its result
// is dropped, which is safe because no caller takes an error as an answer.
// A context already done returns before anything is sent.
func withContext[T any](ctx context.Context, call func() (T, error)) (T, error) {
	var zero T
	if err := ctx.Err(); err != nil {
		return zero, err
	}
	if ctx.Done() == nil { // never done: no need for a goroutine
		return call()
	}
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1) // buffered: an abandoned call does not block
	go func() {
		v, err := call()
		done <- result{v, err}
	}()
	select {
	case r := <-done:
		// A client with ContextTimeoutEnabled fails with a network timeout
		// when the deadline passes; say it was the context's.
		if r.err != nil {
			if cerr := ctx.Err(); cerr != nil && !errors.Is(r.err, cerr) {
				r.err = fmt.Errorf("%w: %w", cerr, r.err)
			}
		}
		return r.v, r.err
	case <-ctx.Done():
		return zero, ctx.Err()
	}
}
