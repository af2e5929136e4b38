package rdb

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzReader feeds the reader hostile files: it must end in an error that
// says the file is corrupt or unsupported, or in io.EOF, never panic, and
// never allocate past its bound (MaxValue here is 1 MB, so a run that
// tries runs out of nothing but shows up in the fuzzer's memory).
func FuzzReader(f *testing.F) {
	f.Add(writeFile(f, dataset()[:5]))
	small := []*Entry{
		{Key: []byte("h"), Kind: KindHash, Pairs: bs("a", "1", "b", "-70000")},
		{Key: []byte("s"), Kind: KindSet, Members: bs("1", "5")},
		{Key: []byte("t"), Kind: KindSet, Members: bs("x")},
		{Key: []byte("z"), Kind: KindZSet, Scored: []Scored{{[]byte("m"), 1.5}}},
		{Key: []byte("l"), Kind: KindList, Members: bs("a", "1"), ExpireAt: 1 << 42},
	}
	f.Add(writeFile(f, small))
	names, _ := filepath.Glob("testdata/*.rdb")
	for _, name := range names {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, skip := range []bool{false, true} {
			_, _, err := readAll(b, Options{MaxValue: 1 << 20, SkipUnsupported: skip})
			var unsupported *UnsupportedError
			if err != nil && !errors.Is(err, ErrCorrupt) && !errors.As(err, &unsupported) {
				t.Fatalf("error neither corrupt nor unsupported: %v", err)
			}
		}
	})
}
