package engine

import (
	"fmt"
	"testing"
)

// BenchmarkGet measures a read of a string that hits, over 64Ki keys of
// 100-byte values: View (GET's path, no copy) and Get (a copy out).
func BenchmarkGet(b *testing.B) {
	s, err := New(Options{Policy: AllKeysLRU})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(s.Close)
	const n = 1 << 16
	keys := make([][]byte, n)
	value := make([]byte, 100)
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "key:%d", i)
		if _, err := s.Set(keys[i], value, SetOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("view", func(b *testing.B) {
		b.ReportAllocs()
		total := 0
		for i := 0; b.Loop(); i++ {
			if !s.View(keys[i&(n-1)], func(v []byte) { total += len(v) }) {
				b.Fatal("miss")
			}
		}
	})
	b.Run("copy", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if _, ok := s.Get(keys[i&(n-1)]); !ok {
				b.Fatal("miss")
			}
		}
	})
}

// BenchmarkSet measures SET of a 100-byte value: over a key of the same
// size (written in place) and of new keys at a 4 MiB bound, each of which
// evicts (allkeys-lru).
func BenchmarkSet(b *testing.B) {
	value := make([]byte, 100)
	b.Run("overwrite", func(b *testing.B) {
		s, err := New(Options{Policy: AllKeysLRU})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(s.Close)
		const n = 1 << 12
		keys := make([][]byte, n)
		for i := range keys {
			keys[i] = fmt.Appendf(nil, "key:%d", i)
		}
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if _, err := s.Set(keys[i&(n-1)], value, SetOptions{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("at-bound", func(b *testing.B) {
		s, err := New(Options{MaxMemory: 4 << 20, Policy: AllKeysLRU})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(s.Close)
		key := make([]byte, 0, 32)
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			key = fmt.Appendf(key[:0], "key:%d", i)
			if _, err := s.Set(key, value, SetOptions{}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
