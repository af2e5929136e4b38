package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/stampedeless/stampedeless/internal/memsize"
)

// The typed churn (-churn-types) writes, into a fresh server of each kind
// at each bound of -churn-bounds, ten times what the bound holds of one
// kind of value, and compares their RSS with the sizing rule (1.15 times
// the bound plus 24 MiB) and INFO used_memory with the bound.

// churnKind is one workload of the typed churn.
type churnKind struct {
	name string
	what string // for the report
	// write writes the workload's commands for a bound of bound bytes and
	// returns how many it wrote (each has one reply).
	write func(w io.Writer, bound int64) (int, error)
}

// churnValue is a value of n bytes that compresses to nothing and differs
// from its neighbours only in its first bytes.
func churnValue(n int) []byte { return bytes.Repeat([]byte{'v'}, n) }

var (
	churnStrings = churnKind{name: "strings", what: "SET of random keys (10M), 100-byte values", write: func(w io.Writer, bound int64) (int, error) {
		n := int(10 * bound / 200)
		v := churnValue(100)
		r := rand.New(rand.NewPCG(1, 1))
		return n, writeEach(w, n, func(bw *bufio.Writer, i int) {
			writeCommand(bw, []byte("SET"), randKey("key:", r, 10_000_000), v)
		})
	}}
	// At most 4M SADDs: a set of at most 128 small members is rewritten
	// whole on every SADD, so this is the slowest workload, and 8M at a
	// 64 MiB bound outlast the pipe's timeout on a busy machine.
	churnSets = churnKind{name: "sets", what: "SADD of random members (10M) to random sets (20k), ten times what fits, at most 4M", write: func(w io.Writer, bound int64) (int, error) {
		n := int(min(10*bound/80, 4<<20))
		r := rand.New(rand.NewPCG(2, 2))
		return n, writeEach(w, n, func(bw *bufio.Writer, i int) {
			writeCommand(bw, []byte("SADD"), randKey("set:", r, 20_000), randKey("m:", r, 10_000_000))
		})
	}}
	// Lists grow in place at their tail, as a queue or a log does.
	churnLists = churnKind{name: "lists", what: "RPUSH of a 100-byte element to random lists (20k)", write: func(w io.Writer, bound int64) (int, error) {
		n := int(10 * bound / 120)
		v := churnValue(100)
		r := rand.New(rand.NewPCG(4, 4))
		return n, writeEach(w, n, func(bw *bufio.Writer, i int) {
			writeCommand(bw, []byte("RPUSH"), randKey("list:", r, 20_000), v)
		})
	}}
	// Sorted sets as the sets' workload: a small one is rewritten whole on
	// every ZADD, so at most 4M of them.
	churnZSets = churnKind{name: "zsets", what: "ZADD of random members (10M) with random scores to random sorted sets (20k), ten times what fits, at most 4M", write: func(w io.Writer, bound int64) (int, error) {
		n := int(min(10*bound/90, 4<<20))
		r := rand.New(rand.NewPCG(5, 5))
		return n, writeEach(w, n, func(bw *bufio.Writer, i int) {
			writeCommand(bw, []byte("ZADD"), randKey("zset:", r, 20_000), strconv.AppendInt(nil, r.Int64N(1_000_000), 10), randKey("m:", r, 10_000_000))
		})
	}}
	churnHashes = churnKind{name: "hashes", what: "HSET of one 4 KB field to random keys (10M)", write: func(w io.Writer, bound int64) (int, error) {
		n := int(10 * bound / 4096)
		v := churnValue(4096)
		r := rand.New(rand.NewPCG(3, 3))
		return n, writeEach(w, n, func(bw *bufio.Writer, i int) {
			writeCommand(bw, []byte("HSET"), randKey("hash:", r, 10_000_000), []byte("data"), v)
		})
	}}
	churnFields = churnKind{name: "fields", what: "HSET of 200 fields of 100 bytes each to new keys", write: func(w io.Writer, bound int64) (int, error) {
		n := int(10 * bound / (200 * 110))
		return n, writeEach(w, n, writeFieldHash)
	}}
	// churnMixed is the sequence, into one server.
	churnMixed = churnKind{name: "mixed", what: "the sets', then the hashes', then the fields' workload, into one server", write: func(w io.Writer, bound int64) (int, error) {
		total := 0
		for _, k := range []churnKind{churnSets, churnHashes, churnFields} {
			n, err := k.write(w, bound)
			if err != nil {
				return total, err
			}
			total += n
		}
		return total, nil
	}}
)

var churnKinds = []churnKind{churnStrings, churnSets, churnHashes, churnFields, churnLists, churnZSets, churnMixed}

func churnKindNamed(name string) churnKind {
	for _, k := range churnKinds {
		if k.name == name {
			return k
		}
	}
	return churnKind{}
}

var fieldValue = churnValue(100)

// writeFieldHash writes HSET fh:i with 200 fields of 100 bytes.
func writeFieldHash(bw *bufio.Writer, i int) {
	args := [][]byte{[]byte("HSET"), []byte("fh:" + strconv.Itoa(i))}
	for j := range 200 {
		args = append(args, []byte("f:"+strconv.Itoa(j)), fieldValue)
	}
	writeCommand(bw, args...)
}

func randKey(prefix string, r *rand.Rand, n int) []byte {
	return strconv.AppendInt([]byte(prefix), r.Int64N(int64(n)), 10)
}

