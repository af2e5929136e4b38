package redisnum

import (
	"math"
	"strconv"
	"testing"
)

// TestParseInt: Redis's string2ll, exactly the canonical decimal form of
// an int64.
func TestParseInt(t *testing.T) {
	for s, ok := range map[string]bool{"0": true, "-1": true, "9223372036854775807": true, "-9223372036854775808": true,
		"9223372036854775808": false, "-0": false, "007": false, "+1": false, " 1": false, "": false, "1a": false, "-": false,
		// Either side of the 18 digits read without an overflow check.
		"999999999999999999": true, "1000000000000000000": true, "12345678901234567a": false, "1234567890123456 8": false,
		"99999999999999999999": false, "09": false} {
		v, got := ParseInt([]byte(s))
		if got != ok || ok && strconv.FormatInt(v, 10) != s {
			t.Errorf("ParseInt(%q) = %d, %v", s, v, got)
		}
	}
}

// TestStrtod: what glibc's strtod reads of each input, its value and
// whether it sets ERANGE.
func TestStrtod(t *testing.T) {
	for in, want := range map[string]struct {
		v      float64
		n      int
		erange bool
	}{
		"1.5": {1.5, 3, false}, " -2e3x": {-2000, 5, false}, "0x10": {16, 4, false}, "0x1p4": {16, 5, false},
		"0x": {0, 1, false}, "-0x.8": {-0.5, 5, false}, "0X1.8P1": {3, 7, false}, "0x1.": {1, 4, false},
		"inf": {math.Inf(1), 3, false}, "-Infinity": {math.Inf(-1), 9, false}, "infin": {math.Inf(1), 3, false},
		".5": {0.5, 2, false}, "5.": {5, 2, false}, "1e": {1, 1, false}, "1e+": {1, 1, false}, "abc": {0, 0, false},
		"": {0, 0, false}, "-": {0, 0, false}, "+7": {7, 2, false}, "\t\n 3": {3, 4, false}, ".": {0, 0, false},
		// Overflow to ±Inf, underflow to zero, an inexact subnormal:
		// ERANGE; an exact subnormal, and a zero written as one, are not.
		"1e400": {math.Inf(1), 5, true}, "-0x1p2000": {math.Inf(-1), 9, true}, "1e-400": {0, 6, true},
		"3e-320": {3e-320, 6, true}, "0x1p-1074": {0x1p-1074, 9, false}, "0.000e-500": {0, 10, false},
	} {
		v, n, erange := Strtod([]byte(in))
		if v != want.v || n != want.n || erange != want.erange || math.Signbit(v) != math.Signbit(want.v) {
			t.Errorf("Strtod(%q) = %v, %d, %v; want %v, %d, %v", in, v, n, erange, want.v, want.n, want.erange)
		}
	}
	for in, neg := range map[string]bool{"nan(123)z": false, "-NaN": true, "nan(": false} {
		v, n, _ := Strtod([]byte(in))
		if want := len(in) - 1; in == "-NaN" {
			want = 4
			if n != want {
				t.Errorf("Strtod(%q) read %d bytes, want %d", in, n, want)
			}
		} else if in == "nan(" && n != 3 || in == "nan(123)z" && n != 8 {
			t.Errorf("Strtod(%q) read %d bytes", in, n)
		}
		if !math.IsNaN(v) || math.Signbit(v) != neg {
			t.Errorf("Strtod(%q) = %v, sign %v", in, v, math.Signbit(v))
		}
	}
}

// A score as ZADD reads it is read without allocating.
func TestStrtodAllocates(t *testing.T) {
	for _, in := range []string{"1.5", "-12345.678901234567", "inf", "3"} {
		b := []byte(in)
		if n := testing.AllocsPerRun(100, func() { Strtod(b) }); n != 0 {
			t.Errorf("Strtod(%q): %v allocations", in, n)
		}
	}
}

func TestD2String(t *testing.T) {
	for d, want := range map[float64]string{
		0: "0", math.Copysign(0, -1): "-0", 1: "1", -3: "-3", 1.5: "1.5", 0.1: "0.10000000000000001",
		1e17: "100000000000000000", 4611686018427387904: "4611686018427387904", 4611686018427387904 * 2: "9.2233720368547758e+18",
		math.Inf(1): "inf", math.Inf(-1): "-inf", math.NaN(): "nan", 1e300: "1.0000000000000001e+300",
	} {
		if got := string(AppendD2String(nil, d)); got != want {
			t.Errorf("AppendD2String(%v) = %q, want %q", d, got, want)
		}
	}
}

func TestShortest(t *testing.T) {
	for d, want := range map[float64]string{
		0: "0", math.Copysign(0, -1): "-0", 1: "1", -3: "-3", 0.1: "0.1", 1.5: "1.5", 1e15: "1e+15",
		1e17: "1e+17", 1e20: "1e+20", 1e21: "1e+21", 123456789e20: "1.23456789e+28",
		1e22: "1e+22", 0.001: "0.001", 1e-7: "1e-7", 1.5e-7: "1.5e-7", 0.000123: "0.000123", 123.456: "123.456",
		1.0 / 3: "0.3333333333333333", math.Inf(1): "inf", math.Inf(-1): "-inf", math.NaN(): "nan",
		1e300: "1e+300", -1.7976931348623157e308: "-1.7976931348623157e+308", 5e-324: "5e-324", 123e5: "12300000",
	} {
		if got := Shortest(d); got != want {
			t.Errorf("Shortest(%v) = %q, want %q", d, got, want)
		}
	}
}

func TestAppendG(t *testing.T) {
	for _, c := range []struct {
		f    float64
		prec int
		want string
	}{
		{0.1, 17, "0.10000000000000001"}, {1e17, 17, "1e+17"}, {1.0 / 3, 14, "0.33333333333333"}, {100, 14, "100"},
		{math.Inf(-1), 17, "-inf"}, {math.NaN(), 14, "nan"}, {math.Copysign(math.NaN(), -1), 14, "-nan"},
	} {
		if got := string(AppendG(nil, c.f, c.prec)); got != c.want {
			t.Errorf("AppendG(%v, %d) = %q, want %q", c.f, c.prec, got, c.want)
		}
	}
}

func BenchmarkStrtod(b *testing.B) {
	in := []byte("-12345.678901234567")
	b.ReportAllocs()
	for b.Loop() {
		Strtod(in)
	}
}
