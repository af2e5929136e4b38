package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
)

// The collections test (-collections) measures the list and sorted-set
// commands issue 21 names, side by side with redis-server in the same
// rounds: redis-benchmark's own LPUSH, LPOP, LRANGE_100, ZADD and ZPOPMIN,
// and ZRANGE, which it has no test of, as a custom command over a sorted
// set prepared before each run. The memory per element of a big list and
// a big sorted set is the list and sorted-set memory tests' (memory.go).

// collTests are redis-benchmark's tests of the collections test, by its
// names (-t).
var collTests = []string{"lpush", "lpop", "lrange_100", "zadd", "zpopmin"}

// collZRange is the custom ZRANGE run: the first 100 members of a sorted
// set of collZRangeMembers, more than zset-max-listpack-entries, so both
// servers hold it as a skiplist.
const (
	collZRangeKey     = "zrange:bench"
	collZRangeMembers = 1000
	collZRangeTest    = "ZRANGE"
)

// collRPSTarget is the target for the collections' throughput:
// at least this fraction of redis-server's.
const collRPSTarget = 0.9

func (h *harness) collectionsTest(ctx context.Context) error {
	var servers []*server
	starts := []func(context.Context) (*server, error){
		func(ctx context.Context) (*server, error) { return h.startRedis(ctx) }, h.startStampedeless,
	}
	if h.opts.baseline != "" {
		// An earlier build in the same rounds: on a shared machine the
		// ratio to redis-server moves with the other work, the ratio of
		// two builds measured side by side much less.
		starts = append(starts, h.startBaseline)
	}
	for _, start := range starts {
		s, err := start(ctx)
		if err != nil {
			return err
		}
		defer s.Stop()
		servers = append(servers, s)
	}
	cfgs := []config{{pipeline: 1, random: true}, {pipeline: 16, random: true}}
	tests := append(slices.Clone(collTests), strings.ToLower(collZRangeTest))
	results := map[key][]sample{}
	for _, s := range servers {
		h.logf("collections: warm-up %s", s.Name)
		if _, err := h.collectionsRun(ctx, s, config{pipeline: 1, random: true}, max(h.opts.n/10, 1000)); err != nil {
			h.fail("collections warm-up of %s: %v", s.Name, err)
			return nil
		}
	}
	pair := 0
	for round := 1; round <= h.opts.rounds && ctx.Err() == nil; round++ {
		for _, c := range cfgs {
			order := append(slices.Clone(servers[pair%len(servers):]), servers[:pair%len(servers)]...)
			pair++
			for _, s := range order {
				n := h.requests(c)
				h.logf("collections: round %d/%d %s %s -n %d", round, h.opts.rounds, s.Name, c, n)
				got, err := h.collectionsRun(ctx, s, c, n)
				if err != nil {
					h.fail("collections test against %s, %s, round %d: %v", s.Name, c, round, err)
					if err := h.healthy(ctx, s); err != nil {
						h.fail("%v; collections test stopped", err)
						h.printCollections(cfgs, tests, results)
						return nil
					}
				}
				for t, smp := range got {
					k := key{s.Name, t, c}
					results[k] = append(results[k], smp)
				}
			}
		}
	}
	h.printCollections(cfgs, tests, results)
	if h.opts.baseline != "" {
		h.printBaseline(cfgs, tests, results)
	}
	return nil
}

// collectionsRun runs the collections test once against s from an empty
// keyspace: redis-benchmark's tests of lists and sorted sets, then ZRANGE
// on a sorted set it prepares.
func (h *harness) collectionsRun(ctx context.Context, s *server, c config, n int) (map[string]sample, error) {
	if _, err := s.do(ctx, "FLUSHALL"); err != nil {
		return nil, fmt.Errorf("FLUSHALL: %w", err)
	}
	got, _, err := h.benchmark(ctx, s, c, collTests, n)
	if err != nil {
		return got, err
	}
	zadd := []string{"ZADD", collZRangeKey}
	for i := range collZRangeMembers {
		zadd = append(zadd, strconv.Itoa(i), fmt.Sprintf("member:%07d", i))
	}
	if _, err := s.do(ctx, zadd...); err != nil {
		return got, fmt.Errorf("preparing %s: %w", collZRangeKey, err)
	}
	zr, _, err := h.benchmarkArgs(ctx, s, []string{"-n", strconv.Itoa(n), "-P", strconv.Itoa(c.pipeline),
		"ZRANGE", collZRangeKey, "0", "99"}, n)
	if err != nil {
		return got, err
	}
	// A custom command's row is named by its whole command line.
	smp, ok := zr[fmt.Sprintf("ZRANGE %s 0 99", collZRangeKey)]
	if !ok || smp.rps <= 0 {
		return got, fmt.Errorf("no ZRANGE result in %v", zr)
	}
	got[collZRangeTest] = smp
	return got, nil
}

func (h *harness) printCollections(cfgs []config, tests []string, results map[key][]sample) {
	fmt.Fprintf(h.out, "\n### Lists and sorted sets: throughput and p99 latency\n\n")
	fmt.Fprintf(h.out, "`redis-benchmark -t %s -c %d -d %d -r %d`, then `redis-benchmark ... ZRANGE %s 0 99` over a sorted set of %d members (scores 0 to %d) made before each run; -n %d at -P 1 and %d at -P 16, from an empty keyspace each run; median of %d rounds, servers taking turns to go first. (`-r` draws ZADD's members from a million, so ZPOPMIN pops from a big set; the list tests use one key whatever `-r` is.)\n\n",
		strings.Join(collTests, ","), h.opts.clients, h.opts.dataSize, h.opts.random, collZRangeKey, collZRangeMembers, collZRangeMembers-1,
		h.opts.n, h.opts.n*pipelineScale, h.opts.rounds)
	h.printSpeedRows(cfgs, tests, results, func(config) float64 { return collRPSTarget })
}

