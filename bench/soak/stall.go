package main

import (
	"context"
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
