// Command policysim replays the eviction benchmarks' traces
// (bench/internal/trace) straight into eviction policies, in one process,
// and prints their hit ratios side by side: the store's own (engine.Store
// at a memory bound, under allkeys-lfu, allkeys-lru and allkeys-random),
// ristretto's Cache (the reference the store's TinyLFU is measured
// against), and exact LRU and LFU. Every policy is given the same
// capacity: each key costs what the store charges for it (its key, its
// value and engine.EntryOverhead) against the same bound. A read that
// misses writes the key, as a cache-aside client would; the first third
// of each trace warms the caches and is not counted. Run from the
// repository root:
//
//	go run ./bench/policysim -bound 64mb
package main

import (
	"container/list"
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dgraph-io/ristretto/v2"

	"github.com/stampedeless/stampedeless/bench/internal/trace"
	"github.com/stampedeless/stampedeless/engine"
	"github.com/stampedeless/stampedeless/internal/memsize"
)

func main() {
	boundFlag := flag.String("bound", "64mb", "memory bound of every policy, as --max-memory")
	keys := flag.Int("keys", 2000000, "key space of the traces")
	accesses := flag.Int("accesses", 3000000, "reads per trace")
	valueSize := flag.Int("d", 100, "value size in bytes")
	only := flag.String("workloads", "", "comma-separated workloads (default: all): "+workloadNames())
	onlyPolicies := flag.String("policies", "", "comma-separated policies by the start of their names (default: all), e.g. store,exact")
	flag.Parse()
	bound, err := memsize.Parse(*boundFlag)
	if err != nil {
		fail(err)
	}
	cfg := config{bound: bound, keys: *keys, accesses: *accesses, value: make([]byte, *valueSize)}
	policies := []policy{
		storePolicy(engine.AllKeysLFU), storePolicy(engine.AllKeysLRU), storePolicy(engine.AllKeysRandom),
		ristrettoPolicy(), lruPolicy(), lfuPolicy(), oraclePolicy(),
	}
	if *onlyPolicies != "" {
		policies = slices.DeleteFunc(policies, func(p policy) bool {
			for _, prefix := range strings.Split(*onlyPolicies, ",") {
				if strings.HasPrefix(p.name, prefix) {
					return false
				}
			}
			return true
		})
	}
	fmt.Printf("Bound %s, %d-byte values, keys `key:N` over %d, %d reads a trace (the first third not counted); each key costs its bytes + %d.\n\n",
		*boundFlag, *valueSize, *keys, *accesses, engine.EntryOverhead)
	fmt.Print("| workload |")
	for _, p := range policies {
		fmt.Printf(" %s |", p.name)
	}
	fmt.Print("\n|---|")
	for range policies {
		fmt.Print("---:|")
	}
	fmt.Println()
	for _, w := range trace.Workloads() {
		if *only != "" && !strings.Contains(","+*only+",", ","+w.Name+",") {
			continue
		}
		fmt.Printf("| %s |", w.Name)
		for _, p := range policies {
			start := time.Now()
			ratio := replay(cfg, w, p)
			fmt.Fprintf(os.Stderr, "%s %s: %.4f in %v\n", w.Name, p.name, ratio, time.Since(start).Round(time.Millisecond))
			fmt.Printf(" %.4f |", ratio)
		}
		fmt.Println()
	}
}

type config struct {
	bound          int64
	keys, accesses int
	value          []byte
}

// policy makes a cache of a bound in bytes: get reports whether it holds
// key (and counts the read), set adds it at cost.
type policy struct {
	name string
	make func(cfg config, w trace.Workload) (get func(key []byte, n uint64) bool, set func(key []byte, n uint64, cost int64), done func())
}

func replay(cfg config, w trace.Workload, p policy) float64 {
	get, set, done := p.make(cfg, w)
	defer done()
	next := w.New(cfg.keys, cfg.accesses, 42)
	warm := cfg.accesses / 3
	var hits, counted int
	key := make([]byte, 0, 32)
	for i := range cfg.accesses {
		n := next()
		key = strconv.AppendUint(append(key[:0], "key:"...), n, 10)
		hit := get(key, n)
		if !hit {
			set(key, n, int64(len(key)+len(cfg.value))+engine.EntryOverhead)
		}
		if i >= warm {
			counted++
			if hit {
				hits++
			}
		}
	}
	return float64(hits) / float64(max(counted, 1))
}

// storePolicy is the store itself at the bound, under p.
func storePolicy(p engine.EvictionPolicy) policy {
	return policy{name: "store " + p.String(), make: func(cfg config, _ trace.Workload) (func([]byte, uint64) bool, func([]byte, uint64, int64), func()) {
		s, err := engine.New(engine.Options{MaxMemory: cfg.bound, Policy: p})
		if err != nil {
			fail(err)
		}
		get := func(key []byte, _ uint64) bool {
			found := false
			s.View(key, func([]byte) { found = true })
			return found
		}
		set := func(key []byte, _ uint64, _ int64) {
			if _, err := s.Set(key, cfg.value, engine.SetOptions{}); err != nil {
				fail(err)
			}
		}
		return get, set, s.Close
	}}
}

