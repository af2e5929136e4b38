package server

import (
	"runtime"
	"runtime/debug"
	rtmetrics "runtime/metrics"
	"strings"
	"testing"
	"time"

	"github.com/stampedeless/stampedeless/commands"
	"github.com/stampedeless/stampedeless/engine"
)

// allocatedBytes is how many bytes the process has allocated on Go's heap
// since it started.
func allocatedBytes() uint64 {
	s := []rtmetrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	rtmetrics.Read(s)
	return s[0].Value.Uint64()
}

// TestGrowthCheckedBeforeBuilt: a command that would grow a string past
// the memory bound is refused with -OOM before the value is built: the
// server allocates nothing near its size. (Redis would build it and then
// evict everything else; proto-max-bulk-len, 512 MB here, is checked
// first, as Redis checks it.)
func TestGrowthCheckedBeforeBuilt(t *testing.T) {
	store, err := engine.New(engine.Options{MaxMemory: 32 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(store.Close)
	ts := startServer(t, Options{Store: store})
	r := dialRaw(t, ts.addr)
	r.do("SET", "s", "abc")
	oom := "-" + commands.ErrOOM
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"SETRANGE", "k", "400000000", "x"}, oom},
		{[]string{"SETRANGE", "s", "400000000", "x"}, oom},
		{[]string{"SETBIT", "k", "4294967295", "1"}, oom},
		{[]string{"SETBIT", "s", "4294967295", "1"}, oom},
		{[]string{"BITFIELD", "k", "SET", "u8", "#400000000", "1"}, oom},
		{[]string{"SETRANGE", "k", "536870911", "xy"}, "-" + commands.ErrStringLimit},
		{[]string{"SETBIT", "k", "4294967296", "1"}, "-ERR bit offset is not an integer or out of range"},
	} {
		before := allocatedBytes()
		got := r.do(c.args...)
		allocated := allocatedBytes() - before
		if got != c.want {
			t.Errorf("%s: %s, want %s", strings.Join(c.args, " "), got, c.want)
		}
		if allocated > 8<<20 {
			t.Errorf("%s allocated %d MiB before answering", strings.Join(c.args, " "), allocated>>20)
		}
	}
	if got := r.do("EXISTS", "k"); got != ":0" {
		t.Errorf("EXISTS k after the refused growth: %s", got)
	}
	if got := r.do("GET", "s"); got != `"abc"` {
		t.Errorf("GET s after the refused growth: %q", got)
	}
}

// TestScriptStoppedAtMemoryLimit: a script that builds more than the
// memory limit leaves room for is stopped with Redis's OOM error, as one
// past its time is stopped by SCRIPT KILL; the server goes on serving
// scripts and other clients. The limit is Go's soft memory limit, which
// the store sets from --max-memory in a server that owns its process.
func TestScriptStoppedAtMemoryLimit(t *testing.T) {
	runtime.GC()
	live := []rtmetrics.Sample{{Name: "/gc/heap/live:bytes"}}
	rtmetrics.Read(live)
	limit := int64(live[0].Value.Uint64()) + 64<<20
	old := debug.SetMemoryLimit(limit)
	t.Cleanup(func() { debug.SetMemoryLimit(old) })

	ts := startServer(t, Options{})
	script, other := dialRaw(t, ts.addr), dialRaw(t, ts.addr)
	other.do("SET", "k", "v")
	// The heap's peak while the script runs, sampled as the check does.
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
	// 30M numbers in a table take about 700 MB in gopher-lua.
	got := script.do("EVAL", "local t={} for i=1,30000000 do t[i]=i end return #t", "0")
	close(stop)
	if most := <-peak; most > limit+32<<20 {
		t.Errorf("the heap reached %d MiB under a limit of %d MiB", most>>20, limit>>20)
	}
	want := "-OOM command not allowed when used memory > 'maxmemory'. script: "
	if !strings.HasPrefix(got, want) {
		t.Fatalf("EVAL of a script building a 700 MB table under a %d MiB limit: %s, want %s...", limit>>20, got, want)
	}
	for _, c := range []struct {
		r    *rawConn
		args []string
		want string
	}{
		{other, []string{"GET", "k"}, `"v"`},
		{script, []string{"EVAL", "return redis.call('GET', KEYS[1])", "1", "k"}, `"v"`},
		{other, []string{"EVAL", "local t={} for i=1,1000 do t[i]=i end return #t", "0"}, ":1000"},
	} {
		if got := c.r.do(c.args...); got != c.want {
			t.Errorf("%s after the script was stopped: %s, want %s", strings.Join(c.args, " "), got, c.want)
		}
	}
}
