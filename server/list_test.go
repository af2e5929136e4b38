package server

import (
	"strconv"
	"testing"

	"github.com/stampedeless/stampedeless/commands"
)

// TestListsBoundedByMaxMemory fills a small store with lists through the
// server: the bound holds and eviction removes whole lists; with
// noeviction, growing a list (or SORT, which Redis refuses too) is refused
// with Redis's OOM error while popping, trimming, LREM and SORT_RO are not.
func TestListsBoundedByMaxMemory(t *testing.T) {
	elems := make([]string, 300)
	for i := range elems {
		elems[i] = "element:" + strconv.Itoa(i)
	}
	// About 300 * 14 bytes a list: 1.7 MB in all.
	r := fillPastBound(t, ":300", func(key string) []string { return append([]string{"LPUSH", key}, elems...) })
	for _, cmd := range [][]string{{"RPUSH", "more:0", "x"}, {"LINSERT", "more:0", "BEFORE", "element:1", "x"},
		{"LSET", "more:0", "0", "x"}, {"LMOVE", "more:0", "dst", "LEFT", "LEFT"},
		{"SORT", "more:0", "ALPHA", "STORE", "dst"}, {"SORT", "more:0", "ALPHA", "LIMIT", "0", "1"}} {
		if got := r.do(cmd...); got != "-"+commands.ErrOOM {
			t.Fatalf("%s past the bound: %s", cmd[0], got)
		}
	}
	// SORT is denyoom even without STORE, as in Redis; SORT_RO is not.
	if got := r.do("SORT_RO", "more:0", "ALPHA", "LIMIT", "0", "1"); got != `["element:0"]` {
		t.Fatalf("SORT_RO past the bound: %s", got)
	}
	if got := r.do("LREM", "more:0", "1", "element:1"); got != ":1" {
		t.Fatalf("LREM past the bound: %s", got)
	}
	if got := r.do("LPOP", "more:0", "2"); got != `["element:299" "element:298"]` {
		t.Fatalf("LPOP past the bound: %s", got)
	}
	if got := r.do("LTRIM", "more:0", "0", "9"); got != "+OK" {
		t.Fatalf("LTRIM past the bound: %s", got)
	}
}
