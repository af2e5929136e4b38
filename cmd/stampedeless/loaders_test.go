package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/stampedeless/stampedeless/internal/redistest"
	"github.com/stampedeless/stampedeless/internal/testwait"
	"github.com/stampedeless/stampedeless/loader"
)

func TestParseLoaderFlags(t *testing.T) {
	env := map[string]string{"TOKEN": "s3cret", "EMPTY": ""}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	got, err := parseLoaderFlags([]string{
		"a:=http://a.test/{key}", "header=Authorization:Bearer $TOKEN", "header=X-Price: $$5 ${TOKEN}",
		"b:=https://b.test/", "batch=100", "header=http://h.test/{key}",
	}, lookup)
	if err != nil {
		t.Fatal(err)
	}
	want := []loader.Config{
		{Prefix: "a:", URL: "http://a.test/{key}", Headers: []loader.Header{
			{Name: "Authorization", Value: "Bearer s3cret"}, {Name: "X-Price", Value: "$5 s3cret"}}},
		{Prefix: "b:", URL: "https://b.test/", Batch: 100},
		{Prefix: "header", URL: "http://h.test/{key}"}, // a prefix named like the option
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("parseLoaderFlags = %+v\nwant %+v", got, want)
	}
	for _, tc := range []struct {
		items []string
		want  string
	}{
		{[]string{"header=A:b"}, "--loader: header=... must follow the prefix=url it belongs to"},
		{[]string{"a:=http://a.test/", "header=Authorization"}, "--loader a:: header=...: want header=Name:value"},
		{[]string{"a:=http://a.test/", "header=A:$MISSING"}, "--loader a:: header A: environment variable MISSING is unset or empty"},
		{[]string{"a:=http://a.test/", "header=A:x$EMPTY"}, "--loader a:: header A: environment variable EMPTY is unset or empty"},
		{[]string{"nourl"}, `--loader: want prefix=url, got "nourl"`},
		{[]string{"batch=5"}, "--loader: batch=... must follow the prefix=url it belongs to"},
		{[]string{"a:=http://a.test/", "batch=0"}, `--loader a:: batch="0": want a number of keys above 0`},
	} {
		if _, err := parseLoaderFlags(tc.items, lookup); err == nil || err.Error() != tc.want {
			t.Errorf("%q: %v, want %s", tc.items, err, tc.want)
		}
	}
}

// credReplica is one stampedeless process of TestFleetLoadersWithCredentials.
type credReplica struct {
	addr, metrics string
	env, args     []string
	logs          logBuffer
	cmd           *exec.Cmd
	rdb           *redis.Client
}

func (r *credReplica) start(t *testing.T) {
	t.Helper()
	r.cmd = startLogged(t, r.env, &r.logs, r.args...)
	r.rdb = redis.NewClient(&redis.Options{Addr: r.addr})
	t.Cleanup(func() { r.rdb.Close() })
}

func (r *credReplica) do(t *testing.T, args ...any) (string, error) {
	t.Helper()
	v, err := r.rdb.Do(context.Background(), args...).Result()
	return fmt.Sprint(v), err
}

