package rangefilter_test

import (
	"fmt"

	"github.com/bloomkv/bloomkv/rangefilter"
)

// A table writer adds its keys in order and stores the encoded filter; a
// reader decodes it once and asks it before it seeks the table for a
// short scan. The mapping reads these keys as two numbers, the user's 3
// values and the event's 1000 (digits every key shares cost nothing), so
// that 3000 keys fit the universe 16 bits per key buy: the filter keeps
// them exactly, in 5 bits per key.
func Example() {
	b, err := rangefilter.NewBuilder(16)
	if err != nil {
		panic(err)
	}
	for _, user := range []int{3, 17, 42} {
		for event := range 1000 {
			key := fmt.Sprintf("user%04d/event%010d", user, 1000*event) // events 0, 1000, 2000, …
			if err := b.Add([]byte(key)); err != nil {
				panic(err)
			}
		}
	}
	data, err := b.Finish()
	if err != nil {
		panic(err)
	}
	f, err := rangefilter.Decode(data)
	if err != nil {
		panic(err) // the table is damaged: err wraps rangefilter.ErrCorrupt
	}
	for _, r := range [][2]string{
		{"user0017/event0000005000", "user0017/event0000005001"}, // holds event 5000
		{"user0017/event0000005001", "user0017/event0000005033"}, // between two events
		{"user0018/", "user0042/"},                               // no user 18 to 41
		{"user0042/event0000999000", "user0042/f"},               // user 42's last event
		{"user0042/f", "user9"},                                  // past every key
	} {
		fmt.Printf("[%s, %s): %v\n", r[0], r[1], f.MayContainRange([]byte(r[0]), []byte(r[1])))
	}
	fmt.Printf("%d keys, %.1f bits per key, exact: %v\n", f.Keys(), f.BitsPerKey(), f.Exact())
	// Output:
	// [user0017/event0000005000, user0017/event0000005001): true
	// [user0017/event0000005001, user0017/event0000005033): false
	// [user0018/, user0042/): false
	// [user0042/event0000999000, user0042/f): true
	// [user0042/f, user9): false
	// 3000 keys, 5.0 bits per key, exact: true
}

// The bound on false positives for a range of ℓ integers at B bits per
// key is ℓ/2^(B−2): at 16 bits, 0.2% for a scan of 32 keys. Keys dense
// enough to fit the universe those bits buy — a table of consecutive
// integers — are kept exactly, in fewer bits.
func ExampleFilter_FalsePositiveBound() {
	for _, step := range []int{1, 1_000_003} {
		b, _ := rangefilter.NewBuilder(16)
		for i := range 10_000 {
			_ = b.Add(fmt.Appendf(nil, "%016d", 5_000_000+i*step))
		}
		data, _ := b.Finish()
		f, _ := rangefilter.Decode(data)
		fmt.Printf("step %d: exact %v, bound at width 32 %.4f, %.1f bits per key\n",
			step, f.Exact(), f.FalsePositiveBound(32), f.BitsPerKey())
	}
	// Output:
	// step 1: exact true, bound at width 32 0.0000, 2.3 bits per key
	// step 1000003: exact false, bound at width 32 0.0020, 16.5 bits per key
}
