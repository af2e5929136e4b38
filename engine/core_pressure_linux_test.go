package engine

import (
	"runtime/debug"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stampedeless/stampedeless/internal/memsize"
	"github.com/stampedeless/stampedeless/internal/testwait"
)

// TestPressureCharged: memory the process holds outside Go's live heap and
// the arena (here a mapping the test touches; in a server, Go's spans left
// partly empty when one kind of value replaced another) is charged once
// the resident set passes what the bound promises, so the entries are
// evicted to make room for it.
func TestPressureCharged(t *testing.T) {
	old := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(old) })
	const bound = 8 << 20
	s := newStore(t, Options{MaxMemory: bound, OwnsProcess: true, ExpireInterval: time.Millisecond})
	rss, _, ok := memsize.Resident()
	if !ok {
		t.Skip("no resident set to read")
	}
	// Enough to pass the promise, 1.15 times the bound plus 24 MiB.
	n := int(max(s.processTotal()-rss, 0)) + 16<<20
	held, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Munmap(held) })
	for i := 0; i < len(held); i += 4096 {
		held[i] = 1
	}
	value := string(make([]byte, 1000))
	i := 0
	write := func() {
		for range 200 {
			set(t, s, "k"+strconv.Itoa(i%8000), value)
			i++
		}
	}
	for range 40 {
		write()
	}
	// Without the pressure the entries get the bound less the baseline
	// (a quarter at most) and the live heap's drift: about 6 MiB.
	if !testwait.Until(func() bool { write(); return s.used.Load() <= bound/2 }) {
		t.Errorf("the entries cost %d bytes with the process past its bound, want at most half the bound of %d", s.used.Load(), bound)
	}
}
