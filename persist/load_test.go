package persist

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stampedeless/stampedeless/engine"
	"github.com/stampedeless/stampedeless/rdb"
)

// A load whose writes the store refuses stops with the store's error, the
// reader with it, and what was written before stays; progress is
// reported as batches are written.
func TestLoadStopsOnRefusedWrite(t *testing.T) {
	src := newStore(t)
	value := []byte(strings.Repeat("v", 100))
	const keys = 20000
	for i := range keys {
		src.Set(fmt.Appendf(nil, "k:%05d", i), value, engine.SetOptions{})
	}
	path := filepath.Join(t.TempDir(), "dump.rdb")
	if _, err := Save(src, path, time.Now()); err != nil {
		t.Fatal(err)
	}
	var reports []int
	opts := LoadOptions{ProgressEvery: 4096, Progress: func(n int, read, size int64) { reports = append(reports, n) }}
	all := newStore(t)
	res, err := Load(all, path, time.Now(), opts)
	if err != nil || res.Keys != keys || all.Len() != keys {
		t.Fatalf("load: %+v %v, %d keys", res, err, all.Len())
	}
	if len(reports) < 4 {
		t.Errorf("progress reported at %v", reports)
	}
	small, err := engine.New(engine.Options{MaxMemory: 1 << 20, Policy: engine.NoEviction})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(small.Close)
	res, err = Load(small, path, time.Now(), LoadOptions{})
	if !errors.Is(err, engine.ErrOOM) {
		t.Fatalf("load into a full store: %+v %v, want ErrOOM", res, err)
	}
	if n := small.Len(); n == 0 || n >= keys || res.Keys > n {
		t.Errorf("%d keys in the full store, %d reported loaded, of %d", n, res.Keys, keys)
	}
}

// A file whose hash, set or sorted set repeats a member is corrupt, as
// Redis's loader finds it; a list may repeat its elements.
func TestLoadRefusesRepeatedMembers(t *testing.T) {
	dir := t.TempDir()
	for _, e := range []rdb.Entry{
		{Kind: rdb.KindSet, Members: bs("a", "b", "a")},
		{Kind: rdb.KindHash, Pairs: bs("f", "1", "f", "2")},
		{Kind: rdb.KindZSet, Scored: []rdb.Scored{{Member: []byte("m"), Score: 1}, {Member: []byte("m"), Score: 2}}},
		{Kind: rdb.KindList, Members: bs("a", "a")},
	} {
		e.Key = []byte("k")
		path := filepath.Join(dir, e.Kind.String()+".rdb")
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		w := rdb.NewWriter(f)
		w.Header(nil)
		w.SelectDB(0, 1, 0)
		w.Write(&e)
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		f.Close()
		st := newStore(t)
		_, err = Load(st, path, time.Now(), LoadOptions{})
		if e.Kind == rdb.KindList {
			if err != nil || st.Len() != 1 {
				t.Errorf("a list with a repeated element: %v, %d keys", err, st.Len())
			}
			continue
		}
		if !errors.Is(err, rdb.ErrCorrupt) || !errors.Is(err, engine.ErrDuplicateMember) {
			t.Errorf("a %s with a repeated member loaded with %v", e.Kind, err)
		}
	}
}
