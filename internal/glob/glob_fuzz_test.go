package glob

import (
	"strings"
	"testing"

	"github.com/stampedeless/stampedeless/internal/redistest"
)

// refMatch is Redis's stringmatchlen (util.c) written out plainly, with its
// recursion for '*', its cut-off once a star's rest failed everywhere
// (skipLonger, which keeps it from taking exponential time) and its limit
// on nesting, as the reference that Match must agree with.
func refMatch(pattern []byte, subject string) bool {
	var skipLonger bool
	return refMatchAt(pattern, subject, 0, &skipLonger)
}

func refMatchAt(p []byte, s string, nesting int, skipLonger *bool) bool {
	if nesting > maxStarNesting {
		return false
	}
	// at reads the pattern as the C code does: past its end is a NUL.
	at := func(i int) byte {
		if i < len(p) {
			return p[i]
		}
		return 0
	}
	for len(p) > 0 && len(s) > 0 {
		switch p[0] {
		case '*':
			for len(p) > 1 && p[1] == '*' {
				p = p[1:]
			}
			if len(p) == 1 {
				return true
			}
			for ; len(s) > 0; s = s[1:] {
				if refMatchAt(p[1:], s, nesting+1, skipLonger) {
					return true
				}
				if *skipLonger {
					return false
				}
			}
			*skipLonger = true
			return false
		case '?':
			s = s[1:]
		case '[':
			p = p[1:]
			not := at(0) == '^'
			if not {
				p = p[1:]
			}
			match := false
			for {
				if at(0) == '\\' && len(p) >= 2 {
					p = p[1:]
					match = match || p[0] == s[0]
				} else if len(p) > 0 && p[0] == ']' {
					break
				} else if len(p) == 0 {
					p = []byte{0} // the C code steps back onto the pattern's end
					break
				} else if len(p) >= 3 && p[1] == '-' {
					lo, hi := p[0], p[2]
					if lo > hi {
						lo, hi = hi, lo
					}
					match = match || s[0] >= lo && s[0] <= hi
					p = p[2:]
				} else {
					match = match || p[0] == s[0]
				}
				p = p[1:]
			}
			if match == not {
				return false
			}
			s = s[1:]
		case '\\':
			if len(p) >= 2 {
				p = p[1:]
			}
			fallthrough
		default:
			if p[0] != s[0] {
				return false
			}
			s = s[1:]
		}
		p = p[1:]
		if len(s) == 0 {
			for len(p) > 0 && p[0] == '*' {
				p = p[1:]
			}
			break
		}
	}
	return len(p) == 0 && len(s) == 0
}

// FuzzMatch: Match agrees with the reference on every pattern and subject.
func FuzzMatch(f *testing.F) {
	for _, tc := range globCases {
		f.Add(tc.pattern, tc.subject)
	}
	f.Add("[a-]x", "ax")
	f.Add("[^", "q")
	f.Add("a\\", "a\\")
	f.Add(strings.Repeat("*a", maxStarNesting+1), strings.Repeat("a", maxStarNesting+1))
	f.Fuzz(func(t *testing.T, pattern, subject string) {
		if got, want := Match([]byte(pattern), subject), refMatch([]byte(pattern), subject); got != want {
			t.Fatalf("Match(%q, %q) = %v, Redis's stringmatchlen %v", pattern, subject, got, want)
		}
	})
}

// Redis gives up on a pattern once '*' recursion nests past 1000: the
// 1001st star (not the last thing in the pattern) matches nothing. A real
// redis-server agrees with Match on both sides of the limit.
func TestMatchStarNestingAgainstRedis(t *testing.T) {
	if testing.Short() {
		t.Skip("starts redis-server")
	}
	conn := startRedis(t, redistest.Binary(t, "redis-server"))
	key := strings.Repeat("a", maxStarNesting+2)
	if _, err := conn.pipeline([][]string{{"SET", key, "v"}}); err != nil {
		t.Fatal(err)
	}
	for _, stars := range []int{maxStarNesting, maxStarNesting + 1} {
		for _, tail := range []string{"", "*"} {
			pattern := strings.Repeat("*a", stars) + tail
			replies, err := conn.pipeline([][]string{{"KEYS", pattern}})
			if err != nil {
				t.Fatal(err)
			}
			want := len(replies[0]) == 1
			if got := Match([]byte(pattern), key); got != want {
				t.Errorf("%d stars, tail %q: Match = %v, redis-server %v", stars, tail, got, want)
			}
		}
	}
}
