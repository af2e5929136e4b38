package acl

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// testTable is a small command table: strings, keys, a container.
func testTable() *Table {
	return NewTable([]*Command{
		{Name: "get", Categories: Read | String | Fast},
		{Name: "set", Categories: Write | String | Slow},
		{Name: "mget", Categories: Read | String | Fast},
		{Name: "del", Categories: Keyspace | Write | Slow},
		{Name: "flushall", Categories: Keyspace | Write | Slow | Dangerous},
		{Name: "select", Categories: Fast | Connection},
		{Name: "client", Categories: Slow, Subcommands: []*Command{
			{Name: "client|list", Categories: Admin | Slow | Dangerous | Connection},
			{Name: "client|id", Categories: Slow | Connection},
		}},
	})
}

func setUser(t *testing.T, r *Registry, name, rules string) *User {
	t.Helper()
	u, err := r.SetUser(name, strings.Fields(rules))
	if err != nil {
		t.Fatalf("SetUser %s %s: %v", name, rules, err)
	}
	return u
}

// TestRulesDescribeAndRebuild checks the rules a user is described with,
// and that setting them on a new user gives the same permissions.
func TestRulesDescribeAndRebuild(t *testing.T) {
	tab := testTable()
	for _, tc := range []struct{ rules, want string }{
		{"", "off resetchannels -@all"},
		{"on nopass ~* &* +@all", "on nopass ~* &* +@all"},
		{"on >a >b >a <b", "on #" + hashPassword([]byte("a")) + " resetchannels -@all"},
		{"+@read", "off resetchannels -@all +@read"},
		{"+@all -@dangerous", "off resetchannels +@all -@dangerous"},
		{"+@all -get -client|list", "off resetchannels +@all -@admin -get"},
		{"+client -client|list", "off resetchannels -@all +client -client|list"},
		// Two of the three @string commands: the category, then the odd one out.
		{"+get +set", "off resetchannels -@all +@string -mget"},
		// @write before @string, as alike: the first in Redis's order.
		{"+get +set +del", "off resetchannels -@all +@write -flushall +get"},
		{"+get +flushall", "off resetchannels -@all +flushall +get"},
		{"+select|0 +select|1 +SELECT|0", "off resetchannels -@all +select|0 +select|1"},
		{"+select|0 +select", "off resetchannels -@all +select"},
		// A pattern given again gains the access, where it was.
		{"%R~r* %W~w* ~rw* %W~r* &a &b", "off ~r* %W~w* ~rw* resetchannels &a &b -@all"},
		{"~a ~* ", "off ~* resetchannels -@all"},
		{"reset skip-sanitize-payload", "off skip-sanitize-payload resetchannels -@all"},
		{"on +@all reset", "off sanitize-payload resetchannels -@all"},
	} {
		r := NewRegistry(tab)
		u := setUser(t, r, "u", tc.rules)
		got := r.Rules(u)
		if got != tc.want {
			t.Errorf("rules %q: described as %q, want %q", tc.rules, got, tc.want)
		}
		again := setUser(t, r, "again", got)
		if r.Rules(again) != got || !slices.Equal(again.Perms().root.cmds, u.Perms().root.cmds) {
			t.Errorf("rules %q: rebuilt from %q as %q", tc.rules, got, r.Rules(again))
		}
	}
}

func TestRuleErrors(t *testing.T) {
	r := NewRegistry(testTable())
	setUser(t, r, "u", "on >pw ~k* +get")
	before := r.Rules(r.User("u"))
	for rule, want := range map[string]error{
		"+nosuch": ErrUnknownName, "+@nosuch": ErrUnknownName, "-client|nosuch": ErrUnknownName,
		"bad": ErrRuleSyntax, "+get|": ErrRuleSyntax, "%X~k": ErrRuleSyntax, "%R": ErrRuleSyntax, "%~k": ErrRuleSyntax,
		"~a b": ErrRuleSyntax, "+client|list|x": ErrSubcommandArg, "<nosuch": ErrNoSuchPassword,
		"#ABC": ErrBadHash, "(+get bad)": ErrRuleSyntax, "(~* ~k)": ErrKeyAfterAll,
	} {
		_, err := r.SetUser("u", []string{"off", rule})
		var re *RuleError
		if !errors.As(err, &re) || re.Rule != rule || !errors.Is(err, want) {
			t.Errorf("rule %q: %v, want %v", rule, err, want)
		}
	}
	if _, err := r.SetUser("u", []string{"allkeys", "~k"}); !errors.Is(err, ErrKeyAfterAll) {
		t.Errorf("~k after allkeys: %v", err)
	}
	if _, err := r.SetUser("u", []string{"allchannels", "&c"}); !errors.Is(err, ErrChannelAfterAll) {
		t.Errorf("&c after allchannels: %v", err)
	}
	if _, err := r.SetUser("a b", nil); !errors.Is(err, ErrUserName) {
		t.Errorf("a user name with a space: %v", err)
	}
	if got := r.Rules(r.User("u")); got != before {
		t.Errorf("refused rules changed the user: %q, was %q", got, before)
	}
}

