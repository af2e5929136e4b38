package crc64

import "testing"

// The check value of Redis's own test (src/crc64.c, crc64Test).
func TestRedisCheckValue(t *testing.T) {
	if got := Update(0, []byte("123456789")); got != 0xe9c6d914c4b8d9ca {
		t.Fatalf("crc64(123456789) = %#x, want 0xe9c6d914c4b8d9ca", got)
	}
	// Incremental updates agree with one update.
	if a, b := Update(Update(0, []byte("1234")), []byte("56789")), Update(0, []byte("123456789")); a != b {
		t.Fatalf("incremental %#x != whole %#x", a, b)
	}
}

// The sliced update agrees with the bytewise one at every length and
// alignment.
func TestSlicedAgreesWithBytewise(t *testing.T) {
	p := make([]byte, 300)
	for i := range p {
		p[i] = byte(i*131 + 7)
	}
	bytewise := func(crc uint64, p []byte) uint64 {
		for _, b := range p {
			crc = tables[0][byte(crc)^b] ^ crc>>8
		}
		return crc
	}
	for start := range 9 {
		for end := start; end <= len(p); end += 7 {
			if got, want := Update(0x1234, p[start:end]), bytewise(0x1234, p[start:end]); got != want {
				t.Fatalf("crc of p[%d:%d] = %#x, bytewise %#x", start, end, got, want)
			}
		}
	}
}
