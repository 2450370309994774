// Package humanize renders quantities for people: byte counts in binary
// units with three significant digits, as the DB's metrics and the
// command-line tool print them, and reads them back (ParseBytes), as the
// tools' size flags take them.
package humanize

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Bytes renders n bytes: "512 B", "1.14 MiB", "52.2 KiB", "105 KiB".
func Bytes(n uint64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	value, exp := float64(n)/unit, 0
	for value >= unit && exp < 5 {
		value /= unit
		exp++
	}
	prefix := "KMGTPE"[exp]
	switch {
	case value < 10:
		return fmt.Sprintf("%.2f %ciB", value, prefix)
	case value < 100:
		return fmt.Sprintf("%.1f %ciB", value, prefix)
	}
	return fmt.Sprintf("%.0f %ciB", value, prefix)
}

// ParseBytes reads a byte count written as a number with an optional unit
// — B, KiB, MiB, GiB (K, KB, M, MB, G, GB too, all powers of 1024), in
// any case, with or without a space — as Bytes writes it: "1.5MiB",
// "36.0 MiB", "512".
func ParseBytes(v string) (int64, error) {
	v = strings.TrimSpace(v)
	i := strings.IndexFunc(v, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	num, unit := v, ""
	if i >= 0 {
		num, unit = v[:i], strings.ToLower(strings.TrimSpace(v[i:]))
	}
	x, err := strconv.ParseFloat(num, 64)
	if err != nil || x < 0 {
		return 0, fmt.Errorf("bad size %q", v)
	}
	mult := map[string]float64{"": 1, "b": 1, "k": 1 << 10, "kb": 1 << 10, "kib": 1 << 10,
		"m": 1 << 20, "mb": 1 << 20, "mib": 1 << 20, "g": 1 << 30, "gb": 1 << 30, "gib": 1 << 30}[unit]
	if mult == 0 {
		return 0, fmt.Errorf("bad size unit in %q (want B, KiB, MiB or GiB)", v)
	}
	return int64(math.Round(x * mult)), nil
}
