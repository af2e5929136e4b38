package persist

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stampedeless/stampedeless/engine"
	"github.com/stampedeless/stampedeless/internal/redistest"
	"github.com/stampedeless/stampedeless/loader"
	"github.com/stampedeless/stampedeless/swr"
)

// missingOf is every key f remembers as missing at now, with the end of
// its memory in milliseconds; a key of a database other than 0 is written
// "<db>/<key>".
func missingOf(t *testing.T, f *swr.Filler, now time.Time) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	f.EachMissing(now, func(db int, key string, until time.Time) error {
		if db != 0 {
			key = fmt.Sprintf("%d/%s", db, key)
		}
		out[key] = until.UnixMilli()
		return nil
	})
	return out
}

// The origin's tags of the filled keys and the keys it said are missing
// are saved beside the keys and come back into another Filler on load;
// redis-server loads the same file with every key, value and deadline,
// and redis-check-rdb passes it.
func TestReadThroughStateSaved(t *testing.T) {
	st := newStore(t)
	fill(t, st)
	now := time.Now()
	f := swr.New(swr.Options{Store: st, NegativeTTL: time.Hour})
	freshFill := engine.FillMeta{Loader: "api:", ETag: `"v1"`, LastModified: "Tue, 01 Dec 2026 10:00:00 GMT", LoadTime: 42 * time.Millisecond}
	f.RestoreTags(0, "fill:fresh", freshFill, []string{"product:1", "all"})
	f.RestoreTags(0, "fill:stale", engine.FillMeta{Loader: "api:"}, []string{"all"})
	// Database 3's fill and database 2's missing key, of the same names as
	// database 0's, are their databases' own.
	db3Fill := engine.FillMeta{Loader: "api:", ETag: `"db3"`}
	st.DB(3).Set([]byte("fill:fresh"), []byte("three"), engine.SetOptions{Fill: &db3Fill})
	f.RestoreTags(3, "fill:fresh", db3Fill, []string{"three"})
	// More than one AUX field's worth (missingAuxBytes).
	gone := map[string]int64{"api:gone": now.Add(time.Minute).UnixMilli()}
	for i := range 300 {
		gone[fmt.Sprintf("api:%03d:%s", i, strings.Repeat("x", 300))] = now.Add(time.Hour).UnixMilli()
	}
	for k, until := range gone {
		f.RestoreMissing(0, k, time.UnixMilli(until), now)
	}
	f.RestoreMissing(2, "api:gone", now.Add(2*time.Minute), now)
	gone["2/api:gone"] = now.Add(2 * time.Minute).UnixMilli()
	// A key written since the origin said it was missing is not.
	f.RestoreMissing(0, "api:back", now.Add(time.Hour), now)
	st.Set([]byte("api:back"), []byte("v"), engine.SetOptions{})
	dir := t.TempDir()
	path := filepath.Join(dir, "dump.rdb")
	if _, err := save(st, f, path, now, false); err != nil {
		t.Fatal(err)
	}

	back := newStore(t)
	g := swr.New(swr.Options{Store: back, NegativeTTL: time.Hour})
	if _, err := Load(back, path, now, LoadOptions{ReadThrough: g}); err != nil {
		t.Fatal(err)
	}
	compare(t, "loaded", describe(t, st), describe(t, back))
	for key, want := range map[string][]string{"fill:fresh": {"product:1", "all"}, "fill:stale": {"all"}, "s": nil} {
		env, _ := back.Peek([]byte(key))
		var got []string
		if env.Fill != nil {
			got = g.TagsOf(0, key, *env.Fill)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("tags of %s after the load: %q, want %q", key, got, want)
		}
	}
	if env, _ := back.DB(3).Peek([]byte("fill:fresh")); env.Fill == nil || !reflect.DeepEqual(g.TagsOf(3, "fill:fresh", *env.Fill), []string{"three"}) {
		t.Errorf("database 3's fill after the load: %+v, tags %q", env.Fill, g.TagsOf(3, "fill:fresh", db3Fill))
	}
	if got := missingOf(t, g, now); !reflect.DeepEqual(got, gone) {
		t.Errorf("missing after the load: %v, want %v", got, gone)
	}
	// Loaded without a ReadThrough, the same file holds the same keys.
	plain := newStore(t)
	if _, err := Load(plain, path, now, LoadOptions{}); err != nil {
		t.Fatal(err)
	}
	compare(t, "loaded without read-through state", describe(t, st), describe(t, plain))

	out, err := exec.Command(redistest.Binary(t, "redis-check-rdb"), path).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "RDB looks OK!") {
		t.Fatalf("redis-check-rdb: %v\n%s", err, out)
	}
	srv := redistest.Start(t, "--dir", dir, "--dbfilename", "dump.rdb")
	c := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer c.Close()
	compare(t, "redis-server", describe(t, st), describeRedis(t, c))
	if n := c.DBSize(context.Background()).Val(); n != int64(st.Len()) {
		t.Errorf("redis-server holds %d keys, the store %d", n, st.Len())
	}
}

