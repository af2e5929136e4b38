package engine

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"testing"
)

// bigZSet adds n members to key's sorted set, scores 0..n-1.
func bigZSet(t *testing.T, s *Store, key string, n int) {
	t.Helper()
	pairs := make([]ScoreMember, n)
	for i := range pairs {
		pairs[i] = ScoreMember{Member: fmt.Appendf(nil, "member-%d", i), Score: float64(i)}
	}
	if _, err := s.ZAdd([]byte(key), ZAddOptions{}, pairs); err != nil {
		t.Fatal(err)
	}
}

// TestZSetHeapObjectsFollowTheirRecords: a sorted set held on the heap
// lives exactly as long as a record refers to it (DEL, RENAME, COPY, a
// STORE over a string and over itself), and a copy changes alone.
func TestZSetHeapObjectsFollowTheirRecords(t *testing.T) {
	s, _ := newClockStore(t)
	want := func(n int, after string) {
		t.Helper()
		if got := heapObjects(s); got != n {
			t.Fatalf("after %s: %d heap objects, want %d", after, got, n)
		}
	}
	bigZSet(t, s, "a", 500)
	want(1, "ZADD")
	if enc, _ := s.Encoding([]byte("a")); enc != "skiplist" {
		t.Fatalf("OBJECT ENCODING = %q", enc)
	}
	if _, err := s.Copy([]byte("a"), nil, []byte("b"), false); err != nil {
		t.Fatal(err)
	}
	want(2, "COPY")
	if _, err := s.ZRem([]byte("b"), [][]byte{[]byte("member-3")}); err != nil {
		t.Fatal(err)
	}
	if n, _ := s.ZCard([]byte("a")); n != 500 {
		t.Fatalf("ZREM of the copy changed the original: ZCARD %d", n)
	}
	if r, ok, _ := s.ZRank([]byte("b"), []byte("member-499"), false); !ok || r != 498 {
		t.Fatalf("ZRANK in the copy = %d, %v", r, ok)
	}
	// A heap result replaces a string, then a heap set, then itself.
	set(t, s, "str", "v")
	op := ZSetOp{Op: SetUnion, Keys: [][]byte{[]byte("a")}}
	for _, dst := range []string{"str", "b", "a"} {
		if n, _, err := s.ZStore([]byte(dst), op); err != nil || n != 500 {
			t.Fatalf("ZUNIONSTORE %s = %d, %v", dst, n, err)
		}
	}
	want(3, "ZUNIONSTORE over a string, a heap set and its source")
	if _, err := s.Rename([]byte("str"), []byte("b"), false); err != nil {
		t.Fatal(err)
	}
	want(2, "RENAME over a heap set")
	s.Delete([]byte("a"))
	s.Delete([]byte("b"))
	want(0, "DEL")
}

// TestZSetExportImport: the portable form of either encoding is a
// listpack of every member, and Set with Type takes it back in the form
// its size calls for; forms out of order, with duplicates or NaN are
// refused.
func TestZSetExportImport(t *testing.T) {
	s, _ := newClockStore(t)
	bigZSet(t, s, "big", 300)
	if _, err := s.ZAdd([]byte("small"), ZAddOptions{}, []ScoreMember{
		{Member: []byte("x"), Score: math.Inf(-1)}, {Member: []byte("y"), Score: 2.5},
	}); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"big", "small"} {
		env, ok := s.Export([]byte(k))
		if !ok {
			t.Fatalf("Export %s: missing", k)
		}
		if _, err := s.Set([]byte(k+"-copy"), env.Value, SetOptions{Type: TypeZSet}); err != nil {
			t.Fatalf("Set %s-copy: %v", k, err)
		}
		orig, _ := zrange(s, []byte(k), ZRange{Start: 0, Stop: -1})
		back, _ := zrange(s, []byte(k+"-copy"), ZRange{Start: 0, Stop: -1})
		if fmt.Sprint(orig) != fmt.Sprint(back) {
			t.Fatalf("%s after export and import differs", k)
		}
		encOrig, _ := s.Encoding([]byte(k))
		encBack, _ := s.Encoding([]byte(k + "-copy"))
		if encOrig != encBack {
			t.Fatalf("%s: encoding %s, imported %s", k, encOrig, encBack)
		}
	}
	entry := func(score float64, m string) []zent { return []zent{{member: m, score: score}} }
	for name, b := range map[string][]byte{
		"out of order": encodeZSet(append(entry(2, "a"), entry(1, "b")...)),
		"duplicate":    encodeZSet(append(entry(1, "a"), entry(2, "a")...)),
		"nan":          encodeZSet(entry(math.NaN(), "a")),
		"empty":        encodeZSet(nil),
		"truncated":    encodeZSet(entry(1, "abc"))[:12],
	} {
		if _, err := s.Set([]byte("bad"), b, SetOptions{Type: TypeZSet}); err == nil {
			t.Errorf("a form %s was imported", name)
		}
	}
}

