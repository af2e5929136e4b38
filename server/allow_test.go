package server

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/stampedeless/stampedeless/commands/readthrough"
	"github.com/stampedeless/stampedeless/loader"
)

// Loader URLs and redirects outside --loader-allow: LOADER.REGISTER gets an
// error reply and registers nothing, and a fill whose origin redirects
// outside gets -LOADERR naming the refused address.
func TestLoaderAllowList(t *testing.T) {
	inside := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("secret")) }))
	t.Cleanup(inside.Close)
	outside := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, inside.URL+"/x", http.StatusFound)
	}))
	t.Cleanup(outside.Close)
	hostOf := func(s *httptest.Server) string { u, _ := url.Parse(s.URL); return u.Host }

	allow, err := loader.ParseAllowList([]string{hostOf(outside)})
	if err != nil {
		t.Fatal(err)
	}
	loaders := loader.NewRegistry(loader.Options{Allow: allow})
	t.Cleanup(loaders.CloseIdleConnections)
	ts := startServer(t, Options{}, readthrough.Options{Loaders: loaders})
	r := dialRaw(t, ts.addr)

	want := `-ERR loader url "` + inside.URL + `/{key}": ` + hostOf(inside) + ` is not allowed by --loader-allow`
	if got := r.do("LOADER.REGISTER", "in:", inside.URL+"/{key}"); got != want {
		t.Errorf("LOADER.REGISTER outside the allow-list = %s, want %s", got, want)
	}
	if got := r.do("LOADER.LIST"); got != "[]" {
		t.Errorf("LOADER.LIST after a refusal = %s", got)
	}
	if got := r.do("LOADER.REGISTER", "out:", outside.URL+"/{key}"); got != "+OK" {
		t.Fatalf("LOADER.REGISTER inside the allow-list = %s", got)
	}
	// A name is resolved to be checked (in the command's continuation, off
	// its event loop).
	_, port, _ := strings.Cut(hostOf(outside), ":")
	if got := r.do("LOADER.REGISTER", "name:", "http://localhost:"+port+"/{key}"); got != "+OK" {
		t.Fatalf("LOADER.REGISTER of a name resolving inside the allow-list = %s", got)
	}
	want = "-LOADERR out: " + hostOf(inside) + " is not allowed by --loader-allow"
	if got := r.do("GETFILL", "out:1", "60", "0"); got != want {
		t.Errorf("GETFILL redirected outside = %s, want %s", got, want)
	}
	if got := loaders.Refusals(); got != (loader.Refusals{Register: 1, Redirect: 1}) {
		t.Errorf("Refusals() = %+v", got)
	}
}
