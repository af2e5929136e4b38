package engine

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stampedeless/stampedeless/internal/testwait"
)

func TestExpiryLazy(t *testing.T) {
	s, clk := newClockStore(t)
	deadline := clk.in(10 * time.Second)
	mustSet(t, s, "k", "v", SetOptions{StaleUntil: deadline})
	set(t, s, "p", "persistent")

	// Before the deadline everything sees the key.
	clk.advance(10*time.Second - 1)
	wantValue(t, s, "k", "v")
	env, ok := s.Peek([]byte("k"))
	if !ok || env.StaleUntil != deadline || env.FreshUntil != deadline {
		t.Errorf("Peek = %+v, %v; want both deadlines %d", env, ok, deadline)
	}
	if n := s.Len(); n != 2 {
		t.Errorf("Len() = %d, want 2", n)
	}
	if n := s.Volatile(); n != 1 {
		t.Errorf("Volatile() = %d, want 1", n)
	}
	if keys := s.Keys([]byte("*")); sameSet(keys, setOf("k", "p")) != "" {
		t.Errorf("Keys(*) = %q", keys)
	}

	// At the deadline the key is gone for every reader, though nothing has
	// removed it from the map yet.
	clk.advance(1)
	if _, ok := s.Peek([]byte("k")); ok {
		t.Error("Peek found a key at its deadline")
	}
	if n := s.Len(); n != 1 {
		t.Errorf("Len() = %d at the deadline, want 1", n)
	}
	if n := s.Volatile(); n != 0 {
		t.Errorf("Volatile() = %d at the deadline, want 0", n)
	}
	if keys := s.Keys([]byte("*")); sameSet(keys, setOf("p")) != "" {
		t.Errorf("Keys(*) = %q at the deadline", keys)
	}
	if keys := s.Keys([]byte("k")); len(keys) != 0 {
		t.Errorf("Keys(k) = %q at the deadline", keys)
	}
	if keys := fullScan(t, s, nil, 10); sameSet(keys, setOf("p")) != "" {
		t.Errorf("Scan = %q at the deadline", keys)
	}
	if touch(s, "k") {
		t.Error("Touch found a key at its deadline")
	}
	for range 50 {
		if k, _ := s.RandomKey(); k != "p" {
			t.Fatalf("RandomKey() = %q at the deadline, want p", k)
		}
	}
	if st := s.Stats(); st.Expired != 0 {
		t.Errorf("Expired = %d before any reader removed the key", st.Expired)
	}

	wantMiss(t, s, "k")
	if st := s.Stats(); st.Expired != 1 {
		t.Errorf("Expired = %d after Get removed the key, want 1", st.Expired)
	}
	wantMiss(t, s, "k")
	if st := s.Stats(); st.Expired != 1 {
		t.Errorf("Expired = %d, counted twice", st.Expired)
	}
	wantValue(t, s, "p", "persistent")
	checkInvariants(t, s)
}

func TestExpiredKeyIsAbsentForWrites(t *testing.T) {
	s, clk := newClockStore(t)
	expire := func(key string) {
		mustSet(t, s, key, "old", SetOptions{StaleUntil: clk.in(time.Second)})
	}
	expire("nx")
	expire("xx")
	expire("del")
	expire("exp")
	expire("persist")
	expire("getex")
	clk.advance(time.Second)

	res := mustSet(t, s, "nx", "new", SetOptions{Condition: IfAbsent})
	if !res.Written || res.HadOld {
		t.Errorf("IfAbsent over an expired key = %+v, want written with no old value", res)
	}
	if env, _ := s.Peek([]byte("nx")); env.StaleUntil != 0 {
		t.Errorf("new key kept the expired deadline: %+v", env)
	}
	res = mustSet(t, s, "xx", "new", SetOptions{Condition: IfPresent})
	if res.Written || res.HadOld {
		t.Errorf("IfPresent over an expired key = %+v, want nothing written", res)
	}
	wantMiss(t, s, "xx")
	if s.Delete([]byte("del")) {
		t.Error("Delete of an expired key = true")
	}
	if s.Expire([]byte("exp"), clk.in(time.Hour), ExpireAlways) {
		t.Error("Expire of an expired key = true")
	}
	if s.Persist([]byte("persist")) {
		t.Error("Persist of an expired key = true")
	}
	if v, ok, _ := s.GetEx([]byte("getex"), 0, true); ok {
		t.Errorf("GetEx of an expired key = %q", v)
	}
	if st := s.Stats(); st.Expired != 6 {
		t.Errorf("Expired = %d, want 6", st.Expired)
	}
	checkInvariants(t, s)
}

