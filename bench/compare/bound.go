package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/stampedeless/stampedeless/bench/internal/trace"
	"github.com/stampedeless/stampedeless/internal/memsize"
)

// The bound tests run the servers at a memory bound: stampedeless with
// --max-memory, redis-server with maxmemory and a maxmemory-policy.

// boundServer is one server configuration of the bound tests.
type boundServer struct {
	label  string // as printed
	policy string // redis-server's maxmemory-policy; "" for stampedeless
}

func (b boundServer) start(ctx context.Context, h *harness) (*server, error) {
	if b.policy == "" {
		return h.startStampedelessWith(ctx, h.opts.boundMem)
	}
	return h.startRedis(ctx, "--maxmemory", h.opts.boundMem, "--maxmemory-policy", b.policy)
}

var (
	boundStampedeless = boundServer{label: "stampedeless (allkeys-lfu)"}
	boundRedisLFU     = boundServer{label: "redis-server allkeys-lfu", policy: "allkeys-lfu"}
	boundRedisLRU     = boundServer{label: "redis-server allkeys-lru", policy: "allkeys-lru"}
)

// boundMemory is what a server holds after a bound test.
type boundMemory struct {
	rss, peak, used, dbsize int64
}

func (h *harness) measureBound(ctx context.Context, s *server) (boundMemory, error) {
	var m boundMemory
	if err := sleep(ctx, time.Second); err != nil {
		return m, err
	}
	var err error
	if m.rss, err = s.rssBytes(); err != nil {
		return m, err
	}
	if m.peak, err = procStatusBytes(s.Pid(), "VmHWM"); err != nil {
		return m, err
	}
	reply, err := s.do(ctx, "DBSIZE")
	if err != nil {
		return m, fmt.Errorf("DBSIZE on %s: %w", s.Name, err)
	}
	m.dbsize, _ = strconv.ParseInt(reply, 10, 64)
	if info, err := s.info(ctx, "memory"); err == nil {
		m.used, _ = strconv.ParseInt(info["used_memory"], 10, 64)
	}
	return m, nil
}

// churnTest writes random keys, many times what fits, into each server at
// the bound, and compares what they hold and what it costs them.
func (h *harness) churnTest(ctx context.Context) error {
	bound, err := memsize.Parse(h.opts.boundMem)
	if err != nil {
		return err
	}
	type result struct {
		b   boundServer
		m   boundMemory
		set sample
	}
	var results []result
	for _, b := range []boundServer{boundRedisLFU, boundStampedeless} {
		s, err := b.start(ctx, h)
		if err != nil {
			return err
		}
		h.logf("churn: %d SETs of random keys out of %d into %s", h.opts.churnSets, h.opts.churnKeys, b.label)
		got, _, err := h.benchmarkArgs(ctx, s, []string{"-t", "set", "-r", strconv.Itoa(h.opts.churnKeys),
			"-n", strconv.Itoa(h.opts.churnSets), "-P", "16"}, h.opts.churnSets)
		if err != nil {
			s.Stop()
			return fmt.Errorf("churn on %s: %w", b.label, err)
		}
		m, err := h.measureBound(ctx, s)
		s.Stop()
		if err != nil {
			return err
		}
		results = append(results, result{b, m, got["SET"]})
	}
	fmt.Fprintf(h.out, "\n### Churn at a %s bound\n\n", h.opts.boundMem)
	fmt.Fprintf(h.out, "`redis-benchmark -t set -d %d -c %d -P 16 -r %d -n %d` (random keys, many times what fits) into a fresh server each: stampedeless `--max-memory %s`, redis-server `maxmemory %s`. RSS (VmRSS) 1 s after the last reply; peak is VmHWM. The SET throughput is of pipelined writes of mostly new keys under eviction, on a shared machine: noisy.\n\n",
		h.opts.dataSize, h.opts.clients, h.opts.churnKeys, h.opts.churnSets, h.opts.boundMem, h.opts.boundMem)
	fmt.Fprintln(h.out, "| server | keys kept | RSS MiB | peak RSS MiB | RSS / bound | used_memory MiB | keys per MiB of bound | keys per MiB of RSS | SET rps |")
	fmt.Fprintln(h.out, "|---|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range results {
		fmt.Fprintf(h.out, "| %s | %d | %.1f | %.1f | %.2f | %.1f | %.0f | %.0f | %.0f |\n", r.b.label, r.m.dbsize, mib(r.m.rss), mib(r.m.peak),
			float64(r.m.rss)/float64(bound), mib(r.m.used), float64(r.m.dbsize)/mib(bound), float64(r.m.dbsize)/mib(r.m.rss), r.set.rps)
	}
	if len(results) == 2 {
		r, s := results[0], results[1]
		limit := int64(1.15*float64(bound)) + 24<<20
		keys := float64(s.m.dbsize) / float64(max(r.m.dbsize, 1))
		rps := s.set.rps / max(r.set.rps, 1)
		fmt.Fprintf(h.out, "\nstampedeless RSS %.1f MiB against 1.15 × bound + 24 MiB = %.1f MiB %s (peak %.1f MiB); keys kept %.2f of redis-server's %s (target ≥ 1.2, stretch 1.3); SET throughput %.2f of redis-server's %s (target ≥ 1.0; this test's SETs are pipelined and mostly new keys, as -at-bound's are).\n",
			mib(s.m.rss), mib(limit), mark(s.m.rss <= limit), mib(s.m.peak), keys, mark(keys >= 1.2), rps, mark(rps >= 1.0))
	}
	return nil
}

