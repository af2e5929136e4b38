package swr_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/stampedeless/stampedeless/engine"
	"github.com/stampedeless/stampedeless/internal/testwait"
	"github.com/stampedeless/stampedeless/swr"
)

// taggedOrigin is a real origin that tags each key's value with tags[key]
// in a Surrogate-Key header; the body is "<key>#<call>".
type taggedOrigin struct {
	*httptest.Server
	calls atomic.Int64
	gate  chan struct{} // if not nil, each call waits for a receive
	tags  map[string]string
}

func newTaggedOrigin(t *testing.T, tags map[string]string) *taggedOrigin {
	t.Helper()
	o := &taggedOrigin{tags: tags}
	o.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := o.calls.Add(1)
		if o.gate != nil {
			<-o.gate
		}
		key := r.URL.Path[1:]
		w.Header().Set("Surrogate-Key", o.tags[key])
		fmt.Fprintf(w, "%s#%d", key, n)
	}))
	t.Cleanup(o.Close)
	return o
}

func get(t *testing.T, f *testFiller, key string) string {
	t.Helper()
	a, err := f.Get(context.Background(), requests(key)[0])
	if err != nil || !a.Found {
		t.Fatalf("GETFILL %s = %+v, %v", key, a, err)
	}
	return string(a.Value)
}

// TestPurgeHard: PURGE.TAG drops every key carrying any of the tags, and
// only those; the next read loads again. A key written since its fill is
// not purged, and its stale record goes.
func TestPurgeHard(t *testing.T) {
	o := newTaggedOrigin(t, map[string]string{"k:a": "t1 t2", "k:b": "t2", "k:c": "t3", "k:d": "t4"})
	f := newTestFiller(t, o.URL, swr.Options{})
	for _, k := range []string{"k:a", "k:b", "k:c", "k:d"} {
		get(t, f, k)
	}
	if tags := f.Info("k:a").Tags; !slices.Equal(tags, []string{"t1", "t2"}) {
		t.Fatalf("FILL.INFO k:a tags %q", tags)
	}
	n, err := f.Purge(context.Background(), swr.Caller{}, []string{"t2", "nope"}, false, nil)
	if err != nil || n != 2 {
		t.Fatalf("Purge t2 = %d, %v; want 2", n, err)
	}
	for k, want := range map[string]bool{"k:a": false, "k:b": false, "k:c": true, "k:d": true} {
		if _, found := f.store.Peek([]byte(k)); found != want {
			t.Fatalf("%s in the store: %v, want %v", k, found, want)
		}
	}
	if v := get(t, f, "k:a"); v != "k:a#5" {
		t.Fatalf("k:a after the purge = %q, want a new load", v)
	}

	// A client write replaces k:c's fill: not purged, record dropped.
	f.store.Set([]byte("k:c"), []byte("mine"), engine.SetOptions{})
	f.store.Delete([]byte("k:d"))
	if n, _ := f.Purge(context.Background(), swr.Caller{}, []string{"t3", "t4"}, false, nil); n != 0 {
		t.Fatalf("Purge of written and deleted keys' tags = %d, want 0", n)
	}
	if v, _ := f.store.Get([]byte("k:c")); string(v) != "mine" {
		t.Fatalf("k:c = %q, want the client's write", v)
	}
	if got := testutil.ToFloat64(f.m.TagEntries); got != 2 {
		t.Fatalf("tag entries %v, want 2 (k:a's, loaded again)", got)
	}
	if got := testutil.ToFloat64(f.m.TagPurgedKeys.WithLabelValues("hard", "local")); got != 2 {
		t.Fatalf("purged keys metric %v, want 2", got)
	}
}

// TestPurgeSoft: a soft purge makes the keys stale: every reader gets the
// old value at once while one refresh per key runs, which brings the new.
func TestPurgeSoft(t *testing.T) {
	o := newTaggedOrigin(t, map[string]string{"k:a": "t1"})
	f := newTestFiller(t, o.URL, swr.Options{})
	old := get(t, f, "k:a")
	o.gate = make(chan struct{})
	if n, err := f.Purge(context.Background(), swr.Caller{}, []string{"t1"}, true, nil); n != 1 || err != nil {
		t.Fatalf("soft Purge = %d, %v; want 1", n, err)
	}
	if st := f.Info("k:a").State; st != "stale" {
		t.Fatalf("k:a after a soft purge is %q, want stale", st)
	}
	var wg sync.WaitGroup
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if v := get(t, f, "k:a"); v != old {
				t.Errorf("a reader during the refresh got %q, want the stale %q", v, old)
			}
		}()
	}
	wg.Wait()
	testwait.For(t, "the refresh to reach the origin", func() bool { return o.calls.Load() == 2 })
	o.gate <- struct{}{}
	testwait.For(t, "the refresh to be stored", func() bool { return f.Info("k:a").State == "fresh" })
	if v := get(t, f, "k:a"); v != "k:a#2" || o.calls.Load() != 2 {
		t.Fatalf("after the refresh: %q with %d origin calls, want k:a#2 from one refresh", v, o.calls.Load())
	}
	if tags := f.Info("k:a").Tags; !slices.Equal(tags, []string{"t1"}) {
		t.Fatalf("tags after the refresh %q", tags)
	}
}

// TestTagBounds: a key keeps at most MaxTagsPerKey tags; a full index
// evicts another tagged key, from the store too, so every tagged entry can
// be purged; the index's bytes are charged to the store's bound.
func TestTagBounds(t *testing.T) {
	o := newTaggedOrigin(t, map[string]string{"k:1": "a b c", "k:2": "d e", "k:3": "f g"})
	f := newTestFiller(t, o.URL, swr.Options{MaxTagsPerKey: 2, MaxTagEntries: 4})
	get(t, f, "k:1")
	if tags := f.Info("k:1").Tags; !slices.Equal(tags, []string{"a", "b"}) {
		t.Fatalf("k:1 keeps %q, want the first 2", tags)
	}
	if got := testutil.ToFloat64(f.m.TagsDropped.WithLabelValues("k:", "per_key")); got != 1 {
		t.Fatalf("tags dropped per key %v, want 1", got)
	}
	get(t, f, "k:2")
	get(t, f, "k:3") // the index holds 4 pairs: one of k:1, k:2 goes
	if got := testutil.ToFloat64(f.m.TagEvictions); got != 1 {
		t.Fatalf("tag evictions %v, want 1", got)
	}
	_, found1 := f.store.Peek([]byte("k:1"))
	_, found2 := f.store.Peek([]byte("k:2"))
	if found1 == found2 {
		t.Fatalf("k:1 in the store %v, k:2 %v: want exactly one evicted", found1, found2)
	}
	if got := testutil.ToFloat64(f.m.TagEntries); got != 4 {
		t.Fatalf("tag entries %v, want 4", got)
	}
	// Two keys of 3 bytes with two 1-byte tags each.
	want := 2 * (3 + 192 + 2*(1+96))
	if got := testutil.ToFloat64(f.m.TagBytes); got != float64(want) {
		t.Fatalf("tag bytes %v, want %d", got, want)
	}
	if cost := f.store.Stats().Cost; cost < int64(want) {
		t.Fatalf("the store counts %d bytes, less than the index's %d", cost, want)
	}
	if n, _ := f.Purge(context.Background(), swr.Caller{}, []string{"f"}, false, nil); n != 1 {
		t.Fatalf("Purge f = %d, want 1", n)
	}
	if got := testutil.ToFloat64(f.m.TagBytes); got != float64(want/2) {
		t.Fatalf("tag bytes after the purge %v, want %d", got, want/2)
	}
}
