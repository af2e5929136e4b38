package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/stampedeless/stampedeless/internal/redistest"
)

// TestUserFlags defines users with --user, one with a comma in its
// password, and more in STAMPEDELESS_USER, one per line, and logs in as
// each with go-redis; the default user keeps --requirepass.
func TestUserFlags(t *testing.T) {
	addr := redistest.FreeAddr(t)
	startBinary(t, []string{"STAMPEDELESS_USER=env1 on >e1 ~* +@all\nenv2 on >e2 ~* -@all +ping"},
		"--addr", addr, "--metrics-addr", "", "--requirepass", "adminpw",
		"--user", "app on >pa,ss ~cache:* -@all +get +set", "--user", "ro on >ro ~* -@all +@read")
	ctx := context.Background()
	for _, tc := range []struct {
		user, pass, cmd string
		want            string
	}{
		{"", "adminpw", "SET cache:a v", "OK"},
		{"app", "pa,ss", "GET cache:a", "v"},
		{"app", "pa,ss", "GET other", "NOPERM this user has no permissions to access one of the keys used as arguments"},
		{"ro", "ro", "SET cache:a w", "NOPERM this user has no permissions to run the 'set' command"},
		{"env1", "e1", "GET cache:a", "v"},
		{"env2", "e2", "PING", "PONG"},
		{"app", "wrong", "PING", "WRONGPASS invalid username-password pair or user is disabled."},
		{"", "wrong", "PING", "WRONGPASS invalid username-password pair or user is disabled."},
	} {
		c := redis.NewClient(&redis.Options{Addr: addr, Username: tc.user, Password: tc.pass, MaxRetries: -1})
		args := make([]any, 0, 3)
		for _, a := range strings.Fields(tc.cmd) {
			args = append(args, a)
		}
		got, err := c.Do(ctx, args...).Text()
		if err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("%s as %q: %q, want %q", tc.cmd, tc.user, got, tc.want)
		}
		c.Close()
	}
	var out strings.Builder
	cmd := exec.Command(binary, "ping", "--addr", addr, "--username", "env2", "--password", "e2")
	cmd.Stdout = &out
	if err := cmd.Run(); err != nil || out.String() != "PONG\n" {
		t.Errorf("ping --username env2: %v %q", err, out.String())
	}
}

// TestACLFileFlag starts from an ACL file and saves to it with ACL SAVE.
func TestACLFileFlag(t *testing.T) {
	file := filepath.Join(t.TempDir(), "users.acl")
	os.WriteFile(file, []byte("user default on >adminpw ~* &* +@all\nuser app on >pw ~* +@all\n"), 0o600)
	addr := redistest.FreeAddr(t)
	startBinary(t, nil, "--addr", addr, "--metrics-addr", "", "--aclfile", file)
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: addr, Username: "app", Password: "pw"})
	defer c.Close()
	if err := c.ACLSetUser(ctx, "new", "on", ">x").Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.Do(ctx, "ACL", "SAVE").Err(); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(file)
	if !strings.Contains(string(data), "\nuser new on #") {
		t.Errorf("ACL SAVE wrote:\n%s", data)
	}
}

// TestUserFlagConflicts: the combinations that would drop a setting fail
// at start, with one line saying why.
func TestUserFlagConflicts(t *testing.T) {
	file := filepath.Join(t.TempDir(), "users.acl")
	os.WriteFile(file, []byte("user a on\n"), 0o600)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--user", "a on", "--aclfile", file},
			"stampedeless: --user and --aclfile: define the users in one place, the ACL file or the flags\n"},
		{[]string{"--requirepass", "x", "--aclfile", file},
			"stampedeless: --requirepass and --aclfile: give the default user's password in the ACL file (user default on >password ...)\n"},
		{[]string{"--requirepass", "x", "--user", "default on nopass"},
			"stampedeless: --requirepass and --user default: give the default user's password in its rules (>password)\n"},
		{[]string{"--user", "a on +nosuch"},
			"stampedeless: server: users: Error loading ACL rule '+nosuch' for the user named 'a': Unknown command or category name in ACL\n"},
	} {
		cmd := exec.Command(binary, append([]string{"--metrics-addr", ""}, tc.args...)...)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Run(); exitStatus(err) != 1 || stderr.String() != tc.want {
			t.Errorf("%v: exit %v, stderr %q; want exit status 1 and %q", tc.args, err, stderr.String(), tc.want)
		}
	}
}
