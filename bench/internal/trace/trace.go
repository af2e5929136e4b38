// Package trace makes the key traces that the eviction benchmarks replay:
// bench/policysim straight into the policies, bench/compare end to end into
// the servers. A trace is a sequence of key numbers; the same workload and
// seed give the same sequence everywhere.
package trace

import (
	"math"
	"math/rand/v2"
)

// Workload is a named way of drawing keys.
type Workload struct {
	Name string
	// About says what the workload models, for the reports.
	About string
	// New returns the workload's trace over a key space of keys keys,
	// seeded with seed; length is how many accesses the replay will take
	// (a trace whose hot set moves moves it in phases of it).
	New func(keys, length int, seed uint64) func() uint64
}

// Workloads are the eviction benchmarks' workloads, in report order.
func Workloads() []Workload {
	return []Workload{
		{Name: "zipf-0.99", About: "Zipf(0.99): a few keys take most reads, a long tail takes the rest", New: zipfWorkload(0.99)},
		{Name: "zipf-0.9", About: "Zipf(0.9): a flatter skew", New: zipfWorkload(0.9)},
		{Name: "zipf-0.7", About: "Zipf(0.7): flatter still, most reads in the tail", New: zipfWorkload(0.7)},
		{Name: "scan", About: "Zipf(0.99) with every other read a key never read again (one-hit wonders: a scan polluting the cache)", New: scanWorkload},
		{Name: "loop", About: "a loop over a third of the key space, read in order again and again: larger than the cache, so LRU keeps nothing it will read next", New: loopWorkload},
		{Name: "recency", About: "recency-biased: new keys keep arriving, and a read picks a key exponentially more often the more recently it arrived", New: recencyWorkload},
		{Name: "shift", About: "Zipf(0.99) whose hot set moves to other keys four times during the trace", New: shiftWorkload},
	}
}

// Find returns the workload named name.
func Find(name string) (Workload, bool) {
	for _, w := range Workloads() {
		if w.Name == name {
			return w, true
		}
	}
	return Workload{}, false
}

func zipfWorkload(theta float64) func(keys, length int, seed uint64) func() uint64 {
	return func(keys, _ int, seed uint64) func() uint64 {
		z := NewZipf(rand.New(rand.NewPCG(seed, 7)), uint64(keys), theta)
		return z.Next
	}
}

// scanWorkload interleaves a Zipf(0.99) trace over the key space with keys
// above it, each read once.
func scanWorkload(keys, _ int, seed uint64) func() uint64 {
	z := NewZipf(rand.New(rand.NewPCG(seed, 7)), uint64(keys), 0.99)
	once := uint64(keys)
	odd := false
	return func() uint64 {
		odd = !odd
		if odd {
			once++
			return once
		}
		return z.Next()
	}
}

// loopWorkload reads keys 0 to keys/3-1 in order, again and again.
func loopWorkload(keys, _ int, _ uint64) func() uint64 {
	n, i := uint64(max(keys/3, 1)), uint64(0)
	return func() uint64 {
		k := i % n
		i++
		return k
	}
}

// recencyWorkload: a new key arrives every fourth read; a read picks the key
// that arrived an exponentially distributed number of arrivals ago (mean
// keys/40), so what arrived lately is hot and cools as others arrive.
func recencyWorkload(keys, _ int, seed uint64) func() uint64 {
	r := rand.New(rand.NewPCG(seed, 7))
	mean := float64(max(keys/40, 1))
	var t uint64
	return func() uint64 {
		t++
		newest := t / 4
		back := uint64(r.ExpFloat64() * mean)
		if back > newest {
			back = newest
		}
		return newest - back
	}
}

// shiftWorkload is Zipf(0.99) whose ranks map to other keys in each fifth
// of the trace.
func shiftWorkload(keys, length int, seed uint64) func() uint64 {
	z := NewZipf(rand.New(rand.NewPCG(seed, 7)), uint64(keys), 0.99)
	phase := uint64(max(length/5, 1))
	var t uint64
	return func() uint64 {
		t++
		offset := (t / phase) * uint64(keys) / 5
		return (z.Next() + offset) % uint64(keys)
	}
}

// Zipf draws from 0 to n-1, rank 0 the most frequent, with skew theta below
// 1: Gray et al.'s method, as YCSB draws its keys.
type Zipf struct {
	r                              *rand.Rand
	n                              uint64
	theta, alpha, zetan, eta, half float64
}

// NewZipf returns a Zipf over n keys drawing from r. It sums n terms once.
func NewZipf(r *rand.Rand, n uint64, theta float64) *Zipf {
	zeta := func(n uint64) float64 {
		var sum float64
		for i := uint64(1); i <= n; i++ {
			sum += 1 / math.Pow(float64(i), theta)
		}
		return sum
	}
	z := &Zipf{r: r, n: n, theta: theta, alpha: 1 / (1 - theta), zetan: zeta(n)}
	z.eta = (1 - math.Pow(2/float64(n), 1-theta)) / (1 - zeta(2)/z.zetan)
	z.half = 1 + math.Pow(0.5, theta)
	return z
}

// Next draws a key.
func (z *Zipf) Next() uint64 {
	u := z.r.Float64()
	uz := u * z.zetan
	switch {
	case uz < 1:
		return 0
	case uz < z.half:
		return 1
	}
	return min(uint64(float64(z.n)*math.Pow(z.eta*u-z.eta+1, z.alpha)), z.n-1)
}
