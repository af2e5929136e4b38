package resp

import "github.com/stampedeless/stampedeless/internal/redisnum"

// ParseDigits is redisnum.ParseDigits, for the families that read
// Redis's arguments beside the wire: a non-empty run of decimal digits as
// a uint64, refusing anything else and overflow.
func ParseDigits(b []byte) (uint64, bool) { return redisnum.ParseDigits(b) }

// ParseInt is redisnum.ParseInt, Redis's string2ll, for the families that
// read Redis's arguments beside the wire: exactly the canonical form of an
// int64.
func ParseInt(b []byte) (int64, bool) { return redisnum.ParseInt(b) }
