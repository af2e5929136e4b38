package server

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stampedeless/stampedeless/rdb"
)

// DUMP's bytes, LZF-compressed strings included, and RESTORE's errors,
// in Redis's order of checks, as redis-server answers.
func TestCompatDumpRestore(t *testing.T) {
	ts := startServer(t, Options{})
	redisAddr := startRedis(t)
	emptyHash := string(rdb.Dump(&rdb.Entry{Kind: rdb.KindHash}))
	emptySet := string(rdb.Dump(&rdb.Entry{Kind: rdb.KindSet}))
	good := string(rdb.Dump(&rdb.Entry{Kind: rdb.KindString, Value: []byte("v")}))
	later := string(rdb.Dump(&rdb.Entry{Kind: rdb.KindString, Value: []byte("v")})[:2]) + "\x0b\x00" + strings.Repeat("\x00", 8)
	forEachProtocol(t, func(t *testing.T, proto int) {
		runCompatScript(t, redisAddr, ts.addr, proto, compatScript{name: "dump-restore", steps: []compatStep{
			cs("SET s v"), cs("DUMP s"), cs("SET n 12345"), cs("DUMP n"), cs("SET big 12345678901"), cs("DUMP big"),
			cs("HSET h f v n 7"), cs("DUMP h"), cs("SADD i 1 2 -70000"), cs("DUMP i"), cs("SADD t a"), cs("DUMP t"),
			cs("ZADD z 1.5 a 2 b"), cs("DUMP z"), cs("DUMP nokey"),
			cs("SET c " + strings.Repeat("abcd", 50)), cs("DUMP c"), cs("SET c21 aaaaaaaaaaaaaaaaaaaaa"), cs("DUMP c21"),
			ca("SET", "text", strings.Repeat("the quick brown fox jumps over the lazy dog ", 20)), cs("DUMP text"),
			cs("RPUSH l a 1 -5 70000 " + strings.Repeat("x", 100)), cs("DUMP l"),
			cs("RESTORE s 0 x"), cs("RESTORE new 0 x"), cs("RESTORE new -1 x"), cs("RESTORE new abc x"),
			cs("RESTORE new 0 x IDLETIME -1"), cs("RESTORE new 0 x FREQ 256"), cs("RESTORE new 0 x FREQ x"),
			cs("RESTORE new 0 x IDLETIME 1 FREQ 1"), cs("RESTORE new 0 x BOGUS"), cs("RESTORE new 0 x IDLETIME"),
			ca("RESTORE", "new", "0", emptyHash), ca("RESTORE", "new", "0", emptySet), ca("RESTORE", "new", "0", later),
			ca("RESTORE", "new", "0", good[:len(good)-1]+"\x00"),
			ca("RESTORE", "new", "0", good), cs("GET new"), cs("TTL new"),
			ca("RESTORE", "new", "0", good), ca("RESTORE", "new", "5000", good, "REPLACE"), cs("TTL new"),
			ca("RESTORE", "new", "1", good, "REPLACE", "ABSTTL"), cs("EXISTS new"),
			ca("RESTORE", "new", "0", good, "IDLETIME", "10"), ca("RESTORE", "s", "0", good, "REPLACE", "FREQ", "3"), cs("GET s"),
			ca("RESTORE", "h", "0", good, "REPLACE"), cs("TYPE h"),
		}})
	})
}

