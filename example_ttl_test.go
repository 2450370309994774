package bloomkv_test

import (
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/bloomkv/bloomkv"
	"github.com/bloomkv/bloomkv/vfs"
)

// handClock is a bloomkv.Clock moved by hand, as a test's: its reading
// is shared with the DB's background work, hence atomic.
type handClock struct{ ns atomic.Int64 }

func (c *handClock) Now() time.Time          { return time.Unix(0, c.ns.Load()).UTC() }
func (c *handClock) advance(d time.Duration) { c.ns.Add(int64(d)) }

// A key written with a time-to-live reads until its expiry, and from then
// on as deleted: the older value it overwrote does not come back. The
// clock is one the example moves, so the expiry is exact.
func ExampleDB_PutWithTTL() {
	clock := new(handClock)
	clock.ns.Store(time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC).UnixNano())
	db, err := bloomkv.Open("example", &bloomkv.Options{FS: vfs.NewMem(), Clock: clock})
	if err != nil {
		panic(err)
	}
	defer db.Close()
	key := []byte("session/42")
	if err := db.Put(key, []byte("guest"), nil); err != nil {
		panic(err)
	}
	if err := db.PutWithTTL(key, []byte("alice"), time.Minute, nil); err != nil {
		panic(err)
	}
	clock.advance(time.Minute - time.Nanosecond)
	v, err := db.Get(key)
	fmt.Printf("a minute less a nanosecond on: %q, %v\n", v, err)

	clock.advance(time.Nanosecond)
	_, err = db.Get(key)
	fmt.Println("a minute on:", errors.Is(err, bloomkv.ErrNotFound))
	tr, err := db.Explain(key)
	if err != nil {
		panic(err)
	}
	fmt.Println(tr.Summary())
	// Output:
	// a minute less a nanosecond on: "alice", <nil>
	// a minute on: true
	// no block read, expired at 2026-12-05T12:01:00Z in memtable
}