// hitRatioTest replays each workload's trace (bench/internal/trace)
// against each server at the bound, writing every key a read missed, and
// compares hit ratios.
func (h *harness) hitRatioTest(ctx context.Context) error {
	type result struct {
		b          boundServer
		hits, gets int64
		m          boundMemory
	}
	var workloads []trace.Workload
	for _, name := range strings.Split(h.opts.hitWorkloads, ",") {
		w, ok := trace.Find(strings.TrimSpace(name))
		if !ok {
			return fmt.Errorf("-hit-workloads: no workload %q", name)
		}
		workloads = append(workloads, w)
	}
	fmt.Fprintf(h.out, "\n### Hit ratio at a %s bound\n\n", h.opts.boundMem)
	fmt.Fprintf(h.out, "Each workload is one trace of %d GETs over %d keys (the same seed for every server), %d-byte values; a GET that misses is followed by a SET of the key. GETs go in pipelined batches of %d, then the SETs of that batch's misses. The hit ratio counts the last two thirds of the trace (the first third warms the cache). Keys kept and RSS are after the trace. Targets: Zipf(0.99) at least 1.05 of redis-server allkeys-lfu's hit ratio, every other workload at least 1.0 of the better of allkeys-lfu's and allkeys-lru's.\n\n",
		h.opts.zipfReads, h.opts.zipfKeys, h.opts.dataSize, traceBatch)
	servers := []boundServer{boundRedisLFU, boundRedisLRU, boundStampedeless}
	fmt.Fprint(h.out, "| workload |")
	for _, b := range servers {
		fmt.Fprintf(h.out, " %s |", b.label)
	}
	fmt.Fprintln(h.out, " keys kept (lfu / lru / ours) | ours against the target |")
	fmt.Fprintln(h.out, "|---|---:|---:|---:|---:|---|")
	for _, w := range workloads {
		var results []result
		for _, b := range servers {
			s, err := b.start(ctx, h)
			if err != nil {
				return err
			}
			h.logf("hit ratio: %s, %d reads over %d keys, against %s", w.Name, h.opts.zipfReads, h.opts.zipfKeys, b.label)
			hits, gets, err := h.replayTrace(ctx, s, w)
			if err != nil {
				s.Stop()
				return fmt.Errorf("hit ratio of %s on %s: %w", w.Name, b.label, err)
			}
			m, err := h.measureBound(ctx, s)
			s.Stop()
			if err != nil {
				return err
			}
			results = append(results, result{b, hits, gets, m})
		}
		ratio := func(r result) float64 { return float64(r.hits) / float64(max(r.gets, 1)) }
		fmt.Fprintf(h.out, "| %s |", w.Name)
		for _, r := range results {
			fmt.Fprintf(h.out, " %.4f |", ratio(r))
		}
		lfu, lru, ours := ratio(results[0]), ratio(results[1]), ratio(results[2])
		against, target := ours/max(lfu, 1e-9), 1.05
		if w.Name != "zipf-0.99" {
			against, target = ours/max(lfu, lru, 1e-9), 1.0
		}
		fmt.Fprintf(h.out, " %d / %d / %d | %.3f (≥ %.2f) %s |\n", results[0].m.dbsize, results[1].m.dbsize, results[2].m.dbsize,
			against, target, mark(against >= target))
	}
	return nil
}

// traceBatch is how many GETs the hit-ratio test pipelines.
const traceBatch = 64

