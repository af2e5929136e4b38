package loader

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
)

// allowing parses an allow-list for a test.
func allowing(t testing.TB, specs ...string) *AllowList {
	t.Helper()
	a, err := ParseAllowList(specs)
	if err != nil {
		t.Fatalf("ParseAllowList(%q): %v", specs, err)
	}
	return a
}

func TestParseAllowList(t *testing.T) {
	a := allowing(t, "10.0.0.0/8, origin.internal:8080", "::1,[fd00::/8]:443,192.168.1.7:80,Users.Internal.,[fe80::1]")
	if got, want := a.String(), "10.0.0.0/8,origin.internal:8080,::1,[fd00::/8]:443,192.168.1.7:80,users.internal,fe80::1"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	for _, c := range []struct {
		ip   string
		port uint16
		want bool
	}{
		{"10.1.2.3", 1, true},
		{"11.0.0.1", 80, false},
		{"::ffff:10.0.0.1", 80, true}, // an IPv4-mapped address is its IPv4 address
		{"::1", 6379, true},
		{"fd12::1", 443, true},
		{"fd12::1", 80, false},
		{"192.168.1.7", 80, true},
		{"192.168.1.7", 81, false},
		{"127.0.0.1", 80, false}, // an explicit list replaces loopback
	} {
		if got := a.ipAllowed(netip.MustParseAddr(c.ip), c.port); got != c.want {
			t.Errorf("ipAllowed(%s, %d) = %v, want %v", c.ip, c.port, got, c.want)
		}
	}
	for _, c := range []struct {
		host string
		port uint16
		want bool
	}{
		{"origin.internal", 8080, true},
		{"ORIGIN.internal.", 8080, true},
		{"origin.internal", 80, false},
		{"users.internal", 1234, true},
		{"evil.internal", 80, false},
	} {
		if got := a.nameListed(c.host, c.port); got != c.want {
			t.Errorf("nameListed(%s, %d) = %v, want %v", c.host, c.port, got, c.want)
		}
	}
	for _, bad := range []string{"10.0.0.0/33", "host:0", "host:70000", "host:http", "http://origin/", "a b", "[::1]:x", "user@host"} {
		if _, err := ParseAllowList([]string{bad}); err == nil {
			t.Errorf("ParseAllowList(%q) accepted it", bad)
		}
	}
	if got := Loopback().String(); got != "127.0.0.0/8,::1" {
		t.Errorf("Loopback() = %q", got)
	}
	var zero AllowList
	if zero.ipAllowed(netip.MustParseAddr("127.0.0.1"), 80) || zero.nameListed("localhost", 80) {
		t.Error("the zero AllowList allows something")
	}
}

func TestResolves(t *testing.T) {
	r := NewRegistry(Options{Allow: allowing(t, "origin.internal:80")})
	for u, want := range map[string]bool{
		"http://10.0.0.1/{key}":         false,
		"http://[::1]:8080/{key}":       false,
		"http://origin.internal/{key}":  false,
		"http://origin.internal:81/":    true,
		"http://other.internal/{key}":   true,
		"https://origin.internal/{key}": true, // port 443
		"ftp://x/":                      false,
	} {
		if got := r.Resolves(u); got != want {
			t.Errorf("Resolves(%q) = %v, want %v", u, got, want)
		}
	}
}

func TestAllowURLHost(t *testing.T) {
	var a AllowList
	for _, u := range []string{"http://users.internal/{key}", "https://10.0.0.5:8443/?id={key}", "http://[fd00::5]/x"} {
		if err := a.AllowURLHost(u); err != nil {
			t.Fatalf("AllowURLHost(%q): %v", u, err)
		}
	}
	if got := a.String(); got != "users.internal,10.0.0.5,fd00::5" {
		t.Errorf("String() = %q", got)
	}
	if err := a.AllowURLHost("ftp://x/"); !errors.Is(err, ErrConfig) {
		t.Errorf("AllowURLHost of a bad url = %v, want ErrConfig", err)
	}
}

