package server

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stampedeless/stampedeless/commands"
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
	r := fillPastBound(t, ":300", func(key string) []string { return append([]string{"SADD", key}, members...) })
	for _, cmd := range [][]string{{"SUNIONSTORE", "dst", "more:0"}, {"SMOVE", "more:0", "dst", "member:1"}} {
		if got := r.do(cmd...); got != "-"+commands.ErrOOM {
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

// fillPastBound fills a store bounded at 1 MB, through the server, with
// 400 collections of about 30 KB each written by add (each answering want):
// the bound holds and eviction removes whole keys, neither none nor all.
// Then, with noeviction, it adds "more:0", "more:1" and so on until the
// store refuses one with Redis's OOM error, and returns the connection.
func fillPastBound(t *testing.T, want string, add func(key string) []string) *rawConn {
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
		if got := r.do(add("c:" + strconv.Itoa(i))...); got != want {
			t.Fatalf("writing c:%d: %s", i, got)
		}
	}
	if st := store.Stats(); st.Cost > bound {
		t.Fatalf("collections cost %d past the bound %d", st.Cost, bound)
	}
	n, _ := strconv.Atoi(strings.TrimPrefix(r.do("DBSIZE"), ":"))
	if n == 0 || n >= keys {
		t.Fatalf("DBSIZE = %d of %d collections: eviction removed none or all", n, keys)
	}
	if got := r.do("CONFIG", "SET", "maxmemory-policy", "noeviction"); got != "+OK" {
		t.Fatalf("CONFIG SET: %s", got)
	}
	for i := 0; ; i++ {
		got := r.do(add("more:" + strconv.Itoa(i))...)
		if got == "-"+commands.ErrOOM {
			return r
		}
		if got != want || i > 1000 {
			t.Fatalf("writing into a full store without eviction: %s", got)
		}
	}
}