func TestSweeperRemovesExpiredKeys(t *testing.T) {
	clk := newFakeClock()
	s := newStore(t, Options{MaxMemory: 64 << 20, Now: clk.Now, ExpireInterval: 5 * time.Millisecond})
	const n = 3000
	for i := range n {
		mustSet(t, s, fmt.Sprintf("vol:%d", i), "v", SetOptions{StaleUntil: clk.in(time.Minute)})
		set(t, s, fmt.Sprintf("per:%d", i), "v")
	}
	if st := s.Stats(); st.Expired != 0 {
		t.Fatalf("Expired = %d before the deadline", st.Expired)
	}
	clk.advance(time.Minute)
	testwait.For(t, "the sweeper to expire every volatile key", func() bool {
		return s.Stats().Expired == n
	})
	entries, cost := liveCost(s)
	if entries != n {
		t.Errorf("%d entries left in the maps, want the %d persistent ones", entries, n)
	}
	if got := s.Len(); got != n {
		t.Errorf("Len() = %d, want %d", got, n)
	}
	if got := s.Stats().Cost; got != cost {
		t.Errorf("Cost = %d after the expired entries were swept, want %d", got, cost)
	}
	checkInvariants(t, s)
}

func TestExpireConditions(t *testing.T) {
	s, clk := newClockStore(t)
	t10, t20, t30 := clk.in(10*time.Second), clk.in(20*time.Second), clk.in(30*time.Second)
	type expireCase struct {
		name      string
		ttl       int64 // the key's deadlines before the call; 0: none
		missing   bool
		at        int64
		cond      ExpireCondition
		want      bool
		wantStale int64
		wantFresh int64 // if not wantStale: an earlier fresh deadline is kept
	}
	tests := []expireCase{
		{name: "always/none", at: t20, cond: ExpireAlways, want: true, wantStale: t20},
		{name: "always/set", ttl: t10, at: t30, cond: ExpireAlways, want: true, wantStale: t30, wantFresh: t10},
		{name: "always/shorter", ttl: t30, at: t10, cond: ExpireAlways, want: true, wantStale: t10},
		{name: "NX/none", at: t20, cond: ExpireIfNone, want: true, wantStale: t20},
		{name: "NX/set", ttl: t10, at: t20, cond: ExpireIfNone, want: false, wantStale: t10},
		{name: "XX/none", at: t20, cond: ExpireIfSet, want: false, wantStale: 0},
		{name: "XX/set", ttl: t10, at: t20, cond: ExpireIfSet, want: true, wantStale: t20, wantFresh: t10},
		// A key without a deadline counts as never expiring.
		{name: "GT/none", at: t20, cond: ExpireIfLater, want: false, wantStale: 0},
		{name: "GT/later", ttl: t10, at: t20, cond: ExpireIfLater, want: true, wantStale: t20, wantFresh: t10},
		{name: "GT/equal", ttl: t20, at: t20, cond: ExpireIfLater, want: false, wantStale: t20},
		{name: "GT/earlier", ttl: t30, at: t20, cond: ExpireIfLater, want: false, wantStale: t30},
		{name: "LT/none", at: t20, cond: ExpireIfEarlier, want: true, wantStale: t20},
		{name: "LT/earlier", ttl: t30, at: t20, cond: ExpireIfEarlier, want: true, wantStale: t20},
		{name: "LT/equal", ttl: t20, at: t20, cond: ExpireIfEarlier, want: false, wantStale: t20},
		{name: "LT/later", ttl: t10, at: t20, cond: ExpireIfEarlier, want: false, wantStale: t10},
		// XX and LT together: a deadline is needed and must move earlier.
		{name: "XX+LT/none", at: t20, cond: ExpireIfSetEarlier, want: false, wantStale: 0},
		{name: "XX+LT/earlier", ttl: t30, at: t20, cond: ExpireIfSetEarlier, want: true, wantStale: t20},
		{name: "XX+LT/equal", ttl: t20, at: t20, cond: ExpireIfSetEarlier, want: false, wantStale: t20},
		{name: "XX+LT/later", ttl: t10, at: t20, cond: ExpireIfSetEarlier, want: false, wantStale: t10},
	}
	for _, cond := range []ExpireCondition{ExpireAlways, ExpireIfNone, ExpireIfSet, ExpireIfLater, ExpireIfEarlier, ExpireIfSetEarlier} {
		tests = append(tests, expireCase{name: fmt.Sprintf("missing/%d", cond), missing: true, at: t20, cond: cond})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			key := []byte("key/" + tt.name)
			if !tt.missing {
				mustSet(t, s, string(key), "v", SetOptions{StaleUntil: tt.ttl})
			}
			if got := s.Expire(key, tt.at, tt.cond); got != tt.want {
				t.Errorf("Expire = %v, want %v", got, tt.want)
			}
			env, ok := s.Peek(key)
			if ok == tt.missing {
				t.Fatalf("Peek live = %v", ok)
			}
			if env.StaleUntil != tt.wantStale {
				t.Errorf("StaleUntil = %d, want %d", env.StaleUntil, tt.wantStale)
			}
			wantFresh := tt.wantFresh
			if wantFresh == 0 {
				wantFresh = tt.wantStale
			}
			if env.FreshUntil != wantFresh {
				t.Errorf("FreshUntil = %d, want %d", env.FreshUntil, wantFresh)
			}
		})
	}
	checkInvariants(t, s)
}

