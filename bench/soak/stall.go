package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// stallMonitor measures how late the soak process's own goroutines run: a
// goroutine sleeps 5 ms at a time and records each sleep that overran by
// 10 ms or more. On a machine short of CPU a client can see a reply late
// that the server sent in time; the stalls say when that may have been so.
type stallMonitor struct {
	mu     sync.Mutex
	stalls []stall
}

// stall is an overrun: the process was not running from end-d to end.
type stall struct {
	end time.Time
	d   time.Duration
}

func (m *stallMonitor) run(ctx context.Context) {
	const tick, least = 5 * time.Millisecond, 10 * time.Millisecond
	for ctx.Err() == nil {
		t0 := time.Now()
		time.Sleep(tick)
		if late := time.Since(t0) - tick; late >= least {
			m.mu.Lock()
			m.stalls = append(m.stalls, stall{end: time.Now(), d: late})
			m.mu.Unlock()
		}
	}
}

// within is how long the process stalled between from and to.
func (m *stallMonitor) within(from, to time.Time) time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	var sum time.Duration
	for _, s := range m.stalls {
		lo, hi := s.end.Add(-s.d), s.end
		if lo.Before(from) {
			lo = from
		}
		if hi.After(to) {
			hi = to
		}
		if lo.Before(hi) {
			sum += hi.Sub(lo)
		}
	}
	return sum
}

// cpuWait follows how long a server's threads waited for a CPU, from the
// second field of /proc/<pid>/task/*/schedstat (run-queue wait, ns), summed
// over its threads and sampled every 100 ms: evidence, printed beside a late
// answer, of a server that was runnable but not running.
type cpuWait struct {
	mu      sync.Mutex
	samples []waitSample
}

type waitSample struct {
	at   time.Time
	wait time.Duration // cumulative, over every thread
}

// sample reads the process's threads' run-queue wait now.
func (w *cpuWait) sample(pid int) {
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	if err != nil {
		return
	}
	var sum time.Duration
	for _, t := range tasks {
		data, err := os.ReadFile(t)
		if err != nil {
			continue
		}
		if f := strings.Fields(string(data)); len(f) >= 2 {
			n, _ := strconv.ParseInt(f[1], 10, 64)
			sum += time.Duration(n)
		}
	}
	w.mu.Lock()
	w.samples = append(w.samples, waitSample{at: time.Now(), wait: sum})
	w.mu.Unlock()
}

// within is the run-queue wait accumulated between the last sample at or
// before from and the first at or after to (so it may cover a little more).
func (w *cpuWait) within(from, to time.Time) time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	i := sort.Search(len(w.samples), func(i int) bool { return w.samples[i].at.After(from) }) - 1
	j := sort.Search(len(w.samples), func(j int) bool { return !w.samples[j].at.Before(to) })
	if i < 0 || j >= len(w.samples) {
		return 0
	}
	return w.samples[j].wait - w.samples[i].wait
}
