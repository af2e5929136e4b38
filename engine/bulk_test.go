package engine

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// A Loader writes what Set writes, and the last of a repeated key wins.
func TestLoaderStrings(t *testing.T) {
	s, clk := newClockStore(t)
	n := underRace(20000, 5000)
	l := s.NewLoader(n)
	fill := &FillMeta{Loader: "app", ETag: `"e"`, LoadTime: time.Millisecond}
	var items []LoadItem
	for i := range n {
		it := LoadItem{Key: fmt.Appendf(nil, "k:%d", i), Value: fmt.Appendf(nil, "v:%d", i)}
		switch i % 4 {
		case 1:
			it.StaleUntil = clk.in(time.Hour)
		case 2:
			it.FreshUntil, it.StaleUntil, it.Fill = clk.in(time.Minute), clk.in(time.Hour), fill
		}
		items = append(items, it)
		if len(items) == 700 || i == n-1 {
			if err := l.Write(items); err != nil {
				t.Fatal(err)
			}
			items = items[:0]
		}
	}
	if err := l.Write([]LoadItem{{Key: []byte("k:3"), Value: []byte("first")}, {Key: []byte("k:3"), Value: []byte("last")}}); err != nil {
		t.Fatal(err)
	}
	// Writes after the load.
	set(t, s, "k:5", strings.Repeat("longer ", 20))
	s.Delete([]byte("k:6"))
	set(t, s, "new", "x")
	checkInvariants(t, s)
	if got := s.Len(); got != n {
		t.Errorf("Len %d, want %d", got, n)
	}
	// k:5 and k:6 had deadlines: one was written over without, one deleted.
	if got, want := s.Volatile(), n/2-2; got != want {
		t.Errorf("Volatile %d, want %d", got, want)
	}
	wantValue(t, s, "k:3", "last")
	wantValue(t, s, "k:9", "v:9")
	env, ok := s.Peek([]byte("k:10"))
	if !ok || env.FreshUntil != clk.in(time.Minute) || env.StaleUntil != clk.in(time.Hour) || env.Fill == nil || *env.Fill != *fill {
		t.Errorf("k:10: %+v %v", env, ok)
	}
	if env, _ := s.Peek([]byte("k:13")); env.FreshUntil != env.StaleUntil || env.StaleUntil != clk.in(time.Hour) {
		t.Errorf("k:13's deadlines: %+v", env)
	}
}

// A load past the memory bound evicts as it goes: in the middle of a load
// of six times the bound, the store holds no more than the bound.
func TestLoaderOverBound(t *testing.T) {
	const bound = 1 << 20
	s := newStore(t, Options{MaxMemory: bound})
	l := s.NewLoader(1 << 30)
	value := []byte(strings.Repeat("v", 100))
	keys := 0
	for batch := range 3 {
		var items []LoadItem
		for range 2 * bound / 300 {
			items = append(items, LoadItem{Key: fmt.Appendf(nil, "k:%d", keys), Value: value})
			keys++
		}
		if err := l.Write(items); err != nil {
			t.Fatal(err)
		}
		if st := s.Stats(); st.Cost > bound {
			t.Fatalf("after batch %d: cost %d over the bound of %d", batch, st.Cost, bound)
		}
	}
	checkInvariants(t, s)
	if st := s.Stats(); st.Evicted == 0 || s.Len() >= keys {
		t.Errorf("nothing evicted: %+v, %d keys of %d", st, s.Len(), keys)
	}
}

