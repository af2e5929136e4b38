package server

import (
	"strconv"
	"strings"
	"testing"
)

// Lease commands inside MULTI/EXEC: nothing in EXEC may wait, and EXEC's
// reply is one array with one reply per queued command, then the next
// command's reply.
func TestFillLeaseInsideExec(t *testing.T) {
	ts := startServer(t, Options{})
	holder := dialRaw(t, ts.addr)
	reply := holder.do("FILL.LEASE", "m:1", "60", "10")
	parts := strings.Fields(strings.Trim(reply, "[]"))
	if len(parts) != 2 || parts[0] != "(nil)" {
		t.Fatalf("holder's FILL.LEASE: %s", reply)
	}
	token, _ := strconv.Unquote(parts[1])

	tx := dialRaw(t, ts.addr)
	for _, cmd := range [][]string{{"MULTI"}, {"FILL.LEASE", "m:1", "60", "10"}, {"MGETFILL", "60", "10", "m:2"}, {"FILL.SET", "m:3", "nosuchtoken", "v"}} {
		tx.send(encodeCommand(cmd...))
	}
	tx.send(encodeCommand("EXEC") + encodeCommand("PING"))
	for i, want := range []string{"+OK", "+QUEUED", "+QUEUED", "+QUEUED"} {
		if got := tx.reply(); got != want {
			t.Fatalf("reply %d: %s, want %s", i, got, want)
		}
	}
	exec := tx.reply()
	if !strings.HasPrefix(exec, "[-TIMEOUT") || !strings.Contains(exec, "-LEASELOST") {
		t.Fatalf("EXEC: %s, want [-TIMEOUT... (a lease held elsewhere, no wait) ... -LEASELOST...]", exec)
	}
	if got := tx.reply(); got != "+PONG" {
		t.Fatalf("after EXEC: %s, want +PONG", got)
	}

	// The holder's FILL.SET inside EXEC stores the value.
	holder.send(encodeCommand("MULTI") + encodeCommand("FILL.SET", "m:1", token, "filled") + encodeCommand("GET", "m:1") + encodeCommand("EXEC"))
	for range 3 {
		holder.reply()
	}
	if got := holder.reply(); got != `[+OK "filled"]` {
		t.Fatalf("EXEC of FILL.SET, GET: %s", got)
	}
}