// writeEach writes n commands, the i-th by write.
func writeEach(w io.Writer, n int, write func(bw *bufio.Writer, i int)) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	for i := range n {
		write(bw, i)
	}
	return bw.Flush()
}

// typedChurnTest runs every workload of -churn-types at every bound of
// -churn-bounds against redis-server allkeys-lfu and stampedeless.
func (h *harness) typedChurnTest(ctx context.Context) error {
	type row struct {
		bound        string
		kind         churnKind
		redis, stamp boundMemory
	}
	var rows []row
	for _, boundMem := range strings.Split(h.opts.churnBounds, ",") {
		bound, err := memsize.Parse(boundMem)
		if err != nil {
			return fmt.Errorf("-churn-bounds: %w", err)
		}
		for _, name := range strings.Split(h.opts.churnTypes, ",") {
			kind := churnKindNamed(name)
			if kind.write == nil {
				return fmt.Errorf("-churn-types: no workload %q", name)
			}
			r := row{bound: boundMem, kind: kind}
			for _, b := range []boundServer{boundRedisLFU, boundStampedeless} {
				m, err := h.churnOne(ctx, b, boundMem, bound, kind)
				if err != nil {
					return err
				}
				if b == boundRedisLFU {
					r.redis = m
				} else {
					r.stamp = m
				}
			}
			rows = append(rows, r)
		}
	}
	fmt.Fprintf(h.out, "\n### Memory under typed churn at a bound\n\n")
	fmt.Fprintf(h.out, "Each workload writes about ten times what the bound holds, through `redis-cli --pipe`, into a fresh redis-server (`maxmemory`, allkeys-lfu) and a fresh stampedeless (`--max-memory`). RSS is VmRSS %v after the last reply, peak is VmHWM; the targets are stampedeless's RSS and peak ≤ 1.15 × bound + 24 MiB (the limit) and its INFO used_memory ≤ bound; a miss of any is a FAIL in Notes.\n\n", churnSettle)
	for _, k := range churnKinds {
		fmt.Fprintf(h.out, "- %s: %s\n", k.name, k.what)
	}
	fmt.Fprintln(h.out)
	fmt.Fprintln(h.out, "| bound | workload | redis-server RSS MiB | redis-server peak MiB | redis-server keys | stampedeless RSS MiB | stampedeless peak MiB | stampedeless keys | used_memory MiB | limit MiB | RSS ≤ limit | used_memory ≤ bound | peak ≤ limit |")
	fmt.Fprintln(h.out, "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|:-:|:-:|:-:|")
	for _, r := range rows {
		bound, _ := memsize.Parse(r.bound)
		limit := int64(1.15*float64(bound)) + 24<<20
		fmt.Fprintf(h.out, "| %s | %s | %.1f | %.1f | %d | %.1f | %.1f | %d | %.1f | %.1f | %s | %s | %s |\n", r.bound, r.kind.name,
			mib(r.redis.rss), mib(r.redis.peak), r.redis.dbsize, mib(r.stamp.rss), mib(r.stamp.peak), r.stamp.dbsize,
			mib(r.stamp.used), mib(limit), mark(r.stamp.rss <= limit), mark(r.stamp.used <= bound), mark(r.stamp.peak <= limit))
		if r.stamp.rss > limit || r.stamp.used > bound || r.stamp.peak > limit {
			h.fail("typed churn %s at %s: stampedeless RSS %.1f MiB, peak %.1f MiB (limit %.1f), used_memory %.1f MiB (bound %.1f)",
				r.kind.name, r.bound, mib(r.stamp.rss), mib(r.stamp.peak), mib(limit), mib(r.stamp.used), mib(bound))
		}
	}
	return nil
}

// churnSettle is how long after the last reply the typed churn reads RSS.
const churnSettle = 2 * time.Second

// churnOne runs kind into a fresh server b at the bound and measures it.
func (h *harness) churnOne(ctx context.Context, b boundServer, boundMem string, bound int64, kind churnKind) (boundMemory, error) {
	var m boundMemory
	var s *server
	var err error
	if b.policy == "" {
		s, err = h.startStampedelessWith(ctx, boundMem)
	} else {
		s, err = h.startRedis(ctx, "--maxmemory", boundMem, "--maxmemory-policy", b.policy)
	}
	if err != nil {
		return m, err
	}
	defer s.Stop()
	// Count the commands first: the pipe checks that each was answered.
	n, _ := kind.write(io.Discard, bound)
	h.logf("typed churn: %d commands (%s) into %s at %s", n, kind.name, b.label, boundMem)
	errs, replies, err := h.pipe(ctx, s, n, func(w io.Writer) error { _, err := kind.write(w, bound); return err })
	if err != nil {
		return m, fmt.Errorf("typed churn %s on %s: %w", kind.name, b.label, err)
	}
	if errs != 0 || replies != int64(n) {
		h.fail("typed churn %s on %s at %s: errors %d, replies %d, want 0 and %d", kind.name, b.label, boundMem, errs, replies, n)
	}
	if err := sleep(ctx, churnSettle-time.Second); err != nil { // measureBound waits another second
		return m, err
	}
	m, err = h.measureBound(ctx, s)
	h.logf("typed churn: %s at %s on %s: RSS %.1f MiB, peak %.1f MiB, used_memory %.1f MiB, %d keys",
		kind.name, boundMem, b.label, mib(m.rss), mib(m.peak), mib(m.used), m.dbsize)
	return m, err
}