func TestExpireInThePastDeletes(t *testing.T) {
	s, clk := newClockStore(t)
	for _, tc := range []struct {
		name string
		ttl  int64
		at   int64
		cond ExpireCondition
	}{
		{"now", 0, clk.nanos(), ExpireAlways},
		{"past", 0, clk.in(-time.Hour), ExpireAlways},
		{"LT/none", 0, clk.in(-time.Second), ExpireIfEarlier},
		{"XX/set", clk.in(time.Hour), clk.in(-time.Second), ExpireIfSet},
		{"NX/none", 0, 1, ExpireIfNone},
	} {
		mustSet(t, s, tc.name, "v", SetOptions{StaleUntil: tc.ttl})
		if !s.Expire([]byte(tc.name), tc.at, tc.cond) {
			t.Errorf("%s: Expire in the past = false, want true", tc.name)
		}
		wantMiss(t, s, tc.name)
	}
	// A condition that fails leaves the key alone even with a past deadline.
	set(t, s, "gt", "v")
	if s.Expire([]byte("gt"), clk.in(-time.Second), ExpireIfLater) {
		t.Error("GT on a key without deadline = true")
	}
	wantValue(t, s, "gt", "v")
	mustSet(t, s, "nx", "v", SetOptions{StaleUntil: clk.in(time.Hour)})
	if s.Expire([]byte("nx"), clk.in(-time.Second), ExpireIfNone) {
		t.Error("NX on a key with a deadline = true")
	}
	wantValue(t, s, "nx", "v")
	if s.Expire([]byte("missing"), clk.in(-time.Second), ExpireAlways) {
		t.Error("Expire of a missing key = true")
	}
	if n := s.Len(); n != 2 {
		t.Errorf("Len() = %d, want 2", n)
	}
	checkInvariants(t, s)
}

