package server

// Differential tests of the hash commands against redis-server 7.0, with
// compat_test.go's helpers: every command and its errors, -WRONGTYPE both
// ways, OBJECT ENCODING across Redis's listpack limits, the keyspace
// commands on hashes, MULTI/EXEC and scripts. A hash Redis holds as a
// listpack keeps its insertion order, which ours keeps too, so its replies
// compare exactly; a hashtable's order is its own on each server, so those
// replies compare as sets (csSorted, csPairs, csScan).
//
// Run: go test -count=1 -run 'CompatHash' ./resp/

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/stampedeless/stampedeless/engine"
)

func TestCompatHashScripts(t *testing.T) {
	redisAddr := startReferenceRedis(t)
	ts := startServer(t, Options{})
	forEachProtocol(t, func(t *testing.T, proto int) {
		for _, sc := range hashCompatScripts() {
			t.Run(sc.name, func(t *testing.T) { runCompatScript(t, redisAddr, ts.addr, proto, sc) })
		}
	})
}

// hsetMany is HSET key with n fields named prefix0... and values of size
// bytes.
func hsetMany(key, prefix string, n, size int) compatStep {
	args := []string{"HSET", key}
	for i := range n {
		args = append(args, fmt.Sprint(prefix, i), strings.Repeat("v", size))
	}
	return ca(args...)
}

