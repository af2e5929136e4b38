package server

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stampedeless/stampedeless/internal/testwait"
)

// TestClientGoRedisRecentItems runs a "recent items" list as applications
// keep one, through go-redis in its default settings, against
// stampedeless and redis-server with the same assertions, in both
// protocols: each event is LPUSHed and the list LTRIMmed to its last 10
// in one transaction; readers take LRANGE 0 9 and LINDEX 0.
func TestClientGoRedisRecentItems(t *testing.T) {
	ctx := context.Background()
	for _, target := range clientTargets(t) {
		for _, proto := range []int{2, 3} {
			t.Run(target.name+"/RESP"+strconv.Itoa(proto), func(t *testing.T) {
				c := redis.NewClient(&redis.Options{Addr: target.addr, Protocol: proto})
				t.Cleanup(func() { c.Close() })
				c.FlushAll(ctx)
				const keep = 10
				for i := range 250 {
					_, err := c.TxPipelined(ctx, func(p redis.Pipeliner) error {
						p.LPush(ctx, "recent:user1", "item"+strconv.Itoa(i))
						p.LTrim(ctx, "recent:user1", 0, keep-1)
						p.Expire(ctx, "recent:user1", time.Hour)
						return nil
					})
					if err != nil {
						t.Fatalf("event %d: %v", i, err)
					}
				}
				got, err := c.LRange(ctx, "recent:user1", 0, keep-1).Result()
				var want []string
				for i := 249; i > 249-keep; i-- {
					want = append(want, "item"+strconv.Itoa(i))
				}
				if err != nil || !slices.Equal(got, want) {
					t.Fatalf("LRANGE = %q, %v; want %q", got, err, want)
				}
				if n, err := c.LLen(ctx, "recent:user1").Result(); err != nil || n != keep {
					t.Fatalf("LLEN = %d, %v", n, err)
				}
				if v, err := c.LIndex(ctx, "recent:user1", 0).Result(); err != nil || v != "item249" {
					t.Fatalf("LINDEX 0 = %q, %v", v, err)
				}
				if _, err := c.LIndex(ctx, "recent:none", 0).Result(); !errors.Is(err, redis.Nil) {
					t.Fatalf("LINDEX of a missing list: %v, want redis.Nil", err)
				}
				if ttl, err := c.TTL(ctx, "recent:user1").Result(); err != nil || ttl <= 0 {
					t.Fatalf("TTL = %v, %v", ttl, err)
				}
				if err := c.Set(ctx, "recent:str", "x", 0).Err(); err != nil {
					t.Fatal(err)
				}
				if err := c.LPush(ctx, "recent:str", "y").Err(); err == nil || !strings.HasPrefix(err.Error(), "WRONGTYPE") {
					t.Fatalf("LPUSH on a string: %v", err)
				}
			})
		}
	}
}

// TestClientGoRedisQueueWorker runs a reliable work queue through
// go-redis, against both servers with the same assertions: workers take
// jobs with BLMOVE queue -> processing (blocking while the queue is
// empty), acknowledge each with LREM from processing once done, and one
// worker "crashes" holding a job, which a reaper moves back with LMOVE.
// Every job must be done, and both lists end empty.
func TestClientGoRedisQueueWorker(t *testing.T) {
	ctx := context.Background()
	for _, target := range clientTargets(t) {
		for _, proto := range []int{2, 3} {
			t.Run(target.name+"/RESP"+strconv.Itoa(proto), func(t *testing.T) {
				c := redis.NewClient(&redis.Options{Addr: target.addr, Protocol: proto})
				t.Cleanup(func() { c.Close() })
				c.FlushAll(ctx)
				const workers, jobs = 3, 60
				var mu sync.Mutex
				done := map[string]int{}
				stop := make(chan struct{})
				var wg sync.WaitGroup
				for w := range workers {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for {
							select {
							case <-stop:
								return
							default:
							}
							job, err := c.BLMove(ctx, "queue", "processing", "LEFT", "RIGHT", 200*time.Millisecond).Result()
							if errors.Is(err, redis.Nil) {
								continue
							}
							if err != nil {
								t.Errorf("worker %d: BLMOVE: %v", w, err)
								return
							}
							mu.Lock()
							done[job]++
							mu.Unlock()
							if n, err := c.LRem(ctx, "processing", 1, job).Result(); err != nil || n != 1 {
								t.Errorf("worker %d: ack of %s: %d, %v", w, job, n, err)
							}
						}
					}()
				}
				// The workers block on the empty queue before any job comes.
				testwait.For(t, "workers blocked on the queue", func() bool {
					info, err := c.Info(ctx, "clients").Result()
					return err == nil && strings.Contains(info, "blocked_clients:"+strconv.Itoa(workers)+"\r\n")
				})
				// A worker that crashes holding a job: taken, never acknowledged.
				if err := c.RPush(ctx, "queue", "job-crashed").Err(); err != nil {
					t.Fatal(err)
				}
				testwait.For(t, "the crashed job taken", func() bool {
					mu.Lock()
					defer mu.Unlock()
					return done["job-crashed"] == 1
				})
				if err := c.RPush(ctx, "processing", "job-crashed").Err(); err != nil { // it is back in processing, unacknowledged
					t.Fatal(err)
				}
				for i := range jobs {
					if err := c.RPush(ctx, "queue", "job"+strconv.Itoa(i)).Err(); err != nil {
						t.Fatal(err)
					}
				}
				// The reaper returns the unacknowledged job to the queue.
				if v, err := c.LMove(ctx, "processing", "queue", "LEFT", "RIGHT").Result(); err != nil || v != "job-crashed" {
					t.Fatalf("reaper LMOVE = %q, %v", v, err)
				}
				testwait.For(t, "every job done", func() bool {
					mu.Lock()
					defer mu.Unlock()
					return len(done) == jobs+1 && done["job-crashed"] == 2
				})
				close(stop)
				wg.Wait()
				for i := range jobs {
					if n := done["job"+strconv.Itoa(i)]; n != 1 {
						t.Errorf("job%d done %d times", i, n)
					}
				}
				for _, k := range []string{"queue", "processing"} {
					if n, err := c.LLen(ctx, k).Result(); err != nil || n != 0 {
						t.Errorf("LLEN %s = %d, %v", k, n, err)
					}
				}
			})
		}
	}
}
