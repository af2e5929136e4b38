package rdb

import (
	"bytes"
	"cmp"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stampedeless/stampedeless/internal/redistest"
)

// startRedisOn starts a redis-server that loads (and saves to) dir/file.
func startRedisOn(t *testing.T, dir, file string) *redis.Client {
	t.Helper()
	srv := redistest.Start(t, "--dir", dir, "--dbfilename", file)
	c := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	t.Cleanup(func() { c.Close() })
	return c
}

// fetchAll is every key of db 0 as redis-server holds it.
func fetchAll(t *testing.T, c *redis.Client) map[string]canon {
	t.Helper()
	ctx := context.Background()
	keys, err := c.Keys(ctx, "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]canon{}
	for _, k := range keys {
		typ := c.Type(ctx, k).Val()
		e := &Entry{Key: []byte(k)}
		switch typ {
		case "string":
			e.Kind, e.Value = KindString, []byte(c.Get(ctx, k).Val())
		case "list":
			e.Kind, e.Members = KindList, bs(c.LRange(ctx, k, 0, -1).Val()...)
		case "set":
			e.Kind, e.Members = KindSet, bs(c.SMembers(ctx, k).Val()...)
		case "hash":
			e.Kind = KindHash
			for f, v := range c.HGetAll(ctx, k).Val() {
				e.Pairs = append(e.Pairs, []byte(f), []byte(v))
			}
		case "zset":
			e.Kind = KindZSet
			for _, z := range c.ZRangeWithScores(ctx, k, 0, -1).Val() {
				e.Scored = append(e.Scored, Scored{Member: []byte(z.Member.(string)), Score: z.Score})
			}
		case "stream":
			continue // no such type here: the tests that make one check it apart
		default:
			t.Fatalf("key %q of type %s", k, typ)
		}
		if at := c.PExpireTime(ctx, k).Val(); at > 0 {
			e.ExpireAt = at.Milliseconds()
		}
		out[k] = canonOf(e)
	}
	return out
}

// load writes es into redis-server with commands.
func load(t *testing.T, c *redis.Client, es []*Entry) {
	t.Helper()
	ctx := context.Background()
	p := c.Pipeline()
	for _, e := range es {
		k := string(e.Key)
		switch e.Kind {
		case KindString:
			p.Set(ctx, k, e.Value, 0)
		case KindList:
			for _, m := range e.Members {
				p.RPush(ctx, k, m)
			}
		case KindSet:
			for _, m := range e.Members {
				p.SAdd(ctx, k, m)
			}
		case KindHash:
			for i := 0; i < len(e.Pairs); i += 2 {
				p.HSet(ctx, k, e.Pairs[i], e.Pairs[i+1])
			}
		case KindZSet:
			for _, m := range e.Scored {
				p.ZAdd(ctx, k, redis.Z{Score: m.Score, Member: m.Member})
			}
		}
		if e.ExpireAt != 0 {
			p.PExpireAt(ctx, k, time.UnixMilli(e.ExpireAt))
		}
	}
	if _, err := p.Exec(ctx); err != nil {
		t.Fatal(err)
	}
}

// redis-server's own dump.rdb of every type, in the encodings it chooses
// (LZF strings among them), reads here as what the server holds.
func TestReadRedisDump(t *testing.T) {
	dir := t.TempDir()
	c := startRedisOn(t, dir, "dump.rdb")
	load(t, c, dataset())
	ctx := context.Background()
	c.XAdd(ctx, &redis.XAddArgs{Stream: "stream", Values: []string{"f", "v"}})
	c.XGroupCreate(ctx, "stream", "g", "0")
	c.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "g", Consumer: "c", Streams: []string{"stream", ">"}})
	want := fetchAll(t, c)
	delete(want, "stream")
	if err := c.Save(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	file, err := os.ReadFile(filepath.Join(dir, "dump.rdb"))
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := readAll(file, Options{})
	if err != nil {
		t.Fatal(err)
	}
	delete(got, "stream")
	compare(t, "redis-server's dump", want, got)
	// The stream, with its group, consumer and pending entry.
	r := NewReader(bytes.NewReader(file), int64(len(file)), Options{})
	for {
		e, err := r.Next()
		if err != nil {
			t.Fatalf("no stream read: %v", err)
		}
		if string(e.Key) != "stream" {
			continue
		}
		st := e.Stream
		if e.Kind != KindStream || len(st.Entries) != 1 || string(st.Entries[0].Fields[1]) != "v" || len(st.Groups) != 1 ||
			len(st.Groups[0].Pending) != 1 || len(st.Groups[0].Consumers) != 1 || st.Groups[0].EntriesRead != 1 ||
			st.EntriesAdded != 1 || st.LastID != st.Entries[0].ID {
			t.Fatalf("stream read as %+v", st)
		}
		break
	}
}

