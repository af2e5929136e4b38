package engine

import (
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stampedeless/stampedeless/internal/testwait"
)

// changeLog is a listener that records what it is told: the changes,
// and with quiet the notices of keys created and reads missed too.
type changeLog struct {
	mu    sync.Mutex
	got   []string
	quiet bool
}

func (l *changeLog) listen(ch Change) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.quiet && (ch.Kind == Created || ch.Kind == Missed) {
		return
	}
	l.got = append(l.got, fmt.Sprintf("%s %s", kindName(ch.Kind), ch.Key))
}

// take returns what was recorded since the last take.
func (l *changeLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	got := l.got
	l.got = nil
	return got
}

func kindName(k ChangeKind) string {
	return map[ChangeKind]string{Written: "written", Deleted: "deleted", Expired: "expired",
		Evicted: "evicted", Flushed: "flushed", Invalidated: "invalidated",
		Created: "created", Missed: "missed"}[k]
}

// TestListenerHearsEveryChange runs each kind of write and removal and
// checks, as each call returns, what the listener was told: every change
// to what a reader gets, and nothing for calls that change nothing.
func TestListenerHearsEveryChange(t *testing.T) {
	s, clk := newClockStore(t)
	var log changeLog
	s.Listen(log.listen)
	k := []byte("k")
	steps := []struct {
		name string
		do   func()
		want []string
	}{
		{"set", func() { set(t, s, "k", "v") }, []string{"written k"}},
		{"set nx on a live key", func() { mustSet(t, s, "k", "v", SetOptions{Condition: IfAbsent}) }, nil},
		{"set xx on a missing key", func() { mustSet(t, s, "m", "v", SetOptions{Condition: IfPresent}) }, nil},
		{"update", func() {
			s.Update(k, func(old []byte, _ bool) ([]byte, error) { return append(old, '!'), nil })
		}, []string{"written k"}},
		{"failed update", func() {
			s.Update(k, func([]byte, bool) ([]byte, error) { return nil, ErrTooLarge })
		}, nil},
		{"mset", func() { s.SetMulti([][]byte{[]byte("a"), []byte("1"), []byte("b"), []byte("2")}, Always) },
			[]string{"written a", "written b"}},
		{"msetnx that writes nothing", func() { s.SetMulti([][]byte{[]byte("a"), []byte("1"), []byte("c"), []byte("3")}, IfAbsent) }, nil},
		{"expire in the future", func() { s.Expire(k, clk.in(time.Minute), ExpireAlways) }, []string{"written k"}},
		{"expire nx on a key with a deadline", func() { s.Expire(k, clk.in(time.Hour), ExpireIfNone) }, nil},
		{"persist", func() { s.Persist(k) }, []string{"written k"}},
		{"persist without a deadline", func() { s.Persist(k) }, nil},
		{"getex persist without a deadline", func() { s.GetEx(k, 0, true) }, nil},
		{"getex ex", func() { s.GetEx(k, clk.in(time.Minute), false) }, []string{"written k"}},
		{"getex persist", func() { s.GetEx(k, 0, true) }, []string{"written k"}},
		{"plain read", func() { s.Get(k) }, nil},
		{"delete", func() { s.Delete(k) }, []string{"deleted k"}},
		{"delete of a missing key", func() { s.Delete(k) }, nil},
		{"getdel", func() { s.GetDel([]byte("a")) }, []string{"deleted a"}},
		{"expire in the past", func() { s.Expire([]byte("b"), clk.nanos(), ExpireAlways) }, []string{"deleted b"}},
		{"getex in the past", func() {
			set(t, s, "g", "v")
			s.GetEx([]byte("g"), clk.nanos(), false)
		}, []string{"written g", "deleted g"}},
		{"lazy expiry by a read", func() {
			mustSet(t, s, "e", "v", SetOptions{StaleUntil: clk.in(time.Second)})
			clk.advance(2 * time.Second)
			s.Get([]byte("e"))
		}, []string{"written e", "expired e"}},
		{"a write over an expired key", func() {
			mustSet(t, s, "e", "v", SetOptions{StaleUntil: clk.in(time.Second)})
			clk.advance(2 * time.Second)
			set(t, s, "e", "w")
		}, []string{"written e", "expired e", "written e"}},
		{"fenced delete", func() {
			set(t, s, "f", "v")
			s.DeleteFenced(s.Fence([]byte("f")))
		}, []string{"written f", "deleted f"}},
		{"fenced set after a write", func() {
			f := s.Fence([]byte("f"))
			set(t, s, "f", "client")
			mustSet(t, s, "f", "fill", SetOptions{Fence: f})
		}, []string{"written f"}},
		{"invalidate a live key", func() {
			set(t, s, "i", "v")
			s.Invalidate([]byte("i"))
		}, []string{"written i", "invalidated i"}},
		{"invalidate a missing key", func() { s.Invalidate([]byte("i")) }, []string{"invalidated i"}},
		{"drop stale of a fresh key", func() {
			mustSet(t, s, "s", "v", SetOptions{FreshUntil: clk.in(time.Minute), StaleUntil: clk.in(time.Hour)})
			s.DropStale([]byte("s"))
		}, []string{"written s"}},
		{"drop stale of a stale key", func() {
			clk.advance(2 * time.Minute)
			s.DropStale([]byte("s"))
		}, []string{"invalidated s"}},
		{"drop stale of a missing key", func() { s.DropStale([]byte("s")) }, []string{"invalidated s"}},
		{"flush", func() { s.FlushAll() }, []string{"flushed "}},
	}
	for _, st := range steps {
		st.do()
		if got := log.take(); !slices.Equal(got, st.want) {
			t.Errorf("%s: listener told %q, want %q", st.name, got, st.want)
		}
	}
	s.Listen(nil)
	set(t, s, "k", "v")
	if got := log.take(); got != nil {
		t.Errorf("after Listen(nil) the listener was told %q", got)
	}
}