// A restart with a shorter --negative-ttl remembers a key as missing at
// most that long; one whose memory ended while the server was down is
// forgotten.
func TestMissingRestoredWithinTTL(t *testing.T) {
	st := newStore(t)
	now := time.Now()
	f := swr.New(swr.Options{Store: st, NegativeTTL: time.Hour})
	f.RestoreMissing(0, "long", now.Add(time.Hour), now)
	f.RestoreMissing(0, "short", now.Add(time.Second), now)
	path := filepath.Join(t.TempDir(), "dump.rdb")
	if _, err := save(st, f, path, now, false); err != nil {
		t.Fatal(err)
	}
	later := now.Add(2 * time.Second)
	back := newStore(t)
	g := swr.New(swr.Options{Store: back, NegativeTTL: time.Minute})
	if _, err := Load(back, path, later, LoadOptions{ReadThrough: g}); err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{"long": later.Add(time.Minute).UnixMilli()}
	if got := missingOf(t, g, later); !reflect.DeepEqual(got, want) {
		t.Errorf("missing after the load: %v, want %v", got, want)
	}
}

// The AUX fields of read-through state are hostile input as the rest of
// the file is: any bytes decode or are refused, and what encodeFill wrote
// decodes to what it was given.
func FuzzReadThroughAux(f *testing.F) {
	it := engine.SnapshotItem{Key: []byte("k"), Envelope: engine.Envelope{FreshUntil: 12345, Fill: &engine.FillMeta{Loader: "api:", ETag: `"e"`, LoadTime: 7}}}
	f.Add(encodeFill(&it, nil))
	f.Add(encodeFill(&it, []string{"a", "bb"}))
	f.Add(string([]byte{1, 2, 0, 3, 'k', 'e', 'y'}))
	f.Add(string([]byte{2, 0, 0, 0, 0, 0, 200, 1}))
	f.Fuzz(func(t *testing.T, v string) {
		if st, err := decodeFill(v); err == nil && len(st.tags) > len(v) {
			t.Fatalf("%d tags from %d bytes", len(st.tags), len(v))
		}
		decodeMissing(v, nil)
		tags := strings.Fields(v)
		st, err := decodeFill(encodeFill(&engine.SnapshotItem{Key: []byte(v), Envelope: engine.Envelope{Fill: &engine.FillMeta{ETag: v, LoadTime: 1}}}, tags))
		if err != nil || st.key != v || st.fill == nil || st.fill.ETag != v || len(st.tags) != len(tags) {
			t.Fatalf("round trip of %q: %+v %v", v, st, err)
		}
	})
}

