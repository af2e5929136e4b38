package server

// Tests of the keys of stampedeless's own commands: which arguments are
// keys (one function per command, cmd.keys, for the ACL, tracking and the
// shared tier), and what a user limited to some keys may do with the
// commands that touch keys their arguments do not name. Redis has none of
// these commands, so there is no redis-server to compare with.

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// ownKeysUsers: tenant may use every command but @dangerous ones, on its
// own keys only; reader may only read them; loaders may register loaders
// for prefixes under o: only.
var ownKeysUsers = []string{
	"tenant on >tpw ~o:* +@all -@dangerous",
	"reader on >rpw %R~o:* +@all -@dangerous",
	"loaders on >lpw ~o:* %R~p:* ~q:x* -@all +loader.register +loader.unregister",
}

// ownKeysServer starts a server with ownKeysUsers and the loaders "o:"
// and "p:" on an origin that tags every value "shared", and returns the
// server and a connection as the admin.
func ownKeysServer(t *testing.T) (*testServer, *compatConn) {
	t.Helper()
	o := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Surrogate-Key", "shared")
		io.WriteString(w, r.Header.Get("X-Stampedeless-Key")+"@v0")
	}))
	t.Cleanup(o.Close)
	ts := startServer(t, Options{RequirePass: aclAdminPass, Users: ownKeysUsers})
	admin := dialCompat(t, ts.addr)
	for _, args := range [][]string{{"AUTH", aclAdminPass}, {"LOADER.REGISTER", "o:", o.URL + "/{key}"},
		{"LOADER.REGISTER", "p:", o.URL + "/{key}"}} {
		if r, err := admin.do(args...); err != nil || r.String() != "+OK" {
			t.Fatalf("%v: %v %v", args, r, err)
		}
	}
	return ts, admin
}

// dialUser connects to ts and authenticates as user with HELLO proto.
func dialUser(t *testing.T, ts *testServer, proto, user, pass string) *compatConn {
	t.Helper()
	c := dialCompat(t, ts.addr)
	if r, err := c.do("HELLO", proto, "AUTH", user, pass); err != nil || r.kind == '-' {
		t.Fatalf("HELLO %s AUTH %s: %v %v", proto, user, r, err)
	}
	return c
}

// TestMGetFillKeyPositions: MGETFILL's keys are those after TIMEOUT ms,
// for the ACL (a user limited to o:* may read o: keys with TIMEOUT, and
// not others), for tracking (TIMEOUT and its value are not tracked as
// keys) and for COMMAND INFO (movable keys).
func TestMGetFillKeyPositions(t *testing.T) {
	ts, admin := ownKeysServer(t)
	u := dialUser(t, ts, "3", "tenant", "tpw")
	for _, st := range []struct {
		args []string
		want string
	}{
		{[]string{"MGETFILL", "60", "30", "TIMEOUT", "1000", "o:v:1"}, `["o:v:1@v0"]`},
		{[]string{"MGETFILL", "60", "30", "o:v:1", "o:v:2"}, `["o:v:1@v0" "o:v:2@v0"]`},
		{[]string{"MGETFILL", "60", "30", "TIMEOUT", "1000", "p:1"}, "-NOPERM this user has no permissions to access one of the keys used as arguments"},
		{[]string{"MGETFILL", "60", "30", "TIMEOUT", "1000", "o:v:1", "p:1"}, "-NOPERM this user has no permissions to access one of the keys used as arguments"},
		{[]string{"CLIENT", "TRACKING", "ON"}, "+OK"},
		{[]string{"MGETFILL", "60", "30", "TIMEOUT", "1000", "o:v:3"}, `["o:v:3@v0"]`},
	} {
		if r, err := u.do(st.args...); err != nil || r.String() != st.want {
			t.Fatalf("%s: %s %v, want %s", showArgs(st.args), r.String(), err, st.want)
		}
	}
	// TIMEOUT and 1000 were not tracked as keys; o:v:3 was.
	for _, k := range []string{"TIMEOUT", "1000", "o:v:3"} {
		if r, err := admin.do("SET", k, "x"); err != nil || r.String() != "+OK" {
			t.Fatalf("SET %s: %v %v", k, r, err)
		}
	}
	if r, err := u.read(); err != nil || r.String() != `>["invalidate" ["o:v:3"]]` {
		t.Fatalf("after SET TIMEOUT, SET 1000 and SET o:v:3: %s %v, want o:v:3's invalidation only", r.String(), err)
	}
	r, err := admin.do("COMMAND", "INFO", "mgetfill")
	if err != nil || len(r.elems) != 1 || len(r.elems[0].elems) < 6 {
		t.Fatalf("COMMAND INFO mgetfill: %v %v", r, err)
	}
	info := r.elems[0].elems
	if got := info[2].String() + " " + info[3].String() + " " + info[4].String() + " " + info[5].String(); !contains(info[2], "movablekeys") ||
		info[3].String() != ":0" || info[4].String() != ":0" || info[5].String() != ":0" {
		t.Fatalf("COMMAND INFO mgetfill flags and key positions: %s, want movablekeys and 0 0 0", got)
	}
}

// contains reports whether the aggregate r has an element rendered as s
// (a status).
func contains(r compatReply, s string) bool {
	for _, e := range r.elems {
		if e.str == s {
			return true
		}
	}
	return false
}

