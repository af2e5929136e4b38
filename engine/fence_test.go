package engine

import (
	"fmt"
	"sync"
	"testing"
	"time"
)

// fill stores value under key as a read-through fill holding f, and reports
// whether it was stored.
func fill(t *testing.T, s *Store, key, value string, f *Fence) bool {
	t.Helper()
	res, err := s.Set([]byte(key), []byte(value), SetOptions{Fence: f, Fill: &FillMeta{Loader: "test"}})
	if err != nil {
		t.Fatal(err)
	}
	return res.Written
}

func TestFenceStoresWhenNothingWrote(t *testing.T) {
	s := newStore(t, Options{})
	f := s.Fence([]byte("k"))
	if !fill(t, s, "k", "loaded", f) {
		t.Fatal("an unfenced fill was not stored")
	}
	if v, _ := s.Get([]byte("k")); string(v) != "loaded" {
		t.Fatalf("GET = %q", v)
	}
	if n := len(s.shardFor([]byte("k")).fences); n != 0 {
		t.Fatalf("%d fences left after the fill", n)
	}
}

// TestWritesWinOverFills: every write of the key between the fence and the
// fill's store wins, and the fill's result is not stored.
func TestWritesWinOverFills(t *testing.T) {
	writes := map[string]func(s *Store){
		"set":     func(s *Store) { s.Set([]byte("k"), []byte("newer"), SetOptions{}) },
		"del":     func(s *Store) { s.Delete([]byte("k")) },
		"expire":  func(s *Store) { s.Expire([]byte("k"), s.now()+1e12, ExpireAlways) },
		"persist": func(s *Store) { s.Persist([]byte("k")) },
		"append": func(s *Store) {
			s.Update([]byte("k"), func(old []byte, _ bool) ([]byte, error) { return append(old, 'x'), nil })
		},
		"mset":     func(s *Store) { s.SetMulti([][]byte{[]byte("k"), []byte("newer")}, Always) },
		"getex":    func(s *Store) { s.GetEx([]byte("k"), 0, true) },
		"flushall": func(s *Store) { s.FlushAll() },
	}
	for name, write := range writes {
		t.Run(name, func(t *testing.T) {
			s := newStore(t, Options{})
			s.Set([]byte("k"), []byte("old"), SetOptions{StaleUntil: s.now() + 1e12})
			f := s.Fence([]byte("k"))
			write(s)
			before, hadBefore := s.Get([]byte("k"))
			if fill(t, s, "k", "loaded", f) {
				t.Fatalf("the fill was stored after a %s of the key", name)
			}
			after, hadAfter := s.Get([]byte("k"))
			if hadBefore != hadAfter || string(before) != string(after) {
				t.Fatalf("the fenced fill changed the key: %q,%v -> %q,%v", before, hadBefore, after, hadAfter)
			}
		})
	}
}

func TestDeleteOfAbsentKeyFencesTheFill(t *testing.T) {
	s := newStore(t, Options{})
	f := s.Fence([]byte("k"))
	s.Delete([]byte("k"))
	if fill(t, s, "k", "loaded", f) {
		t.Fatal("a fill stored a key deleted while it loaded")
	}
}

func TestOtherKeysDoNotFence(t *testing.T) {
	s := newStore(t, Options{})
	f := s.Fence([]byte("k"))
	s.Set([]byte("other"), []byte("v"), SetOptions{})
	s.Delete([]byte("another"))
	if !fill(t, s, "k", "loaded", f) {
		t.Fatal("writes of other keys fenced the fill")
	}
}

func TestReleaseAndConcurrentFences(t *testing.T) {
	s := newStore(t, Options{})
	var wg sync.WaitGroup
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f := s.Fence([]byte("k"))
			s.Set([]byte("k"), []byte("w"), SetOptions{})
			f.Release()
		}()
	}
	wg.Wait()
	if n := len(s.shardFor([]byte("k")).fences); n != 0 {
		t.Fatalf("%d fences left after every holder released", n)
	}
}

