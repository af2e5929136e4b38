package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

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
