package engine

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"
)

func bs(members ...string) [][]byte {
	out := make([][]byte, len(members))
	for i, m := range members {
		out[i] = []byte(m)
	}
	return out
}

func strs(members [][]byte) []string {
	out := make([]string, len(members))
	for i, m := range members {
		out[i] = string(m)
	}
	return out
}

func sadd(t testing.TB, s *Store, key string, members ...string) int {
	t.Helper()
	n, err := s.SAdd([]byte(key), bs(members...))
	if err != nil {
		t.Fatalf("SAdd(%q): %v", key, err)
	}
	return n
}

func sortedMembers(t testing.TB, s *Store, key string) []string {
	t.Helper()
	m, err := s.SMembers([]byte(key))
	if err != nil {
		t.Fatalf("SMembers(%q): %v", key, err)
	}
	out := strs(m)
	slices.Sort(out)
	return out
}

func wantEncoding(t testing.TB, s *Store, key, want string) {
	t.Helper()
	if got, ok := s.Encoding([]byte(key)); !ok || got != want {
		t.Fatalf("Encoding(%q) = %q, %v; want %q", key, got, ok, want)
	}
}

func numbers(from, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = strconv.Itoa(from + i)
	}
	return out
}

func TestSetEncodingsFollowRedis(t *testing.T) {
	s, _ := newClockStore(t)
	// Integers as string2ll reads them stay in an intset up to 512.
	if n := sadd(t, s, "i", "3", "-1", "3", "9223372036854775807", "-9223372036854775808"); n != 4 {
		t.Fatalf("SAdd = %d, want 4", n)
	}
	wantEncoding(t, s, "i", "intset")
	m, _ := s.SMembers([]byte("i"))
	if got := strs(m); !slices.Equal(got, []string{"-9223372036854775808", "-1", "3", "9223372036854775807"}) {
		t.Fatalf("an intset's members come in ascending order: %q", got)
	}
	sadd(t, s, "i", numbers(100, 508)...)
	wantEncoding(t, s, "i", "intset")
	if n, _ := s.SCard([]byte("i")); n != 512 {
		t.Fatalf("SCard = %d", n)
	}
	sadd(t, s, "i", "5000")
	wantEncoding(t, s, "i", "hashtable")

	// Not integers for string2ll: a small hash table (held compact here).
	for _, m := range []string{"+1", "01", "-0", "1.5", " 1", "", "99999999999999999999"} {
		key := "s" + m
		sadd(t, s, key, "1", m)
		wantEncoding(t, s, key, "hashtable")
		if c := heldSet(t, s, key); c.obj != nil {
			t.Fatalf("set %q is on the heap", key)
		}
	}
	// Leaving the intset is for good: removing the string keeps it a hash table.
	sadd(t, s, "t", "1", "2", "x")
	if n, _ := s.SRem([]byte("t"), bs("x", "x", "nope")); n != 1 {
		t.Fatalf("SRem = %d, want 1", n)
	}
	wantEncoding(t, s, "t", "hashtable")

	// Past 128 members or 64 bytes, on the heap.
	sadd(t, s, "big", slices.Repeat([]string{"m"}, 1)...)
	for i := range 128 {
		sadd(t, s, "big", fmt.Sprintf("m%d", i))
	}
	if c := heldSet(t, s, "big"); c.obj == nil {
		t.Fatal("a set of 129 strings is not on the heap")
	}
	sadd(t, s, "long", "x", string(make([]byte, 65)))
	if c := heldSet(t, s, "long"); c.obj == nil {
		t.Fatal("a set with a 65-byte member is not on the heap")
	}
	wantEncoding(t, s, "long", "hashtable")
	checkInvariants(t, s)
}

// heldSet is the held value of the set at key.
func heldSet(t testing.TB, s *Store, key string) (c collection) {
	t.Helper()
	found, err := s.readColl([]byte(key), TypeSet, func(cur collection) {
		c = cur
		c.blob = slices.Clone(cur.blob)
	})
	if !found || err != nil {
		t.Fatalf("set %q: %v %v", key, found, err)
	}
	return c
}

