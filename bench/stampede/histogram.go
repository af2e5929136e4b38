package main

import (
	"math/bits"
	"time"
)

// hist is a log-linear latency histogram (64 sub-buckets per power of two,
// under 1.6% error).
type hist [64 * 64]uint32

func bucketOf(ns int64) int {
	if ns < 64 {
		if ns < 0 {
			return 0
		}
		return int(ns)
	}
	e := bits.Len64(uint64(ns)) - 7
	return (e+1)*64 + int(uint64(ns)>>e) - 64
}

func valueOf(b int) time.Duration {
	if b < 64 {
		return time.Duration(b)
	}
	e := b/64 - 1
	return time.Duration(uint64(b%64+64) << e)
}

func (h *hist) add(d time.Duration) { h[bucketOf(int64(d))]++ }

func quantiles(hs []*hist, qs ...float64) []time.Duration {
	var total uint64
	var sum hist
	for _, h := range hs {
		for i, c := range h {
			sum[i] += c
			total += uint64(c)
		}
	}
	out := make([]time.Duration, len(qs))
	if total == 0 {
		return out
	}
	for qi, q := range qs {
		rank := uint64(q * float64(total))
		if rank >= total {
			rank = total - 1
		}
		var seen uint64
		for i, c := range sum {
			seen += uint64(c)
			if seen > rank {
				out[qi] = valueOf(i)
				break
			}
		}
	}
	return out
}