func TestChecks(t *testing.T) {
	tab := testTable()
	r := NewRegistry(tab)
	p := setUser(t, r, "u", "on >pw %R~r:* %W~w:* ~rw:* &news:* &exact -@all +get +client|id +select|0").Perms()
	for _, tc := range []struct {
		key         string
		read, write bool
		want        bool
	}{
		{"r:1", true, false, true}, {"r:1", false, true, false}, {"r:1", true, true, false},
		{"w:1", false, true, true}, {"w:1", true, false, false}, {"rw:1", true, true, true},
		{"other", false, false, false}, {"r:1", false, false, true}, {"", false, false, false},
	} {
		if got := p.CanAccessKey([]byte(tc.key), tc.read, tc.write); got != tc.want {
			t.Errorf("key %q read %v write %v: %v", tc.key, tc.read, tc.write, got)
		}
	}
	for _, tc := range []struct {
		channel string
		pattern bool
		want    bool
	}{
		{"news:1", false, true}, {"news:*", true, true}, {"news:1*", true, false}, {"exact", false, true},
		{"sports", false, false}, {"*", true, false},
	} {
		if got := p.CanAccessChannel([]byte(tc.channel), tc.pattern); got != tc.want {
			t.Errorf("channel %q pattern %v: %v", tc.channel, tc.pattern, got)
		}
	}
	for _, tc := range []struct {
		cmd   string
		first string
		want  bool
	}{
		{"get", "", true}, {"set", "", false}, {"client|id", "", true}, {"client|list", "", false},
		{"client", "", false}, {"select", "0", true}, {"select", "1", false}, {"select", "", false},
	} {
		var first []byte
		if tc.first != "" {
			first = []byte(tc.first)
		}
		if _, _, got := p.Check(&Call{Cmd: tab.Lookup(tc.cmd), FirstArg: first}); got != tc.want {
			t.Errorf("run %s %s: %v", tc.cmd, tc.first, got)
		}
	}
	if p.Unrestricted() || !r.Default().Perms().Unrestricted() {
		t.Error("Unrestricted: a restricted user is, or the default user is not")
	}
	if !p.CheckPassword([]byte("pw")) || p.CheckPassword([]byte("PW")) || p.CheckPassword(nil) {
		t.Error("CheckPassword accepts a wrong password or refuses the right one")
	}
}

func TestRegistryAuthAndDefault(t *testing.T) {
	r := NewRegistry(testTable())
	if r.AuthRequired() || r.Authenticate(DefaultUser, []byte("anything")) != r.Default() {
		t.Fatal("the default user needs a password from the start")
	}
	r.SetDefaultPassword("secret")
	if !r.AuthRequired() || r.Authenticate(DefaultUser, []byte("x")) != nil || r.Authenticate(DefaultUser, []byte("secret")) == nil {
		t.Error("requirepass: wrong password accepted or right one refused")
	}
	r.SetDefaultPassword("")
	if r.AuthRequired() {
		t.Error("an empty requirepass still needs a password")
	}
	setUser(t, r, "off", "off nopass")
	if r.Authenticate("off", nil) != nil || r.Authenticate("nosuch", nil) != nil {
		t.Error("a user that is off, or none, authenticates")
	}
	setUser(t, r, "a", "on nopass")
	if _, err := r.DelUsers([]string{"a", DefaultUser}); !errors.Is(err, ErrDefaultUser) || r.User("a") == nil {
		t.Errorf("DelUsers with default: %v, or a was deleted", err)
	}
	gone, err := r.DelUsers([]string{"a", "nosuch", "a"})
	if err != nil || len(gone) != 1 || gone[0].Name() != "a" || r.User("a") != nil || !gone[0].Deleted() {
		t.Errorf("DelUsers: %v %v, or the user is not marked deleted", gone, err)
	}
}

