package resp

import (
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