func TestDeleteFenced(t *testing.T) {
	s := newStore(t, Options{})
	s.Set([]byte("gone"), []byte("stale"), SetOptions{})
	if !s.DeleteFenced(s.Fence([]byte("gone"))) {
		t.Fatal("DeleteFenced did not remove the key")
	}
	if _, ok := s.Get([]byte("gone")); ok {
		t.Fatal("key still there")
	}
	s.Set([]byte("kept"), []byte("old"), SetOptions{})
	f := s.Fence([]byte("kept"))
	s.Set([]byte("kept"), []byte("new"), SetOptions{})
	if s.DeleteFenced(f) {
		t.Fatal("DeleteFenced removed a key written after the fence")
	}
	if v, _ := s.Get([]byte("kept")); string(v) != "new" {
		t.Fatalf("GET = %q", v)
	}
}

// TestDropStale: DropStale removes only an entry past its fresh deadline
// (and within its stale one), and is not a write: a fill holding a fence on
// the key still stores a fresh entry. A stale one it took before is as old
// as the copy dropped, and is refused.
func TestDropStale(t *testing.T) {
	s, clk := newClockStore(t)
	mustSet(t, s, "stale", "v", SetOptions{FreshUntil: clk.in(time.Second), StaleUntil: clk.in(time.Hour)})
	mustSet(t, s, "fresh", "v", SetOptions{FreshUntil: clk.in(time.Hour), StaleUntil: clk.in(2 * time.Hour)})
	set(t, s, "forever", "v")
	clk.advance(time.Second)
	fresh, stale := s.Fence([]byte("stale")), s.Fence([]byte("stale"))
	for key, want := range map[string]bool{"stale": true, "fresh": false, "forever": false, "absent": false} {
		if got := s.DropStale([]byte(key)); got != want {
			t.Errorf("DropStale(%q) = %v, want %v", key, got, want)
		}
		if _, live := s.Get([]byte(key)); live == want && key != "absent" {
			t.Errorf("after DropStale(%q): live %v", key, live)
		}
	}
	store := func(f *Fence, value string, freshFor time.Duration) bool {
		t.Helper()
		res, err := s.Set([]byte("stale"), []byte(value), SetOptions{Fence: f,
			FreshUntil: clk.in(freshFor), StaleUntil: clk.in(time.Hour)})
		if err != nil {
			t.Fatal(err)
		}
		return res.Written
	}
	if store(stale, "old", -time.Millisecond) {
		t.Fatal("a fill stored a stale entry after DropStale superseded the key's stale copy")
	}
	if !store(fresh, "newer", time.Minute) {
		t.Fatal("a fill holding a fence did not store a fresh entry after DropStale")
	}
	wantValue(t, s, "stale", "newer")
	if f := s.Fence([]byte("stale")); !store(f, "stale again", -time.Millisecond) {
		t.Fatal("a fence taken after DropStale refused a stale entry")
	}
}

// TestFencesKeepTheirDatabase: a fence is on a key of one database. A write
// of the same name in another database, even one in the same shard, leaves
// it whole; FLUSHDB and SWAPDB of its database break it, even on a key that
// does not exist (a fill of a miss), and those of other databases do not.
func TestFencesKeepTheirDatabase(t *testing.T) {
	s := newStore(t, Options{})
	one, two := s.DB(1), s.DB(2)
	// A name whose key in database 0 and in database 1 share a shard.
	key := ""
	for i := 0; key == ""; i++ {
		if k := []byte("k" + string(rune('a'+i%26)) + string(rune('a'+i/26))); s.shardFor(k) == one.shardFor(k) {
			key = string(k)
		}
	}
	f := s.Fence([]byte(key))
	one.Set([]byte(key), []byte("db1's"), SetOptions{})
	one.Delete([]byte(key))
	if !fill(t, s, key, "loaded", f) {
		t.Fatal("a write of the same name in database 1 broke database 0's fence")
	}
	breaks := map[string]func(){
		"flushdb": func() { one.Flush() },
		"swapdb":  func() { s.SwapDB(1, 2) },
	}
	for name, op := range breaks {
		t.Run(name, func(t *testing.T) {
			mine, other := one.Fence([]byte("missing")), s.Fence([]byte("missing"))
			op()
			if fill(t, one, "missing", "loaded", mine) {
				t.Errorf("a fill in database 1 begun before %s was stored", name)
			}
			if !fill(t, s, "missing", "loaded", other) {
				t.Errorf("%s of database 1 broke a fence of database 0", name)
			}
			s.Delete([]byte("missing"))
			one.Delete([]byte("missing"))
			two.Delete([]byte("missing"))
		})
	}
}

