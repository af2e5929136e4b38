package server

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestClientGoRedisConsumerGroup runs a job queue on a stream as
// applications write one with go-redis in its default settings (RESP3),
// against redis-server and this server on four event loops: a producer
// XADDs jobs while two consumers of one group wait for them with
// XREADGROUP BLOCK and XACK each; a third consumer reads some and dies;
// its pending entries show in XPENDING and a survivor takes them with
// XCLAIM. Every job is acknowledged exactly once.
func TestClientGoRedisConsumerGroup(t *testing.T) {
	for _, target := range []clientTarget{
		{"redis-server", startRedis(t)},
		{"stampedeless", startServer(t, Options{EventLoops: 4}).addr},
	} {
		t.Run(target.name, func(t *testing.T) {
			consumerGroupScenario(t, target.addr)
		})
	}
}

func consumerGroupScenario(t *testing.T, addr string) {
	ctx := context.Background()
	newClient := func() *redis.Client {
		c := redis.NewClient(&redis.Options{Addr: addr})
		t.Cleanup(func() { c.Close() })
		return c
	}
	admin := newClient()
	if err := admin.FlushAll(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if err := admin.XGroupCreateMkStream(ctx, "jobs", "workers", "$").Err(); err != nil {
		t.Fatal(err)
	}
	// The dead consumer takes three jobs and never acknowledges them.
	for i := range 3 {
		admin.XAdd(ctx, &redis.XAddArgs{Stream: "jobs", Values: []any{"job", "early" + strconv.Itoa(i)}})
	}
	dead, err := admin.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "workers", Consumer: "dead", Streams: []string{"jobs", ">"}, Count: 3}).Result()
	if err != nil || len(dead) != 1 || len(dead[0].Messages) != 3 {
		t.Fatalf("dead consumer's read: %v, %v", dead, err)
	}

	const jobs = 200
	var mu sync.Mutex
	acked := map[string]string{} // job -> consumer
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for _, name := range []string{"w1", "w2"} {
		c := newClient()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				res, err := c.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "workers", Consumer: name, Streams: []string{"jobs", ">"}, Count: 10, Block: 50 * time.Millisecond}).Result()
				if err == redis.Nil {
					continue
				}
				if err != nil {
					t.Errorf("%s: XREADGROUP: %v", name, err)
					return
				}
				for _, m := range res[0].Messages {
					job := m.Values["job"].(string)
					if n, err := c.XAck(ctx, "jobs", "workers", m.ID).Result(); err != nil || n != 1 {
						t.Errorf("%s: XACK %s = %d, %v", name, m.ID, n, err)
					}
					mu.Lock()
					if other, ok := acked[job]; ok {
						t.Errorf("job %s delivered to %s and %s", job, other, name)
					}
					acked[job] = name
					mu.Unlock()
				}
			}
		}()
	}
	producer := newClient()
	for i := range jobs {
		if err := producer.XAdd(ctx, &redis.XAddArgs{Stream: "jobs", Values: []any{"job", strconv.Itoa(i)}}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		n := len(acked)
		mu.Unlock()
		if n == jobs || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	close(stop)
	wg.Wait()
	if len(acked) != jobs {
		t.Fatalf("%d of %d jobs acknowledged", len(acked), jobs)
	}
	// Only the dead consumer's entries are pending.
	summary, err := admin.XPending(ctx, "jobs", "workers").Result()
	if err != nil || summary.Count != 3 || summary.Consumers["dead"] != 3 || len(summary.Consumers) != 1 {
		t.Fatalf("XPENDING = %+v, %v; want the dead consumer's 3", summary, err)
	}
	pending, err := admin.XPendingExt(ctx, &redis.XPendingExtArgs{Stream: "jobs", Group: "workers", Start: "-", End: "+", Count: 10, Consumer: "dead"}).Result()
	if err != nil || len(pending) != 3 {
		t.Fatalf("XPENDING extended = %v, %v", pending, err)
	}
	var ids []string
	for _, p := range pending {
		ids = append(ids, p.ID)
		if p.RetryCount != 1 {
			t.Errorf("entry %s delivered %d times, want 1", p.ID, p.RetryCount)
		}
	}
	time.Sleep(20 * time.Millisecond)
	claimed, err := admin.XClaim(ctx, &redis.XClaimArgs{Stream: "jobs", Group: "workers", Consumer: "w1", MinIdle: 10 * time.Millisecond, Messages: ids}).Result()
	if err != nil || len(claimed) != 3 {
		t.Fatalf("XCLAIM = %v, %v", claimed, err)
	}
	for i, m := range claimed {
		if m.ID != ids[i] || m.Values["job"] != "early"+strconv.Itoa(i) {
			t.Errorf("claimed %d: %v", i, m)
		}
	}
	again, err := admin.XClaim(ctx, &redis.XClaimArgs{Stream: "jobs", Group: "workers", Consumer: "w2", MinIdle: time.Hour, Messages: ids}).Result()
	if err != nil || len(again) != 0 {
		t.Errorf("XCLAIM of entries idle less than min-idle: %v, %v", again, err)
	}
	consumers, err := admin.XInfoConsumers(ctx, "jobs", "workers").Result()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range consumers {
		names = append(names, fmt.Sprintf("%s:%d", c.Name, c.Pending))
	}
	if want := []string{"dead:0", "w1:3", "w2:0"}; !slices.Equal(names, want) {
		t.Errorf("consumers %v, want %v", names, want)
	}
	if n, err := admin.XAck(ctx, "jobs", "workers", ids...).Result(); err != nil || n != 3 {
		t.Errorf("XACK of the claimed = %d, %v", n, err)
	}
	groups, err := admin.XInfoGroups(ctx, "jobs").Result()
	if err != nil || len(groups) != 1 || groups[0].Pending != 0 || groups[0].EntriesRead != jobs+3 || groups[0].Lag != 0 {
		t.Errorf("XINFO GROUPS = %+v, %v", groups, err)
	}
}