func hashCompatScripts() []compatScript {
	v64, v65 := strings.Repeat("v", 64), strings.Repeat("v", 65)
	return []compatScript{
		{name: "hset-hget", steps: []compatStep{
			cs("HSET h a 1 b 2"), cs("HSET h a 3 c 4"), cs("HGET h a"), cs("HGET h zz"), cs("HGET nokey a"),
			cs("HMGET h a zz c"), cs("HMGET nokey a b"), cs("HGETALL h"), cs("HKEYS h"), cs("HVALS h"),
			cs("HGETALL nokey"), cs("HKEYS nokey"), cs("HVALS nokey"), cs("HLEN h"), cs("HLEN nokey"),
			cs("HEXISTS h a"), cs("HEXISTS h zz"), cs("HEXISTS nokey a"), cs("HSTRLEN h a"), cs("HSTRLEN h zz"), cs("HSTRLEN nokey a"),
			ca("HSET", "h", "", ""), ca("HGET", "h", ""), ca("HSTRLEN", "h", ""), cs("HGETALL h"),
			cs("HSETNX h a 9"), cs("HSETNX h n 9"), cs("HGET h n"), cs("HSETNX nokey2 f v"), cs("HGETALL nokey2"),
			cs("HMSET h m 1 a 5"), cs("HGETALL h"), cs("TYPE h"), cs("OBJECT ENCODING h"),
			cs("HSET h -1 10 0x 1e3"), cs("HGETALL h"), cs("HSTRLEN h -1"), cs("HINCRBY h -1 5"), cs("HGET h -1"),
		}},
		{name: "hset-arity", steps: []compatStep{
			cs("HSET h"), cs("HSET h a"), cs("HSET h a 1 b"), cs("HMSET h a"), cs("HMSET h a 1 b"), cs("HSETNX h a"),
			cs("HSETNX h a 1 2"), cs("HGET h"), cs("HGET h a b"), cs("HMGET h"), cs("HDEL h"), cs("HLEN"), cs("HLEN h x"),
			cs("HEXISTS h"), cs("HSTRLEN h"), cs("HGETALL"), cs("HKEYS h x"), cs("HVALS"), cs("HINCRBY h a"),
			cs("HINCRBYFLOAT h a"), cs("HSCAN h"), cs("HRANDFIELD"), cs("EXISTS h"),
		}},
		{name: "hdel-empties", steps: []compatStep{
			cs("HDEL nokey a"), cs("HSET h a 1 b 2 c 3"), cs("HDEL h a a zz"), cs("HGETALL h"), cs("HDEL h b c d"),
			cs("EXISTS h"), cs("TYPE h"), cs("HLEN h"), cs("HSET h x 1"), cs("HDEL h x"), cs("EXISTS h"),
		}},
		{name: "hincrby", steps: []compatStep{
			cs("HINCRBY h a 5"), cs("HINCRBY h a -12"), cs("HGET h a"), cs("HINCRBY h a 0"), cs("HINCRBY h a x"),
			cs("HINCRBY h a 1.5"), cs("HINCRBY h a +1"), cs("HINCRBY h a 01"), cs("HINCRBY h a 99999999999999999999"),
			cs("HSET h s abc f 1.5 sp 1 big 9223372036854775807 neg -9223372036854775808"),
			cs("HINCRBY h s 1"), cs("HINCRBY h f 1"), cs("HINCRBY h big 1"), cs("HINCRBY h big 0"), cs("HINCRBY h neg -1"),
			cs("HINCRBY h neg 9223372036854775807"), cs("HGETALL h"), ca("HSET", "h", "lead", " 1"), cs("HINCRBY h lead 1"),
			cs("HINCRBY nokey a -9223372036854775808"), cs("HGETALL nokey"),
		}},
		{name: "hincrbyfloat", steps: []compatStep{
			cs("HINCRBYFLOAT h a 10.5"), cs("HINCRBYFLOAT h a 0.1"), cs("HINCRBYFLOAT h a -5.6"), cs("HINCRBYFLOAT h a 5.0e3"),
			cs("HINCRBYFLOAT h a 2.0e-3"), cs("HGET h a"), cs("HINCRBYFLOAT h a x"), cs("HINCRBYFLOAT h a inf"),
			cs("HINCRBYFLOAT h a -inf"), cs("HINCRBYFLOAT h a nan"), cs("HINCRBYFLOAT h a 1e5000"),
			cs("HSET h s abc i 3 e 1e3"), cs("HINCRBYFLOAT h s 1"), cs("HINCRBYFLOAT h i 1.5"), cs("HINCRBYFLOAT h e 1"),
			cs("HINCRBYFLOAT h b 1.1e4931"), cs("HINCRBYFLOAT h b 1.1e4931"), cs("HGET h b"), cs("OBJECT ENCODING h"), csPairs("HGETALL h"),
			cs("HINCRBYFLOAT h z 0x10"), cs("HINCRBYFLOAT h z 1"), cs("HINCRBYFLOAT h z -1"),
		}},
		{name: "wrongtype", steps: []compatStep{
			cs("SET s v"), cs("HSET s a 1"), cs("HMSET s a 1"), cs("HSETNX s a 1"), cs("HGET s a"), cs("HMGET s a"),
			cs("HGETALL s"), cs("HKEYS s"), cs("HVALS s"), cs("HDEL s a"), cs("HLEN s"), cs("HEXISTS s a"), cs("HSTRLEN s a"),
			cs("HINCRBY s a 1"), cs("HINCRBY s a x"), cs("HINCRBYFLOAT s a 1"), cs("HINCRBYFLOAT s a inf"), cs("HINCRBYFLOAT s a x"),
			cs("HSCAN s 0"), cs("HSCAN s x"), cs("HSCAN s 0 COUNT 0"), cs("HRANDFIELD s"), cs("HRANDFIELD s 2"), cs("HRANDFIELD s x"),
			cs("HSET h a 1"), cs("GET h"), cs("MGET h s"), cs("APPEND h x"), cs("INCR h"), cs("INCRBYFLOAT h 1"), cs("STRLEN h"),
			cs("GETRANGE h 0 1"), cs("SETRANGE h 0 x"), cs("GETDEL h"), cs("GETEX h"), cs("GETSET h x"), cs("SET h x GET"),
			cs("SETBIT h 0 1"), cs("GETBIT h 0"), cs("BITCOUNT h"), cs("LCS h s"), cs("HGET h a"),
			cs("BITPOS h 1"), cs("BITFIELD h GET u8 0"), cs("BITFIELD_RO h GET u8 0"), cs("BITOP AND dest s h"),
			cs("BITOP OR dest s"), cs("EXISTS h s nokey h"), cs("TOUCH h s nokey"), cs("MGET s h nokey"), cs("DEL h s nokey"),
			cs("HSET h a 1"), cs("SET s v"),
			cs("SET h x"), cs("TYPE h"), cs("GET h"), cs("HSET h a 1"), cs("SETNX h y"), cs("MSETNX h y"),
		}},
		{name: "encoding-entries", steps: []compatStep{
			hsetMany("h", "f", 512, 1), cs("OBJECT ENCODING h"), cs("HLEN h"), cs("HSET h f511 x"), cs("OBJECT ENCODING h"),
			cs("HGETALL h"), cs("HSET h f512 x"), cs("OBJECT ENCODING h"), cs("HLEN h"), csPairs("HGETALL h"), csSorted("HKEYS h"), csSorted("HVALS h"),
			csScan("HSCAN h 0"), csScan("HSCAN h 0 COUNT 3"), csScan("HSCAN h 0 MATCH f1?"), csScan("HSCAN h 0 MATCH f12* COUNT 1000"),
			hsetMany("del", "f", 513, 1), cs("HDEL del f0 f1 f2 f3 f4 f5 f6 f7 f8 f9"), cs("OBJECT ENCODING del"),
		}},
		{name: "encoding-values", steps: []compatStep{
			ca("HSET", "a", "f", v64), cs("OBJECT ENCODING a"), ca("HSET", "a", "g", v65), cs("OBJECT ENCODING a"),
			cs("HDEL a g"), cs("OBJECT ENCODING a"), csPairs("HGETALL a"),
			ca("HSET", "b", v64, "1"), cs("OBJECT ENCODING b"), ca("HSET", "b", v65, "1"), cs("OBJECT ENCODING b"),
			// HSETNX on a present field converts nothing; on a new one it does.
			cs("HSET c f 1"), ca("HSETNX", "c", "f", v65), cs("OBJECT ENCODING c"), ca("HSETNX", "c", "g", v65), cs("OBJECT ENCODING c"),
			// HINCRBY converts through its long field name.
			ca("HINCRBY", "d", v65, "1"), cs("OBJECT ENCODING d"),
			cs("HINCRBYFLOAT e f 1.1e4931"), cs("OBJECT ENCODING e"), cs("HINCRBYFLOAT e f 3.3e-4900"), cs("OBJECT ENCODING e"),
			// A .NET IDistributedCache entry.
			ca("HSET", "n", "absexp", "-1", "sldexp", "-1", "data", strings.Repeat("d", 100)), cs("OBJECT ENCODING n"),
			csPairs("HGETALL n"), ca("HSET", "n", "data", strings.Repeat("e", 2000)), cs("OBJECT ENCODING n"), cs("HSTRLEN n data"),
			cs("MEMORY USAGE n SAMPLES x"),
		}},
		// The limits as Redis's own hash tests set them first, under both
		// names; the defaults are set back at the end.
		{name: "encoding-config", steps: []compatStep{
			csPairs("CONFIG GET hash-max-*"), cs("CONFIG SET hash-max-ziplist-value 10"), cs("CONFIG GET hash-max-listpack-value"),
			cs("HSET v f 0123456789"), cs("OBJECT ENCODING v"), cs("HSET v g 01234567890"), cs("OBJECT ENCODING v"),
			cs("CONFIG SET hash-max-listpack-value 1kb"), cs("CONFIG GET hash-max-ziplist-value"),
			ca("HSET", "w", "f", strings.Repeat("x", 1024)), cs("OBJECT ENCODING w"), ca("HSET", "w", "g", strings.Repeat("x", 1025)),
			cs("OBJECT ENCODING w"), cs("CONFIG SET hash-max-listpack-value 64"),
			cs("CONFIG SET hash-max-ziplist-entries 2"), cs("CONFIG GET hash-max-listpack-entries"), cs("HSET e a 1 b 2"),
			cs("OBJECT ENCODING e"), cs("HSET e c 3"), cs("OBJECT ENCODING e"), cs("HDEL e c b"), cs("OBJECT ENCODING e"),
			cs("CONFIG SET hash-max-listpack-entries 0"), cs("HSET z a 1"), cs("OBJECT ENCODING z"),
			cs("CONFIG SET hash-max-listpack-entries 1000"), hsetMany("k", "f", 600, 1), cs("OBJECT ENCODING k"), cs("HLEN k"),
			cs("CONFIG SET hash-max-listpack-entries -1"), cs("CONFIG SET hash-max-ziplist-entries x"),
			cs("CONFIG SET hash-max-listpack-value x"), cs("CONFIG SET hash-max-listpack-value -1"),
			cs("CONFIG SET hash-max-listpack-entries 512"), csPairs("CONFIG GET hash-max-*"),
		}},
		{name: "hscan", steps: []compatStep{
			cs("HSCAN nokey 0"), cs("HSCAN nokey 0 BADOPT"), cs("HSCAN nokey x"), cs("HSET h a 1 b 2 ab 3"), cs("HSCAN h 0"),
			cs("HSCAN h 0 MATCH a*"), cs("HSCAN h 0 MATCH * COUNT 1"), cs("HSCAN h 0 COUNT 0"), cs("HSCAN h 0 COUNT -1"),
			cs("HSCAN h 0 COUNT x"), cs("HSCAN h 0 COUNT"), cs("HSCAN h 0 MATCH"), cs("HSCAN h 0 TYPE hash"), cs("HSCAN h 0 FOO bar"),
			cs("HSCAN h -1"), cs("HSCAN h x"), cs("HSCAN h 18446744073709551616"), cs("HSCAN h 5"),
		}},
		{name: "hrandfield", steps: []compatStep{
			cs("HRANDFIELD nokey"), cs("HRANDFIELD nokey 3"), cs("HRANDFIELD nokey 3 WITHVALUES"), cs("HRANDFIELD nokey x"),
			cs("HSET one f v"), cs("HRANDFIELD one"), cs("HRANDFIELD one -3"), cs("HRANDFIELD one -3 WITHVALUES"),
			cs("HRANDFIELD one 3 withvalues"), cs("HRANDFIELD one 0"), cs("HRANDFIELD one 0 WITHVALUES"),
			cs("HSET h a 1 b 2 c 3"), cs("HRANDFIELD h 3"), cs("HRANDFIELD h 10 WITHVALUES"),
			cs("HRANDFIELD h x"), cs("HRANDFIELD h 1.5"), cs("HRANDFIELD h 1 FOO"), cs("HRANDFIELD h 1 WITHVALUES x"),
			cs("HRANDFIELD h -9223372036854775808"), cs("HRANDFIELD h 9223372036854775807 WITHVALUES"),
			cs("HRANDFIELD h -4611686018427387904 WITHVALUES"), cs("HRANDFIELD h 4611686018427387904 WITHVALUES"),
			cs("HRANDFIELD nokey 4611686018427387904 WITHVALUES"), cs("HRANDFIELD nokey -9223372036854775808"),
		}},
		{name: "keyspace", steps: []compatStep{
			cs("HSET h a 1 b 2"), cs("TYPE h"), cs("EXISTS h"), cs("EXPIRE h 100"), cs("TTL h"), cs("HSET h c 3"), cs("TTL h"),
			cs("HDEL h c"), cs("TTL h"), cs("HINCRBY h a 1"), cs("TTL h"), cs("PERSIST h"), cs("TTL h"),
			cs("RENAME h h2"), cs("HGETALL h2"), cs("EXISTS h"), cs("COPY h2 h3"), cs("HSET h3 z 9"), cs("HGETALL h2"), cs("HGETALL h3"),
			cs("SET s v"), cs("RENAME h3 s"), cs("TYPE s"), cs("HGETALL s"), cs("COPY s h2"), cs("COPY s h2 REPLACE"), cs("HGETALL h2"),
			hsetMany("big", "f", 600, 1), cs("COPY big big2"), cs("HDEL big2 f0"), cs("HLEN big"), cs("HLEN big2"),
			cs("RENAME big big3"), cs("HLEN big3"), cs("OBJECT ENCODING big3"), cs("OBJECT ENCODING s"),
			cs("SET str v"), csScan("SCAN 0 TYPE hash"), csScan("SCAN 0 TYPE string"), csScan("SCAN 0 TYPE HASH"),
			cs("DEL s h2 big2 big3"), cs("DBSIZE"), cs("HSET x a 1"), cs("PEXPIRE x 30"), csSleep(80_000_000), cs("HGET x a"), cs("EXISTS x"),
		}},
		{name: "multi-exec", steps: []compatStep{
			cs("MULTI"), cs("HSET h a 1 b 2"), cs("HINCRBY h a 5"), cs("HGETALL h"), cs("HINCRBY h b x"), cs("HGET h a"),
			cs("HSET h a"), cs("EXEC"), cs("MULTI"), cs("SET s v"), cs("HSET s a 1"), cs("HGETALL h"), cs("HINCRBYFLOAT h a 1.5"),
			cs("HDEL h a b"), cs("EXEC"), cs("EXISTS h"),
		}},
		{name: "eval", steps: []compatStep{
			ca("EVAL", "redis.call('hset', KEYS[1], 'a', 1, 'b', 2.5); return redis.call('hgetall', KEYS[1])", "1", "h"),
			ca("EVAL", "return redis.call('hincrby', KEYS[1], 'a', ARGV[1])", "1", "h", "10"),
			ca("EVAL", "return redis.call('hincrbyfloat', KEYS[1], 'b', 1)", "1", "h"),
			ca("EVAL", "return {redis.call('hget', KEYS[1], 'a'), redis.call('hget', KEYS[1], 'zz'), redis.call('hexists', KEYS[1], 'a')}", "1", "h"),
			ca("EVAL", "return redis.call('hmget', KEYS[1], 'a', 'zz', 'b')", "1", "h"),
			ca("EVAL", "return redis.pcall('hset', KEYS[1])", "1", "h"),
			ca("EVAL", "return redis.call('hincrby', KEYS[1], 'a', 'x')", "1", "h"),
			ca("EVAL", "redis.call('set', KEYS[1], 'v'); return redis.pcall('hget', KEYS[1], 'a')", "1", "s"),
			ca("EVAL", "redis.setresp(3); return redis.call('hgetall', KEYS[1])", "1", "h"),
			ca("EVAL", "redis.setresp(3); return redis.call('hrandfield', KEYS[1], 5, 'withvalues')", "1", "h"),
			ca("EVAL", "return redis.call('hrandfield', KEYS[1], 5, 'withvalues')", "1", "h"),
			ca("EVAL_RO", "return redis.call('hset', KEYS[1], 'a', 1)", "1", "h"),
			ca("EVAL_RO", "return redis.call('hlen', KEYS[1])", "1", "h"),
		}},
	}
}

