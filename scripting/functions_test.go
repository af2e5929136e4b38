package scripting

import (
	"context"
	"encoding/binary"
	"strings"
	"testing"

	"github.com/stampedeless/stampedeless/internal/crc64"

	"github.com/stampedeless/stampedeless/rdb"
)

// A payload's strings may come LZF-compressed from Redis: a literal run,
// then a back reference that overlaps what it copies.
func TestDecodeDumpLZF(t *testing.T) {
	code := "#!lua name=z\n" + strings.Repeat("a", 40)
	// "#!lua name=z\na" as 14 literals, then 39 bytes from distance 1.
	comp := append([]byte{13}, code[:14]...)
	comp = append(comp, 7<<5, 39-2-7, 0)
	var b []byte
	b = append(b, 245, 0xc3, byte(len(comp)), byte(len(code))) // FUNCTION2, LZF, lengths under 64
	b = append(b, comp...)
	b = binary.LittleEndian.AppendUint16(b, rdb.Version)
	b = binary.LittleEndian.AppendUint64(b, crc64.Update(0, b))
	codes, err := decodeDump(b)
	if err != nil || len(codes) != 1 || codes[0] != code {
		t.Fatalf("decodeDump: %q %v", codes, err)
	}
	codes, err = decodeDump(rdb.DumpFunctions([]string{code, "#!lua name=y\n"}))
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
