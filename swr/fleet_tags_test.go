package swr_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stampedeless/stampedeless/internal/batchorigin"
	"github.com/stampedeless/stampedeless/internal/redistest"
	"github.com/stampedeless/stampedeless/internal/testwait"
	"github.com/stampedeless/stampedeless/loader"
	"github.com/stampedeless/stampedeless/swr"
)

// twoReplicas is a fleet of two replicas on a new Redis, each hearing the
// other, with the loader "k:" on originURL.
func twoReplicas(t *testing.T, originURL string) (a, b *testFiller) {
	t.Helper()
	addr := redistest.Start(t).Addr()
	a, ca := newFleetMember(t, addr, originURL)
	b, cb := newFleetMember(t, addr, originURL)
	testwait.For(t, "the replicas to hear each other", func() bool { return ca.Peers() == 1 && cb.Peers() == 1 })
	return a, b
}

// TestFleetPurgeHard: a purge on one replica deletes the tagged keys in
// the shared tier and on the other replica, whose next read loads again.
func TestFleetPurgeHard(t *testing.T) {
	o := newTaggedOrigin(t, map[string]string{"k:a": "t", "k:b": "t other", "k:c": "else", "k:d": "d"})
	a, b := twoReplicas(t, o.URL)
	for _, k := range []string{"k:a", "k:b", "k:c"} {
		get(t, a, k)
		get(t, b, k) // from the shared tier
	}
	if n := o.calls.Load(); n != 3 {
		t.Fatalf("%d origin calls for 3 keys on two replicas", n)
	}
	if tags := b.Info("k:b").Tags; !slices.Equal(tags, []string{"t", "other"}) {
		t.Fatalf("B's tags of k:b %q: the fleet's entry lost them", tags)
	}
	n, err := a.Purge(context.Background(), swr.Caller{}, []string{"t"}, false, nil)
	if err != nil || n != 2 {
		t.Fatalf("Purge = %d, %v; want 2", n, err)
	}
	// Purge returns once B acknowledged.
	for k, want := range map[string]bool{"k:a": false, "k:b": false, "k:c": true} {
		if _, found := b.store.Peek([]byte(k)); found != want {
			t.Fatalf("B has %s: %v, want %v", k, found, want)
		}
	}
	if v := get(t, b, "k:a"); v != "k:a#4" {
		t.Fatalf("B's k:a after the purge = %q, want a new load (the shared entry is gone)", v)
	}
	if v := get(t, a, "k:a"); v != "k:a#4" || o.calls.Load() != 4 {
		t.Fatalf("A's k:a = %q after %d calls, want B's new load", v, o.calls.Load())
	}

	// A key B never had: B's purge finds it in the shared tier, and A
	// drops its copy.
	get(t, a, "k:d")
	if n, err := b.Purge(context.Background(), swr.Caller{}, []string{"d"}, false, nil); n != 1 || err != nil {
		t.Fatalf("B's Purge of a key only A had = %d, %v; want 1", n, err)
	}
	if _, found := a.store.Peek([]byte("k:d")); found {
		t.Fatal("A still has k:d after B's purge")
	}
}

