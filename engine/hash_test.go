package engine

import (
	"bytes"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
)

func hset(t *testing.T, s *Store, key string, pairs ...string) int {
	t.Helper()
	b := make([][]byte, len(pairs))
	for i, p := range pairs {
		b[i] = []byte(p)
	}
	n, err := s.HSet([]byte(key), b)
	if err != nil {
		t.Fatalf("HSet(%q): %v", key, err)
	}
	return n
}

// onHeap reports whether key's hash is held as a heap object.
func onHeap(s *Store, key string) (heap bool) {
	s.read([]byte(key), 0, func(r record) { heap = r.onHeap() })
	return heap
}

func TestHashEncodingThresholds(t *testing.T) {
	s, _ := newClockStore(t)
	// 512 fields of 64 bytes: still a listpack, held in the record.
	for i := range DefaultHashListpackEntries {
		hset(t, s, "h", fmt.Sprintf("%064d", i), strings.Repeat("v", DefaultHashListpackValue))
	}
	wantEncoding(t, s, "h", "listpack")
	if onHeap(s, "h") {
		t.Fatal("a listpack hash is on the heap")
	}
	hset(t, s, "h", "one-more", "v")
	wantEncoding(t, s, "h", "hashtable")
	if !onHeap(s, "h") {
		t.Fatal("a hash of 513 fields is not on the heap")
	}
	// Never back: down to one field, still a hashtable.
	all, _ := s.HGetAll([]byte("h"))
	for i := 0; i < len(all)-2; i += 2 {
		if _, err := s.HDel([]byte("h"), [][]byte{all[i]}); err != nil {
			t.Fatal(err)
		}
	}
	wantEncoding(t, s, "h", "hashtable")
	if n, _ := s.HLen([]byte("h")); n != 1 {
		t.Fatalf("HLen = %d, want 1", n)
	}

	// A value of 65 bytes: hashtable, yet small enough to stay in its record.
	hset(t, s, "cache", "absexp", "-1", "sldexp", "-1")
	wantEncoding(t, s, "cache", "listpack")
	hset(t, s, "cache", "data", strings.Repeat("d", 100))
	wantEncoding(t, s, "cache", "hashtable")
	if onHeap(s, "cache") {
		t.Fatal("a small hashtable hash is on the heap")
	}
	// Growing past hashInRecordMax moves it to the heap.
	hset(t, s, "cache", "data", strings.Repeat("d", hashInRecordMax))
	wantEncoding(t, s, "cache", "hashtable")
	if !onHeap(s, "cache") {
		t.Fatal("a hash of a value of hashInRecordMax bytes is not on the heap")
	}
	// A long field converts too, HUpdate's as HSet's (Redis's hashTypeSet).
	if _, err := s.HUpdate([]byte("n"), []byte(strings.Repeat("f", 65)), func([]byte, bool) ([]byte, error) { return []byte("1"), nil }); err != nil {
		t.Fatal(err)
	}
	wantEncoding(t, s, "n", "hashtable")
}

