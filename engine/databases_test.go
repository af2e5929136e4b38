package engine

import (
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"
)

// TestDatabasesKeepKeysApart: the same name in two databases is two keys,
// and every walk of the keyspace (DBSIZE, KEYS, SCAN, RANDOMKEY, the
// deadlines' count) sees its own database's.
func TestDatabasesKeepKeysApart(t *testing.T) {
	clk := newFakeClock()
	s := newStore(t, Options{MaxMemory: 64 << 20, Now: clk.Now, ExpireInterval: noSweep})
	one, two := s.DB(1), s.DB(2)
	if s.DB(MaxDatabases) != nil || s.DB(-1) != nil || s.Index() != 0 || two.Index() != 2 {
		t.Fatal("DB numbers")
	}
	for i := range 300 {
		k := "k" + strconv.Itoa(i)
		mustSet(t, s, k, "zero", SetOptions{})
		mustSet(t, one, k, "one", SetOptions{StaleUntil: clk.in(time.Hour)})
	}
	mustSet(t, two, "lonely", "two", SetOptions{})
	wantValue(t, s, "k7", "zero")
	wantValue(t, one, "k7", "one")
	if _, ok := two.Get([]byte("k7")); ok {
		t.Error("database 2 has database 1's key")
	}
	for _, c := range []struct {
		db             *Store
		keys, volatile int
	}{{s, 300, 0}, {one, 300, 300}, {two, 1, 0}, {s.DB(9), 0, 0}} {
		if n, v := c.db.Len(), c.db.Volatile(); n != c.keys || v != c.volatile {
			t.Errorf("database %d: Len %d Volatile %d, want %d and %d", c.db.Index(), n, v, c.keys, c.volatile)
		}
		if n := len(c.db.Keys([]byte("*"))); n != c.keys {
			t.Errorf("database %d: KEYS * has %d keys, want %d", c.db.Index(), n, c.keys)
		}
		var scanned []string
		for cursor := uint64(0); ; {
			var keys []string
			cursor, keys = c.db.Scan(cursor, ScanFilter{}, 50)
			scanned = append(scanned, keys...)
			if cursor == 0 {
				break
			}
		}
		if len(scanned) != c.keys {
			t.Errorf("database %d: SCAN returned %d keys, want %d", c.db.Index(), len(scanned), c.keys)
		}
		if k, ok := c.db.RandomKey(); ok != (c.keys > 0) || c.db == two && k != "lonely" {
			t.Errorf("database %d: RandomKey = %q, %v", c.db.Index(), k, ok)
		}
	}

	// FLUSHDB empties its database alone; FLUSHALL every one.
	one.Flush()
	if one.Len() != 0 || s.Len() != 300 || two.Len() != 1 {
		t.Errorf("after database 1's Flush: %d, %d, %d keys", s.Len(), one.Len(), two.Len())
	}
	wantValue(t, s, "k7", "zero")
	s.FlushAll()
	if s.Len()+two.Len() != 0 || s.Stats().Cost != 0 {
		t.Errorf("after FlushAll: %d and %d keys, cost %d", s.Len(), two.Len(), s.Stats().Cost)
	}
}

// TestMoveAndCopyAcrossDatabases: MOVE takes the key with its deadline and
// leaves a key already there; COPY ... DB copies it there.
func TestMoveAndCopyAcrossDatabases(t *testing.T) {
	clk := newFakeClock()
	s := newStore(t, Options{MaxMemory: 64 << 20, Now: clk.Now, ExpireInterval: noSweep})
	five := s.DB(5)
	mustSet(t, s, "k", "v", SetOptions{StaleUntil: clk.in(time.Hour)})
	var big [][]byte
	for i := range 1000 {
		big = append(big, []byte(strconv.Itoa(i)))
	}
	if _, err := s.SAdd([]byte("set"), big); err != nil { // held on the heap
		t.Fatal(err)
	}
	for _, k := range []string{"k", "set"} {
		if moved, err := s.Move([]byte(k), five); !moved || err != nil {
			t.Fatalf("Move(%s) = %v, %v", k, moved, err)
		}
	}
	if _, ok := s.TypeOf([]byte("k")); ok {
		t.Error("the moved key stayed")
	}
	wantValue(t, five, "k", "v")
	if env, _ := five.Peek([]byte("k")); env.StaleUntil != clk.in(time.Hour) {
		t.Errorf("the moved key's deadline: %+v", env)
	}
	if n, _ := five.SCard([]byte("set")); n != 1000 {
		t.Errorf("the moved set has %d members", n)
	}
	mustSet(t, s, "k", "other", SetOptions{})
	if moved, _ := s.Move([]byte("k"), five); moved {
		t.Error("Move wrote over a key of the other database")
	}
	if moved, _ := s.Move([]byte("missing"), five); moved {
		t.Error("Move of a missing key")
	}
	if copied, err := five.Copy([]byte("set"), s, []byte("set"), false); !copied || err != nil {
		t.Fatalf("Copy to database 0 = %v, %v", copied, err)
	}
	five.SRem([]byte("set"), big[:10])
	if a, b := mustCard(t, s, "set"), mustCard(t, five, "set"); a != 1000 || b != 990 {
		t.Errorf("after the copy and a removal: %d and %d members, want 1000 and 990", a, b)
	}
}