// runAs runs each step on c and fails at the first reply that is not the
// step's.
func runAs(t *testing.T, who string, c *compatConn, steps ...[2]string) {
	t.Helper()
	for _, st := range steps {
		args := strings.Fields(st[0])
		if r, err := c.do(args...); err != nil || r.String() != st[1] {
			t.Fatalf("%s: %s: %s %v, want %s", who, st[0], r.String(), err, st[1])
		}
	}
}

// TestPurgeTagACL: PURGE.TAG purges only the tagged keys its user may
// write: a tenant limited to o:* purges its own keys under a tag it shares
// with p: keys, which stay (hard and SOFT); a user who may only read o:*
// purges nothing; the admin purges the rest.
func TestPurgeTagACL(t *testing.T) {
	ts, admin := ownKeysServer(t)
	tenant := dialUser(t, ts, "2", "tenant", "tpw")
	reader := dialUser(t, ts, "2", "reader", "rpw")
	const noKey = "-NOPERM this user has no permissions to access one of the keys used as arguments"
	fill := func() {
		runAs(t, "admin", admin, [2]string{"GETFILL o:1 60 30", `"o:1@v0"`}, [2]string{"GETFILL p:secret 60 30", `"p:secret@v0"`})
	}
	fill()
	runAs(t, "tenant", tenant,
		[2]string{"DEL p:secret", noKey},
		[2]string{"FLUSHALL", "-NOPERM this user has no permissions to run the 'flushall' command"},
		[2]string{"PURGE.TAG shared", ":1"})
	runAs(t, "admin", admin, [2]string{"EXISTS o:1", ":0"}, [2]string{"EXISTS p:secret", ":1"})
	fill()
	runAs(t, "tenant", tenant, [2]string{"PURGE.TAG SOFT shared nope", ":1"})
	runAs(t, "admin", admin, [2]string{"EVAL return(redis.call('fill.info',KEYS[1])[2]) 1 p:secret", `"fresh"`},
		[2]string{"EVAL return(redis.call('fill.info',KEYS[1])[2]) 1 o:1", `"stale"`})
	runAs(t, "reader", reader, [2]string{"PURGE.TAG shared", ":0"}, [2]string{"PURGE.TAG SOFT shared", ":0"})
	runAs(t, "admin", admin, [2]string{"PURGE.TAG shared", ":2"}, [2]string{"DBSIZE", ":0"})
}

// TestLoaderCommandsACL: LOADER.REGISTER and LOADER.UNREGISTER change how
// every key under their prefix fills, so they run only for a user who may
// write every such key: loaders may write o:* (a prefix under it), not p:*
// (read only) nor q:* (only q:x*); the denial is logged as a key's.
func TestLoaderCommandsACL(t *testing.T) {
	ts, admin := ownKeysServer(t)
	u := dialUser(t, ts, "2", "loaders", "lpw")
	const noKey = "-NOPERM this user has no permissions to access one of the keys used as arguments"
	runAs(t, "loaders", u,
		[2]string{"LOADER.REGISTER o:sub: http://127.0.0.1:1/{key}", "+OK"},
		[2]string{"LOADER.UNREGISTER o:sub:", ":1"},
		[2]string{"LOADER.REGISTER o: http://127.0.0.1:1/{key}", "+OK"},
		[2]string{"LOADER.REGISTER p: http://127.0.0.1:1/{key}", noKey},
		[2]string{"LOADER.UNREGISTER p:", noKey},
		[2]string{"LOADER.REGISTER q: http://127.0.0.1:1/{key}", noKey},
		[2]string{"LOADER.REGISTER q:x http://127.0.0.1:1/{key}", "+OK"})
	if r, err := u.do("LOADER.REGISTER", "", "http://127.0.0.1:1/{key}"); err != nil || r.String() != noKey {
		t.Fatalf("LOADER.REGISTER of the empty prefix (every key): %s %v, want %s", r.String(), err, noKey)
	}
	r, err := admin.do("ACL", "LOG", "1")
	if err != nil || !strings.Contains(r.String(), `"key"`) || !strings.Contains(r.String(), `"object" ""`) {
		t.Fatalf("ACL LOG 1 after LOADER.REGISTER of the empty prefix: %s %v", r.String(), err)
	}
}

// TestGetKeysOwnCommands: COMMAND GETKEYS answers the keys of
// stampedeless's own commands as the ACL finds them.
func TestGetKeysOwnCommands(t *testing.T) {
	_, admin := ownKeysServer(t)
	for _, st := range [][2]string{
		{"COMMAND GETKEYS MGETFILL 60 30 TIMEOUT 100 o:v:1", `["o:v:1"]`},
		{"COMMAND GETKEYS MGETFILL 60 30 TIMEOUT 100", `["TIMEOUT" "100"]`},
		{"COMMAND GETKEYS MGETFILL 60 30 a b", `["a" "b"]`},
		{"COMMAND GETKEYS GETFILL k 60 30 TIMEOUT 5", `["k"]`},
		{"COMMAND GETKEYS FILL.SET k tok v", `["k"]`},
		{"COMMAND GETKEYS PURGE.TAG t", "-ERR The command has no key arguments"},
	} {
		if r, err := admin.do(strings.Fields(st[0])...); err != nil || r.String() != st[1] {
			t.Fatalf("%s: %s %v, want %s", st[0], r.String(), err, st[1])
		}
	}
}
