package scripting

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
	rtmetrics "runtime/metrics"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stampedeless/stampedeless/rdb"
)

// liveHeap is Go's live heap after a full collection: what the process
// really holds.
func liveHeap() int64 {
	runtime.GC()
	runtime.GC()
	s := []rtmetrics.Sample{{Name: "/gc/heap/live:bytes"}}
	rtmetrics.Read(s)
	return int64(s[0].Value.Uint64())
}

// chargedEngine is an engine whose OnLibraryBytes adds up what it is
// told, as a store's Charge does.
func chargedEngine(o Options) (*Engine, *atomic.Int64) {
	var charged atomic.Int64
	o.OnLibraryBytes = func(d int64) { charged.Add(d) }
	return New(o), &charged
}

func load(t *testing.T, e *Engine, code string) string {
	t.Helper()
	r, err := e.FunctionLoad(context.Background(), []byte(code), false)
	if err != nil {
		t.Fatal(err)
	}
	return string(r)
}

func fcall(t *testing.T, e *Engine, name string) string {
	t.Helper()
	r, err := e.FCall(context.Background(), FCallInvocation{Args: [][]byte{[]byte(name), []byte("0")}})
	if err != nil {
		t.Fatal(err)
	}
	return string(r)
}

func deleteLibrary(t *testing.T, e *Engine, name string) {
	t.Helper()
	if r, _ := e.Function(context.Background(), byteArgs([]string{"DELETE", name}), 2); string(r) != "+OK\r\n" {
		t.Fatalf("FUNCTION DELETE %s: %q", name, r)
	}
}

// A library is charged what its objects hold, not what its source says:
// a few lines that keep a 10 MB table in a function's upvalue are charged
// at least 10 MB; FUNCTION DELETE gives it all back.
func TestLibraryChargedWhatItHolds(t *testing.T) {
	e, charged := chargedEngine(Options{MaxBytes: 1 << 30})
	// 10,000 strings of 1000 bytes, each in an array slot.
	code := "#!lua name=big\nlocal t = {}\nfor i = 1, 10000 do t[i] = ('x'):rep(995) .. (10000 + i) end\n" +
		"redis.register_function('big', function() return #t end)"
	if r := load(t, e, code); r != "$3\r\nbig\r\n" {
		t.Fatalf("FUNCTION LOAD: %q", r)
	}
	if got := e.LibraryBytes(); got < 10e6 {
		t.Errorf("a library holding 10 MB in an upvalue is charged %d bytes", got)
	}
	if charged.Load() != e.LibraryBytes() {
		t.Errorf("OnLibraryBytes was told %d bytes in all, LibraryBytes is %d", charged.Load(), e.LibraryBytes())
	}
	vm, overhead := e.LibraryMemory()
	if vm+overhead != e.LibraryBytes() || overhead < int64(len(code)) || overhead > 4096+int64(len(code)) {
		t.Errorf("LibraryMemory %d + %d, LibraryBytes %d, the code %d bytes", vm, overhead, e.LibraryBytes(), len(code))
	}
	deleteLibrary(t, e, "big")
	if e.LibraryBytes() != 0 || charged.Load() != 0 {
		t.Errorf("after FUNCTION DELETE: LibraryBytes %d, charged %d", e.LibraryBytes(), charged.Load())
	}
}

