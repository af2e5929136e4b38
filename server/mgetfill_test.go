package server

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/stampedeless/stampedeless/internal/batchorigin"
	"github.com/stampedeless/stampedeless/internal/testwait"
)

// batchServer starts a server with loops event loops and the loader
// "k:" on plain and the batch loader "b:" of batch 100 on o.
func batchServer(t *testing.T, o *batchorigin.Origin, plain *origin, loops int) (*testServer, *redis.Client) {
	ts := startServer(t, Options{EventLoops: loops})
	c := redis.NewClient(&redis.Options{Addr: ts.addr, Protocol: 2, PoolSize: 50})
	t.Cleanup(func() { c.Close() })
	ctx := context.Background()
	if err := c.Do(ctx, "LOADER.REGISTER", "k:", plain.URL+"/{key}").Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.Do(ctx, "LOADER.REGISTER", "b:", o.URL+"/batch", "BATCH", "100").Err(); err != nil {
		t.Fatal(err)
	}
	return ts, c
}

// TestMGetFillThousandKeys: 1,000 missing keys of a batch loader of 100
// take at most 10 origin requests, with one event loop and with two, and
// the reply has each key's binary value in key order.
func TestMGetFillThousandKeys(t *testing.T) {
	for _, loops := range []int{1, 2} {
		t.Run(fmt.Sprintf("loops=%d", loops), func(t *testing.T) {
			o := batchorigin.New(t)
			_, c := batchServer(t, o, newOrigin(t), loops)
			args := []any{"MGETFILL", 60, 10}
			for i := range 1000 {
				args = append(args, fmt.Sprintf("b:%d", i))
			}
			vals, err := c.Do(context.Background(), args...).Slice()
			if err != nil || len(vals) != 1000 {
				t.Fatalf("MGETFILL: %d values, %v", len(vals), err)
			}
			for i, v := range vals {
				s, _ := v.(string)
				if !strings.HasPrefix(s, fmt.Sprintf("b:%d@", i)) || !strings.HasSuffix(s, "\x00\xff") {
					t.Fatalf("value %d = %q", i, v)
				}
			}
			sizes := o.Sizes()
			if len(sizes) > 10 {
				t.Fatalf("%d origin requests (%v), want at most 10", len(sizes), sizes)
			}
			for _, n := range sizes {
				if n > 100 {
					t.Fatalf("a request of %d keys for batch 100", n)
				}
			}
		})
	}
}

// TestMGetFillElements: each key's element is what GETFILL answers for it
// alone: a value, nil for not found, an error element for a failed key,
// a key without a loader, and a key of a plain loader beside batch keys.
func TestMGetFillElements(t *testing.T) {
	o := batchorigin.New(t)
	o.SetStatus("b:gone", http.StatusNotFound)
	o.SetStatus("b:down", http.StatusBadGateway)
	ts, _ := batchServer(t, o, newOrigin(t), 0)
	r := dialRaw(t, ts.addr)
	got := r.do("MGETFILL", "60", "10", "b:ok", "b:gone", "b:down", "k:plain", "none:x")
	want := `["b:ok@1\x00\xff" (nil) -LOADERR b: status 502 "k:plain@v0" -NOLOADER no loader registered for key 'none:x']`
	if got != want {
		t.Fatalf("MGETFILL = %s\nwant       %s", got, want)
	}
	if sizes := o.Sizes(); !slices.Equal(sizes, []int{3}) {
		t.Fatalf("request sizes %v, want one request of the 3 batch keys", sizes)
	}
	// Answered from the store and the cooldown now, on the spot.
	if got := r.do("MGETFILL", "60", "10", "TIMEOUT", "0", "b:down", "b:ok"); !regexp.MustCompile(`^\[-LOADERR b: cooling down for [0-9.]+m?s after: status 502 "b:ok@1\\x00\\xff"\]$`).MatchString(got) {
		t.Fatalf("second MGETFILL = %s", got)
	}
	for _, tc := range []struct{ args, want string }{
		{"MGETFILL 60", "-ERR wrong number of arguments for 'mgetfill' command"},
		{"MGETFILL 0 10 k:a", "-ERR ttl must be a positive integer number of seconds"},
		{"MGETFILL 60 -1 k:a", "-ERR grace must be 0 or a positive integer number of seconds"},
		{"MGETFILL 8000000000 30 k:a", "-ERR invalid expire time in 'mgetfill' command"},
		{"MGETFILL 60 10 TIMEOUT -1 k:a", "-ERR invalid TIMEOUT in 'mgetfill' command"},
		// TIMEOUT with no key after its value is two keys.
		{"MGETFILL 60 10 TIMEOUT 5", "[-NOLOADER no loader registered for key 'TIMEOUT' -NOLOADER no loader registered for key '5']"},
	} {
		if got := r.do(strings.Fields(tc.args)...); got != tc.want {
			t.Errorf("%s = %s, want %s", tc.args, got, tc.want)
		}
	}
}

