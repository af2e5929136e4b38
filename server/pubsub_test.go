package server

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stampedeless/stampedeless/internal/testwait"
)

// pubsubTarget is a server the pub/sub tests run against: a real
// redis-server, then ours, with the same assertions.
type pubsubTarget struct {
	name string
	addr string
	ours *testServer // nil for redis-server
}

func pubsubTargets(t *testing.T, opts Options) []pubsubTarget {
	return []pubsubTarget{
		{name: "redis-server", addr: startRedis(t)},
		{name: "stampedeless", ours: startServer(t, opts)},
	}
}

func (pt pubsubTarget) run(t *testing.T, fn func(t *testing.T, pt pubsubTarget)) {
	t.Run(pt.name, func(t *testing.T) {
		if pt.ours != nil {
			pt.addr = pt.ours.addr
		}
		fn(t, pt)
	})
}

// client is a go-redis client in its default configuration.
func (pt pubsubTarget) client(t *testing.T) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: pt.addr})
	t.Cleanup(func() { c.Close() })
	return c
}

// infoField reads one field of INFO from rdb.
func infoField(t *testing.T, rdb *redis.Client, section, field string) string {
	t.Helper()
	s, err := rdb.Info(context.Background(), section).Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(s, "\r\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			return v
		}
	}
	t.Fatalf("INFO %s has no %s", section, field)
	return ""
}

// TestPubSubGoRedis drives SUBSCRIBE, PSUBSCRIBE, PUBLISH and PUBSUB with
// go-redis's PubSub in its default configuration (RESP3 if the server
// speaks it, RESP2 otherwise).
func TestPubSubGoRedis(t *testing.T) {
	ctx := context.Background()
	for _, pt := range pubsubTargets(t, Options{}) {
		pt.run(t, func(t *testing.T, pt pubsubTarget) {
			rdb := pt.client(t)
			sub := rdb.Subscribe(ctx, "news", "sports")
			defer sub.Close()
			for i, ch := range []string{"news", "sports"} {
				v, err := sub.Receive(ctx)
				if s, ok := v.(*redis.Subscription); err != nil || !ok || s.Kind != "subscribe" || s.Channel != ch || s.Count != i+1 {
					t.Fatalf("confirmation %d: %#v %v", i, v, err)
				}
			}
			psub := rdb.PSubscribe(ctx, "n*")
			defer psub.Close()
			if v, err := psub.Receive(ctx); err != nil || v.(*redis.Subscription).Count != 1 {
				t.Fatalf("psubscribe: %#v %v", v, err)
			}
			if n, err := rdb.Publish(ctx, "news", "hello").Result(); err != nil || n != 2 {
				t.Fatalf("PUBLISH news = %d, %v; want 2", n, err)
			}
			if m, err := sub.ReceiveMessage(ctx); err != nil || m.Channel != "news" || m.Payload != "hello" || m.Pattern != "" {
				t.Fatalf("message: %#v %v", m, err)
			}
			if m, err := psub.ReceiveMessage(ctx); err != nil || m.Channel != "news" || m.Payload != "hello" || m.Pattern != "n*" {
				t.Fatalf("pmessage: %#v %v", m, err)
			}
			numsub, err := rdb.PubSubNumSub(ctx, "news", "sports", "none").Result()
			if want := map[string]int64{"news": 1, "sports": 1, "none": 0}; err != nil || fmt.Sprint(numsub) != fmt.Sprint(want) {
				t.Fatalf("PUBSUB NUMSUB = %v, %v", numsub, err)
			}
			channels, err := rdb.PubSubChannels(ctx, "*").Result()
			if slices.Sort(channels); err != nil || !slices.Equal(channels, []string{"news", "sports"}) {
				t.Fatalf("PUBSUB CHANNELS = %v, %v", channels, err)
			}
			if n, err := rdb.PubSubNumPat(ctx).Result(); err != nil || n != 1 {
				t.Fatalf("PUBSUB NUMPAT = %d, %v", n, err)
			}
			// CLIENT LIST shows the subscriptions and the P flag.
			list, err := rdb.ClientList(ctx).Result()
			if err != nil || !regexp.MustCompile(`flags=P .*sub=2 psub=0 ssub=0`).MatchString(list) ||
				!regexp.MustCompile(`flags=P .*sub=0 psub=1 ssub=0`).MatchString(list) {
				t.Fatalf("CLIENT LIST:\n%s %v", list, err)
			}
			pubsubList, err := rdb.Do(ctx, "CLIENT", "LIST", "TYPE", "pubsub").Text()
			if err != nil || strings.Count(pubsubList, "\n") != 2 {
				t.Fatalf("CLIENT LIST TYPE pubsub:\n%s %v", pubsubList, err)
			}

			// Many messages arrive, in order.
			publishInOrder(t, rdb, sub, "sports", 2000)
			// PING in subscriber mode.
			if err := sub.Ping(ctx); err != nil {
				t.Fatal(err)
			}
			if v, err := sub.Receive(ctx); err != nil {
				t.Fatalf("PING: %v", err)
			} else if _, ok := v.(*redis.Pong); !ok {
				t.Fatalf("PING: %#v", v)
			}
			if err := sub.Unsubscribe(ctx, "news"); err != nil {
				t.Fatal(err)
			}
			if v, err := sub.Receive(ctx); err != nil || v.(*redis.Subscription).Kind != "unsubscribe" || v.(*redis.Subscription).Count != 1 {
				t.Fatalf("unsubscribe: %#v %v", v, err)
			}
			if n, err := rdb.Publish(ctx, "news", "late").Result(); err != nil || n != 1 {
				t.Fatalf("PUBLISH news after UNSUBSCRIBE = %d, %v; want 1 (the pattern)", n, err)
			}
			sub.Close()
			psub.Close()
			testwait.For(t, "subscriptions gone after the subscribers closed", func() bool {
				ch, _ := rdb.PubSubChannels(ctx, "*").Result()
				pat, _ := rdb.PubSubNumPat(ctx).Result()
				return len(ch) == 0 && pat == 0
			})
		})
	}
}