// TestListenerHearsTheSweeper: keys the sweeper removes are reported.
func TestListenerHearsTheSweeper(t *testing.T) {
	s := newStore(t, Options{ExpireInterval: time.Millisecond})
	var log changeLog
	s.Listen(log.listen)
	past := time.Now().Add(50 * time.Millisecond).UnixNano()
	mustSet(t, s, "short", "v", SetOptions{StaleUntil: past})
	testwait.For(t, "the sweeper to report the expired key", func() bool {
		log.mu.Lock()
		defer log.mu.Unlock()
		return slices.Contains(log.got, "expired short")
	})
	if inIndex(s, "short") {
		t.Error("the key was reported expired but is still in its shard")
	}
}

// TestListenerHearsThePolicy: every key the eviction or admission policy
// removed is reported once, as the stats count it, and is gone.
func TestListenerHearsThePolicy(t *testing.T) {
	s := newStore(t, Options{MaxMemory: 64 << 10, ExpireInterval: noSweep})
	var log changeLog
	s.Listen(log.listen)
	for i := range 2000 {
		set(t, s, "key:"+strconv.Itoa(i), "value")
	}
	removed := map[string]int{}
	for _, line := range log.take() {
		var kind, key string
		fmt.Sscan(line, &kind, &key)
		if kind == "evicted" {
			removed[kind]++
			if _, live := s.Peek([]byte(key)); live {
				t.Errorf("%s was reported %s but is live", key, kind)
			}
		}
	}
	st := s.Stats()
	if int64(removed["evicted"]) != st.Evicted {
		t.Errorf("reported %d evicted; the stats say %d", removed["evicted"], st.Evicted)
	}
	if st.Evicted == 0 {
		t.Fatal("nothing was evicted or rejected: the test did not fill the store")
	}
}

