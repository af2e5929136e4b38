package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stampedeless/stampedeless/bench/internal/child"
	"github.com/stampedeless/stampedeless/internal/memsize"
)

// server is one stampedeless child process and what the soak measures of
// it.
type server struct {
	*child.Server
	metrics   string // host:port of /metrics
	maxMemory int64
	admin     *redis.Client // the soak's own connection, which CLIENT KILL spares

	evicted atomic.Int64 // evicted_keys, sampled
	peakRSS atomic.Int64 // bytes
	cpuWait cpuWait

	baseGoroutines, endGoroutines int
	// charged and heap are cache_cost_bytes and used_memory from INFO
	// memory when the clients stopped.
	charged, heap int64
}

// startServer starts stampedeless with its metrics on a port of its own.
func (h *harness) startServer(ctx context.Context, name string, maxMemory int64, extra ...string) (*server, error) {
	s := &server{maxMemory: maxMemory}
	var err error
	s.Server, err = child.Start(ctx, h.tmp, name, func(port int) (string, []string) {
		mport, _ := child.FreePort()
		s.metrics = net.JoinHostPort("127.0.0.1", strconv.Itoa(mport))
		return h.bin, append([]string{"--addr", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
			"--metrics-addr", s.metrics, "--max-memory", memsize.Format(maxMemory), "--log-level", "info"}, extra...)
	})
	if err != nil {
		return nil, err
	}
	h.logf("%s pid %d on %s, metrics on %s", name, s.Pid(), s.Addr(), s.metrics)
	return s, nil
}

// registerLoader registers the fill: loader with the origin's URL and
// timeout, on a connection closed before the baseline is taken.
func (s *server) registerLoader(ctx context.Context, url string, timeout time.Duration) error {
	rdb := newClient(s.Addr(), nameAdmin)
	defer rdb.Close()
	if err := rdb.Do(ctx, "LOADER.REGISTER", "fill:", url, "TIMEOUT", timeout.Milliseconds()).Err(); err != nil {
		return fmt.Errorf("%s: LOADER.REGISTER: %w", s.Name, err)
	}
	return nil
}

func (s *server) openAdmin() { s.admin = newClient(s.Addr(), nameAdmin) }

func (s *server) closeAdmin() {
	if s.admin != nil {
		s.admin.Close()
	}
}

// info reads the integer fields of the given INFO sections.
func (s *server) info(ctx context.Context, sections ...string) (map[string]int64, error) {
	text, err := s.admin.Info(ctx, sections...).Result()
	if err != nil {
		return nil, err
	}
	fields := map[string]int64{}
	for _, line := range strings.Split(text, "\r\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			if n, err := strconv.ParseInt(v, 10, 64); err == nil {
				fields[k] = n
			}
		}
	}
	return fields, nil
}

// readMemory keeps cache_cost_bytes and used_memory from INFO memory.
func (s *server) readMemory(ctx context.Context) {
	if f, err := s.info(ctx, "memory"); err == nil {
		s.charged, s.heap = f["cache_cost_bytes"], f["used_memory"]
	}
}

// evictedNow reads evicted_keys from INFO stats (it also counts keys
// refused at admission).
func (s *server) evictedNow(ctx context.Context) (int64, error) {
	f, err := s.info(ctx, "stats")
	if err != nil {
		return 0, err
	}
	n, ok := f["evicted_keys"]
	if !ok {
		return 0, fmt.Errorf("%s: no evicted_keys in INFO stats", s.Name)
	}
	return n, nil
}

// sampleRSS reads the process's VmRSS and keeps the largest seen.
func (s *server) sampleRSS() {
	if rss, err := vmRSS(s.Pid()); err == nil && rss > s.peakRSS.Load() {
		s.peakRSS.Store(rss)
	}
}

// vmRSS is a process's resident set in bytes, from /proc.
func vmRSS(pid int) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no VmRSS for pid %d", pid)
}

// scrape has no keep-alive, so no connection of the soak's stays open on
// the server between scrapes.
var scrape = &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}

// goroutines reads go_goroutines from the server's /metrics.
func (s *server) goroutines(ctx context.Context) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+s.metrics+"/metrics", nil)
	if err != nil {
		return 0, err
	}
	resp, err := scrape.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, "go_goroutines "); ok {
			return strconv.Atoi(strings.TrimSpace(v))
		}
	}
	return 0, fmt.Errorf("%s: no go_goroutines in /metrics", s.Name)
}

// settledGoroutines reads go_goroutines until two readings 200 ms apart
// agree (at most 10 s), for the baseline.
func (s *server) settledGoroutines(ctx context.Context) (int, error) {
	prev := -1
	for deadline := time.Now().Add(10 * time.Second); ; {
		n, err := s.goroutines(ctx)
		if err != nil {
			return 0, err
		}
		if n == prev || time.Now().After(deadline) {
			return n, nil
		}
		prev = n
		pause(ctx, 200*time.Millisecond)
	}
}

// goroutinesBack waits up to 20 s for go_goroutines to come back to the
// baseline and returns the last reading.
func (s *server) goroutinesBack(ctx context.Context) (int, error) {
	for deadline := time.Now().Add(20 * time.Second); ; {
		n, err := s.goroutines(ctx)
		if err != nil || n <= s.baseGoroutines || time.Now().After(deadline) {
			return n, err
		}
		pause(ctx, 250*time.Millisecond)
	}
}