// publishInOrder publishes the numbers 0 to n-1 on channel, then checks
// that sub, subscribed to it, receives them in order.
func publishInOrder(t *testing.T, rdb *redis.Client, sub *redis.PubSub, channel string, n int) {
	t.Helper()
	ctx := context.Background()
	for i := range n {
		if err := rdb.Publish(ctx, channel, strconv.Itoa(i)).Err(); err != nil {
			t.Fatal(err)
		}
	}
	for i := range n {
		m, err := sub.ReceiveMessage(ctx)
		if err != nil || m.Payload != strconv.Itoa(i) {
			t.Fatalf("message %d: %#v %v", i, m, err)
		}
	}
}

// rawSubscriber is a raw RESP2 subscriber, which reads nothing after the
// confirmations unless the test reads its connection.
func rawSubscriber(t *testing.T, addr string, channels ...string) net.Conn {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	c := &compatConn{nc: nc, br: bufio.NewReader(nc)}
	if err := c.send(encodeCommand(append([]string{"SUBSCRIBE"}, channels...)...)); err != nil {
		t.Fatal(err)
	}
	for range channels {
		if r, err := c.read(); err != nil || r.kind != '*' {
			t.Fatalf("SUBSCRIBE: %v %v", r, err)
		}
	}
	nc.SetDeadline(time.Time{})
	return nc
}

// TestPubSubSlowSubscriber: a subscriber that never reads while a
// publisher floods is closed at the pubsub output buffer limit; the server
// keeps nothing more for it, and the other clients (a subscriber that
// reads, the publisher) are served throughout.
func TestPubSubSlowSubscriber(t *testing.T) {
	ctx := context.Background()
	const hard, payloadSize = 1 << 20, 64 << 10
	for _, pt := range pubsubTargets(t, Options{}) {
		pt.run(t, func(t *testing.T, pt pubsubTarget) {
			pub := pt.client(t)
			if err := pub.ConfigSet(ctx, "client-output-buffer-limit", "pubsub 1mb 512kb 60").Err(); err != nil {
				t.Fatal(err)
			}
			slow := rawSubscriber(t, pt.addr, "flood")
			fast := pub.Subscribe(ctx, "flood")
			defer fast.Close()
			if _, err := fast.Receive(ctx); err != nil {
				t.Fatal(err)
			}
			var before runtime.MemStats
			if pt.ours != nil {
				runtime.GC()
				runtime.ReadMemStats(&before)
			}
			payload := strings.Repeat("x", payloadSize)
			// 2000 messages are 128 MiB: far past the limit and the
			// socket buffers of the subscriber that does not read.
			published, closed := 0, false
			for published < 2000 && !closed {
				if err := pub.Publish(ctx, "flood", payload).Err(); err != nil {
					t.Fatalf("PUBLISH %d: %v", published, err)
				}
				published++
				// The subscriber that reads gets every message, in time.
				if m, err := fast.ReceiveMessage(ctx); err != nil || len(m.Payload) != payloadSize {
					t.Fatalf("fast subscriber, message %d: %v", published, err)
				}
				if published%8 == 0 {
					n, err := pub.PubSubNumSub(ctx, "flood").Result()
					if err != nil {
						t.Fatal(err)
					}
					closed = n["flood"] == 1
				}
			}
			if !closed {
				t.Fatalf("the subscriber that does not read is still subscribed after %d messages of %d bytes", published, payloadSize)
			}
			t.Logf("closed after %d messages", published)
			// Its connection is closed: reading what the socket holds ends.
			slow.SetReadDeadline(time.Now().Add(10 * time.Second))
			if n, err := io.Copy(io.Discard, slow); isTimeout(err) {
				t.Fatalf("the slow subscriber's connection is still open (read %d bytes)", n)
			}
			if err := pub.Ping(ctx).Err(); err != nil {
				t.Fatal(err)
			}
			recent, err := strconv.ParseInt(infoField(t, pub, "clients", "client_recent_max_output_buffer"), 10, 64)
			if err != nil || recent > hard+2*payloadSize {
				t.Errorf("client_recent_max_output_buffer = %d, %v; want at most the limit and a message", recent, err)
			}
			if pt.ours == nil {
				return
			}
			if got := infoField(t, pub, "stats", "client_output_buffer_limit_disconnections"); got != "1" {
				t.Errorf("client_output_buffer_limit_disconnections = %s, want 1", got)
			}
			// What the server kept for the subscriber is bounded by the
			// limit, not by what was published.
			runtime.GC()
			var after runtime.MemStats
			runtime.ReadMemStats(&after)
			if grown := int64(after.HeapAlloc) - int64(before.HeapAlloc); grown > 32<<20 {
				t.Errorf("heap grew by %d bytes while %d bytes were published", grown, published*payloadSize)
			}
		})
	}
}