// TestZRandMemberDistinct: a positive count draws distinct members, few of
// many or most of them, and all of them past the size.
func TestZRandMemberDistinct(t *testing.T) {
	s, _ := newClockStore(t)
	bigZSet(t, s, "z", 300)
	for _, count := range []int64{1, 50, 250, 299, 300, 1000} {
		out, err := s.ZRandMember([]byte("z"), count)
		if err != nil {
			t.Fatal(err)
		}
		seen := make(map[string]bool)
		for _, e := range out {
			if seen[string(e.Member)] {
				t.Fatalf("count %d: %s drawn twice", count, e.Member)
			}
			seen[string(e.Member)] = true
			if want := "member-" + fmt.Sprint(e.Score); string(e.Member) != want {
				t.Fatalf("count %d: %s with score %v", count, e.Member, e.Score)
			}
		}
		if want := min(count, 300); int64(len(out)) != want {
			t.Fatalf("count %d: %d members, want %d", count, len(out), want)
		}
	}
	if out, _ := s.ZRandMember([]byte("z"), -1000); len(out) != 1000 {
		t.Fatalf("count -1000: %d members", len(out))
	}
}

// TestZAddListpackGarbage: a ZADD to a listpack leaves no garbage the
// size of the set behind (its decoded members and its new blob are built
// in a scratch the store copies from), so that a churn of ZADDs to small
// sets does not outrun the collector. Before, a ZADD to a set of 100
// members allocated 4.5 KB.
func TestZAddListpackGarbage(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector drops sync.Pool's items at random")
	}
	s := newStore(t, Options{})
	key := []byte("z")
	pairs := make([]ScoreMember, 100)
	for i := range pairs {
		pairs[i] = ScoreMember{Member: fmt.Appendf(nil, "member:%03d", i), Score: float64(i)}
	}
	if _, err := s.ZAdd(key, ZAddOptions{}, pairs); err != nil {
		t.Fatal(err)
	}
	one := []ScoreMember{{Member: []byte("member:050")}}
	const runs = 1000
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range runs {
		one[0].Score = float64(i % 100)
		if _, err := s.ZAdd(key, ZAddOptions{}, one); err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	if per := (after.TotalAlloc - before.TotalAlloc) / runs; per > 512 {
		t.Fatalf("a ZADD to a listpack of 100 members allocated %d bytes", per)
	}
	got, err := zrange(s, key, ZRange{By: ZByRank, Start: 0, Stop: -1, Limit: -1})
	if err != nil || len(got) != 100 {
		t.Fatalf("ZRange: %d members, %v", len(got), err)
	}
}

