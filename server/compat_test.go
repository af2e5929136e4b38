package server

// Differential tests: the same commands go to a real redis-server (see
// startRedis) and to our server, and the replies must be identical. Redis
// 7.0 is the reference for every reply text; our server claims 7.2
// semantics, and 7.0 and 7.2 agree on everything compared here (checked
// against both versions' sources). Where they differ, TestCompatRedis72Texts
// checks our server alone against 7.2's texts. Only what our server
// deliberately supports is compared: string keys and database 0. Every
// comparison runs in both protocols: once in RESP2, once on connections that
// switched with HELLO 3, whose replies are compared type for type (maps,
// sets, verbatim strings, nulls). Where our server deliberately answers
// otherwise, the script asserts both replies (csDiverge).
//
// A script stops at its first mismatch, since the keyspaces may differ from
// there on. COMPAT_ALL=1 goes on to list every mismatch; COMPAT_TRACE=1 logs
// every step's replies.
//
// Run: go test -count=1 -run 'Compat|Inline' ./resp/

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stampedeless/stampedeless/commands"
	"github.com/stampedeless/stampedeless/engine"
)

// compatMode says how the replies of a step are compared.
type compatMode int

const (
	compatExact  compatMode = iota // rendered replies are equal
	compatSorted                   // an array compared as a sorted multiset of its elements
	compatPairs                    // a flat array of name/value pairs compared as a set of pairs
	compatScan                     // SCAN iterated to cursor 0; the union of keys is compared
	compatApprox                   // integers within compatTolerance of each other
	compatMasked                   // a flat map with its "id" and "version" values masked (HELLO)
	compatSleep                    // no command: both servers are left alone for a while
	// compatWords: every bulk string's space-separated words compared as a
	// sorted list, for ACL rules, whose single commands Redis lists in its
	// hash table's order.
	compatWords
)

// compatTolerance is how far apart, in milliseconds, two PTTL-like replies
// may be: the servers are asked one after the other, which on a loaded
// two-core machine can be tens of milliseconds apart (a wrong unit or a
// lost deadline is off by far more).
const compatTolerance = 250

type compatStep struct {
	args  []string
	mode  compatMode
	sleep time.Duration
	// redisWant and oursWant, if set, are a deliberate difference from
	// Redis: each server's rendered reply must be exactly its own.
	redisWant, oursWant string
}

type compatScript struct {
	name  string
	steps []compatStep
	// divergence, if set, says why some steps expect replies that differ
	// from Redis's (csDiverge).
	divergence string
}

// cs is a command written as one line, split on spaces.
func cs(line string) compatStep { return compatStep{args: strings.Fields(line)} }

// ca is a command given argument by argument, for empty arguments,
// spaces and binary data.
func ca(args ...string) compatStep { return compatStep{args: args} }

func csSorted(line string) compatStep {
	return compatStep{args: strings.Fields(line), mode: compatSorted}
}
func csPairs(line string) compatStep {
	return compatStep{args: strings.Fields(line), mode: compatPairs}
}
func csScan(line string) compatStep { return compatStep{args: strings.Fields(line), mode: compatScan} }
func csApprox(line string) compatStep {
	return compatStep{args: strings.Fields(line), mode: compatApprox}
}
func csMasked(line string) compatStep {
	return compatStep{args: strings.Fields(line), mode: compatMasked}
}

// csDiverge is a step where our server deliberately answers otherwise than
// Redis: both replies are asserted, as rendered.
func csDiverge(line, redis, ours string) compatStep {
	return compatStep{args: strings.Fields(line), redisWant: redis, oursWant: ours}
}

func csSleep(d time.Duration) compatStep {
	return compatStep{mode: compatSleep, sleep: d}
}

// expandCompatArgs replaces the time placeholders {now+N} (Unix seconds)
// and {nowms+N} (Unix milliseconds), N possibly negative, by their value
// when the step runs, so both servers get the same timestamp.
func expandCompatArgs(args []string) []string {
	out := slices.Clone(args)
	now := time.Now()
	for i, a := range out {
		if !strings.HasPrefix(a, "{now") || !strings.HasSuffix(a, "}") {
			continue
		}
		body := a[1 : len(a)-1]
		base := now.Unix()
		if strings.HasPrefix(body, "nowms") {
			base, body = now.UnixMilli(), body[len("nowms"):]
		} else {
			body = body[len("now"):]
		}
		var off int64
		if body != "" {
			n, err := strconv.ParseInt(strings.TrimPrefix(body, "+"), 10, 64)
			if err != nil {
				panic("bad time placeholder " + a)
			}
			off = n
		}
		out[i] = strconv.FormatInt(base+off, 10)
	}
	return out
}

// compatReply is a parsed RESP2 or RESP3 reply.
type compatReply struct {
	// kind is the type byte: '+', '-', ':', '$', '*' in RESP2, and '_',
	// ',', '#', '(', '=', '!', '%', '~', '>' in RESP3.
	kind byte
	str  string // a line's text, a bulk string's bytes, a verbatim string's text after its format
	// format is a verbatim string's three-letter format ("txt").
	format string
	null   bool
	// elems are an aggregate's elements; a map's are its keys and values
	// alternating.
	elems []compatReply
}

// String renders the reply as harness_test.go's readReply does for RESP2:
// +OK, -ERR ..., :1, "bulk", (nil), [a b ...]; RESP3's types keep their
// type byte: (null), %{k v ...}, ~[a b], >[a b], =txt:"text", ,1.5, #t,
// (123, !"error".
func (r compatReply) String() string {
	switch {
	case r.kind == '$' && r.null:
		return "(nil)"
	case r.kind == '*' && r.null:
		return "(nil array)"
	case r.kind == '_':
		return "(null)"
	case r.kind == '$':
		return strconv.Quote(r.str)
	case r.kind == '!':
		return "!" + strconv.Quote(r.str)
	case r.kind == '=':
		return "=" + r.format + ":" + strconv.Quote(r.str)
	case r.kind == '*':
		return "[" + r.joined() + "]"
	case r.kind == '~', r.kind == '>':
		return string(r.kind) + "[" + r.joined() + "]"
	case r.kind == '%':
		return "%{" + r.joined() + "}"
	}
	return string(r.kind) + r.str
}

func (r compatReply) joined() string {
	parts := make([]string, len(r.elems))
	for i, e := range r.elems {
		parts[i] = e.String()
	}
	return strings.Join(parts, " ")
}

// aggregate reports whether the reply is an array, set or push (map
// excluded), whose elements are a list.
func (r compatReply) aggregate() bool {
	return r.kind == '*' || r.kind == '~' || r.kind == '>'
}

// pairs reports whether the reply is a map, or a flat RESP2 array of names
// and values.
func (r compatReply) pairs() bool {
	return r.kind == '%' || r.kind == '*' && len(r.elems)%2 == 0
}

func readCompatReply(br *bufio.Reader) (compatReply, error) {
	line, err := br.ReadString('\n')
	if err != nil {
		return compatReply{}, err
	}
	if !strings.HasSuffix(line, "\r\n") || len(line) < 3 && line != "_\r\n" {
		return compatReply{}, fmt.Errorf("bad reply line %q", line)
	}
	line = line[:len(line)-2]
	r := compatReply{kind: line[0], str: line[1:]}
	switch r.kind {
	case '+', '-', ':', ',', '#', '(':
		return r, nil
	case '_':
		if r.str != "" {
			return compatReply{}, fmt.Errorf("bad null %q", line)
		}
		r.null = true
		return r, nil
	case '$', '*', '=', '!', '%', '~', '>':
		n, err := strconv.Atoi(r.str)
		if err != nil {
			return compatReply{}, fmt.Errorf("bad length in %q", line)
		}
		r.str = ""
		if n < 0 && (r.kind == '$' || r.kind == '*') {
			r.null = true
			return r, nil
		}
		if n < 0 {
			return compatReply{}, fmt.Errorf("bad length in %q", line)
		}
		switch r.kind {
		case '$', '=', '!':
			buf := make([]byte, n+2)
			if _, err := io.ReadFull(br, buf); err != nil {
				return compatReply{}, err
			}
			r.str = string(buf[:n])
			if r.kind == '=' {
				if len(r.str) < 4 || r.str[3] != ':' {
					return compatReply{}, fmt.Errorf("bad verbatim string %q", r.str)
				}
				r.format, r.str = r.str[:3], r.str[4:]
			}
			return r, nil
		case '%':
			n *= 2
		}
		r.elems = make([]compatReply, n)
		for i := range r.elems {
			if r.elems[i], err = readCompatReply(br); err != nil {
				return compatReply{}, err
			}
		}
		return r, nil
	}
	return compatReply{}, fmt.Errorf("bad reply line %q", line)
}

// compatConn is a raw connection whose failures are results, not fatal:
// a server closing the connection is something to compare.
type compatConn struct {
	nc net.Conn
	br *bufio.Reader
}

func dialCompat(t testing.TB, addr string) *compatConn {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return &compatConn{nc: nc, br: bufio.NewReader(nc)}
}

// closedReply stands for a connection the server closed.
const closedReply = "<connection closed>"

func (c *compatConn) send(s string) error {
	c.nc.SetDeadline(time.Now().Add(10 * time.Second))
	_, err := io.WriteString(c.nc, s)
	return err
}

func (c *compatConn) read() (compatReply, error) {
	c.nc.SetDeadline(time.Now().Add(10 * time.Second))
	return readCompatReply(c.br)
}

func (c *compatConn) do(args ...string) (compatReply, error) {
	if err := c.send(encodeCommand(args...)); err != nil {
		return compatReply{}, err
	}
	return c.read()
}

// renderErr renders a connection failure.
func renderErr(err error) string {
	var ne net.Error
	switch {
	case errors.Is(err, io.EOF), errors.Is(err, net.ErrClosed), errors.Is(err, io.ErrUnexpectedEOF),
		strings.Contains(err.Error(), "connection reset"), strings.Contains(err.Error(), "broken pipe"):
		return closedReply
	case errors.As(err, &ne) && ne.Timeout():
		return "<timeout>"
	}
	return "<error: " + err.Error() + ">"
}

// closed reports whether the server has closed the connection, waiting up
// to wait for it.
func (c *compatConn) closed(wait time.Duration) bool {
	c.nc.SetReadDeadline(time.Now().Add(wait))
	_, err := c.br.ReadByte()
	return err != nil && renderErr(err) == closedReply
}

// run executes one step and renders its result for comparison.
func (c *compatConn) run(mode compatMode, args []string) string {
	if mode == compatScan {
		return c.scanAll(args)
	}
	r, err := c.do(args...)
	if err != nil {
		return renderErr(err)
	}
	switch {
	case mode == compatSorted && r.aggregate():
		parts := make([]string, len(r.elems))
		for i, e := range r.elems {
			parts[i] = e.String()
		}
		slices.Sort(parts)
		return "sorted" + string(r.kind) + "[" + strings.Join(parts, " ") + "]"
	case mode == compatPairs && r.pairs():
		var parts []string
		for i := 0; i < len(r.elems); i += 2 {
			parts = append(parts, r.elems[i].String()+"="+r.elems[i+1].String())
		}
		slices.Sort(parts)
		return "pairs" + string(r.kind) + "[" + strings.Join(parts, " ") + "]"
	case mode == compatWords:
		return sortWords(r).String()
	case mode == compatMasked && r.pairs():
		for i := 0; i < len(r.elems); i += 2 {
			if k := r.elems[i].str; k == "id" || k == "version" {
				r.elems[i+1] = compatReply{kind: '+', str: "<masked>"}
			}
		}
	}
	return r.String()
}

// sortWords returns r with the words of every bulk string in it sorted.
func sortWords(r compatReply) compatReply {
	if r.kind == '$' && !r.null {
		words := strings.Fields(r.str)
		slices.Sort(words)
		r.str = strings.Join(words, " ")
	}
	elems := make([]compatReply, len(r.elems))
	for i, e := range r.elems {
		elems[i] = sortWords(e)
	}
	r.elems = elems
	return r
}

// scanAll runs SCAN (or HSCAN, SSCAN) from the step's cursor until the
// cursor is 0 and renders the union of the keys, or the first error.
func (c *compatConn) scanAll(args []string) string {
	args = slices.Clone(args)
	// SCAN cursor ...; HSCAN and SSCAN key cursor ...: HSCAN's replies are
	// compared as field=value pairs.
	at, step := 1, 1
	if !strings.EqualFold(args[0], "scan") {
		at = 2
	}
	if strings.EqualFold(args[0], "hscan") {
		step = 2
	}
	keys := make(map[string]bool)
	for i := 0; ; i++ {
		if i > 100000 {
			return "<SCAN never returned cursor 0>"
		}
		r, err := c.do(args...)
		if err != nil {
			return renderErr(err)
		}
		if r.kind == '-' {
			if i == 0 {
				return r.String()
			}
			return fmt.Sprintf("<SCAN call %d failed: %s>", i, r)
		}
		if r.kind != '*' || len(r.elems) != 2 || r.elems[0].kind != '$' || r.elems[1].kind != '*' {
			return "<malformed SCAN reply " + r.String() + ">"
		}
		elems := r.elems[1].elems
		for j := 0; j < len(elems); j += step {
			k := elems[j].String()
			if step == 2 && j+1 < len(elems) {
				k += "=" + elems[j+1].String()
			}
			keys[k] = true
		}
		if args[at] = r.elems[0].str; args[at] == "0" {
			break
		}
	}
	sorted := slices.Sorted(func(yield func(string) bool) {
		for k := range keys {
			if !yield(k) {
				return
			}
		}
	})
	return "scan[" + strings.Join(sorted, " ") + "]"
}

// approxEqual reports whether two rendered replies are the same but for
// integers within compatTolerance of each other, at the top or inside an
// aggregate (XPENDING's idle times).
func approxEqual(a, b string) bool {
	ints := regexp.MustCompile(`:-?[0-9]+`)
	if ints.ReplaceAllString(a, ":") != ints.ReplaceAllString(b, ":") {
		return false
	}
	xs, ys := ints.FindAllString(a, -1), ints.FindAllString(b, -1)
	for i := range xs {
		x, err1 := strconv.ParseInt(xs[i][1:], 10, 64)
		y, err2 := strconv.ParseInt(ys[i][1:], 10, 64)
		if err1 != nil || err2 != nil {
			if xs[i] != ys[i] {
				return false
			}
			continue
		}
		if x-y > compatTolerance || y-x > compatTolerance {
			return false
		}
	}
	return true
}

// showArgs renders a command for a failure message.
func showArgs(args []string) string {
	parts := make([]string, len(args))
	for i, a := range args {
		suffix := ""
		if len(a) > 80 {
			a, suffix = a[:40], fmt.Sprintf("...(%d bytes)", len(a))
		}
		if a == "" || strings.ContainsFunc(a, func(r rune) bool { return r <= ' ' || r > '~' || r == '"' }) {
			a = strconv.Quote(a)
		}
		parts[i] = a + suffix
	}
	return strings.Join(parts, " ")
}

// compatPair is one raw connection to each server.
type compatPair struct {
	redis, ours *compatConn
}

// compatProtocols are the protocols every comparison runs in.
var compatProtocols = []int{2, 3}

// forEachProtocol runs f as a subtest per protocol, "RESP2" and "RESP3".
func forEachProtocol(t *testing.T, f func(t *testing.T, proto int)) {
	for _, proto := range compatProtocols {
		t.Run("RESP"+strconv.Itoa(proto), func(t *testing.T) { f(t, proto) })
	}
}

// dialCompatPair connects to both servers; with proto 3, both connections
// switch with HELLO 3, whose replies must agree.
func dialCompatPair(t testing.TB, redisAddr, oursAddr string, proto int) compatPair {
	t.Helper()
	p := compatPair{redis: dialCompat(t, redisAddr), ours: dialCompat(t, oursAddr)}
	if proto == 3 {
		want := p.redis.run(compatMasked, []string{"HELLO", "3"})
		if got := p.ours.run(compatMasked, []string{"HELLO", "3"}); got != want || !strings.HasPrefix(got, "%{") {
			t.Fatalf("HELLO 3:\n\tredis: %s\n\tours:  %s", want, got)
		}
	}
	return p
}

