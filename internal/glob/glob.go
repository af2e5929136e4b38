package glob

// Match reports whether subject matches the glob pattern with Redis's rules:
// '*' matches any run of bytes, '?' any one byte, '[abc]', '[^abc]' and
// '[a-z]' a byte from a set, and '\' makes the next byte literal.
func Match(pattern []byte, subject string) bool {
	// Redis stops matching once the subject is used up, skipping trailing
	// stars only after a byte was matched, so an empty subject matches the
	// empty pattern alone: not even "*" (KEYS * includes the empty key only
	// because it skips matching, as MatchesAll does here).
	if len(subject) == 0 {
		return len(pattern) == 0
	}
	p, s := 0, 0
	// Where to resume after the most recent '*': the pattern position after
	// it, and the subject position it has absorbed up to.
	starP, starS := -1, 0
	stars := 0 // runs of '*' passed, which nest in Redis's recursion
	for s < len(subject) {
		if p < len(pattern) {
			switch pattern[p] {
			case '*':
				for p < len(pattern) && pattern[p] == '*' {
					p++
				}
				if p == len(pattern) {
					return true
				}
				if stars++; stars > maxStarNesting {
					return false // as Redis, which stops recursing there
				}
				starP, starS = p, s
				continue
			case '?':
				p++
				s++
				continue
			case '[':
				if next, ok := matchClass(pattern, p, subject[s]); ok {
					p = next
					s++
					continue
				}
			case '\\':
				if p+1 < len(pattern) {
					if pattern[p+1] == subject[s] {
						p += 2
						s++
						continue
					}
					break
				}
				fallthrough
			default:
				if pattern[p] == subject[s] {
					p++
					s++
					continue
				}
			}
		}
		if starP < 0 {
			return false
		}
		starS++
		p, s = starP, starS
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}

// maxStarNesting is how deep Redis's stringmatchlen lets '*' recurse: a
// pattern needing more runs of '*' than this, before the subject is used
// up and not as its last byte, matches nothing.
const maxStarNesting = 1000

// matchClass matches c against the class starting at pattern[open] == '['
// and returns the position after the class. An unterminated class ends with
// the pattern, as in Redis.
func matchClass(pattern []byte, open int, c byte) (int, bool) {
	p := open + 1
	negate := p < len(pattern) && pattern[p] == '^'
	if negate {
		p++
	}
	matched := false
	for p < len(pattern) && pattern[p] != ']' {
		switch {
		case pattern[p] == '\\' && p+1 < len(pattern):
			p++
			matched = matched || pattern[p] == c
		case p+2 < len(pattern) && pattern[p+1] == '-':
			// As in Redis, "[a-]" is the range from 'a' to ']' (swapped),
			// and the class then runs to the end of the pattern.
			lo, hi := pattern[p], pattern[p+2]
			if lo > hi {
				lo, hi = hi, lo
			}
			matched = matched || (c >= lo && c <= hi)
			p += 2
		default:
			matched = matched || pattern[p] == c
		}
		p++
	}
	if p < len(pattern) {
		p++ // the closing ']'
	}
	return p, matched != negate
}

// MatchesAll reports whether pattern matches every key: nil (no pattern
// given, as for SCAN without MATCH) or "*". An empty pattern is not nil: it
// matches only the empty key, as KEYS "" does in Redis.
func MatchesAll(pattern []byte) bool {
	return pattern == nil || (len(pattern) == 1 && pattern[0] == '*')
}
