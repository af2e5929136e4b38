// Package memsize reads and writes memory sizes in the notation of Redis's
// configuration ("64mb", "1gb") and INFO's *_human fields ("1.50M"), and
// the process's resident memory (Resident).
package memsize

import (
	"fmt"
	"strconv"
	"strings"
)

// Parse parses a memory size as Redis's configuration does: a number
// with an optional unit b, k (1000), kb (1024), m, mb, g or gb, in any case.
func Parse(s string) (int64, error) {
	units := []struct {
		suffix string
		mult   int64
	}{
		{"gb", 1 << 30}, {"mb", 1 << 20}, {"kb", 1 << 10},
		{"g", 1000 * 1000 * 1000}, {"m", 1000 * 1000}, {"k", 1000}, {"b", 1},
	}
	lowered := strings.ToLower(strings.TrimSpace(s))
	mult := int64(1)
	for _, u := range units {
		if strings.HasSuffix(lowered, u.suffix) {
			lowered, mult = strings.TrimSuffix(lowered, u.suffix), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(lowered, 10, 64)
	if err != nil || n < 0 || (n > 0 && mult > (1<<63-1)/n) {
		return 0, fmt.Errorf("argument must be a memory value")
	}
	return n * mult, nil
}

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
