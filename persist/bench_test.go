package persist

import (
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
