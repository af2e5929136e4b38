// Package redisnum reads and writes numbers as Redis does: its integers
// (string2ll), C's strtod as glibc implements it, and the ways Redis
// prints a double (d2string, printf's %.<n>g, fpconv_dtoa's shortest
// form). Each is written once here, for the commands, the RDB format and
// the scripts alike; the common cases allocate nothing.
package redisnum

import (
	"math"
	"math/big"
	"strconv"
	"strings"
)

// ParseDigits parses a non-empty run of decimal digits into a uint64,
// refusing anything else and overflow. The stricter parsers build on it.
func ParseDigits(b []byte) (uint64, bool) {
	if len(b) == 0 {
		return 0, false
	}
	var u uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if u > (math.MaxUint64-d)/10 {
			return 0, false
		}
		u = u*10 + d
	}
	return u, true
}

// ParseInt parses a decimal int64 the way Redis's string2ll does: no
// spaces, no '+', no leading zeros, nothing after the digits: exactly the
// canonical form of an int64. Redis reads its protocol's numbers, its
// commands' integer arguments and the strings it may hold as integers
// with it alike.
func ParseInt(b []byte) (int64, bool) {
	if len(b) == 1 && b[0] == '0' {
		return 0, true
	}
	// The usual argument, a positive number of at most 18 digits, cannot
	// overflow: no check per digit.
	if n := len(b); n > 0 && n <= 18 && b[0] > '0' && b[0] <= '9' {
		var v int64
		for _, c := range b {
			if c < '0' || c > '9' {
				return 0, false
			}
			v = v*10 + int64(c-'0')
		}
		return v, true
	}
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) == 0 || b[0] == '0' {
		return 0, false
	}
	u, ok := ParseDigits(b)
	switch {
	case !ok:
		return 0, false
	case !neg && u <= math.MaxInt64:
		return int64(u), true
	case neg && u <= math.MaxInt64+1:
		return int64(-u), true
	}
	return 0, false
}

// Strtod reads the longest prefix of b that glibc's strtod reads: leading
// white space, a sign, then a decimal or hexadecimal ("0x1.8p3") float,
// "inf", "infinity", or "nan" with an optional "(chars)", in any case. It
// returns the value (NaN keeps its sign, as glibc's), how many bytes it
// read (0, with the value 0, if there is no number), and whether strtod
// sets ERANGE: an overflow to ±Inf, or an underflow, a result that is
// zero or subnormal from a number that is not exactly it.
func Strtod(b []byte) (v float64, n int, erange bool) {
	i := 0
	for i < len(b) && IsSpace(b[i]) {
		i++
	}
	start := i
	neg := false
	if i < len(b) && (b[i] == '+' || b[i] == '-') {
		neg = b[i] == '-'
		i++
	}
	switch {
	case matchFold(b[i:], "infinity"):
		return signed(math.Inf(1), neg), i + 8, false
	case matchFold(b[i:], "inf"):
		return signed(math.Inf(1), neg), i + 3, false
	case matchFold(b[i:], "nan"):
		i += 3
		// nan(chars) is read whole when the parenthesis closes.
		if i < len(b) && b[i] == '(' {
			j := i + 1
			for j < len(b) && (isAlnum(b[j]) || b[j] == '_') {
				j++
			}
			if j < len(b) && b[j] == ')' {
				i = j + 1
			}
		}
		return signed(math.NaN(), neg), i, false
	}
	hex := len(b)-i >= 2 && b[i] == '0' && (b[i+1]|0x20) == 'x'
	digit := isDigit
	j := i
	if hex {
		digit, j = isHex, j+2
	}
	mant, nonzero, point := 0, false, false
scan:
	for ; j < len(b); j++ {
		switch c := b[j]; {
		case c == '.' && !point:
			point = true
		case digit(c):
			mant++
			nonzero = nonzero || c != '0'
		default:
			break scan
		}
	}
	if mant == 0 {
		if hex { // "0x" alone: strtod reads the 0
			return signed(0, neg), i + 1, false
		}
		return 0, 0, false
	}
	expChar, hasExp := byte('e'), false
	if hex {
		expChar = 'p'
	}
	if j < len(b) && b[j]|0x20 == expChar {
		k := j + 1
		if k < len(b) && (b[k] == '+' || b[k] == '-') {
			k++
		}
		if k < len(b) && isDigit(b[k]) {
			for k < len(b) && isDigit(b[k]) {
				k++
			}
			j, hasExp = k, true
		}
	}
	text := b[start:j]
	if hex && !hasExp {
		text = append(text[:len(text):len(text)], "p0"...) // strconv wants a hexadecimal's exponent
	}
	v, err := strconv.ParseFloat(string(text), 64)
	if err != nil && !isRangeErr(err) {
		return 0, 0, false
	}
	switch {
	case err != nil: // an overflow
		return v, j, true
	case v == 0:
		return v, j, nonzero
	case math.Abs(v) < 0x1p-1022:
		return v, j, !exact(text, v)
	}
	return v, j, false
}

