package keyspace

import (
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stampedeless/stampedeless/engine"
	"github.com/stampedeless/stampedeless/resp"
)

// FuzzArgParsers runs every argument parser of args.go on the same bytes
// and checks each against a reference: parseInteger is Redis's string2ll
// (exactly the canonical decimal form of an int64), parseCursor is strtoul
// with Redis's checks, parseLongDouble agrees with strconv.ParseFloat to
// within a float64 ulp, and expiryArg never yields a deadline beyond the
// engine's clock.
func FuzzArgParsers(f *testing.F) {
	for _, seed := range []string{
		"0", "-0", "1", "-1", "007", "+5", " 5", "9223372036854775807", "9223372036854775808",
		"-9223372036854775808", "-9223372036854775809", "18446744073709551615", "18446744073709551616",
		"1.5", "-1.5e10", ".5", "5.", "0x1p-2", "0x1.8", "inf", "-Infinity", "nan", "1e4932", "1e-4951",
		"1e-4952", "3.0e", "1_0", "", "-", "1\x002",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		s := string(b)
		n, ok := resp.ParseInt(b)
		ref, err := strconv.ParseInt(s, 10, 64)
		if want := err == nil && strconv.FormatInt(ref, 10) == s; ok != want || ok && n != ref {
			t.Errorf("resp.ParseInt(%q) = %d, %v; string2ll would give %d, %v", s, n, ok, ref, want)
		}

		cur, ok := parseCursor(b)
		cs, _, _ := strings.Cut(s, "\x00")
		wantCur, wantOK := uint64(0), cs == ""
		if digits := strings.TrimLeft(cs, "+-"); cs != "" && len(cs)-len(digits) <= 1 && digits != "" && strings.Trim(digits, "0123456789") == "" {
			u, err := strconv.ParseUint(digits, 10, 64)
			if wantOK = err == nil; wantOK && cs[0] == '-' {
				u = -u
			}
			wantCur = u
		}
		if ok != wantOK || ok && cur != wantCur {
			t.Errorf("parseCursor(%q) = %d, %v; want %d, %v", s, cur, ok, wantCur, wantOK)
		}

		if ld, ok := parseLongDouble(b); ok {
			if ld.IsInf() {
				if !strings.Contains(strings.ToLower(s), "inf") {
					t.Errorf("parseLongDouble(%q) = %v", s, ld)
				}
			} else if ref, err := strconv.ParseFloat(s, 64); err == nil && !strings.ContainsAny(s, "xX_") && ref != 0 && !math.IsInf(ref, 0) && math.Abs(ref) >= 0x1p-1022 {
				got, _ := ld.Float64()
				if ulp := math.Abs(math.Nextafter(ref, math.Inf(1)) - ref); math.Abs(got-ref) > ulp {
					t.Errorf("parseLongDouble(%q) = %v, strconv.ParseFloat %v", s, got, ref)
				}
			}
			formatLongDouble(ld)
		} else if ref, err := strconv.ParseFloat(s, 64); err == nil && ref != 0 && !math.IsInf(ref, 0) && !strings.ContainsAny(s, "xX_") && !strings.HasPrefix(strings.ToLower(strings.TrimLeft(s, "+-")), "in") &&
			strings.Trim(s, "+-.0123456789eE") == "" && len(s) < maxLongDoubleChars {
			t.Errorf("parseLongDouble(%q) refused what strconv.ParseFloat reads as %v", s, ref)
		}

		for _, unit := range []int64{1, 1000} {
			for _, absolute := range []bool{false, true} {
				at, errText := expiryArg(b, unit, absolute, true, "set", time.Now().UnixMilli())
				if errText == "" && (at <= 0 || at > engine.MaxDeadlineMillis*1e6) {
					t.Errorf("expiryArg(%q, %d, %v) = %d", s, unit, absolute, at)
				}
			}
		}
	})
}

// FuzzOptions: the SET, GETEX and EXPIRE option parsers never accept
// options that conflict, and return an expiry value exactly when an
// expiry option was given.
func FuzzOptions(f *testing.F) {
	for _, seed := range []string{"NX EX 10", "xx get keepttl", "EX 1 PX 2", "persist", "PERSIST EX 5", "NX XX", "gt lt", "xx gt", "EX", "exat 1 exat 2"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, line string) {
		var args [][]byte
		for _, w := range strings.Fields(line) {
			args = append(args, []byte(w))
		}
		for _, set := range []bool{true, false} {
			opts, expiry, ok := stringOptions(args, set)
			if !ok {
				continue
			}
			kinds := 0
			for _, o := range []int{optEX, optPX, optEXAT, optPXAT} {
				if opts&o != 0 {
					kinds++
				}
			}
			switch {
			case opts&optNX != 0 && opts&optXX != 0, kinds > 1,
				opts&(optKeepTTL|optPersist) != 0 && kinds > 0,
				(expiry != nil) != (kinds > 0),
				!set && opts&(optNX|optXX|optGet|optKeepTTL) != 0, set && opts&optPersist != 0:
				t.Errorf("stringOptions(%q, set=%v) accepted %b", line, set, opts)
			}
		}
		if _, errText := expireCondition(args); errText != "" && !strings.HasPrefix(errText, "ERR ") {
			t.Errorf("expireCondition(%q) = %q", line, errText)
		}
	})
}
