package server

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stampedeless/stampedeless/internal/testwait"
)

// TestClientGoRedisKeyspaceEvents: a local cache that drops entries when
// the server changes or expires them, as applications write one with
// go-redis in its default settings (RESP3): it turns keyspace events on
// with CONFIG SET, listens with PSUBSCRIBE on __keyevent@0__:*, and reads
// the events of another client's writes and of a key that expires, the
// same on both servers.
func TestClientGoRedisKeyspaceEvents(t *testing.T) {
	for _, target := range clientTargets(t) {
		t.Run(target.name, func(t *testing.T) {
			ctx := context.Background()
			c := redis.NewClient(&redis.Options{Addr: target.addr})
			t.Cleanup(func() { c.Close() })
			if err := c.ConfigSet(ctx, "notify-keyspace-events", "KEA").Err(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.ConfigSet(ctx, "notify-keyspace-events", "") })
			if got, err := c.ConfigGet(ctx, "notify-keyspace-events").Result(); err != nil || got["notify-keyspace-events"] != "AKE" {
				t.Fatalf("CONFIG GET notify-keyspace-events = %v, %v; want AKE", got, err)
			}

			sub := c.PSubscribe(ctx, "__keyevent@0__:*")
			t.Cleanup(func() { sub.Close() })
			if _, err := sub.Receive(ctx); err != nil { // the subscription's confirmation
				t.Fatal(err)
			}
			events := sub.Channel()

			c.Set(ctx, "user:1", "alice", 0)
			c.Expire(ctx, "user:1", time.Minute)
			c.HSet(ctx, "profile:1", "name", "alice")
			c.Del(ctx, "user:1")
			c.LPush(ctx, "recent", "a")
			c.Set(ctx, "session:1", "s", time.Millisecond)
			// A read of the expired key removes it, and sends "expired".
			testwait.For(t, "session:1 to expire", func() bool {
				return errors.Is(c.Get(ctx, "session:1").Err(), redis.Nil)
			})
			c.Set(ctx, "done", "1", 0)

			var got []string
			timeout := time.After(10 * time.Second)
			for !slices.Contains(got, "set done") {
				select {
				case m := <-events:
					got = append(got, m.Channel[len("__keyevent@0__:"):]+" "+m.Payload)
				case <-timeout:
					t.Fatalf("events so far %q; no event of the last SET", got)
				}
			}
			want := []string{"set user:1", "expire user:1", "hset profile:1", "del user:1", "lpush recent",
				"set session:1", "expire session:1", "expired session:1", "set done"}
			if !slices.Equal(got, want) {
				t.Errorf("events %q, want %q", got, want)
			}
		})
	}
}

// TestClientGoRedisNewAndMissEvents: a cache-warming job, as one is
// written with go-redis, listens for n (new keys) and m (reads of missing
// keys) on __keyevent@0__:*, and reads the same events from both servers:
// a miss, the key's creation, nothing for its overwrite.
func TestClientGoRedisNewAndMissEvents(t *testing.T) {
	for _, target := range clientTargets(t) {
		t.Run(target.name, func(t *testing.T) {
			ctx := context.Background()
			c := redis.NewClient(&redis.Options{Addr: target.addr})
			t.Cleanup(func() { c.Close() })
			if err := c.ConfigSet(ctx, "notify-keyspace-events", "Enm").Err(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.ConfigSet(ctx, "notify-keyspace-events", "") })
			if got, err := c.ConfigGet(ctx, "notify-keyspace-events").Result(); err != nil || got["notify-keyspace-events"] != "nEm" {
				t.Fatalf("CONFIG GET notify-keyspace-events = %v, %v; want nEm", got, err)
			}
			sub := c.PSubscribe(ctx, "__keyevent@0__:*")
			t.Cleanup(func() { sub.Close() })
			if _, err := sub.Receive(ctx); err != nil {
				t.Fatal(err)
			}
			events := sub.Channel()

			c.Del(ctx, "page:1", "done")
			c.Get(ctx, "page:1")
			c.Set(ctx, "page:1", "html", 0)
			c.Set(ctx, "page:1", "html2", 0)
			c.Get(ctx, "page:1")
			c.HGet(ctx, "meta:1", "etag")
			c.Set(ctx, "done", "1", 0)

			var got []string
			timeout := time.After(10 * time.Second)
			for !slices.Contains(got, "new done") {
				select {
				case m := <-events:
					got = append(got, m.Channel[len("__keyevent@0__:"):]+" "+m.Payload)
				case <-timeout:
					t.Fatalf("events so far %q; no event of the last SET", got)
				}
			}
			want := []string{"keymiss page:1", "new page:1", "keymiss meta:1", "new done"}
			if !slices.Equal(got, want) {
				t.Errorf("events %q, want %q", got, want)
			}
		})
	}
}