func TestConfigure(t *testing.T) {
	r := NewRegistry(testTable())
	r.SetDefaultPassword("secret")
	if err := r.Configure([]string{"app on >pw ~a* +get", "default on nopass +get"}); err != nil {
		t.Fatal(err)
	}
	if got := r.Rules(r.Default()); got != "on nopass sanitize-payload resetchannels -@all +get" {
		t.Errorf("default user, redefined from reset: %q", got)
	}
	for lines, want := range map[string]string{
		"a on|a off":   "user a: Duplicate user found. A user can only be defined once in config files",
		"b on +nosuch": "Error loading ACL rule '+nosuch' for the user named 'b': Unknown command or category name in ACL",
	} {
		if err := NewRegistry(testTable()).Configure(strings.Split(lines, "|")); err == nil || err.Error() != want {
			t.Errorf("Configure %q: %v, want %s", lines, err, want)
		}
	}
}

func TestLoadAndSaveFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "users.acl")
	r := NewRegistry(testTable())
	def := r.Default()
	old := setUser(t, r, "old", "on nopass")
	os.WriteFile(path, []byte("user a on >pw ~k* +get\n\n  user b off  \n"), 0o640)
	gone, err := r.LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(gone) != 1 || gone[0] != old || !old.Deleted() || def.Deleted() || r.User("old") != nil || r.User("a") == nil || r.User("b") == nil {
		t.Errorf("LoadFile: replaced %v; users %v", gone, r.Users())
	}
	if r.Default() != def || r.User(DefaultUser) != def || r.Rules(def) != "on nopass ~* &* +@all" {
		t.Errorf("LoadFile without a default user: %q", r.Rules(def))
	}
	if err := r.SaveFile(path); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	want := "user a on #" + hashPassword([]byte("pw")) + " ~k* resetchannels -@all +get\n" +
		"user b off resetchannels -@all\nuser default on nopass ~* &* +@all\n"
	if string(data) != want {
		t.Errorf("SaveFile wrote:\n%s\nwant:\n%s", data, want)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o640 {
		t.Errorf("SaveFile changed the file's mode: %v %v", fi.Mode(), err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("SaveFile left files behind: %v", entries)
	}
	os.WriteFile(path, []byte("user a on +nosuch %Z~x bad\nuser a on\nnot a user\n"), 0o640)
	before := r.Users()
	_, err = r.LoadFile(path)
	wantErr := path + ":1: Error in applying operation '+nosuch': Unknown command or category name in ACL. " +
		path + ":1: Syntax error. WARNING: Duplicate user 'a' found on line 2. " +
		path + ":3 should start with user keyword followed by the username. " +
		"WARNING: ACL errors detected, no change to the previously active ACL rules was performed"
	if err == nil || err.Error() != wantErr {
		t.Errorf("LoadFile of a bad file: %v\nwant %s", err, wantErr)
	}
	if !slices.Equal(r.Users(), before) {
		t.Error("a bad file changed the users")
	}
}

func TestLogGroupsAlikeDenials(t *testing.T) {
	var l Log
	now := time.Now()
	add := func(reason Reason, object string, at time.Duration) {
		l.Add(Entry{Reason: reason, Context: "toplevel", Object: object, Username: "u", Updated: now.Add(at)})
	}
	add(DeniedKey, "k", 0)
	add(DeniedCommand, "get", 0)
	add(DeniedKey, "k", time.Second)       // alike the first: counted there, moved to the front
	add(DeniedKey, "k", 2*time.Minute)     // too late to be alike
	add(DeniedChannel, "k", 2*time.Minute) // another reason
	got := l.Entries(10)
	var summary []string
	for _, e := range got {
		summary = append(summary, e.Reason.String()+":"+e.Object+":"+string(rune('0'+e.Count)))
	}
	want := []string{"channel:k:1", "key:k:1", "key:k:2", "command:get:1"}
	if !slices.Equal(summary, want) {
		t.Errorf("entries %v, want %v", summary, want)
	}
	if l.Denied(DeniedKey) != 3 || l.Denied(DeniedAuth) != 0 {
		t.Errorf("denied: key %d, auth %d", l.Denied(DeniedKey), l.Denied(DeniedAuth))
	}
	for i := range LogMaxLen + 10 {
		add(DeniedAuth, strings.Repeat("x", i+1), 0)
	}
	if n := len(l.Entries(1000)); n != LogMaxLen {
		t.Errorf("the log holds %d entries, want %d", n, LogMaxLen)
	}
	l.Reset()
	if len(l.Entries(10)) != 0 || l.Denied(DeniedAuth) != LogMaxLen+10 {
		t.Error("Reset left entries, or reset the counts")
	}
}

// TestSelectors checks that a call is allowed only when one selector
// allows all of it, which denial is reported otherwise, and that a user's
// selectors survive their description.
func TestSelectors(t *testing.T) {
	tab := testTable()
	r := NewRegistry(tab)
	u := setUser(t, r, "u", "on nopass -@all (+get %R~r:*) (+set %W~w:*) (+mget ~k ~other)")
	p := u.Perms()
	get, set, mget := tab.Lookup("get"), tab.Lookup("set"), tab.Lookup("mget")
	key := func(k string, read, write bool) KeyUse { return KeyUse{Key: []byte(k), Read: read, Write: write} }
	for _, tc := range []struct {
		call   Call
		reason Reason
		object string
		ok     bool
	}{
		{Call{Cmd: get, Keys: []KeyUse{key("r:1", true, false)}}, 0, "", true},
		{Call{Cmd: get, Keys: []KeyUse{key("w:1", true, false)}}, DeniedKey, "w:1", false},
		{Call{Cmd: set, Keys: []KeyUse{key("w:1", false, true)}}, 0, "", true},
		{Call{Cmd: set, Keys: []KeyUse{key("r:1", false, true)}}, DeniedKey, "r:1", false},
		{Call{Cmd: tab.Lookup("del"), Keys: []KeyUse{key("r:1", false, true)}}, DeniedCommand, "del", false},
		// The key named last among those the command's selectors denied.
		{Call{Cmd: mget, Keys: []KeyUse{key("k", true, false), key("other", true, false), key("x", true, false)}}, DeniedKey, "x", false},
		{Call{Cmd: mget, Keys: []KeyUse{key("x", true, false), key("k", true, false)}}, DeniedKey, "x", false},
	} {
		reason, object, ok := p.Check(&tc.call)
		if ok != tc.ok || !ok && (reason != tc.reason || string(object) != tc.object) {
			t.Errorf("%s %v: %v %q %v, want %v %q %v", tc.call.Cmd.Name, tc.call.Keys, reason, object, ok, tc.reason, tc.object, tc.ok)
		}
	}
	if p.CanAccessKey([]byte("r:1"), true, true) || !p.CanAccessKey([]byte("w:1"), false, true) {
		t.Error("CanAccessKey: read and write of r:1 allowed, or write of w:1 refused")
	}
	again := setUser(t, r, "again", r.Rules(u))
	if got, want := r.Rules(again), r.Rules(u); got != want || len(again.Perms().selectors) != 3 {
		t.Errorf("rebuilt from its rules as %q, was %q", got, want)
	}
	for i, rules := range [][]string{{"(+get", "~a)"}, {"(", "+get", "~a)"}} {
		u, err := r.SetUser("spread"+strconv.Itoa(i), rules)
		if err != nil || len(u.Perms().selectors) != 1 || u.Perms().selectors[0].keys[0].pattern != "a" {
			t.Errorf("%q: %v", rules, err)
		}
	}
	var unmatched *UnmatchedError
	if _, err := r.SetUser("open", []string{"on", "(+get", "~a"}); !errors.As(err, &unmatched) || unmatched.Rule != "(+get" {
		t.Errorf("a selector left open: %v", err)
	}
	setUser(t, r, "u", "clearselectors")
	if len(r.User("u").Perms().selectors) != 0 {
		t.Error("clearselectors left selectors")
	}
}