// flush empties both keyspaces.
func (p compatPair) flush(t testing.TB) {
	t.Helper()
	for _, c := range []*compatConn{p.redis, p.ours} {
		if r, err := c.do("FLUSHALL"); err != nil || r.String() != "+OK" {
			t.Fatalf("FLUSHALL: %v %v", r, err)
		}
	}
}

// runCompatScript runs a script in a protocol on a fresh keyspace and fails
// at its first mismatch, since the two keyspaces may differ from there on.
func runCompatScript(t *testing.T, redisAddr, oursAddr string, proto int, sc compatScript) {
	p := dialCompatPair(t, redisAddr, oursAddr, proto)
	p.flush(t)
	runCompatSteps(t, p, sc)
}

// runCompatSteps runs a script's steps on a pair of connections.
func runCompatSteps(t *testing.T, p compatPair, sc compatScript) {
	t.Helper()
	for i, st := range sc.steps {
		if st.mode == compatSleep {
			time.Sleep(st.sleep)
			continue
		}
		args := expandCompatArgs(st.args)
		want := p.redis.run(st.mode, args)
		got := p.ours.run(st.mode, args)
		if compatTrace {
			t.Logf("%s\n\tredis: %s\n\tours:  %s", showArgs(args), want, got)
		}
		var same bool
		switch {
		case st.oursWant != "":
			same = want == st.redisWant && got == st.oursWant
			want = fmt.Sprintf("%s (expected %s)", want, st.redisWant)
			got = fmt.Sprintf("%s (expected %s: %s)", got, st.oursWant, sc.divergence)
		case st.mode == compatApprox:
			same = approxEqual(want, got)
		default:
			same = want == got
		}
		if same {
			continue
		}
		t.Errorf("script %q, step %d: %s\n\tredis: %s\n\tours:  %s", sc.name, i+1, showArgs(args), want, got)
		if !compatAll {
			return
		}
	}
}

func TestCompatScripts(t *testing.T) {
	redisAddr := startRedis(t)
	// A log level, as the CLI sets, so that CONFIG SET loglevel works.
	ts := startServer(t, Options{LogLevel: new(slog.LevelVar)})
	forEachProtocol(t, func(t *testing.T, proto int) {
		for _, sc := range compatScripts() {
			if !t.Run(sc.name, func(t *testing.T) { runCompatScript(t, redisAddr, ts.addr, proto, sc) }) && !answersFlush(ts.addr) {
				t.Fatalf("our server no longer answers FLUSHALL after script %q; the remaining scripts cannot run", sc.name)
			}
		}
	})
}

// answersFlush reports whether the server at addr still answers FLUSHALL,
// which needs every part of the keyspace, within a few seconds.
func answersFlush(addr string) bool {
	nc, err := net.DialTimeout("tcp", addr, 3*time.Second)
	if err != nil {
		return false
	}
	defer nc.Close()
	c := &compatConn{nc: nc, br: bufio.NewReader(nc)}
	if c.send(encodeCommand("FLUSHALL")) != nil {
		return false
	}
	nc.SetDeadline(time.Now().Add(3 * time.Second))
	r, err := readCompatReply(c.br)
	return err == nil && r.String() == "+OK"
}

// startDisposableServer starts a server for a test that may wedge it: its
// shutdown is not waited for, so a stuck connection cannot hang the test.
func startDisposableServer(t *testing.T) string {
	t.Helper()
	store, err := engine.New(engine.Options{MaxMemory: 256 << 20})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(withDefaults(t, Options{Store: store}))
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() {
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if srv.Shutdown(ctx) == nil {
				store.Close()
			}
		}()
	})
	return ln.Addr().String()
}

// TestCompatSetRangeOverflow sends SETRANGE offsets whose sum with the
// value's length overflows int64. Redis refuses them; our server must too,
// and must go on serving the key and the keyspace afterwards. It runs on a
// server of its own, since a failure here can leave it unable to serve.
func TestCompatSetRangeOverflow(t *testing.T) {
	redisAddr := startRedis(t)
	forEachProtocol(t, func(t *testing.T, proto int) { setRangeOverflow(t, redisAddr, proto) })
}

func setRangeOverflow(t *testing.T, redisAddr string, proto int) {
	oursAddr := startDisposableServer(t)
	sc := compatScript{name: "setrange-overflowing-offset", steps: []compatStep{
		cs("SET k abc"), cs("SETRANGE k 9223372036854775807 x"), cs("SETRANGE k 9223372036854775800 abcdefghijk"),
		cs("SETRANGE n 9223372036854775807 x"), cs("SETRANGE k 9223372036854775808 x"), cs("EXISTS n"), cs("GET k"),
	}}
	runCompatScript(t, redisAddr, oursAddr, proto, sc)
	// Whatever the replies, the keyspace must still be usable.
	c := dialCompat(t, oursAddr)
	for _, args := range [][]string{{"GET", "k"}, {"SET", "k", "v"}, {"FLUSHALL"}} {
		c.nc.SetDeadline(time.Now().Add(3 * time.Second))
		if err := c.send(encodeCommand(args...)); err != nil {
			t.Fatalf("%s: %v", showArgs(args), err)
		}
		c.nc.SetDeadline(time.Now().Add(3 * time.Second))
		if r, err := readCompatReply(c.br); err != nil {
			t.Fatalf("after the overflowing SETRANGEs, our server does not answer %s: %v", showArgs(args), err)
		} else if r.kind == '-' {
			t.Errorf("after the overflowing SETRANGEs, %s: %s", showArgs(args), r)
		}
	}
}

// compatClockLimit documents why far-future expiries differ from Redis.
const compatClockLimit = "deadlines past the year 2262 do not fit the engine's nanosecond clock: they are kept as its last instant (engine.MaxDeadlineMillis)"

// Far-future timestamps, fixed so EXPIRETIME replies are deterministic.
const (
	y2100   = "4102444800"    // 2100-01-01T00:00:00Z
	y2100ms = "4102444800000" // the same in milliseconds
)

