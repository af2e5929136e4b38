package server

// Differential tests of the HyperLogLog commands. An HLL is a string in
// Redis's own representation, so GET of one is compared byte for byte
// with redis-server's after the same writes, and a value moves between
// the servers with GET and SET and counts the same on both.

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

// hllHeader is an HLL's header: magic, encoding, three unused bytes and a
// valid cached cardinality of zero.
func hllHeader(enc byte) string { return "HYLL" + string([]byte{enc, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}) }

func compatHLLScripts() []compatScript {
	var sizes []compatStep
	for _, n := range []string{"1", "100", "10000", "200000"} {
		var count int
		for _, c := range n {
			count = count*10 + int(c-'0')
		}
		k := "h" + n
		sizes = append(sizes,
			csMembers("PFADD", k, rangeMembers("e", 0, count)...),
			cs("GET "+k), cs("PFCOUNT "+k), cs("GET "+k), cs("PFDEBUG ENCODING "+k),
			csMembers("PFADD", k, rangeMembers("e", 0, min(count, 50))...), cs("STRLEN "+k))
	}
	sizes = append(sizes,
		cs("PFCOUNT h1 h100"), cs("PFCOUNT h100 h10000 h200000"), cs("PFCOUNT h1 nokey h1"), cs("PFCOUNT nokey nokey2"),
		cs("GET h100"), // a count of several keys writes nothing
		cs("PFMERGE m h1 h100"), cs("GET m"), cs("PFCOUNT m"), cs("PFDEBUG ENCODING m"),
		cs("PFMERGE m h10000"), cs("GET m"), cs("PFCOUNT m"), cs("PFDEBUG ENCODING m"),
		cs("PFMERGE h100 h1"), cs("GET h100"), cs("PFCOUNT h100"),
		cs("PFMERGE h1"), cs("GET h1"), cs("PFMERGE empty"), cs("GET empty"), cs("PFCOUNT empty"),
		cs("PFMERGE empty nokey"), cs("PFMERGE d nokey h200000"), cs("GET d"), cs("PFCOUNT d"),
		cs("PFDEBUG TODENSE h1"), cs("GET h1"), cs("PFDEBUG TODENSE h1"), cs("PFDEBUG ENCODING h1"), cs("PFCOUNT h1"),
	)
	return []compatScript{
		{name: "pfadd-pfcount", steps: []compatStep{
			cs("PFADD h"), cs("PFADD h"), cs("GET h"), cs("PFCOUNT h"), cs("GET h"),
			cs("PFADD h a b c"), cs("PFADD h a"), cs("PFADD h c b"), cs("GET h"), cs("PFCOUNT h"), cs("GET h"),
			cs("PFCOUNT nokey"), cs("TYPE h"), cs("STRLEN h"), cs("OBJECT ENCODING h"), cs("PFADD e"), cs("OBJECT ENCODING e"),
			cs("PFDEBUG ENCODING h"), cs("PFDEBUG DECODE h"), cs("PFDEBUG GETREG h"), cs("PFDEBUG ENCODING h"),
			cs("PFDEBUG DECODE h"), cs("PFDEBUG GETREG nokey"), cs("PFDEBUG Bogus h"), cs("PFDEBUG Bogus nokey"),
			ca("PFADD", "bin", "", "\x00\xff", strings.Repeat("x", 1000)), cs("GET bin"), cs("PFCOUNT bin"),
			cs("PFADD"), cs("PFCOUNT"), cs("PFMERGE"), cs("PFDEBUG ENCODING"), cs("PFSELFTEST x"),
			cs("SET t x"), cs("DEL t"), cs("PFADD t a"), cs("EXPIRE t 100"), cs("PFADD t b"), cs("TTL t"),
			cs("PFCOUNT t"), cs("TTL t"), cs("PFMERGE t h"), cs("TTL t"),
			csSorted("ACL CAT hyperloglog"),
			// Key permissions follow Redis's key specs: PFADD writes its key
			// without reading it, PFCOUNT and PFDEBUG read theirs, PFMERGE
			// reads and writes its destination.
			cs("ACL SETUSER hllro on nopass %R~* +@all"), cs("ACL SETUSER hllrw on nopass %R~src* %RW~dst* +@all"),
			cs("ACL DRYRUN hllro PFCOUNT h"), cs("ACL DRYRUN hllro PFADD h a"), cs("ACL DRYRUN hllro PFMERGE h x"),
			cs("ACL DRYRUN hllrw PFMERGE dst src1 src2"), cs("ACL DRYRUN hllrw PFMERGE src1 dst"),
			cs("ACL DRYRUN hllrw PFCOUNT src1"), cs("ACL DRYRUN hllrw PFCOUNT dst"), cs("ACL DRYRUN hllrw PFADD dst a"),
			cs("ACL DRYRUN hllrw PFDEBUG ENCODING dst"), cs("ACL DRYRUN hllro PFSELFTEST"),
			cs("ACL DELUSER hllro hllrw"),
		}},
		{name: "sizes-merges-encodings", steps: sizes},
		{name: "sparse-max-bytes", steps: []compatStep{
			cs("CONFIG GET hll-sparse-max-bytes"), cs("CONFIG SET hll-sparse-max-bytes 100"),
			cs("CONFIG GET hll-sparse-max-bytes"),
			csMembers("PFADD", "s", rangeMembers("e", 0, 20)...), cs("PFDEBUG ENCODING s"), cs("GET s"),
			csMembers("PFADD", "s", rangeMembers("e", 0, 40)...), cs("PFDEBUG ENCODING s"), cs("GET s"),
			cs("PFMERGE s2 s"), cs("PFDEBUG ENCODING s2"),
			cs("CONFIG SET hll-sparse-max-bytes 1kb"), cs("CONFIG GET hll-sparse-max-bytes"),
			csMembers("PFADD", "k", rangeMembers("e", 0, 400)...), cs("PFDEBUG ENCODING k"), cs("GET k"),
			cs("CONFIG SET hll-sparse-max-bytes x"), cs("CONFIG SET hll-sparse-max-bytes -1"),
			cs("CONFIG SET hll-sparse-max-bytes 3000"),
		}},
		{name: "wrongtype-and-corrupt", steps: []compatStep{
			cs("SET str hello"), cs("SADD set a"), cs("PFADD h a"), cs("SET num 12345678901234567"),
			cs("PFADD str a"), cs("PFCOUNT str"), cs("PFCOUNT h str"), cs("PFMERGE str h"), cs("PFMERGE h str"),
			cs("PFADD set a"), cs("PFCOUNT set"), cs("PFCOUNT h set"), cs("PFMERGE d h set str"),
			cs("PFMERGE d str set"), cs("PFMERGE set h"), cs("PFDEBUG GETREG str"), cs("PFDEBUG ENCODING set"),
			cs("PFADD num x"), cs("PFCOUNT num"), cs("EXISTS d"),
			ca("SET", "short", "HYLL"), cs("PFCOUNT short"),
			ca("SET", "badenc", "HYLL\x02"+hllHeader(0)[5:]+"\x7f\xff"), cs("PFCOUNT badenc"),
			ca("SET", "densebad", hllHeader(0)+"\x00\x00"), cs("PFCOUNT densebad"), cs("PFADD densebad a"),
			ca("SET", "sparsebad", hllHeader(1)+"\x80"), cs("PFCOUNT sparsebad"), cs("PFADD sparsebad a"),
			cs("PFCOUNT sparsebad h"), cs("PFMERGE d sparsebad"), cs("PFDEBUG TODENSE sparsebad"),
			cs("PFDEBUG DECODE sparsebad"),
			ca("SET", "stale", hllHeader(1)[:15]+"\x80"+"\x80"), cs("PFCOUNT stale"),
			ca("SET", "cached", "HYLL\x01\x00\x00\x00\x2a\x00\x00\x00\x00\x00\x00\x00\x7f\xff"), cs("PFCOUNT cached"),
			cs("PFADD h b"), cs("APPEND h x"), cs("PFCOUNT h"), cs("PFADD h c"), cs("GET h"),
			cs("PFDEBUG TODENSE h"), cs("PFDEBUG DECODE h"), cs("SETRANGE h 4 \x05"), cs("PFCOUNT h"),
		}},
		{name: "damaged-pfadd-fails-whole", divergence: "a PFADD that meets a damaged HLL changes nothing", steps: []compatStep{
			// The opcodes cover registers 0-99 only: e70 lands in them, e1 past.
			ca("SET", "g", hllHeader(1)+"\x40\x63"), cs("PFADD g e70 e1"),
			csDiverge("GET g", `"HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x806\x84+"`,
				`"HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00@c"`),
		}},
		{name: "hll-in-transactions-and-scripts", steps: []compatStep{
			cs("MULTI"), cs("PFADD h a b"), cs("PFCOUNT h"), cs("SET str v"), cs("PFADD str x"), cs("PFCOUNT h"),
			cs("EXEC"),
			cs("WATCH h"), cs("PFCOUNT h"), cs("MULTI"), cs("PING"), cs("EXEC"),
			cs("PFADD h c"), cs("WATCH h"), cs("PFCOUNT h"), cs("MULTI"), cs("PING"), cs("EXEC"),
			cs("WATCH h"), cs("PFADD h a"), cs("MULTI"), cs("PING"), cs("EXEC"),
			cs("WATCH h"), cs("PFADD h z"), cs("MULTI"), cs("PING"), cs("EXEC"),
			ca("EVAL", "redis.call('PFADD', KEYS[1], 'q', 'r'); return redis.call('PFCOUNT', KEYS[1])", "1", "h"),
			ca("EVAL", "return redis.call('PFMERGE', KEYS[1], KEYS[2])", "2", "m", "h"),
			ca("EVAL", "return redis.pcall('PFADD', KEYS[1], 'x')", "1", "str"),
			ca("EVAL_RO", "return redis.call('PFCOUNT', KEYS[1])", "1", "m"),
			ca("EVAL_RO", "return redis.call('PFADD', KEYS[1], 'y')", "1", "m"),
			cs("GET m"),
		}},
	}
}

