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
	members := make([]string, 300)
	for i := range members {
		members[i] = "member:" + strconv.Itoa(i)
	}
	// About 300 * 80 bytes a set: 10 MB in all.
	r := fillPastBound(t, func(key string) []string { return append([]string{"SADD", key}, members...) }, ":300")
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

// fillPastBound writes 400 collections, each by the command grow gives
// for its key and answered want, into a server on a 1 MB store: the bound
// must hold and eviction remove some of them whole. Then, under
// noeviction, it writes more (keys more:0, more:1, ...) until one is
// refused with Redis's OOM error, and returns the connection for the
// caller's checks of commands past the bound.
func fillPastBound(t *testing.T, grow func(key string) []string, want string) *rawConn {
	t.Helper()
	const bound = 1 << 20
	store, err := engine.New(engine.Options{MaxMemory: bound})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(store.Close)
	ts := startServer(t, Options{Store: store})
	r := dialRaw(t, ts.addr)
	const keys = 400
	for i := range keys {
		if got := r.do(grow("coll:" + strconv.Itoa(i))...); got != want {
			t.Fatalf("coll:%d: %s", i, got)
		}
	}
	store.Sync()
	if st := store.Stats(); st.Cost > bound {
		t.Fatalf("the collections cost %d past the bound %d", st.Cost, bound)
	}
	n, _ := strconv.Atoi(strings.TrimPrefix(r.do("DBSIZE"), ":"))
	if n == 0 || n >= keys {
		t.Fatalf("DBSIZE = %d of %d collections: eviction removed none or all", n, keys)
	}
	if got := r.do("CONFIG", "SET", "maxmemory-policy", "noeviction"); got != "+OK" {
		t.Fatalf("CONFIG SET: %s", got)
	}
	for i := 0; ; i++ {
		got := r.do(grow("more:" + strconv.Itoa(i))...)
		if got == "-"+errOOM {
			break
		}
		if got != want || i > 1000 {
			t.Fatalf("growing a full store without eviction: %s", got)
		}
	}
	return r
}