func compatScripts() []compatScript {
	bigValue := strings.Repeat("0123456789abcdef", 4096) // 64 KiB
	return []compatScript{
		// Redis Cluster's commands, on a server without cluster support.
		{name: "cluster-disabled", steps: []compatStep{
			cs("CLUSTER INFO"), cs("CLUSTER SLOTS"), cs("CLUSTER HELP"), cs("CLUSTER KEYSLOT foo"), cs("CLUSTER NOSUCH"),
			cs("CLUSTER"), cs("CLUSTER INFO x"), cs("READONLY"), cs("READWRITE"), cs("ASKING"), cs("READONLY x"),
			ca("EVAL", "return redis.pcall('cluster','info')", "0"), ca("EVAL", "return redis.pcall('cluster','reset')", "0"),
			ca("EVAL", "return redis.pcall('readonly')", "0"), cs("COMMAND INFO readonly readwrite asking"),
			cs("COMMAND GETKEYS CLUSTER INFO"), cs("MULTI"), cs("CLUSTER INFO"), cs("EXEC"),
		}},
		// ---- GET / SET ----
		{name: "get-set-basic", steps: []compatStep{
			cs("GET k"), cs("SET k v"), cs("GET k"), cs("SET k v2"), cs("GET k"),
			ca("SET", "", "empty key"), ca("GET", ""), ca("SET", "e", ""), cs("GET e"), cs("STRLEN e"), cs("EXISTS e"),
			ca("SET", "sp", "hello world"), cs("GET sp"),
			ca("SET", "bin", "\x00\x01\xff\r\n"), cs("GET bin"),
			ca("SET", "big", bigValue), cs("STRLEN big"), cs("GETRANGE big 65530 -1"),
			cs("set lower v"), cs("get lower"), cs("SeT MiXeD v"), cs("gEt MiXeD"), cs("GET mixed"),
			cs("DBSIZE"),
		}},
		// A connection's last command is found again without the table
		// (Server.lookup): names as long, in other cases, unknown.
		{name: "command-names", steps: []compatStep{
			cs("SET k v"), cs("GET k"), cs("get k"), cs("GeT k"), cs("GEX k"), cs("GET k"), cs("GETX k"),
			cs("SET k v2"), cs("SEX k v"), cs("set k v3"), cs("GET k"), cs("GETSET k v4"), cs("GETSET k v5"),
			cs("getset k v6"), cs("GETSEX k v"), cs("GET k"), cs("TTL k"), cs("PTTL k"), cs("TTL k"),
		}},
		{name: "set-nx-xx", steps: []compatStep{
			cs("SET k v XX"), cs("GET k"), cs("SET k v NX"), cs("GET k"), cs("SET k v2 NX"), cs("GET k"),
			cs("SET k v3 XX"), cs("GET k"), cs("SET k v nx"), cs("SET k v xX"), cs("SET k2 v Nx"),
			cs("SET k v NX XX"), cs("SET k v XX NX"), cs("SET k v NX NX"), cs("SET k v XX XX"),
			cs("SET n v NX NX"), cs("GET n"), cs("SET k v4 XX XX"), cs("GET k"),
		}},
		{name: "set-get-option", steps: []compatStep{
			cs("SET k v GET"), cs("GET k"), cs("SET k v2 GET"), cs("GET k"),
			cs("SET k v3 NX GET"), cs("GET k"), cs("SET m v NX GET"), cs("GET m"),
			cs("SET k v4 XX GET"), cs("GET k"), cs("SET x v XX GET"), cs("EXISTS x"),
			cs("SET k v5 GET GET"), cs("GET k"), cs("SET k v6 get"), cs("SET k v7 GET EX 100"), cs("TTL k"),
			cs("SET k v8 EX 100 GET"), cs("SET k v9 GET KEEPTTL"), cs("TTL k"), cs("GET k"),
			cs("SET k v GET NX XX"), cs("SET k v GET FOO"),
		}},
		{name: "set-expiry-options", steps: []compatStep{
			cs("SET k v EX 100"), cs("TTL k"), cs("SET k v PX 100000"), cs("TTL k"), csApprox("PTTL k"),
			cs("SET k v EXAT " + y2100), cs("EXPIRETIME k"), cs("PEXPIRETIME k"),
			cs("SET k v PXAT " + y2100ms), cs("EXPIRETIME k"), cs("PEXPIRETIME k"),
			cs("SET k v PXAT 4102444800499"), cs("EXPIRETIME k"), cs("PEXPIRETIME k"),
			cs("SET k v PXAT 4102444800500"), cs("EXPIRETIME k"),
			cs("SET k v EXAT {now+100}"), cs("SET k v PXAT {nowms+100000}"), cs("TTL k"),
			cs("SET k v"), cs("TTL k"), cs("SET k v ex 100"), cs("TTL k"), cs("SET k v Px 5000"), cs("TTL k"),
			cs("SET k v eXaT " + y2100), cs("EXPIRETIME k"), cs("SET k v pxat " + y2100ms), cs("PEXPIRETIME k"),
			cs("SET k v EX 1000000000"), cs("TTL k"),
			cs("SET k v NX EX 100"), cs("SET j v NX EX 100"), cs("TTL j"), cs("SET j v2 XX PX 50000"), cs("TTL j"),
			cs("SET k v EX 100 NX"), cs("SET z v EX 100 XX"), cs("EXISTS z"),
		}},
		{name: "set-expiry-errors", steps: []compatStep{
			cs("SET k v EX 0"), cs("SET k v EX -1"), cs("SET k v PX 0"), cs("SET k v PX -100"),
			cs("SET k v EXAT 0"), cs("SET k v EXAT -1"), cs("SET k v PXAT 0"), cs("SET k v PXAT -1"),
			cs("SET k v EX 1.5"), cs("SET k v EX abc"), ca("SET", "k", "v", "EX", ""), cs("SET k v EX 10s"),
			cs("SET k v EX +10"), cs("SET k v EX 010"), ca("SET", "k", "v", "EX", " 10"),
			cs("SET k v PX 1e3"), cs("SET k v EX 9223372036854775807"), cs("SET k v EX 9223372036854775808"),
			cs("SET k v EX 9223372036854775"), cs("SET k v EX 9223372036854776"), cs("SET k v PX 9223372036854775807"),
			cs("SET k v EX -9223372036854775808"), cs("SET k v EX"), cs("SET k v PX"), cs("SET k v EXAT"),
			cs("SET k v PXAT"), cs("SET k v KEEPTTL EX 10"), cs("SET k v EX 10 KEEPTTL"), cs("SET k v EX 10 PX 100"),
			cs("SET k v PX 100 EX 10"), cs("SET k v EXAT " + y2100 + " PXAT " + y2100ms), cs("SET k v EX 10 EXAT " + y2100),
			cs("SET k v EX 10 EX 20"), cs("TTL k"), cs("SET k v PX 10000 PX 20000"), cs("TTL k"),
			cs("SET k v KEEPTTL KEEPTTL"), cs("TTL k"), cs("SET k v PERSIST"), cs("SET k v FOO"), cs("SET k v EX10"),
			cs("SET k v NX EX"), cs("DBSIZE"),
		}},
		{name: "set-expiry-parse-order", steps: []compatStep{
			// Redis parses every option before it reads the expiry value.
			cs("SET k v EX abc FOO"), cs("SET k v EX 0 FOO"), cs("SET k v EX abc NX XX"),
			cs("SET k v PX -1 KEEPTTL"), cs("SET k v EX 0 EX 10"), cs("GET k"),
		}},
		{name: "set-keepttl", steps: []compatStep{
			cs("SET k v EX 100"), cs("SET k v2 KEEPTTL"), cs("TTL k"), cs("GET k"),
			cs("SET k v3 keepttl"), cs("TTL k"), cs("SET k v4"), cs("TTL k"),
			cs("SET n v KEEPTTL"), cs("TTL n"), cs("SET k v EX 100"), cs("SET k v5 XX KEEPTTL GET"), cs("TTL k"),
		}},
		{name: "set-past-expiry", steps: []compatStep{
			cs("SET k v EXAT 1"), cs("GET k"), cs("EXISTS k"),
			cs("SET k v"), cs("SET k v2 PXAT 1 GET"), cs("GET k"), cs("TTL k"),
			cs("SET k v EXAT {now-10}"), cs("GET k"), cs("SET k v PXAT {nowms-1}"), cs("EXISTS k"), cs("DBSIZE"),
		}},
		{name: "set-expires-lazily", steps: []compatStep{
			cs("SET k v PX 30"), cs("PSETEX p 30 v"), cs("SET keep v"), cs("GET k"),
			csSleep(120 * time.Millisecond),
			cs("GET k"), cs("EXISTS p"), cs("TTL k"), cs("PTTL p"), cs("DBSIZE"), csSorted("KEYS *"),
		}},
		// ---- SETEX / PSETEX / SETNX ----
		{name: "setex-psetex", steps: []compatStep{
			cs("SETEX k 100 v"), cs("GET k"), cs("TTL k"), cs("PSETEX p 100000 v"), cs("TTL p"), csApprox("PTTL p"),
			cs("SETEX k 0 v"), cs("SETEX k -1 v"), cs("SETEX k abc v"), cs("SETEX k 1.5 v"), ca("SETEX", "k", "", "v"),
			cs("PSETEX k 0 v"), cs("PSETEX k -5 v"), cs("PSETEX k x v"), cs("SETEX k 9223372036854775807 v"),
			cs("SETEX k 9223372036854776 v"), cs("PSETEX k 9223372036854775807 v"),
			cs("setex k 50 v2"), cs("TTL k"), cs("GET k"), cs("psetex k 70000 v3"), cs("TTL k"),
			cs("SETEX k 10"), cs("SETEX k 10 v extra"), cs("PSETEX k"),
			cs("SET q v"), cs("SETEX q 100 w"), cs("TTL q"), cs("SET q v"), cs("TTL q"),
		}},
		{name: "setnx", steps: []compatStep{
			cs("SETNX k v"), cs("SETNX k v2"), cs("GET k"), ca("SETNX", "", "x"), ca("GET", ""),
			cs("SETEX t 100 v"), cs("SETNX t w"), cs("TTL t"), cs("GET t"), cs("setnx K v"), cs("SETNX k"),
		}},
		// ---- GETEX / GETDEL / GETSET ----
		{name: "getex", steps: []compatStep{
			cs("GETEX k"), cs("GETEX k EX 100"), cs("EXISTS k"), cs("SET k v"),
			cs("GETEX k"), cs("TTL k"), cs("GETEX k EX 100"), cs("TTL k"), cs("GETEX k"), cs("TTL k"),
			cs("GETEX k PX 50000"), cs("TTL k"), cs("GETEX k EXAT " + y2100), cs("EXPIRETIME k"),
			cs("GETEX k PXAT " + y2100ms), cs("PEXPIRETIME k"), cs("GETEX k PERSIST"), cs("TTL k"),
			cs("GETEX k PERSIST"), cs("TTL k"), cs("GETEX k persist"), cs("GETEX k ex 100"), cs("TTL k"),
			cs("GETEX k PERSIST PERSIST"), cs("TTL k"), cs("GETEX k EX 10 EX 200"), cs("TTL k"),
		}},
		{name: "getex-errors", steps: []compatStep{
			cs("SET k v"), cs("GETEX k EX 0"), cs("GETEX k EX -1"), cs("GETEX k PX 0"), cs("GETEX k EXAT 0"),
			cs("GETEX k PXAT -5"), cs("GETEX k EX abc"), cs("GETEX k EX 1.5"), cs("GETEX k EX"), cs("GETEX k PX"),
			cs("GETEX k EX 10 PX 100"), cs("GETEX k PERSIST EX 10"), cs("GETEX k EX 10 PERSIST"), cs("GETEX k KEEPTTL"),
			cs("GETEX k NX"), cs("GETEX k XX"), cs("GETEX k GET"), cs("GETEX k FOO"), cs("GETEX k EX 9223372036854775807"),
			cs("GETEX missing EX 0"), cs("GETEX missing EX abc"), cs("GETEX missing FOO"), cs("GETEX missing PERSIST"),
			cs("GETEX k EX abc FOO"), cs("GETEX k PX 0 PERSIST"), cs("TTL k"), cs("GETEX"),
		}},
		{name: "getex-past", steps: []compatStep{
			cs("SET k v"), cs("GETEX k EXAT 1"), cs("EXISTS k"), cs("SET k v"), cs("GETEX k PXAT {nowms-1000}"),
			cs("GET k"), cs("SET k v EX 100"), cs("GETEX k PXAT 1"), cs("DBSIZE"),
		}},
		{name: "getdel-getset", steps: []compatStep{
			cs("GETDEL k"), cs("SET k v"), cs("GETDEL k"), cs("GETDEL k"), cs("EXISTS k"),
			cs("GETSET k v"), cs("GETSET k v2"), cs("GET k"), cs("SETEX k 100 v3"), cs("GETSET k v4"), cs("TTL k"),
			cs("getdel k"), cs("getset k x"), cs("GETDEL k x"), cs("GETSET k"), cs("GETDEL"),
			ca("GETSET", "e", ""), ca("GETDEL", "e"), cs("EXISTS e"),
		}},
		// ---- MGET / MSET / MSETNX ----
		{name: "mget-mset", steps: []compatStep{
			cs("MGET a b c"), cs("MSET a 1 b 2"), cs("MGET a b c a"), cs("MSET a 3 a 4"), cs("GET a"),
			cs("MSET a"), cs("MSET a 1 b"), cs("mset a 1 b"), cs("MsEt a 1 b 2 c"), cs("MSET"), cs("MGET"),
			cs("SETEX t 100 v"), cs("MSET t w"), cs("TTL t"), ca("MSET", "", "e", "sp", "a b"), ca("MGET", "", "sp"),
		}},
		{name: "msetnx", steps: []compatStep{
			cs("MSETNX a 1 b 2"), cs("MGET a b"), cs("MSETNX a 9 c 3"), cs("MGET a b c"), cs("EXISTS c"),
			cs("MSETNX x 1 x 2"), cs("GET x"), cs("MSETNX a"), cs("MSETNX a 1 b"), cs("msetnx d 1 e"), cs("MSETNX"),
			cs("MSETNX d 1 d"), cs("EXISTS d"),
		}},
		// ---- APPEND / STRLEN ----
		{name: "append-strlen", steps: []compatStep{
			cs("STRLEN k"), cs("APPEND k Hello"), cs("APPEND k World"), cs("GET k"), cs("STRLEN k"),
			ca("APPEND", "k", ""), ca("APPEND", "n", ""), cs("EXISTS n"), cs("GET n"), ca("APPEND", "k", " \x00!"), cs("GET k"),
			cs("SETEX t 100 a"), cs("APPEND t b"), cs("TTL t"), cs("GET t"), cs("SET i 10"), cs("APPEND i 5"), cs("INCR i"),
			cs("APPEND k"), cs("STRLEN"), cs("STRLEN k x"), cs("append k x"),
		}},
		// ---- GETRANGE ----
		{name: "getrange", steps: func() []compatStep {
			steps := []compatStep{cs("SET s HelloWorld"), ca("SET", "e", ""), cs("SET one x")}
			idx := []string{"0", "1", "3", "5", "9", "10", "11", "100", "-1", "-2", "-5", "-10", "-11", "-100",
				"9223372036854775807", "-9223372036854775808"}
			for _, key := range []string{"s", "e", "one", "missing"} {
				for _, a := range idx {
					for _, b := range idx {
						steps = append(steps, cs("GETRANGE "+key+" "+a+" "+b))
					}
				}
			}
			return append(steps, cs("GETRANGE s a 1"), cs("GETRANGE s 0 b"), cs("GETRANGE s 1.5 3"),
				cs("GETRANGE s 9223372036854775808 1"), cs("GETRANGE missing x 1"), ca("GETRANGE", "s", "", "1"),
				cs("GETRANGE s 01 3"), cs("GETRANGE s 0"), cs("GETRANGE s 0 1 2"), cs("getrange s 0 4"))
		}()},
		// ---- SETRANGE ----
		{name: "setrange", steps: []compatStep{
			cs("SETRANGE k 0 Hello"), cs("GET k"), cs("SETRANGE k 6 World"), cs("GET k"), cs("STRLEN k"),
			cs("SETRANGE k 1 a"), cs("GET k"), cs("SETRANGE k 20 end"), cs("GET k"),
			cs("SETRANGE p 5 x"), cs("GET p"), ca("SETRANGE", "n", "0", ""), cs("EXISTS n"),
			ca("SETRANGE", "n", "100", ""), cs("EXISTS n"), ca("SETRANGE", "k", "3", ""), ca("SETRANGE", "k", "100", ""), cs("GET k"),
			cs("SETRANGE k -1 x"), cs("SETRANGE k abc x"), cs("SETRANGE k 1.5 x"), ca("SETRANGE", "k", "-1", ""),
			cs("SETRANGE k 536870912 x"), cs("SETRANGE k 536870911 xy"), ca("SETRANGE", "new", "536870912", ""),
			cs("SETRANGE new 536870912 x"), cs("EXISTS new"),
			cs("SETEX t 100 abc"), cs("SETRANGE t 1 X"), cs("TTL t"), cs("GET t"),
			cs("SETRANGE k 0"), cs("setrange k 0 Z"), cs("GET k"),
		}},
		// ---- INCR / DECR / INCRBY / DECRBY ----
		{name: "incr-decr", steps: []compatStep{
			cs("INCR k"), cs("INCR k"), cs("DECR k"), cs("DECR k"), cs("DECR k"), cs("GET k"),
			cs("INCRBY k 10"), cs("INCRBY k -20"), cs("DECRBY k 5"), cs("DECRBY k -5"), cs("GET k"),
			cs("INCRBY n 0"), cs("GET n"), cs("DECRBY m 3"), cs("GET m"),
			cs("incr k"), cs("Decr k"), cs("incrby k 2"), cs("decrby k 2"),
			cs("SETEX t 100 5"), cs("INCR t"), cs("TTL t"), cs("DECRBY t 2"), cs("TTL t"), cs("GET t"),
			cs("INCR"), cs("INCR a b"), cs("INCRBY k"), cs("DECRBY k 1 2"),
		}},
		{name: "incr-invalid-values", steps: []compatStep{
			cs("SET k 01"), cs("INCR k"), ca("SET", "k", " 1"), cs("INCR k"), ca("SET", "k", "1 "), cs("INCR k"),
			cs("SET k +1"), cs("INCR k"), cs("SET k -0"), cs("INCR k"), cs("SET k 1.0"), cs("INCR k"),
			cs("SET k 1e3"), cs("INCR k"), cs("SET k abc"), cs("INCR k"), ca("SET", "k", ""), cs("INCR k"),
			cs("SET k -"), cs("DECR k"), cs("SET k 0x10"), cs("INCR k"), ca("SET", "k", "1\x00"), cs("INCR k"),
			cs("SET k 12345678901234567890"), cs("INCR k"), cs("SET k 0"), cs("INCR k"), cs("SET k -5"), cs("INCR k"),
			cs("SET k 00"), cs("DECR k"), cs("GET k"),
			cs("INCRBY k abc"), cs("INCRBY k 1.5"), cs("INCRBY k 01"), cs("INCRBY k +1"), ca("INCRBY", "k", ""),
			ca("INCRBY", "k", " 1"), cs("INCRBY k 9223372036854775808"), cs("INCRBY k -9223372036854775809"),
			cs("DECRBY k abc"), cs("DECRBY k 1e2"), cs("INCRBY missing x"), cs("EXISTS missing"),
		}},
		{name: "incr-overflow", steps: []compatStep{
			cs("SET k 9223372036854775806"), cs("INCR k"), cs("INCR k"), cs("GET k"), cs("INCRBY k 1"), cs("INCRBY k 0"),
			cs("DECRBY k -1"), cs("DECR k"), cs("GET k"),
			cs("SET k -9223372036854775807"), cs("DECR k"), cs("DECR k"), cs("GET k"), cs("DECRBY k 1"), cs("INCRBY k -1"),
			cs("INCRBY k 9223372036854775807"), cs("INCR k"),
			cs("SET k 9223372036854775807"), cs("INCR k"), cs("SET k 9223372036854775808"), cs("INCR k"),
			cs("SET k -9223372036854775808"), cs("DECR k"), cs("INCRBY k -9223372036854775808"),
			cs("INCRBY m 9223372036854775807"), cs("INCRBY m -9223372036854775808"),
			cs("INCRBY n -9223372036854775808"), cs("DECRBY n 1"),
			cs("DECRBY z -9223372036854775808"), cs("DECRBY z 9223372036854775807"), cs("GET z"),
			cs("SET big 1"), cs("INCRBY big 9223372036854775807"), cs("DECRBY big -9223372036854775807"),
		}},
		// ---- INCRBYFLOAT ----
		{name: "incrbyfloat-basic", steps: []compatStep{
			cs("INCRBYFLOAT k 10.5"), cs("INCRBYFLOAT k 0.1"), cs("INCRBYFLOAT k -5"), cs("GET k"),
			cs("INCRBYFLOAT k 5.0e3"), cs("INCRBYFLOAT k 5E3"), cs("INCRBYFLOAT k -1e-3"), cs("INCRBYFLOAT k 1"), cs("GET k"),
			cs("SET i 10"), cs("INCRBYFLOAT i 1"), cs("INCRBYFLOAT i 1.5"), cs("INCRBYFLOAT i -2.5"), cs("GET i"), cs("INCR i"),
			cs("INCRBYFLOAT j 0"), cs("INCRBYFLOAT j -0"), cs("INCRBYFLOAT j -0.0"), cs("GET j"),
			cs("INCRBYFLOAT a +5"), cs("INCRBYFLOAT a .5"), cs("INCRBYFLOAT a 5."), cs("INCRBYFLOAT a 00012"), cs("GET a"),
			cs("SET f 3.0"), cs("INCRBYFLOAT f 0"), cs("SET f 1e3"), cs("INCRBYFLOAT f 1"), cs("SET f 10.50"), cs("INCRBYFLOAT f 0"),
			cs("SETEX t 100 1.5"), cs("INCRBYFLOAT t 1"), cs("TTL t"),
			cs("INCRBYFLOAT k 1e17"), cs("INCRBYFLOAT b 100000000000000000000"), cs("INCRBYFLOAT c -1e20"),
			cs("INCRBYFLOAT d 1e-400"), cs("GET d"),
			cs("incrbyfloat k 1"), cs("INCRBYFLOAT k"), cs("INCRBYFLOAT k 1 2"),
		}},
		{name: "incrbyfloat-decimal-rounding", steps: []compatStep{
			// Redis adds long doubles and prints them with %.17Lf, trailing
			// zeros removed.
			cs("INCRBYFLOAT k 0.1"), cs("INCRBYFLOAT k 0.1"), cs("INCRBYFLOAT k 0.1"), cs("GET k"),
			cs("SET f 3"), cs("INCRBYFLOAT f 1.1"), cs("INCRBYFLOAT g 1.1"), cs("INCRBYFLOAT g 2.2"),
			cs("INCRBYFLOAT h 1e-20"), cs("GET h"), cs("INCRBYFLOAT u 0.000000000000000001"),
			cs("INCRBYFLOAT v 1e100"),
		}},
		{name: "incrbyfloat-errors", steps: []compatStep{
			cs("INCRBYFLOAT k abc"), cs("INCRBYFLOAT k nan"), cs("INCRBYFLOAT k NaN"), cs("INCRBYFLOAT k inf"),
			cs("INCRBYFLOAT k -inf"), cs("INCRBYFLOAT k +Inf"), cs("INCRBYFLOAT k infinity"), cs("EXISTS k"),
			ca("INCRBYFLOAT", "k", ""), ca("INCRBYFLOAT", "k", " 1"), ca("INCRBYFLOAT", "k", "1 "), cs("INCRBYFLOAT k 1e"),
			cs("INCRBYFLOAT k ."), cs("INCRBYFLOAT k 1_000"), cs("INCRBYFLOAT k 1,5"), cs("INCRBYFLOAT k 1e5000"),
			cs("INCRBYFLOAT k -1e5000"), cs("INCRBYFLOAT k 1e-5000"),
			cs("SET s abc"), cs("INCRBYFLOAT s 1"), cs("INCRBYFLOAT s abc"), ca("SET", "s", " 1"), cs("INCRBYFLOAT s 1"),
			cs("SET s nan"), cs("INCRBYFLOAT s 1"), cs("SET s inf"), cs("INCRBYFLOAT s 1"), cs("INCRBYFLOAT s -inf"),
			ca("SET", "s", ""), cs("INCRBYFLOAT s 1"), cs("DBSIZE"),
		}},
		{name: "incrbyfloat-long-double-range", steps: []compatStep{
			// Redis's long doubles parse hex and hold values beyond
			// float64's range.
			cs("INCRBYFLOAT k 0x10"), cs("INCRBYFLOAT h 0x1p4"),
			cs("INCRBYFLOAT m 1.7976931348623157e308"), cs("INCRBYFLOAT m 1.7976931348623157e308"),
			cs("INCRBYFLOAT n 1e400"),
		}},
		// ---- DEL / UNLINK / EXISTS / TYPE / TOUCH ----
		{name: "del-unlink-exists", steps: []compatStep{
			cs("MSET a 1 b 2 c 3 d 4"), cs("EXISTS a"), cs("EXISTS a b x"), cs("EXISTS a a a"), cs("EXISTS x x"),
			cs("DEL a"), cs("DEL a"), cs("DEL b b"), cs("DEL x y"), cs("UNLINK c c d x"), cs("EXISTS a b c d"),
			cs("MSET a 1 b 2"), cs("del a B"), cs("unlink b"), cs("exists a b"), cs("DBSIZE"),
			cs("DEL"), cs("UNLINK"), cs("EXISTS"), ca("SET", "", "v"), ca("EXISTS", ""), ca("DEL", ""),
		}},
		{name: "type-touch", steps: []compatStep{
			cs("TYPE k"), cs("SET k v"), cs("TYPE k"), cs("type k"), cs("TOUCH k"), cs("TOUCH k k x"), cs("TOUCH x"),
			cs("SETEX t 100 v"), cs("TOUCH t"), cs("TTL t"), cs("TYPE t"), cs("TYPE"), cs("TYPE k x"), cs("TOUCH"),
		}},
		// ---- EXPIRE family ----
		{name: "expire-basic", steps: []compatStep{
			cs("EXPIRE k 100"), cs("SET k v"), cs("TTL k"), cs("PTTL k"), cs("EXPIRETIME k"), cs("PEXPIRETIME k"),
			cs("EXPIRE k 100"), cs("TTL k"), cs("PEXPIRE k 50000"), cs("TTL k"), csApprox("PTTL k"),
			cs("EXPIREAT k " + y2100), cs("EXPIRETIME k"), cs("PEXPIRETIME k"), cs("PEXPIREAT k 4102444800123"),
			cs("EXPIRETIME k"), cs("PEXPIRETIME k"), cs("EXPIREAT k {now+100}"), cs("EXPIRETIME k"),
			cs("PEXPIREAT k {nowms+100000}"), cs("TTL k"),
			cs("PERSIST k"), cs("TTL k"), cs("PERSIST k"), cs("PERSIST missing"), cs("TTL missing"), cs("PTTL missing"),
			cs("EXPIRETIME missing"), cs("PEXPIRETIME missing"),
			cs("expire k 100"), cs("Ttl k"), cs("pexpire k 100000"), cs("expireat k " + y2100), cs("pexpireat k " + y2100ms),
			cs("expiretime k"), cs("pexpiretime k"), cs("persist k"), cs("pttl k"),
			cs("EXPIRE k 1000000000"), cs("TTL k"), cs("EXPIRE k 0"), cs("EXISTS k"),
		}},
		{name: "expire-negative-and-past", steps: []compatStep{
			cs("SET k v"), cs("EXPIRE k -1"), cs("EXISTS k"), cs("GET k"),
			cs("SET k v"), cs("PEXPIRE k 0"), cs("EXISTS k"), cs("SET k v"), cs("PEXPIRE k -100"), cs("EXISTS k"),
			cs("SET k v"), cs("EXPIREAT k 1"), cs("EXISTS k"), cs("SET k v"), cs("EXPIREAT k 0"), cs("EXISTS k"),
			cs("SET k v"), cs("EXPIREAT k -1"), cs("EXISTS k"), cs("SET k v"), cs("PEXPIREAT k {nowms-1}"), cs("EXISTS k"),
			cs("SET k v"), cs("EXPIREAT k {now}"), cs("EXISTS k"), cs("EXPIRE missing -1"), cs("EXPIREAT missing 1"),
			cs("SET k v"), cs("EXPIRE k -99999999999999"), cs("EXISTS k"),
			cs("SET k v"), cs("PEXPIRE k -9223372036854775808"), cs("EXISTS k"),
			cs("SET k v"), cs("EXPIRE k -9223372036854775"), cs("EXISTS k"),
			cs("SET k v"), cs("EXPIREAT k -9223372036854775"), cs("EXISTS k"),
			cs("SET k v"), cs("PEXPIREAT k -9223372036854775808"), cs("EXISTS k"), cs("DBSIZE"),
		}},
		{name: "expire-errors", steps: []compatStep{
			cs("SET k v"), cs("EXPIRE k abc"), cs("EXPIRE k 1.5"), ca("EXPIRE", "k", ""), cs("EXPIRE k 10s"),
			cs("EXPIRE k +10"), cs("EXPIRE k 010"), cs("PEXPIRE k 1e3"), cs("EXPIREAT k x"), cs("PEXPIREAT k 1.0"),
			cs("EXPIRE k 9223372036854775807"), cs("EXPIRE k 9223372036854776"), cs("EXPIRE k -9223372036854776"),
			cs("EXPIRE k 9223372036854775808"), cs("PEXPIRE k 9223372036854775807"), cs("EXPIREAT k 9223372036854776"),
			cs("EXPIRE missing abc"), cs("EXPIRE missing 9223372036854775807"),
			cs("EXPIRE k 100 FOO"), cs("EXPIRE k 100 NX FOO"), cs("EXPIRE k 100 nx xx"), cs("EXPIRE k 100 NX GT"),
			cs("EXPIRE k 100 NX LT"), cs("EXPIRE k 100 GT LT"), cs("EXPIRE k 100 LT GT"), cs("EXPIRE k 100 XX NX"),
			cs("EXPIRE k 100 NX XX GT LT"), cs("EXPIRE k 100 GT LT FOO"), cs("EXPIRE missing 100 FOO"),
			cs("EXPIRE missing 100 NX XX"), cs("PEXPIRE k 100 bar"), cs("EXPIREAT k 100 GT lt"),
			cs("PEXPIREAT k 100 nx GT"),
			// Redis checks the options before the time.
			cs("EXPIRE k abc FOO"), cs("EXPIRE k abc NX XX"), cs("PEXPIREAT k x GT LT"),
			cs("EXPIRE k 9223372036854775807 FOO"), cs("TTL k"),
			cs("EXPIRE k"), cs("PEXPIRE"), cs("EXPIREAT k"), cs("PEXPIREAT k"), cs("TTL"), cs("PTTL k x"),
			cs("EXPIRETIME"), cs("PEXPIRETIME k x"), cs("PERSIST"), cs("PERSIST k x"),
		}},
		{name: "expire-nx-xx", steps: []compatStep{
			cs("SET k v"), cs("EXPIRE k 100 XX"), cs("TTL k"), cs("EXPIRE k 100 NX"), cs("TTL k"),
			cs("EXPIRE k 200 NX"), cs("TTL k"), cs("EXPIRE k 200 XX"), cs("TTL k"), cs("EXPIRE k 300 xx"), cs("TTL k"),
			cs("EXPIRE k 50 XX XX"), cs("TTL k"), cs("PERSIST k"), cs("EXPIRE k 60 NX NX"), cs("TTL k"),
			cs("EXPIRE missing 100 NX"), cs("EXPIRE missing 100 XX"), cs("PEXPIRE k 1000 NX"), csApprox("PTTL k"),
			cs("PERSIST k"), cs("EXPIRE k -1 XX"), cs("EXISTS k"), cs("EXPIRE k -1 NX"), cs("EXISTS k"),
		}},
		{name: "expire-gt-lt", steps: []compatStep{
			cs("SET k v"), cs("EXPIRE k 100 GT"), cs("TTL k"), cs("EXPIRE k 100 LT"), cs("TTL k"),
			cs("EXPIRE k 200 GT"), cs("TTL k"), cs("EXPIRE k 300 GT"), cs("TTL k"), cs("EXPIRE k 200 LT"), cs("TTL k"),
			cs("EXPIRE k 250 LT"), cs("TTL k"), cs("EXPIRE k 150 LT"), cs("TTL k"), cs("EXPIRE k 149 GT"), cs("TTL k"),
			cs("EXPIREAT k " + y2100), cs("EXPIREAT k " + y2100 + " GT"), cs("EXPIREAT k " + y2100 + " LT"),
			cs("EXPIREAT k 4102444801 GT"), cs("EXPIRETIME k"), cs("EXPIREAT k 4102444801 LT"), cs("EXPIREAT k 4102444700 LT"),
			cs("EXPIRETIME k"), cs("PEXPIREAT k 4102444700001 GT"), cs("PEXPIRETIME k"), cs("PEXPIREAT k 4102444700000 LT"),
			cs("PEXPIRETIME k"), cs("EXPIRE k -1 GT"), cs("EXISTS k"), cs("EXPIRE k -1 LT"), cs("EXISTS k"),
			cs("SET p v"), cs("EXPIRE p -1 GT"), cs("EXISTS p"), cs("EXPIRE p -1 LT"), cs("EXISTS p"),
			cs("EXPIRE missing 100 GT"), cs("EXPIRE missing 100 LT"),
		}},
		{name: "expire-combined-flags", steps: []compatStep{
			cs("SET k v"), cs("EXPIRE k 100 XX GT"), cs("TTL k"), cs("EXPIRE k 100 XX LT"), cs("TTL k"),
			cs("EXPIRE k 100 GT XX"), cs("EXPIRE k 100"), cs("EXPIRE k 200 XX GT"), cs("TTL k"), cs("EXPIRE k 100 XX GT"),
			cs("TTL k"), cs("EXPIRE k 50 LT XX"), cs("TTL k"), cs("EXPIRE k 60 LT XX"), cs("TTL k"),
			cs("EXPIRE k 70 gt gt"), cs("TTL k"), cs("EXPIRE k 10 lt LT"), cs("TTL k"), cs("EXPIRE k 80 xx gt xx"), cs("TTL k"),
		}},
		{name: "ttl-family-rounding", steps: []compatStep{
			cs("SET k v PX 1400"), cs("TTL k"), cs("SET k v PX 1600"), cs("TTL k"), cs("SET k v PX 600"), cs("TTL k"),
			cs("SET k v PX 400"), cs("TTL k"), cs("PEXPIREAT k 4102444800499"), cs("EXPIRETIME k"),
			cs("PEXPIREAT k 4102444800500"), cs("EXPIRETIME k"), cs("PEXPIREAT k 4102444800999"), cs("EXPIRETIME k"),
			cs("PEXPIREAT k 4102444800001"), cs("EXPIRETIME k"), cs("PEXPIRETIME k"),
		}},
		{name: "write-commands-and-ttl", steps: []compatStep{
			cs("SET k 1 EX 100"), cs("INCR k"), cs("TTL k"), cs("INCRBYFLOAT k 1"), cs("TTL k"), cs("APPEND k 0"),
			cs("TTL k"), cs("SETRANGE k 0 9"), cs("TTL k"), cs("GETEX k"), cs("TTL k"), cs("SET k 1 KEEPTTL"), cs("TTL k"),
			cs("GETSET k 2"), cs("TTL k"), cs("EXPIRE k 100"), cs("MSET k 3"), cs("TTL k"), cs("EXPIRE k 100"),
			cs("SETNX k 4"), cs("TTL k"), cs("MSETNX k 5"), cs("TTL k"), cs("GETDEL k"), cs("TTL k"),
			cs("SET k v EX 100"), cs("SET k v"), cs("TTL k"),
		}},
		// ---- KEYS / SCAN / RANDOMKEY / DBSIZE ----
		{name: "keys-patterns", steps: func() []compatStep {
			steps := []compatStep{
				ca("MSET", "a", "1", "b", "1", "c", "1", "ab", "1", "abc", "1", "bc", "1", "A", "1",
					"a*", "1", "a?", "1", "*", "1", "?", "1", "[", "1", "]", "1", `\`, "1", `a\b`, "1",
					"x[y]", "1", "hello", "1", "hallo", "1", "hillo", "1", "hxllo", "1", "heeeello", "1",
					"a-b", "1", "^", "1", "foo:bar", "1", "foo:baz:1", "1", "aXb", "1", "", "1", "a b", "1"),
			}
			patterns := []string{"*", "**", "a*", "*a", "*b*", "?", "??", "???", "a?", "a?c", "h?llo", "h*llo",
				"h[ae]llo", "h[^e]llo", "h[a-b]llo", "h[b-a]llo", "[abc]", "[^abc]", "[a-c]*", "[c-a]", "[A-Z]",
				"[!a]", `\*`, `a\*`, `a\?`, `\[`, `[\]]`, `\\`, `a\\b`, `a\b`, `\a`, "[", "[a", "a[", "*[", "[]",
				"[]a]", "x[[]y]", "x\\[y\\]", "[a-]", "[-a]", "foo:*", "foo:*:*", "*:*", "a b", "a?b", "*\\",
				"nomatch", "h*", "*o", "*l*", "h**o", "*e*e*", "", "a*b*c", "[^a-z]", "[\\^]"}
			for _, p := range patterns {
				steps = append(steps, compatStep{args: []string{"KEYS", p}, mode: compatSorted})
			}
			return append(steps, cs("KEYS"), cs("KEYS a b"), csSorted("keys a*"))
		}()},
		{name: "scan", steps: func() []compatStep {
			steps := []compatStep{
				cs("SCAN 0"), cs("SCAN 0 COUNT 5"), cs("SCAN 0 MATCH *"), cs("SET k v"), cs("SCAN 0"),
				cs("SCAN 0 TYPE string"), cs("SCAN 0 TYPE list"), cs("SCAN 0 TYPE foo"),
			}
			pairs := []string{"MSET"}
			for i := range 300 {
				pairs = append(pairs, fmt.Sprintf("key:%d", i), "v", fmt.Sprintf("user:%d", i), "v")
			}
			steps = append(steps, ca(pairs...), ca("SET", "", "empty"))
			for _, opts := range []string{"", "COUNT 1", "COUNT 7", "COUNT 1000", "MATCH *", "MATCH key:*",
				"MATCH user:1*", "MATCH *:2?", "MATCH key:[12]?", "MATCH nomatch", "MATCH ?", "MATCH **",
				"MATCH key:* COUNT 3", "COUNT 3 MATCH user:* TYPE string", "TYPE string", "TYPE STRING",
				"TYPE hash", "match KEY:* count 50", "MATCH key:1 MATCH user:2", "COUNT 5 COUNT 100"} {
				steps = append(steps, csScan(strings.TrimSpace("SCAN 0 "+opts)))
			}
			return append(steps, cs("DBSIZE"))
		}()},
		{name: "scan-errors", steps: []compatStep{
			cs("SET k v"), cs("SCAN abc"), cs("SCAN -1x"), cs("SCAN 1.5"), ca("SCAN", " 0"), ca("SCAN", "0 "),
			cs("SCAN 18446744073709551616"), cs("SCAN 99999999999999999999"), cs("SCAN 0 COUNT 0"), cs("SCAN 0 COUNT -1"),
			cs("SCAN 0 COUNT abc"), cs("SCAN 0 COUNT 1.5"), cs("SCAN 0 COUNT"), cs("SCAN 0 MATCH"), cs("SCAN 0 TYPE"),
			cs("SCAN 0 FOO bar"), cs("SCAN 0 FOO"), cs("SCAN 0 MATCH * FOO"), cs("SCAN 0 COUNT 10 MATCH"),
			cs("SCAN abc COUNT 0"), cs("SCAN 0 COUNT 0 FOO"), cs("SCAN 0 FOO bar COUNT 0"), cs("SCAN 0 COUNT 9223372036854775808"),
			cs("SCAN"), cs("scan 0 count 0"),
		}},
		{name: "scan-cursor-forms", steps: []compatStep{
			// strtoul accepts a sign and the empty string.
			cs("SET k v"), ca("SCAN", ""), cs("SCAN +0"), cs("SCAN 00"),
		}},
		{name: "dbsize-randomkey", steps: []compatStep{
			cs("DBSIZE"), cs("RANDOMKEY"), cs("SET only v"), cs("RANDOMKEY"), cs("DBSIZE"), cs("MSET a 1 b 2"),
			cs("DBSIZE"), cs("DEL a b only"), cs("RANDOMKEY"), cs("DBSIZE x"), cs("RANDOMKEY x"), cs("dbsize"),
		}},
		// ---- FLUSHDB / FLUSHALL ----
		{name: "flush", steps: []compatStep{
			cs("MSET a 1 b 2"), cs("FLUSHDB"), cs("DBSIZE"), cs("MSET a 1 b 2"), cs("FLUSHDB ASYNC"), cs("DBSIZE"),
			cs("SET a 1"), cs("FLUSHDB SYNC"), cs("DBSIZE"), cs("SET a 1"), cs("FLUSHALL"), cs("DBSIZE"),
			cs("SET a 1"), cs("FLUSHALL ASYNC"), cs("GET a"), cs("SET a 1"), cs("FLUSHALL SYNC"), cs("EXISTS a"),
			cs("SET a 1"), cs("flushall async"), cs("FlushDB sync"),
			cs("SET a 1"), cs("FLUSHDB FOO"), cs("FLUSHALL FOO"), cs("FLUSHDB ASYNC SYNC"), cs("FLUSHALL SYNC SYNC"),
			ca("FLUSHALL", ""), cs("DBSIZE"),
		}},
		// ---- connection ----
		{name: "ping-echo", steps: []compatStep{
			cs("PING"), cs("PING hello"), ca("PING", "hello world"), ca("PING", ""), cs("PING a b"), cs("PING a b c"),
			cs("ping"), cs("PiNg x"), cs("ECHO hello"), ca("ECHO", ""), ca("ECHO", "a\r\nb\x00"), cs("ECHO"), cs("ECHO a b"),
			cs("echo x"),
		}},
		{name: "select", steps: []compatStep{
			cs("SELECT 0"), cs("SELECT -1"), cs("SELECT 16"), cs("SELECT 1000000"), cs("SELECT abc"), cs("SELECT 1.5"),
			ca("SELECT", ""), cs("SELECT 99999999999999999999"), cs("SELECT +0"), cs("SELECT 00"), cs("SELECT -0"),
			cs("SELECT"), cs("SELECT 0 1"), cs("select 0"),
		}},
		{name: "auth-without-password", steps: []compatStep{
			cs("AUTH foo"), cs("AUTH default foo"), cs("AUTH nobody foo"), cs("AUTH a b c"), cs("AUTH"),
			ca("AUTH", ""), cs("auth x"), cs("AUTH DEFAULT x"), cs("PING"),
		}},
		{name: "hello", steps: []compatStep{
			csMasked("HELLO"), csMasked("HELLO 2"), cs("HELLO 1"), cs("HELLO 0"), cs("HELLO -1"), cs("HELLO 4"),
			cs("HELLO abc"), cs("HELLO 2.0"), ca("HELLO", ""), cs("HELLO 99999999999999999999"),
			cs("HELLO 2 FOO"), cs("HELLO 2 AUTH"), cs("HELLO 2 AUTH default"), cs("HELLO 2 SETNAME"),
			csMasked("HELLO 2 SETNAME myname"), cs("CLIENT GETNAME"), csMasked("HELLO 2 AUTH default anything"),
			cs("HELLO 2 AUTH nobody pass"), ca("HELLO", "2", "SETNAME", "a b"), cs("CLIENT GETNAME"),
			csMasked("hello 2 setname other auth default x"), cs("CLIENT GETNAME"),
			cs("HELLO 4 FOO"), cs("HELLO abc FOO"),
			// Redis parses every option, then authenticates, then checks the name.
			ca("HELLO", "2", "SETNAME", "a b", "FOO"), ca("HELLO", "2", "SETNAME", "a b", "AUTH", "nobody", "x"),
			cs("HELLO 2 AUTH nobody x FOO"), cs("CLIENT GETNAME"),
		}},
		{name: "hello-protocol-switch", steps: []compatStep{
			// The protocol is the connection's until the next HELLO with a
			// version; HELLO alone and a failed HELLO leave it as it is.
			csMasked("HELLO"), cs("GET nosuch"), csMasked("HELLO 3"), cs("GET nosuch"), cs("MGET a nosuch"),
			csMasked("HELLO"), cs("HELLO 4"), cs("HELLO 3 FOO"), cs("GET nosuch"), csMasked("HELLO 3 SETNAME n3"),
			cs("CLIENT GETNAME"), csPairs("CONFIG GET save"), cs("SET k v NX"), cs("SET k v NX"), cs("SET k w GET"),
			cs("INFO nosuchsection"), cs("CLIENT LIST TYPE pubsub"), cs("COMMAND INFO nosuch"),
			csMasked("HELLO 2"), cs("GET nosuch"), cs("CLIENT LIST TYPE pubsub"), cs("COMMAND INFO nosuch"),
			csMasked("hello 3 auth default anything setname again"), cs("CLIENT GETNAME"), cs("RANDOMKEY"),
			cs("DEL k"), cs("RANDOMKEY"), cs("GETDEL k"), cs("GETEX k"), cs("GETSET k v"), cs("GETSET k w"),
		}},
		{name: "client-name", steps: []compatStep{
			cs("CLIENT GETNAME"), cs("CLIENT SETNAME myconn"), cs("CLIENT GETNAME"), cs("client getname"),
			cs("CLIENT SETNAME other-name_1"), cs("CLIENT GETNAME"), ca("CLIENT", "SETNAME", ""), cs("CLIENT GETNAME"),
			ca("CLIENT", "SETNAME", "a b"), ca("CLIENT", "SETNAME", "a\nb"), ca("CLIENT", "SETNAME", "caf\xc3\xa9"),
			ca("CLIENT", "SETNAME", "tab\t"), ca("CLIENT", "SETNAME", "\x7f"), cs("CLIENT SETNAME !~"), cs("CLIENT GETNAME"),
			cs("client setname Lower"), cs("Client GetName"),
			cs("CLIENT SETNAME"), cs("CLIENT SETNAME a b"), cs("CLIENT GETNAME x"), cs("CLIENT ID x"), cs("CLIENT INFO x"),
			cs("CLIENT HELP x"), cs("client setname"),
		}},
		{name: "client-misc", steps: []compatStep{
			cs("CLIENT"), cs("CLIENT FOO"), cs("CLIENT FOO bar"), cs("client foo"), ca("CLIENT", ""),
			cs("CLIENT LIST TYPE foo"), cs("CLIENT LIST TYPE master"), cs("CLIENT LIST TYPE replica"),
			cs("CLIENT LIST TYPE slave"), cs("CLIENT LIST TYPE pubsub"), cs("CLIENT LIST TYPE"), cs("CLIENT LIST ID"),
			cs("CLIENT LIST ID abc"), cs("CLIENT LIST ID 1 abc"), cs("CLIENT LIST ID 99999999"), cs("CLIENT LIST ID 0"),
			cs("CLIENT LIST ID -5"), cs("CLIENT LIST FOO"), cs("CLIENT LIST FOO bar"), cs("CLIENT LIST TYPE normal ID 1"),
			cs("CLIENT LIST TYPE pubsub extra"),
		}},
		// ---- server ----
		{name: "config-get", steps: []compatStep{
			csPairs("CONFIG GET save"), csPairs("CONFIG GET appendonly"), csPairs("CONFIG GET timeout"),
			csPairs("CONFIG GET requirepass"), csPairs("CONFIG GET proto-max-bulk-len"), csPairs("CONFIG GET loglevel"),
			csPairs("CONFIG GET client-query-buffer-limit"), csPairs("CONFIG GET SAVE"), csPairs("config get Appendonly"),
			csPairs("CONFIG GET appendonl?"), csPairs("CONFIG GET proto-max-bulk-le[nm]"), csPairs("CONFIG GET requirepas*"),
			csPairs("CONFIG GET save appendonly timeout"), csPairs("CONFIG GET save save"), csPairs("CONFIG GET save sav?"),
			csPairs("CONFIG GET nosuchparam"), csPairs("CONFIG GET nosuch*"), csPairs("CONFIG GET save nosuchparam"),
			cs("CONFIG GET"), cs("CONFIG"), cs("CONFIG FOO"), cs("config foo bar"), ca("CONFIG", ""),
			cs("CONFIG REWRITE"), cs("config rewrite"), cs("CONFIG REWRITE x"),
		}},
		{name: "config-set", steps: []compatStep{
			cs("CONFIG SET foo bar"), cs("CONFIG SET FOO bar"), cs("CONFIG SET save"), cs("CONFIG SET save a b"),
			cs("CONFIG SET"), cs("CONFIG SET databases 4"), cs("CONFIG SET DATABASES 4"),
			cs("CONFIG SET maxmemory abc"), cs("CONFIG SET MaxMemory abc"), cs("CONFIG SET maxmemory -1"),
			cs("CONFIG SET maxmemory 1.5gb"), cs("CONFIG SET maxmemory 100mb"), csPairs("CONFIG GET maxmemory"),
			cs("CONFIG SET maxmemory 100MB"), cs("CONFIG SET maxmemory 104857600"), csPairs("CONFIG GET maxmemory"),
			ca("CONFIG", "SET", "save", ""), ca("CONFIG", "SET", "appendonly", "no"), csPairs("CONFIG GET save appendonly"),
			cs("CONFIG SET save x foo bar"), cs("CONFIG SET foo bar save x"), cs("CONFIG SET foo bar baz qux"),
			cs("CONFIG SET loglevel foo"), cs("CONFIG SET loglevel notice"), csPairs("CONFIG GET loglevel"),
			cs("CONFIG SET maxclients 0"), cs("CONFIG SET maxclients abc"),
			ca("CONFIG", "SET", "save", "", "save", ""), cs("CONFIG SET timeout 0"),
		}},
		// Deadlines past 2262 do not fit the engine's clock: they are taken,
		// as Redis takes them, and kept as its last instant
		// (engine.MaxDeadlineMillis), which only EXPIRETIME shows.
		{name: "expiry-beyond-2262-set-ex", steps: []compatStep{
			cs("SET k v EX 100000000000"), cs("EXISTS k"), cs("PERSIST k"), cs("TTL k"),
		}},
		{name: "expiry-beyond-2262-setex", steps: []compatStep{
			cs("SETEX k 10000000000 v"), cs("EXISTS k"), cs("PERSIST k"), cs("TTL k"),
			cs("PSETEX k 9000000000000000000 v"), cs("EXISTS k"), cs("PERSIST k"),
		}},
		{name: "expiry-beyond-2262-expireat", divergence: compatClockLimit, steps: []compatStep{
			cs("SET k v"),
			cs("EXPIREAT k 99999999999"), // the year 5138
			csDiverge("EXPIRETIME k", ":99999999999", ":9223372037"),
			cs("EXPIREAT k 33177600000"), // the year 3021, as the Tcl suite's
			cs("EXISTS k"),
		}},
		{name: "expiry-beyond-2262-pexpireat-max", divergence: compatClockLimit, steps: []compatStep{
			cs("SET k v"),
			cs("PEXPIREAT k 9223372036854775807"),
			csDiverge("PEXPIRETIME k", ":9223372036854775807", ":9223372036854"),
			cs("PEXPIREAT k 9223372036854770000"), cs("EXISTS k"), cs("PERSIST k"), cs("PTTL k"),
		}},
		{name: "expiry-beyond-2262-getex", divergence: compatClockLimit, steps: []compatStep{
			cs("SET k v"),
			cs("GETEX k EXAT 99999999999"),
			csDiverge("EXPIRETIME k", ":99999999999", ":9223372037"),
			cs("GETEX k PXAT 9223372036854775807"), cs("EXISTS k"),
		}},
		// Sizes as Redis's memtoull reads them; 0 is no bound.
		{name: "config-maxmemory-sizes", steps: []compatStep{
			cs("CONFIG SET maxmemory 0"), csPairs("CONFIG GET maxmemory"), cs("CONFIG SET maxmemory 1gb"), csPairs("CONFIG GET maxmemory"),
			cs("CONFIG SET maxmemory 1GB"), cs("CONFIG SET maxmemory 1Gb"), cs("CONFIG SET maxmemory 100mb"), csPairs("CONFIG GET maxmemory"),
			cs("CONFIG SET maxmemory 1024"), csPairs("CONFIG GET maxmemory"), cs("CONFIG SET maxmemory 1k"), csPairs("CONFIG GET maxmemory"),
			cs("CONFIG SET maxmemory 1K"), cs("CONFIG SET maxmemory 1Kb"), csPairs("CONFIG GET maxmemory"),
			cs("CONFIG SET maxmemory 2g"), csPairs("CONFIG GET maxmemory"), cs("CONFIG SET maxmemory 5b"), csPairs("CONFIG GET maxmemory"),
			ca("CONFIG", "SET", "maxmemory", " 5b"), ca("CONFIG", "SET", "maxmemory", "5b "), ca("CONFIG", "SET", "maxmemory", "1 gb"),
			cs("CONFIG SET maxmemory 1tb"), cs("CONFIG SET maxmemory -1"), cs("CONFIG SET maxmemory +5"), cs("CONFIG SET maxmemory 0x10"),
			csPairs("CONFIG GET maxmemory"), ca("CONFIG", "SET", "maxmemory", ""), csPairs("CONFIG GET maxmemory"),
			cs("CONFIG SET maxmemory 7"), cs("CONFIG SET maxmemory mb"), csPairs("CONFIG GET maxmemory"),
			cs("CONFIG SET maxmemory 9223372036854775807"), csPairs("CONFIG GET maxmemory"), cs("CONFIG SET maxmemory 0"),
		}},
		{name: "config-resetstat", steps: []compatStep{
			cs("CONFIG RESETSTAT"), cs("CONFIG RESETSTAT x"),
		}},
		{name: "info-keyspace", steps: []compatStep{
			cs("INFO keyspace"), cs("SET a 1"), cs("SET b 2"), cs("INFO keyspace"), cs("INFO KEYSPACE"),
			cs("INFO nosuchsection"), cs("FLUSHALL"), cs("INFO keyspace"),
		}},
		{name: "command-subcommands", steps: []compatStep{
			cs("COMMAND INFO nosuchcommand"), cs("COMMAND INFO nosuch other"), cs("COMMAND DOCS nosuchcommand"),
			cs("COMMAND FOO"), cs("COMMAND COUNT x"), cs("COMMAND LIST x y"), cs("COMMAND HELP x"),
		}},
		// The keys of a command, as the ACL, tracking and --redis find them.
		{name: "command-getkeys", steps: []compatStep{
			cs("COMMAND GETKEYS"), cs("COMMAND GETKEYS get"), cs("COMMAND GETKEYS get a"), cs("COMMAND GETKEYS nosuch a"),
			cs("COMMAND GETKEYS ping x"), cs("COMMAND GETKEYS GET a b"), cs("COMMAND GETKEYS mset a 1 b 2"),
			cs("COMMAND GETKEYS mset a 1 b"), cs("COMMAND GETKEYS msetnx a 1 b 2"), cs("COMMAND GETKEYS del a b c"),
			cs("COMMAND GETKEYS sintercard 2 a b"), cs("COMMAND GETKEYS sintercard 0 a"), cs("COMMAND GETKEYS sintercard 3 a b"),
			cs("COMMAND GETKEYS sintercard x a"), cs("COMMAND GETKEYS sintercard 1 a LIMIT 1"), cs("COMMAND GETKEYS sintercard 2 a LIMIT"),
			cs("COMMAND GETKEYS eval x 0"), cs("COMMAND GETKEYS eval x 2 a b c"), cs("COMMAND GETKEYS eval x 3 a"),
			cs("COMMAND GETKEYS eval x -1 a"), cs("COMMAND GETKEYS eval_ro x 1 a"), cs("COMMAND GETKEYS evalsha x 1 a b"),
			cs("COMMAND GETKEYS object encoding k"), cs("COMMAND GETKEYS object nosuch k"), cs("COMMAND GETKEYS OBJECT HELP"),
			cs("COMMAND GETKEYS memory usage k"), cs("COMMAND GETKEYS set k v"), cs("COMMAND GETKEYS bitop and d a b"),
			cs("COMMAND GETKEYS lcs a b"), cs("COMMAND GETKEYS copy a b REPLACE"), cs("COMMAND GETKEYS smove a b m"),
			cs("COMMAND GETKEYS publish ch m"), cs("COMMAND GETKEYS spublish ch m"), cs("COMMAND GETKEYS ssubscribe a b"),
			cs("COMMAND GETKEYS flushall sync"), cs("COMMAND GETKEYS client id"), cs("COMMAND GETKEYS watch a b"),
			cs("COMMAND GETKEYS hset h f v"), cs("COMMAND GETKEYS sinterstore d a b"),
		}},
		// The keys' flags, from each command's key specs, and where a call's
		// flags vary (SET, SORT) from what it does; GETKEYS's errors.
		{name: "command-getkeysandflags", steps: []compatStep{
			cs("COMMAND GETKEYSANDFLAGS del a b"), cs("COMMAND GETKEYSANDFLAGS unlink a"), cs("COMMAND GETKEYSANDFLAGS expire a 1"),
			cs("COMMAND GETKEYSANDFLAGS persist a"), cs("COMMAND GETKEYSANDFLAGS hset h f v"), cs("COMMAND GETKEYSANDFLAGS zadd z 1 m"),
			cs("COMMAND GETKEYSANDFLAGS lpush l a"), cs("COMMAND GETKEYSANDFLAGS sadd s a"), cs("COMMAND GETKEYSANDFLAGS append a v"),
			cs("COMMAND GETKEYSANDFLAGS smove a b m"), cs("COMMAND GETKEYSANDFLAGS lmove a b LEFT RIGHT"), cs("COMMAND GETKEYSANDFLAGS lpop l"),
			cs("COMMAND GETKEYSANDFLAGS getdel a"), cs("COMMAND GETKEYSANDFLAGS msetnx a 1 b 2"), cs("COMMAND GETKEYSANDFLAGS object encoding a"),
			cs("COMMAND GETKEYSANDFLAGS memory usage a"), cs("COMMAND GETKEYSANDFLAGS blpop a b 0"), cs("COMMAND GETKEYSANDFLAGS lmpop 2 a b LEFT"),
			cs("COMMAND GETKEYSANDFLAGS blmpop 0 2 a b LEFT"), cs("COMMAND GETKEYSANDFLAGS zinterstore d 2 a b"), cs("COMMAND GETKEYSANDFLAGS zinter 2 a b"),
			cs("COMMAND GETKEYSANDFLAGS sinterstore d a b"), cs("COMMAND GETKEYSANDFLAGS zrangestore d s 0 1"), cs("COMMAND GETKEYSANDFLAGS watch a b"),
			cs("COMMAND GETKEYSANDFLAGS sort l STORE d"), cs("COMMAND GETKEYSANDFLAGS sort l BY w_* GET o_*"), cs("COMMAND GETKEYSANDFLAGS sort_ro l"),
			cs("COMMAND GETKEYSANDFLAGS evalsha x 2 a b"), cs("COMMAND GETKEYSANDFLAGS fcall f 1 a"), cs("COMMAND GETKEYSANDFLAGS pfcount a b"),
			cs("COMMAND GETKEYSANDFLAGS bitfield b GET u8 0"), cs("COMMAND GETKEYSANDFLAGS bitfield_ro b GET u8 0"), cs("COMMAND GETKEYSANDFLAGS linsert l BEFORE a b"),
			cs("COMMAND GETKEYSANDFLAGS rpoplpush a b"), cs("COMMAND GETKEYSANDFLAGS renamenx a b"), cs("COMMAND GETKEYSANDFLAGS restore a 0 x"),
			cs("COMMAND GETKEYSANDFLAGS spublish ch m"), cs("COMMAND GETKEYSANDFLAGS ssubscribe a b"), cs("COMMAND GETKEYSANDFLAGS sintercard 1 a LIMIT 1"),
			cs("COMMAND GETKEYSANDFLAGS"), cs("COMMAND GETKEYSANDFLAGS get"), cs("COMMAND GETKEYSANDFLAGS nosuch a"),
			cs("COMMAND GETKEYSANDFLAGS ping x"), cs("COMMAND GETKEYSANDFLAGS mset a 1 b"),
			cs("COMMAND GETKEYSANDFLAGS get k"), cs("COMMAND GETKEYSANDFLAGS set k v"), cs("COMMAND GETKEYSANDFLAGS set k v GET"),
			cs("COMMAND GETKEYSANDFLAGS exists a b"), cs("COMMAND GETKEYSANDFLAGS type a"), cs("COMMAND GETKEYSANDFLAGS strlen a"),
			cs("COMMAND GETKEYSANDFLAGS incr a"), cs("COMMAND GETKEYSANDFLAGS mset a 1 b 2"), cs("COMMAND GETKEYSANDFLAGS setex a 1 v"),
			cs("COMMAND GETKEYSANDFLAGS rename a b"), cs("COMMAND GETKEYSANDFLAGS copy a b"), cs("COMMAND GETKEYSANDFLAGS pfmerge d a b"),
			cs("COMMAND GETKEYSANDFLAGS mget a b"), cs("COMMAND GETKEYSANDFLAGS touch a"), cs("COMMAND GETKEYSANDFLAGS getex a"),
			cs("COMMAND GETKEYSANDFLAGS bitop and d a b"), cs("COMMAND GETKEYSANDFLAGS zunionstore d 2 a b"),
			cs("COMMAND GETKEYSANDFLAGS eval x 1 a"),
			cs("COMMAND GETKEYSANDFLAGS lcs a b"), cs("COMMAND GETKEYSANDFLAGS sintercard 2 a b"),
		}},
		// ---- unknown commands ----
		{name: "unknown-commands", steps: []compatStep{
			cs("FOO"), cs("FOO a"), cs("FOO a b c"), cs("foo BAR"), ca("FOO", ""), ca("FOO", "a b", ""), ca(""),
			ca("", "x"), ca("FOO", "a\r\nb"), ca("FOO\r\nBAR", "x"), ca("FOO", strings.Repeat("x", 200)),
			ca("FOO", strings.Repeat("a", 60), strings.Repeat("b", 60), strings.Repeat("c", 60), "d"),
			ca(strings.Repeat("N", 200), "x"), ca("FOO", strings.Repeat("y", 126), "z"), ca("FOO", strings.Repeat("y", 125), "zz"),
			ca("FOO", strings.Repeat("y", 122), "zzzz", "w"),
			// A NUL byte ends a quoted name or argument: Redis formats them as
			// C strings.
			ca("FO\x00O", "x"), ca("FOO", "a\x00b", "c"), ca("FOO", "\x00", "d"),
			cs("GETT k"), cs("SETT k v"), cs("getx k"), ca(" GET", "k"), ca("GET ", "k"),
		}},
	}
}

// TestCompatArity sends every command in the table with too few and too
// many arguments, in mixed case.
func TestCompatArity(t *testing.T) {
	redisAddr := startRedis(t)
	ts := startServer(t, Options{})
	forEachProtocol(t, func(t *testing.T, proto int) { compatArity(t, dialCompatPair(t, redisAddr, ts.addr, proto)) })
}

func compatArity(t *testing.T, p compatPair) {
	p.flush(t)
	mixed := func(s string) string {
		b := []byte(s)
		for i := range b {
			if i%2 == 0 && 'a' <= b[i] && b[i] <= 'z' {
				b[i] -= 'a' - 'A'
			}
		}
		return string(b)
	}
	filler := func(name string, n int) []string {
		args := []string{name}
		for len(args) < n {
			args = append(args, "x")
		}
		return args
	}
	for _, cmd := range servedSpecs() {
		if r, err := p.redis.do("COMMAND", "INFO", cmd.Name); err != nil || len(r.elems) != 1 || r.elems[0].null {
			t.Logf("%s: not a Redis 7.0 command; skipped", cmd.Name)
			continue
		}
		var tries [][]string
		if cmd.Arity > 0 {
			if cmd.Arity > 1 {
				tries = append(tries, filler(strings.ToUpper(cmd.Name), cmd.Arity-1))
			}
			tries = append(tries, filler(mixed(cmd.Name), cmd.Arity+1), filler(cmd.Name, cmd.Arity+3))
		} else if n := -cmd.Arity; n > 1 {
			tries = append(tries, filler(strings.ToUpper(cmd.Name), n-1), filler(mixed(cmd.Name), 1))
		}
		for _, args := range tries {
			want := p.redis.run(compatExact, args)
			got := p.ours.run(compatExact, args)
			if want != got {
				t.Errorf("%s:\n\tredis: %s\n\tours:  %s", showArgs(args), want, got)
			}
		}
	}
}

// TestCompatCommandInfo compares what COMMAND INFO says about every
// command in the table: name, arity, key positions and ACL categories
// exactly (of subcommands too), and the flags our server knows of.
func TestCompatCommandInfo(t *testing.T) {
	redisAddr := startRedis(t)
	ts := startServer(t, Options{})
	forEachProtocol(t, func(t *testing.T, proto int) { compatCommandInfo(t, dialCompatPair(t, redisAddr, ts.addr, proto)) })
}

// compatCommandInfo compares COMMAND INFO of every command: the type of
// each of the ten elements (RESP3 has sets among them), name, arity, key
// positions, key specs (every flag, begin_search, find_keys, notes) and
// the flags our server knows of; and of each subcommand, its arity,
// categories and key specs.
func compatCommandInfo(t *testing.T, p compatPair) {
	known := make(map[string]bool)
	for _, f := range commands.FlagNames {
		known[f.Name] = true
	}
	// Flags Redis 7 gives differently without it mattering to clients:
	// loading and stale only say a command may run while a replica loads
	// or is stale, which our server never is.
	ignored := map[string]bool{"loading": true, "stale": true}
	// Flags Redis 7.2 changed from 7.0's: scripts may call WAIT.
	changedIn72 := map[string]bool{"wait": true}
	for _, cmd := range servedSpecs() {
		rr, err1 := p.redis.do("COMMAND", "INFO", cmd.Name)
		or, err2 := p.ours.do("COMMAND", "INFO", cmd.Name)
		if err1 != nil || err2 != nil {
			t.Fatalf("COMMAND INFO %s: %v %v", cmd.Name, err1, err2)
		}
		if len(rr.elems) != 1 || rr.elems[0].null {
			t.Logf("%s: not a Redis 7.0 command; skipped", cmd.Name)
			continue
		}
		if len(or.elems) != 1 || len(or.elems[0].elems) != 10 {
			t.Errorf("COMMAND INFO %s: ours is not a 10-element entry: %s", cmd.Name, or)
			continue
		}
		re, oe := rr.elems[0].elems, or.elems[0].elems
		for i := range re {
			if re[i].kind != oe[i].kind {
				t.Errorf("COMMAND INFO %s: element %d's type: redis %s, ours %s", cmd.Name, i, re[i], oe[i])
			}
		}
		// Element 6 is the ACL categories, which ACL rules and ACL CAT use;
		// 8 the key specs.
		for _, i := range []int{0, 1, 3, 4, 5, 6, 8} {
			if re[i].String() != oe[i].String() {
				t.Errorf("COMMAND INFO %s: element %d: redis %s, ours %s", cmd.Name, i, re[i], oe[i])
			}
		}
		// Each subcommand both have: its name, arity and categories.
		redisSubs := make(map[string]compatReply)
		for _, sub := range re[9].elems {
			redisSubs[sub.elems[0].str] = sub
		}
		for _, sub := range oe[9].elems {
			rs, ok := redisSubs[sub.elems[0].str]
			if !ok { // CLIENT SETINFO is new in 7.2
				t.Logf("%s: not a Redis 7.0 subcommand; skipped", sub.elems[0].str)
				continue
			}
			for _, i := range []int{1, 6, 8} {
				if rs.elems[i].String() != sub.elems[i].String() {
					t.Errorf("COMMAND INFO %s: element %d: redis %s, ours %s", sub.elems[0].str, i, rs.elems[i], sub.elems[i])
				}
			}
		}
		flags := func(r compatReply) []string {
			var out []string
			for _, f := range r.elems {
				if known[f.str] && !ignored[f.str] {
					out = append(out, f.str)
				}
			}
			slices.Sort(out)
			return out
		}
		// COMMAND DOCS: which key spec each key argument has, in order.
		rd, err1 := p.redis.do("COMMAND", "DOCS", cmd.Name)
		od, err2 := p.ours.do("COMMAND", "DOCS", cmd.Name)
		if err1 != nil || err2 != nil {
			t.Fatalf("COMMAND DOCS %s: %v %v", cmd.Name, err1, err2)
		}
		if w, g := docKeySpecIndexes(rd), docKeySpecIndexes(od); !slices.Equal(w, g) {
			t.Errorf("COMMAND DOCS %s: key_spec_index: redis %v, ours %v", cmd.Name, w, g)
		}
		// A command with subcommands (CONFIG, CLIENT, COMMAND) has its
		// flags on each subcommand in Redis, which our table does not have.
		if len(re) > 9 && len(re[9].elems) > 0 {
			continue
		}
		if rf, of := flags(re[2]), flags(oe[2]); !slices.Equal(rf, of) && !changedIn72[cmd.Name] {
			t.Errorf("COMMAND INFO %s: flags: redis %v, ours %v (all of Redis's: %s)", cmd.Name, rf, of, re[2])
		}
	}
}

// docKeySpecIndexes are the key_spec_index values of a COMMAND DOCS
// reply's arguments, nested ones included, in their order.
func docKeySpecIndexes(r compatReply) []string {
	var out []string
	var walk func(m compatReply)
	walk = func(m compatReply) {
		for i := 0; i+1 < len(m.elems); i += 2 {
			switch m.elems[i].str {
			case "key_spec_index":
				out = append(out, m.elems[i+1].str)
			case "arguments":
				for _, a := range m.elems[i+1].elems {
					walk(a)
				}
			}
		}
	}
	for i := 1; i < len(r.elems); i += 2 {
		walk(r.elems[i])
	}
	return out
}

// TestCompatShape checks the replies that differ between the servers by
// nature (ids, times, versions, other commands) for their shape only.
func TestCompatShape(t *testing.T) {
	redisAddr := startRedis(t)
	ts := startServer(t, Options{})
	forEachProtocol(t, func(t *testing.T, proto int) { compatShape(t, ts, dialCompatPair(t, redisAddr, ts.addr, proto), proto) })
}

// compatShape is TestCompatShape in one protocol. Text replies (INFO,
// CLIENT INFO and LIST) are bulk strings in RESP2 and verbatim strings of
// format txt in RESP3.
func compatShape(t *testing.T, ts *testServer, p compatPair, proto int) {
	p.flush(t)
	isText := func(r compatReply) bool {
		if proto == 3 {
			return r.kind == '=' && r.format == "txt"
		}
		return r.kind == '$'
	}
	both := func(args ...string) (compatReply, compatReply) {
		t.Helper()
		return p.both(t, args...)
	}
	type named struct {
		who string
		r   compatReply
	}
	each := func(rr, or compatReply) []named { return []named{{"redis", rr}, {"ours", or}} }

	t.Run("INFO", func(t *testing.T) {
		rr, or := both("INFO")
		for _, x := range each(rr, or) {
			if !isText(x.r) || !strings.HasPrefix(x.r.str, "# Server\r\n") || !strings.Contains(x.r.str, "\r\nredis_version:") ||
				!strings.Contains(x.r.str, "# Keyspace\r\n") || !strings.HasSuffix(x.r.str, "\r\n") {
				t.Errorf("INFO: %s: unexpected shape: %.200q", x.who, x.r.str)
			}
		}
		for _, section := range []string{"server", "clients", "memory", "stats"} {
			rr, or := both("INFO", section)
			head := "# " + strings.ToUpper(section[:1]) + section[1:] + "\r\n"
			for _, x := range each(rr, or) {
				if !isText(x.r) || !strings.HasPrefix(x.r.str, head) || strings.Contains(x.r.str, "# Keyspace") {
					t.Errorf("INFO %s: %s: unexpected shape: %.200q", section, x.who, x.r.str)
				}
			}
		}
		for _, field := range []string{"redis_version", "redis_mode", "tcp_port", "uptime_in_seconds",
			"connected_clients", "maxclients", "used_memory", "maxmemory", "maxmemory_policy",
			"total_connections_received", "total_commands_processed", "expired_keys", "evicted_keys",
			"keyspace_hits", "keyspace_misses"} {
			rr, or := both("INFO")
			for _, x := range each(rr, or) {
				if !strings.Contains(x.r.str, "\r\n"+field+":") {
					t.Errorf("INFO: %s has no %s field", x.who, field)
				}
			}
		}
	})

	t.Run("RESETSTAT", func(t *testing.T) {
		both("SET", "resetstat:k", "v")
		both("GET", "resetstat:k")
		both("GET", "resetstat:missing")
		both("CONFIG", "RESETSTAT")
		both("GET", "resetstat:k")
		both("GET", "resetstat:k")
		both("GET", "resetstat:missing")
		rr, or := both("INFO", "stats")
		for _, x := range each(rr, or) {
			for _, want := range []string{"\r\nkeyspace_hits:2\r\n", "\r\nkeyspace_misses:1\r\n",
				"\r\nexpired_keys:0\r\n", "\r\nevicted_keys:0\r\n", "\r\nrejected_connections:0\r\n"} {
				if !strings.Contains(x.r.str, want) {
					t.Errorf("INFO stats after CONFIG RESETSTAT: %s lacks %q:\n%s", x.who, strings.TrimSpace(want), x.r.str)
				}
			}
		}
		both("DEL", "resetstat:k")
	})

	t.Run("TIME", func(t *testing.T) {
		rr, or := both("TIME")
		for _, x := range each(rr, or) {
			if x.r.kind != '*' || len(x.r.elems) != 2 {
				t.Errorf("TIME: %s: %s", x.who, x.r)
				continue
			}
			sec, err1 := strconv.ParseInt(x.r.elems[0].str, 10, 64)
			usec, err2 := strconv.ParseInt(x.r.elems[1].str, 10, 64)
			if err1 != nil || err2 != nil || x.r.elems[0].kind != '$' || usec < 0 || usec >= 1e6 ||
				sec < time.Now().Unix()-5 || sec > time.Now().Unix()+5 {
				t.Errorf("TIME: %s: %s", x.who, x.r)
			}
		}
		rr, or = both("TIME", "x")
		if rr.String() != or.String() {
			t.Errorf("TIME x: redis %s, ours %s", rr, or)
		}
	})

	var ids [2]int64
	t.Run("CLIENT ID", func(t *testing.T) {
		rr, or := both("CLIENT", "ID")
		for i, x := range each(rr, or) {
			n, err := strconv.ParseInt(x.r.str, 10, 64)
			if x.r.kind != ':' || err != nil || n <= 0 {
				t.Errorf("CLIENT ID: %s: %s", x.who, x.r)
			}
			ids[i] = n
		}
	})

	// clientFields parses a CLIENT INFO line.
	clientFields := func(line string) map[string]string {
		m := make(map[string]string)
		for _, f := range strings.Fields(line) {
			k, v, _ := strings.Cut(f, "=")
			m[k] = v
		}
		return m
	}
	t.Run("CLIENT INFO", func(t *testing.T) {
		both("CLIENT", "SETNAME", "shape")
		rr, or := both("CLIENT", "INFO")
		if !isText(rr) || !isText(or) || !strings.HasSuffix(rr.str, "\n") || !strings.HasSuffix(or.str, "\n") ||
			strings.Count(or.str, "\n") != 1 {
			t.Fatalf("CLIENT INFO: redis %s, ours %s", rr, or)
		}
		rf, of := clientFields(rr.str), clientFields(or.str)
		if of["id"] != strconv.FormatInt(ids[1], 10) {
			t.Errorf("CLIENT INFO: ours id=%s, CLIENT ID said %d", of["id"], ids[1])
		}
		// The buffer fields hold this server's real buffers, whose sizes
		// are its own (TestCompatClientInfoFields checks what they mean).
		volatile := map[string]bool{"id": true, "addr": true, "laddr": true, "fd": true, "age": true, "idle": true, "cmd": true,
			"qbuf": true, "qbuf-free": true, "argv-mem": true, "multi-mem": true, "rbs": true, "rbp": true, "obl": true,
			"oll": true, "omem": true, "tot-mem": true}
		for k, v := range rf {
			ov, ok := of[k]
			switch {
			case volatile[k]:
				if !ok {
					t.Errorf("CLIENT INFO: ours has no %s field", k)
				}
			case ok && ov != v:
				t.Errorf("CLIENT INFO: field %s: redis %q, ours %q", k, v, ov)
			}
		}
		for _, k := range []string{"name", "db", "flags", "user", "resp", "multi", "sub", "psub"} {
			if _, ok := of[k]; !ok {
				t.Errorf("CLIENT INFO: ours has no %s field", k)
			}
		}
		// Redis names the subcommand in cmd.
		if rf["cmd"] != of["cmd"] {
			t.Errorf("CLIENT INFO: field cmd: redis %q, ours %q", rf["cmd"], of["cmd"])
		}
	})

	t.Run("CLIENT LIST", func(t *testing.T) {
		rr, or := both("CLIENT", "LIST")
		for _, x := range each(rr, or) {
			if !isText(x.r) || !strings.HasPrefix(x.r.str, "id=") || !strings.HasSuffix(x.r.str, "\n") {
				t.Errorf("CLIENT LIST: %s: %s", x.who, x.r)
			}
		}
		for i, x := range each(both("CLIENT", "LIST", "ID", strconv.FormatInt(ids[0], 10), strconv.FormatInt(ids[1], 10))) {
			want := "id=" + strconv.FormatInt(ids[i], 10) + " "
			if !isText(x.r) || !strings.HasPrefix(x.r.str, want) || strings.Count(x.r.str, "\n") != 1 {
				t.Errorf("CLIENT LIST ID: %s: %s", x.who, x.r)
			}
		}
		for _, x := range each(both("CLIENT", "LIST", "TYPE", "normal")) {
			if !isText(x.r) || !strings.Contains(x.r.str, "name=shape ") {
				t.Errorf("CLIENT LIST TYPE normal: %s: %s", x.who, x.r)
			}
		}
	})

	t.Run("RANDOMKEY", func(t *testing.T) {
		both("MSET", "a", "1", "b", "2", "c", "3")
		for range 20 {
			for _, x := range each(both("RANDOMKEY")) {
				if s := x.r.String(); s != `"a"` && s != `"b"` && s != `"c"` {
					t.Fatalf("RANDOMKEY: %s: %s", x.who, s)
				}
			}
		}
		both("FLUSHALL")
	})

	t.Run("HELP", func(t *testing.T) {
		for _, c := range []string{"CLIENT", "CONFIG", "COMMAND", "PUBSUB"} {
			rr, or := both(c, "HELP")
			for _, x := range each(rr, or) {
				n := len(x.r.elems)
				if x.r.kind != '*' || n < 5 ||
					x.r.elems[0].String() != "+"+c+" <subcommand> [<arg> [value] [opt] ...]. Subcommands are:" ||
					x.r.elems[n-2].String() != "+HELP" ||
					// Redis 7.0 says "Prints this help.", 7.2 "Print this help.".
					strings.TrimSuffix(strings.Replace(x.r.elems[n-1].str, "Prints", "Print", 1), ".") != "    Print this help" {
					t.Errorf("%s HELP: %s: %s", c, x.who, x.r)
				}
			}
			// Every subcommand our help lists is in Redis's: subcommand
			// lines are those not indented.
			for i := 1; i < len(or.elems); i++ {
				line := or.elems[i].str
				if strings.HasPrefix(line, " ") || line == "" {
					continue
				}
				word := strings.Fields(line)[0]
				found := false
				for _, e := range rr.elems[1:] {
					if f := strings.Fields(e.str); !strings.HasPrefix(e.str, " ") && len(f) > 0 && f[0] == word {
						found = true
					}
				}
				if !found && !(c == "CLIENT" && (word == "SETINFO" || word == "NO-TOUCH")) { // new in 7.2
					t.Errorf("%s HELP: ours lists %s, Redis's does not", c, word)
				}
			}
		}
	})

	t.Run("COMMAND", func(t *testing.T) {
		rr, or := both("COMMAND", "COUNT")
		if rr.kind != ':' || or.String() != ":"+strconv.Itoa(len(servedSpecs())) {
			t.Errorf("COMMAND COUNT: redis %s, ours %s", rr, or)
		}
		rr, or = both("COMMAND", "LIST")
		redisNames := make(map[string]bool)
		for _, e := range rr.elems {
			redisNames[e.str] = true
		}
		// Each command, then its subcommands, as Redis lists them.
		own := make(map[string]bool)
		for _, cmd := range servedSpecs() {
			own[cmd.Name] = cmd.Own
			for _, sub := range cmd.Subcommands {
				own[sub.Name] = cmd.Own
			}
		}
		if or.kind != '*' || len(or.elems) != len(own) {
			t.Errorf("COMMAND LIST: ours %s", or)
		}
		for _, e := range or.elems {
			new72 := e.str == "client|no-touch" || e.str == "client|setinfo"
			if !redisNames[e.str] && !own[e.str] && !new72 {
				t.Errorf("COMMAND LIST: ours has %q, Redis 7.0 does not", e.str)
			}
		}
		_, or = both("COMMAND")
		if or.kind != '*' || len(or.elems) != len(servedSpecs()) {
			t.Errorf("COMMAND: ours has %d entries", len(or.elems))
		}
		rr, or = both("COMMAND", "INFO", "get", "nosuch", "SET")
		if len(rr.elems) != 3 || len(or.elems) != 3 || !or.elems[1].null || or.elems[0].elems[0].str != "get" ||
			or.elems[2].elems[0].str != "set" {
			t.Errorf("COMMAND INFO get nosuch SET: redis %s\nours %s", rr, or)
		}
		rr, or = both("COMMAND", "DOCS", "get")
		if !rr.pairs() || !or.pairs() || rr.kind != or.kind || len(or.elems) != 2 || or.elems[0].str != "get" {
			t.Errorf("COMMAND DOCS get: redis %s\nours %s", rr, or)
		}
		// In RESP3, the nested replies have Redis's types at every level
		// ours shares with Redis's: maps, sets of flags, arrays of
		// arguments. (In RESP2 they are all arrays.)
		if proto != 3 {
			return
		}
		for _, args := range [][]string{{"COMMAND", "DOCS", "set", "getex", "client", "config"},
			{"COMMAND", "INFO", "set", "client", "config", "command"}, {"COMMAND", "DOCS"}} {
			rr, or := both(args...)
			sameTypes(t, showArgs(args), rr, or)
		}
	})

	t.Run("CONFIG GET differing values", func(t *testing.T) {
		for _, name := range []string{"port", "databases", "maxmemory-policy", "maxclients"} {
			for _, x := range each(both("CONFIG", "GET", name)) {
				if !x.r.pairs() || len(x.r.elems) != 2 || x.r.elems[0].str != name || x.r.elems[1].kind != '$' {
					t.Errorf("CONFIG GET %s: %s: %s", name, x.who, x.r)
				}
			}
		}
		_, or := both("CONFIG", "GET", "port")
		if _, port, _ := net.SplitHostPort(ts.addr); len(or.elems) == 2 && or.elems[1].str != port {
			t.Errorf("CONFIG GET port: ours %s, listening on %s", or, ts.addr)
		}
	})
}

// sameTypes checks that ours has the reply type redis has, and so on
// inside: for a map, at each key both have (entries are matched by key),
// for other aggregates element by element as far as both go.
func sameTypes(t *testing.T, path string, redis, ours compatReply) {
	t.Helper()
	if redis.kind != ours.kind {
		t.Errorf("%s: type: redis %.200s, ours %.200s", path, redis, ours)
		return
	}
	if redis.pairs() && redis.kind == '%' {
		values := make(map[string]compatReply)
		for i := 0; i+1 < len(redis.elems); i += 2 {
			values[redis.elems[i].String()] = redis.elems[i+1]
		}
		for i := 0; i+1 < len(ours.elems); i += 2 {
			key := ours.elems[i].String()
			if rv, ok := values[key]; ok {
				sameTypes(t, path+" "+key, rv, ours.elems[i+1])
			}
		}
		return
	}
	for i := range min(len(redis.elems), len(ours.elems)) {
		sameTypes(t, path+" ["+strconv.Itoa(i)+"]", redis.elems[i], ours.elems[i])
	}
}

// TestCompatQuit checks QUIT's reply and that it closes the connection.
func TestCompatQuit(t *testing.T) {
	redisAddr := startRedis(t)
	ts := startServer(t, Options{})
	forEachProtocol(t, func(t *testing.T, proto int) {
		for _, args := range [][]string{{"QUIT"}, {"quit"}, {"QUIT", "extra"}} {
			p := dialCompatPair(t, redisAddr, ts.addr, proto)
			want := p.redis.run(compatExact, args)
			got := p.ours.run(compatExact, args)
			if want != got {
				t.Errorf("%s: redis %s, ours %s", showArgs(args), want, got)
			}
			if rc, oc := p.redis.closed(3*time.Second), p.ours.closed(3*time.Second); rc != oc {
				t.Errorf("%s: connection closed: redis %v, ours %v", showArgs(args), rc, oc)
			}
		}
	})
}

// TestCompatRedis72Texts checks, on our server alone, the replies where
// Redis 7.2 differs from the 7.0 the other tests compare with: CLIENT
// SETINFO, which 7.0 lacks (7.2's networking.c, clientSetinfoCommand,
// checks the attribute before the value and names it as given), and
// HELLO's NOAUTH text, which 7.2 reworded.
func TestCompatRedis72Texts(t *testing.T) {
	ts := startServer(t, Options{RequirePass: "secret"})
	c := dialCompat(t, ts.addr)
	const helloNoAuth = "-NOAUTH HELLO must be called with the client already authenticated, otherwise the " +
		"HELLO <proto> AUTH <user> <pass> option can be used to authenticate the client and select the " +
		"RESP protocol version at the same time"
	for _, args := range [][]string{{"HELLO"}, {"HELLO", "2"}, {"HELLO", "3"}, {"HELLO", "2", "SETNAME", "x"}} {
		if got := c.run(compatExact, args); got != helloNoAuth {
			t.Errorf("%s before AUTH: got %s, want %s", showArgs(args), got, helloNoAuth)
		}
	}
	if got := c.run(compatExact, []string{"AUTH", "secret"}); got != "+OK" {
		t.Fatalf("AUTH secret: %s", got)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"CLIENT", "SETINFO", "lib-name", "mylib"}, "+OK"},
		{[]string{"CLIENT", "SETINFO", "LIB-NAME", "mylib"}, "+OK"},
		{[]string{"CLIENT", "SETINFO", "lib-ver", "1.2.3"}, "+OK"},
		{[]string{"client", "setinfo", "Lib-Ver", "1.2.3"}, "+OK"},
		{[]string{"CLIENT", "SETINFO", "lib-name", "a b"}, "-ERR lib-name cannot contain spaces, newlines or special characters."},
		{[]string{"CLIENT", "SETINFO", "LIB-VER", "a\nb"}, "-ERR LIB-VER cannot contain spaces, newlines or special characters."},
		{[]string{"CLIENT", "SETINFO", "lib-name", "caf\xc3\xa9"}, "-ERR lib-name cannot contain spaces, newlines or special characters."},
		{[]string{"CLIENT", "SETINFO", "foo", "bar"}, "-ERR Unrecognized option 'foo'"},
		{[]string{"CLIENT", "SETINFO", "foo", "a b"}, "-ERR Unrecognized option 'foo'"},
		{[]string{"CLIENT", "SETINFO", "foo", ""}, "-ERR Unrecognized option 'foo'"},
		{[]string{"CLIENT", "SETINFO", "lib-name"}, "-ERR wrong number of arguments for 'client|setinfo' command"},
		{[]string{"CLIENT", "SETINFO", "lib-name", "a", "b"}, "-ERR wrong number of arguments for 'client|setinfo' command"},
		{[]string{"CLIENT", "SETINFO", "lib-name", "final"}, "+OK"},
		{[]string{"CLIENT", "SETINFO", "lib-ver", ""}, "+OK"},
	} {
		if got := c.run(compatExact, tc.args); got != tc.want {
			t.Errorf("%s: got %s, want %s", showArgs(tc.args), got, tc.want)
		}
	}
	r, err := c.do("CLIENT", "INFO")
	if err != nil || !strings.Contains(r.str, " lib-name=final ") || !strings.Contains(r.str, " lib-ver= ") &&
		!strings.HasSuffix(strings.TrimSpace(r.str), " lib-ver=") {
		t.Errorf("CLIENT INFO after SETINFO: %s %v", r, err)
	}
}

// inlineCase is raw bytes sent as they are; the replies expected are
// Redis's.
type inlineCase struct {
	name string
	send []string // written one after the other
	// replies is how many replies to read after the writes.
	replies int
	// closes says Redis closes the connection afterwards (after a protocol
	// error); it only sets how long to wait for that.
	closes bool
}

// TestInlineCompat sends inline and malformed requests over raw
// connections to both servers and compares every reply and whether the
// connection was closed.
func TestInlineCompat(t *testing.T) {
	redisAddr := startRedis(t)
	ts := startServer(t, Options{})
	big := "SET k " + strings.Repeat("x", 70<<10) // no newline: too big
	cases := []inlineCase{
		{name: "plain", send: []string{"SET a b\r\n", "GET a\r\n", "get a\r\n", "DEL a\r\n", "GET a\r\n"}, replies: 5},
		{name: "newline only", send: []string{"SET a b\n", "GET a\n"}, replies: 2},
		{name: "spaces and tabs", send: []string{"  SET   a \t c  \r\n", "\tGET a\r\n", "ECHO a\tb\r\n"}, replies: 3},
		{name: "empty lines", send: []string{"\r\n", "\n", "   \r\n", "PING\r\n"}, replies: 1},
		{name: "double quotes", send: []string{`SET k "hello world"` + "\r\n", "GET k\r\n", `ECHO ""` + "\r\n",
			`ECHO "a" "b"` + "\r\n", `ECHO " lead"` + "\r\n"}, replies: 5},
		{name: "single quotes", send: []string{`SET k 'it\'s'` + "\r\n", "GET k\r\n", `ECHO 'a\nb'` + "\r\n",
			`ECHO ''` + "\r\n", `ECHO 'say "hi"'` + "\r\n", `ECHO 'back\\slash'` + "\r\n"}, replies: 6},
		{name: "escapes", send: []string{`SET k "\x41\x4a\x4A"` + "\r\n", "GET k\r\n",
			`ECHO "\n\r\t\b\a\\\"\q"` + "\r\n", `ECHO "\x4"` + "\r\n", `ECHO "\x4g"` + "\r\n", `ECHO "\xzz"` + "\r\n",
			`ECHO "\x00\xff"` + "\r\n", `ECHO "it's"` + "\r\n", `ECHO "a'b"` + "\r\n"}, replies: 9},
		{name: "quotes inside words", send: []string{`ECHO abc"def ghi"` + "\r\n", `ECHO abc'd e'` + "\r\n",
			`ECHO a"b"c` + "\r\n", `ECHO a'b'c` + "\r\n"}, replies: 4},
		{name: "unknown command inline", send: []string{"FOO bar baz\r\n", `NOPE "a b"` + "\r\n"}, replies: 2},
		{name: "wrong arity inline", send: []string{"GET\r\n", "SET k\r\n"}, replies: 2},
		{name: "pipelined inline and multibulk", send: []string{"SET a 1\r\n*2\r\n$3\r\nGET\r\n$1\r\na\r\nINCR a\r\n"}, replies: 3},
		{name: "pipeline in one write", send: []string{encodeCommand("SET", "a", "1") + encodeCommand("INCR", "a") +
			encodeCommand("GET", "a") + encodeCommand("NOPE") + encodeCommand("GET") + encodeCommand("DEL", "a")}, replies: 6},
		{name: "command split across writes", send: []string{"*3\r\n$3\r\nSE", "T\r\n$1\r\na\r", "\n$2\r\nbc\r\n", "GE", "T a\r\n"}, replies: 2},
		{name: "multibulk empty and negative counts", send: []string{"*0\r\n*-1\r\nPING\r\n"}, replies: 1},
		{name: "dollar line as inline", send: []string{"$3\r\nfoo\r\n"}, replies: 2},
		{name: "vertical tab and form feed", send: []string{"ECHO a\vb\r\n", "ECHO a\fb\r\n", "ECHO \va\r\n"}, replies: 3},
		// A NUL byte hides the rest of an inline line, or of a header line,
		// from Redis's strchr: the command never completes, until more than
		// 64 KiB wait. In a bulk it is a byte, and ends an argument quoted
		// in an error text (Redis's %.128s).
		{name: "NUL in an inline line", send: []string{"ECHO a\x00b\r\n" + strings.Repeat("PING\r\n", 12000)}, replies: 1, closes: true},
		{name: "NUL in a multibulk header", send: []string{"*1\x00\r\n" + strings.Repeat("PING\r\n", 12000)}, replies: 1, closes: true},
		{name: "NUL in a bulk header", send: []string{"*1\r\n$4\x00\r\n" + strings.Repeat("PING\r\n", 12000)}, replies: 1, closes: true},
		{name: "NUL in bulks", send: []string{encodeCommand("ECHO", "a\x00b"), encodeCommand("PI\x00G"),
			encodeCommand("NOPE", "a\x00b", "c"), encodeCommand("CLIENT", "NO\x00PE")}, replies: 4},
		{name: "CR in the middle", send: []string{"ECHO a\rb\r\n", "ECHO x\r\r\n"}, replies: 2},
		// Protocol errors: an error, then the connection is closed.
		{name: "unbalanced double quote", send: []string{"PING\r\n", `ECHO "abc` + "\r\n", "PING\r\n"}, replies: 2, closes: true},
		{name: "unbalanced single quote", send: []string{`ECHO 'abc` + "\r\n"}, replies: 1, closes: true},
		{name: "closing quote not followed by space", send: []string{`ECHO "abc"def` + "\r\n"}, replies: 1, closes: true},
		{name: "closing single quote not followed by space", send: []string{`ECHO 'a'b` + "\r\n"}, replies: 1, closes: true},
		{name: "escaped closing quote", send: []string{`ECHO "abc\"` + "\r\n"}, replies: 1, closes: true},
		{name: "quote then quote", send: []string{`ECHO "a""b"` + "\r\n"}, replies: 1, closes: true},
		{name: "too big inline", send: []string{big}, replies: 1, closes: true},
		{name: "invalid multibulk length", send: []string{"*abc\r\n"}, replies: 1, closes: true},
		{name: "invalid multibulk length sign", send: []string{"*+1\r\n$4\r\nPING\r\n"}, replies: 1, closes: true},
		{name: "expected dollar", send: []string{"*1\r\n+PING\r\n"}, replies: 1, closes: true},
		{name: "invalid bulk length", send: []string{"*1\r\n$abc\r\n"}, replies: 1, closes: true},
		// Lengths are read by Redis's string2ll: no leading zero, no sign
		// but '-', no space, not empty.
		{name: "bulk length with a leading zero", send: []string{"*1\r\n$04\r\nPING\r\n"}, replies: 1, closes: true},
		{name: "multibulk count with a leading zero", send: []string{"*02\r\n$4\r\nECHO\r\n$1\r\nx\r\n"}, replies: 1, closes: true},
		{name: "zero lengths with leading zeros", send: []string{"*1\r\n$00\r\n\r\n"}, replies: 1, closes: true},
		{name: "multibulk count 00", send: []string{"*00\r\nPING\r\n"}, replies: 1, closes: true},
		{name: "multibulk count -0", send: []string{"*-0\r\nPING\r\n"}, replies: 1, closes: true},
		{name: "bulk length -0", send: []string{"*1\r\n$-0\r\n"}, replies: 1, closes: true},
		{name: "bulk length +4", send: []string{"*1\r\n$+4\r\nPING\r\n"}, replies: 1, closes: true},
		{name: "bulk length with a space", send: []string{"*1\r\n$ 4\r\nPING\r\n"}, replies: 1, closes: true},
		{name: "multibulk count with a space", send: []string{"*1 \r\n$4\r\nPING\r\n"}, replies: 1, closes: true},
		{name: "empty multibulk count", send: []string{"*\r\nPING\r\n"}, replies: 1, closes: true},
		{name: "empty bulk length", send: []string{"*2\r\n$4\r\nECHO\r\n$\r\n\r\n"}, replies: 1, closes: true},
		{name: "multibulk count -2", send: []string{"*-2\r\nPING\r\n"}, replies: 1},
		{name: "leading zeros after a command", send: []string{"*1\r\n$4\r\nPING\r\n*1\r\n$000004\r\nPING\r\n"}, replies: 2, closes: true},
		{name: "negative bulk length", send: []string{"*1\r\n$-1\r\n"}, replies: 1, closes: true},
		{name: "bulk length too big", send: []string{"*1\r\n$536870913\r\n"}, replies: 1, closes: true},
	}
	forEachProtocol(t, func(t *testing.T, proto int) {
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				p := dialCompatPair(t, redisAddr, ts.addr, proto)
				p.flush(t)
				runRawCase(t, p, tc)
			})
		}
	})
}

// runRawCase writes a case's bytes to both servers and compares the
// replies and whether each closed the connection.
func runRawCase(t *testing.T, p compatPair, tc inlineCase) {
	t.Helper()
	var want, got []string
	for _, c := range []*compatConn{p.redis, p.ours} {
		var out []string
		for _, s := range tc.send {
			if err := c.send(s); err != nil {
				out = append(out, renderErr(err))
			}
		}
		for range tc.replies {
			r, err := c.read()
			if err != nil {
				out = append(out, renderErr(err))
				break
			}
			out = append(out, r.String())
		}
		wait := 300 * time.Millisecond
		if tc.closes {
			wait = 3 * time.Second
		}
		if c.closed(wait) {
			out = append(out, closedReply)
		}
		if c == p.redis {
			want = out
		} else {
			got = out
		}
	}
	if !slices.Equal(want, got) {
		t.Errorf("%s: sent %.300q\n\tredis: %s\n\tours:  %s", tc.name, tc.send, strings.Join(want, " | "), strings.Join(got, " | "))
	}
	if redisClosed := len(want) > 0 && want[len(want)-1] == closedReply; redisClosed != tc.closes {
		t.Logf("%s: the case says closes=%v, but Redis closed=%v: %s", tc.name, tc.closes, redisClosed, strings.Join(want, " | "))
	}
}

// TestCompatAuth sets a password on both servers with CONFIG SET and
// compares what clients may do before and after AUTH.
func TestCompatAuth(t *testing.T) {
	redisAddr := startRedis(t)
	ts := startServer(t, Options{})
	admin := dialCompatPair(t, redisAddr, ts.addr, 2)
	admin3 := dialCompatPair(t, redisAddr, ts.addr, 3)
	admin.flush(t)
	// A connection open before the password is set stays authenticated,
	// in either protocol.
	runCompatSteps(t, admin, compatScript{name: "set-password", steps: []compatStep{
		cs("SET k v"), cs("CONFIG SET requirepass secret"), cs("PING"), cs("GET k"), csPairs("CONFIG GET requirepass"),
	}})
	runCompatSteps(t, admin3, compatScript{name: "set-password-resp3", steps: []compatStep{
		cs("PING"), cs("GET k"), cs("GET nosuch"), csPairs("CONFIG GET requirepass"), csMasked("HELLO"),
	}})
	scripts := []compatScript{
		{name: "before-auth", steps: []compatStep{
			cs("PING"), cs("GET k"), cs("SET k v2"), cs("CLIENT SETNAME x"), cs("CLIENT GETNAME"), cs("DBSIZE"),
			cs("FOO"), cs("foo bar"), cs("GET"), cs("GET a b"), cs("SET k"), cs("CLIENT"), cs("CLIENT FOO"),
			// Not compared: HELLO's NOAUTH text, which 7.2 changed (see
			// TestCompatRedis72Texts).
			cs("HELLO 4"), cs("HELLO abc"), cs("HELLO 2 FOO"),
			cs("HELLO 2 AUTH default wrong"), cs("HELLO 2 AUTH nobody secret"),
			cs("AUTH wrong"), cs("AUTH nobody secret"), cs("AUTH default wrong"), cs("AUTH a b c"), cs("AUTH"),
			ca("AUTH", ""), cs("PING"), cs("AUTH secret"), cs("PING"), cs("GET k"), cs("AUTH wrong"), cs("PING"),
			cs("AUTH secret"), cs("auth SECRET"), cs("GET k"),
		}},
		{name: "auth-with-user", steps: []compatStep{
			cs("AUTH default secret"), cs("GET k"), cs("AUTH DEFAULT secret"), cs("PING"),
		}},
		{name: "hello-auth", steps: []compatStep{
			csMasked("HELLO 2 AUTH default secret"), cs("PING"), cs("CLIENT GETNAME"), csMasked("HELLO 2"),
		}},
		{name: "hello-auth-setname", steps: []compatStep{
			csMasked("HELLO 2 AUTH default secret SETNAME named"), cs("CLIENT GETNAME"),
			csMasked("HELLO 2 SETNAME other AUTH default secret"), cs("CLIENT GETNAME"),
		}},
		{name: "quit-before-auth", steps: []compatStep{cs("QUIT")}},
	}
	forEachProtocol(t, func(t *testing.T, proto int) {
		for _, sc := range scripts {
			if proto == 3 {
				sc.steps = authInRESP3(sc.steps)
			}
			t.Run(sc.name, func(t *testing.T) {
				// Not switched by dialCompatPair: HELLO 3 needs AUTH first.
				runCompatSteps(t, dialCompatPair(t, redisAddr, ts.addr, 2), sc)
			})
		}
	})
	// Before AUTH, Redis allows at most 10 arguments of at most 16 KiB.
	// RESP2 only: a connection cannot switch protocol before it
	// authenticates.
	for _, tc := range []inlineCase{
		{name: "unauthenticated multibulk length", send: []string{"*11\r\n"}, replies: 1, closes: true},
		{name: "ten arguments are fine", send: []string{encodeCommand("EXISTS", "1", "2", "3", "4", "5", "6", "7", "8", "9")}, replies: 1},
		{name: "unauthenticated bulk length", send: []string{"*2\r\n$3\r\nGET\r\n$16385\r\n"}, replies: 1, closes: true},
		{name: "16 KiB is fine", send: []string{encodeCommand("GET", strings.Repeat("k", 16384))}, replies: 1},
		{name: "inline before auth", send: []string{"GET k\r\n", "AUTH secret\r\n", "GET k\r\n"}, replies: 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			runRawCase(t, dialCompatPair(t, redisAddr, ts.addr, 2), tc)
		})
	}
}

