// Command policymem measures what ristretto's bookkeeping costs per key in
// the configurations the engine could use it in, on Go's heap after a
// collection: the engine's (Cache[uint64, struct{}] knowing only hashes and
// costs) with its sketch sized as the engine sizes it and smaller, and
// ristretto's store holding each key's record location (Cache[uint64,
// uint64]), as it would if it served as the index. Run from the repository
// root:
//
//	go run ./bench/policymem -keys 1000000
package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"

	"github.com/dgraph-io/ristretto/v2"
)

func main() {
	keys := flag.Int("keys", 1000000, "hashes each configuration tracks")
	flag.Parse()
	n := int64(*keys)
	fmt.Printf("| configuration | NumCounters | heap bytes/key | of which sketch bytes/key |\n|---|---:|---:|---:|\n")
	for _, counters := range []int64{1 << 23, 1 << 22, 2 * n, n, n / 2} {
		measure(fmt.Sprintf("Cache[uint64, struct{}] (the engine's), %d keys", n), n, counters,
			func(c int64) (func(uint64), func()) {
				cache, err := ristretto.NewCache(&ristretto.Config[uint64, struct{}]{
					NumCounters: c, MaxCost: 1 << 62, BufferItems: 64, IgnoreInternalCost: true,
				})
				check(err)
				return func(h uint64) { set(cache, h, struct{}{}) }, cache.Close
			})
	}
	measure(fmt.Sprintf("Cache[uint64, uint64] (its store as the index), %d keys", n), n, 2*n,
		func(c int64) (func(uint64), func()) {
			cache, err := ristretto.NewCache(&ristretto.Config[uint64, uint64]{
				NumCounters: c, MaxCost: 1 << 62, BufferItems: 64, IgnoreInternalCost: true,
			})
			check(err)
			return func(h uint64) { set(cache, h, h) }, cache.Close
		})
}

// set adds h, waiting for ristretto's buffer when it drops the Set.
func set[V any](c *ristretto.Cache[uint64, V], h uint64, v V) {
	for !c.Set(h, v, 100) {
		c.Wait()
	}
}

// measure builds a cache with counters counters, and with none (a sketch
// of one counter) to tell the sketch's share, adds n random hashes to each
// and prints the live heap per key.
func measure(name string, n, counters int64, build func(counters int64) (add func(uint64), close func())) {
	perKey := func(c int64) float64 {
		before := liveHeap()
		add, closeCache := build(c)
		r := rand.New(rand.NewPCG(1, 2))
		for range n {
			add(r.Uint64() | 1)
		}
		after := liveHeap()
		closeCache()
		return float64(after-before) / float64(n)
	}
	total := perKey(counters)
	sketch := total - perKey(1)
	fmt.Printf("| %s | %d | %.0f | %.0f |\n", name, counters, total, sketch)
}

func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "policymem:", err)
		os.Exit(1)
	}
}