// TestAllowURLHostCovered: a loader's host the list already allows adds no
// entry, so the startup log lists each address once.
func TestAllowURLHostCovered(t *testing.T) {
	a := Loopback()
	for _, u := range []string{"http://127.0.0.1:8080/{key}", "http://[::1]/{key}", "http://127.0.0.1/x", "http://Users.internal./{key}", "http://users.internal/y"} {
		if err := a.AllowURLHost(u); err != nil {
			t.Fatalf("AllowURLHost(%q): %v", u, err)
		}
	}
	if got := a.String(); got != "127.0.0.0/8,::1,users.internal" {
		t.Errorf("String() = %q, want 127.0.0.0/8,::1,users.internal", got)
	}
}

// originPort is the port of a test origin's URL.
func originPort(t testing.TB, o *origin) string {
	t.Helper()
	u, err := url.Parse(o.URL)
	if err != nil {
		t.Fatal(err)
	}
	return u.Port()
}

func TestRegisterRefusesDisallowedAddress(t *testing.T) {
	o := newOrigin(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "v") })
	port := originPort(t, o)
	r := newRegistry(t, Options{Allow: allowing(t, "10.0.0.0/8", "127.0.0.1:1")})
	err := r.Register(Config{Prefix: "p:", URL: o.URL + "/{key}"})
	if !errors.Is(err, ErrNotAllowed) || !strings.Contains(err.Error(), "127.0.0.1:"+port+" is not allowed by --loader-allow") {
		t.Errorf("Register of a disallowed origin = %v, want ErrNotAllowed naming 127.0.0.1:%s", err, port)
	}
	if _, ok := r.Lookup("p:1"); ok {
		t.Error("a refused loader was registered")
	}
	if got := r.Refusals(); got != (Refusals{Register: 1}) {
		t.Errorf("Refusals() = %+v, want one at register", got)
	}

	// The default, loopback, and an entry for the origin's own port allow it.
	for _, allow := range []*AllowList{nil, allowing(t, "127.0.0.1:"+port)} {
		r := newRegistry(t, Options{Allow: allow})
		l := mustRegister(t, r, Config{Prefix: "p:", URL: o.URL + "/{key}"})
		if res, err := l.Fetch(context.Background(), "p:1", Validators{}); err != nil || string(res.Value) != "v" {
			t.Errorf("allow %v: Fetch = %+v, %v", allow, res, err)
		}
	}
}

func TestRedirectToDisallowedAddressNotFollowed(t *testing.T) {
	inside := newOrigin(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "secret") })
	outside := newOrigin(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, inside.URL+"/metadata", http.StatusFound)
	})
	r := newRegistry(t, Options{Allow: allowing(t, "127.0.0.1:"+originPort(t, outside))})
	l := mustRegister(t, r, Config{Prefix: "p:", URL: outside.URL + "/{key}"})
	_, err := l.Fetch(context.Background(), "p:1", Validators{})
	wantOriginErr(t, err, "p:", "127.0.0.1:"+originPort(t, inside)+" is not allowed by --loader-allow")
	if !errors.Is(err, ErrNotAllowed) {
		t.Errorf("err = %v, want ErrNotAllowed", err)
	}
	if n := inside.calls.Load(); n != 0 {
		t.Errorf("the disallowed redirect target got %d calls", n)
	}
	if got := r.Refusals(); got != (Refusals{Redirect: 1}) {
		t.Errorf("Refusals() = %+v, want one redirect", got)
	}

	// Allowed too, the target is followed.
	r = newRegistry(t, Options{Allow: allowing(t, "127.0.0.1:"+originPort(t, outside), "127.0.0.1:"+originPort(t, inside))})
	l = mustRegister(t, r, Config{Prefix: "p:", URL: outside.URL + "/{key}"})
	if res, err := l.Fetch(context.Background(), "p:1", Validators{}); err != nil || string(res.Value) != "secret" {
		t.Errorf("allowed redirect: %+v, %v", res, err)
	}
}