func TestExpirePullsInFreshDeadline(t *testing.T) {
	s, clk := newClockStore(t)
	fresh, stale := clk.in(5*time.Second), clk.in(20*time.Second)
	mustSet(t, s, "k", "v", SetOptions{FreshUntil: fresh, StaleUntil: stale})

	// A stale deadline after the fresh one keeps the fresh one.
	if !s.Expire([]byte("k"), clk.in(10*time.Second), ExpireAlways) {
		t.Fatal("Expire = false")
	}
	if env, _ := s.Peek([]byte("k")); env.FreshUntil != fresh || env.StaleUntil != clk.in(10*time.Second) {
		t.Errorf("envelope %+v, want fresh %d stale %d", env, fresh, clk.in(10*time.Second))
	}
	// One before it pulls the fresh deadline in.
	if !s.Expire([]byte("k"), clk.in(3*time.Second), ExpireAlways) {
		t.Fatal("Expire = false")
	}
	if env, _ := s.Peek([]byte("k")); env.FreshUntil != clk.in(3*time.Second) || env.StaleUntil != clk.in(3*time.Second) {
		t.Errorf("envelope %+v, want both deadlines %d", env, clk.in(3*time.Second))
	}
}

func TestPersist(t *testing.T) {
	s, clk := newClockStore(t)
	mustSet(t, s, "k", "v", SetOptions{FreshUntil: clk.in(time.Second), StaleUntil: clk.in(2 * time.Second)})
	set(t, s, "p", "v")
	if !s.Persist([]byte("k")) {
		t.Fatal("Persist of a key with a deadline = false")
	}
	if env, _ := s.Peek([]byte("k")); env.FreshUntil != 0 || env.StaleUntil != 0 {
		t.Errorf("after Persist: %+v", env)
	}
	if s.Persist([]byte("k")) {
		t.Error("second Persist = true")
	}
	if s.Persist([]byte("p")) {
		t.Error("Persist of a key without deadline = true")
	}
	if s.Persist([]byte("missing")) {
		t.Error("Persist of a missing key = true")
	}
	if n := s.Volatile(); n != 0 {
		t.Errorf("Volatile() = %d after Persist", n)
	}
	clk.advance(time.Hour)
	wantValue(t, s, "k", "v")
	checkInvariants(t, s)
}

func TestGetEx(t *testing.T) {
	s, clk := newClockStore(t)
	mustSet(t, s, "k", "v", SetOptions{FreshUntil: clk.in(time.Second), StaleUntil: clk.in(2 * time.Second)})

	// Neither at nor persist: a plain Get.
	if v, ok, _ := s.GetEx([]byte("k"), 0, false); !ok || string(v) != "v" {
		t.Fatalf("GetEx = %q, %v", v, ok)
	}
	if env, _ := s.Peek([]byte("k")); env.StaleUntil != clk.in(2*time.Second) {
		t.Errorf("plain GetEx changed the deadline: %+v", env)
	}

	at := clk.in(time.Minute)
	if v, ok, _ := s.GetEx([]byte("k"), at, false); !ok || string(v) != "v" {
		t.Fatalf("GetEx(at) = %q, %v", v, ok)
	}
	if env, _ := s.Peek([]byte("k")); env.StaleUntil != at || env.FreshUntil != at {
		t.Errorf("after GetEx(at): %+v, want both deadlines %d", env, at)
	}

	if v, ok, _ := s.GetEx([]byte("k"), 0, true); !ok || string(v) != "v" {
		t.Fatalf("GetEx(persist) = %q, %v", v, ok)
	}
	if env, _ := s.Peek([]byte("k")); env.StaleUntil != 0 || env.FreshUntil != 0 {
		t.Errorf("after GetEx(persist): %+v", env)
	}
	if n := s.Volatile(); n != 0 {
		t.Errorf("Volatile() = %d", n)
	}

	// A deadline not in the future returns the value and deletes the key.
	if v, ok, _ := s.GetEx([]byte("k"), clk.nanos(), false); !ok || string(v) != "v" {
		t.Fatalf("GetEx(now) = %q, %v", v, ok)
	}
	wantMiss(t, s, "k")
	if v, ok, _ := s.GetEx([]byte("k"), at, false); ok || v != nil {
		t.Errorf("GetEx of a missing key = %q, %v", v, ok)
	}
	if v, ok, _ := s.GetEx([]byte("k"), 0, true); ok || v != nil {
		t.Errorf("GetEx(persist) of a missing key = %q, %v", v, ok)
	}
	checkInvariants(t, s)
}

