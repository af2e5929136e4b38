package loader

import (
	"errors"
	"net/http"
	"reflect"
	"testing"
	"time"
)

// testNames are the made-up origins of the registry tests, which are never
// connected to.
const testNames = "origin.test,one.test,two.test,fallback.test,flag.test,cmd.test,127.0.0.1"

func TestRegistryLongestPrefix(t *testing.T) {
	r := NewRegistry(Options{Allow: allowing(t, testNames)})
	// "user:" and "item:" share a length (the table's map); the others
	// are alone at theirs (compared with their one prefix).
	for _, p := range []string{"user:", "user:admin:", "u", "order:", "item:"} {
		if err := r.Register(Config{Prefix: p, URL: "http://origin.test/" + p + "{key}"}); err != nil {
			t.Fatalf("Register(%q): %v", p, err)
		}
	}
	lookup := func(key string) string {
		t.Helper()
		l, ok := r.Lookup(key)
		if !ok {
			return "<none>"
		}
		return l.Prefix()
	}
	for key, want := range map[string]string{
		"user:42":        "user:",
		"user:admin:1":   "user:admin:",
		"user:admin:":    "user:admin:",
		"user:admin":     "user:",
		"u":              "u",
		"us":             "u",
		"order:7":        "order:",
		"order":          "<none>",
		"item:9":         "item:",
		"item":           "<none>",
		"itemx9":         "<none>",
		"":               "<none>",
		"product:1":      "<none>",
		"USER:42":        "<none>",
		"user:\x00\r\n1": "user:",
	} {
		if got := lookup(key); got != want {
			t.Errorf("Lookup(%q) = %s, want %s", key, got, want)
		}
		got := "<none>"
		if l, ok := r.LookupBytes([]byte(key)); ok {
			got = l.Prefix()
		}
		if got != want {
			t.Errorf("LookupBytes(%q) = %s, want %s", key, got, want)
		}
	}
	// A GETFILL hit looks its loader up from the wire's bytes: no copy.
	key := []byte("user:admin:42")
	if n := testing.AllocsPerRun(100, func() { r.LookupBytes(key) }); n != 0 {
		t.Errorf("LookupBytes allocates %v times", n)
	}

	// The empty prefix catches what nothing longer does.
	if err := r.Register(Config{Prefix: "", URL: "http://fallback.test/"}); err != nil {
		t.Fatal(err)
	}
	if got := lookup("product:1"); got != "" {
		t.Errorf("Lookup(product:1) with a catch-all = %q, want the empty prefix", got)
	}
	if got := lookup("user:1"); got != "user:" {
		t.Errorf("the catch-all took user:1 from user: (got %q)", got)
	}

	if ok, err := r.Unregister("user:admin:"); !ok || err != nil {
		t.Errorf("Unregister of a registered prefix = %v, %v", ok, err)
	}
	if ok, err := r.Unregister("user:admin:"); ok || err != nil {
		t.Errorf("second Unregister = %v, %v", ok, err)
	}
	if got := lookup("user:admin:1"); got != "user:" {
		t.Errorf("after Unregister, Lookup(user:admin:1) = %q, want user:", got)
	}
}

func TestRegistryReplaceAndList(t *testing.T) {
	r := NewRegistry(Options{Allow: allowing(t, testNames)})
	if got := r.List(); len(got) != 0 {
		t.Fatalf("List() of an empty registry = %v", got)
	}
	mustRegister(t, r, Config{Prefix: "b:", URL: "http://one.test/{key}"})
	old := mustRegister(t, r, Config{Prefix: "a:", URL: "http://one.test/?x=1"})
	l := mustRegister(t, r, Config{Prefix: "a:", URL: "https://two.test/{key}", Timeout: 250 * time.Millisecond, Concurrency: 3})
	if l == old {
		t.Fatal("registering an existing prefix did not replace the loader")
	}
	got := r.List()
	want := []Info{
		{Prefix: "a:", URL: "https://two.test/{key}", Timeout: 250 * time.Millisecond, Concurrency: 3,
			Source: SourceRegister, Version: 2},
		{Prefix: "b:", URL: "http://one.test/{key}", Timeout: DefaultTimeout, Source: SourceRegister, Version: 1},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("List() = %+v\nwant     %+v", got, want)
	}
}

func TestRegistryRejectsBadConfigs(t *testing.T) {
	r := NewRegistry(Options{Allow: allowing(t, testNames)})
	for _, c := range []Config{
		{URL: ""},
		{URL: "origin.test/{key}"},
		{URL: "ftp://origin.test/{key}"},
		{URL: "file:///etc/passwd"},
		{URL: "http://"},
		{URL: "http:opaque"},
		{URL: "http://[::1/{key}"},
		{URL: "http://origin.test/%zz"},
		{URL: "http://{key}.origin.test/"},
		{URL: "http://{key}@origin.test/"},
		{URL: "http://origin.test/?key=1"},
		{URL: "http://origin.test/{key}", Timeout: -time.Second},
		{URL: "http://origin.test/{key}", Concurrency: -1},
	} {
		err := r.Register(c)
		if !errors.Is(err, ErrConfig) {
			t.Errorf("Register(%+v) = %v, want ErrConfig", c, err)
		}
	}
	if got := r.List(); len(got) != 0 {
		t.Errorf("rejected configs were registered: %v", got)
	}
	for _, u := range []string{
		"HTTP://origin.test/{key}",
		"https://origin.test:8443/v1/{key}?fmt=raw",
		"http://127.0.0.1/get?id={key}",
		"http://user:pw@origin.test/{key}",
		"http://origin.test/items#frag",
	} {
		if err := r.Register(Config{Prefix: u, URL: u}); err != nil {
			t.Errorf("Register(%q) = %v", u, err)
		}
	}
}

// The shared client must not undo the loader's design: no client-wide
// timeout (each load has its own), redirects and connections checked
// against the allow-list, no proxy, and enough idle
// connections per host for a full fill budget.
func TestRegistryClient(t *testing.T) {
	r := NewRegistry(Options{MaxConcurrentFills: 512})
	r.init()
	tr, ok := r.client.Transport.(*http.Transport)
	if !ok {
		t.Fatalf("Transport is %T", r.client.Transport)
	}
	if tr.MaxIdleConnsPerHost < r.Budget().Limit() || r.Budget().Limit() != 512 {
		t.Errorf("MaxIdleConnsPerHost = %d for a budget of %d", tr.MaxIdleConnsPerHost, r.Budget().Limit())
	}
	if r.client.Timeout != 0 || r.client.CheckRedirect == nil {
		t.Errorf("client Timeout %v, CheckRedirect set %v", r.client.Timeout, r.client.CheckRedirect != nil)
	}
	if tr.Proxy != nil || tr.DialContext == nil {
		t.Errorf("transport Proxy set %v, DialContext set %v; want no proxy and the allow-list's dialer", tr.Proxy != nil, tr.DialContext != nil)
	}
	var zero Registry
	if zero.Budget().Limit() != DefaultMaxConcurrentFills {
		t.Errorf("zero Registry budget = %d", zero.Budget().Limit())
	}
}
