// Command policymem measures what a key costs the store beside its key and
// value bytes, the figure engine.EntryOverhead charges: its record's header
// and the room its size class leaves in the arena, its slot and access
// stamp in its shard's index, and its share of the LFU policies' frequency
// sketch. It measures a store of -keys keys added once, and one at a
// -bound under a churn of new keys, where the index and the arena hold the
// slack that deletions leave. Run from the repository root:
//
//	go run ./bench/policymem -keys 1000000
package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/metrics"

	"github.com/stampedeless/stampedeless/engine"
	"github.com/stampedeless/stampedeless/internal/memsize"
)

func main() {
	keys := flag.Int("keys", 1000000, "keys of the store filled once")
	boundFlag := flag.String("bound", "64mb", "bound of the churned store")
	churn := flag.Int("churn", 3000000, "SETs of new keys into the churned store")
	valueSize := flag.Int("d", 100, "value size in bytes")
	flag.Parse()
	bound, err := memsize.Parse(*boundFlag)
	check(err)
	value := make([]byte, *valueSize)
	key := func(n uint64) []byte { return fmt.Appendf(nil, "key:%012d", n) } // 16 bytes
	payload := int64(16 + *valueSize)

	fmt.Printf("Keys of 16 bytes, values of %d; bytes a key beside them (EntryOverhead charges %d).\n\n", *valueSize, engine.EntryOverhead)
	fmt.Println("| store | keys | record header and size-class room | index slot and stamp | sketch | total (charged as) | Go heap + arena mapped, beside the payload |")
	fmt.Println("|---|---:|---:|---:|---:|---:|---:|")

	// Filled once: a bound far above it, so that the sketch exists.
	heap0 := liveHeap()
	s, err := engine.New(engine.Options{MaxMemory: 64 << 30})
	check(err)
	for i := range *keys {
		_, err := s.Set(key(uint64(i)), value, engine.SetOptions{})
		check(err)
	}
	report(s, "filled once, no eviction", payload, heap0)
	s.Close()

	// Churned at the bound.
	heap0 = liveHeap()
	s, err = engine.New(engine.Options{MaxMemory: bound})
	check(err)
	r := rand.New(rand.NewPCG(1, 2))
	for range *churn {
		_, err := s.Set(key(r.Uint64N(10*uint64(*churn))), value, engine.SetOptions{})
		check(err)
	}
	report(s, fmt.Sprintf("%s bound after %d SETs of random keys", *boundFlag, *churn), payload, heap0)
	s.Close()
}

func report(s *engine.Store, name string, payload int64, heap0 uint64) {
	st := s.Stats()
	n := int64(s.Len())
	perKey := func(b int64) float64 { return float64(b) / float64(n) }
	header := st.ArenaLiveBytes - n*payload
	held := int64(liveHeap()-heap0) + st.ArenaBytes
	fmt.Printf("| %s | %d | %.1f | %.1f | %.1f | %.1f (%.1f) | %.1f |\n", name, n,
		perKey(header), perKey(st.IndexBytes), perKey(st.SketchBytes),
		perKey(header+st.IndexBytes+st.SketchBytes), perKey(st.Cost)-float64(payload),
		perKey(held)-float64(payload))
}

// liveHeap is Go's live heap after a collection.
func liveHeap() uint64 {
	runtime.GC()
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "policymem:", err)
		os.Exit(1)
	}
}
