package redisbloom

import (
	"bytes"
	"context"
	"fmt"

	"github.com/bloomkv/bloomkv/bloom"
	"github.com/redis/go-redis/v9"
)

// ToRedis adds every item of the local filter to the Redis filter called
// name, creating it with local's size and probes if it does not exist, and
// returns a handle on it. An existing filter must have the same size and
// probes (else the error wraps ErrConflict); its bits are ORed with local's,
// as bloom.(*Classic).Union does, so no item of either is lost. It is one
// atomic script; the bitmap, up to 512 MiB, travels as one argument.
//
// A filter created so records n = 0 and p = 0: a bloom.Classic does not
// tell the n and p it was sized for.
func ToRedis(ctx context.Context, rdb redis.UniversalClient, name string, local *bloom.Classic) (*Filter, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	if local.Bits() > MaxBits {
		return nil, &bloom.ArgumentError{Arg: "local", Value: fmt.Sprintf("%d bits", local.Bits()),
			Reason: fmt.Sprintf("more than the %d bits a Redis string holds", uint64(MaxBits))}
	}
	// Redis reads bytes past a string's end as zeros, so trailing zero bytes
	// need not travel.
	bitmap := bytes.TrimRight(local.AppendBitmap(nil), "\x00")
	want := meta{format: formatVersion, m: local.Bits(), k: local.Probes()}
	f, _, err := runMeta(ctx, rdb, name, "import", want, bitmap)
	return f, err
}

// FromRedis returns a local copy of the Redis filter called name: a
// bloom.Classic with its size, probes and bits, read atomically in one
// round trip. A missing filter returns an error wrapping ErrNotFound; a
// bitmap longer than the filter or with bits set past m, one wrapping
// ErrCorrupt.
func FromRedis(ctx context.Context, rdb redis.UniversalClient, name string) (*bloom.Classic, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	f, bits, err := runMeta(ctx, rdb, name, "export", meta{}, nil)
	if err != nil {
		return nil, err
	}
	local, err := bloom.NewClassicFromBitmap(f.m, f.k, []byte(bits))
	if err != nil {
		return nil, fmt.Errorf("%w: export %q: %v", ErrCorrupt, name, err)
	}
	return local, nil
}