func TestCompatHLL(t *testing.T) {
	redisAddr := startRedis(t)
	ts := startServer(t, Options{LogLevel: new(slog.LevelVar)})
	forEachProtocol(t, func(t *testing.T, proto int) {
		for _, sc := range compatHLLScripts() {
			t.Run(sc.name, func(t *testing.T) { runCompatScript(t, redisAddr, ts.addr, proto, sc) })
		}
	})
}

// TestCompatHLLMovesBetweenServers moves HLLs, sparse and dense, between
// redis-server and our server with GET and SET, both ways: each counts
// the other's value as its writer does, and adding to it gives the same
// bytes on both.
func TestCompatHLLMovesBetweenServers(t *testing.T) {
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: startRedis(t)})
	ours := redis.NewClient(&redis.Options{Addr: startServer(t, Options{}).addr})
	t.Cleanup(func() { rdb.Close(); ours.Close() })
	for _, n := range []int{3, 500, 20000} {
		elems := make([]any, n)
		for i := range elems {
			elems[i] = i
		}
		for _, dir := range []struct {
			name     string
			from, to *redis.Client
		}{{"redis-to-ours", rdb, ours}, {"ours-to-redis", ours, rdb}} {
			key := dir.name
			if err := dir.from.PFAdd(ctx, key, elems...).Err(); err != nil {
				t.Fatal(err)
			}
			v := dir.from.Get(ctx, key).Val()
			want := dir.from.PFCount(ctx, key).Val()
			dir.to.Set(ctx, key, v, 0)
			if got := dir.to.PFCount(ctx, key).Val(); got != want || want == 0 {
				t.Errorf("%s, %d elements: PFCOUNT %d, want %d", dir.name, n, got, want)
			}
			dir.from.PFAdd(ctx, key, "more", "and more")
			dir.to.PFAdd(ctx, key, "more", "and more")
			if a, b := dir.from.Get(ctx, key).Val(), dir.to.Get(ctx, key).Val(); a != b {
				t.Errorf("%s, %d elements: the values differ after the same PFADD (%d and %d bytes)", dir.name, n, len(a), len(b))
			}
			rdb.Del(ctx, key)
			ours.Del(ctx, key)
		}
	}
}

