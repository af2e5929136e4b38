package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// origin is the in-process HTTP origin: it sleeps, then answers 200 with a
// value, counting calls per key.
type origin struct {
	srv     *http.Server
	base    string
	latency time.Duration
	mu      sync.Mutex
	calls   map[string]*atomic.Int64
	times   map[string][]time.Time // start of each call, per key
}

func startOrigin(latency time.Duration) (*origin, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	o := &origin{base: "http://" + ln.Addr().String(), latency: latency, calls: map[string]*atomic.Int64{}, times: map[string][]time.Time{}}
	o.srv = &http.Server{Handler: o, ReadHeaderTimeout: 10 * time.Second}
	go o.srv.Serve(ln)
	return o, nil
}

func (o *origin) counter(key string) *atomic.Int64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	c := o.calls[key]
	if c == nil {
		c = new(atomic.Int64)
		o.calls[key] = c
	}
	return c
}

// bursts counts the groups of calls for key made after the first skip
// calls, a new group starting when a call comes gap or more after the
// previous one.
func (o *origin) bursts(key string, skip int64, gap time.Duration) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	ts := append([]time.Time(nil), o.times[key]...)
	if skip > int64(len(ts)) {
		skip = int64(len(ts))
	}
	ts = ts[skip:]
	sort.Slice(ts, func(i, j int) bool { return ts[i].Before(ts[j]) })
	n := 0
	for i, t := range ts {
		if i == 0 || t.Sub(ts[i-1]) >= gap {
			n++
		}
	}
	return n
}

// record counts a call for key, and its start, and returns its number.
func (o *origin) record(key string) int64 {
	n := o.counter(key).Add(1)
	o.mu.Lock()
	o.times[key] = append(o.times[key], time.Now())
	o.mu.Unlock()
	return n
}

// compute is one call of the origin for key: counted, then its answer
// after the origin's latency, or ctx's error. The HTTP origin serves it,
// and the approaches that fill the key in the client process call it
// directly, so both are counted alike.
func (o *origin) compute(ctx context.Context, key string) (string, error) {
	n := o.record(key)
	select {
	case <-time.After(o.latency):
		return fmt.Sprintf("value of %s #%d", key, n), nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

func (o *origin) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	key := strings.TrimPrefix(r.URL.Path, "/")
	if v, err := o.compute(r.Context(), key); err == nil {
		fmt.Fprint(w, v)
	}
}
