// Package radar is the stampede radar: which keys gather the most origin
// calls, coalesced waiters, stale answers, failures and load time over the
// last minute and the last ten, per loader health over the same windows,
// and reads against origin calls second by second. swr feeds it (the
// Filler's flights, answers and origin calls); FILL.TOP and FILL.RADAR
// (commands/readthrough), `stampedeless top` and the metrics port's status
// page read it.
//
// Keys are counted in Space-Saving summaries of a fixed number of counters
// (summary.go), one per measure per time bucket, so the memory is fixed
// whatever the key space (MemoryBound) and no key ever becomes a metric
// label. The error bound: over a window whose buckets saw weight N of a
// measure, a key with a true weight above N/Capacity is always listed, and
// every listed count is at least the true weight and at most N/Capacity
// above it (Entry.Err is the bound for that key, often smaller).
package radar
