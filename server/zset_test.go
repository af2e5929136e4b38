package server

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stampedeless/stampedeless/commands"
)

// TestZSetsBoundedByMaxMemory fills a small store with sorted sets, small
// and on the heap, through the server: the bound holds and eviction
// removes whole sets; with noeviction, growing a sorted set is refused with
// Redis's OOM error while shrinking one is not.
func TestZSetsBoundedByMaxMemory(t *testing.T) {
	pairs := make([]string, 0, 600)
	for i := range 300 {
		pairs = append(pairs, strconv.Itoa(i), "member:"+strconv.Itoa(i))
	}
	r := fillPastBound(t, ":300", func(key string) []string { return append([]string{"ZADD", key}, pairs...) })
	for _, cmd := range [][]string{
		{"ZADD", "more:0", "1", "new"}, {"ZINCRBY", "more:0", "1", "member:1"},
		{"ZUNIONSTORE", "dst", "1", "more:0"}, {"ZRANGESTORE", "dst", "more:0", "0", "1"},
	} {
		if got := r.do(cmd...); got != "-"+commands.ErrOOM {
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
