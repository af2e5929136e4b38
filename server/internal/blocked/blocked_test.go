package blocked

import (
	"testing"

	"github.com/stampedeless/stampedeless/engine"
)

func written(db int, key string) engine.Change {
	return engine.Change{Kind: engine.Written, DB: db, Key: []byte(key)}
}

// TestServeInOrder: a ready key serves its clients oldest first until one
// finds nothing to take; a reader that cannot be served does not stop the
// ones after it.
func TestServeInOrder(t *testing.T) {
	for _, tc := range []struct {
		name      string
		items     int  // what the key holds
		reader    bool // the first client only reads, and cannot be served
		wantOrder []int
	}{
		{"one item, two waiters", 1, false, []int{0}},
		{"two items", 2, false, []int{0, 1}},
		{"nothing for the first stops the rest", 0, false, nil},
		{"a reader that cannot be served does not", 1, true, []int{1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r Registry
			listening := 0
			r.Init(func(d int) { listening += d })
			items := tc.items
			var served []int
			var clients []*Client
			for i := range 2 {
				serve := func([]byte) bool {
					if items == 0 || i == 0 && tc.reader {
						return false
					}
					items--
					served = append(served, i)
					return true
				}
				b := r.Block(int64(i+1), 0, [][]byte{[]byte("k"), []byte("k")}, serve)
				b.Reader = i == 0 && tc.reader
				clients = append(clients, b)
			}
			if listening != 1 || r.Clients() != 2 || !r.IsBlocked(1) {
				t.Fatalf("listening %d, clients %d", listening, r.Clients())
			}
			r.KeyWritten(written(1, "k")) // another database's key
			if r.HaveReady() {
				t.Fatal("ready after a write of another database")
			}
			r.KeyWritten(written(0, "k"))
			if !r.HaveReady() {
				t.Fatal("not ready after a write")
			}
			r.ServeReady()
			if r.HaveReady() || len(served) != len(tc.wantOrder) {
				t.Fatalf("served %v, want %v", served, tc.wantOrder)
			}
			for i := range served {
				if served[i] != tc.wantOrder[i] {
					t.Fatalf("served %v, want %v", served, tc.wantOrder)
				}
				if s := clients[served[i]].State(); s != Served {
					t.Errorf("client %d state %d, want Served", served[i], s)
				}
			}
			for _, b := range clients {
				b.Finish(Disconnect)
				r.Unregister(b)
				r.Unregister(b)
			}
			if listening != 0 || r.Clients() != 0 || r.IsBlocked(1) {
				t.Errorf("after all left: listening %d, clients %d", listening, r.Clients())
			}
		})
	}
}

// TestUnblock: CLIENT UNBLOCK ends a wait once, as a timeout or an error;
// a served client is not unblocked.
func TestUnblock(t *testing.T) {
	var r Registry
	r.Init(func(int) {})
	a := r.Block(1, 0, [][]byte{[]byte("a")}, func([]byte) bool { return true })
	b := r.Block(2, 0, [][]byte{[]byte("b")}, func([]byte) bool { return true })
	if !r.Unblock(1, true) || r.Unblock(1, false) || a.State() != Unblocked {
		t.Errorf("unblock with error: state %d", a.State())
	}
	select {
	case <-a.Done():
	default:
		t.Error("Done not closed")
	}
	if !b.TryServe([]byte("b")) || r.Unblock(2, false) || b.State() != Served {
		t.Errorf("served then unblocked: state %d", b.State())
	}
	if r.Unblock(3, false) {
		t.Error("unblocked a client that is not blocked")
	}
}

// TestKeyWritten: which changes make a key ready: writes and removals,
// and a flush or SWAPDB of its database.
func TestKeyWritten(t *testing.T) {
	for _, tc := range []struct {
		ch    engine.Change
		ready bool
	}{
		{written(0, "k"), true},
		{engine.Change{Kind: engine.Deleted, Key: []byte("k")}, true},
		{engine.Change{Kind: engine.Expired, Key: []byte("k")}, true},
		{engine.Change{Kind: engine.Invalidated, Key: []byte("k")}, false},
		{engine.Change{Kind: engine.Flushed, DB: 0}, true},
		{engine.Change{Kind: engine.Flushed, DB: 2}, false},
		{engine.Change{Kind: engine.Flushed, DB: engine.AllDatabases}, true},
		{engine.Change{Kind: engine.Swapped, DB: 0, With: 1}, true},
	} {
		var r Registry
		r.Init(func(int) {})
		r.Block(1, 0, [][]byte{[]byte("k")}, func([]byte) bool { return false })
		r.KeyWritten(tc.ch)
		if r.HaveReady() != tc.ready {
			t.Errorf("%+v: ready %v, want %v", tc.ch, r.HaveReady(), tc.ready)
		}
	}
}
