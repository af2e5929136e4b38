package lzf

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/stampedeless/stampedeless/internal/redistest"
)

// inputs are strings of every kind LZF meets: runs, repeats at every
// distance, nearly random bytes (which do not compress, or barely), text,
// and lengths either side of the bounds (a 32-byte literal run, a 264-byte
// reference, the 8 KB window).
func inputs() [][]byte {
	rng := rand.New(rand.NewPCG(3, 4))
	var out [][]byte
	for _, n := range []int{21, 22, 25, 33, 40, 100, 263, 264, 265, 1000, 8200, 70000} {
		few := make([]byte, n)
		for i := range few {
			few[i] = 'a' + byte(rng.UintN(4))
		}
		noisy := make([]byte, n)
		for i := range noisy {
			noisy[i] = byte(rng.UintN(256))
			if i%37 == 0 && i >= 12 {
				copy(noisy[i-4:i], noisy[i-12:i-8])
			}
		}
		out = append(out, few, noisy,
			bytes.Repeat([]byte("abcdefgh"), n/8+1)[:n],
			bytes.Repeat([]byte{'x'}, n),
			[]byte(fmt.Sprintf("%0*d", n, 7)))
	}
	var text bytes.Buffer
	for i := range 300 {
		fmt.Fprintf(&text, "user:%d name=%q score=%d; ", i, "someone", i*i%97)
	}
	out = append(out, text.Bytes(), text.Bytes()[:50], text.Bytes()[:1500])
	return out
}

// What Compress writes, Decompress reads back, after whatever dst held.
func TestRoundTrip(t *testing.T) {
	compressed := 0
	for _, in := range inputs() {
		c, ok := Compress([]byte("prefix"), in, len(in)-4)
		if !ok {
			continue
		}
		compressed++
		if !bytes.HasPrefix(c, []byte("prefix")) || len(c)-6 > len(in)-4 {
			t.Fatalf("%d bytes compressed to %d, past the limit or over dst", len(in), len(c)-6)
		}
		out, ok := Decompress([]byte("before"), c[6:], len(in))
		if !ok || !bytes.Equal(out[6:], in) || string(out[:6]) != "before" {
			t.Fatalf("%d bytes compressed to %d did not come back", len(in), len(c)-6)
		}
	}
	if compressed < 30 {
		t.Fatalf("only %d inputs compressed", compressed)
	}
	random := make([]byte, 1000)
	for i := range random {
		random[i] = byte(i * 7919 % 251)
	}
	if _, ok := Compress(nil, random, 20); ok {
		t.Error("1000 bytes compressed into 20")
	}
}

func TestDecompressChecks(t *testing.T) {
	// "aaaaaaaaaa": a literal 'a', then a back reference of 9 bytes at
	// distance 1 (7<<5: the length byte follows, 9-2-7 = 0).
	out, ok := Decompress(nil, []byte{0x00, 'a', 7 << 5, 0, 0x00}, 10)
	if !ok || string(out) != "aaaaaaaaaa" {
		t.Fatalf("got %q %v", out, ok)
	}
	for _, bad := range [][]byte{
		{0x05, 'a'},                   // a run cut short
		{0x20, 0x05},                  // a reference before the start
		{0x00, 'a', 0xe0},             // a reference cut short
		{0x00, 'a'},                   // fewer bytes than promised
		{0x00, 'a', 7 << 5, 10, 0x00}, // more bytes than promised
	} {
		if _, ok := Decompress(nil, bad, 10); ok {
			t.Errorf("%x decompressed", bad)
		}
	}
}

// Compress writes what redis-server's lzf_compress writes, and refuses
// where it refuses: each input is set on a real redis-server and its DUMP
// payload read, a string that is either LZF (type 0, then 0xc3, the
// compressed and original lengths, the bytes) or stored plain.
func TestCompressIsRedis(t *testing.T) {
	srv := redistest.Start(t)
	c := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer c.Close()
	ctx := context.Background()
	for i, in := range inputs() {
		key := fmt.Sprint("k", i)
		if err := c.Set(ctx, key, in, 0).Err(); err != nil {
			t.Fatal(err)
		}
		p, err := c.Dump(ctx, key).Bytes()
		if err != nil {
			t.Fatal(err)
		}
		want, isLZF := redisLZF(t, p)
		got, ok := Compress(nil, in, len(in)-4)
		if ok != isLZF || !bytes.Equal(got, want) {
			t.Fatalf("%d bytes (%.20q...): compressed %v to %d bytes, redis-server %v to %d bytes (first difference at %d)",
				len(in), in, ok, len(got), isLZF, len(want), firstDiff(got, want))
		}
	}
}

// redisLZF is the compressed bytes of a DUMP payload of a string, if
// redis-server compressed it.
func redisLZF(t *testing.T, p []byte) ([]byte, bool) {
	t.Helper()
	if p[0] != 0 || p[1] != 0xc3 {
		return nil, false
	}
	b := p[2:]
	clen := readLen(&b)
	readLen(&b)
	return b[:clen], true
}

// readLen reads an RDB length (6, 14 or 32 bits: what a test's lengths
// take).
func readLen(b *[]byte) int {
	p := *b
	switch p[0] >> 6 {
	case 0:
		*b = p[1:]
		return int(p[0])
	case 1:
		*b = p[2:]
		return int(p[0]&0x3f)<<8 | int(p[1])
	}
	*b = p[5:]
	return int(p[1])<<24 | int(p[2])<<16 | int(p[3])<<8 | int(p[4])
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

func BenchmarkCompress(b *testing.B) {
	in := inputs()[len(inputs())-1]
	out := make([]byte, 0, len(in))
	b.ReportAllocs()
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		Compress(out, in, len(in)-4)
	}
}