// A name that resolved to an allowed address at registration and to
// another one later (DNS rebinding) is refused when the connection is
// made: the address checked is the one connected to.
func TestDialRefusesNameResolvingToDisallowedAddress(t *testing.T) {
	o := newOrigin(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "v") })
	dns := newDNSServer(t)
	dns.answer.Store(netip.MustParseAddr("127.0.0.1"))
	r := newRegistry(t, Options{Allow: allowing(t, "127.0.0.1"), Resolver: dns.resolver()})
	l := mustRegister(t, r, Config{Prefix: "p:", URL: "http://origin.test:" + originPort(t, o) + "/{key}"})
	if res, err := l.Fetch(context.Background(), "p:1", Validators{}); err != nil || string(res.Value) != "v" {
		t.Fatalf("Fetch while origin.test is 127.0.0.1: %+v, %v", res, err)
	}
	r.CloseIdleConnections() // the next fetch must dial

	dns.answer.Store(netip.MustParseAddr("169.254.169.254"))
	_, err := l.Fetch(context.Background(), "p:2", Validators{})
	wantOriginErr(t, err, "p:", "origin.test:"+originPort(t, o)+" resolves to 169.254.169.254, not allowed by --loader-allow")
	if got := r.Refusals(); got != (Refusals{Dial: 1}) {
		t.Errorf("Refusals() = %+v, want one at dial", got)
	}
	if n := o.calls.Load(); n != 1 {
		t.Errorf("origin calls = %d, want 1", n)
	}

	// Registering the name now is refused as well.
	err = r.Register(Config{Prefix: "q:", URL: "http://origin.test:" + originPort(t, o) + "/{key}"})
	if !errors.Is(err, ErrNotAllowed) {
		t.Errorf("Register while origin.test is 169.254.169.254 = %v, want ErrNotAllowed", err)
	}
	// A listed name is trusted whatever it resolves to.
	r = newRegistry(t, Options{Allow: allowing(t, "origin.test"), Resolver: dns.resolver()})
	dns.answer.Store(netip.MustParseAddr("127.0.0.1"))
	l = mustRegister(t, r, Config{Prefix: "p:", URL: "http://origin.test:" + originPort(t, o) + "/{key}"})
	if res, err := l.Fetch(context.Background(), "p:3", Validators{}); err != nil || string(res.Value) != "v" {
		t.Errorf("Fetch of a listed name: %+v, %v", res, err)
	}
}

// dnsServer is a real DNS server on a loopback UDP port that answers every
// A query with one address, which a test may change, and every other query
// with no records.
type dnsServer struct {
	conn   net.PacketConn
	answer atomic.Value // netip.Addr
}

func newDNSServer(t *testing.T) *dnsServer {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &dnsServer{conn: pc}
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 1500)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			if reply := s.reply(buf[:n]); reply != nil {
				pc.WriteTo(reply, from)
			}
		}
	}()
	t.Cleanup(func() { pc.Close(); <-done })
	return s
}

// resolver returns a Go resolver that sends every query to s.
func (s *dnsServer) resolver() *net.Resolver {
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "udp", s.conn.LocalAddr().String())
	}}
}

// reply answers a query of one question (RFC 1035 section 4).
func (s *dnsServer) reply(q []byte) []byte {
	if len(q) < 12 || binary.BigEndian.Uint16(q[4:]) != 1 {
		return nil
	}
	end := 12
	for end < len(q) && q[end] != 0 {
		end += int(q[end]) + 1
	}
	end += 5 // the root label, QTYPE and QCLASS
	if end > len(q) {
		return nil
	}
	qtype := binary.BigEndian.Uint16(q[end-4:])
	out := make([]byte, 0, end+16)
	out = append(out, q[0], q[1], 0x84, 0x00) // the query's ID; a response, authoritative, no error
	out = binary.BigEndian.AppendUint16(out, 1)
	ip, _ := s.answer.Load().(netip.Addr)
	if qtype != 1 || !ip.Is4() {
		out = append(out, 0, 0, 0, 0, 0, 0)
		return append(out, q[12:end]...)
	}
	out = append(out, 0, 1, 0, 0, 0, 0)
	out = append(out, q[12:end]...)
	out = append(out, 0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 0, 0, 4) // the question's name, A, IN, TTL 0, 4 bytes
	a := ip.As4()
	return append(out, a[:]...)
}
