package persist

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stampedeless/stampedeless/engine"
)

// BenchmarkLoad loads a snapshot of 200,000 strings of 100 bytes.
func BenchmarkLoad(b *testing.B) {
	st, _ := engine.New(engine.Options{MaxMemory: 1 << 30})
	defer st.Close()
	value := []byte(strings.Repeat("x", 100))
	for i := range 200_000 {
		st.Set([]byte("key:"+strconv.Itoa(i)), value, engine.SetOptions{})
	}
	path := filepath.Join(b.TempDir(), "dump.rdb")
	if _, err := Save(st, path, time.Now()); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		back, _ := engine.New(engine.Options{MaxMemory: 1 << 30})
		if _, err := Load(back, path, time.Now(), LoadOptions{}); err != nil {
			b.Fatal(err)
		}
		back.Close()
	}
}
