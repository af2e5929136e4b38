package main

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stampedeless/stampedeless/bench/internal/child"
)

// TestWaitHookCountsOverdueCommands: a client whose server never answers
// gives up at its read timeout, and the hook keeps that command as
// overdue; one that the server answers in time is only counted, and one
// cut short by the end of the run is not overdue.
func TestWaitHookCountsOverdueCommands(t *testing.T) {
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	go func() {
		var held []net.Conn // read nothing, answer nothing, until the end
		defer func() {
			for _, c := range held {
				c.Close()
			}
		}()
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			held = append(held, c)
		}
	}()
	var tl tally
	srv := &server{Server: &child.Server{Name: "silent"}}
	rdb := redis.NewClient(&redis.Options{Addr: silent.Addr().String(), ReadTimeout: 50 * time.Millisecond, MaxRetries: -1})
	defer rdb.Close()
	rdb.AddHook(waitHook{t: &tl, srv: srv})
	if err := rdb.Get(context.Background(), "k").Err(); err == nil {
		t.Fatal("a silent server answered")
	}
	gaveUp := len(tl.overdue) // the GET, and the connection's HELLO before it
	if gaveUp == 0 || tl.overdue[gaveUp-1].what != "get" {
		t.Fatalf("overdue: %+v; want the GET the client gave up on", tl.overdue)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rdb.Get(ctx, "k") // cut short by the end of the run: not overdue
	tl.waited(context.Background(), srv, "get", time.Now(), nil)
	if len(tl.overdue) != gaveUp {
		t.Fatalf("overdue: %+v; want only the GET the client gave up on", tl.overdue)
	}
	tl.waited(context.Background(), srv, "set", time.Now().Add(-clientTimeout-time.Second), nil)
	if len(tl.overdue) != gaveUp+1 || tl.commands.Load() < 4 {
		t.Fatalf("overdue: %+v of %d commands; want the SET answered after %v too", tl.overdue, tl.commands.Load(), clientTimeout+time.Second)
	}
}