// A Loader writes a collection as its one write into a missing key and an
// Expire would (the same contents, encodings, deadline and cost), past the
// compact encodings' bounds too, and refuses one whose members repeat.
func TestLoaderCollections(t *testing.T) {
	s, clk := newClockStore(t)
	want, _ := newClockStore(t)
	at := clk.in(time.Hour)
	var items []LoadItem
	for _, n := range []int{3, 700} { // compact, then past the bounds
		var pairs, members, ints [][]byte
		var scored []ScoreMember
		for i := range n {
			m := fmt.Appendf(nil, "m:%d", i)
			pairs, members = append(pairs, m, fmt.Appendf(nil, "v:%d", i)), append(members, m)
			ints = append(ints, fmt.Appendf(nil, "%d", i*3-5))
			scored = append(scored, ScoreMember{Member: m, Score: float64(n - i)})
		}
		sfx := fmt.Sprint(":", n)
		items = append(items,
			LoadItem{Key: []byte("h" + sfx), Type: TypeHash, Pairs: pairs, StaleUntil: at},
			LoadItem{Key: []byte("s" + sfx), Type: TypeSet, Members: members},
			LoadItem{Key: []byte("i" + sfx), Type: TypeSet, Members: ints, StaleUntil: at},
			LoadItem{Key: []byte("z" + sfx), Type: TypeZSet, Scored: scored, StaleUntil: at},
			LoadItem{Key: []byte("l" + sfx), Type: TypeList, Members: append(members, members[0])})
		want.HSet([]byte("h"+sfx), pairs)
		want.Expire([]byte("h"+sfx), at, ExpireAlways)
		want.SAdd([]byte("s"+sfx), members)
		want.SAdd([]byte("i"+sfx), ints)
		want.Expire([]byte("i"+sfx), at, ExpireAlways)
		want.ZAdd([]byte("z"+sfx), ZAddOptions{}, scored)
		want.Expire([]byte("z"+sfx), at, ExpireAlways)
		want.LPush([]byte("l"+sfx), append(members, members[0]), false, false)
	}
	// A string among them, and a key the file repeats: the last wins.
	items = append(items, LoadItem{Key: []byte("str"), Value: []byte("v")},
		LoadItem{Key: []byte("again"), Value: []byte("first")}, LoadItem{Key: []byte("again"), Type: TypeSet, Members: [][]byte{[]byte("x")}})
	set(t, want, "str", "v")
	want.SAdd([]byte("again"), [][]byte{[]byte("x")})
	l := s.NewLoader(len(items))
	if err := l.Write(items); err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, s)
	if s.Len() != want.Len() || s.Volatile() != want.Volatile() || s.Stats().Cost != want.Stats().Cost {
		t.Errorf("loaded: %d keys, %d volatile, cost %d; written: %d, %d, %d", s.Len(), s.Volatile(), s.Stats().Cost,
			want.Len(), want.Volatile(), want.Stats().Cost)
	}
	want.Snapshot(func(its []SnapshotItem) error {
		for _, w := range its {
			got, found := s.SnapshotKey(w.Key)
			if gs, ws := canonItem(got), canonItem(w); !found || gs != ws {
				t.Errorf("%s: loaded %.200s, written %.200s", w.Key, gs, ws)
			}
			if ge, _ := s.Encoding(w.Key); ge != mustEncoding(t, want, w.Key) {
				t.Errorf("%s: loaded as %s, written as %s", w.Key, ge, mustEncoding(t, want, w.Key))
			}
		}
		return nil
	})
	for _, bad := range []LoadItem{
		{Key: []byte("dup:h"), Type: TypeHash, Pairs: [][]byte{[]byte("f"), []byte("1"), []byte("f"), []byte("2")}},
		{Key: []byte("dup:s"), Type: TypeSet, Members: [][]byte{[]byte("a"), []byte("a")}},
		{Key: []byte("dup:z"), Type: TypeZSet, Scored: []ScoreMember{{Member: []byte("a")}, {Member: []byte("a"), Score: 1}}},
	} {
		if err := l.Write([]LoadItem{bad}); !errors.Is(err, ErrDuplicateMember) {
			t.Errorf("%s: %v, want ErrDuplicateMember", bad.Key, err)
		}
		if _, found := s.Peek(bad.Key); found {
			t.Errorf("%s was written", bad.Key)
		}
	}
	if err := l.Write([]LoadItem{{Key: []byte("empty"), Type: TypeList}}); !errors.Is(err, ErrEmptyCollection) {
		t.Errorf("an empty list: %v", err)
	}
}

func mustEncoding(t *testing.T, s *Store, key []byte) string {
	t.Helper()
	enc, found := s.Encoding(key)
	if !found {
		t.Fatalf("%s is missing", key)
	}
	return enc
}

// canonItem is it as a string, a hash's pairs and a set's members sorted.
func canonItem(it SnapshotItem) string {
	var parts []string
	for i := 0; i+1 < len(it.Pairs); i += 2 {
		parts = append(parts, string(it.Pairs[i])+"="+string(it.Pairs[i+1]))
	}
	for _, m := range it.Members {
		parts = append(parts, string(m))
	}
	if it.Type != TypeList {
		slices.Sort(parts)
	}
	for _, m := range it.Scored {
		parts = append(parts, fmt.Sprint(string(m.Member), "@", m.Score))
	}
	return fmt.Sprintf("%s %v %q %d %d big=%v %q", it.Key, it.Type, it.Value, it.FreshUntil, it.StaleUntil, it.Big, parts)
}
