package scripting

import (
	"math"
	"strconv"
	"strings"
)

// Number formatting and parsing as Redis and its Lua do it: Lua numbers
// are doubles, and each place that prints one has its own rules.

// double2ll reports whether d is an integer that converts to int64
// without loss, within ±2^62 as Redis's double2ll checks.
func double2ll(d float64) (int64, bool) {
	const limit = float64(math.MaxInt64 / 2)
	if d < -limit || d > limit || d != d {
		return 0, false
	}
	n := int64(d)
	return n, float64(n) == d
}

// toInt64 converts as C's (long long) cast does on x86-64: toward zero,
// and NaN or out-of-range values give the minimum int64.
func toInt64(d float64) int64 {
	if d != d || d >= 1<<63 || d < -(1<<63) {
		return math.MinInt64
	}
	return int64(d)
}

// formatDouble is Redis's d2string: nan, inf, -inf, 0, -0, integers
// printed as integers and the rest as fpconv_dtoa prints them.
func formatDouble(d float64) string {
	switch {
	case math.IsNaN(d):
		return "nan"
	case math.IsInf(d, 1):
		return "inf"
	case math.IsInf(d, -1):
		return "-inf"
	case d == 0:
		if math.Signbit(d) {
			return "-0"
		}
		return "0"
	}
	if n, ok := double2ll(d); ok {
		return strconv.FormatInt(n, 10)
	}
	return dtoa(d)
}

// formatArg is how Redis 7.2 turns a Lua number passed to redis.call
// into a command argument.
func formatArg(d float64) string {
	if n, ok := double2ll(d); ok {
		return strconv.FormatInt(n, 10)
	}
	return dtoa(d)
}

// dtoa prints the shortest digits that read back as d, laid out as
// Redis's fpconv_dtoa lays them out: plain integers up to 7 trailing
// zeros past the digits, plain decimals down to 6 leading zeros, and
// otherwise d.ddde±x with no exponent padding.
func dtoa(d float64) string {
	if math.IsNaN(d) {
		if math.Signbit(d) {
			return "-nan"
		}
		return "nan"
	}
	if math.IsInf(d, 0) {
		if d < 0 {
			return "-inf"
		}
		return "inf"
	}
	neg := math.Signbit(d)
	if d == 0 {
		if neg {
			return "-0"
		}
		return "0"
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
	if neg {
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

// formatG is C's printf("%.<prec>g"), which Lua's tostring (precision
// 14) and cjson's encoder use. Go's 'g' verb follows the same rules but
// for how it spells infinities and NaN.
func formatG(d float64, prec int) string {
	switch {
	case math.IsNaN(d):
		if math.Signbit(d) {
			return "-nan"
		}
		return "nan"
	case math.IsInf(d, 1):
		return "inf"
	case math.IsInf(d, -1):
		return "-inf"
	}
	return strconv.FormatFloat(d, 'g', prec, 64)
}

// strtod reads the longest prefix of s that C's strtod reads: optional
// spaces and sign, then a decimal number with optional exponent, a
// hexadecimal one with optional binary exponent, "inf", "infinity" or
// "nan" (any case). It returns the value and how many bytes it read (0:
// none, and the value 0). Out-of-range values become ±Inf or 0 as strtod
// makes them.
func strtod(s []byte) (float64, int) {
	i := 0
	for i < len(s) && (s[i] == ' ' || (s[i] >= '\t' && s[i] <= '\r')) {
		i++
	}
	start := i
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	if n := matchFold(s[i:], "infinity"); n == 8 || n >= 3 {
		if n != 8 {
			n = 3
		}
		return signed(math.Inf(1), neg), i + n
	}
	if matchFold(s[i:], "nan") == 3 {
		i += 3
		// nan(chars) is read whole when the parenthesis closes.
		if i < len(s) && s[i] == '(' {
			j := i + 1
			for j < len(s) && (isAlnum(s[j]) || s[j] == '_') {
				j++
			}
			if j < len(s) && s[j] == ')' {
				i = j + 1
			}
		}
		return signed(math.NaN(), neg), i
	}
	if i+1 < len(s) && s[i] == '0' && (s[i+1]|0x20) == 'x' {
		if v, n, ok := hexFloat(s[i+2:]); ok {
			return signed(v, neg), i + 2 + n
		}
		// "0x" with no hex digit reads as the 0 before it.
		return signed(0, neg), i + 1
	}
	j, digits := scanMantissa(s, i, isDigit)
	if digits == 0 {
		return 0, 0
	}
	j = scanExponent(s, j, 'e')
	v, err := strconv.ParseFloat(string(s[start:j]), 64)
	if err != nil && !isRangeErr(err) {
		return 0, 0
	}
	return v, j
}

// hexFloat reads hex digits with an optional point and p exponent.
func hexFloat(s []byte) (float64, int, bool) {
	j, digits := scanMantissa(s, 0, isHex)
	if digits == 0 {
		return 0, 0, false
	}
	mant := string(s[:j])
	exp := "p0"
	if k := scanExponent(s, j, 'p'); k > j {
		exp, j = string(s[j:k]), k
	}
	if strings.HasSuffix(mant, ".") {
		mant += "0"
	}
	if strings.HasPrefix(mant, ".") {
		mant = "0" + mant
	}
	v, err := strconv.ParseFloat("0x"+mant+exp, 64)
	if err != nil && !isRangeErr(err) {
		return 0, 0, false
	}
	return v, j, true
}

// scanMantissa reads digits, a point and digits from s[i:], and returns
// where it stopped and how many digits it read.
func scanMantissa(s []byte, i int, digit func(byte) bool) (end, digits int) {
	for i < len(s) && digit(s[i]) {
		i++
		digits++
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && digit(s[i]) {
			i++
			digits++
		}
	}
	return i, digits
}

// scanExponent reads an exponent (the marker, an optional sign, decimal
// digits) at s[i:] and returns where it ends, i when there is none.
func scanExponent(s []byte, i int, marker byte) int {
	if i >= len(s) || s[i]|0x20 != marker {
		return i
	}
	k := i + 1
	if k < len(s) && (s[k] == '+' || s[k] == '-') {
		k++
	}
	if k >= len(s) || !isDigit(s[k]) {
		return i
	}
	for k < len(s) && isDigit(s[k]) {
		k++
	}
	return k
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

// matchFold returns how many leading bytes of s match word, ignoring
// ASCII case.
func matchFold(s []byte, word string) int {
	n := 0
	for n < len(s) && n < len(word) && s[n]|0x20 == word[n] {
		n++
	}
	return n
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isHex(c byte) bool   { return isDigit(c) || (c|0x20 >= 'a' && c|0x20 <= 'f') }
func isAlnum(c byte) bool { return isDigit(c) || (c|0x20 >= 'a' && c|0x20 <= 'z') }
