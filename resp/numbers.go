package resp

import "math"

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

// signed applies an optional leading '-' to what parse makes of the rest,
// keeping the result within int64.
func signed(b []byte, parse func([]byte) (uint64, bool)) (int64, bool) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	u, ok := parse(b)
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

// ParseInt parses a decimal int64 the way Redis's string2ll does: no
// spaces, no '+', no leading zeros, nothing after the digits. Redis reads
// its protocol's numbers and its commands' integer arguments with it alike.
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
	return signed(b, func(digits []byte) (uint64, bool) {
		if len(digits) == 0 || digits[0] == '0' {
			return 0, false
		}
		return ParseDigits(digits)
	})
}
