package race

import (
	"flag"
	"testing"
)

var sizeFlag = flag.Int("race.testsize", 40, "a size for TestSize")

func TestSize(t *testing.T) {
	want := 40
	if Enabled {
		want = 10
	}
	if got := Size("race.testsize", *sizeFlag, 10); got != want {
		t.Errorf("Size at the flag's default = %d, want %d (Enabled %v)", got, want, Enabled)
	}
	if got := Size("race.testsize", *sizeFlag, 100); got != 40 {
		t.Errorf("Size with underRace above n = %d, want n, 40", got)
	}
	if err := flag.Set("race.testsize", "40"); err != nil {
		t.Fatal(err)
	}
	if got := Size("race.testsize", *sizeFlag, 10); got != 40 {
		t.Errorf("Size of a flag set on the command line = %d, want it kept, 40", got)
	}
}