func TestKeepTTL(t *testing.T) {
	s, clk := newClockStore(t)
	fresh, stale := clk.in(time.Second), clk.in(2*time.Second)
	mustSet(t, s, "k", "v1", SetOptions{FreshUntil: fresh, StaleUntil: stale})

	res := mustSet(t, s, "k", "v2", SetOptions{KeepTTL: true, Get: true})
	if !res.Written || string(res.Old) != "v1" {
		t.Errorf("Set KeepTTL = %+v", res)
	}
	env, _ := s.Peek([]byte("k"))
	if string(env.Value) != "v2" || env.FreshUntil != fresh || env.StaleUntil != stale {
		t.Errorf("after KeepTTL: %+v, want v2 with %d/%d", env, fresh, stale)
	}
	// KeepTTL wins over deadlines given with it, as SET's KEEPTTL does.
	mustSet(t, s, "k", "v3", SetOptions{KeepTTL: true, StaleUntil: clk.in(time.Hour)})
	if env, _ := s.Peek([]byte("k")); env.StaleUntil != stale {
		t.Errorf("KeepTTL with a deadline: %+v, want stale %d", env, stale)
	}

	// A plain Set drops the deadline, as SET does.
	mustSet(t, s, "k", "v4", SetOptions{})
	if env, _ := s.Peek([]byte("k")); env.StaleUntil != 0 || env.FreshUntil != 0 {
		t.Errorf("plain Set kept a deadline: %+v", env)
	}
	clk.advance(time.Hour)
	wantValue(t, s, "k", "v4")

	// KeepTTL on a new key: nothing to keep, so no deadline.
	mustSet(t, s, "new", "v", SetOptions{KeepTTL: true})
	if env, _ := s.Peek([]byte("new")); env.StaleUntil != 0 {
		t.Errorf("KeepTTL on a new key: %+v", env)
	}
	if n := s.Volatile(); n != 0 {
		t.Errorf("Volatile() = %d", n)
	}
	checkInvariants(t, s)
}

func TestFreshAndStaleDeadlines(t *testing.T) {
	s, clk := newClockStore(t)
	fresh, stale := clk.in(time.Second), clk.in(time.Minute)
	fill := &FillMeta{Loader: "origin", ETag: "e1"}
	mustSet(t, s, "k", "v", SetOptions{FreshUntil: fresh, StaleUntil: stale, Fill: fill})
	env, ok := s.Lookup([]byte("k"))
	if !ok || env.FreshUntil != fresh || env.StaleUntil != stale || env.Fill == nil || *env.Fill != *fill || string(env.Value) != "v" {
		t.Fatalf("Lookup = %+v, %v", env, ok)
	}
	// Past the fresh deadline the entry is stale but still served.
	clk.advance(2 * time.Second)
	if env, ok := s.Lookup([]byte("k")); !ok || env.FreshUntil != fresh {
		t.Errorf("stale entry: %+v, %v", env, ok)
	}
	// Past the stale deadline it is gone.
	clk.advance(time.Minute)
	if _, ok := s.Lookup([]byte("k")); ok {
		t.Error("entry served past its stale deadline")
	}

	// A zero FreshUntil means the same as StaleUntil.
	mustSet(t, s, "same", "v", SetOptions{StaleUntil: clk.in(time.Minute)})
	if env, _ := s.Peek([]byte("same")); env.FreshUntil != clk.in(time.Minute) {
		t.Errorf("FreshUntil = %d, want %d", env.FreshUntil, clk.in(time.Minute))
	}
}

