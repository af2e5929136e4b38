package loader

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// origin is a real HTTP origin that counts its calls and measures how many
// it served at once.
type origin struct {
	*httptest.Server
	calls   atomic.Int64 // requests received
	current atomic.Int64 // requests being served now
	peak    atomic.Int64 // most requests ever served at once
}

// newOrigin starts an origin serving h, closed when the test ends.
func newOrigin(t testing.TB, h http.HandlerFunc) *origin {
	t.Helper()
	o := &origin{}
	o.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		o.calls.Add(1)
		n := o.current.Add(1)
		defer o.current.Add(-1)
		for {
			p := o.peak.Load()
			if n <= p || o.peak.CompareAndSwap(p, n) {
				break
			}
		}
		h(w, r)
	}))
	t.Cleanup(o.Close)
	return o
}

// gate is a release signal for origin handlers: they block in wait until
// the test opens it. Opened at the end of the test at the latest, so the
// origin can close (t.Cleanup runs last-registered first).
type gate struct {
	ch   chan struct{}
	once sync.Once
}

func newGate(t testing.TB) *gate {
	g := &gate{ch: make(chan struct{})}
	t.Cleanup(g.open)
	return g
}

func (g *gate) open() { g.once.Do(func() { close(g.ch) }) }

// wait blocks until the gate opens or the request is abandoned.
func (g *gate) wait(r *http.Request) {
	select {
	case <-g.ch:
	case <-r.Context().Done():
	}
}

// newRegistry returns a registry whose idle connections are closed when the
// test ends.
func newRegistry(t testing.TB, opts Options) *Registry {
	t.Helper()
	r := NewRegistry(opts)
	t.Cleanup(r.CloseIdleConnections)
	return r
}

// mustRegister registers c and returns its loader.
func mustRegister(t testing.TB, r *Registry, c Config) *Loader {
	t.Helper()
	if err := r.Register(c); err != nil {
		t.Fatalf("Register(%+v): %v", c, err)
	}
	l, ok := r.Lookup(c.Prefix)
	if !ok || l.Prefix() != c.Prefix {
		t.Fatalf("Lookup(%q) after Register = %v, %v", c.Prefix, l, ok)
	}
	return l
}

// longCtx is a caller context that outlives any correct test.
func longCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}