func mustCard(t *testing.T, s *Store, key string) int {
	t.Helper()
	n, err := s.SCard([]byte(key))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestSwapDB: every key of each database is the other's, collections on
// the heap, deadlines (which the sweeper still finds) and counts included;
// the listener hears of both.
func TestSwapDB(t *testing.T) {
	clk := newFakeClock()
	s := newStore(t, Options{MaxMemory: 64 << 20, Now: clk.Now, ExpireInterval: time.Millisecond})
	a, b := s.DB(0), s.DB(3)
	var members [][]byte
	for i := range 500 {
		members = append(members, []byte("m"+strconv.Itoa(i)))
	}
	for i := range 200 {
		k := "k" + strconv.Itoa(i)
		mustSet(t, a, k, "a", SetOptions{})
		mustSet(t, b, k, "b", SetOptions{StaleUntil: clk.in(time.Minute)})
	}
	if _, err := a.SAdd([]byte("set"), members); err != nil {
		t.Fatal(err)
	}
	var swapped []int
	var mu sync.Mutex
	s.Listen(func(c Change) {
		if c.Kind == Swapped {
			mu.Lock()
			swapped = append(swapped, c.DB)
			mu.Unlock()
		}
	})
	s.SwapDB(0, 3)
	wantValue(t, a, "k7", "b")
	wantValue(t, b, "k7", "a")
	if n := mustCard(t, b, "set"); n != 500 {
		t.Errorf("the swapped set has %d members", n)
	}
	if _, ok := a.TypeOf([]byte("set")); ok {
		t.Error("the set stayed in database 0")
	}
	if a.Len() != 200 || b.Len() != 201 || a.Volatile() != 200 || b.Volatile() != 0 {
		t.Errorf("after SwapDB: Len %d and %d, Volatile %d and %d", a.Len(), b.Len(), a.Volatile(), b.Volatile())
	}
	mu.Lock()
	if !slices.Equal(swapped, []int{0, 3}) {
		t.Errorf("the listener heard Swapped of %v, want [0 3]", swapped)
	}
	mu.Unlock()
	s.Listen(nil)
	clk.advance(2 * time.Minute)
	for i := 0; a.Len() > 0 && i < 10000; i++ {
		time.Sleep(time.Millisecond) // the sweeper runs every millisecond here
	}
	if a.Len() != 0 || b.Len() != 201 {
		t.Errorf("past the deadlines: %d and %d keys, want 0 and 201", a.Len(), b.Len())
	}
}

// TestSwapDBRacesWriters: writers of both databases and a reader of both
// while SwapDB runs again and again; each key is always in one database
// whole, never lost nor doubled.
func TestSwapDBRacesWriters(t *testing.T) {
	s := newStore(t, Options{MaxMemory: 64 << 20})
	const keys = 64
	for i := range keys {
		mustSet(t, s.DB(1), fmt.Sprintf("k%d", i), "v", SetOptions{})
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		defer close(done)
		for range underRace(200, 50) {
			s.SwapDB(1, 2)
		}
	})
	for w := range 2 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-done:
					return
				default:
				}
				if _, err := s.DB(3+w).Set([]byte("other"), []byte(strconv.Itoa(i)), SetOptions{}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	// Readers of both: a key is found in one of them at each instant
	// SwapDB is not running, and reading never sees a record half moved.
	wg.Go(func() {
		for {
			select {
			case <-done:
				return
			default:
			}
			for _, db := range []int{1, 2} {
				if v, ok := s.DB(db).Get([]byte("k7")); ok && string(v) != "v" {
					t.Errorf("database %d's k7 = %q", db, v)
					return
				}
			}
		}
	})
	wg.Wait()
	if n1, n2 := s.DB(1).Len(), s.DB(2).Len(); n1+n2 != keys || n1*n2 != 0 {
		t.Errorf("after the swaps: %d and %d keys, want %d in one of them", n1, n2, keys)
	}
}

// TestDatabasesOption: a store of four databases offers four.
func TestDatabasesOption(t *testing.T) {
	s := newStore(t, Options{Databases: 4})
	if s.Databases() != 4 || s.DB(3) == nil || s.DB(4) != nil {
		t.Errorf("Databases %d, DB(3) %v, DB(4) %v", s.Databases(), s.DB(3) != nil, s.DB(4) != nil)
	}
	if d := newStore(t, Options{}).Databases(); d != MaxDatabases {
		t.Errorf("the default offers %d databases, want %d", d, MaxDatabases)
	}
}
