package resp

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stampedeless/stampedeless/engine"
)

// TestSetsBoundedByMaxMemory fills a small store with sets through the
// server: the bound holds and eviction removes whole sets; with
// noeviction, growing a set is refused with Redis's OOM error while
// shrinking one is not.
func TestSetsBoundedByMaxMemory(t *testing.T) {
	const bound = 1 << 20
	store, err := engine.New(engine.Options{MaxMemory: bound})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(store.Close)
	ts := startServer(t, Options{Store: store})
	r := dialRaw(t, ts.addr)
	members := make([]string, 300)
	for i := range members {
		members[i] = "member:" + strconv.Itoa(i)
	}
	const sets = 400 // about 300 * 80 bytes each: 10 MB in all
	for i := range sets {
		args := append([]string{"SADD", "set:" + strconv.Itoa(i)}, members...)
		if got := r.do(args...); got != ":300" {
			t.Fatalf("SADD set:%d: %s", i, got)
		}
	}
	store.Sync()
	if st := store.Stats(); st.Cost > bound {
		t.Fatalf("sets cost %d past the bound %d", st.Cost, bound)
	}
	n, _ := strconv.Atoi(strings.TrimPrefix(r.do("DBSIZE"), ":"))
	if n == 0 || n >= sets {
		t.Fatalf("DBSIZE = %d of %d sets: eviction removed none or all", n, sets)
	}

	if got := r.do("CONFIG", "SET", "maxmemory-policy", "noeviction"); got != "+OK" {
		t.Fatalf("CONFIG SET: %s", got)
	}
	for i := 0; ; i++ {
		args := append([]string{"SADD", "more:" + strconv.Itoa(i)}, members...)
		got := r.do(args...)
		if got == "-"+errOOM {
			break
		}
		if got != ":300" || i > 1000 {
			t.Fatalf("SADD into a full store without eviction: %s", got)
		}
	}
	for _, cmd := range [][]string{{"SUNIONSTORE", "dst", "more:0"}, {"SMOVE", "more:0", "dst", "member:1"}} {
		if got := r.do(cmd...); got != "-"+errOOM {
			t.Fatalf("%s past the bound: %s", cmd[0], got)
		}
	}
	if got := r.do("SREM", "more:0", "member:1"); got != ":1" {
		t.Fatalf("SREM past the bound: %s", got)
	}
	if got := r.do("SPOP", "more:0", "2"); !strings.HasPrefix(got, `["member:`) || strings.Count(got, `"`) != 4 {
		t.Fatalf("SPOP past the bound: %s", got)
	}
}
