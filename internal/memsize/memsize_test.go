package memsize

import (
	"fmt"
	"os"
	"runtime"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"0", 0, true}, {"100", 100, true}, {"1k", 1000, true}, {"1kb", 1024, true}, {"1K", 1000, true},
		{"64MB", 64 << 20, true}, {"2g", 2e9, true}, {"1gb", 1 << 30, true}, {"1Gb", 1 << 30, true}, {"5b", 5, true},
		{"9223372036854775807", 9223372036854775807, true},
		// Redis's memtoull reads no digits as 0.
		{"", 0, true}, {"mb", 0, true}, {"B", 0, true},
		{" 5b", 0, false}, {"5b ", 0, false}, {"-1", 0, false}, {"+1", 0, false}, {"1tb", 0, false},
		{"1.5mb", 0, false}, {"0x10", 0, false}, {"1 gb", 0, false},
		{"9223372036854775807gb", 0, false}, {"9223372036854775808", 0, false},
	} {
		got, err := Parse(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("Parse(%q) = %d, %v; want %d, ok %v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

func TestHuman(t *testing.T) {
	for n, want := range map[int64]string{0: "0B", 1023: "1023B", 1536: "1.50K", 64 << 20: "64.00M", 3 << 40: "3.00T"} {
		if got := Human(n); got != want {
			t.Errorf("Human(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestFormat(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 1000: "1000", 1024: "1kb", 3 << 20: "3mb", 2 << 30: "2gb", 1<<20 + 1: "1048577"} {
		if got := Format(n); got != want {
			t.Errorf("Format(%d) = %q, want %q", n, got, want)
		}
		if back, err := Parse(Format(n)); err != nil || back != n {
			t.Errorf("Parse(Format(%d)) = %d, %v", n, back, err)
		}
	}
}

// Resident reads the kept file again each time: it agrees with a fresh
// read of /proc/self/statm, and sees memory the process touches after the
// first call.
func TestResident(t *testing.T) {
	data, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		t.Skip("no /proc here")
	}
	var size, resident int64
	if _, err := fmt.Sscan(string(data), &size, &resident); err != nil {
		t.Fatalf("statm %q: %v", data, err)
	}
	total, file, ok := Resident()
	if !ok || total <= 0 || file <= 0 || file > total {
		t.Fatalf("Resident = %d, %d, %v", total, file, ok)
	}
	if want := resident * int64(os.Getpagesize()); total < want/2 || total > want*2 {
		t.Fatalf("Resident total %d, statm's resident %d", total, want)
	}
	touched := make([]byte, 64<<20)
	for i := range touched {
		if i%4096 == 0 {
			touched[i] = 1
		}
	}
	again, _, ok := Resident()
	if !ok || again < total+32<<20 {
		t.Fatalf("after touching 64 MiB, Resident %d (was %d)", again, total)
	}
	runtime.KeepAlive(touched)
}
