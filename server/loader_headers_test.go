package server

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

// TestLoaderRegisterHeaders: LOADER.REGISTER ... HEADER name value reaches
// the origin, and the value shows nowhere: not in LOADER.LIST, INFO, nor in
// the error of a refused header.
func TestLoaderRegisterHeaders(t *testing.T) {
	const secret = "Bearer 7f3a-secret-origin-token"
	got := make(chan http.Header, 1)
	o := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case got <- r.Header.Clone():
		default:
		}
		w.Write([]byte("v"))
	}))
	t.Cleanup(o.Close)
	ts := startServer(t, Options{})
	c := redis.NewClient(&redis.Options{Addr: ts.addr, Protocol: 3})
	t.Cleanup(func() { c.Close() })
	ctx := context.Background()

	for _, tc := range []struct {
		args []any
		want string
	}{
		{[]any{"HEADER", "Authorization"}, "ERR syntax error"},
		{[]any{"HEADER"}, "ERR syntax error"},
		{[]any{"TIMEOUT", "x"}, "ERR value is not an integer or out of range"},
		{[]any{"BOGUS", "1"}, "ERR syntax error"},
		{[]any{"HEADER", "Bad Name", secret}, `ERR invalid loader: header name "Bad Name" is not an HTTP token`},
		{[]any{"HEADER", "Authorization", secret + "\r\n"}, "ERR invalid loader: header Authorization has a control character in its value"},
		{[]any{"HEADER", "x-stampedeless-key", secret}, "ERR invalid loader: header X-Stampedeless-Key is set by stampedeless or by HTTP itself"},
	} {
		args := append([]any{"LOADER.REGISTER", "h:", o.URL + "/{key}"}, tc.args...)
		if err := c.Do(ctx, args...).Err(); err == nil || err.Error() != tc.want {
			t.Errorf("%v: %v, want %s", tc.args, err, tc.want)
		}
	}

	if err := c.Do(ctx, "LOADER.REGISTER", "h:", o.URL+"/{key}", "header", "authorization", secret,
		"TIMEOUT", 2000, "HEADER", "X-Tenant", "blue").Err(); err != nil {
		t.Fatal(err)
	}
	if v, err := c.Do(ctx, "GETFILL", "h:1", 60, 0).Text(); err != nil || v != "v" {
		t.Fatalf("GETFILL = %q, %v", v, err)
	}
	h := <-got
	if h.Get("Authorization") != secret || h.Get("X-Tenant") != "blue" {
		t.Fatalf("the origin got Authorization %q, X-Tenant %q", h.Get("Authorization"), h.Get("X-Tenant"))
	}

	list := fmt.Sprint(c.Do(ctx, "LOADER.LIST").Val())
	if !strings.Contains(list, "headers:[Authorization X-Tenant]") || !strings.Contains(list, "timeout_ms:2000") {
		t.Errorf("LOADER.LIST = %s, want the header names and the timeout", list)
	}
	info := c.Info(ctx, "everything").Val()
	for what, s := range map[string]string{"LOADER.LIST": list, "INFO": info} {
		if strings.Contains(s, "7f3a") {
			t.Errorf("%s shows the header value: %s", what, s)
		}
	}
}
