package resp

import (
	rtmetrics "runtime/metrics"
	"strings"
	"testing"

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
	oom := "-" + errOOM
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"SETRANGE", "k", "400000000", "x"}, oom},
		{[]string{"SETRANGE", "s", "400000000", "x"}, oom},
		{[]string{"SETBIT", "k", "4294967295", "1"}, oom},
		{[]string{"SETBIT", "s", "4294967295", "1"}, oom},
		{[]string{"BITFIELD", "k", "SET", "u8", "#400000000", "1"}, oom},
		{[]string{"SETRANGE", "k", "536870911", "xy"}, "-" + errStringLimit},
		{[]string{"SETBIT", "k", "4294967296", "1"}, "-" + errBitOffset},
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