// Ordinary libraries are charged within 2x of what they really hold,
// measured as Go's live heap before and after loading them: each one-line
// function keeps a prototype of several kilobytes in gopher-lua.
func TestLibraryChargeNearWhatItHolds(t *testing.T) {
	e, _ := chargedEngine(Options{MaxBytes: 1 << 30})
	// The interpreter itself, made by the first load, is no library's.
	load(t, e, "#!lua name=warm\nredis.register_function('warm', function() return 1 end)")
	for _, c := range []struct{ name, body string }{
		{"functions", func() string {
			var b strings.Builder
			for i := range 100 {
				fmt.Fprintf(&b, "redis.register_function('f%d', function(keys, args) return redis.call('GET', keys[1]) end)\n", i)
			}
			return b.String()
		}()},
		{"records", "local t = {} for i = 1, 10000 do t['k' .. i] = {i, 'v' .. i} end\n" +
			"redis.register_function('records', function() return #t end)"},
	} {
		warm := e.LibraryBytes()
		before := liveHeap()
		load(t, e, "#!lua name=lib\n"+c.body)
		fcall(t, e, "warm") // the interpreter's last frame held the top level
		real := liveHeap() - before
		got := e.LibraryBytes() - warm
		t.Logf("%s: charged %d bytes, holds %d", c.name, got, real)
		if got < real/2 || got > 2*real {
			t.Errorf("%s: charged %d bytes for %d really held", c.name, got, real)
		}
		deleteLibrary(t, e, "lib")
	}
}

// A function that keeps what it builds in an upvalue grows its library's
// charge as it runs; once the libraries hold more than MaxBytes, such
// functions are refused with an OOM error while the others still run.
func TestLibraryGrowsWithItsCalls(t *testing.T) {
	e, charged := chargedEngine(Options{MaxBytes: 8 << 20})
	load(t, e, "#!lua name=grow\nlocal t = {}\n"+
		"redis.register_function('grow', function() t[#t + 1] = ('x'):rep(1048576 - 8) .. #t return #t end)\n"+
		"redis.register_function('shrink', function() t = {} return 0 end)\n"+
		"redis.register_function('still', function() return 7 end)")
	start := e.LibraryBytes()
	for i := 1; i <= 3; i++ {
		if r := fcall(t, e, "grow"); r != fmt.Sprintf(":%d\r\n", i) {
			t.Fatalf("FCALL grow: %q", r)
		}
	}
	if got := e.LibraryBytes(); got < start+3<<20 {
		t.Errorf("after 3 calls adding 1 MB each: %d bytes charged, %d at load", got, start)
	}
	if charged.Load() != e.LibraryBytes() {
		t.Errorf("OnLibraryBytes was told %d bytes in all, LibraryBytes is %d", charged.Load(), e.LibraryBytes())
	}
	// Past the bound.
	var r string
	for range 10 {
		if r = fcall(t, e, "grow"); strings.HasPrefix(r, "-") {
			break
		}
	}
	if r != string(ErrLibrariesOOM.Reply()) {
		t.Fatalf("FCALL grow past MaxBytes: %q, want %q", r, ErrLibrariesOOM.Reply())
	}
	if e.LibraryBytes() <= 8<<20 || e.LibraryBytes() > 10<<20 {
		t.Errorf("%d bytes charged when the calls were refused, the bound 8 MiB", e.LibraryBytes())
	}
	if r := fcall(t, e, "still"); r != ":7\r\n" {
		t.Errorf("FCALL of a function without upvalues past the bound: %q", r)
	}
	deleteLibrary(t, e, "grow")
	if e.LibraryBytes() != 0 || charged.Load() != 0 {
		t.Errorf("after FUNCTION DELETE: LibraryBytes %d, charged %d", e.LibraryBytes(), charged.Load())
	}
}

