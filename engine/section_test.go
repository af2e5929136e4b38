package engine

import (
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
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

// TestFillWaitsForTheSection: a fill's fenced write does not land inside an
// exclusive section; it lands once the section is left.
func TestFillWaitsForTheSection(t *testing.T) {
	s := newStore(t, Options{})
	sec := s.Section()
	f := s.Fence([]byte("k"))
	sec.Lock()
	done := make(chan struct{})
	var started atomic.Bool
	go func() {
		defer close(done)
		started.Store(true)
		s.Set([]byte("k"), []byte("filled"), SetOptions{Fence: f})
	}()
	for !started.Load() {
		runtime.Gosched()
	}
	// The fill's goroutine gets every chance to finish; the key must still
	// not be written while the section is held.
	for range 1000 {
		runtime.Gosched()
		if _, ok := s.Peek([]byte("k")); ok {
			t.Fatal("a fenced write landed inside the exclusive section")
		}
	}
	sec.Unlock()
	<-done
	wantValue(t, s, "k", "filled")
}