func TestHashOperations(t *testing.T) {
	s, _ := newClockStore(t)
	for _, big := range []bool{false, true} {
		key := fmt.Sprintf("h-%v", big)
		if big {
			for i := range 200 {
				hset(t, s, key, fmt.Sprint("filler", i), "x")
			}
		}
		if n := hset(t, s, key, "a", "1", "b", "2", "a", "3"); n != 2 {
			t.Fatalf("%s: HSet added %d, want 2", key, n)
		}
		if v, found, _ := s.HGet([]byte(key), []byte("a")); !found || string(v) != "3" {
			t.Fatalf("%s: HGet a = %q %v", key, v, found)
		}
		if ok, _ := s.HSetNX([]byte(key), []byte("a"), []byte("4")); ok {
			t.Fatalf("%s: HSetNX on a present field set it", key)
		}
		if ok, _ := s.HSetNX([]byte(key), []byte("e"), []byte("")); !ok {
			t.Fatalf("%s: HSetNX on a missing field did not set it", key)
		}
		vals, _ := s.HMGet([]byte(key), [][]byte{[]byte("e"), []byte("zz"), []byte("b")})
		if vals[0] == nil || len(vals[0]) != 0 || vals[1] != nil || string(vals[2]) != "2" {
			t.Fatalf("%s: HMGet = %q", key, vals)
		}
		v, err := s.HUpdate([]byte(key), []byte("b"), func(old []byte, exists bool) ([]byte, error) {
			return append(append([]byte(nil), old...), '!'), nil
		})
		if err != nil || string(v) != "2!" {
			t.Fatalf("%s: HUpdate = %q, %v", key, v, err)
		}
		stop := errors.New("stop")
		if _, err := s.HUpdate([]byte(key), []byte("b"), func([]byte, bool) ([]byte, error) { return nil, stop }); err != stop {
			t.Fatalf("%s: HUpdate's error = %v", key, err)
		}
		if n, _ := s.HDel([]byte(key), [][]byte{[]byte("a"), []byte("a"), []byte("zz")}); n != 1 {
			t.Fatalf("%s: HDel removed %d, want 1", key, n)
		}
	}
	// Insertion order, as a listpack keeps it; a replaced value keeps its place.
	hset(t, s, "o", "z", "1", "y", "2", "x", "3")
	hset(t, s, "o", "z", "0")
	all, _ := s.HGetAll([]byte("o"))
	if got := fmt.Sprintf("%s", all); got != "[z 0 y 2 x 3]" {
		t.Fatalf("HGetAll = %s", got)
	}
	// Emptied, the key is gone.
	if n, _ := s.HDel([]byte("o"), [][]byte{[]byte("x"), []byte("y"), []byte("z")}); n != 3 {
		t.Fatalf("HDel removed %d", n)
	}
	if _, found := s.TypeOf([]byte("o")); found {
		t.Fatal("an emptied hash is still a key")
	}
	// Types.
	set(t, s, "str", "v")
	if _, err := s.HSet([]byte("str"), [][]byte{[]byte("f"), []byte("v")}); !errors.Is(err, ErrWrongType) {
		t.Fatalf("HSet on a string: %v", err)
	}
	if _, _, err := s.HGet([]byte("str"), []byte("f")); !errors.Is(err, ErrWrongType) {
		t.Fatalf("HGet on a string: %v", err)
	}
	if _, found := s.Get([]byte("h-false")); found {
		t.Fatal("Get found a hash")
	}
}

func TestHashScanHeapCoversEveryField(t *testing.T) {
	s, _ := newClockStore(t)
	const n = 1000
	for i := range n {
		hset(t, s, "h", fmt.Sprint("f", i), fmt.Sprint(i))
	}
	seen := map[string]bool{}
	cursor, calls := uint64(0), 0
	for {
		next, flat, err := s.HScan([]byte("h"), cursor, ScanFilter{}, 10)
		if err != nil {
			t.Fatal(err)
		}
		calls++
		for i := 0; i < len(flat); i += 2 {
			seen[string(flat[i])] = true
			// Removing a returned field and adding others mid-scan must
			// not make the scan miss the fields present throughout.
			s.HDel([]byte("h"), [][]byte{flat[i]})
			hset(t, s, "h", fmt.Sprint("new", calls, i), "x")
		}
		if next == 0 {
			break
		}
		cursor = next
	}
	for i := range n {
		if !seen[fmt.Sprint("f", i)] {
			t.Fatalf("field f%d never returned", i)
		}
	}
	if calls > hashScanBuckets {
		t.Fatalf("%d calls, want at most %d", calls, hashScanBuckets)
	}
}

func TestHashExportImportCopy(t *testing.T) {
	s, _ := newClockStore(t)
	hset(t, s, "small", "a", "1", "b", "2")
	hset(t, s, "table", "data", strings.Repeat("d", 100))
	for i := range 300 {
		hset(t, s, "heap", fmt.Sprint(i), "v")
	}
	for _, key := range []string{"small", "table", "heap"} {
		env, found := s.Export([]byte(key))
		if !found || env.Type != TypeHash {
			t.Fatalf("Export(%q) = %+v, %v", key, env, found)
		}
		enc, _ := s.Encoding([]byte(key))
		dst := "copy-" + key
		if _, err := s.Set([]byte(dst), env.Value, SetOptions{Type: TypeHash}); err != nil {
			t.Fatalf("Set of %q's export: %v", key, err)
		}
		wantEncoding(t, s, dst, enc)
		a, _ := s.HGetAll([]byte(key))
		b, _ := s.HGetAll([]byte(dst))
		if !sameHash(a, b) {
			t.Fatalf("%q imported differs", key)
		}
		// COPY: changing the copy leaves the source as it was.
		if ok, err := s.Copy([]byte(key), nil, []byte(dst), true); !ok || err != nil {
			t.Fatalf("Copy = %v, %v", ok, err)
		}
		hset(t, s, dst, "extra", "x")
		if _, found, _ := s.HGet([]byte(key), []byte("extra")); found {
			t.Fatalf("a change to the copy of %q shows in it", key)
		}
	}
	for _, bad := range [][]byte{nil, {}, {7}, {0}, {0, 5, 'a'}} {
		if _, err := s.Set([]byte("bad"), bad, SetOptions{Type: TypeHash}); !errors.Is(err, ErrWrongType) {
			t.Fatalf("Set of portable form %v: %v, want ErrWrongType", bad, err)
		}
	}
}