// TestFleetLoadersWithCredentials: two replicas sharing a real Redis. A
// loader registered on one, with a header, fills on the other and is still
// there after that replica restarts; an unregistration on the other is
// forgotten on the first; concurrent registrations converge; a --loader
// header read from the environment stays on its replica. No header value
// appears in LOADER.LIST, INFO, /metrics or the logs.
func TestFleetLoadersWithCredentials(t *testing.T) {
	const cmdSecret, flagSecret = "cmd-5ecret-9d2", "flag-5ecret-4e7"
	var mu sync.Mutex
	seen := map[string]http.Header{} // by key
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := r.Header.Get("X-Stampedeless-Key")
		mu.Lock()
		seen[key] = r.Header.Clone()
		mu.Unlock()
		io.WriteString(w, "v:"+key)
	}))
	t.Cleanup(origin.Close)
	header := func(key, name string) string {
		mu.Lock()
		defer mu.Unlock()
		return seen[key].Get(name)
	}

	s := redistest.Start(t)
	var rs [2]*credReplica
	for i := range rs {
		r := &credReplica{addr: redistest.FreeAddr(t), metrics: redistest.FreeAddr(t)}
		r.args = []string{"--addr", r.addr, "--metrics-addr", r.metrics, "--redis", s.Addr(),
			"--redis-timeout", "2s", "--log-level", "debug"}
		if i == 0 {
			r.env = []string{"ORIGIN_TOKEN=" + flagSecret}
			r.args = append(r.args, "--loader", "f:="+origin.URL+"/{key},header=Authorization:Bearer $ORIGIN_TOKEN")
		}
		r.start(t)
		rs[i] = r
	}
	a, b := rs[0], rs[1]

	if _, err := a.do(t, "LOADER.REGISTER", "k:", origin.URL+"/{key}", "HEADER", "X-Api-Key", cmdSecret); err != nil {
		t.Fatal(err)
	}
	var v string
	if !testwait.Until(func() bool { v, _ = b.do(t, "GETFILL", "k:1", 60, 0); return v == "v:k:1" }) {
		t.Fatalf("GETFILL k:1 on B = %q, want the value through A's registration", v)
	}
	if got := header("k:1", "X-Api-Key"); got != cmdSecret {
		t.Fatalf("the origin got X-Api-Key %q from B", got)
	}
	if v, err := a.do(t, "GETFILL", "f:1", 60, 0); err != nil || v != "v:f:1" {
		t.Fatalf("GETFILL f:1 on A = %q, %v", v, err)
	}
	if got := header("f:1", "Authorization"); got != "Bearer "+flagSecret {
		t.Fatalf("the origin got Authorization %q from A's --loader", got)
	}
	// --loader is local: B has no f: loader.
	if _, err := b.do(t, "GETFILL", "f:2", 60, 0); err == nil || !strings.HasPrefix(err.Error(), "NOLOADER") {
		t.Fatalf("GETFILL f:2 on B: %v, want NOLOADER", err)
	}

	// B restarts and still has k:.
	b.cmd.Process.Kill()
	b.cmd.Wait()
	b.start(t)
	if v, err := b.do(t, "GETFILL", "k:2", 60, 0); err != nil || v != "v:k:2" {
		t.Fatalf("after a restart, GETFILL k:2 on B = %q, %v", v, err)
	}
	if got := header("k:2", "X-Api-Key"); got != cmdSecret {
		t.Fatalf("after a restart, the origin got X-Api-Key %q from B", got)
	}

	// Unregistered on B, forgotten on A.
	if n, err := b.do(t, "LOADER.UNREGISTER", "k:"); err != nil || n != "1" {
		t.Fatalf("LOADER.UNREGISTER on B = %s, %v", n, err)
	}
	// A fresh key each time: one A fills before it hears of the
	// unregistration is then served from its store, as a present key needs
	// no loader.
	var err error
	attempt := 0
	if !testwait.Until(func() bool {
		attempt++
		_, err = a.do(t, "GETFILL", fmt.Sprintf("k:3:%d", attempt), 60, 0)
		return err != nil && strings.HasPrefix(err.Error(), "NOLOADER")
	}) {
		t.Fatalf("GETFILL k:3:* on A after B unregistered k: = %v, want NOLOADER", err)
	}
	if _, err := b.do(t, "LOADER.UNREGISTER", "f:"); err != nil {
		t.Fatalf("LOADER.UNREGISTER of a prefix B has no loader for: %v", err)
	}
	if _, err := a.do(t, "LOADER.UNREGISTER", "f:"); err == nil || !strings.Contains(err.Error(), "--loader") {
		t.Fatalf("LOADER.UNREGISTER of A's --loader: %v, want an error naming --loader", err)
	}

	// Concurrent registrations of one prefix converge on both.
	var wg sync.WaitGroup
	for i, r := range rs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := range 20 {
				r.rdb.Do(context.Background(), "LOADER.REGISTER", "c:", fmt.Sprintf("%s/%d/%d/{key}", origin.URL, i, n),
					"HEADER", "X-Api-Key", cmdSecret)
			}
		}()
	}
	wg.Wait()
	var la, lb string
	if !testwait.Until(func() bool {
		la, lb = a.listed(t, "c:"), b.listed(t, "c:")
		return strings.Contains(la, "/19/{key}") && la == lb
	}) {
		t.Fatalf("c: did not converge:\nA %s\nB %s", la, lb)
	}
	if !strings.Contains(la, "headers:[X-Api-Key]") || !strings.Contains(la, "source:register") {
		t.Errorf("LOADER.LIST on A: %s, want the header's name and the source", la)
	}

	for _, r := range rs {
		list, _ := r.do(t, "LOADER.LIST")
		info := r.rdb.Info(context.Background(), "everything").Val()
		resp, err := http.Get("http://" + r.metrics + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		metrics, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		for what, text := range map[string]string{"LOADER.LIST": list, "INFO": info, "/metrics": string(metrics), "the logs": r.logs.String()} {
			for _, secret := range []string{cmdSecret, flagSecret} {
				if strings.Contains(text, secret) {
					t.Errorf("replica %s: %s shows a header value:\n%s", r.addr, what, text)
				}
			}
		}
		if !strings.Contains(string(metrics), `stampedeless_cluster_loader_registrations_total{event="heard"}`) {
			t.Errorf("replica %s: /metrics lacks the loader registrations", r.addr)
		}
		// Each heard some of the other's concurrent registrations.
		if !strings.Contains(info, "loader_registrations_heard:") || strings.Contains(info, "loader_registrations_heard:0\r\n") {
			t.Errorf("replica %s: INFO cluster's loader_registrations_heard is missing or 0", r.addr)
		}
	}
}

// listed is prefix's entry in LOADER.LIST, without its counters, printed.
func (r *credReplica) listed(t *testing.T, prefix string) string {
	t.Helper()
	list, err := r.rdb.Do(context.Background(), "LOADER.LIST").Slice()
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range list {
		m, ok := e.(map[any]any)
		if !ok || m["prefix"] != prefix {
			continue
		}
		delete(m, "fills")
		delete(m, "failures")
		delete(m, "in_flight")
		return fmt.Sprint(m)
	}
	return "<none>"
}
