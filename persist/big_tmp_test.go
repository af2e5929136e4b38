package persist

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stampedeless/stampedeless/engine"
)

const bigPath = "/tmp/rs/big.rdb"

func bigStore() *engine.Store {
	st, _ := engine.New(engine.Options{MaxMemory: 4 << 30, OwnsProcess: true})
	return st
}

func TestBigMake(t *testing.T) {
	if os.Getenv("BIG") == "" {
		t.Skip()
	}
	st := bigStore()
	defer st.Close()
	value := []byte(strings.Repeat("x", 100))
	for i := range 1_000_000 {
		st.Set([]byte(fmt.Sprintf("key:%07d", i)), value, engine.SetOptions{})
	}
	t0 := time.Now()
	if _, err := Save(st, bigPath, time.Now()); err != nil {
		t.Fatal(err)
	}
	t.Logf("save %v", time.Since(t0))
}

func BenchmarkBigLoad(b *testing.B) {
	for range b.N {
		back := bigStore()
		t0 := time.Now()
		if _, err := Load(back, bigPath, time.Now(), LoadOptions{}); err != nil {
			b.Fatal(err)
		}
		b.Logf("load %v", time.Since(t0))
		b.StopTimer()
		back.Close()
		b.StartTimer()
	}
}

func BenchmarkBigSave(b *testing.B) {
	st := bigStore()
	defer st.Close()
	value := []byte(strings.Repeat("x", 100))
	for i := range 1_000_000 {
		st.Set([]byte(fmt.Sprintf("key:%07d", i)), value, engine.SetOptions{})
	}
	b.ResetTimer()
	for range b.N {
		if _, err := Save(st, "/tmp/rs/big2.rdb", time.Now()); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkBigLoadSync(b *testing.B) {
	for range b.N {
		back := bigStore()
		t0 := time.Now()
		if _, err := Load(back, bigPath, time.Now(), LoadOptions{}); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		back.Sync()
		b.Logf("load %v, policy fed %v", t1.Sub(t0), time.Since(t1))
		b.StopTimer()
		back.Close()
		b.StartTimer()
	}
}