// TestHashRandFieldShapes checks what HRANDFIELD's random replies have in
// common on both servers, small (listpack) and big (hashtable) hashes
// alike: a positive count gives distinct fields, at most the hash's; a
// negative one that many, each a field; WITHVALUES each field's value.
func TestHashRandFieldShapes(t *testing.T) {
	redisAddr := startReferenceRedis(t)
	ts := startServer(t, Options{})
	ctx := context.Background()
	for name, c := range map[string]*redis.Client{
		"redis": redis.NewClient(&redis.Options{Addr: redisAddr}),
		"ours":  ts.client(t),
	} {
		t.Run(name, func(t *testing.T) {
			defer c.Close()
			for _, size := range []int{5, 1000} {
				key := fmt.Sprint("h", size)
				want := map[string]string{}
				for i := range size {
					want[fmt.Sprint("f", i)] = fmt.Sprint(i)
				}
				if err := c.HSet(ctx, key, want).Err(); err != nil {
					t.Fatal(err)
				}
				for _, count := range []int{1, 3, 5, 600, 2000, -1, -7, -3000} {
					fields, err := c.HRandField(ctx, key, count).Result()
					if err != nil {
						t.Fatal(err)
					}
					wantLen := -count
					if count > 0 {
						wantLen = min(count, size)
					}
					if len(fields) != wantLen {
						t.Fatalf("size %d count %d: %d fields, want %d", size, count, len(fields), wantLen)
					}
					seen := map[string]bool{}
					for _, f := range fields {
						if _, ok := want[f]; !ok || count > 0 && seen[f] {
							t.Fatalf("size %d count %d: field %q unknown or repeated", size, count, f)
						}
						seen[f] = true
					}
					pairs, err := c.HRandFieldWithValues(ctx, key, count).Result()
					if err != nil {
						t.Fatal(err)
					}
					if len(pairs) != wantLen {
						t.Fatalf("size %d count %d WITHVALUES: %d pairs, want %d", size, count, len(pairs), wantLen)
					}
					for _, p := range pairs {
						if want[p.Key] != p.Value {
							t.Fatalf("size %d count %d WITHVALUES: %q=%q", size, count, p.Key, p.Value)
						}
					}
				}
			}
		})
	}
}