// TestZSetHeapAddPopModel runs ZADD (new members and new scores) and
// ZPOPMIN/ZPOPMAX of random counts on sorted sets big enough for the heap
// form against a model kept sorted, comparing every reply and the whole
// set: the heap set's add, rescore and pop paths.
func TestZSetHeapAddPopModel(t *testing.T) {
	s := newStore(t, Options{})
	rng := rand.New(rand.NewPCG(21, 7))
	key := []byte("z")
	model := map[string]float64{}
	sorted := func() []ScoreMember {
		out := make([]ScoreMember, 0, len(model))
		for m, sc := range model {
			out = append(out, ScoreMember{Member: []byte(m), Score: sc})
		}
		slices.SortFunc(out, func(a, b ScoreMember) int {
			return zcmp(zent{member: string(a.Member), score: a.Score}, zent{member: string(b.Member), score: b.Score})
		})
		return out
	}
	for step := range 2001 {
		if rng.IntN(3) > 0 || len(model) < 2*DefaultZSetListpackEntries {
			var pairs []ScoreMember
			added, updated := 0, 0
			seen := map[string]bool{}
			for range 1 + rng.IntN(4) {
				m := "m" + strconv.Itoa(rng.IntN(600))
				sc := float64(rng.IntN(50))
				if seen[m] {
					continue
				}
				seen[m] = true
				old, had := model[m]
				switch {
				case !had:
					added++
				case old != sc:
					updated++
				}
				model[m] = sc
				pairs = append(pairs, ScoreMember{Member: []byte(m), Score: sc})
			}
			res, err := s.ZAdd(key, ZAddOptions{}, pairs)
			if err != nil || res.Added != added || res.Updated != updated {
				t.Fatalf("step %d: ZADD %v: %+v %v, want added %d updated %d", step, pairs, res, err, added, updated)
			}
		} else {
			highest, count := rng.IntN(2) == 0, rng.IntN(4)
			want := sorted()
			if highest {
				slices.Reverse(want)
			}
			want = want[:min(count, len(want))]
			_, got, err := s.ZPop([][]byte{key}, highest, count)
			if err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("step %d: ZPOP highest=%v count %d = %v %v, want %v", step, highest, count, got, err, want)
			}
			for _, p := range want {
				delete(model, string(p.Member))
			}
		}
		if step%50 != 0 {
			continue
		}
		all, err := zrange(s, key, ZRange{By: ZByRank, Start: 0, Stop: -1, Limit: -1})
		if err != nil || fmt.Sprint(all) != fmt.Sprint(sorted()) {
			t.Fatalf("step %d: set %v %v, want %v", step, all, err, sorted())
		}
	}
	if enc, _ := s.Encoding(key); enc != "skiplist" {
		t.Fatalf("encoding %q: the test did not reach the heap form", enc)
	}
}

// scoredCollector is a ScoredWriter that keeps copies of what it is given.
type scoredCollector struct {
	counts []int // each Count's n
	got    []ScoreMember
}

func (c *scoredCollector) Count(n int) { c.counts = append(c.counts, n) }

func (c *scoredCollector) Member(m []byte, score float64) {
	if len(c.counts) == 0 {
		panic("Member before Count")
	}
	c.got = append(c.got, ScoreMember{Member: slices.Clone(m), Score: score})
}

// TestZRangeToAsZRange: ZRangeTo writes what ZRange returns, its count
// first, for ranges by rank, score and lex, forward and reversed, with
// limits, in a listpack and on the heap; a missing key writes an empty
// range, a key of another type nothing.
func TestZRangeToAsZRange(t *testing.T) {
	s := newStore(t, Options{})
	rng := rand.New(rand.NewPCG(21, 9))
	for _, n := range []int{40, 600} {
		key := []byte("z" + strconv.Itoa(n))
		for i := range n {
			m := []byte("m" + strconv.Itoa(i))
			if _, err := s.ZAdd(key, ZAddOptions{}, []ScoreMember{{Member: m, Score: float64(rng.IntN(n / 4))}}); err != nil {
				t.Fatal(err)
			}
		}
		for step := range 300 {
			r := ZRange{By: ZRangeBy(rng.IntN(3)), Rev: rng.IntN(2) == 0, Limit: -1}
			switch r.By {
			case ZByRank:
				r.Start, r.Stop = int64(rng.IntN(2*n)-n), int64(rng.IntN(2*n)-n)
			case ZByScore:
				a, b := float64(rng.IntN(n/4)), float64(rng.IntN(n/4))
				r.Min, r.Max = ScoreBound{Value: min(a, b), Excl: rng.IntN(2) == 0}, ScoreBound{Value: max(a, b)}
				r.Offset, r.Limit = int64(rng.IntN(5)), int64(rng.IntN(20)-2)
			case ZByLex:
				r.LexMin, r.LexMax = LexBound{Inf: -1}, LexBound{Value: []byte("m" + strconv.Itoa(rng.IntN(n)))}
			}
			want, err := zrange(s, key, r)
			var w scoredCollector
			errTo := s.ZRangeTo(key, r, &w)
			if fmt.Sprint(w.counts, w.got, errTo) != fmt.Sprint([]int{len(want)}, want, err) {
				t.Fatalf("set of %d, step %d, %+v: ZRangeTo %v %v %v, ZRange %v %v", n, step, r, w.counts, w.got, errTo, want, err)
			}
		}
	}
	var w scoredCollector
	if err := s.ZRangeTo([]byte("none"), ZRange{Stop: -1, Limit: -1}, &w); err != nil || fmt.Sprint(w.counts, w.got) != "[0] []" {
		t.Fatalf("missing key: %v %v %v", err, w.counts, w.got)
	}
	if _, err := s.Set([]byte("str"), []byte("v"), SetOptions{}); err != nil {
		t.Fatal(err)
	}
	w = scoredCollector{}
	if err := s.ZRangeTo([]byte("str"), ZRange{Stop: -1, Limit: -1}, &w); err != ErrWrongType || w.counts != nil {
		t.Fatalf("string key: %v %v", err, w.counts)
	}
}

