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

	for _, tc := range []struct {
		name string
		env  []string
		args []string
		ok   bool
	}{
		{"password flag", nil, []string{"--addr", addr, "--password", "pw"}, true},
		// The image sets STAMPEDELESS_ADDR=0.0.0.0:6380 for the server; ping
		// reads the same variables and dials the wildcard as loopback.
		{"server's environment", []string{"STAMPEDELESS_ADDR=0.0.0.0:" + port, "STAMPEDELESS_REQUIREPASS=pw"}, nil, true},
		{"no password", nil, []string{"--addr", addr}, false},
		{"wrong password", nil, []string{"--addr", addr, "--password", "nope"}, false},
		{"nothing listening", nil, []string{"--addr", dead}, false},
		{"origin healthz", nil, []string{origin + "/healthz"}, true},
		{"http 405", nil, []string{origin + "/reset"}, false},
		{"not a url", nil, []string{"ftp://x"}, false},
	} {
		cmd := exec.Command(binary, append([]string{"ping", "--timeout", "10s"}, tc.args...)...)
		cmd.Env = append(os.Environ(), tc.env...)
		out, err := cmd.CombinedOutput()
		if ok := err == nil; ok != tc.ok {
			t.Errorf("%s: exit error %v, want success %v; output %s", tc.name, err, tc.ok, out)
		}
		if tc.ok && strings.TrimSpace(string(out)) != "PONG" {
			t.Errorf("%s: printed %q, want PONG", tc.name, out)
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