// hashConnScripts: a hash's changes reach the other connections as a
// string's do, and only when something changed (HDEL of a missing field,
// HSETNX of a present one change nothing, in Redis either): connection 0
// tracks in RESP3 or WATCHes, connection 1 writes.
func hashConnScripts() []psScript {
	return []psScript{
		{name: "tracking", conns: 2, resp3: true, steps: []psStep{
			ps(0, "CLIENT TRACKING ON"), ps(1, "HSET h a 1"), ps(0, "HGET h a"), ps(1, "HSET h a 2"), psRead(0, 1),
			ps(0, "HGETALL h"), ps(1, "HSET h a 2"), psRead(0, 1),
			ps(0, "HLEN h"), ps(1, "HDEL h zz"), ps(1, "HSETNX h a 3"), ps(0, "PING"),
			ps(1, "HINCRBY h a x"), ps(1, "GET h"), ps(0, "PING"),
			ps(1, "HINCRBY h n 1"), psRead(0, 1), ps(0, "HEXISTS h n"), ps(1, "HINCRBYFLOAT h n 1.5"), psRead(0, 1),
			ps(0, "HSTRLEN h n"), ps(1, "EXPIRE h 100"), psRead(0, 1),
			ps(0, "HMGET h a n"), ps(1, "HDEL h a n"), psRead(0, 1), ps(0, "EXISTS h"),
			ps(0, "HSCAN h 0"), ps(1, "HSET h x 1"), psRead(0, 1), ps(0, "HRANDFIELD h"), ps(1, "RENAME h h2"), psRead(0, 1),
		}},
		{name: "watch", conns: 2, steps: []psStep{
			ps(0, "WATCH h"), ps(1, "HSET h a 1"), ps(0, "MULTI"), ps(0, "HGET h a"), ps(0, "EXEC"),
			ps(0, "WATCH h"), ps(1, "HSETNX h a 2"), ps(1, "HDEL h zz"), ps(0, "MULTI"), ps(0, "HGET h a"), ps(0, "EXEC"),
			ps(0, "WATCH h"), ps(1, "HINCRBY h a 1"), ps(0, "MULTI"), ps(0, "HGET h a"), ps(0, "EXEC"),
			ps(0, "WATCH h"), ps(1, "HDEL h a"), ps(0, "MULTI"), ps(0, "HGET h a"), ps(0, "EXEC"),
		}},
	}
}