// TestLoadedWritesSaySo: a write with SetOptions.Loaded is told as
// Written with Loaded, any other without; DeleteMulti names the keys it
// removed, in order.
func TestLoadedWritesSaySo(t *testing.T) {
	s, _ := newClockStore(t)
	var got []string
	s.Listen(func(ch Change) {
		if ch.Kind != Created {
			got = append(got, fmt.Sprintf("%s %s %v", kindName(ch.Kind), ch.Key, ch.Loaded))
		}
	})
	mustSet(t, s, "a", "v", SetOptions{Loaded: true})
	mustSet(t, s, "b", "v", SetOptions{})
	mustSet(t, s, "a", "w", SetOptions{Loaded: true, Condition: IfAbsent}) // not written: not told
	want := []string{"written a true", "written b false"}
	if !slices.Equal(got, want) {
		t.Fatalf("told %q, want %q", got, want)
	}
	var deleted []int
	if n := s.DeleteMulti([][]byte{[]byte("x"), []byte("b"), []byte("a")}, func(i int) { deleted = append(deleted, i) }); n != 2 ||
		!slices.Equal(deleted, []int{1, 2}) {
		t.Fatalf("DeleteMulti: %d, indexes %v; want 2, [1 2]", n, deleted)
	}
	deleted = nil
	if n := s.DeleteMulti([][]byte{[]byte("a")}, func(i int) { deleted = append(deleted, i) }); n != 0 || deleted != nil {
		t.Fatalf("DeleteMulti of a missing key: %d, %v", n, deleted)
	}
}

// TestListenerCreatedAndMissed: a write that adds a key is told as Created
// before its Written, where Redis's dbAdd is (RENAME's destination even
// when it replaced one), and a read that finds nothing as Missed, where
// Redis's lookupKeyRead misses; neither counts as a change.
func TestListenerCreatedAndMissed(t *testing.T) {
	s, _ := newClockStore(t)
	log := changeLog{quiet: true}
	s.Listen(log.listen)
	b := func(keys ...string) [][]byte {
		out := make([][]byte, len(keys))
		for i, k := range keys {
			out[i] = []byte(k)
		}
		return out
	}
	steps := []struct {
		name string
		do   func()
		want []string
	}{
		{"set", func() { set(t, s, "k", "v") }, []string{"created k", "written k"}},
		{"set again", func() { set(t, s, "k", "w") }, []string{"written k"}},
		{"get a missing key", func() { s.Get([]byte("nope")) }, []string{"missed nope"}},
		{"get a live key", func() { s.Get([]byte("k")) }, nil},
		{"mset", func() { s.SetMulti(b("k", "m", "1", "2"), Always) }, []string{"written k", "created 1", "written 1"}},
		{"rename over a key", func() { s.Rename([]byte("k"), []byte("m"), false) },
			[]string{"created m", "written m", "deleted k"}},
		{"lookup without touch", func() { s.LookupNoTouch([]byte("nope")) }, []string{"missed nope"}},
		{"inspect", func() { s.Inspect([]byte("nope")) }, nil},
		{"count a miss", func() { s.CountMiss([]byte("x")) }, []string{"missed x"}},
		{"rotate a list of one", func() {
			s.LPush([]byte("l"), b("a"), true, false)
			s.LMove([]byte("l"), []byte("l"), true, false)
		}, []string{"created l", "written l", "written l"}},
		{"pfmerge into a missing key", func() { s.PFMerge([]byte("p"), b("q")) },
			[]string{"missed p", "missed q", "created p", "written p"}},
		// A fenced write of no load is the shared tier's copy of a key that
		// exists elsewhere; a fill creates its key.
		{"a copy", func() { mustSet(t, s, "c", "v", SetOptions{Fence: s.Fence([]byte("c"))}) }, []string{"written c"}},
		{"a fill", func() { mustSet(t, s, "f", "v", SetOptions{Fence: s.Fence([]byte("f")), Loaded: true}) },
			[]string{"created f", "written f"}},
	}
	changes := s.Changes()
	for _, st := range steps {
		st.do()
		if got := log.take(); !slices.Equal(got, st.want) {
			t.Errorf("%s: listener told %q, want %q", st.name, got, st.want)
		}
	}
	// Written k, k, k and 1, m and k's removal, l twice, p, c, f.
	if got := s.Changes() - changes; got != 11 {
		t.Errorf("Changes counted %d, want 11", got)
	}
}
