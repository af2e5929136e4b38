package server

// Pub/sub differential tests: each script drives several connections to a
// real redis-server and the same connections to our server, and every
// reply and every message read must render the same. Replies are read by
// readAnyReply, which knows RESP3's types, so the RESP3 scripts compare
// pushes (>) and nulls (_) as sent.

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// readAnyReply reads one RESP2 or RESP3 reply and renders it: RESP2 as
// compatReply does (+OK, -ERR, :1, "bulk", (nil), [a b]), and RESP3's types
// with their own marks: >[push], %[k v], ~[set], _, #t, ,1.5, (big,
// ="txt:verbatim", !"blob error".
func readAnyReply(br *bufio.Reader) (string, error) {
	line, err := br.ReadString('\n')
	if err != nil {
		return "", err
	}
	if !strings.HasSuffix(line, "\r\n") || len(line) < 3 {
		return "", fmt.Errorf("bad reply line %q", line)
	}
	line = line[:len(line)-2]
	switch kind, rest := line[0], line[1:]; kind {
	case '+', '-', ':', '#', ',', '(':
		return line, nil
	case '_':
		return "_", nil
	case '$', '=', '!':
		n, err := strconv.Atoi(rest)
		if err != nil {
			return "", fmt.Errorf("bad length in %q", line)
		}
		if n < 0 {
			return "(nil)", nil
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(br, buf); err != nil {
			return "", err
		}
		s := strconv.Quote(string(buf[:n]))
		if kind != '$' {
			s = string(kind) + s
		}
		return s, nil
	case '*', '>', '~', '%', '|':
		n, err := strconv.Atoi(rest)
		if err != nil {
			return "", fmt.Errorf("bad length in %q", line)
		}
		if n < 0 {
			return "(nil array)", nil
		}
		if kind == '%' || kind == '|' {
			n *= 2
		}
		parts := make([]string, n)
		for i := range parts {
			if parts[i], err = readAnyReply(br); err != nil {
				return "", err
			}
		}
		s := "[" + strings.Join(parts, " ") + "]"
		switch kind {
		case '*':
			return s, nil
		case '|': // an attribute precedes the reply it describes
			next, err := readAnyReply(br)
			return "|" + s + " " + next, err
		}
		return string(kind) + s, nil
	}
	return "", fmt.Errorf("bad reply line %q", line)
}

// psStep is one step of a pub/sub script: on connection conn, send args
// (if any) and read replies replies (pushes included).
type psStep struct {
	conn    int
	args    []string
	replies int
	// sorted: one reply is an array compared as a sorted set; several
	// replies (messages through several patterns, which Redis sends in its
	// hash table's order) are compared as a set.
	sorted bool
	// ids: "{idN}" in args is connection N's client id on the server, and
	// an integer in the replies that is one is rendered as ":<idN>".
	ids bool
}

// ps sends a command written as one line on conn and reads one reply.
func ps(conn int, line string) psStep {
	return psStep{conn: conn, args: strings.Fields(line), replies: 1}
}

// psN sends a command and reads n replies (a SUBSCRIBE of n channels).
func psN(conn, n int, line string) psStep {
	return psStep{conn: conn, args: strings.Fields(line), replies: n}
}

// psRead reads n pushes on conn without sending anything.
func psRead(conn, n int) psStep { return psStep{conn: conn, replies: n} }

// psReadSorted reads n pushes on conn, in any order.
func psReadSorted(conn, n int) psStep { return psStep{conn: conn, replies: n, sorted: true} }

// psSorted sends a command whose array reply has no defined order.
func psSorted(conn int, line string) psStep {
	return psStep{conn: conn, args: strings.Fields(line), replies: 1, sorted: true}
}

// setLimit sets client-output-buffer-limit, whose value has spaces.
func setLimit(v string) psStep {
	return psStep{args: []string{"CONFIG", "SET", "client-output-buffer-limit", v}, replies: 1}
}

type psScript struct {
	name  string
	conns int
	resp3 bool // every connection sends HELLO 3 first
	steps []psStep
}

// psConns are one script's connections to one server.
type psConns []*compatConn

// run performs st and renders what it read.
func (cs psConns) run(st psStep) string {
	c := cs[st.conn]
	if st.args != nil {
		if err := c.send(encodeCommand(st.args...)); err != nil {
			return renderErr(err)
		}
	}
	var out []string
	for range st.replies {
		c.nc.SetDeadline(time.Now().Add(10 * time.Second))
		r, err := readAnyReply(c.br)
		if err != nil {
			return strings.Join(append(out, renderErr(err)), " | ")
		}
		if st.sorted && st.replies == 1 && strings.HasPrefix(r, "[") {
			// Elements here are bulk strings without spaces.
			elems := strings.Fields(strings.Trim(r, "[]"))
			slices.Sort(elems)
			r = "sorted[" + strings.Join(elems, " ") + "]"
		}
		out = append(out, r)
	}
	if st.sorted {
		slices.Sort(out)
	}
	return strings.Join(out, " | ")
}

// clientIDs asks each connection its CLIENT ID.
func (cs psConns) clientIDs(t *testing.T) []string {
	t.Helper()
	ids := make([]string, len(cs))
	for i, c := range cs {
		r, err := c.do("CLIENT", "ID")
		if err != nil || r.kind != ':' {
			t.Fatalf("CLIENT ID: %v %v", r, err)
		}
		ids[i] = r.str
	}
	return ids
}

// runWithIDs is run, with a step's client ids put in and masked out.
func (cs psConns) runWithIDs(st psStep, ids []string) string {
	if !st.ids {
		return cs.run(st)
	}
	st.args = slices.Clone(st.args)
	for i, a := range st.args {
		for n, id := range ids {
			st.args[i] = strings.ReplaceAll(a, "{id"+strconv.Itoa(n)+"}", id)
			a = st.args[i]
		}
	}
	out := cs.run(st)
	for n, id := range ids {
		out = regexp.MustCompile(`:`+id+`\b`).ReplaceAllString(out, ":<id"+strconv.Itoa(n)+">")
	}
	return out
}

// dialPubSub opens a script's connections to addr, in RESP3 if asked. It
// returns the error reply of a HELLO 3 that was refused.
func dialPubSub(t *testing.T, addr string, sc psScript) (psConns, string) {
	t.Helper()
	cs := make(psConns, sc.conns)
	for i := range cs {
		cs[i] = dialCompat(t, addr)
		if !sc.resp3 {
			continue
		}
		if err := cs[i].send(encodeCommand("HELLO", "3")); err != nil {
			t.Fatal(err)
		}
		r, err := readAnyReply(cs[i].br)
		if err != nil {
			t.Fatalf("HELLO 3: %v", err)
		}
		if strings.HasPrefix(r, "-") {
			return nil, r
		}
	}
	return cs, ""
}

func runPubSubScript(t *testing.T, redisAddr, oursAddr string, sc psScript) {
	theirs, refused := dialPubSub(t, redisAddr, sc)
	if refused != "" {
		t.Fatalf("redis-server refused HELLO 3: %s", refused)
	}
	ours, refused := dialPubSub(t, oursAddr, sc)
	if refused != "" {
		t.Fatalf("stampedeless refused HELLO 3: %s", refused)
	}
	var theirIDs, ourIDs []string
	if slices.ContainsFunc(sc.steps, func(st psStep) bool { return st.ids }) {
		theirIDs, ourIDs = theirs.clientIDs(t), ours.clientIDs(t)
	}
	for i, st := range sc.steps {
		want, got := theirs.runWithIDs(st, theirIDs), ours.runWithIDs(st, ourIDs)
		if compatTrace {
			t.Logf("conn %d: %s\n\tredis: %s\n\tours:  %s", st.conn, showArgs(st.args), want, got)
		}
		if want != got {
			t.Fatalf("step %d, conn %d: %s\n\tredis: %s\n\tours:  %s", i+1, st.conn, showArgs(st.args), want, got)
		}
	}
}

// pubsubScripts use connection 0 as the subscriber and 1 (and 2) as
// publishers or other subscribers. UNSUBSCRIBE without arguments is used
// with one subscription at most: Redis confirms several in its hash
// table's order. PUBSUB HELP is compared in TestCompatShape: Redis 7.0 and
// 7.2 word its last line differently.
func pubsubScripts(resp3 bool) []psScript {
	// A subscriber's own PUBLISH (RESP3 only) gets its reply and its
	// message: Redis 7.0 sends the message first, 7.2 the reply, so the
	// two are compared as a set here and in order by TestPubSubOwnMessage.
	selfPublish := ps(0, "PUBLISH a x")
	if resp3 {
		selfPublish = psStep{conn: 0, args: []string{"PUBLISH", "a", "x"}, replies: 2, sorted: true}
	}
	scripts := []psScript{
		{name: "channels and patterns", conns: 2, steps: []psStep{
			psN(0, 2, "SUBSCRIBE a b"), ps(0, "PSUBSCRIBE h*llo"), psN(0, 2, "subscribe a c"),
			ps(1, "PUBLISH a m1"), psRead(0, 1),
			ps(1, "PUBLISH hello m2"), psRead(0, 1),
			ps(1, "PUBLISH hallo m3"), psRead(0, 1),
			ps(1, "PUBLISH nobody m4"),
			psN(0, 1, "PSUBSCRIBE a*"), ps(1, "PUBLISH a both"), psRead(0, 2),
			psSorted(1, "PUBSUB CHANNELS"), psSorted(1, "PUBSUB CHANNELS a*"), ps(1, "PUBSUB CHANNELS z*"),
			ps(1, "PUBSUB NUMSUB a b c hello"), ps(1, "PUBSUB NUMSUB"), ps(1, "PUBSUB NUMPAT"),
			ps(1, "PUBSUB CHANNELS a b"), ps(1, "PUBSUB NUMPAT x"), ps(1, "PUBSUB FOO"), ps(1, "PUBSUB"),
			ps(1, "pubsub help x"), ps(1, "PUBSUB SHARDCHANNELS"), ps(1, "PUBSUB SHARDNUMSUB a"),
			ps(0, "UNSUBSCRIBE a"), ps(0, "UNSUBSCRIBE nope"), psN(0, 2, "PUNSUBSCRIBE h*llo a*"), ps(0, "PUNSUBSCRIBE"),
			psN(0, 2, "UNSUBSCRIBE b c"), ps(0, "UNSUBSCRIBE"),
			ps(1, "PUBLISH a gone"), ps(1, "PUBSUB NUMPAT"), ps(1, "PUBSUB CHANNELS"),
			ps(0, "SET k v"), ps(0, "GET k"), ps(0, "PING"),
		}},
		{name: "subscriber mode", conns: 2, steps: []psStep{
			ps(0, "UNSUBSCRIBE"), psN(0, 2, "PUNSUBSCRIBE x y"), ps(0, "GET k"),
			ps(0, "SUBSCRIBE a"), ps(0, "GET k"), ps(0, "SET k v"), ps(0, "PING"), ps(0, "PING hi"), ps(0, "ping a b"),
			ps(0, "CLIENT GETNAME"), ps(0, "CLIENT FOO"), ps(0, "NOSUCH x"), ps(0, "GET"), selfPublish,
			ps(0, "PUBSUB NUMSUB a"), ps(0, "ECHO e"),
			ps(1, "PUBLISH a m"), ps(0, "PING"), psRead(0, 1) /* the message came before PING's reply */, ps(0, "UNSUBSCRIBE"),
			ps(0, "GET k"), ps(0, "PING"),
			ps(0, "SUBSCRIBE a"), ps(0, "QUIT"), ps(1, "PUBSUB NUMSUB a"),
		}},
		{name: "shard channels", conns: 2, steps: []psStep{
			ps(0, "SSUBSCRIBE sa"), ps(0, "SUBSCRIBE sa"), ps(0, "PSUBSCRIBE s*"), psN(0, 2, "ssubscribe sb sa"),
			ps(1, "SPUBLISH sa hi"), psRead(0, 1),
			ps(1, "PUBLISH sa lo"), psRead(0, 2),
			ps(1, "SPUBLISH sz none"),
			psSorted(1, "PUBSUB SHARDCHANNELS"), ps(1, "PUBSUB SHARDCHANNELS *a"), ps(1, "PUBSUB SHARDNUMSUB sa sb sc"),
			ps(1, "PUBSUB NUMSUB sa"), ps(1, "PUBSUB SHARDCHANNELS a b"),
			ps(0, "GET k"), ps(0, "SUNSUBSCRIBE sa"), ps(0, "SUNSUBSCRIBE"), ps(0, "SUNSUBSCRIBE"), ps(0, "GET k"),
			ps(0, "UNSUBSCRIBE"), ps(0, "PUNSUBSCRIBE"), ps(0, "GET k"),
		}},
		{name: "names", conns: 3, steps: []psStep{
			{conn: 0, args: []string{"SUBSCRIBE", "", "with space", "bin\x00\xff"}, replies: 3},
			{conn: 2, args: []string{"PSUBSCRIBE", "*", "\\*", "[a-c]?", "h[^e]llo"}, replies: 4},
			{conn: 1, args: []string{"PUBLISH", "", "empty"}, replies: 1}, psRead(0, 1),
			{conn: 1, args: []string{"PUBLISH", "with space", ""}, replies: 1}, psRead(0, 1), psRead(2, 1),
			{conn: 1, args: []string{"PUBLISH", "bin\x00\xff", "\r\n"}, replies: 1}, psRead(0, 1), psRead(2, 1),
			ps(1, "PUBLISH * star"), psReadSorted(2, 2),
			ps(1, "PUBLISH bz x"), psReadSorted(2, 2), ps(1, "PUBLISH hallo x"), psReadSorted(2, 2),
			ps(1, "PUBLISH hello x"), psRead(2, 1),
			{conn: 1, args: []string{"PUBSUB", "NUMSUB", "", "with space"}, replies: 1}, ps(1, "PUBSUB NUMPAT"),
			ps(2, "PING"), ps(0, "PING"),
		}},
		{name: "client-output-buffer-limit", conns: 1, steps: []psStep{
			ps(0, "CONFIG GET client-output-buffer-limit"),
			setLimit("pubsub 1mb 512kb 10"), ps(0, "CONFIG GET client-output-buffer-limit"),
			setLimit("normal 0 0 0 PUBSUB 2mb 1mb 0 replica 256mb 64mb 60"), ps(0, "CONFIG GET client-output-buffer-limit"),
			setLimit("pubsub 1mb"), setLimit("foo 1 2 3"), setLimit("master 1 2 3"), setLimit("pubsub x 1 1"),
			setLimit("pubsub 1 2 -1"), setLimit("pubsub 1 2 3x"), setLimit(""),
			ps(0, "CONFIG GET client-output-buffer-limit"),
		}},
	}
	if !resp3 {
		return scripts
	}
	// RESP3 has no subscriber mode: every command runs, and messages
	// arrive between replies as pushes.
	scripts = append(scripts, psScript{name: "interleaving", conns: 2, steps: []psStep{
		ps(0, "SUBSCRIBE a"), ps(0, "SET k v"), ps(0, "GET k"), ps(0, "PING"), ps(0, "CLIENT ID x"),
		ps(1, "PUBLISH a m1"), psN(0, 2, "GET k"), ps(1, "PUBLISH a m2"), ps(1, "PUBLISH a m3"), psN(0, 3, "ECHO e"),
		ps(0, "UNSUBSCRIBE"), ps(0, "UNSUBSCRIBE"), ps(0, "GET nokey"),
	}})
	for i := range scripts {
		scripts[i].resp3 = true
		scripts[i].name = "resp3 " + scripts[i].name
	}
	return scripts
}

// TestCompatPubSub runs each script on a fresh pair of servers, so that
// no subscription of an earlier script is still being torn down.
func TestCompatPubSub(t *testing.T) {
	for _, resp3 := range []bool{false, true} {
		for _, sc := range pubsubScripts(resp3) {
			t.Run(sc.name, func(t *testing.T) {
				runPubSubScript(t, startRedis(t), startServer(t, Options{}).addr, sc)
			})
		}
	}
}
