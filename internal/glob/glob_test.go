package glob

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stampedeless/stampedeless/internal/redistest"
	"github.com/stampedeless/stampedeless/internal/testwait"
)

// globCases follow Redis's stringmatchlen (util.c), which KEYS, SCAN MATCH
// and every other glob in Redis use.
var globCases = []struct {
	pattern, subject string
	want             bool
}{
	// The empty pattern and the empty subject. stringmatchlen stops as soon
	// as the subject is used up, so an empty subject matches only the empty
	// pattern, not even "*"; KEYS * includes the empty key only because
	// Redis skips matching for a lone "*".
	{"", "", true},
	{"", "a", false},
	{"*", "", false},
	{"**", "", false},
	{"?", "", false},
	{"[a]", "", false},
	{"\\*", "", false},

	{"*", "a", true},
	{"*", "anything at all", true},
	{"**", "ab", true},
	{"?", "a", true},
	{"?", "ab", false},
	{"??", "ab", true},
	{"?*", "a", true},
	{"*?*", "x", true},
	{"a*", "a", true},
	{"a**", "a", true},
	{"a*", "ba", false},
	{"*a", "a", true},
	{"*a", "ba", true},
	{"*a", "ab", false},
	{"abc", "abc", true},
	{"abc", "abcd", false},
	{"abc", "ab", false},

	{"a*b*c", "abc", true},
	{"a*b*c", "aXXbYYc", true},
	{"a*b*c", "abcc", true},
	{"a*b*c", "abcabc", true},
	{"a*b*c", "acb", false},
	{"a*b*c", "ab", false},
	{"a*b*c", "aXbXcX", false},
	{"*a*a*a*a*a*a*a*b", strings.Repeat("a", 40), false},
	{"*a*a*a*a*a*a*a*b", strings.Repeat("a", 40) + "b", true},

	{"h?llo", "hello", true},
	{"h?llo", "hallo", true},
	{"h?llo", "hxllo", true},
	{"h?llo", "hllo", false},
	{"h?llo", "heello", false},
	{"h*llo", "hllo", true},
	{"h*llo", "heeeello", true},
	{"h*llo", "hellow", false},
	{"h[ae]llo", "hello", true},
	{"h[ae]llo", "hallo", true},
	{"h[ae]llo", "hillo", false},
	{"h[^e]llo", "hallo", true},
	{"h[^e]llo", "hbllo", true},
	{"h[^e]llo", "hello", false},
	{"h[^e]llo", "hllo", false},
	{"h[a-b]llo", "hallo", true},
	{"h[a-b]llo", "hbllo", true},
	{"h[a-b]llo", "hcllo", false},

	{"[abc]", "b", true},
	{"[abc]", "d", false},
	{"[abc]", "ab", false},
	{"[^abc]", "d", true},
	{"[^abc]", "a", false},
	{"[a-z]", "m", true},
	{"[a-z]", "A", false},
	{"[^a-z]", "A", true},
	{"[^a-z]", "q", false},
	{"[z-a]", "a", true}, // a reversed range is swapped
	{"[z-a]", "m", true},
	{"[z-a]", "z", true},
	{"[z-a]", "A", false},
	{"[0-9a-f]", "c", true},
	{"[0-9a-f]", "7", true},
	{"[0-9a-f]", "g", false},
	{"[a-b-c]", "-", true},
	{"[a-b-c]", "c", true},
	{"[a-b-c]", "b", true},
	{"[-]", "-", true},
	{"[*]", "*", true},
	{"[*]", "a", false},
	{"[?]", "?", true},
	{"[?]", "a", false},
	{"[[]", "[", true},
	{"[]", "]", false}, // an empty class matches nothing
	{"[]", "a", false},
	{"[]]", "]", false},
	{"*[abc]", "xxb", true},
	{"*[abc]", "xxd", false},

	// Unterminated classes end with the pattern.
	{"[abc", "a", true},
	{"[abc", "c", true},
	{"[abc", "ab", false},
	{"[", "[", false},
	{"[^", "x", true},
	{"[^", "", false},
	{"a[", "a", false},

	// Escapes outside classes.
	{"\\*", "*", true},
	{"\\*", "a", false},
	{"a\\*b", "a*b", true},
	{"a\\*b", "axb", false},
	{"\\?", "?", true},
	{"\\?", "a", false},
	{"\\[", "[", true},
	{"\\[a]", "[a]", true},
	{"\\[a]", "a", false},
	{"\\\\", "\\", true},
	{"\\a", "a", true},
	{"a\\", "a\\", true}, // a trailing backslash is literal
	{"a\\", "a", false},
	{"*\\", "x\\", true},

	// Escapes inside classes.
	{"[\\]]", "]", true},
	{"[\\]]", "\\", false},
	{"[\\[]", "[", true},
	{"[\\^a]", "^", true},
	{"[\\^a]", "a", true},
	{"[\\^a]", "b", false},
	{"[^\\]]", "a", true},
	{"[^\\]]", "]", false},
	{"[\\a-z]", "a", true},
	{"[\\a-z]", "-", true},
	{"[\\a-z]", "z", true},
	{"[\\a-z]", "m", false},
	{"[\\*]", "*", true},
	{"[\\", "\\", true},
	{"[\\-]", "-", true},
	{"[\\-]", "\\", false},

	// Bytes, not runes.
	{"?", "é", false},
	{"??", "é", true},
	{"[\x00-\x7f]", "\x80", false},
	{"[\x80-\xff]", "\xc3", true},
}

