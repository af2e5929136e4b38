package scripting

import (
	"context"
	"encoding/binary"
	"strings"
	"testing"
)

// Redis's crc64 test vector (crc64.c): the Jones polynomial, reflected,
// no inversion.
func TestCRC64Jones(t *testing.T) {
	if got := crc64Jones(0, []byte("123456789")); got != 0xe9c6d914c4b8d9ca {
		t.Fatalf("crc64(123456789) = %#x, want 0xe9c6d914c4b8d9ca", got)
	}
}

// A payload's strings may come LZF-compressed from Redis: a literal run,
// then a back reference that overlaps what it copies.
func TestDecodeDumpLZF(t *testing.T) {
	code := "#!lua name=z\n" + strings.Repeat("a", 40)
	// "#!lua name=z\na" as 14 literals, then 39 bytes from distance 1.
	comp := append([]byte{13}, code[:14]...)
	comp = append(comp, 7<<5, 39-2-7, 0)
	var b []byte
	b = append(b, rdbOpcodeFunction2, 0xc3)
	b = appendRDBLen(b, uint64(len(comp)))
	b = appendRDBLen(b, uint64(len(code)))
	b = append(b, comp...)
	b = binary.LittleEndian.AppendUint16(b, rdbVersion)
	b = binary.LittleEndian.AppendUint64(b, crc64Jones(0, b))
	codes, err := decodeDump(b)
	if err != nil || len(codes) != 1 || codes[0] != code {
		t.Fatalf("decodeDump: %q %v", codes, err)
	}
	codes, err = decodeDump(encodeDump([]string{code, "#!lua name=y\n"}))
	if err != nil || len(codes) != 2 || codes[0] != code {
		t.Fatalf("round trip: %q %v", codes, err)
	}
	b[3] ^= 1
	if _, err := decodeDump(b); err != errBadPayload {
		t.Fatalf("a changed payload: %v", err)
	}
}

// The libraries are bounded by MaxBytes, never evicted: a load past the
// bound is refused and the libraries stay as they were.
func TestLibrariesBounded(t *testing.T) {
	e := New(Options{MaxBytes: 64 << 10})
	ctx := context.Background()
	load := func(name string, pad int) string {
		code := "#!lua name=" + name + "\n-- " + strings.Repeat("x", pad) + "\nredis.register_function('" + name + "', function() return 1 end)"
		r, err := e.FunctionLoad(ctx, []byte(code), false)
		if err != nil {
			t.Fatal(err)
		}
		return string(r)
	}
	if r := load("small", 10); r != "$5\r\nsmall\r\n" {
		t.Fatalf("small: %q", r)
	}
	if r := load("big", 64<<10); r != string(ErrLibrariesFull.Reply()) {
		t.Fatalf("big: %q", r)
	}
	if e.Libraries() != 1 || e.Functions() != 1 || e.LibraryBytes() <= 0 || e.LibraryBytes() > 64<<10 {
		t.Fatalf("after the refused load: %d libraries, %d functions, %d bytes", e.Libraries(), e.Functions(), e.LibraryBytes())
	}
	before := e.LibraryBytes()
	if r, _ := e.Function(ctx, byteArgs([]string{"DELETE", "small"}), 2); string(r) != "+OK\r\n" || e.LibraryBytes() != 0 {
		t.Fatalf("DELETE: %q, %d bytes left of %d", r, e.LibraryBytes(), before)
	}
}

// What lzfCompress writes, lzfDecompress reads back, for inputs with
// long, short, near and far repeats and none.
func TestLZFRoundTrip(t *testing.T) {
	var noisy strings.Builder
	for i := range 3000 {
		noisy.WriteByte(byte(i * 7919 % 251))
		if i%97 == 0 {
			noisy.WriteString("repeated text, repeated text")
		}
	}
	for _, in := range []string{
		strings.Repeat("a", 1000),
		strings.Repeat("abcdefgh", 700) + "tail",
		noisy.String(),
		"#!lua name=x\nredis.register_function('x', function() return 1 end)",
	} {
		comp := lzfCompress([]byte(in), len(in)-4)
		if comp == nil {
			continue // did not shrink: stored raw
		}
		out, ok := lzfDecompress(comp, len(in))
		if !ok || string(out) != in {
			t.Fatalf("round trip of %.20q (%d bytes, %d compressed): %v", in, len(in), len(comp), ok)
		}
	}
	if lzfCompress([]byte(noisy.String()[:40]), 2) != nil {
		t.Fatal("a result longer than outLen")
	}
}