func TestVolatileCountThroughTransitions(t *testing.T) {
	// sh.volatile tells Len and the sweeper whether a shard needs walking;
	// every way a deadline appears or disappears must keep it in step.
	s, clk := newClockStore(t)
	var keys []string
	for i := range 400 {
		keys = append(keys, fmt.Sprintf("k%d", i))
	}
	for i, k := range keys {
		switch i % 8 {
		case 0:
			mustSet(t, s, k, "v", SetOptions{StaleUntil: clk.in(time.Hour)})
		case 1:
			mustSet(t, s, k, "v", SetOptions{StaleUntil: clk.in(time.Hour)})
			mustSet(t, s, k, "v", SetOptions{})
		case 2:
			set(t, s, k, "v")
			s.Expire([]byte(k), clk.in(time.Hour), ExpireAlways)
		case 3:
			mustSet(t, s, k, "v", SetOptions{StaleUntil: clk.in(time.Hour)})
			s.Persist([]byte(k))
		case 4:
			mustSet(t, s, k, "v", SetOptions{StaleUntil: clk.in(time.Hour)})
			s.SetMulti([][]byte{[]byte(k), []byte("w")}, Always)
		case 5:
			mustSet(t, s, k, "v", SetOptions{StaleUntil: clk.in(time.Hour)})
			s.Delete([]byte(k))
		case 6:
			mustSet(t, s, k, "v", SetOptions{StaleUntil: clk.in(time.Second)})
		case 7:
			set(t, s, k, "v")
			s.GetEx([]byte(k), clk.in(time.Hour), false)
		}
	}
	checkInvariants(t, s)
	if n := s.Volatile(); n != 50*4 {
		t.Errorf("Volatile() = %d, want 200", n)
	}
	clk.advance(2 * time.Second) // expires the case 6 keys
	if n := s.Volatile(); n != 50*3 {
		t.Errorf("Volatile() = %d, want 150", n)
	}
	if n := s.Len(); n != 400-100 {
		t.Errorf("Len() = %d, want 300", n)
	}
	var live []string
	for i, k := range keys {
		if i%8 != 5 && i%8 != 6 {
			live = append(live, k)
		}
	}
	got := s.Keys(nil)
	slices.Sort(got)
	slices.Sort(live)
	if !slices.Equal(got, live) {
		t.Errorf("Keys() = %d keys, want %d", len(got), len(live))
	}
	checkInvariants(t, s)
}

func TestExpiryRacesWithWriters(t *testing.T) {
	// The clock runs, the sweeper and readers expire entries, and writers
	// set, extend, persist and delete the same keys. Whatever interleaving
	// happens, a read never returns an expired entry, and afterwards the
	// shards' volatile counts and the charges match the maps.
	clk := newFakeClock()
	s := newStore(t, Options{MaxMemory: 64 << 20, Now: clk.Now, ExpireInterval: time.Millisecond})
	stop := make(chan struct{})
	var bg, writers sync.WaitGroup
	bg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			clk.advance(time.Millisecond)
			runtime.Gosched()
		}
	})
	for g := range 4 {
		writers.Go(func() {
			r := rand.New(rand.NewPCG(uint64(g), 9))
			for range 5000 {
				key := []byte("k" + strconv.Itoa(r.IntN(300)))
				ttl := time.Duration(r.IntN(50)) * time.Millisecond
				switch r.IntN(7) {
				case 0, 1:
					if _, err := s.Set(key, []byte("v"), SetOptions{StaleUntil: clk.in(ttl)}); err != nil {
						t.Error(err)
						return
					}
				case 2:
					s.Expire(key, clk.in(ttl), ExpireCondition(r.IntN(6)))
				case 3:
					s.Persist(key)
				case 4:
					s.Delete(key)
				case 5:
					s.GetEx(key, clk.in(ttl), r.IntN(2) == 0)
				case 6:
					now := clk.nanos()
					if env, ok := s.Lookup(key); ok && env.StaleUntil != 0 && env.StaleUntil <= now {
						t.Errorf("Lookup returned an entry expired at %d, read at or after %d", env.StaleUntil, now)
						return
					}
				}
			}
		})
	}
	writers.Wait()
	close(stop)
	bg.Wait()
	// With the clock stopped, the sweeper goes quiet once it has removed
	// what already expired; only then do the maps hold still.
	swept := func() bool {
		n, _ := liveCost(s)
		return n == s.Len()
	}
	testwait.For(t, "the sweeper to remove every expired key", swept)
	checkInvariants(t, s)
	clk.advance(time.Hour)
	testwait.For(t, "the sweeper to remove every expired key", swept)
	checkInvariants(t, s)
	if n := s.Volatile(); n != 0 {
		t.Errorf("Volatile() = %d an hour after the last write", n)
	}
}