func TestMatch(t *testing.T) {
	for _, tc := range globCases {
		if got := Match([]byte(tc.pattern), tc.subject); got != tc.want {
			t.Errorf("Match(%q, %q) = %v, want %v", tc.pattern, tc.subject, got, tc.want)
		}
	}
}

func TestMatchPathologicalPatternIsFast(t *testing.T) {
	pattern := []byte(strings.Repeat("*a", 50) + "b")
	subject := strings.Repeat("a", 10000)
	start := time.Now()
	for range 10 {
		if Match(pattern, subject) {
			t.Fatal("matched a subject without b")
		}
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("10 matches took %v; backtracking is not linear", d)
	}
}

func TestIsMatchAll(t *testing.T) {
	if !MatchesAll(nil) || !MatchesAll([]byte("*")) {
		t.Error("MatchesAll(nil) or MatchesAll(\"*\") = false")
	}
	for _, p := range []string{"", "**", "?", "a*", "\\*", "[*]"} {
		if MatchesAll([]byte(p)) {
			t.Errorf("MatchesAll(%q) = true", p)
		}
	}
}

// Redis reads "x-]" in a class as a range from x to ']' and then goes on
// reading the class after the ']', so "[a-]" matches ']', '^', '_', '`' and
// 'a' but not '-'; Match does the same.
func TestMatchDashBeforeClassEnd(t *testing.T) {
	for _, tc := range []struct {
		pattern, subject string
		want             bool
	}{
		{"[a-]", "a", true},
		{"[a-]", "]", true},
		{"[a-]", "_", true},
		{"[a-]", "-", false},
		{"[a-]", "b", false},
		{"[a-]x", "ax", false}, // the class runs to the end of the pattern
	} {
		if got := Match([]byte(tc.pattern), tc.subject); got != tc.want {
			t.Errorf("Match(%q, %q) = %v, want %v", tc.pattern, tc.subject, got, tc.want)
		}
	}
}

// TestMatchAgainstRedis compares Match and Keys with a real redis-server's
// KEYS over a corpus of awkward keys and generated patterns.
func TestMatchAgainstRedis(t *testing.T) {
	if testing.Short() {
		t.Skip("starts redis-server")
	}
	conn := startRedis(t, redistest.Binary(t, "redis-server"))

	r := rand.New(rand.NewPCG(7, 7))
	gen := func(alphabet string, maxLen int) string {
		b := make([]byte, r.IntN(maxLen+1))
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		return string(b)
	}
	subjects := map[string]bool{"": true}
	for _, tc := range globCases {
		subjects[tc.subject] = true
	}
	for range 400 {
		subjects[gen("abcz-]\\[^*?", 5)] = true
	}
	patterns := map[string]bool{}
	for _, tc := range globCases {
		patterns[tc.pattern] = true
	}
	for range 1500 {
		patterns[gen("abcz*?[]^-\\", 7)] = true
	}

	var cmds [][]string
	for k := range subjects {
		cmds = append(cmds, []string{"SET", k, "v"})
	}
	if _, err := conn.pipeline(cmds); err != nil {
		t.Fatal(err)
	}

	var plist []string
	cmds = cmds[:0]
	for p := range patterns {
		plist = append(plist, p)
		cmds = append(cmds, []string{"KEYS", p})
	}
	replies, err := conn.pipeline(cmds)
	if err != nil {
		t.Fatal(err)
	}
	mismatches := 0
	for i, p := range plist {
		want := replies[i]
		slices.Sort(want)
		if p != "*" { // KEYS * does not call stringmatchlen
			var got []string
			for k := range subjects {
				if Match([]byte(p), k) {
					got = append(got, k)
				}
			}
			slices.Sort(got)
			if !slices.Equal(got, want) {
				mismatches++
				t.Errorf("Match(%q) matches %q; redis's KEYS matches %q", p, got, want)
			}
		}
		if mismatches > 20 {
			t.Fatal("too many mismatches")
		}
	}
}