func TestSetRemoveEmptiesAndDeletes(t *testing.T) {
	s, _ := newClockStore(t)
	for _, members := range [][]string{{"1", "2"}, {"a", "b"}, numbers(0, 600)} {
		sadd(t, s, "k", members...)
		if n, err := s.SRem([]byte("k"), bs(members...)); n != len(members) || err != nil {
			t.Fatalf("SRem = %d, %v", n, err)
		}
		if _, found := s.TypeOf([]byte("k")); found {
			t.Fatalf("an emptied set of %d is still there", len(members))
		}
		if n, err := s.SRem([]byte("k"), bs("a")); n != 0 || err != nil {
			t.Fatalf("SRem of a missing key = %d, %v", n, err)
		}
	}
	checkInvariants(t, s)
	if st := s.Stats(); st.Cost != 0 {
		t.Fatalf("cost left after every set emptied: %d", st.Cost)
	}
}

func TestSetWrongType(t *testing.T) {
	s, _ := newClockStore(t)
	set(t, s, "str", "v")
	sadd(t, s, "set", "a")
	checks := map[string]error{}
	_, checks["SAdd"] = s.SAdd([]byte("str"), bs("a"))
	_, checks["SRem"] = s.SRem([]byte("str"), bs("a"))
	_, checks["SCard"] = s.SCard([]byte("str"))
	_, checks["SMembers"] = s.SMembers([]byte("str"))
	_, _, checks["SRandMember"] = s.SRandMember([]byte("str"), 1)
	_, checks["SPop"] = s.SPop([]byte("str"), 1)
	_, _, checks["SMove dst"] = s.SMove([]byte("set"), []byte("str"), []byte("a"))
	_, checks["SetCompute"] = s.SetCompute(SetInter, bs("nokey", "str"))
	_, _, checks["SetStore"] = s.SetStore(SetUnion, []byte("d"), bs("set", "str"))
	for name, err := range checks {
		if !errors.Is(err, ErrWrongType) {
			t.Errorf("%s on a string: %v, want ErrWrongType", name, err)
		}
	}
	// A missing source moves nothing, whatever the destination holds.
	if moved, _, err := s.SMove([]byte("nokey"), []byte("str"), []byte("a")); moved || err != nil {
		t.Fatalf("SMove from a missing key = %v, %v", moved, err)
	}
	if got := sortedMembers(t, s, "set"); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("set after refused SMove: %q", got)
	}
	// *STORE replaces a destination of any type, dropping its deadline.
	if _, err := s.Set([]byte("str2"), []byte("v"), SetOptions{StaleUntil: s.now() + int64(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if n, _, err := s.SetStore(SetUnion, []byte("str2"), bs("set")); n != 1 || err != nil {
		t.Fatalf("SetStore = %d, %v", n, err)
	}
	if env, _ := s.Peek([]byte("str2")); env.Type != TypeSet || env.StaleUntil != 0 {
		t.Fatalf("SUNIONSTORE destination: %+v", env)
	}
	checkInvariants(t, s)
}

func TestSetMoveAndStore(t *testing.T) {
	s, _ := newClockStore(t)
	a, b := keysInTwoShards(s)
	sadd(t, s, a, "1", "x")
	if moved, _, _ := s.SMove([]byte(a), []byte(a), []byte("x")); !moved {
		t.Fatal("SMove to itself of a member reports false")
	}
	if moved, _, _ := s.SMove([]byte(a), []byte(b), []byte("1")); !moved {
		t.Fatal("SMove reports false")
	}
	wantEncoding(t, s, b, "intset") // created for its first member, as Redis does
	if moved, _, _ := s.SMove([]byte(a), []byte(b), []byte("x")); !moved {
		t.Fatal("SMove reports false")
	}
	if _, found := s.TypeOf([]byte(a)); found {
		t.Fatal("SMove of the last member left the source")
	}
	if got := sortedMembers(t, s, b); !slices.Equal(got, []string{"1", "x"}) {
		t.Fatalf("destination: %q", got)
	}
	sadd(t, s, a, "1", "2", "3")
	for _, tc := range []struct {
		op   SetOp
		keys []string
		want []string
	}{
		{SetInter, []string{a, b}, []string{"1"}},
		{SetInter, []string{a, b, "missing"}, nil},
		{SetUnion, []string{a, b, "missing"}, []string{"1", "2", "3", "x"}},
		{SetDiff, []string{a, b}, []string{"2", "3"}},
		{SetDiff, []string{a, "missing", a}, nil},
		{SetDiff, []string{"missing", a}, nil},
	} {
		got, err := s.SetCompute(tc.op, bs(tc.keys...))
		gs := strs(got)
		slices.Sort(gs)
		if err != nil || !slices.Equal(gs, tc.want) && len(gs)+len(tc.want) > 0 {
			t.Errorf("SetCompute(%d, %q) = %q, %v; want %q", tc.op, tc.keys, gs, err, tc.want)
		}
	}
	// A stored result takes the form its contents call for.
	if n, _, _ := s.SetStore(SetDiff, []byte("d"), bs(b, "x")); n != 2 {
		t.Fatalf("SetStore = %d", n)
	}
	wantEncoding(t, s, "d", "hashtable")
	if n, _, _ := s.SetStore(SetInter, []byte("d"), bs(a, b)); n != 1 {
		t.Fatalf("SetStore = %d", n)
	}
	wantEncoding(t, s, "d", "intset")
	if n, _, _ := s.SetStore(SetInter, []byte("d"), bs(a, "missing")); n != 0 {
		t.Fatalf("SetStore = %d", n)
	}
	if _, found := s.TypeOf([]byte("d")); found {
		t.Fatal("an empty result left its destination")
	}
	if n, _ := s.SInterCard(bs(a, a), 2); n != 2 {
		t.Fatalf("SInterCard with limit 2 = %d", n)
	}
	checkInvariants(t, s)
}

func TestSetRandomAndPop(t *testing.T) {
	s, _ := newClockStore(t)
	for _, members := range [][]string{numbers(0, 20), append(numbers(0, 19), "x"), numbers(0, 1000)} {
		want := slices.Clone(members)
		slices.Sort(want)
		sadd(t, s, "k", members...)
		got, found, err := s.SRandMember([]byte("k"), 5)
		if !found || err != nil || len(got) != 5 || len(slices.Compact(sortedStrs(got))) != 5 {
			t.Fatalf("SRandMember 5 = %q, %v, %v", got, found, err)
		}
		got, _, _ = s.SRandMember([]byte("k"), -50)
		if len(got) != 50 {
			t.Fatalf("SRandMember -50 gave %d", len(got))
		}
		got, _, _ = s.SRandMember([]byte("k"), 5000)
		if !slices.Equal(sortedStrs(got), want) {
			t.Fatalf("SRandMember of more than the set is not the set")
		}
		// Case 2 (few popped), then case 3 (most popped), then the rest.
		var popped []string
		for _, n := range []int64{2, int64(len(members) - 3), 10} {
			p, err := s.SPop([]byte("k"), n)
			if err != nil {
				t.Fatal(err)
			}
			popped = append(popped, strs(p)...)
		}
		slices.Sort(popped)
		if !slices.Equal(popped, want) {
			t.Fatalf("SPop popped %d members, not the set's %d", len(popped), len(want))
		}
		if _, found := s.TypeOf([]byte("k")); found {
			t.Fatal("the set popped empty is still there")
		}
	}
	// Most of a hash table of integers popped: the rest is an intset again.
	sadd(t, s, "k", append(numbers(0, 600), "x")...)
	if _, err := s.SRem([]byte("k"), bs("x")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SPop([]byte("k"), 590); err != nil {
		t.Fatal(err)
	}
	wantEncoding(t, s, "k", "intset")
	checkInvariants(t, s)
}

func sortedStrs(m [][]byte) []string {
	out := strs(m)
	slices.Sort(out)
	return out
}

// TestSetScanReturnsEveryStayingMember walks a heap set with SScan while
// members are added and removed between steps: every member present
// throughout must come back.
func TestSetScanReturnsEveryStayingMember(t *testing.T) {
	s, _ := newClockStore(t)
	staying := numbers(0, 1000)
	sadd(t, s, "k", append(staying, "x")...)
	seen := map[string]bool{}
	var cursor uint64
	steps := 0
	for {
		next, members, err := s.SScan([]byte("k"), cursor, ScanFilter{}, 10)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range members {
			seen[string(m)] = true
		}
		sadd(t, s, "k", fmt.Sprintf("new%d", steps))
		s.SRem([]byte("k"), bs(fmt.Sprintf("new%d", steps-1)))
		steps++
		if next == 0 {
			break
		}
		cursor = next
	}
	for _, m := range staying {
		if !seen[m] {
			t.Fatalf("member %q never returned", m)
		}
	}
	if steps < 50 {
		t.Fatalf("a scan of 1000 members with COUNT 10 took %d steps", steps)
	}
	_, members, _ := s.SScan([]byte("k"), 0, ScanFilter{Pattern: []byte("99?")}, 5000)
	if got := sortedStrs(members); !slices.Equal(got, numbers(990, 10)) {
		t.Fatalf("MATCH 99?: %q", got)
	}
}

func TestSetCopyRenameExportImport(t *testing.T) {
	s, _ := newClockStore(t)
	sadd(t, s, "heap", numbers(0, 600)...)
	sadd(t, s, "small", "a", "b")
	sadd(t, s, "ints", "1", "2")
	for _, k := range []string{"heap", "small", "ints"} {
		if ok, err := s.Copy([]byte(k), nil, []byte(k+"2"), false); !ok || err != nil {
			t.Fatalf("Copy(%s) = %v, %v", k, ok, err)
		}
		env, _ := s.Export([]byte(k))
		if _, err := s.Set([]byte(k+"3"), env.Value, SetOptions{Type: TypeSet}); err != nil {
			t.Fatalf("Set of an exported %s: %v", k, err)
		}
		before, _ := s.Encoding([]byte(k))
		for _, other := range []string{k + "2", k + "3"} {
			if !slices.Equal(sortedMembers(t, s, other), sortedMembers(t, s, k)) {
				t.Fatalf("%s differs from %s", other, k)
			}
			wantEncoding(t, s, other, before)
		}
	}
	// A copy is its own: changing it leaves the original.
	s.SRem([]byte("heap2"), bs("1"))
	if n, _ := s.SCard([]byte("heap")); n != 600 {
		t.Fatalf("the original lost a member to its copy's SREM: %d", n)
	}
	if ok, err := s.Rename([]byte("heap"), []byte("moved"), false); !ok || err != nil {
		t.Fatalf("Rename: %v %v", ok, err)
	}
	if n, _ := s.SCard([]byte("moved")); n != 600 {
		t.Fatalf("renamed set has %d", n)
	}
	if _, ok := importSet([]byte{setKindStrings, 1, 'a', 1, 'a'}); ok {
		t.Fatal("a strings form with a duplicate was imported")
	}
	if _, ok := importSet([]byte{setKindIntset, 2, 2, 0, 1, 0}); ok {
		t.Fatal("an unsorted intset was imported")
	}
	checkInvariants(t, s)
}

func TestSetMemoryBoundAndNoEviction(t *testing.T) {
	s := newStore(t, Options{MaxMemory: 1 << 20, ExpireInterval: noSweep})
	for i := range 2000 {
		if _, err := s.SAdd([]byte(fmt.Sprintf("set%d", i)), bs(numbers(i, 600)...)); err != nil {
			t.Fatalf("SAdd: %v", err)
		}
	}
	if st := s.Stats(); st.Cost > 1<<20 {
		t.Fatalf("cost %d is past the bound", st.Cost)
	}
	if n := s.Len(); n == 0 || n == 2000 {
		t.Fatalf("%d sets live: eviction did not run or removed all", n)
	}
	checkInvariants(t, s)

	s.SetEvictionPolicy(NoEviction)
	for i := 0; ; i++ {
		_, err := s.SAdd([]byte(fmt.Sprintf("more%d", i)), bs(numbers(0, 600)...))
		if errors.Is(err, ErrOOM) {
			break
		}
		if err != nil || i > 10000 {
			t.Fatalf("SAdd never refused: %v", err)
		}
	}
	// Removing is still allowed.
	k := []byte("more0")
	if n, err := s.SRem(k, bs("1")); n != 1 || err != nil {
		t.Fatalf("SRem past the bound = %d, %v", n, err)
	}
	if p, err := s.SPop(k, 1); len(p) != 1 || err != nil {
		t.Fatalf("SPop past the bound = %q, %v", p, err)
	}
}

// TestSetMoveIsAtomic moves members back and forth between two sets in two
// shards while readers take their union and intersection: a reader must
// never see a member in both or in neither.
func TestSetMoveIsAtomic(t *testing.T) {
	s, _ := newClockStore(t)
	a, b := keysInTwoShards(s)
	const n = 50
	sadd(t, s, a, numbers(0, n)...)
	keys := bs(a, b)
	done := make(chan struct{})
	var movers sync.WaitGroup
	for g := range 2 {
		movers.Add(1)
		go func() {
			defer movers.Done()
			from, to := []byte(a), []byte(b)
			if g == 1 {
				from, to = to, from
			}
			for i := 0; ; i++ {
				select {
				case <-done:
					return
				default:
				}
				if _, _, err := s.SMove(from, to, []byte(strconv.Itoa(i%n))); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	for range underRace(2000, 300) {
		union, err := s.SetCompute(SetUnion, keys)
		if err != nil || len(union) != n {
			t.Fatalf("SUNION saw %d members (%v), want %d", len(union), err, n)
		}
		if both, _ := s.SInterCard(keys, 0); both != 0 {
			t.Fatalf("SINTERCARD saw %d members in both sets", both)
		}
	}
	close(done)
	movers.Wait()
	checkInvariants(t, s)
}

// TestSetAddCompactMatchesGeneral: SADDs of a few members to a compact set
// of strings (appendCompact) build the blob the general path builds, new
// members after the old and duplicates within one call counted once.
func TestSetAddCompactMatchesGeneral(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	for round := range 200 {
		var cur collection
		for range 150 {
			members := make([][]byte, 1+r.IntN(4))
			for i := range members {
				members[i] = []byte("m" + strconv.Itoa(r.IntN(160)))
				if r.IntN(20) == 0 {
					members[i] = bytes.Repeat([]byte{'x'}, 60+r.IntN(10)) // past the compact member's length
				}
			}
			v := viewSet(cur)
			all := v.members()
			seen := map[string]bool{}
			for _, m := range all {
				seen[string(m)] = true
			}
			wantAdded := 0
			for _, m := range members {
				if !seen[string(m)] {
					seen[string(m)] = true
					all = append(all, m)
					wantAdded++
				}
			}
			want := newSetOf(all, noIntset)
			next, added := setAdd(cur, members, noIntset)
			if added != wantAdded {
				t.Fatalf("round %d: added %d, want %d", round, added, wantAdded)
			}
			if got, w := viewSet(next).members(), viewSet(want).members(); (next.obj == nil) != (want.obj == nil) || next.obj == nil && !slices.EqualFunc(got, w, bytes.Equal) {
				t.Fatalf("round %d: %q, want %q", round, got, w)
			}
			if next.obj != nil {
				break
			}
			if added > 0 {
				cur = next
			}
		}
	}
}