// TestCompatHLLGarbage gives both servers the same random garbage and
// damaged HLLs (truncated, bytes flipped) and compares what every PF
// command answers, and the values they leave.
func TestCompatHLLGarbage(t *testing.T) {
	redisAddr := startRedis(t)
	ts := startServer(t, Options{})
	rng := rand.New(rand.NewPCG(7, 21))
	p := dialCompatPair(t, redisAddr, ts.addr, 2)
	p.flush(t)
	var seeds []string
	for _, n := range []int{1, 30, 300, 5000} {
		steps := []compatStep{csMembers("PFADD", "seed", rangeMembers("e", 0, n)...)}
		runCompatSteps(t, p, compatScript{name: "seed", steps: steps})
		r, err := p.redis.do("GET", "seed")
		if err != nil {
			t.Fatal(err)
		}
		seeds = append(seeds, r.String())
	}
	var steps []compatStep
	for i := range 300 {
		var v []byte
		switch i % 3 {
		case 0: // noise
			v = make([]byte, rng.IntN(40))
			for j := range v {
				v[j] = byte(rng.UintN(256))
			}
			if rng.IntN(2) == 0 {
				v = append([]byte(hllHeader(byte(rng.IntN(2)))), v...)
			}
		case 1: // truncated
			s := seeds[rng.IntN(len(seeds))]
			v = []byte(s[:rng.IntN(len(s)+1)])
		case 2: // bytes flipped
			v = []byte(seeds[rng.IntN(len(seeds))])
			for range 1 + rng.IntN(3) {
				j := rng.IntN(len(v))
				v[j] ^= byte(1 + rng.UintN(255))
			}
		}
		steps = append(steps, ca("SET", "g", string(v)), cs("PFCOUNT g"), cs("PFCOUNT g seed"), cs("PFADD g a b c"),
			cs("PFMERGE m g"), cs("PFDEBUG ENCODING g"), cs("PFDEBUG DECODE g"), cs("GET g"), cs("DEL m"))
	}
	runCompatSteps(t, p, compatScript{name: "garbage", steps: steps})
}

