package engine

import (
	"runtime"
	"strconv"
	"sync"
	"testing"
)

// TestSectionIsAtomic: a pair of writes made holding the section
// exclusively is never seen half done by readers holding it shared.
func TestSectionIsAtomic(t *testing.T) {
	s := newStore(t, Options{})
	sec := s.Section()
	a, b := []byte("a"), []byte("b")
	set(t, s, "a", "0")
	set(t, s, "b", "0")
	stop := make(chan struct{})
	writer := make(chan struct{})
	go func() {
		defer close(writer)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			v := []byte(strconv.Itoa(i))
			sec.Lock()
			s.Set(a, v, SetOptions{})
			s.Set(b, v, SetOptions{})
			sec.Unlock()
		}
	}()
	var wg sync.WaitGroup
	for r := range 4 {
		wg.Go(func() {
			for range 2000 {
				sec.RLock(uint64(r))
				va, _ := s.Get(a)
				vb, _ := s.Get(b)
				sec.RUnlock(uint64(r))
				if string(va) != string(vb) {
					t.Errorf("a shared reader saw a=%s b=%s: half of an exclusive pair", va, vb)
					return
				}
				// As a connection waits for its next request: readers
				// that never yield would keep the writer off the CPU.
				runtime.Gosched()
			}
		})
	}
	wg.Wait()
	close(stop)
	<-writer
}

// TestStoreNeverEntersTheSection: the Store's calls, a fill's fenced
// writes included, never enter the section themselves, so a goroutine
// that holds it (EXEC running FILL.SET, a script) can make them without
// waiting for itself. Who enters is the caller's business (Section).
func TestStoreNeverEntersTheSection(t *testing.T) {
	s := newStore(t, Options{})
	sec := s.Section()
	sec.Lock()
	defer sec.Unlock()
	f := s.Fence([]byte("k"))
	if _, err := s.Set([]byte("k"), []byte("filled"), SetOptions{Fence: f}); err != nil {
		t.Fatal(err)
	}
	wantValue(t, s, "k", "filled")
	g := s.Fence([]byte("k"))
	if !s.DeleteFenced(g) {
		t.Fatal("DeleteFenced under the held section removed nothing")
	}
}