// TestZStoreFrom: a computed set replaces the destination (the source
// itself too, from members aliasing it), in order whatever the order
// added; an error or a source of another type changes nothing; a missing
// source lets the function store nothing, which deletes the destination.
func TestZStoreFrom(t *testing.T) {
	s, _ := newClockStore(t)
	bigZSet(t, s, "src", 200)
	set(t, s, "dst", "v")
	// The members whose score is a multiple of 50, last first, scored
	// by their negated score.
	every50 := func(z ZSetReader, found bool, add func([]byte, float64)) error {
		if !found {
			return nil
		}
		var got []ScoreMember
		z.ScoreRange(ScoreBound{Value: 0}, ScoreBound{Value: 200, Excl: true}, func(m []byte, sc float64) bool {
			if int(sc)%50 == 0 {
				got = append(got, ScoreMember{Member: m, Score: -sc})
			}
			return true
		})
		for i := len(got) - 1; i >= 0; i-- {
			add(got[i].Member, got[i].Score)
		}
		return nil
	}
	for _, dst := range []string{"dst", "src"} {
		n, changed, err := s.ZStoreFrom([]byte(dst), []byte("src"), every50)
		if err != nil || n != 4 || !changed {
			t.Fatalf("ZStoreFrom to %s = %d, %v, %v", dst, n, changed, err)
		}
		got, _ := zrange(s, []byte(dst), ZRange{By: ZByRank, Start: 0, Stop: -1})
		want := []string{"member-150", "member-100", "member-50", "member-0"}
		for i, g := range got {
			if string(g.Member) != want[i] || g.Score != -float64(150-50*i) {
				t.Fatalf("%s after ZStoreFrom: %v", dst, got)
			}
		}
	}
	boom := errors.New("boom")
	if _, changed, err := s.ZStoreFrom([]byte("dst"), []byte("src"), func(z ZSetReader, found bool, add func([]byte, float64)) error {
		add([]byte("x"), 1)
		return boom
	}); err != boom || changed {
		t.Fatalf("an error: %v, changed %v", err, changed)
	}
	if n, _ := s.ZCard([]byte("dst")); n != 4 {
		t.Fatalf("an error changed dst: ZCARD %d", n)
	}
	set(t, s, "str", "v")
	if _, _, err := s.ZStoreFrom([]byte("dst"), []byte("str"), every50); err != ErrWrongType {
		t.Fatalf("a string source: %v", err)
	}
	if n, changed, err := s.ZStoreFrom([]byte("dst"), []byte("missing"), every50); err != nil || n != 0 || !changed {
		t.Fatalf("a missing source: %d, %v, %v", n, changed, err)
	}
	if _, found := s.TypeOf([]byte("dst")); found {
		t.Fatal("storing nothing left dst")
	}
	if _, changed, _ := s.ZStoreFrom([]byte("dst"), []byte("missing"), every50); changed {
		t.Fatal("deleting a missing dst changed it")
	}
	var card int
	var score float64
	if found, err := s.ZRead([]byte("src"), func(z ZSetReader) { card = z.Card(); score, _ = z.Score([]byte("member-100")) }); !found || err != nil || card != 4 || score != -100 {
		t.Fatalf("ZRead: %v %v %d %v", found, err, card, score)
	}
}

// zrange is the members of the sorted set at key in r, in r's direction:
// ZRANGE's answer, copied.
func zrange(s *Store, key []byte, r ZRange) (out []ScoreMember, err error) {
	_, err = s.readColl(key, TypeZSet, func(c collection) {
		v := viewZSet(c)
		from, to := r.span(v)
		out = v.entries(from, to, r.Rev)
	})
	return out, err
}
