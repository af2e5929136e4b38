package swr_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stampedeless/stampedeless/engine"
	"github.com/stampedeless/stampedeless/internal/testwait"
	"github.com/stampedeless/stampedeless/swr"
)

// gatedOrigin answers each request with "<key>#<call>" once the test
// lets it go (release), or with 404 while notFound is set.
type gatedOrigin struct {
	*httptest.Server
	calls    atomic.Int64
	gate     chan struct{}
	notFound atomic.Bool
}

func newGatedOrigin(t *testing.T) *gatedOrigin {
	t.Helper()
	o := &gatedOrigin{gate: make(chan struct{}, 16)}
	o.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := o.calls.Add(1)
		<-o.gate
		if o.notFound.Load() {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		fmt.Fprintf(w, "%s#%d", r.URL.Path[1:], n)
	}))
	t.Cleanup(o.Close)
	// Before Close, which waits for the requests: a failed test lets the
	// ones still held go.
	t.Cleanup(func() { close(o.gate) })
	return o
}

// release lets n requests answer.
func (o *gatedOrigin) release(n int) {
	for range n {
		o.gate <- struct{}{}
	}
}

func getAsync(f *testFiller, key string) <-chan swr.Answer {
	out := make(chan swr.Answer, 1)
	go func() {
		ans, _ := f.Get(context.Background(), swr.Request{Key: key, TTL: time.Minute, Grace: time.Minute, Timeout: -1})
		out <- ans
	}()
	return out
}

// TestDeleteDetachesTheFlight: a read that starts after a DEL does not
// join the flight that began before it, whose value the DEL overtook; it
// gets a load of its own. The caller that was already waiting still gets
// the first flight's value, which is not stored.
func TestDeleteDetachesTheFlight(t *testing.T) {
	o := newGatedOrigin(t)
	f := newTestFiller(t, o.URL, swr.Options{})
	before := getAsync(f, "k:1")
	testwait.For(t, "the first flight's origin call", func() bool { return o.calls.Load() == 1 })
	f.store.Delete([]byte("k:1"))
	after := getAsync(f, "k:1")
	testwait.For(t, "a second origin call for the read after DEL", func() bool { return o.calls.Load() == 2 })
	o.release(2)
	if got := string((<-before).Value); got != "k:1#1" {
		t.Errorf("the caller before DEL got %q, want k:1#1", got)
	}
	if got := string((<-after).Value); got != "k:1#2" {
		t.Errorf("the caller after DEL got %q, want k:1#2 (a load that began after the DEL)", got)
	}
	if v, _ := f.store.Get([]byte("k:1")); string(v) != "k:1#2" {
		t.Errorf("stored %q, want k:1#2", v)
	}
}

// TestDeleteForgetsNotFound: the origin's remembered "no such key" ends
// when a client deletes or writes the key, not only at --negative-ttl.
func TestDeleteForgetsNotFound(t *testing.T) {
	o := newGatedOrigin(t)
	f := newTestFiller(t, o.URL, swr.Options{NegativeTTL: time.Hour})
	o.notFound.Store(true)
	o.release(1)
	if ans := <-getAsync(f, "k:n"); ans.Found {
		t.Fatalf("GETFILL of a 404 found %q", ans.Value)
	}
	o.notFound.Store(false)
	if ans := <-getAsync(f, "k:n"); ans.Found || o.calls.Load() != 1 {
		t.Fatalf("the remembered 404: found=%v after %d origin calls, want nil from memory", ans.Found, o.calls.Load())
	}
	f.store.Delete([]byte("k:n"))
	o.release(1)
	if ans := <-getAsync(f, "k:n"); string(ans.Value) != "k:n#2" {
		t.Fatalf("GETFILL after DEL = %q (found=%v), want k:n#2 from the origin", ans.Value, ans.Found)
	}
	// A write, then its expiry, does not bring a remembered 404 back.
	o.notFound.Store(true)
	o.release(1)
	if ans := <-getAsync(f, "k:m"); ans.Found {
		t.Fatal("GETFILL of a 404 found a value")
	}
	if _, err := f.store.Set([]byte("k:m"), []byte("client"),
		engine.SetOptions{StaleUntil: time.Now().Add(time.Millisecond).UnixNano()}); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, "the client's value to expire", func() bool { _, ok := f.store.Get([]byte("k:m")); return !ok })
	o.notFound.Store(false)
	o.release(1)
	if ans := <-getAsync(f, "k:m"); string(ans.Value) != "k:m#4" {
		t.Fatalf("GETFILL after a write expired = %q (found=%v), want k:m#4 from the origin", ans.Value, ans.Found)
	}
}

// TestFlightWaitsForTheSection: a flight's write, made on no command's
// behalf, enters the store's atomic section: it does not land while a
// transaction or script holds it, and lands once it is left.
func TestFlightWaitsForTheSection(t *testing.T) {
	o := newGatedOrigin(t)
	f := newTestFiller(t, o.URL, swr.Options{})
	sec := f.store.Section()
	sec.Lock()
	got := getAsync(f, "k:s")
	o.release(1)
	testwait.For(t, "the origin call", func() bool { return o.calls.Load() == 1 })
	for range 1000 {
		runtime.Gosched()
		if _, ok := f.store.Peek([]byte("k:s")); ok {
			sec.Unlock()
			t.Fatal("a flight's write landed inside the exclusive section")
		}
	}
	sec.Unlock()
	if ans := <-got; string(ans.Value) != "k:s#1" {
		t.Fatalf("GETFILL = %q, want k:s#1", ans.Value)
	}
}
