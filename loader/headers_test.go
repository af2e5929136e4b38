package loader

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
)

const secret = "s3cr3t-token-value"

func TestHeadersReachTheOrigin(t *testing.T) {
	got := make(chan http.Header, 1)
	o := newOrigin(t, func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Clone()
		w.Write([]byte("v"))
	})
	r := newRegistry(t, Options{})
	l := mustRegister(t, r, Config{Prefix: "k:", URL: o.URL + "/{key}", Headers: []Header{
		{Name: "authorization", Value: "Bearer " + secret},
		{Name: "X-Tenant", Value: "a"},
		{Name: "x-tenant", Value: "b"},
		{Name: "User-Agent", Value: "my-cache"},
	}})
	if _, err := l.Fetch(longCtx(t), "k:1", Validators{ETag: `"e"`}); err != nil {
		t.Fatal(err)
	}
	h := <-got
	for name, want := range map[string][]string{
		"Authorization": {"Bearer " + secret},
		"X-Tenant":      {"a", "b"},
		"User-Agent":    {"my-cache"},
		KeyHeader:       {"k:1"},
		"If-None-Match": {`"e"`},
	} {
		if !slices.Equal(h.Values(name), want) {
			t.Errorf("origin got %s: %q, want %q", name, h.Values(name), want)
		}
	}

	// Without headers, the loader's own User-Agent, and nothing else.
	plain := mustRegister(t, r, Config{Prefix: "p:", URL: o.URL + "/{key}"})
	if _, err := plain.Fetch(longCtx(t), "p:1", Validators{}); err != nil {
		t.Fatal(err)
	}
	h = <-got
	if h.Get("User-Agent") != "stampedeless" || h.Get("Authorization") != "" || h.Get("X-Tenant") != "" {
		t.Errorf("a loader without headers sent %v", h)
	}
}

func TestHeaderChecksNeverQuoteTheValue(t *testing.T) {
	r := NewRegistry(Options{Allow: allowing(t, testNames)})
	for _, h := range []Header{
		{Name: "", Value: secret},
		{Name: "Bad Name", Value: secret},
		{Name: "Bad:Name", Value: secret},
		{Name: "Ünicode", Value: secret},
		{Name: "X-Stampedeless-Key", Value: secret},
		{Name: "if-none-match", Value: secret},
		{Name: "Host", Value: secret},
		{Name: "Content-Length", Value: secret},
		{Name: "Authorization", Value: ""},
		{Name: "Authorization", Value: secret + "\r\nX-Injected: 1"},
		{Name: "Authorization", Value: secret + "\x00"},
	} {
		err := r.Register(Config{Prefix: "k:", URL: "http://origin.test/{key}", Headers: []Header{h}})
		if !errors.Is(err, ErrConfig) {
			t.Errorf("header %q: %v, want ErrConfig", h.Name, err)
			continue
		}
		if strings.Contains(err.Error(), secret) {
			t.Errorf("header %q: the error repeats the value: %v", h.Name, err)
		}
	}
	if _, ok := r.Lookup("k:1"); ok {
		t.Error("a refused loader was registered")
	}
	if err := r.Register(Config{Prefix: "k:", URL: "http://origin.test/{key}",
		Headers: []Header{{Name: "X-Api-Key", Value: "a\tb ~!#"}}}); err != nil {
		t.Errorf("a valid header was refused: %v", err)
	}
}

func TestInfoShowsHeaderNamesOnly(t *testing.T) {
	r := NewRegistry(Options{Allow: allowing(t, testNames)})
	if err := r.Register(Config{Prefix: "k:", URL: "http://origin.test/{key}", Headers: []Header{
		{Name: "x-api-key", Value: secret}, {Name: "Authorization", Value: secret}, {Name: "X-Api-Key", Value: secret},
	}}); err != nil {
		t.Fatal(err)
	}
	infos := r.List()
	if len(infos) != 1 || !slices.Equal(infos[0].HeaderNames, []string{"Authorization", "X-Api-Key"}) {
		t.Fatalf("List() = %+v, want the header names Authorization and X-Api-Key", infos)
	}
	if s := fmt.Sprintf("%+v %#v", infos, infos); strings.Contains(s, secret) {
		t.Fatalf("List() shows a header value: %s", s)
	}
}

// TestDefaultsAndRegistrations: a registration overrides its prefix's
// default until it is unregistered; a default cannot be unregistered.
func TestDefaultsAndRegistrations(t *testing.T) {
	r := NewRegistry(Options{Allow: allowing(t, testNames)})
	url := func(key string) string {
		l, ok := r.Lookup(key)
		if !ok {
			return "<none>"
		}
		return l.URL() + " " + l.Info().Source
	}
	if err := r.RegisterDefault(Config{Prefix: "a:", URL: "http://flag.test/{key}"}); err != nil {
		t.Fatal(err)
	}
	if err := r.RegisterDefault(Config{Prefix: "b:", URL: "ftp://flag.test/"}); !errors.Is(err, ErrConfig) {
		t.Fatalf("a bad default: %v", err)
	}
	if got := url("a:1"); got != "http://flag.test/{key} config" {
		t.Fatalf("default: %s", got)
	}
	if err := r.Register(Config{Prefix: "a:", URL: "http://cmd.test/{key}"}); err != nil {
		t.Fatal(err)
	}
	if got := url("a:1"); got != "http://cmd.test/{key} register" {
		t.Fatalf("after Register: %s", got)
	}
	if ok, err := r.Unregister("a:"); !ok || err != nil {
		t.Fatalf("Unregister of the registration = %v, %v", ok, err)
	}
	if got := url("a:1"); got != "http://flag.test/{key} config" {
		t.Fatalf("after Unregister, the default should apply again: %s", got)
	}
	if ok, err := r.Unregister("a:"); ok || !errors.Is(err, ErrDefault) {
		t.Fatalf("Unregister of a default = %v, %v; want ErrDefault", ok, err)
	}
	if got := url("a:1"); got != "http://flag.test/{key} config" {
		t.Fatalf("a refused Unregister changed the loader: %s", got)
	}
	if ok, err := r.Unregister("none:"); ok || err != nil {
		t.Fatalf("Unregister of nothing = %v, %v", ok, err)
	}
	// Versions keep rising through removals, so a fleet can rank them.
	if err := r.Register(Config{Prefix: "a:", URL: "http://cmd.test/{key}"}); err != nil {
		t.Fatal(err)
	}
	if l, _ := r.Lookup("a:1"); l.Info().Version != 3 {
		t.Fatalf("version after register, unregister, register = %d, want 3", l.Info().Version)
	}
}

func TestRegistrationRank(t *testing.T) {
	for _, tc := range []struct {
		a, b Registration
		want bool
	}{
		{Registration{Version: 2, Replica: "a"}, Registration{Version: 1, Replica: "b"}, true},
		{Registration{Version: 1, Replica: "b"}, Registration{Version: 2, Replica: "a"}, false},
		{Registration{Version: 2, Replica: "b"}, Registration{Version: 2, Replica: "a"}, true},
		{Registration{Version: 2, Replica: "a"}, Registration{Version: 2, Replica: "a"}, false},
	} {
		if got := tc.a.Outranks(tc.b); got != tc.want {
			t.Errorf("%+v Outranks %+v = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}
