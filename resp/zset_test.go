package resp

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stampedeless/stampedeless/engine"
)

// TestZSetsBoundedByMaxMemory fills a small store with sorted sets, small
// and on the heap, through the server: the bound holds and eviction
// removes whole sets; with noeviction, growing a sorted set is refused with
// Redis's OOM error while shrinking one is not.
func TestZSetsBoundedByMaxMemory(t *testing.T) {
	const bound = 1 << 20
	store, err := engine.New(engine.Options{MaxMemory: bound})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(store.Close)
	ts := startServer(t, Options{Store: store})
	r := dialRaw(t, ts.addr)
	pairs := make([]string, 0, 600)
	for i := range 300 {
		pairs = append(pairs, strconv.Itoa(i), "member:"+strconv.Itoa(i))
	}
	const sets = 400 // about 300 * 100 bytes each: 12 MB in all
	for i := range sets {
		args := append([]string{"ZADD", "z:" + strconv.Itoa(i)}, pairs...)
		if got := r.do(args...); got != ":300" {
			t.Fatalf("ZADD z:%d: %s", i, got)
		}
	}
	store.Sync()
	if st := store.Stats(); st.Cost > bound {
		t.Fatalf("sorted sets cost %d past the bound %d", st.Cost, bound)
	}
	n, _ := strconv.Atoi(strings.TrimPrefix(r.do("DBSIZE"), ":"))
	if n == 0 || n >= sets {
		t.Fatalf("DBSIZE = %d of %d sorted sets: eviction removed none or all", n, sets)
	}

	if got := r.do("CONFIG", "SET", "maxmemory-policy", "noeviction"); got != "+OK" {
		t.Fatalf("CONFIG SET: %s", got)
	}
	for i := 0; ; i++ {
		args := append([]string{"ZADD", "more:" + strconv.Itoa(i)}, pairs...)
		got := r.do(args...)
		if got == "-"+errOOM {
			break
		}
		if got != ":300" || i > 1000 {
			t.Fatalf("ZADD into a full store without eviction: %s", got)
		}
	}
	for _, cmd := range [][]string{
		{"ZADD", "more:0", "1", "new"}, {"ZINCRBY", "more:0", "1", "member:1"},
		{"ZUNIONSTORE", "dst", "1", "more:0"}, {"ZRANGESTORE", "dst", "more:0", "0", "1"},
	} {
		if got := r.do(cmd...); got != "-"+errOOM {
			t.Fatalf("%s past the bound: %s", cmd[0], got)
		}
	}
	for _, step := range []struct{ cmd, want string }{
		{"ZREM more:0 member:1", ":1"},
		{"ZPOPMIN more:0", `["member:0" "0"]`},
		{"ZREMRANGEBYSCORE more:0 2 3", ":2"},
		{"ZREMRANGEBYRANK more:0 0 0", ":1"},
		{"ZREMRANGEBYLEX more:0 - [member", ":0"},
	} {
		if got := r.do(strings.Fields(step.cmd)...); got != step.want {
			t.Fatalf("%s past the bound: %s, want %s", step.cmd, got, step.want)
		}
	}
	if got := r.do("ZMPOP", "1", "more:0", "MAX"); !strings.HasPrefix(got, `["more:0" [["member:299" "299"]]]`) {
		t.Fatalf("ZMPOP past the bound: %s", got)
	}
}
