package pubsub

import (
	"slices"
	"testing"
)

type conn struct {
	name string
	subs Subscriptions
}

func subscribe(r *Registry[*conn], c *conn, kind Kind, names ...string) {
	r.Lock()
	defer r.Unlock()
	for _, n := range names {
		r.AddLocked(c, &c.subs, kind, []byte(n))
	}
}

// TestPublish: who a message reaches, as Redis's PUBLISH and SPUBLISH
// deliver it.
func TestPublish(t *testing.T) {
	var r Registry[*conn]
	a, b, c := &conn{name: "a"}, &conn{name: "b"}, &conn{name: "c"}
	subscribe(&r, a, Channel, "news")
	subscribe(&r, b, Pattern, "n*", "x*")
	subscribe(&r, c, Shard, "news")
	subscribe(&r, a, Pattern, "ne?s")
	for _, tc := range []struct {
		kind    Kind
		channel string
		want    []string // conn and pattern, sorted
	}{
		{Channel, "news", []string{"a ", "a ne?s", "b n*"}},
		{Channel, "nope", []string{"b n*"}},
		{Channel, "other", nil},
		{Shard, "news", []string{"c "}},
		{Shard, "nope", nil},
	} {
		var got []string
		n := r.Publish(tc.kind, []byte(tc.channel), func(c *conn, p []byte) { got = append(got, c.name+" "+string(p)) })
		slices.Sort(got)
		if !slices.Equal(got, tc.want) || n != int64(len(tc.want)) {
			t.Errorf("publish %d %s: %q (%d), want %q", tc.kind, tc.channel, got, n, tc.want)
		}
	}
	if d := r.Delivered(); d != 5 {
		t.Errorf("Delivered = %d, want 5", d)
	}
}

// TestCounts: what confirmations, PUBSUB and INFO count, through
// subscribing twice, unsubscribing and leaving.
func TestCounts(t *testing.T) {
	var r Registry[*conn]
	a, b := &conn{}, &conn{}
	subscribe(&r, a, Channel, "x", "y", "x")
	subscribe(&r, a, Pattern, "p*")
	subscribe(&r, a, Shard, "s")
	subscribe(&r, b, Channel, "y")
	if got := a.subs.Count(Channel); got != 3 {
		t.Errorf("channel confirmation count %d, want 3 (channels and patterns)", got)
	}
	if got := a.subs.Count(Shard); got != 1 || a.subs.Total() != 4 || a.subs.Of(Channel) != 2 {
		t.Errorf("shard count %d, total %d, channels %d; want 1, 4, 2", got, a.subs.Total(), a.subs.Of(Channel))
	}
	if got := r.NumSub(Channel, [][]byte{[]byte("x"), []byte("y"), []byte("p*")}); !slices.Equal(got, []int64{1, 2, 0}) {
		t.Errorf("NumSub = %v, want [1 2 0]", got)
	}
	if got := r.Names(Channel, false, nil); !slices.Equal(got, []string{"x", "y"}) {
		t.Errorf("Names = %q", got)
	}
	if got := r.Names(Channel, true, []byte("y*")); !slices.Equal(got, []string{"y"}) {
		t.Errorf("Names y* = %q", got)
	}
	if got := r.Names(Channel, true, []byte("")); len(got) != 0 {
		t.Errorf("Names of the empty pattern = %q", got)
	}
	if got := a.subs.Sorted(Channel); !slices.Equal(got, []string{"x", "y"}) {
		t.Errorf("Sorted = %q", got)
	}
	if r.Clients() != 2 || r.Count(Channel) != 2 || r.Count(Pattern) != 1 || r.Count(Shard) != 1 {
		t.Errorf("clients %d, channels %d, patterns %d, shards %d", r.Clients(), r.Count(Channel), r.Count(Pattern), r.Count(Shard))
	}
	r.Lock()
	r.RemoveLocked(b, &b.subs, Channel, "y")
	r.RemoveLocked(b, &b.subs, Channel, "y")
	r.Unlock()
	if r.Clients() != 1 || b.subs.Total() != 0 {
		t.Errorf("after b unsubscribed: clients %d, b's %d", r.Clients(), b.subs.Total())
	}
	var all []string
	r.RLock()
	for kind, name := range a.subs.All() {
		all = append(all, Words[kind].Subscribe+" "+name)
	}
	r.RUnlock()
	slices.Sort(all)
	if want := []string{"psubscribe p*", "ssubscribe s", "subscribe x", "subscribe y"}; !slices.Equal(all, want) {
		t.Errorf("All = %q, want %q", all, want)
	}
	r.Leave(a, &a.subs)
	if r.Clients() != 0 || r.Count(Channel)+r.Count(Pattern)+r.Count(Shard) != 0 || a.subs.Total() != 0 {
		t.Errorf("after leaving: clients %d", r.Clients())
	}
}