// The loaders registered at run time are saved beside the keys, with their
// settings and headers, and registered again by the load: not the
// defaults, not the removals. One the new allow-list refuses is skipped.
// redis-server loads the file.
func TestLoaderRegistrationsSaved(t *testing.T) {
	st := newStore(t)
	fill(t, st)
	allow := func(specs ...string) *loader.AllowList {
		a, err := loader.ParseAllowList(specs)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	regs := loader.NewRegistry(loader.Options{Allow: allow("127.0.0.1:1", "127.0.0.1:2")})
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(regs.RegisterDefault(loader.Config{Prefix: "def:", URL: "http://127.0.0.1:1/d/{key}"}))
	must(regs.Register(loader.Config{Prefix: "api:", URL: "http://127.0.0.1:1/api/{key}", Timeout: 250 * time.Millisecond,
		Concurrency: 3, Headers: []loader.Header{{Name: "Authorization", Value: "Bearer s3cret"}, {Name: "X-A", Value: "1"}}}))
	must(regs.Register(loader.Config{Prefix: "bulk:", URL: "http://127.0.0.1:2/bulk", Batch: 50}))
	must(regs.Register(loader.Config{Prefix: "gone:", URL: "http://127.0.0.1:1/g/{key}"}))
	if _, err := regs.Unregister("gone:"); err != nil {
		t.Fatal(err)
	}
	f := swr.New(swr.Options{Store: st, Loaders: regs})
	dir := t.TempDir()
	path := filepath.Join(dir, "dump.rdb")
	now := time.Now()
	if _, err := save(st, f, path, now, false); err != nil {
		t.Fatal(err)
	}

	listed := func(r *loader.Registry) map[string]loader.Info {
		out := map[string]loader.Info{}
		for _, i := range r.List() {
			i.Stats = loader.Stats{}
			out[i.Prefix] = i
		}
		return out
	}
	back := loader.NewRegistry(loader.Options{Allow: allow("127.0.0.1:1", "127.0.0.1:2")})
	g := swr.New(swr.Options{Store: newStore(t), Loaders: back})
	if _, err := Load(newStore(t), path, now, LoadOptions{ReadThrough: g}); err != nil {
		t.Fatal(err)
	}
	want := listed(regs)
	delete(want, "def:")
	if got := listed(back); !reflect.DeepEqual(got, want) {
		t.Errorf("loaders after the load:\n%+v\nwant\n%+v", got, want)
	}
	// The header values came back: the restored state is the saved one.
	if got, want := string(back.State()), string(regs.State()); got != want {
		t.Errorf("state after the load %q, want %q", got, want)
	}

	// A narrower allow-list: bulk: is refused and skipped, api: restored.
	narrow := loader.NewRegistry(loader.Options{Allow: allow("127.0.0.1:1")})
	if _, err := Load(newStore(t), path, now, LoadOptions{ReadThrough: swr.New(swr.Options{Store: newStore(t), Loaders: narrow})}); err != nil {
		t.Fatal(err)
	}
	if got := narrow.List(); len(got) != 1 || got[0].Prefix != "api:" {
		t.Errorf("loaders restored under a narrower --loader-allow: %+v, want api: alone", got)
	}

	// Without registrations (or from a file written before them) none is
	// restored, and the load is as before.
	empty := loader.NewRegistry(loader.Options{})
	plainPath := filepath.Join(t.TempDir(), "dump.rdb")
	if _, err := save(st, swr.New(swr.Options{Store: st, Loaders: empty}), plainPath, now, false); err != nil {
		t.Fatal(err)
	}
	other := loader.NewRegistry(loader.Options{})
	res, err := Load(newStore(t), plainPath, now, LoadOptions{ReadThrough: swr.New(swr.Options{Store: newStore(t), Loaders: other})})
	if err != nil || res.Keys != st.Len() || len(other.List()) != 0 {
		t.Errorf("a file without registrations: %+v, %v, loaders %v", res, err, other.List())
	}

	srv := redistest.Start(t, "--dir", dir, "--dbfilename", "dump.rdb")
	c := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer c.Close()
	if n := c.DBSize(context.Background()).Val(); n != int64(st.Len()) {
		t.Errorf("redis-server holds %d keys, the store %d", n, st.Len())
	}
}
