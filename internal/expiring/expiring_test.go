package expiring

import (
	"fmt"
	"testing"
	"time"
)

var t0 = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

func TestGetExpires(t *testing.T) {
	var m Map[int]
	if _, ok := m.Get("k", t0); ok {
		t.Fatal("the zero Map has a key")
	}
	m.Put("k", 1, t0.Add(time.Second), t0)
	if v, ok := m.Get("k", t0.Add(time.Second-time.Nanosecond)); !ok || v != 1 {
		t.Fatalf("before its deadline: %v, %v; want 1, true", v, ok)
	}
	if _, ok := m.Get("k", t0.Add(time.Second)); ok {
		t.Fatal("the entry outlived its deadline")
	}
	if m.Len() != 0 {
		t.Fatalf("Len() = %d after Get found the entry expired, want 0", m.Len())
	}
	m.Put("k", 2, t0.Add(time.Second), t0)
	m.Put("k", 3, t0.Add(time.Minute), t0)
	if v, ok := m.Get("k", t0.Add(time.Second)); !ok || v != 3 {
		t.Fatalf("after a second Put: %v, %v; want its value and deadline", v, ok)
	}
	m.Delete("k")
	if _, ok := m.Get("k", t0); ok || m.Len() != 0 {
		t.Fatal("Delete left the key")
	}
}

// putN puts n keys named prefix0, prefix1, ... until until.
func putN(m *Map[int], prefix string, n int, until, now time.Time) {
	for i := range n {
		m.Put(fmt.Sprint(prefix, i), i, until, now)
	}
}

func wantLen(t *testing.T, m *Map[int], n int, when string) {
	t.Helper()
	if m.Len() != n {
		t.Fatalf("Len() = %d %s, want %d", m.Len(), when, n)
	}
}

// A full map of live entries trims to 7/8 of its bound at once, not by one
// entry per new key, and never drops the key being put.
func TestFullMapTrims(t *testing.T) {
	m := &Map[int]{MaxKeys: 80}
	later := t0.Add(time.Hour)
	putN(m, "k", 80, later, t0)
	wantLen(t, m, 80, "once full")
	m.Put("new", -1, later, t0)
	wantLen(t, m, 70, "after a put into a full map (7/8 of 80)")
	if v, ok := m.Get("new", t0); !ok || v != -1 {
		t.Fatal("the key being put was dropped")
	}
	putN(m, "more", 10, later, t0)
	wantLen(t, m, 80, "after 10 more keys: the room made lasts")
	m.Put("new", -2, later, t0)
	wantLen(t, m, 80, "after replacing a value in a full map")
	for i := range 1000 {
		m.Put(fmt.Sprint("flood", i), i, later, t0)
		if m.Len() > 80 {
			t.Fatalf("Len() = %d, over MaxKeys 80", m.Len())
		}
	}
}

// A full map drops its expired entries before any live one.
func TestFullMapDropsExpiredFirst(t *testing.T) {
	m := &Map[int]{MaxKeys: 8}
	putN(m, "old", 4, t0.Add(time.Second), t0)
	putN(m, "live", 4, t0.Add(time.Hour), t0)
	now := t0.Add(time.Minute)
	m.Put("new", 0, t0.Add(time.Hour), now)
	wantLen(t, m, 5, "after a put dropped the expired entries: the 4 live ones and the new one")
	for i := range 4 {
		if _, ok := m.Get(fmt.Sprint("live", i), now); !ok {
			t.Fatalf("live%d was dropped while expired entries made room", i)
		}
	}
}

// Expired entries go at most once per SweepEvery when new keys come in,
// full or not; without SweepEvery, only a full map sweeps.
func TestSweepEvery(t *testing.T) {
	m := &Map[int]{MaxKeys: 100, SweepEvery: time.Minute}
	putN(m, "k", 10, t0.Add(time.Second), t0)
	// The first Put swept (nothing was due yet) and set the next sweep a
	// minute on: entries expired since stay until then.
	m.Put("a", 0, t0.Add(time.Hour), t0.Add(30*time.Second))
	wantLen(t, m, 11, "before the sweep was due")
	m.Put("b", 0, t0.Add(time.Hour), t0.Add(time.Minute))
	wantLen(t, m, 2, "after the sweep")

	never := &Map[int]{}
	putN(never, "k", 10, t0.Add(time.Second), t0)
	never.Put("a", 0, t0.Add(time.Hour), t0.Add(time.Hour))
	wantLen(t, never, 11, "without SweepEvery: nothing sweeps a map that is not full")
}