func TestGetExRacesWithSet(t *testing.T) {
	// GetEx keeps the entry in the map while a Set may replace its value;
	// it must return a value the key really had, read under the lock (the
	// race detector checks the latter).
	s, clk := newClockStore(t)
	values := []string{"short", strings.Repeat("long", 100)}
	set(t, s, "k", values[0])
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := range 5000 {
			if _, err := s.Set([]byte("k"), []byte(values[i%2]), SetOptions{KeepTTL: true}); err != nil {
				t.Error(err)
				return
			}
		}
	})
	wg.Go(func() {
		for i := range 5000 {
			v, ok, _ := s.GetEx([]byte("k"), clk.in(time.Hour), i%2 == 0)
			if !ok || (string(v) != values[0] && string(v) != values[1]) {
				t.Errorf("GetEx = %q, %v", v, ok)
				return
			}
		}
	})
	wg.Wait()
}

func TestLookupExpiredReportsTheStaleLimit(t *testing.T) {
	s, clock := newClockStore(t)
	mustSet(t, s, "k", "v", SetOptions{FreshUntil: clock.in(time.Second), StaleUntil: clock.in(2 * time.Second)})
	if _, found, expired := s.LookupExpired([]byte("k")); !found || expired {
		t.Fatalf("fresh: found %v, expired %v", found, expired)
	}
	clock.advance(2 * time.Second)
	if _, found, expired := s.LookupExpired([]byte("k")); found || !expired {
		t.Fatalf("past the stale deadline: found %v, expired %v", found, expired)
	}
	if _, found, expired := s.LookupExpired([]byte("k")); found || expired {
		t.Fatalf("after removal it is a plain miss: found %v, expired %v", found, expired)
	}
}

// TestVolatileTTL: INFO keyspace's avg_ttl is the mean time left to the
// deadlines of the keys that have one; keys without a deadline and keys
// past theirs do not count.
func TestVolatileTTL(t *testing.T) {
	s, clk := newClockStore(t)
	if n, avg := s.VolatileTTL(); n != 0 || avg != 0 {
		t.Fatalf("empty store: VolatileTTL() = %d, %v; want 0, 0", n, avg)
	}
	mustSet(t, s, "a", "v", SetOptions{StaleUntil: clk.in(10 * time.Second)})
	mustSet(t, s, "b", "v", SetOptions{StaleUntil: clk.in(30 * time.Second)})
	set(t, s, "p", "persistent")
	if n, avg := s.VolatileTTL(); n != 2 || avg != 20*time.Second {
		t.Errorf("VolatileTTL() = %d, %v; want 2, 20s", n, avg)
	}
	clk.advance(10 * time.Second)
	if n, avg := s.VolatileTTL(); n != 1 || avg != 20*time.Second {
		t.Errorf("VolatileTTL() after a's deadline = %d, %v; want 1, 20s (b's)", n, avg)
	}
}
