package rdb

import "testing"

// The check value of Redis's own test (src/crc64.c, crc64Test).
func TestCRC64Jones(t *testing.T) {
	if got := crcUpdate(0, []byte("123456789")); got != 0xe9c6d914c4b8d9ca {
		t.Fatalf("crc64(123456789) = %#x, want 0xe9c6d914c4b8d9ca", got)
	}
	// Incremental updates agree with one update.
	if a, b := crcUpdate(crcUpdate(0, []byte("1234")), []byte("56789")), crcUpdate(0, []byte("123456789")); a != b {
		t.Fatalf("incremental %#x != whole %#x", a, b)
	}
}