// TestCompatHLLTracking compares the invalidations of HLL writes: PFADD
// that changes a register and PFMERGE invalidate, PFADD that changes
// nothing does not, and PFCOUNT invalidates when it caches a new
// cardinality in the value. (A client's own PFCOUNT that caches one is not
// compared: Redis remembers a read's keys after it runs, this server
// before, so here the client is told of its own PFCOUNT's write.)
func TestCompatHLLTracking(t *testing.T) {
	sc := psScript{name: "hll", conns: 2, resp3: true, steps: []psStep{
		ps(0, "CLIENT TRACKING ON"), ps(1, "PFADD h a"), ps(0, "GET h"),
		ps(1, "PFADD h a"), ps(0, "PING"), ps(1, "PFADD h b"), psRead(0, 1),
		ps(0, "GET h"), ps(1, "PFCOUNT h"), psRead(0, 1),
		ps(0, "GET h"), ps(1, "PFCOUNT h"), ps(0, "PING"),
		ps(0, "PFCOUNT h"), ps(1, "PFMERGE h nokey"), psRead(0, 1),
		ps(0, "GET h"), ps(1, "PFMERGE m h"), ps(0, "PING"), ps(1, "PFMERGE h m"), psRead(0, 1),
	}}
	runPubSubScript(t, startRedis(t), startServer(t, Options{}).addr, sc)
}

// TestCompatHLLKeyspaceHits compares the keyspace hits and misses the PF
// commands count: PFCOUNT and PFMERGE look their keys up as reads, up to
// the first that fails, and PFADD as a write, which counts nothing.
func TestCompatHLLKeyspaceHits(t *testing.T) {
	redisAddr := startRedis(t)
	ts := startServer(t, Options{})
	p := dialCompatPair(t, redisAddr, ts.addr, 2)
	p.flush(t)
	steps := []compatStep{
		cs("PFADD h a"), cs("PFADD g b"), cs("SET str x"), cs("SADD set m"), cs("CONFIG RESETSTAT"),
		cs("PFADD h c"), cs("PFADD new c"), cs("PFCOUNT h"), cs("PFCOUNT nokey"), cs("PFCOUNT h nokey g h"),
		cs("PFCOUNT h set g nokey"), cs("PFCOUNT nokey str g"), cs("PFMERGE dst h nokey"), cs("PFMERGE h set nokey"),
		cs("PFDEBUG ENCODING h"),
	}
	runCompatSteps(t, p, compatScript{name: "hits", steps: steps})
	stat := func(c *compatConn, field string) string {
		r, err := c.do("INFO", "stats")
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(r.str, "\r\n") {
			if v, ok := strings.CutPrefix(line, field+":"); ok {
				return v
			}
		}
		t.Fatalf("INFO stats has no %s", field)
		return ""
	}
	for _, field := range []string{"keyspace_hits", "keyspace_misses"} {
		if want, got := stat(p.redis, field), stat(p.ours, field); want != got {
			t.Errorf("%s: redis %s, ours %s", field, want, got)
		}
	}
}