// TestPubSubSubscriberLeaves: subscribers that close their connection in
// the middle of a stream of messages, with messages unread, are forgotten,
// and the publisher and another subscriber go on.
func TestPubSubSubscriberLeaves(t *testing.T) {
	ctx := context.Background()
	for _, pt := range pubsubTargets(t, Options{}) {
		pt.run(t, func(t *testing.T, pt pubsubTarget) {
			pub := pt.client(t)
			stay := pub.Subscribe(ctx, "stream")
			defer stay.Close()
			if _, err := stay.Receive(ctx); err != nil {
				t.Fatal(err)
			}
			var leaving []net.Conn
			for range 4 {
				leaving = append(leaving, rawSubscriber(t, pt.addr, "stream", "other"))
			}
			for i := range 400 {
				if i%100 == 50 {
					leaving[0].Close() // with messages unread: a reset
					leaving = leaving[1:]
				}
				if err := pub.Publish(ctx, "stream", strings.Repeat("m", 1000)).Err(); err != nil {
					t.Fatal(err)
				}
				if _, err := stay.ReceiveMessage(ctx); err != nil {
					t.Fatal(err)
				}
			}
			testwait.For(t, "the subscribers that left are forgotten", func() bool {
				n, _ := pub.PubSubNumSub(ctx, "stream", "other").Result()
				return n["stream"] == 1 && n["other"] == 0
			})
			if n, err := pub.Publish(ctx, "stream", "last").Result(); err != nil || n != 1 {
				t.Fatalf("PUBLISH = %d, %v; want 1", n, err)
			}
		})
	}
}

// TestPubSubOwnMessage: a RESP3 subscriber that publishes to its own
// channel gets PUBLISH's reply before the message, as from Redis 7.2
// (7.0 sent the message first).
func TestPubSubOwnMessage(t *testing.T) {
	ts := startServer(t, Options{})
	sc := psScript{conns: 1, resp3: true}
	cs, refused := dialPubSub(t, ts.addr, sc)
	if refused != "" {
		t.Fatalf("stampedeless refused HELLO 3: %s", refused)
	}
	cs.run(ps(0, "SUBSCRIBE a"))
	if got, want := cs.run(psN(0, 2, "PUBLISH a x")), `:1 | >["message" "a" "x"]`; got != want {
		t.Fatalf("PUBLISH to its own channel: %s, want %s", got, want)
	}
}

// TestPubSubShutdownDrains: at shutdown a subscriber gets the messages
// published before, then the end of the connection.
func TestPubSubShutdownDrains(t *testing.T) {
	ts := startServer(t, Options{})
	sub := dialRaw(t, ts.addr)
	if got := sub.do("SUBSCRIBE", "a"); got != `["subscribe" "a" :1]` {
		t.Fatal(got)
	}
	pub := dialRaw(t, ts.addr)
	const n = 500
	for i := range n {
		if got := pub.do("PUBLISH", "a", strconv.Itoa(i)); got != ":1" {
			t.Fatal(got)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := ts.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if got, want := sub.reply(), fmt.Sprintf(`["message" "a" "%d"]`, i); got != want {
			t.Fatalf("message %d: %s", i, got)
		}
	}
	sub.expectClosed()
}

// TestPubSubConcurrent runs publishers, subscribers that come and go, and
// PUBSUB and CLIENT LIST at once (for -race), and checks that a subscriber
// that stays gets one publisher's messages in order.
func TestPubSubConcurrent(t *testing.T) {
	ts := startServer(t, Options{})
	ctx := context.Background()
	rdb := ts.client(t)
	stay := rdb.Subscribe(ctx, "ordered")
	defer stay.Close()
	if _, err := stay.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	const n = 1000
	done := make(chan struct{})
	var wg sync.WaitGroup
	var failure error
	var failOnce sync.Once
	fail := func(err error) { failOnce.Do(func() { failure = err }) }
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := ts.client(t)
			for {
				select {
				case <-done:
					return
				default:
				}
				psub := c.PSubscribe(ctx, fmt.Sprintf("o*%d", w), "x")
				if _, err := psub.Receive(ctx); err != nil {
					fail(err)
				}
				c.Publish(ctx, "x", "noise")
				c.PubSubNumSub(ctx, "ordered", "x")
				c.ClientList(ctx)
				psub.Close()
			}
		}()
	}
	publishInOrder(t, rdb, stay, "ordered", n)
	close(done)
	wg.Wait()
	if failure != nil {
		t.Fatal(failure)
	}
}
