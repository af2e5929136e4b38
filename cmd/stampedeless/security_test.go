package main

import (
	"bufio"
	"context"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stampedeless/stampedeless/internal/redistest"
)

// metricsText reads the server's /metrics page.
func metricsText(t *testing.T, metricsAddr string) string {
	t.Helper()
	resp, err := http.Get("http://" + metricsAddr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(body)
}

// TestLoaderAllowFlag: with STAMPEDELESS_LOADER_ALLOW set, a --loader's
// own host is still allowed, LOADER.REGISTER of any other address is
// refused with an error reply, and the refusal is counted.
func TestLoaderAllowFlag(t *testing.T) {
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "from origin")
	}))
	defer origin.Close()
	u, _ := url.Parse(origin.URL)
	addr, metricsAddr := redistest.FreeAddr(t), redistest.FreeAddr(t)
	startBinary(t, []string{"STAMPEDELESS_LOADER_ALLOW=10.0.0.0/8,192.168.0.0/16"}, "--addr", addr, "--metrics-addr", metricsAddr,
		"--loader", "user:=http://localhost:"+u.Port()+"/{key}")
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	ctx := context.Background()
	if v, err := c.Do(ctx, "GETFILL", "user:1", 60, 0).Text(); err != nil || v != "from origin" {
		t.Fatalf("GETFILL through the --loader host = %q, %v", v, err)
	}
	err := c.Do(ctx, "LOADER.REGISTER", "x:", origin.URL+"/{key}").Err()
	want := `ERR loader url "` + origin.URL + `/{key}": ` + u.Host + ` is not allowed by --loader-allow`
	if err == nil || err.Error() != want {
		t.Fatalf("LOADER.REGISTER outside the allow-list = %v, want %s", err, want)
	}
	if m := metricsText(t, metricsAddr); !strings.Contains(m, `stampedeless_loader_refused_total{reason="register"} 1`) {
		t.Errorf("/metrics lacks the refusal:\n%s", m)
	}
}

// TestProtectedModeFlag: listening on every interface with no password, the
// server refuses a client from outside loopback with -DENIED by default,
// and serves it with --requirepass or --protected-mode no.
func TestProtectedModeFlag(t *testing.T) {
	ext := redistest.ExternalIP(t)
	for _, tc := range []struct {
		args []string
		want string // the first line of the reply to PING
	}{
		{nil, "-DENIED Redis is running in protected mode because protected mode is enabled and no password is set for the default user."},
		{[]string{"--requirepass", "pw"}, "-NOAUTH Authentication required."},
		{[]string{"--protected-mode", "no"}, "+PONG"},
	} {
		_, port, _ := net.SplitHostPort(redistest.FreeAddr(t))
		startBinary(t, nil, append([]string{"--addr", "0.0.0.0:" + port, "--metrics-addr", ""}, tc.args...)...)
		nc := redistest.DialFrom(t, ext, ext, "0.0.0.0:"+port)
		nc.SetDeadline(time.Now().Add(10 * time.Second))
		io.WriteString(nc, "PING\r\n")
		line, err := bufio.NewReader(nc).ReadString('\n')
		if err != nil || !strings.HasPrefix(line, tc.want) {
			t.Errorf("%v: PING from %s: %q, %v; want %q...", tc.args, ext, line, err, tc.want)
		}
	}
	if _, err := exec.Command(binary, "--protected-mode", "maybe").CombinedOutput(); exitStatus(err) != 1 {
		t.Errorf("--protected-mode maybe: %v, want exit status 1", err)
	}
}

// TestUnixSocketFlag: --unixsocket alone (no TCP) serves go-redis over the
// socket, whose permissions are --unixsocketperm's.
func TestUnixSocketFlag(t *testing.T) {
	path := filepath.Join(t.TempDir(), "stampedeless.sock")
	startBinary(t, nil, "--addr", "", "--metrics-addr", "", "--unixsocket", path, "--unixsocketperm", "700")
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Type() != fs.ModeSocket || fi.Mode().Perm() != 0o700 {
		t.Errorf("socket mode %v, want a socket with 0700", fi.Mode())
	}
	c := redis.NewClient(&redis.Options{Network: "unix", Addr: path})
	defer c.Close()
	if v, err := c.Ping(context.Background()).Result(); err != nil || v != "PONG" {
		t.Errorf("PING over the socket = %q, %v", v, err)
	}
	out, err := exec.Command(binary, "--addr", "", "--metrics-addr", "").CombinedOutput()
	if exitStatus(err) != 1 || !strings.Contains(string(out), "nothing to serve on") {
		t.Errorf("no listener at all: %v, %s", err, out)
	}
}
