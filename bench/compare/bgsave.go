package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// bgsaveResult is one server's GET latency without and during BGSAVE.
type bgsaveResult struct {
	server        string
	quiet, saving sample
	saves         int     // BGSAVEs that ran during the second run
	savingShare   float64 // of the runs with saves, the part of their time a BGSAVE was running
	saveTime      time.Duration
	runTime       time.Duration
}

// bgsaveTest loads -persist-keys SETs of -d bytes into each server, runs
// redis-benchmark's GET over them (-r keys, -P 1) without a save and
// while BGSAVEs run back to back, in turns -persist-rounds times, and
// compares the median p99s: a snapshot
// must not stop the server (the target is stampedeless's p99 during them
// ≤ 2 × its p99 without). redis-server forks for its BGSAVE; stampedeless
// copies each shard under its read lock and encodes on another goroutine.
func (h *harness) bgsaveTest(ctx context.Context) error {
	keys := h.opts.persistKeys
	requests := h.opts.n * 5
	var results []bgsaveResult
	for _, name := range []string{redisName, stampName} {
		p := &persistServer{name: name, dir: filepath.Join(h.tmp, "bgsave-"+name)}
		if err := os.MkdirAll(p.dir, 0o700); err != nil {
			return err
		}
		if err := h.startPersist(ctx, p); err != nil {
			return err
		}
		r, err := h.bgsaveRun(ctx, p.s, keys, requests)
		p.s.Stop()
		if err != nil {
			h.fail("BGSAVE test on %s: %v", name, err)
			return nil
		}
		results = append(results, r)
		h.logf("bgsave: %s GET p99 %.3f ms without, %.3f ms during %d BGSAVEs (%.0f%% of the run)",
			name, r.quiet.p99, r.saving.p99, r.saves, 100*r.savingShare)
	}
	fmt.Fprintf(h.out, "\n### GET latency during BGSAVE (%d keys of %d bytes)\n\n", keys, h.opts.dataSize)
	fmt.Fprintf(h.out, "`redis-benchmark -t get -c %d -P 1 -r %d -n %d`, in %d rounds of a run with no save and a run while BGSAVEs run back to back (the next one starts as soon as the last one ended); medians.\n\n",
		h.opts.clients, keys, requests, h.opts.persistRounds)
	fmt.Fprintln(h.out, "| server | rps without | rps during | p50 ms without | p50 ms during | p99 ms without | p99 ms during | p99 during/without | BGSAVEs | share of the run saving |")
	fmt.Fprintln(h.out, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range results {
		ratio := "n/a"
		if r.quiet.p99 > 0 {
			ratio = fmt.Sprintf("%.2f", r.saving.p99/r.quiet.p99)
			if r.server == stampName {
				ratio += " " + mark(r.saving.p99/r.quiet.p99 <= 2)
			}
		}
		fmt.Fprintf(h.out, "| %s | %.0f | %.0f | %.3f | %.3f | %.3f | %.3f | %s | %d | %.0f%% |\n", r.server, r.quiet.rps, r.saving.rps,
			r.quiet.p50, r.saving.p50, r.quiet.p99, r.saving.p99, ratio, r.saves, 100*r.savingShare)
	}
	return nil
}

func (h *harness) bgsaveRun(ctx context.Context, s *server, keys, requests int) (bgsaveResult, error) {
	r := bgsaveResult{server: s.Name}
	h.logf("bgsave: loading %d keys into %s", keys, s.Name)
	errs, replies, err := h.pipe(ctx, s, keys, func(w io.Writer) error { return writeSets(w, keys, 7, h.opts.dataSize) })
	if err == nil && (errs != 0 || replies != int64(keys)) {
		err = fmt.Errorf("redis-cli --pipe: errors %d, replies %d, want 0 and %d", errs, replies, keys)
	}
	if err != nil {
		return r, err
	}
	args := []string{"-t", "get", "-r", strconv.Itoa(keys), "-n", strconv.Itoa(requests), "-P", "1"}
	var quiet, saving []sample
	for range h.opts.persistRounds {
		got, _, err := h.benchmarkArgs(ctx, s, args, requests)
		if err != nil {
			return r, err
		}
		quiet = append(quiet, got["GET"])
		got, err = h.duringBGSave(ctx, s, args, requests, &r)
		if err != nil {
			return r, err
		}
		saving = append(saving, got["GET"])
	}
	r.quiet, r.saving = medianSample(quiet), medianSample(saving)
	return r, nil
}

// medianSample is the median of each field of ss.
func medianSample(ss []sample) sample {
	return sample{rps: median(field(ss, func(s sample) float64 { return s.rps })),
		p50: median(field(ss, func(s sample) float64 { return s.p50 })),
		p99: median(field(ss, func(s sample) float64 { return s.p99 }))}
}

// duringBGSave runs the benchmark while BGSAVEs run back to back, and
// counts them and their share of the run in r.
func (h *harness) duringBGSave(ctx context.Context, s *server, args []string, requests int, r *bgsaveResult) (map[string]sample, error) {
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var saveErr error
	var savingFor time.Duration
	start := time.Now()
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			t0 := time.Now()
			if reply, err := s.do(ctx, "BGSAVE"); err != nil || !strings.HasPrefix(reply, "Background saving started") {
				saveErr = fmt.Errorf("BGSAVE: %q %v", reply, err)
				return
			}
			if err := waitSaved(ctx, s, stop); err != nil {
				saveErr = err
				return
			}
			savingFor += time.Since(t0)
			r.saves++
		}
	}()
	got, elapsed, err := h.benchmarkArgs(ctx, s, args, requests)
	close(stop)
	wg.Wait()
	if err != nil {
		return nil, err
	}
	if saveErr != nil {
		return nil, saveErr
	}
	// The last save may outlast the benchmark: the next run without a
	// save must not overlap it, nor the next BGSAVE find it running.
	if err := waitSaved(ctx, s, nil); err != nil {
		return nil, err
	}
	r.saveTime += savingFor
	r.runTime += max(elapsed, time.Since(start))
	r.savingShare = min(r.saveTime.Seconds()/r.runTime.Seconds(), 1)
	return got, nil
}

// waitSaved polls INFO persistence until no BGSAVE is in progress, or
// stop is closed (the last save then finishes on its own; a nil stop
// waits for it).
func waitSaved(ctx context.Context, s *server, stop <-chan struct{}) error {
	for {
		info, err := s.do(ctx, "INFO", "persistence")
		if err != nil {
			return err
		}
		if strings.Contains(info, "rdb_bgsave_in_progress:0") {
			if !strings.Contains(info, "rdb_last_bgsave_status:ok") {
				return fmt.Errorf("a BGSAVE failed: %s", info)
			}
			return nil
		}
		select {
		case <-stop:
			return nil
		case <-time.After(10 * time.Millisecond):
		}
	}
}