// ristrettoPolicy is ristretto's Cache as its documentation advises
// configuring it: ten counters per key the bound holds, 64 buffer items.
// Each Set is waited for, so that the next read of the key sees it.
func ristrettoPolicy() policy {
	return policy{name: "ristretto", make: func(cfg config, _ trace.Workload) (func([]byte, uint64) bool, func([]byte, uint64, int64), func()) {
		perKey := int64(len("key:")+7+len(cfg.value)) + engine.EntryOverhead
		c, err := ristretto.NewCache(&ristretto.Config[uint64, struct{}]{
			NumCounters:        10 * cfg.bound / perKey,
			MaxCost:            cfg.bound,
			BufferItems:        64,
			IgnoreInternalCost: true,
		})
		if err != nil {
			fail(err)
		}
		get := func(_ []byte, n uint64) bool { _, ok := c.Get(n); return ok }
		set := func(_ []byte, n uint64, cost int64) {
			c.Set(n, struct{}{}, cost)
			c.Wait()
		}
		return get, set, c.Close
	}}
}

// lruPolicy is exact LRU by cost.
func lruPolicy() policy {
	return policy{name: "exact LRU", make: func(cfg config, _ trace.Workload) (func([]byte, uint64) bool, func([]byte, uint64, int64), func()) {
		type entry struct {
			n    uint64
			cost int64
		}
		order := list.New() // front: most recent
		at := map[uint64]*list.Element{}
		var used int64
		get := func(_ []byte, n uint64) bool {
			e, ok := at[n]
			if ok {
				order.MoveToFront(e)
			}
			return ok
		}
		set := func(_ []byte, n uint64, cost int64) {
			for used+cost > cfg.bound && order.Len() > 0 {
				e := order.Back()
				v := order.Remove(e).(entry)
				delete(at, v.n)
				used -= v.cost
			}
			at[n] = order.PushFront(entry{n, cost})
			used += cost
		}
		return get, set, func() {}
	}}
}

// lfuPolicy is exact LFU by cost over the keys held (a key's count starts
// again when it comes back), the least recently used among the least
// frequent going first: O(1) LFU, a list of keys per count.
func lfuPolicy() policy {
	return policy{name: "exact LFU", make: func(cfg config, _ trace.Workload) (func([]byte, uint64) bool, func([]byte, uint64, int64), func()) {
		type entry struct {
			n     uint64
			cost  int64
			count int
		}
		buckets := map[int]*list.List{} // count -> keys, front most recent
		at := map[uint64]*list.Element{}
		minCount := 0
		var used int64
		bucket := func(c int) *list.List {
			b := buckets[c]
			if b == nil {
				b = list.New()
				buckets[c] = b
			}
			return b
		}
		get := func(_ []byte, n uint64) bool {
			e, ok := at[n]
			if !ok {
				return false
			}
			v := e.Value.(entry)
			b := buckets[v.count]
			b.Remove(e)
			if b.Len() == 0 {
				delete(buckets, v.count)
				if minCount == v.count {
					minCount++
				}
			}
			v.count++
			at[n] = bucket(v.count).PushFront(v)
			return true
		}
		set := func(_ []byte, n uint64, cost int64) {
			for used+cost > cfg.bound && len(at) > 0 {
				for buckets[minCount] == nil {
					minCount++
				}
				b := buckets[minCount]
				v := b.Remove(b.Back()).(entry)
				if b.Len() == 0 {
					delete(buckets, minCount)
				}
				delete(at, v.n)
				used -= v.cost
			}
			at[n] = bucket(1).PushFront(entry{n, cost, 1})
			minCount = 1
			used += cost
		}
		return get, set, func() {}
	}}
}

// oraclePolicy knows the whole trace: it holds, from their first read on,
// the keys read most often in it, as many as the bound holds. No policy
// that learns as the trace goes beats it on a trace whose frequencies do
// not change (the Zipf ones): it is the ceiling those hit ratios are
// measured against.
func oraclePolicy() policy {
	return policy{name: "oracle (most read)", make: func(cfg config, w trace.Workload) (func([]byte, uint64) bool, func([]byte, uint64, int64), func()) {
		counts := map[uint64]int{}
		next := w.New(cfg.keys, cfg.accesses, 42)
		for range cfg.accesses {
			counts[next()]++
		}
		keys := make([]uint64, 0, len(counts))
		for n := range counts {
			keys = append(keys, n)
		}
		slices.SortFunc(keys, func(a, b uint64) int { return counts[b] - counts[a] })
		held := map[uint64]bool{}
		var used int64
		for _, n := range keys {
			cost := int64(len("key:")+len(strconv.FormatUint(n, 10))+len(cfg.value)) + engine.EntryOverhead
			if used+cost > cfg.bound {
				break
			}
			used += cost
			held[n] = false // not read yet
		}
		get := func(_ []byte, n uint64) bool {
			seen, ok := held[n]
			if ok && !seen {
				held[n] = true
			}
			return ok && seen
		}
		return get, func([]byte, uint64, int64) {}, func() {}
	}}
}

func workloadNames() string {
	var names []string
	for _, w := range trace.Workloads() {
		names = append(names, w.Name)
	}
	return strings.Join(names, ", ")
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "policysim:", err)
	os.Exit(1)
}
