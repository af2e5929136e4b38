// Package memsize reads and writes memory sizes in the notation of Redis's
// configuration ("64mb", "1gb") and INFO's *_human fields ("1.50M"), and
// the process's resident memory (Resident).
package memsize

import (
	"errors"
	"math"
	"strconv"
	"strings"
)

// Parse parses a memory size as Redis's configuration does (memtoull):
// digits, then nothing or one of the units b, k (1000), kb (1024), m, mb,
// g or gb, in any case. As in Redis, no digits at all ("", "mb") is 0, and
// nothing else is allowed: no sign, spaces, fractions or other units. Sizes
// past the largest int64 are refused, where Redis wraps them.
func Parse(s string) (int64, error) {
	units := map[string]int64{
		"": 1, "b": 1, "k": 1000, "kb": 1 << 10, "m": 1000 * 1000, "mb": 1 << 20,
		"g": 1000 * 1000 * 1000, "gb": 1 << 30,
	}
	digits := 0
	for digits < len(s) && s[digits] >= '0' && s[digits] <= '9' {
		digits++
	}
	mult, ok := units[strings.ToLower(s[digits:])]
	if !ok {
		return 0, errNotMemory
	}
	if digits == 0 {
		return 0, nil
	}
	n, err := strconv.ParseInt(s[:digits], 10, 64)
	if err != nil || n > math.MaxInt64/mult {
		return 0, errNotMemory
	}
	return n * mult, nil
}

// errNotMemory is Redis's CONFIG SET text for a size it cannot read.
var errNotMemory = errors.New("argument must be a memory value")

// Format writes n as Parse reads it, in the largest of the units gb, mb
// and kb that divides it, else in bytes.
func Format(n int64) string {
	for _, u := range []struct {
		suffix string
		size   int64
	}{{"gb", 1 << 30}, {"mb", 1 << 20}, {"kb", 1 << 10}} {
		if n != 0 && n%u.size == 0 {
			return strconv.FormatInt(n/u.size, 10) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10)
}

// Human formats n the way Redis's *_human fields do.
func Human(n int64) string {
	const unit = 1024
	f := float64(n)
	for _, suffix := range []string{"B", "K", "M", "G", "T"} {
		if f < unit || suffix == "T" {
			if suffix == "B" {
				return strconv.FormatInt(n, 10) + "B"
			}
			return strconv.FormatFloat(f, 'f', 2, 64) + suffix
		}
		f /= unit
	}
	return ""
}
