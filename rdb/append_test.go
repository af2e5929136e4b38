package rdb

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"testing/iotest"
)

// bigDataset is dataset with strings past the reader's buffer: one that
// does not compress and one that does (its compressed bytes fit).
func bigDataset() []*Entry {
	rng := rand.New(rand.NewPCG(3, 4))
	random := make([]byte, 3*sourceBuffer/2)
	for i := range random {
		random[i] = byte(rng.UintN(256))
	}
	return append(dataset(),
		&Entry{Key: []byte("s:huge"), Kind: KindString, Value: random},
		&Entry{Key: []byte("s:hugetext"), Kind: KindString, Value: []byte(strings.Repeat("ab", sourceBuffer))},
		&Entry{Key: []byte("s:after"), Kind: KindString, Value: []byte("the key after")})
}

func canons(es []*Entry) map[string]canon {
	out := map[string]canon{}
	for _, e := range es {
		out[string(e.Key)] = canonOf(e)
	}
	return out
}

// NextAppend decodes what Next does, and the slices of entries read
// before stay valid as the buffer grows.
func TestNextAppend(t *testing.T) {
	es := bigDataset()
	file := writeFile(t, es)
	r := NewReader(bytes.NewReader(file), int64(len(file)), Options{})
	var got []*Entry
	buf := make([]byte, 0, 16)
	for {
		e := &Entry{}
		var err error
		buf, err = r.NextAppend(e, buf)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, e)
	}
	compare(t, "NextAppend", canons(es), canons(got))
	if r.SizeHint() != uint64(len(es)) {
		t.Errorf("SizeHint %d, want %d", r.SizeHint(), len(es))
	}
}

// The reader's buffering is the same whatever sizes its reads come in.
func TestReadInPieces(t *testing.T) {
	es := bigDataset()
	file := writeFile(t, es)
	for name, in := range map[string]io.Reader{
		"one byte": iotest.OneByteReader(bytes.NewReader(file)),
		"half":     iotest.HalfReader(bytes.NewReader(file)),
	} {
		r := NewReader(in, -1, Options{})
		var got []*Entry
		for {
			e, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			got = append(got, e)
		}
		compare(t, name, canons(es), canons(got))
	}
}

// A file cut inside a string longer than the buffer, of a size the reader
// is not told, is refused as truncated; one byte changed in it fails the
// checksum.
func TestBigStringTruncated(t *testing.T) {
	file := writeFile(t, bigDataset())
	at := bytes.Index(file, []byte("s:huge"))
	for _, n := range []int{at + 100, at + sourceBuffer, at + sourceBuffer + 1, at + 3*sourceBuffer/2 - 1} {
		r := NewReader(bytes.NewReader(file[:n]), -1, Options{})
		var err error
		for err == nil {
			_, err = r.Next()
		}
		if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "truncated") {
			t.Errorf("cut at %d: %v, want truncated", n, err)
		}
	}
	bad := bytes.Clone(file)
	bad[at+sourceBuffer+7] ^= 1
	if _, _, err := readAll(bad, Options{}); !errors.Is(err, ErrChecksum) {
		t.Errorf("flipped byte in the big string: %v, want the checksum's error", err)
	}
}