// TestMGetFillCoalescesWithGetFill: a key an MGETFILL asks for while a
// GETFILL loads it joins that load; the other keys go in the batch.
func TestMGetFillCoalescesWithGetFill(t *testing.T) {
	o := batchorigin.New(t)
	o.Gate = make(chan struct{})
	ts, c := batchServer(t, o, newOrigin(t), 0)
	ctx := context.Background()
	one := make(chan string, 1)
	go func() { one <- c.Do(ctx, "GETFILL", "b:hot", 60, 10).Val().(string) }()
	testwait.For(t, "the GETFILL's request", func() bool { return o.Calls.Load() == 1 })
	many := make(chan []any, 1)
	go func() { many <- c.Do(ctx, "MGETFILL", 60, 10, "b:hot", "b:cold").Val().([]any) }()
	testwait.For(t, "the MGETFILL's request and its wait on b:hot", func() bool {
		return o.Calls.Load() == 2 && ts.fill.Filler.Waiters("b:hot") == 2
	})
	o.Gate <- struct{}{}
	o.Gate <- struct{}{}
	hot, vals := <-one, <-many
	if vals[0] != hot {
		t.Fatalf("GETFILL got %q, MGETFILL %q: two loads", hot, vals[0])
	}
	if sizes := o.Sizes(); !slices.Equal(sizes, []int{1, 1}) {
		t.Fatalf("request sizes %v, want b:hot alone, then b:cold alone", sizes)
	}
}

// TestPurgeTagWire: PURGE.TAG deletes the keys carrying a tag; SOFT keeps
// them, stale, until one refresh each; FILL.INFO lists a key's tags; INFO
// counts the purges.
func TestPurgeTagWire(t *testing.T) {
	o := batchorigin.New(t)
	o.SetTags("b:1", "user", "user:1")
	o.SetTags("b:2", "user")
	ts, _ := batchServer(t, o, newOrigin(t), 0)
	r := dialRaw(t, ts.addr)
	r.do("MGETFILL", "60", "10", "b:1", "b:2", "b:3")
	if got := r.do("FILL.INFO", "b:1"); !strings.HasSuffix(got, `"tags" ["user" "user:1"]]`) {
		t.Fatalf("FILL.INFO = %s", got)
	}
	if got := r.do("PURGE.TAG", "SOFT", "user:1"); got != ":1" {
		t.Fatalf("PURGE.TAG SOFT user:1 = %s", got)
	}
	if got := r.do("FILL.INFO", "b:1"); !strings.HasPrefix(got, `["state" "stale"`) {
		t.Fatalf("FILL.INFO after a soft purge = %s", got)
	}
	// Served stale while its one refresh runs, which brings the new value.
	if got := r.do("GETFILL", "b:1", "60", "10"); got != `"b:1@1\x00\xff"` {
		t.Fatalf("GETFILL after the soft purge = %s, want the stale value", got)
	}
	testwait.For(t, "the refresh", func() bool { return r.do("GETFILL", "b:1", "60", "10") == `"b:1@2\x00\xff"` })
	if got := r.do("PURGE.TAG", "user", "nothing"); got != ":2" {
		t.Fatalf("PURGE.TAG user nothing = %s", got)
	}
	if got := r.do("EXISTS", "b:1", "b:2", "b:3"); got != ":1" {
		t.Fatalf("EXISTS after the purge = %s, want only b:3", got)
	}
	if got := r.do("PURGE.TAG", "SOFT"); got != ":0" {
		t.Fatalf("PURGE.TAG SOFT (the tag SOFT) = %s", got)
	}
	info := r.do("INFO", "stampede")
	for _, f := range []string{"tag_purges_soft:1", "tag_purged_keys_soft:1", "tag_purges_hard:2", "tag_purged_keys_hard:2", "batch=100"} {
		if !strings.Contains(info, f) {
			t.Errorf("INFO stampede lacks %s: %s", f, info)
		}
	}
}
