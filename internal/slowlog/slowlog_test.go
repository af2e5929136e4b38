package slowlog

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// TestWants: the threshold, and negative for off.
func TestWants(t *testing.T) {
	var l Log
	l.Init()
	for _, tc := range []struct {
		threshold, micros int64
		want              bool
	}{
		{DefaultSlowerThan, DefaultSlowerThan - 1, false},
		{DefaultSlowerThan, DefaultSlowerThan, true},
		{0, 0, true},
		{-1, 1 << 40, false},
	} {
		l.SetSlowerThan(tc.threshold)
		if got := l.Wants(tc.micros); got != tc.want {
			t.Errorf("slower-than %d, %d µs: %v, want %v", tc.threshold, tc.micros, got, tc.want)
		}
	}
}

// TestAddCuts: an entry keeps 32 arguments, the last saying how many more,
// and 128 bytes of each, as Redis's slowlogCreateEntry.
func TestAddCuts(t *testing.T) {
	var l Log
	l.Init()
	long := bytes.Repeat([]byte("x"), 130)
	args := [][]byte{[]byte("SET"), long}
	for range 40 {
		args = append(args, []byte("a"))
	}
	now := time.Unix(1700000000, 0)
	l.Add(args, 12, "127.0.0.1:1", "me", now)
	l.Add([][]byte{[]byte("GET"), long}, 3, "", "", now)
	es := l.Newest(10)
	if len(es) != 2 || es[0].ID != 1 || es[1].ID != 0 {
		t.Fatalf("Newest = %+v, want ids 1 then 0", es)
	}
	e := es[1]
	if len(e.Args) != 32 || string(e.Args[31]) != "... (11 more arguments)" {
		t.Errorf("%d args, last %q; want 32, ... (11 more arguments)", len(e.Args), e.Args[len(e.Args)-1])
	}
	if want := strings.Repeat("x", 128) + "... (2 more bytes)"; string(e.Args[1]) != want {
		t.Errorf("long argument kept as %q", e.Args[1])
	}
	if e.Unix != now.Unix() || e.Micros != 12 || e.Peer != "127.0.0.1:1" || e.Name != "me" {
		t.Errorf("entry %+v", e)
	}
	args[0][0] = 'Z'
	if string(e.Args[0]) != "SET" {
		t.Error("entry aliases the command's arguments")
	}
}

// TestMaxLen: the oldest entries go past slowlog-max-len, lowering it
// trims, and ids go on after RESET.
func TestMaxLen(t *testing.T) {
	var l Log
	l.Init()
	l.SetMaxLen(3)
	for range 5 {
		l.Add([][]byte{[]byte("PING")}, 1, "", "", time.Unix(0, 0))
	}
	if es := l.Newest(100); len(es) != 3 || es[0].ID != 4 || es[2].ID != 2 {
		t.Fatalf("kept %+v, want ids 4, 3, 2", es)
	}
	l.SetMaxLen(1)
	if n := l.Len(); n != 1 {
		t.Errorf("Len after max 1 = %d", n)
	}
	l.Reset()
	l.Add([][]byte{[]byte("PING")}, 1, "", "", time.Unix(0, 0))
	if es := l.Newest(10); l.Len() != 1 || es[0].ID != 5 {
		t.Errorf("after RESET: %+v, want one entry of id 5", es)
	}
}
