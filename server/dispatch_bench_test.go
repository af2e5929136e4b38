package server

import (
	"net"
	"strconv"
	"testing"

	"github.com/stampedeless/stampedeless/commands"
	"github.com/stampedeless/stampedeless/engine"
	"github.com/stampedeless/stampedeless/internal/slowlog"
)

// benchConn is a connection for benchmarks that dispatch commands without a
// network: replies accumulate in its writer and are dropped.
func benchConn(s *Server) *Conn {
	a, b := net.Pipe()
	b.Close()
	return newConn(s, a)
}

// benchmarkDispatch runs args through dispatch on parallel connections, the
// path every command takes between the reader and the writer: what the
// atomic section (EXEC) may cost the plain GET and SET lives here.
func benchmarkDispatch(b *testing.B, cmd ...string) {
	benchmarkDispatchWith(b, func(*Server) {}, cmd...)
}

// benchmarkDispatchWith is benchmarkDispatch on a server set up by setup.
func benchmarkDispatchWith(b *testing.B, setup func(*Server), cmd ...string) {
	ts := withDefaults(b, Options{})
	s, err := New(ts)
	if err != nil {
		b.Fatal(err)
	}
	setup(s)
	// One command per key, built up front so the loop allocates nothing of
	// its own.
	calls := make([][][]byte, 1024)
	for i := range calls {
		key := []byte("key:" + strconv.Itoa(i))
		ts.Store.Set(key, []byte("value"), engine.SetOptions{})
		calls[i] = [][]byte{[]byte(cmd[0]), key}
		for _, a := range cmd[1:] {
			calls[i] = append(calls[i], []byte(a))
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		c := benchConn(s)
		i := 0
		for pb.Next() {
			s.dispatch(c, calls[i%len(calls)])
			c.w.Truncate(0)
			i++
		}
	})
}

func BenchmarkDispatchGet(b *testing.B) { benchmarkDispatch(b, "GET") }

func BenchmarkDispatchSet(b *testing.B) { benchmarkDispatch(b, "SET", "value") }

// BenchmarkDispatchGetSlowlog is GET with the slow log off
// (slowlog-log-slower-than -1), at its default threshold (10 ms: the
// coarse clock, one atomic load before and after) and at 0 (the monotonic
// clock, read before and after): the default must cost GET no more than
// off does.
func BenchmarkDispatchGetSlowlog(b *testing.B) {
	for _, threshold := range []int64{-1, slowlog.DefaultSlowerThan, 0} {
		b.Run("slower-than="+strconv.FormatInt(threshold, 10), func(b *testing.B) {
			benchmarkDispatchWith(b, func(s *Server) {
				s.slowlog.SetSlowerThan(threshold)
				s.slowlog.SetMaxLen(0) // threshold 0 logs every GET; nothing is kept
			}, "GET")
		})
	}
}

// BenchmarkDispatchGetFill is GETFILL of keys present in the store (a hit,
// which needs no loader), the read-through family's hot path beside GET's.
func BenchmarkDispatchGetFill(b *testing.B) { benchmarkDispatch(b, "GETFILL", "60", "30") }

// TestNotifyAllocatesNothing: keyspace notifications off, or on with no
// subscriber, cost SET and GET's dispatch no allocation.
func TestNotifyAllocatesNothing(t *testing.T) {
	for _, classes := range []commands.EventClass{0, commands.EventAll | commands.EventKeyspace | commands.EventKeyevent} {
		opts := withDefaults(t, Options{NotifyKeyspaceEvents: classes})
		s, err := New(opts)
		if err != nil {
			t.Fatal(err)
		}
		c := benchConn(s)
		for _, cmd := range [][][]byte{
			{[]byte("SET"), []byte("k"), []byte("v")},
			{[]byte("GET"), []byte("k")},
		} {
			s.dispatch(c, cmd) // the first call may grow the writer
			if n := testing.AllocsPerRun(100, func() {
				s.dispatch(c, cmd)
				c.w.Truncate(0)
			}); n != 0 {
				t.Errorf("notify-keyspace-events %q: %s allocates %v times", classes, cmd[0], n)
			}
		}
	}
}