// TestFleetPurgeFiltered: a purge with a KeyFilter (PURGE.TAG of a user
// limited to some keys) purges only the keys it allows, in the shared
// tier and on the other replica, both hard and soft; the others stay,
// fresh, everywhere.
func TestFleetPurgeFiltered(t *testing.T) {
	o := newTaggedOrigin(t, map[string]string{"k:a:1": "t", "k:b:1": "t", "k:a:2": "t"})
	a, b := twoReplicas(t, o.URL)
	keys := []string{"k:a:1", "k:b:1", "k:a:2"}
	for _, k := range keys {
		get(t, a, k)
		get(t, b, k)
	}
	onlyA := func(key string) bool { return strings.HasPrefix(key, "k:a:") }
	if n, err := a.Purge(context.Background(), swr.Caller{}, []string{"t"}, true, onlyA); n != 2 || err != nil {
		t.Fatalf("filtered soft Purge = %d, %v; want 2", n, err)
	}
	for _, k := range keys {
		want := map[bool]string{true: "stale", false: "fresh"}[onlyA(k)]
		if st := b.Info(k).State; st != want {
			t.Fatalf("B's %s is %q after A's filtered soft purge, want %s", k, st, want)
		}
	}
	if n, err := b.Purge(context.Background(), swr.Caller{}, []string{"t"}, false, onlyA); n != 2 || err != nil {
		t.Fatalf("filtered hard Purge = %d, %v; want 2", n, err)
	}
	for _, r := range []*testFiller{a, b} {
		for _, k := range keys {
			if _, found := r.store.Peek([]byte(k)); found != !onlyA(k) {
				t.Fatalf("a replica has %s: %v after the filtered purge", k, found)
			}
		}
	}
	if calls := o.calls.Load(); calls != 3 {
		t.Fatalf("%d origin calls, want 3: the purge refreshed nothing it left", calls)
	}
}

// TestFleetPurgeSoft: a soft purge makes the keys stale fleet-wide: each
// replica serves them stale, and the fleet makes one origin call per key.
func TestFleetPurgeSoft(t *testing.T) {
	o := newTaggedOrigin(t, map[string]string{"k:a": "t"})
	a, b := twoReplicas(t, o.URL)
	old := get(t, a, "k:a")
	get(t, b, "k:a")
	if n, err := b.Purge(context.Background(), swr.Caller{}, []string{"t"}, true, nil); n != 1 || err != nil {
		t.Fatalf("soft Purge = %d, %v", n, err)
	}
	if st := a.Info("k:a").State; st != "stale" {
		t.Fatalf("A's k:a is %q after B's soft purge, want stale", st)
	}
	if v := get(t, a, "k:a"); v != old {
		t.Fatalf("A served %q, want the stale %q", v, old)
	}
	testwait.For(t, "A's refresh", func() bool { return a.Info("k:a").State == "fresh" })
	// B's stale copy, or, once B heard of A's refresh and dropped it, A's
	// new value from the shared tier: never an origin call of its own.
	if v := get(t, b, "k:a"); v != old && v != "k:a#2" {
		t.Fatalf("B served %q, want %q or A's refresh", v, old)
	}
	testwait.For(t, "B to have A's refresh", func() bool { return b.Info("k:a").State == "fresh" })
	if v := get(t, b, "k:a"); v != "k:a#2" || o.calls.Load() != 2 {
		t.Fatalf("B has %q after %d origin calls, want A's refresh k:a#2 and 2 calls", v, o.calls.Load())
	}
}

// TestFleetManyBatches: two replicas' MGETFILLs of the same keys make one
// origin load per key fleet-wide, each key in one batch request.
func TestFleetManyBatches(t *testing.T) {
	o := batchorigin.New(t)
	a, b := twoReplicas(t, newTestOrigin(t).URL)
	for _, r := range []*testFiller{a, b} {
		// A long timeout: on a loaded machine under -race a caller's wait
		// would end before a batch that is only slow.
		if err := r.loaders.Register(loader.Config{Prefix: "b:", URL: o.URL, Batch: 10, Timeout: time.Minute}); err != nil {
			t.Fatal(err)
		}
	}
	keys := make([]string, 40)
	for i := range keys {
		keys[i] = fmt.Sprintf("b:%d", i)
	}
	done := make(chan struct{})
	go func() {
		getMany(a, keys...)
		close(done)
	}()
	answers := getMany(b, keys...)
	<-done
	for i, ans := range answers {
		if ans.Err != nil || !ans.Found {
			t.Fatalf("B's %s: %+v", keys[i], ans)
		}
	}
	count := map[string]int{}
	for _, r := range o.Requests() {
		if len(r) > 10 {
			t.Fatalf("a request of %d keys for batch 10", len(r))
		}
		for _, k := range r {
			count[k]++
		}
	}
	for _, k := range keys {
		if count[k] != 1 {
			t.Fatalf("%s asked of the origin %d times, want once fleet-wide", k, count[k])
		}
	}
}
