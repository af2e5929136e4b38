package watch

import (
	"testing"

	"github.com/stampedeless/stampedeless/engine"
)

// newRegistry is a registry on a real store whose changes it listens to,
// as the server wires it.
func newRegistry(t *testing.T) (*Registry, *engine.Store, *int) {
	t.Helper()
	store, err := engine.New(engine.Options{MaxMemory: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(store.Close)
	w := &Registry{}
	listening := 0
	w.Init(store, func(d int) {
		listening += d
		if listening == 1 {
			store.Listen(w.Changed)
		} else if listening == 0 {
			store.Listen(nil)
		}
	})
	return w, store, &listening
}

func set(t *testing.T, s *engine.Store, key string) {
	t.Helper()
	if _, err := s.Set([]byte(key), []byte("v"), engine.SetOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestWatch: what makes EXEC run nothing, as in Redis.
func TestWatch(t *testing.T) {
	for _, tc := range []struct {
		name      string
		present   bool // the key exists when watched
		change    func(t *testing.T, s *engine.Store)
		unchanged bool
	}{
		{"nothing", true, func(*testing.T, *engine.Store) {}, true},
		{"written", true, func(t *testing.T, s *engine.Store) { set(t, s, "k") }, false},
		{"written while missing", false, func(t *testing.T, s *engine.Store) { set(t, s, "k") }, false},
		{"another key written", true, func(t *testing.T, s *engine.Store) { set(t, s, "other") }, true},
		{"deleted", true, func(_ *testing.T, s *engine.Store) { s.Delete([]byte("k")) }, false},
		{"flushed", true, func(_ *testing.T, s *engine.Store) { s.Flush() }, false},
		{"missing and flushed", false, func(_ *testing.T, s *engine.Store) { s.Flush() }, true},
		{"swapped with an empty database", true, func(_ *testing.T, s *engine.Store) { s.SwapDB(0, 1) }, false},
		{"missing, swapped with an empty database", false, func(_ *testing.T, s *engine.Store) { s.SwapDB(0, 1) }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, store, listening := newRegistry(t)
			if tc.present {
				set(t, store, "k")
			}
			var c Client
			w.Watch(&c, 0, [][]byte{[]byte("k")})
			if *listening != 1 {
				t.Fatalf("listening %d after WATCH, want 1", *listening)
			}
			tc.change(t, store)
			if keys, dirty := w.Info(&c); dirty == tc.unchanged || dirty && keys != 0 {
				t.Errorf("Info: %d keys, dirty %v", keys, dirty)
			}
			if got := w.Unchanged(&c); got != tc.unchanged {
				t.Errorf("Unchanged = %v, want %v", got, tc.unchanged)
			}
			if clients, keys := w.Stats(); clients != 0 || keys != 0 || *listening != 0 {
				t.Errorf("after EXEC: %d clients, %d keys, listening %d; want none", clients, keys, *listening)
			}
		})
	}
}

// TestWatchCounts: a key watched twice by one client is one watch; two
// clients of one key, one key of the registry; a dirty client gains no
// more keys.
func TestWatchCounts(t *testing.T) {
	w, store, _ := newRegistry(t)
	var a, b Client
	w.Watch(&a, 0, [][]byte{[]byte("k"), []byte("k")})
	w.Watch(&b, 0, [][]byte{[]byte("k")})
	w.Watch(&b, 1, [][]byte{[]byte("k")})
	if clients, keys := w.Stats(); clients != 2 || keys != 2 {
		t.Fatalf("Stats = %d clients, %d keys; want 2, 2", clients, keys)
	}
	if n, _ := w.Info(&a); n != 1 {
		t.Errorf("a watches %d keys, want 1", n)
	}
	set(t, store, "k")
	if !w.Dirty(&a) || !w.Dirty(&b) {
		t.Fatal("a write left a watcher clean")
	}
	w.Watch(&a, 0, [][]byte{[]byte("x")})
	if n, dirty := w.Info(&a); n != 0 || !dirty {
		t.Errorf("dirty a after WATCH x: %d keys, dirty %v; want 0, true", n, dirty)
	}
	w.Unwatch(&a)
	if w.Dirty(&a) {
		t.Error("dirty after UNWATCH")
	}
}