func TestCompatHashConnections(t *testing.T) {
	for _, sc := range hashConnScripts() {
		t.Run(sc.name, func(t *testing.T) {
			runPubSubScript(t, startRedis(t), startServer(t, Options{}).addr, sc)
		})
	}
}

// TestHashNoEvictionOOM: under noeviction, growing hashes past --max-memory
// gets Redis's -OOM, and reads and deletes still work.
func TestHashNoEvictionOOM(t *testing.T) {
	store, err := engine.New(engine.Options{MaxMemory: 256 << 10, Policy: engine.NoEviction})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(store.Close)
	ts := startServer(t, Options{Store: store})
	r := dialRaw(t, ts.addr)
	value := strings.Repeat("v", 1000)
	var got string
	i := 0
	for ; i < 1000; i++ {
		if got = r.do("HSET", "h", fmt.Sprint("f", i), value); got != ":1" {
			break
		}
	}
	if got != "-OOM command not allowed when used memory > 'maxmemory'." {
		t.Fatalf("HSET %d past the bound: %s", i, got)
	}
	if got := r.do("HINCRBY", "other", "n", "1"); !strings.HasPrefix(got, "-OOM") {
		t.Fatalf("HINCRBY of a new hash past the bound: %s", got)
	}
	if got := r.do("HLEN", "h"); got != fmt.Sprint(":", i) {
		t.Fatalf("HLEN = %s, want %d", got, i)
	}
	if got := r.do("DEL", "h"); got != ":1" {
		t.Fatalf("DEL = %s", got)
	}
	if got := r.do("HSET", "h", "f", "v"); got != ":1" {
		t.Fatalf("HSET after DEL = %s", got)
	}
}
