package race

import "flag"

// Size returns n, a test's size as its flag flagName gives it, or underRace
// under the race detector when that flag was left at its default: -race
// slows the biggest tests tenfold, so it runs them smaller, and `make
// test-plain` runs them again at full size without it. A size set on the
// command line is kept under -race too.
func Size(flagName string, n, underRace int) int {
	if !Enabled || underRace >= n {
		return n
	}
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == flagName })
	if set {
		return n
	}
	return underRace
}
