package persist

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stampedeless/stampedeless/engine"
	"github.com/stampedeless/stampedeless/internal/redistest"
	"github.com/stampedeless/stampedeless/rdb"
)

func newStore(t *testing.T) *engine.Store {
	t.Helper()
	st, err := engine.New(engine.Options{MaxMemory: 256 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	return st
}

func bs(ss ...string) [][]byte {
	out := make([][]byte, len(ss))
	for i, s := range ss {
		out[i] = []byte(s)
	}
	return out
}

// fill writes every type the store has, small and past the compact
// encodings' bounds, some with deadlines.
func fill(t *testing.T, st *engine.Store) {
	t.Helper()
	in := time.Now().Add(time.Hour).UnixNano()
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(st.Set([]byte("s"), []byte("value"), engine.SetOptions{}))
	must(st.Set([]byte("n"), []byte("-12345"), engine.SetOptions{}))
	must(st.Set([]byte("big"), []byte(strings.Repeat("xyz", 100000)), engine.SetOptions{}))
	must(st.Set([]byte("ttl"), []byte("v"), engine.SetOptions{FreshUntil: in, StaleUntil: in}))
	must(st.HSet([]byte("h"), bs("f", "1", "g", "two")))
	var wide, ints [][]byte
	var zs []engine.ScoreMember
	for i := range 700 {
		wide = append(wide, []byte("f"+strconv.Itoa(i)), []byte(strconv.Itoa(i)))
		ints = append(ints, []byte(strconv.Itoa(i*7-100)))
		zs = append(zs, engine.ScoreMember{Member: []byte("m" + strconv.Itoa(i)), Score: float64(i) / 7})
	}
	must(st.HSet([]byte("h:wide"), wide))
	must(st.SAdd([]byte("set:ints"), bs("1", "-2", "300000")))
	must(st.SAdd([]byte("set:strs"), bs("a", "b")))
	must(st.SAdd([]byte("set:many"), ints))
	must(st.ZAdd([]byte("z"), engine.ZAddOptions{}, []engine.ScoreMember{{Member: []byte("a"), Score: 1.5}, {Member: []byte("b"), Score: -3}}))
	must(st.ZAdd([]byte("z:big"), engine.ZAddOptions{}, zs))
	must(st.LPush([]byte("list"), bs("a", "b", "a", "7"), false, false))
	must(st.LPush([]byte("list:big"), ints, false, false))
	// Read-through keys: one fresh for a minute and stale for an hour, with
	// its loader and validators; one already stale (within its grace).
	fresh := time.Now().Add(time.Minute).UnixNano()
	must(st.Set([]byte("fill:fresh"), []byte("body"), engine.SetOptions{FreshUntil: fresh, StaleUntil: in,
		Fill: &engine.FillMeta{Loader: "api:", ETag: `"v1"`, LastModified: "Tue, 01 Dec 2026 10:00:00 GMT", LoadTime: 42 * time.Millisecond}}))
	must(st.Set([]byte("fill:stale"), []byte("old"), engine.SetOptions{FreshUntil: time.Now().Add(-time.Minute).UnixNano(), StaleUntil: in,
		Fill: &engine.FillMeta{Loader: "api:"}}))
	must(st.HSet([]byte("h:ttl"), bs("f", "v")))
	st.Expire([]byte("h:ttl"), in+int64(time.Second), engine.ExpireAlways)
	// A hash that grew past the listpack bounds and shrank stays a
	// hashtable, here and in Redis.
	must(st.HSet([]byte("h:shrunk"), bs("f", strings.Repeat("v", 100))))
	must(st.HSet([]byte("h:shrunk"), bs("f", "v")))
}

// describe is every key of st as one line each: type, deadline in ms,
// contents sorted where order is not the type's.
func describe(t *testing.T, st *engine.Store) map[string]string {
	t.Helper()
	out := map[string]string{}
	st.Snapshot(func(items []engine.SnapshotItem) error {
		for _, it := range items {
			var parts []string
			kind := ""
			switch it.Type {
			case engine.TypeString:
				kind, parts = "string", []string{string(it.Value)}
			case engine.TypeHash:
				kind = "hash"
				for i := 0; i < len(it.Pairs); i += 2 {
					parts = append(parts, string(it.Pairs[i])+"="+string(it.Pairs[i+1]))
				}
				slices.Sort(parts)
			case engine.TypeSet:
				kind = "set"
				for _, m := range it.Members {
					parts = append(parts, string(m))
				}
				slices.Sort(parts)
			case engine.TypeZSet:
				kind = "zset"
				for _, m := range it.Scored {
					parts = append(parts, string(m.Member)+"@"+strconv.FormatFloat(m.Score, 'g', -1, 64))
				}
			case engine.TypeList:
				kind = "list"
				for _, m := range it.Members {
					parts = append(parts, string(m))
				}
			}
			out[string(it.Key)] = line(kind, it.StaleUntil/int64(time.Millisecond), parts)
		}
		return nil
	})
	return out
}

func line(kind string, expireMS int64, parts []string) string {
	s := fmt.Sprintf("%s ttl=%d %d:", kind, expireMS, len(parts))
	for _, p := range parts {
		if len(p) > 40 {
			p = fmt.Sprintf("%s...(%d bytes)", p[:20], len(p))
		}
		s += " " + p
	}
	return s
}

// describeRedis is describe for what a redis-server holds.
func describeRedis(t *testing.T, c *redis.Client) map[string]string {
	t.Helper()
	ctx := context.Background()
	out := map[string]string{}
	for _, k := range c.Keys(ctx, "*").Val() {
		var parts []string
		kind := c.Type(ctx, k).Val()
		switch kind {
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
		case "list":
			parts = c.LRange(ctx, k, 0, -1).Val()
		}
		at := c.PExpireTime(ctx, k).Val()
		ms := int64(0)
		if at > 0 {
			ms = at.Milliseconds()
		}
		out[k] = line(kind, ms, parts)
	}
	return out
}

func compare(t *testing.T, what string, want, got map[string]string) {
	t.Helper()
	for k, w := range want {
		if g := got[k]; g != w {
			t.Errorf("%s: %q:\n got %s\nwant %s", what, k, g, w)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("%s: extra key %q", what, k)
		}
	}
}

func TestSaveLoad(t *testing.T) {
	st := newStore(t)
	fill(t, st)
	path := filepath.Join(t.TempDir(), "dump.rdb")
	res, err := Save(st, path, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if res.Keys != st.Len() || res.Bytes == 0 {
		t.Fatalf("saved %+v of %d keys", res, st.Len())
	}
	back := newStore(t)
	lr, err := Load(back, path, time.Now(), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	compare(t, "loaded", describe(t, st), describe(t, back))
	if lr.Keys != res.Keys {
		t.Errorf("loaded %d keys of %d", lr.Keys, res.Keys)
	}
	// The read-through state came back with the values.
	for _, k := range []string{"fill:fresh", "fill:stale", "ttl", "s"} {
		was, _ := st.Peek([]byte(k))
		now, _ := back.Peek([]byte(k))
		if was.FreshUntil/1e6 != now.FreshUntil/1e6 || was.StaleUntil/1e6 != now.StaleUntil/1e6 || !reflect.DeepEqual(was.Fill, now.Fill) {
			t.Errorf("%s: saved %+v %+v, loaded %+v %+v", k, was, was.Fill, now, now.Fill)
		}
	}
	if enc, _ := back.Encoding([]byte("h:wide")); enc != "hashtable" {
		t.Errorf("h:wide loads as %s", enc)
	}
	// Two hours on, the keys with a deadline are gone.
	later := newStore(t)
	lr, err = Load(later, path, time.Now().Add(2*time.Hour), LoadOptions{})
	if err != nil || lr.Expired != 4 || later.Len() != st.Len()-4 {
		t.Errorf("two hours on: %+v, %v; %d keys", lr, err, later.Len())
	}
}

// The file Save writes loads into redis-server with every key, value and
// deadline, in the encodings the store reports (but for the hash that
// shrank: Redis makes a small hash a listpack again when it loads one, as
// the store does).
func TestRedisLoadsSave(t *testing.T) {
	st := newStore(t)
	fill(t, st)
	dir := t.TempDir()
	if _, err := Save(st, filepath.Join(dir, "dump.rdb"), time.Now()); err != nil {
		t.Fatal(err)
	}
	srv := redistest.Start(t, "--dir", dir, "--dbfilename", "dump.rdb")
	c := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer c.Close()
	compare(t, "redis-server", describe(t, st), describeRedis(t, c))
	for _, k := range []string{"h", "h:wide", "set:ints", "set:strs", "set:many", "z", "z:big"} {
		ours, _ := st.Encoding([]byte(k))
		if theirs := c.ObjectEncoding(context.Background(), k).Val(); theirs != ours {
			t.Errorf("%s: redis-server holds it as %s, the store as %s", k, theirs, ours)
		}
	}
}

// redis-server's own dump loads into the store as redis-server holds it.
func TestLoadRedisDump(t *testing.T) {
	dir := t.TempDir()
	srv := redistest.Start(t, "--dir", dir, "--dbfilename", "dump.rdb")
	c := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer c.Close()
	ctx := context.Background()
	c.Set(ctx, "s", "v", 0)
	c.Set(ctx, "lzf", strings.Repeat("abcd", 1000), time.Hour)
	c.HSet(ctx, "h", "f", "v", "n", "12")
	c.SAdd(ctx, "set", 1, 2, 3)
	c.SAdd(ctx, "strs", "a", "b")
	c.ZAdd(ctx, "z", redis.Z{Score: 2.5, Member: "m"}, redis.Z{Score: -1, Member: "n"})
	if err := c.Save(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	st := newStore(t)
	if _, err := Load(st, filepath.Join(dir, "dump.rdb"), time.Now(), LoadOptions{}); err != nil {
		t.Fatal(err)
	}
	compare(t, "loaded from redis-server", describeRedis(t, c), describe(t, st))
	// A list loads too, in its order, with its deadline.
	c.RPush(ctx, "list", "a", "b", "a")
	c.PExpire(ctx, "list", time.Hour)
	if err := c.Save(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	st = newStore(t)
	if _, err := Load(st, filepath.Join(dir, "dump.rdb"), time.Now(), LoadOptions{}); err != nil {
		t.Fatal(err)
	}
	compare(t, "loaded from redis-server, with a list", describeRedis(t, c), describe(t, st))
}

// A truncated or altered file is refused as corrupt; a save that cannot
// be renamed into place leaves the previous file as it was and no
// temporary file behind.
func TestCorruptAndFailedSave(t *testing.T) {
	st := newStore(t)
	fill(t, st)
	dir := t.TempDir()
	path := filepath.Join(dir, "dump.rdb")
	if _, err := Save(st, path, time.Now()); err != nil {
		t.Fatal(err)
	}
	good, _ := os.ReadFile(path)
	for _, bad := range [][]byte{good[:len(good)/2], good[:len(good)-1], append(slices.Clone(good[:len(good)-9]), good[len(good)-9]^1)} {
		p := filepath.Join(dir, "bad.rdb")
		os.WriteFile(p, bad, 0o600)
		if _, err := Load(newStore(t), p, time.Now(), LoadOptions{}); !errors.Is(err, rdb.ErrCorrupt) {
			t.Errorf("a bad file of %d bytes loaded with %v", len(bad), err)
		}
	}
	os.Remove(filepath.Join(dir, "bad.rdb"))
	// A directory in the way of the rename.
	blocked := filepath.Join(dir, "blocked")
	os.MkdirAll(filepath.Join(blocked, "x"), 0o700)
	if _, err := Save(st, blocked, time.Now()); err == nil {
		t.Fatal("a save over a directory succeeded")
	}
	names, _ := filepath.Glob(filepath.Join(dir, "temp-*"))
	if len(names) != 0 {
		t.Errorf("temporary files left: %v", names)
	}
	if now, _ := os.ReadFile(path); !slices.Equal(now, good) {
		t.Error("the previous file changed")
	}
}

// Every database is saved under its number and loads back into it, here
// and in redis-server, and redis-server's databases load into the store's.
func TestDatabasesSaveAndLoad(t *testing.T) {
	st := newStore(t)
	dbs := []int{0, 3, 15}
	for _, n := range dbs {
		fill(t, st.DB(n))
		if _, err := st.DB(n).Set([]byte("only:"+strconv.Itoa(n)), []byte("v"), engine.SetOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	if _, err := Save(st, filepath.Join(dir, "dump.rdb"), time.Now()); err != nil {
		t.Fatal(err)
	}
	back := newStore(t)
	if _, err := Load(back, filepath.Join(dir, "dump.rdb"), time.Now(), LoadOptions{}); err != nil {
		t.Fatal(err)
	}
	srv := redistest.Start(t, "--dir", dir, "--dbfilename", "dump.rdb")
	for n := range engine.MaxDatabases {
		want := describe(t, st.DB(n))
		compare(t, fmt.Sprintf("database %d loaded", n), want, describe(t, back.DB(n)))
		c := redis.NewClient(&redis.Options{Addr: srv.Addr(), DB: n})
		compare(t, fmt.Sprintf("database %d in redis-server", n), want, describeRedis(t, c))
		c.Close()
	}

	// redis-server's file of several databases.
	ctx := context.Background()
	for _, n := range []int{0, 7} {
		c := redis.NewClient(&redis.Options{Addr: srv.Addr(), DB: n})
		c.FlushDB(ctx)
		c.Set(ctx, "s", "in "+strconv.Itoa(n), time.Hour)
		c.RPush(ctx, "l", n, "x")
		c.Close()
	}
	if err := redis.NewClient(&redis.Options{Addr: srv.Addr()}).Save(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	theirs := newStore(t)
	if _, err := Load(theirs, filepath.Join(dir, "dump.rdb"), time.Now(), LoadOptions{}); err != nil {
		t.Fatal(err)
	}
	for n := range engine.MaxDatabases {
		c := redis.NewClient(&redis.Options{Addr: srv.Addr(), DB: n})
		compare(t, fmt.Sprintf("redis-server's database %d loaded", n), describeRedis(t, c), describe(t, theirs.DB(n)))
		c.Close()
	}
}
