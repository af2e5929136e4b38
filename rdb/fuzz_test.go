package rdb

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stampedeless/stampedeless/internal/crc64"
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

// FuzzDump feeds ParseDump hostile payloads (with a valid footer added,
// so the value decoder is what is fuzzed): an error of ErrDumpPayload,
// ErrCorrupt or an *UnsupportedError, or a value that Dump writes back
// into a payload that parses to the same value.
func FuzzDump(f *testing.F) {
	for _, e := range dataset() {
		if len(Dump(e)) < 4096 {
			f.Add(Dump(e)[:len(Dump(e))-dumpFooter])
		}
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		p := append(append([]byte(nil), body...), Version, 0)
		p = append(p, make([]byte, 8)...)
		crc := crc64.Update(0, p[:len(p)-8])
		for i := range 8 {
			p[len(p)-8+i] = byte(crc >> (8 * i))
		}
		e, err := ParseDump(p, 1<<20)
		var unsupported *UnsupportedError
		switch {
		case err == nil:
		case errors.Is(err, ErrDumpPayload), errors.Is(err, ErrCorrupt), errors.As(err, &unsupported):
			return
		default:
			t.Fatalf("error of no known kind: %v", err)
		}
		if e.Kind == KindSet || e.Kind == KindHash {
			return // duplicates, which the store refuses, would not survive the trip
		}
		again, err := ParseDump(Dump(e), 1<<20)
		if err != nil {
			t.Fatalf("our own dump of %v does not parse: %v", canonOf(e), err)
		}
		if a, b := canonOf(e), canonOf(again); !equalCanon(a, b) {
			t.Fatalf("round trip changed the value:\n%v\n%v", a, b)
		}
	})
}