// authInRESP3 turns an authentication script into its RESP3 run: HELLO 2
// becomes HELLO 3, and a connection that authenticates with AUTH switches
// with HELLO 3 right after, so the rest of the script runs in RESP3.
func authInRESP3(steps []compatStep) []compatStep {
	var out []compatStep
	switched := false
	for _, st := range steps {
		if len(st.args) > 1 && strings.EqualFold(st.args[0], "hello") && st.args[1] == "2" {
			st.args = slices.Clone(st.args)
			st.args[1] = "3"
		}
		out = append(out, st)
		authOK := len(st.args) == 2 && st.args[1] == "secret" ||
			len(st.args) == 3 && strings.EqualFold(st.args[1], "default") && st.args[2] == "secret"
		if !switched && strings.EqualFold(st.args[0], "auth") && authOK {
			out = append(out, csMasked("HELLO 3"))
			switched = true
		}
	}
	return out
}

// compatTrace, set by COMPAT_TRACE=1, logs every step's replies, which
// helps when writing a script.
var compatTrace = os.Getenv("COMPAT_TRACE") != ""

// compatAll, set by COMPAT_ALL=1, goes on after a script's first mismatch,
// to list them all (later ones may follow from the first).
var compatAll = os.Getenv("COMPAT_ALL") != ""