// redisConn is just enough of a RESP client for TestMatchAgainstRedis.
type redisConn struct {
	c net.Conn
	r *bufio.Reader
}

func startRedis(t *testing.T, path string) *redisConn {
	t.Helper()
	dir := t.TempDir()
	sock := filepath.Join(dir, "redis.sock")
	// A unix socket and no TCP port, so the test never collides with
	// another server on this machine.
	cmd := exec.Command(path, "--port", "0", "--unixsocket", sock, "--dir", dir,
		"--save", "", "--appendonly", "no", "--daemonize", "no", "--logfile", filepath.Join(dir, "log"))
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting redis-server: %v", err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	var conn net.Conn
	testwait.For(t, "redis-server to listen on "+sock, func() bool {
		var err error
		conn, err = net.Dial("unix", sock)
		return err == nil
	})
	t.Cleanup(func() { conn.Close() })
	conn.SetDeadline(time.Now().Add(60 * time.Second))
	return &redisConn{c: conn, r: bufio.NewReader(conn)}
}

// pipeline sends cmds and returns each reply as a list of strings.
func (rc *redisConn) pipeline(cmds [][]string) ([][]string, error) {
	w := bufio.NewWriter(rc.c)
	for _, cmd := range cmds {
		fmt.Fprintf(w, "*%d\r\n", len(cmd))
		for _, arg := range cmd {
			fmt.Fprintf(w, "$%d\r\n%s\r\n", len(arg), arg)
		}
	}
	if err := w.Flush(); err != nil {
		return nil, err
	}
	replies := make([][]string, len(cmds))
	for i := range cmds {
		reply, err := rc.read()
		if err != nil {
			return nil, fmt.Errorf("reply to %q: %w", cmds[i], err)
		}
		replies[i] = reply
	}
	return replies, nil
}

func (rc *redisConn) line() (string, error) {
	l, err := rc.r.ReadString('\n')
	if err != nil {
		return "", err
	}
	return strings.TrimSuffix(l, "\r\n"), nil
}

func (rc *redisConn) read() ([]string, error) {
	l, err := rc.line()
	if err != nil {
		return nil, err
	}
	if l == "" {
		return nil, errors.New("empty reply line")
	}
	switch l[0] {
	case '+', ':':
		return []string{l[1:]}, nil
	case '-':
		return nil, errors.New(l[1:])
	case '$':
		s, err := rc.bulk(l)
		return []string{s}, err
	case '*':
		n, err := strconv.Atoi(l[1:])
		if err != nil {
			return nil, err
		}
		out := make([]string, 0, max(n, 0))
		for range n {
			l, err := rc.line()
			if err != nil {
				return nil, err
			}
			s, err := rc.bulk(l)
			if err != nil {
				return nil, err
			}
			out = append(out, s)
		}
		return out, nil
	}
	return nil, fmt.Errorf("unexpected reply %q", l)
}

func (rc *redisConn) bulk(header string) (string, error) {
	if header == "" || header[0] != '$' {
		return "", fmt.Errorf("expected a bulk string, got %q", header)
	}
	n, err := strconv.Atoi(header[1:])
	if err != nil || n < 0 {
		return "", fmt.Errorf("bad bulk header %q", header)
	}
	buf := make([]byte, n+2)
	if _, err := io.ReadFull(rc.r, buf); err != nil {
		return "", err
	}
	return string(buf[:n]), nil
}