// replayTrace runs w's trace against s on one connection.
func (h *harness) replayTrace(ctx context.Context, s *server, w trace.Workload) (hits, gets int64, err error) {
	d := net.Dialer{Timeout: 2 * time.Second}
	conn, err := d.DialContext(ctx, "tcp", s.Addr())
	if err != nil {
		return 0, 0, err
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Now()) })
	defer stop()
	r := bufio.NewReaderSize(conn, 1<<16)
	bw := bufio.NewWriterSize(conn, 1<<16)
	next := w.New(h.opts.zipfKeys, h.opts.zipfReads, 42)
	value := strings.Repeat("v", h.opts.dataSize)
	warm := int64(h.opts.zipfReads / 3)
	keys := make([]string, traceBatch)
	var done int64
	for done < int64(h.opts.zipfReads) {
		n := min(traceBatch, int64(h.opts.zipfReads)-done)
		for i := range n {
			keys[i] = "key:" + strconv.FormatUint(next(), 10)
			fmt.Fprintf(bw, "*2\r\n$3\r\nGET\r\n$%d\r\n%s\r\n", len(keys[i]), keys[i])
		}
		if err := bw.Flush(); err != nil {
			return 0, 0, err
		}
		var missed []string
		for i := range n {
			hit, err := readBulkPresent(r)
			if err != nil {
				return 0, 0, err
			}
			if done+i >= warm {
				gets++
				if hit {
					hits++
				}
			}
			if !hit {
				missed = append(missed, keys[i])
			}
		}
		for _, k := range missed {
			fmt.Fprintf(bw, "*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n", len(k), k, len(value), value)
		}
		if err := bw.Flush(); err != nil {
			return 0, 0, err
		}
		for range missed {
			line, err := r.ReadString('\n')
			if err != nil {
				return 0, 0, err
			}
			if !strings.HasPrefix(line, "+OK") {
				return 0, 0, fmt.Errorf("SET answered %q", strings.TrimSpace(line))
			}
		}
		done += n
	}
	return hits, gets, nil
}

// readBulkPresent reads a bulk string reply and reports whether it was not
// nil.
func readBulkPresent(r *bufio.Reader) (bool, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return false, err
	}
	if len(line) < 3 || line[0] != '$' {
		return false, fmt.Errorf("GET answered %q", strings.TrimSpace(line))
	}
	n, err := strconv.Atoi(strings.TrimSpace(line[1:]))
	if err != nil {
		return false, fmt.Errorf("GET answered %q", strings.TrimSpace(line))
	}
	if n < 0 {
		return false, nil
	}
	_, err = io.CopyN(io.Discard, r, int64(n)+2)
	return true, err
}

// scaleTest compares GET latency with few and with many keys resident:
// each server is loaded with N distinct keys, then read at random.
func (h *harness) scaleTest(ctx context.Context) error {
	type result struct {
		server string
		keys   int
		rss    int64
		get    sample
	}
	var results []result
	for _, n := range h.opts.scaleKeys {
		for _, start := range []func(context.Context) (*server, error){
			func(ctx context.Context) (*server, error) { return h.startRedis(ctx) },
			func(ctx context.Context) (*server, error) { return h.startStampedelessWith(ctx, h.opts.maxMem) },
		} {
			s, err := start(ctx)
			if err != nil {
				return err
			}
			h.logf("scale: loading %d keys into %s", n, s.Name)
			errs, replies, err := h.pipeLoadWidth(ctx, s, n, benchmarkKeyWidth)
			if err == nil && (errs != 0 || replies != int64(n)) {
				err = fmt.Errorf("redis-cli --pipe: errors %d, replies %d, want 0 and %d", errs, replies, n)
			}
			if err != nil {
				s.Stop()
				return fmt.Errorf("loading %s: %w", s.Name, err)
			}
			got, _, err := h.benchmarkArgs(ctx, s, []string{"-t", "get", "-r", strconv.Itoa(n), "-n", strconv.Itoa(h.opts.n * 2), "-P", "1"}, h.opts.n*2)
			rss, _ := s.rssBytes()
			s.Stop()
			if err != nil {
				return fmt.Errorf("GET on %s with %d keys: %w", s.Name, n, err)
			}
			results = append(results, result{s.Name, n, rss, got["GET"]})
		}
	}
	fmt.Fprintf(h.out, "\n### GET latency against the number of keys resident\n\n")
	fmt.Fprintf(h.out, "A fresh server each, loaded with N distinct keys of %d bytes (`redis-cli --pipe`), then `redis-benchmark -t get -c %d -P 1 -r N -n %d`: every GET finds its key. On a shared machine, latency is noisy; compare rows of one server.\n\n",
		h.opts.dataSize, h.opts.clients, h.opts.n*2)
	fmt.Fprintln(h.out, "| server | keys | RSS MiB | GET rps | p50 ms | p99 ms | max ms |")
	fmt.Fprintln(h.out, "|---|---:|---:|---:|---:|---:|---:|")
	for _, r := range results {
		fmt.Fprintf(h.out, "| %s | %d | %.1f | %.0f | %.3f | %.3f | %.3f |\n", r.server, r.keys, mib(r.rss), r.get.rps, r.get.p50, r.get.p99, r.get.max)
	}
	return nil
}

// benchmarkKeyWidth is how many digits redis-benchmark's -r keys have:
// key:__rand_int__ becomes key:000000001234.
const benchmarkKeyWidth = 12