// A file written here loads into redis-server with every key, value and
// deadline, and redis-check-rdb finds nothing wrong with it.
func TestRedisReadsOurs(t *testing.T) {
	dir := t.TempDir()
	es := dataset()
	want := map[string]canon{}
	for _, e := range es {
		want[string(e.Key)] = canonOf(e)
	}
	path := filepath.Join(dir, "ours.rdb")
	if err := os.WriteFile(path, writeFile(t, es), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(redistest.Binary(t, "redis-check-rdb"), path).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "RDB looks OK!") {
		t.Fatalf("redis-check-rdb: %v\n%s", err, out)
	}
	c := startRedisOn(t, dir, "ours.rdb")
	compare(t, "redis-server loading ours", want, fetchAll(t, c))
	// The encodings it chose match the ones ours were written in (but for
	// h:plain, which Redis makes a listpack again when it loads it small).
	ctx := context.Background()
	for k, enc := range map[string]string{"h:small": "listpack", "h:wide": "hashtable",
		"set:ints": "intset", "set:strs": "hashtable", "z:small": "listpack", "z:big": "skiplist", "l:long": "quicklist", "s:int": "int"} {
		if got := c.ObjectEncoding(ctx, k).Val(); got != enc {
			t.Errorf("OBJECT ENCODING %s = %q, want %q", k, got, enc)
		}
	}
}

// The files of older encodings (zipmap, ziplist, quicklists of ziplists,
// RDB version 4) read here as redis-server 7.0 reads them.
func TestReadOldEncodings(t *testing.T) {
	for _, name := range []string{"encodings.rdb", "hash-zipmap.rdb", "hash-ziplist.rdb", "list-quicklist.rdb", "zset-ziplist.rdb"} {
		t.Run(name, func(t *testing.T) {
			file, err := os.ReadFile(filepath.Join("testdata", name))
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, name), file, 0o600); err != nil {
				t.Fatal(err)
			}
			want := fetchAll(t, startRedisOn(t, dir, name))
			if len(want) == 0 {
				t.Fatal("redis-server loaded nothing")
			}
			got, _, err := readAll(file, Options{})
			if err != nil {
				t.Fatal(err)
			}
			compare(t, name, want, got)
		})
	}
}

// A key's DUMP payload is redis-server's byte for byte wherever the value
// is held in the encoding Redis holds it in: strings of every kind
// (integers, short, LZF-compressed or not), listpacks, intsets,
// quicklists, skiplists (written from the tail). The exceptions are
// Redis's hash tables of more than one element, whose order is its dict's,
// and a collection ours keeps big that Redis made small. FUNCTION DUMP's
// payload is Redis's too.
func TestDumpIsRedis(t *testing.T) {
	c := startRedisOn(t, t.TempDir(), "dump.rdb")
	ctx := context.Background()
	es := dataset()
	str := func(k, v string) { es = append(es, &Entry{Key: []byte(k), Kind: KindString, Value: []byte(v)}) }
	str("s:short", "hello")
	str("s:21", "aaaaaaaaaaaaaaaaaaaaa")
	str("s:25", "abcdefghijklmnopqrstuvwxy")
	str("s:int11", "12345678901")
	str("s:minint64", "-9223372036854775808")
	str("s:float", "3.14")
	str("s:x100", strings.Repeat("x", 100))
	str("s:json", `{"user":"someone","roles":["admin","user","guest"],"user2":"someone else"}`)
	load(t, c, es)
	compared := 0
	for _, e := range es {
		k := string(e.Key)
		enc := c.ObjectEncoding(ctx, k).Val()
		size := len(e.Members) + len(e.Pairs)/2 + len(e.Scored)
		if enc == "hashtable" && size > 1 || e.Plain {
			continue
		}
		want, err := c.Dump(ctx, k).Bytes()
		if err != nil {
			t.Fatal(err)
		}
		// The store hands out a sorted set in order, as Redis holds it.
		slices.SortFunc(e.Scored, func(a, b Scored) int {
			return cmp.Or(cmp.Compare(a.Score, b.Score), bytes.Compare(a.Member, b.Member))
		})
		if got := Dump(e); !bytes.Equal(got, want) {
			t.Errorf("DUMP %s (%s, %s):\n\tredis: %q\n\tours:  %q", k, e.Kind, enc, trim(want), trim(got))
		}
		compared++
	}
	if compared < 25 {
		t.Fatalf("only %d payloads compared", compared)
	}
	code := "#!lua name=lib\n-- " + strings.Repeat("padding that compresses, ", 10) + "\nredis.register_function('f', function() return 1 end)"
	if err := c.FunctionLoad(ctx, code).Err(); err != nil {
		t.Fatal(err)
	}
	want, err := c.FunctionDump(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	if got := DumpFunctions([]string{code}); string(got) != want {
		t.Errorf("FUNCTION DUMP:\n\tredis: %q\n\tours:  %q", want, got)
	}
}

// trim cuts a payload for an error message.
func trim(p []byte) []byte { return p[:min(len(p), 200)] }
