package radar

import (
	"math/bits"
	"time"
)

// histSize is the buckets of a latencyHist: four per power of two of
// microseconds, up to 2^25 µs (33 s); longer loads count in the last.
const histSize = 100

// latencyHist counts load times in buckets four to a power of two, so a
// quantile read from it is within 25% of the true one.
type latencyHist [histSize]uint32

func histIndex(us uint64) int {
	if us < 4 {
		return int(us)
	}
	e := bits.Len64(us) - 1 // 2 or more
	sub := int(us>>(e-2)) & 3
	return min(4*(e-1)+sub, histSize-1)
}

// histUpper is the upper bound of bucket i, in microseconds.
func histUpper(i int) uint64 {
	if i < 4 {
		return uint64(i) + 1
	}
	e := i/4 + 1
	sub := uint64(i % 4)
	return (5 + sub) << (e - 2)
}

func (h *latencyHist) add(d time.Duration) { h[histIndex(uint64(max(d, 0)/time.Microsecond))]++ }

func (h *latencyHist) merge(o *latencyHist) {
	for i, n := range o {
		h[i] += n
	}
}

// quantile is the upper bound of the bucket holding quantile q; zero for
// an empty histogram.
func (h *latencyHist) quantile(q float64) time.Duration {
	var total uint64
	for _, n := range h {
		total += uint64(n)
	}
	if total == 0 {
		return 0
	}
	rank := uint64(q*float64(total) + 0.5)
	rank = max(rank, 1)
	var seen uint64
	for i, n := range h {
		seen += uint64(n)
		if seen >= rank {
			return time.Duration(histUpper(i)) * time.Microsecond
		}
	}
	return time.Duration(histUpper(histSize-1)) * time.Microsecond
}
