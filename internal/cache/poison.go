package cache

import "github.com/bloomkv/bloomkv/internal/race"

// poisonFreed, in race-detector builds (the test suite's), overwrites each
// block's buffer when it is freed, so that a reader using a block after
// releasing it reads garbage and fails its checks, instead of reading the
// stale bytes by luck: the race detector does not watch memory outside
// the Go heap.
const poisonFreed = race.Enabled