// A value DUMPed on redis-server RESTOREs here, and the other way round,
// for every type in every encoding, big values (which Redis compresses)
// and deadlines included.
func TestDumpRestoreAcross(t *testing.T) {
	ts := startServer(t, Options{})
	ours := ts.clientRESP2(t)
	theirs := redis.NewClient(&redis.Options{Addr: startRedis(t)})
	defer theirs.Close()
	ctx := context.Background()
	var many []any
	var scored []redis.Z
	for i := range 600 {
		many = append(many, "m"+strconv.Itoa(i))
		scored = append(scored, redis.Z{Score: float64(i) / 3, Member: "m" + strconv.Itoa(i)})
	}
	fill := func(c *redis.Client) {
		c.Set(ctx, "s", "v", 0)
		c.Set(ctx, "n", "-12", 0)
		c.Set(ctx, "long", strings.Repeat("abc", 1000), time.Hour)
		c.HSet(ctx, "h", "f", "v", "g", "12")
		c.HSet(ctx, "h:big", many...)
		c.SAdd(ctx, "i", 1, 2, 3)
		c.SAdd(ctx, "s:big", many...)
		c.ZAdd(ctx, "z", redis.Z{Score: 1.5, Member: "a"})
		c.ZAdd(ctx, "z:big", scored...)
		// A stream over several nodes, with a deleted entry, fields
		// that change, a group with pending entries and two consumers.
		for i := range 250 {
			vals := []any{"f", i, "g", "x"}
			if i%7 == 0 {
				vals = []any{"other", strings.Repeat("y", i)}
			}
			c.XAdd(ctx, &redis.XAddArgs{Stream: "x", ID: "1-" + strconv.Itoa(i+1), Values: vals})
		}
		c.XDel(ctx, "x", "1-5")
		c.XGroupCreate(ctx, "x", "g", "0")
		c.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "g", Consumer: "c1", Streams: []string{"x", ">"}, Count: 3})
		c.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "g", Consumer: "c2", Streams: []string{"x", ">"}, Count: 2})
		c.XGroupCreateConsumer(ctx, "x", "g", "idle")
		c.XGroupCreateMkStream(ctx, "x:empty", "g", "$")
	}
	keys := []string{"s", "n", "long", "h", "h:big", "i", "s:big", "z", "z:big", "x", "x:empty"}
	for _, dir := range []struct {
		name     string
		from, to *redis.Client
	}{{"redis to ours", theirs, ours}, {"ours to redis", ours, theirs}} {
		dir.from.FlushAll(ctx)
		dir.to.FlushAll(ctx)
		fill(dir.from)
		for _, k := range keys {
			payload, err := dir.from.Dump(ctx, k).Result()
			if err != nil {
				t.Fatalf("%s: DUMP %s: %v", dir.name, k, err)
			}
			ttl := dir.from.PTTL(ctx, k).Val()
			if ttl < 0 {
				ttl = 0
			}
			if err := dir.to.Restore(ctx, k, ttl, payload).Err(); err != nil {
				t.Fatalf("%s: RESTORE %s: %v", dir.name, k, err)
			}
			if a, b := contents(t, dir.from, k), contents(t, dir.to, k); a != b {
				t.Errorf("%s: %s:\n from %.300s\n   to %.300s", dir.name, k, a, b)
			}
			if ttl > 0 && dir.to.PTTL(ctx, k).Val() <= 0 {
				t.Errorf("%s: %s lost its deadline", dir.name, k)
			}
		}
	}
}

// contents is key's type and value, members sorted where their order is
// the server's own.
func contents(t *testing.T, c *redis.Client, k string) string {
	t.Helper()
	ctx := context.Background()
	typ := c.Type(ctx, k).Val()
	var parts []string
	switch typ {
	case "string":
		parts = []string{c.Get(ctx, k).Val()}
	case "hash":
		for f, v := range c.HGetAll(ctx, k).Val() {
			parts = append(parts, f+"="+v)
		}
		slices.Sort(parts)
	case "set":
		parts = c.SMembers(ctx, k).Val()
		slices.Sort(parts)
	case "zset":
		for _, z := range c.ZRangeWithScores(ctx, k, 0, -1).Val() {
			parts = append(parts, z.Member.(string)+"@"+strconv.FormatFloat(z.Score, 'g', -1, 64))
		}
	case "stream":
		parts = append(parts, fmt.Sprint(c.XRange(ctx, k, "-", "+").Val()), fmt.Sprint(c.XInfoGroups(ctx, k).Val()))
		info := c.XInfoStream(ctx, k).Val()
		info.RadixTreeNodes = 0 // Redis's radix tree's, which this server has no tree to count
		parts = append(parts, fmt.Sprintf("%+v", info))
		pending := c.XPendingExt(ctx, &redis.XPendingExtArgs{Stream: k, Group: "g", Start: "-", End: "+", Count: 100}).Val()
		for _, p := range pending {
			parts = append(parts, fmt.Sprintf("%s/%s/%d", p.ID, p.Consumer, p.RetryCount))
		}
		for _, cons := range c.XInfoConsumers(ctx, k, "g").Val() {
			parts = append(parts, fmt.Sprintf("%s/%d", cons.Name, cons.Pending))
		}
	}
	return typ + ": " + strings.Join(parts, " ")
}