// TestSnapshotFencedThenDeleteUnwritten: SnapshotFenced copies the live
// keys named, a key named twice twice, each with a fence; DeleteUnwritten
// then removes those whose removal is asked for and that nothing wrote
// since (a string, a hash, a list written meanwhile stay with what was
// written), tells each removal, breaks a fill's fence on a key it removes,
// and leaves no fence behind.
func TestSnapshotFencedThenDeleteUnwritten(t *testing.T) {
	s := newStore(t, Options{})
	b := func(v ...string) [][]byte {
		out := make([][]byte, len(v))
		for i, x := range v {
			out[i] = []byte(x)
		}
		return out
	}
	for _, k := range []string{"s", "kept", "refused", "sw"} {
		set(t, s, k, "v:"+k)
	}
	if _, err := s.HSet([]byte("h"), b("f", "1")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.HSet([]byte("hw"), b("f", "1")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.LPush([]byte("lw"), b("a"), true, false); err != nil {
		t.Fatal(err)
	}
	keys := b("s", "missing", "h", "kept", "refused", "sw", "hw", "lw", "s")
	items, fences := s.SnapshotFenced(keys, true)
	var got []string
	for _, it := range items {
		got = append(got, string(it.Key)+":"+it.Type.String())
	}
	want := "[s:string h:hash kept:string refused:string sw:string hw:hash lw:list s:string]"
	if fmt.Sprint(got) != want || len(fences) != len(items) {
		t.Fatalf("SnapshotFenced = %v with %d fences, want %s with one each", got, len(fences), want)
	}
	if string(items[0].Value) != "v:s" || len(items[1].Pairs) != 2 {
		t.Fatalf("the copies: %q, %q", items[0].Value, items[1].Pairs)
	}
	// Written meanwhile: these stay, with what was written.
	set(t, s, "sw", "newer")
	if _, err := s.HSet([]byte("hw"), b("g", "2")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.LPush([]byte("lw"), b("b"), true, false); err != nil {
		t.Fatal(err)
	}
	fillFence := s.Fence([]byte("h"))
	var deleted []string
	s.DeleteUnwritten(fences, func(i int) bool { return string(items[i].Key) != "refused" },
		func(i int) { deleted = append(deleted, string(items[i].Key)) })
	if fmt.Sprint(deleted) != "[s h kept]" {
		t.Errorf("deleted %v, want [s h kept] (s once: the second copy finds it gone)", deleted)
	}
	for k, live := range map[string]bool{"s": false, "h": false, "kept": false, "refused": true, "sw": true, "hw": true, "lw": true} {
		if _, ok := s.TypeOf([]byte(k)); ok != live {
			t.Errorf("%s: live %v, want %v", k, ok, live)
		}
	}
	wantValue(t, s, "sw", "newer")
	if n, _ := s.LLen([]byte("lw")); n != 2 {
		t.Errorf("LLEN lw = %d, want 2", n)
	}
	fillFence.Release()
	if !fillFence.Written() {
		t.Error("removing h left a fill's fence on it unbroken")
	}
	for i := range s.shards {
		if n := len(s.shards[i].fences); n != 0 {
			t.Fatalf("shard %d keeps %d fenced keys", i, n)
		}
	}
	// Without fences: copies only.
	if items, fences := s.SnapshotFenced(b("refused"), false); len(items) != 1 || fences != nil {
		t.Errorf("SnapshotFenced without fences: %d items, fences %v", len(items), fences)
	}
}
