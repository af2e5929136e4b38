package persist

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stampedeless/stampedeless/engine"
)

// benchStore holds 200,000 strings of 100 bytes.
func benchStore(b *testing.B) *engine.Store {
	st, _ := engine.New(engine.Options{MaxMemory: 1 << 30})
	b.Cleanup(st.Close)
	value := []byte(strings.Repeat("x", 100))
	for i := range 200_000 {
		st.Set([]byte("key:"+strconv.Itoa(i)), value, engine.SetOptions{})
	}
	return st
}

// BenchmarkLoad loads a snapshot of 200,000 strings of 100 bytes (until
// they are served; the eviction policy learns of them after).
func BenchmarkLoad(b *testing.B) {
	path := filepath.Join(b.TempDir(), "dump.rdb")
	if _, err := Save(benchStore(b), path, time.Now()); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		back, _ := engine.New(engine.Options{MaxMemory: 1 << 30})
		if _, err := Load(back, path, time.Now(), LoadOptions{}); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		back.Close()
		b.StartTimer()
	}
}

// BenchmarkSave saves 200,000 strings of 100 bytes.
func BenchmarkSave(b *testing.B) {
	st := benchStore(b)
	path := filepath.Join(b.TempDir(), "dump.rdb")
	b.ResetTimer()
	for range b.N {
		if _, err := Save(st, path, time.Now()); err != nil {
			b.Fatal(err)
		}
	}
}

// collectionStore holds 100,000 of each of a hash of 8 fields, a set of 8
// members, a sorted set of 8 members and a list of 8 elements, each
// member of 10 bytes: a snapshot of collections, in the compact encodings.
func collectionStore(b *testing.B) *engine.Store {
	st, _ := engine.New(engine.Options{MaxMemory: 2 << 30})
	b.Cleanup(st.Close)
	const n, members = 100_000, 8
	pairs, ms := make([][]byte, 0, 2*members), make([][]byte, 0, members)
	zs := make([]engine.ScoreMember, 0, members)
	for i := range members {
		m := []byte("member:" + strconv.Itoa(100+i))
		ms = append(ms, m)
		pairs = append(pairs, m, []byte("value:"+strconv.Itoa(1000+i)))
		zs = append(zs, engine.ScoreMember{Member: m, Score: float64(i)})
	}
	for i := range n {
		k := strconv.Itoa(i)
		st.HSet([]byte("h:"+k), pairs)
		st.SAdd([]byte("s:"+k), ms)
		st.ZAdd([]byte("z:"+k), engine.ZAddOptions{}, zs)
		st.LPush([]byte("l:"+k), ms, false, false)
	}
	return st
}

// BenchmarkLoadCollections loads a snapshot of 400,000 small collections
// (collectionStore). With STAMPEDELESS_BENCH_RDB set to a path, the file
// is also written there, to time a server's restart from it.
func BenchmarkLoadCollections(b *testing.B) {
	path := filepath.Join(b.TempDir(), "dump.rdb")
	if _, err := Save(collectionStore(b), path, time.Now()); err != nil {
		b.Fatal(err)
	}
	if dst := os.Getenv("STAMPEDELESS_BENCH_RDB"); dst != "" {
		if f, err := os.ReadFile(path); err == nil {
			os.WriteFile(dst, f, 0o600)
		}
	}
	b.ResetTimer()
	for range b.N {
		back, _ := engine.New(engine.Options{MaxMemory: 2 << 30})
		if res, err := Load(back, path, time.Now(), LoadOptions{}); err != nil || res.Keys != 400_000 {
			b.Fatal(res, err)
		}
		b.StopTimer()
		back.Close()
		b.StartTimer()
	}
}
