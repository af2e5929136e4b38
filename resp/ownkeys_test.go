package resp

// Tests of the keys of stampedeless's own commands: which arguments are
// keys (one function per command, cmd.keys, for the ACL, tracking and the
// shared tier), and what a user limited to some keys may do with the
// commands that touch keys their arguments do not name. Redis has none of
// these commands, so there is no redis-server to compare with.

import "testing"

// ownKeysUsers: tenant may use every command but @dangerous ones, on its
// own keys only.
var ownKeysUsers = []string{"tenant on >tpw ~o:* +@all -@dangerous"}

// ownKeysServer starts a server with ownKeysUsers and the loader "o:" on
// a test origin, and returns the server and a connection as the admin.
func ownKeysServer(t *testing.T) (*testServer, *compatConn) {
	t.Helper()
	o := newOrigin(t)
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
