package main

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"
)

// coldRounds is how many cold keys each follower-latency run fills.
const coldRounds = 10

// coldResult is the follower latency of one approach at one K: every client
// asks for the same cold key at the same instant, so all but one wait for
// a fill; each round uses a new key.
type coldResult struct {
	approach    int
	k           int
	rounds      int
	originCalls int64
	p50, p99    time.Duration
	max         time.Duration
	errors      int
}

// runCold runs coldRounds rounds of k simultaneous GETFILLs of a new key,
// spread round robin over the approach's servers.
func (h *harness) runCold(ctx context.Context, ai int, a approach, k int, keyPrefix string) (coldResult, error) {
	rdbs := newClients(h.groups[a.servers], k)
	defer closeClients(rdbs)
	// Connections are opened before the first round, so the rounds time
	// the fills, not the dials.
	for _, r := range rdbs {
		if err := r.Ping(ctx).Err(); err != nil {
			return coldResult{}, err
		}
	}
	res := coldResult{approach: ai, k: k, rounds: coldRounds}
	hists := make([]*hist, k)
	for i := range hists {
		hists[i] = new(hist)
	}
	var mu sync.Mutex
	for round := range coldRounds {
		key := fmt.Sprintf("%s-r%d", keyPrefix, round)
		counter := h.origin.counter(key)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range k {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rdb := rdbs[i%len(rdbs)]
				<-start
				t0 := time.Now()
				err := rdb.Do(ctx, "GETFILL", key, "60", strconv.Itoa(a.grace)).Err()
				d := time.Since(t0)
				hists[i].add(d)
				mu.Lock()
				res.max = max(res.max, d)
				if err != nil {
					res.errors++
				}
				mu.Unlock()
			}()
		}
		close(start)
		wg.Wait()
		res.originCalls += counter.Load()
		if err := ctx.Err(); err != nil {
			return res, err
		}
	}
	q := quantiles(hists, 0.5, 0.99)
	res.p50, res.p99 = q[0], q[1]
	return res, nil
}

// runColdAll measures follower latency for the grace-0 approaches.
func (h *harness) runColdAll(ctx context.Context) ([]coldResult, error) {
	var out []coldResult
	for _, k := range h.opts.ks {
		for ai, a := range h.approaches {
			if a.grace != 0 {
				continue
			}
			h.logf("K=%d %s: follower latency, %d cold keys", k, a.name, coldRounds)
			r, err := h.runCold(ctx, ai, a, k, fmt.Sprintf("hot:cold-k%d-a%d", k, ai))
			if err != nil {
				return nil, fmt.Errorf("K=%d %s: %w", k, a.name, err)
			}
			h.logf("  origin calls %d, p50 %v p99 %v max %v, errors %d", r.originCalls, r.p50, r.p99, r.max, r.errors)
			if r.errors > 0 {
				h.notes = append(h.notes, fmt.Sprintf("K=%d %s (cold keys): %d failed requests", k, a.name, r.errors))
			}
			out = append(out, r)
		}
	}
	return out, nil
}

func (h *harness) printCold(results []coldResult) {
	fmt.Fprintf(h.out, "\n### Follower latency: K clients ask for one cold key at once (%d keys per row)\n\n", coldRounds)
	fmt.Fprintln(h.out, "| approach | K | origin calls per key | p50 | p99 | max | errors |")
	fmt.Fprintln(h.out, "|---|---:|---:|---:|---:|---:|---:|")
	for _, r := range results {
		fmt.Fprintf(h.out, "| %s | %d | %.1f | %s | %s | %s | %d |\n", h.approaches[r.approach].name, r.k,
			float64(r.originCalls)/float64(r.rounds), fmtDur(r.p50), fmtDur(r.p99), fmtDur(r.max), r.errors)
	}
}