// exact reports whether text, a number strtod read as the subnormal v, is
// v exactly: then strtod does not flag an underflow.
func exact(text []byte, v float64) bool {
	// Far more bits than a number near a subnormal needs to be told from
	// v, unless it has thousands of digits.
	f, _, err := big.ParseFloat(string(text), 0, 4096, big.ToNearestEven)
	return err == nil && f.Cmp(new(big.Float).SetFloat64(v)) == 0
}

// IsSpace is C's isspace in the C locale.
func IsSpace(c byte) bool { return c == ' ' || c >= '\t' && c <= '\r' }

// Double2LL is Redis's double2ll: d as an int64 if it is an integer
// within ±2^62, where the conversion is exact both ways.
func Double2LL(d float64) (int64, bool) {
	const limit = float64(math.MaxInt64 / 2)
	if d < -limit || d > limit || d != d {
		return 0, false
	}
	n := int64(d)
	return n, float64(n) == d
}

// AppendD2String appends f as Redis 7.0's d2string prints it, the form a
// listpack holds a score in and ZSCAN returns it: nan, inf, -inf, 0, -0,
// an integer without exponent while Double2LL takes it, else %.17g.
func AppendD2String(b []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(b, "nan"...)
	case f == 0 && math.Signbit(f):
		return append(b, "-0"...)
	}
	if n, ok := Double2LL(f); ok {
		return strconv.AppendInt(b, n, 10)
	}
	return AppendG(b, f, 17)
}

// AppendG appends f as C's printf("%.<prec>g") prints it (Redis's
// replies of doubles are %.17g, Lua's tostring %.14g). Go's 'g' follows
// the same rules but for how it spells infinities and NaN.
func AppendG(b []byte, f float64, prec int) []byte {
	switch {
	case math.IsNaN(f):
		if math.Signbit(f) {
			return append(b, "-nan"...)
		}
		return append(b, "nan"...)
	case math.IsInf(f, 1):
		return append(b, "inf"...)
	case math.IsInf(f, -1):
		return append(b, "-inf"...)
	}
	return strconv.AppendFloat(b, f, 'g', prec, 64)
}

// Shortest prints the shortest digits that read back as d, laid out as
// fpconv_dtoa (Redis 7.2's, which 7.2's scripts print numbers with) lays
// them out: plain integers up to 7 trailing zeros past the digits, plain
// decimals down to 6 leading zeros, and otherwise d.ddde±x with no
// exponent padding.
func Shortest(d float64) string {
	if math.IsNaN(d) || math.IsInf(d, 0) || d == 0 {
		return string(AppendG(nil, d, -1))
	}
	// strconv's shortest 'e' form gives the digits and the exponent.
	e := strconv.FormatFloat(math.Abs(d), 'e', -1, 64)
	mant, expText, _ := strings.Cut(e, "e")
	digits := strings.Replace(mant, ".", "", 1)
	exp10, _ := strconv.Atoi(expText)
	nd := len(digits)
	k := exp10 - nd + 1 // value = digits × 10^k
	absExp := exp10
	if absExp < 0 {
		absExp = -absExp
	}
	var b strings.Builder
	if math.Signbit(d) {
		b.WriteByte('-')
	}
	switch {
	case k >= 0 && absExp < nd+7:
		b.WriteString(digits)
		b.WriteString(strings.Repeat("0", k))
	case k < 0 && (k > -7 || absExp < 4):
		offset := nd + k
		if offset <= 0 {
			b.WriteString("0.")
			b.WriteString(strings.Repeat("0", -offset))
			b.WriteString(digits)
		} else {
			b.WriteString(digits[:offset])
			b.WriteByte('.')
			b.WriteString(digits[offset:])
		}
	default:
		b.WriteByte(digits[0])
		if nd > 1 {
			b.WriteByte('.')
			b.WriteString(digits[1:])
		}
		b.WriteByte('e')
		if exp10 < 0 {
			b.WriteByte('-')
		} else {
			b.WriteByte('+')
		}
		b.WriteString(strconv.Itoa(absExp))
	}
	return b.String()
}

func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

func signed(v float64, neg bool) float64 {
	if neg {
		return -v
	}
	return v
}

// matchFold reports whether b starts with word, ignoring ASCII case.
func matchFold(b []byte, word string) bool {
	if len(b) < len(word) {
		return false
	}
	for i := range len(word) {
		if b[i]|0x20 != word[i] {
			return false
		}
	}
	return true
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isHex(c byte) bool   { return isDigit(c) || (c|0x20 >= 'a' && c|0x20 <= 'f') }
func isAlnum(c byte) bool { return isDigit(c) || (c|0x20 >= 'a' && c|0x20 <= 'z') }