// listMemoryTest loads one list of -list-elements elements
// (member:0000000 on, 14 bytes, as the sorted-set test's members) by
// RPUSHes of 1,000 and compares the servers' memory per element.
func (h *harness) listMemoryTest(ctx context.Context) error {
	n := h.opts.listSize
	results, err := h.measureEach(ctx, false, memLoad{what: fmt.Sprintf("one list of %d elements", n),
		keys: n, replies: n / collBatch, dbsize: 1, purge: true,
		write: func(w io.Writer) error {
			return writeBatches(w, "RPUSH", "list", n, func(args [][]byte, j int) [][]byte {
				return append(args, fmt.Appendf(nil, "member:%07d", j))
			})
		}})
	if err != nil {
		return err
	}
	h.printElementMemory(fmt.Sprintf("one list of %d elements (RPUSH of 1,000 elements of 14 bytes at a time)", n), "element", n, results)
	return nil
}

// streamMemoryTest loads one stream of -stream-entries entries, each one
// field and value (f, member:0000000 on, as the list's elements), by one
// XADD with an automatic ID each, and compares the servers' memory per
// entry: redis-server's radix tree of listpacks against stampedeless's
// entries on the Go heap.
func (h *harness) streamMemoryTest(ctx context.Context) error {
	n := h.opts.streamSize
	results, err := h.measureEach(ctx, false, memLoad{what: fmt.Sprintf("one stream of %d entries", n),
		keys: n, replies: n, dbsize: 1, purge: true,
		write: func(w io.Writer) error {
			bw := bufio.NewWriterSize(w, 1<<20)
			for j := range n {
				writeCommand(bw, []byte("XADD"), []byte("stream"), []byte("*"), []byte("f"), fmt.Appendf(nil, "member:%07d", j))
			}
			return bw.Flush()
		}})
	if err != nil {
		return err
	}
	h.printElementMemory(fmt.Sprintf("one stream of %d entries (XADD stream * f member:0000000 on, one entry per command)", n), "entry", n, results)
	return nil
}

// collBatch is how many elements one command of the list and sorted-set
// memory tests adds.
const collBatch = 1000

// writeBatches writes the commands cmd key ... that add n elements,
// collBatch at a time, add appending the arguments of element j.
func writeBatches(w io.Writer, cmd, key string, n int, add func(args [][]byte, j int) [][]byte) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	args := make([][]byte, 2, 2+2*collBatch)
	args[0], args[1] = []byte(cmd), []byte(key)
	for i := 0; i < n; i += collBatch {
		args = args[:2]
		for j := i; j < min(i+collBatch, n); j++ {
			args = add(args, j)
		}
		writeCommand(bw, args...)
	}
	return bw.Flush()
}

// zsetMembers writes the sorted-set memory test's ZADDs: members
// member:0000000 on, with pseudo-random scores.
func zsetMembers(w io.Writer, n int) error {
	rng := rand.New(rand.NewPCG(1, 2))
	return writeBatches(w, "ZADD", "zset", n, func(args [][]byte, j int) [][]byte {
		return append(args, strconv.AppendFloat(nil, rng.Float64()*1e6, 'g', -1, 64), fmt.Appendf(nil, "member:%07d", j))
	})
}

// elemTarget is the target for memory per element of a list or a
// sorted set: at most this multiple of redis-server's.
const elemTarget = 1.5

// printElementMemory prints a list or sorted-set memory test: per server,
// RSS and used_memory before and after, and each's growth per element,
// with stampedeless's ratios to redis-server's against the target.
func (h *harness) printElementMemory(what, unit string, n int, results []memResult) {
	fmt.Fprintf(h.out, "\n### Memory after %s\n\n", what)
	fmt.Fprintf(h.out, "Fresh server each, loaded with `redis-cli --pipe`; VmRSS 1 s after the load; `used_memory` from INFO memory before and after, each read after a `MEMORY PURGE` (which on stampedeless runs a collection: its used_memory is the live heap as of the last one, plus the arena's live records). Per %s: the growth of each over %d of them.\n\n", unit, n)
	fmt.Fprintf(h.out, "| server | RSS before MiB | RSS after MiB | peak RSS MiB | RSS bytes/%s | used_memory before MiB | used_memory after MiB | used_memory bytes/%s | load s |\n", unit, unit)
	fmt.Fprintln(h.out, "|---|---:|---:|---:|---:|---:|---:|---:|---:|")
	byName := map[string]memResult{}
	for _, m := range results {
		byName[m.server] = m
		fmt.Fprintf(h.out, "| %s | %.1f | %.1f | %.1f | %.0f | %.1f | %.1f | %.0f | %.1f |\n",
			m.server, mib(m.rssBefore), mib(m.rssAfter), mib(m.peak), m.perKey(n),
			mib(m.usedBefore), mib(m.usedAfter()), m.usedPerKey(n), m.load.Seconds())
	}
	r, s := byName[redisName], byName[stampName]
	if r.perKey(n) <= 0 || r.usedPerKey(n) <= 0 {
		return
	}
	rss, used := s.perKey(n)/r.perKey(n), s.usedPerKey(n)/r.usedPerKey(n)
	fmt.Fprintf(h.out, "\nstampedeless/redis-server bytes per %s: RSS **%.2f** %s, used_memory **%.2f** %s (target ≤ %.1f).\n",
		unit, rss, mark(rss <= elemTarget), used, mark(used <= elemTarget), elemTarget)
}
