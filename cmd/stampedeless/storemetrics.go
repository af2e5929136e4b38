package main

import (
	"github.com/stampedeless/stampedeless/engine"
	"github.com/stampedeless/stampedeless/metrics"
)

// registerStoreMetrics exports the envelope store's metrics in r. It lives
// where the two are wired, so that metrics imports no package of the
// project.
func registerStoreMetrics(r *metrics.Registry, s *engine.Store) {
	stat := func(field func(engine.Stats) int64) func() float64 {
		return func() float64 { return float64(field(s.Stats())) }
	}
	r.Gauge("keys", "Live keys in the store (DBSIZE).", func() float64 { return float64(s.Len()) })
	r.Gauge("memory_cost_bytes", "Bytes charged against --max-memory: keys, values and a fixed per-entry overhead for the record header, the index and the eviction policy.",
		stat(func(st engine.Stats) int64 { return st.Cost }))
	r.Gauge("memory_max_bytes", "The memory bound, --max-memory.",
		stat(func(st engine.Stats) int64 { return st.MaxCost }))
	r.Gauge("memory_arena_bytes", "Memory mapped for records (keys, values, deadlines), outside Go's heap.",
		stat(func(st engine.Stats) int64 { return st.ArenaBytes }))
	r.Gauge("memory_arena_live_bytes", "Bytes of live records in the arena; the rest is freed space that compaction wins back.",
		stat(func(st engine.Stats) int64 { return st.ArenaLiveBytes }))
	r.Gauge("memory_arena_fragmentation_ratio", "Arena memory mapped divided by what live records take (1: none wasted).",
		func() float64 {
			st := s.Stats()
			return float64(st.ArenaBytes) / float64(max(st.ArenaLiveBytes, 1))
		})
	r.Gauge("memory_index_bytes", "Memory of the store's key indexes.",
		stat(func(st engine.Stats) int64 { return st.IndexBytes }))
	r.Gauge("memory_sketch_bytes", "Memory of the LFU eviction policies' frequency sketch.",
		stat(func(st engine.Stats) int64 { return st.SketchBytes }))
	r.Counter("arena_compactions_total", "Arena segments whose live records were moved so the segment could be unmapped.",
		stat(func(st engine.Stats) int64 { return st.Compactions }))
	r.Counter("keyspace_hits_total", "Reads that found a live key.",
		stat(func(st engine.Stats) int64 { return st.Hits }))
	r.Counter("keyspace_misses_total", "Reads that found no live key.",
		stat(func(st engine.Stats) int64 { return st.Misses }))
	r.Counter("evicted_keys_total", "Keys removed by the eviction policy to stay under --max-memory.",
		stat(func(st engine.Stats) int64 { return st.Evicted }))
	r.Counter("expired_keys_total", "Keys removed because their deadline passed.",
		stat(func(st engine.Stats) int64 { return st.Expired }))
}