func sameHash(a, b [][]byte) bool {
	m := map[string]string{}
	for i := 0; i < len(a); i += 2 {
		m[string(a[i])] = string(a[i+1])
	}
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(b); i += 2 {
		if v, ok := m[string(b[i])]; !ok || !bytes.Equal([]byte(v), b[i+1]) {
			return false
		}
	}
	return true
}

func TestHashMemoryBound(t *testing.T) {
	s := newStore(t, Options{MaxMemory: 1 << 20, ExpireInterval: noSweep})
	// A heap-held hash is charged for its contents.
	for i := range 1000 {
		hset(t, s, "big", fmt.Sprint("field", i), strings.Repeat("v", 100))
	}
	cost, _ := s.Cost([]byte("big"))
	if cost < 1000*100 {
		t.Fatalf("a hash of 100 KB of values costs %d", cost)
	}
	hset(t, s, "big", "field1", "")
	// The value's string was its size class; the empty one takes nothing.
	if after, _ := s.Cost([]byte("big")); after != cost-stringBytes(100) {
		t.Fatalf("after shrinking a value by 100 B the cost is %d, want %d", after, cost-stringBytes(100))
	}
	// Filling with hashes stays within the bound: eviction removes some.
	for i := range 20000 {
		hset(t, s, fmt.Sprint("k", i), "absexp", "-1", "sldexp", "-1", "data", strings.Repeat("d", 100))
	}
	st := s.Stats()
	if st.Cost > st.MaxCost {
		t.Fatalf("cost %d past the bound %d", st.Cost, st.MaxCost)
	}
	if st.Evicted == 0 {
		t.Fatal("nothing evicted")
	}
	checkInvariants(t, s)

	// noeviction: growth is refused.
	s2 := newStore(t, Options{MaxMemory: 64 << 10, Policy: NoEviction, ExpireInterval: noSweep})
	var err error
	for i := 0; i < 10000 && err == nil; i++ {
		_, err = s2.HSet([]byte("h"), [][]byte{[]byte(fmt.Sprint("f", i)), []byte(strings.Repeat("v", 100))})
	}
	if !errors.Is(err, ErrOOM) {
		t.Fatalf("filling under noeviction: %v, want ErrOOM", err)
	}
}

// TestHSetGarbage: an HSET that makes a new heap-held hash allocates
// little beyond what the hash holds (no encoding of it made and dropped,
// its list of fields built in a scratch), so that a churn of such hashes
// does not outrun the collector at the process's memory limit. Before,
// one 4 KB field allocated 9.4 KB (a field past hashInRecordMax is on the
// heap now), and 200 fields of 100 bytes 84 KB for a hash that holds 33.
func TestHSetGarbage(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector drops sync.Pool's items at random")
	}
	big := [][]byte{[]byte("data"), bytes.Repeat([]byte("v"), 2*hashInRecordMax)}
	var many [][]byte
	for j := range 200 {
		many = append(many, fmt.Appendf(nil, "f:%d", j), bytes.Repeat([]byte("v"), 100))
	}
	for _, tc := range []struct {
		name  string
		pairs [][]byte
	}{{"one field past hashInRecordMax", big}, {"200 fields", many}} {
		t.Run(tc.name, func(t *testing.T) {
			s := newStore(t, Options{MaxMemory: 1 << 30})
			const runs = 200
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			for i := range runs {
				if _, err := s.HSet(fmt.Appendf(nil, "h:%d", i), tc.pairs); err != nil {
					t.Fatal(err)
				}
			}
			runtime.ReadMemStats(&after)
			var held int64
			s.read([]byte("h:0"), 0, func(r record) { held = r.cost() })
			if !onHeap(s, "h:0") {
				t.Fatal("the hash is not on the heap")
			}
			per := int64(after.TotalAlloc-before.TotalAlloc) / runs
			t.Logf("%d bytes allocated an HSET, the hash holds %d", per, held)
			if per > held+held/4 {
				t.Errorf("an HSET allocated %d bytes for a hash that holds %d", per, held)
			}
		})
	}
}