// RESTORE is one change, as in Redis, on --event-loops 4: three clients
// restore a three-element list into one key while a fourth deletes it, and
// a reader never sees it with other than three elements; each RESTORE
// answers OK or BUSYKEY, never another error. And a RESTORE ... REPLACE
// whose payload is corrupt (a set holding a member twice, with a correct
// checksum) leaves the key it would replace as it was.
func TestCompatRestoreIsOneChange(t *testing.T) {
	ctx := context.Background()
	ts := startServer(t, Options{EventLoops: 4})
	redisAddr := startRedis(t)
	list := string(rdb.Dump(&rdb.Entry{Kind: rdb.KindList, Members: [][]byte{[]byte("a"), []byte("b"), []byte("c")}}))
	set := string(rdb.Dump(&rdb.Entry{Kind: rdb.KindSet, Members: [][]byte{[]byte("a"), []byte("b"), []byte("c")}}))
	dup := string(rdb.Dump(&rdb.Entry{Kind: rdb.KindSet, Members: [][]byte{[]byte("a"), []byte("a")}}))
	for _, target := range []struct{ name, addr string }{{"redis", redisAddr}, {"ours", ts.addr}} {
		c := redis.NewClient(&redis.Options{Addr: target.addr})
		t.Cleanup(func() { c.Close() })
		c.Set(ctx, "keep", "old", time.Hour)
		if err := c.RestoreReplace(ctx, "keep", 0, dup).Err(); err == nil || err.Error() != "ERR Bad data format" {
			t.Errorf("%s: RESTORE REPLACE of a corrupt set: %v, want ERR Bad data format", target.name, err)
		}
		if v, ttl := c.Get(ctx, "keep").Val(), c.TTL(ctx, "keep").Val(); v != "old" || ttl <= 0 {
			t.Errorf("%s: after a failed RESTORE REPLACE the key is %q with TTL %v; want the old value and its TTL", target.name, v, ttl)
		}
		for _, payload := range []struct{ kind, dump string }{{"list", list}, {"set", set}} {
			var wg sync.WaitGroup
			stop := make(chan struct{})
			errs := make(chan string, 16)
			for g := range 4 {
				wg.Go(func() {
					w := redis.NewClient(&redis.Options{Addr: target.addr})
					defer w.Close()
					for i := 0; ; i++ {
						select {
						case <-stop:
							return
						default:
						}
						if g == 3 {
							w.Del(ctx, "rk")
							continue
						}
						var err error
						if g == 2 && i%2 == 0 {
							err = w.RestoreReplace(ctx, "rk", 0, payload.dump).Err()
						} else {
							err = w.Restore(ctx, "rk", 0, payload.dump).Err()
						}
						if err != nil && err.Error() != "BUSYKEY Target key name already exists." {
							select {
							case errs <- fmt.Sprintf("RESTORE of a %s: %v", payload.kind, err):
							default:
							}
							return
						}
					}
				})
			}
			bad := ""
			for range 3000 {
				var n int64
				if payload.kind == "list" {
					n = c.LLen(ctx, "rk").Val()
				} else {
					n = c.SCard(ctx, "rk").Val()
				}
				if n != 0 && n != 3 {
					bad = fmt.Sprintf("a %s of %d elements", payload.kind, n)
					break
				}
			}
			close(stop)
			wg.Wait()
			close(errs)
			for e := range errs {
				t.Errorf("%s: %s", target.name, e)
			}
			if bad != "" {
				t.Errorf("%s: a reader saw %s while RESTOREs raced: want 0 or 3", target.name, bad)
			}
		}
	}
}
