package main

import (
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stampedeless/stampedeless/internal/redistest"
)

// TestPing runs `stampedeless ping` as the container healthcheck does,
// against a live server with a password and the demo origin.
func TestPing(t *testing.T) {
	addr := redistest.FreeAddr(t)
	startBinary(t, nil, "--addr", addr, "--metrics-addr", "", "--requirepass", "pw")
	_, port, _ := net.SplitHostPort(addr)
	origin := startOrigin(t)
	dead := redistest.FreeAddr(t)

	// A failure exits 1 and prints one line, "ping: " and the reason, which
	// holds fail.
	for _, tc := range []struct {
		name string
		env  []string
		args []string
		fail string // empty: the check succeeds and prints PONG
	}{
		{"password flag", nil, []string{"--addr", addr, "--password", "pw"}, ""},
		// The image sets STAMPEDELESS_ADDR=0.0.0.0:6380 for the server; ping
		// reads the same variables and dials the wildcard as loopback.
		{"server's environment", []string{"STAMPEDELESS_ADDR=0.0.0.0:" + port, "STAMPEDELESS_REQUIREPASS=pw"}, nil, ""},
		{"no password", nil, []string{"--addr", addr}, "NOAUTH Authentication required."},
		{"wrong password", nil, []string{"--addr", addr, "--password", "nope"}, "WRONGPASS invalid username-password pair"},
		{"nothing listening", nil, []string{"--addr", dead}, "connection refused"},
		{"origin healthz", nil, []string{origin + "/healthz"}, ""},
		{"http 405", nil, []string{origin + "/reset"}, "/reset: 405 Method Not Allowed"},
		{"not a url", nil, []string{"ftp://x"}, `want an http:// or https:// URL, got "ftp://x"`},
	} {
		cmd := exec.Command(binary, append([]string{"ping", "--timeout", "10s"}, tc.args...)...)
		cmd.Env = append(os.Environ(), tc.env...)
		out, err := cmd.CombinedOutput()
		line := strings.TrimSuffix(string(out), "\n")
		if tc.fail == "" {
			if err != nil || line != "PONG" {
				t.Errorf("%s: exit %v, printed %q; want success and PONG", tc.name, err, out)
			}
			continue
		}
		if exitStatus(err) != 1 {
			t.Errorf("%s: exit %v, want exit status 1; output %s", tc.name, err, out)
		}
		if !strings.HasPrefix(line, "ping: ") || !strings.Contains(line, tc.fail) || strings.Contains(line, "\n") {
			t.Errorf("%s: printed %q, want one line \"ping: ...%s...\"", tc.name, out, tc.fail)
		}
	}
}

func TestDialable(t *testing.T) {
	for in, want := range map[string]string{
		"0.0.0.0:6380":   "127.0.0.1:6380",
		"[::]:6380":      "127.0.0.1:6380",
		":6380":          "127.0.0.1:6380",
		"10.1.2.3:6380":  "10.1.2.3:6380",
		"redis-1:6380":   "redis-1:6380",
		"not an address": "not an address",
	} {
		if got := dialable(in); got != want {
			t.Errorf("dialable(%q) = %q, want %q", in, got, want)
		}
	}
}
