package bloomkv_test

import (
	"fmt"
	"os"

	"github.com/bloomkv/bloomkv"
)

// Options.RangeFilterBits gives tables range filters: a scan with both
// bounds skips every table whose filter rules its range out, reading
// nothing of it. Here four tables each hold every fourth event of one
// day; a scan of an hour with no events reads none of them, and one of an
// hour with events reads only the table that holds them.
func ExampleOptions_rangeFilterBits() {
	dir := tempDir()
	defer os.RemoveAll(dir)
	db, _ := bloomkv.Open(dir, &bloomkv.Options{
		RangeFilterBits:     []float64{16}, // every level: 16 bits per key
		L0CompactionTrigger: 8,             // keep the four tables apart
	})
	defer db.Close()

	for table := range 4 {
		for minute := table; minute < 24*60; minute += 4 {
			if minute/60 == 13 {
				continue // no events from 13:00 to 14:00
			}
			key := fmt.Sprintf("event/%02d:%02d", minute/60, minute%60)
			db.Put([]byte(key), []byte("v"), bloomkv.NoSync)
		}
		db.Flush()
	}
	scan := func(lo, hi string) {
		before := db.Metrics().Levels[0]
		n := 0
		db.Scan([]byte(lo), []byte(hi), func(k, v []byte) error { n++; return nil })
		after := db.Metrics().Levels[0]
		fmt.Printf("[%s, %s): %d keys, %d of %d tables skipped\n", lo, hi, n,
			after.RangeFilterNegatives-before.RangeFilterNegatives, after.RangeFilterChecks-before.RangeFilterChecks)
	}
	scan("event/13:00", "event/14:00")
	scan("event/14:00", "event/14:02")
	// Output:
	// [event/13:00, event/14:00): 0 keys, 4 of 4 tables skipped
	// [event/14:00, event/14:02): 2 keys, 2 of 4 tables skipped
}