// A library's top level that builds more than the memory limit leaves
// room for is stopped with the OOM error and leaves nothing behind.
func TestLibraryLoadStoppedAtMemoryLimit(t *testing.T) {
	// Go's soft memory limit, as a server's store sets it from its bound:
	// the collector then runs as the heap nears it, so the watch sees the
	// growth in time.
	limit := liveHeap() + 32<<20
	old := debug.SetMemoryLimit(limit)
	t.Cleanup(func() { debug.SetMemoryLimit(old) })
	e, charged := chargedEngine(Options{MaxBytes: 1 << 30})
	peak := watchPeak()
	start := time.Now()
	// About 300 MB if it ran to the end.
	r := load(t, e, "#!lua name=huge\nlocal t = {}\nfor i = 1, 300 do t[i] = ('x'):rep(1000000) .. i end\n"+
		"redis.register_function('huge', function() return #t end)")
	t.Logf("stopped after %v", time.Since(start))
	if most := peak(); most > limit+16<<20 {
		t.Errorf("the heap reached %d MiB under a limit of %d MiB", most>>20, limit>>20)
	}
	if r != string(ErrOutOfMemory.Reply()) {
		t.Fatalf("FUNCTION LOAD of a library building 300 MB under a limit of %d MiB: %q", limit>>20, r)
	}
	if e.Libraries() != 0 || e.LibraryBytes() != 0 || charged.Load() != 0 {
		t.Errorf("after the refused load: %d libraries, %d bytes, %d charged", e.Libraries(), e.LibraryBytes(), charged.Load())
	}
	if after := liveHeap(); after > limit-16<<20 {
		t.Errorf("the live heap is %d MiB after the refused load, %d MiB before it", after>>20, (limit-32<<20)>>20)
	}
	if r := load(t, e, "#!lua name=small\nredis.register_function('small', function() return 1 end)"); r != "$5\r\nsmall\r\n" {
		t.Errorf("FUNCTION LOAD after the refused one: %q", r)
	}
}

// FUNCTION RESTORE loads all of a payload or none: libraries that
// together would pass MaxBytes are refused, whatever each holds alone.
func TestLibraryRestoreBounded(t *testing.T) {
	lib := func(name string) string {
		return "#!lua name=" + name + "\nlocal t = {}\nfor i = 1, 4000 do t[i] = ('x'):rep(1000) .. i end\n" +
			"redis.register_function('" + name + "', function() return #t end)"
	}
	payload := rdb.DumpFunctions([]string{lib("a"), lib("b")})
	e, charged := chargedEngine(Options{MaxBytes: 6 << 20})
	load(t, e, "#!lua name=kept\nredis.register_function('kept', function() return 1 end)")
	kept := e.LibraryBytes()
	if r, _ := e.FunctionRestore(context.Background(), payload, ""); string(r) != string(ErrLibrariesFull.Reply()) {
		t.Fatalf("FUNCTION RESTORE of 2 libraries of ~4 MB under a 6 MB bound: %q", r)
	}
	if e.Libraries() != 1 || e.LibraryBytes() != kept || charged.Load() != kept {
		t.Errorf("after the refused restore: %d libraries, %d bytes (%d before), %d charged", e.Libraries(), e.LibraryBytes(), kept, charged.Load())
	}
	e2, charged2 := chargedEngine(Options{MaxBytes: 12 << 20})
	if r, _ := e2.FunctionRestore(context.Background(), payload, ""); string(r) != "+OK\r\n" {
		t.Fatalf("FUNCTION RESTORE under a 12 MB bound: %q", r)
	}
	if e2.LibraryBytes() < 6e6 || charged2.Load() != e2.LibraryBytes() {
		t.Errorf("after the restore: %d bytes, %d charged", e2.LibraryBytes(), charged2.Load())
	}
	e2.Function(context.Background(), byteArgs([]string{"FLUSH"}), 2)
	if e2.LibraryBytes() != 0 || charged2.Load() != 0 {
		t.Errorf("after FUNCTION FLUSH: %d bytes, %d charged", e2.LibraryBytes(), charged2.Load())
	}
}

// watchPeak samples the heap's objects every millisecond until the
// returned function is called, which returns the most it saw.
func watchPeak() func() int64 {
	stop, peak := make(chan struct{}), make(chan int64)
	go func() {
		var most int64
		s := []rtmetrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		for {
			rtmetrics.Read(s)
			most = max(most, int64(s[0].Value.Uint64()))
			select {
			case <-stop:
				peak <- most
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	return func() int64 {
		close(stop)
		return <-peak
	}
}
