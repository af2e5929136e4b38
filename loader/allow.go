package loader

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// ErrNotAllowed is matched (errors.Is) by every refusal of the allow-list:
// by Register's error, and inside the OriginError of a fill whose
// connection or redirect was refused.
var ErrNotAllowed = errors.New("not allowed by --loader-allow")

// Refusal reasons: where the allow-list refused an address, the values of
// the metric stampedeless_loader_refused_total's reason label.
const (
	RefusedRegister = "register" // a loader URL, at Register
	RefusedRedirect = "redirect" // a redirect's target, before following it
	RefusedDial     = "dial"     // a connection, after resolving its host
)

// NotAllowedError is a refusal of the allow-list.
type NotAllowedError struct {
	// Addr is the host and port that was refused, as the URL named them.
	Addr string
	// Why says what was checked, in a few words: "10.0.0.7 is not
	// allowed", "resolves to 169.254.169.254, which is not allowed".
	Why string
}

// Error says what was refused and why, on one line.
func (e *NotAllowedError) Error() string {
	return e.Addr + " " + e.Why + " by --loader-allow"
}

// Is makes errors.Is(err, ErrNotAllowed) true.
func (e *NotAllowedError) Is(target error) bool { return target == ErrNotAllowed }

// AllowList is the set of origin addresses loaders may reach
// (--loader-allow): host names, IP addresses and CIDR prefixes, each
// optionally with a port. An IP or CIDR entry is matched against the
// address a connection actually goes to, after resolving; a host name entry
// trusts that name, whatever it resolves to. A name that is not listed is
// allowed only where it resolves to listed addresses, and is resolved again
// at every connection, so that a DNS answer that changes after registration
// cannot lead a loader elsewhere.
//
// The zero value allows nothing. An AllowList must not be changed once a
// Registry uses it.
type AllowList struct {
	entries []allowEntry
}

// allowEntry is one --loader-allow item. Exactly one of host and prefix is
// set; port 0 matches every port.
type allowEntry struct {
	host   string // lower case, without a trailing dot
	prefix netip.Prefix
	port   uint16
}

// Loopback returns the default allow-list: 127.0.0.0/8 and ::1, any port.
func Loopback() *AllowList {
	return &AllowList{entries: []allowEntry{
		{prefix: netip.MustParsePrefix("127.0.0.0/8")},
		{prefix: netip.MustParsePrefix("::1/128")},
	}}
}

// ParseAllowList parses --loader-allow values, each a comma-separated list
// of host, IP or CIDR items, each optionally followed by :port (an IPv6
// address or prefix with a port in brackets: [fd00::/8]:8080).
func ParseAllowList(specs []string) (*AllowList, error) {
	a := &AllowList{}
	for _, spec := range specs {
		for item := range strings.SplitSeq(spec, ",") {
			item = strings.TrimSpace(item)
			if item == "" {
				continue
			}
			e, err := parseAllowEntry(item)
			if err != nil {
				return nil, fmt.Errorf("--loader-allow %q: %w", item, err)
			}
			a.entries = append(a.entries, e)
		}
	}
	return a, nil
}

func parseAllowEntry(item string) (allowEntry, error) {
	// A bare IPv6 address or prefix has colons but no port.
	if e, ok := parseAllowAddr(item); ok {
		return e, nil
	}
	host, port := item, uint16(0)
	if h, p, err := net.SplitHostPort(item); err == nil {
		n, err := strconv.ParseUint(p, 10, 16)
		if err != nil || n == 0 {
			return allowEntry{}, fmt.Errorf("bad port %q", p)
		}
		host, port = h, uint16(n)
	} else if strings.HasPrefix(item, "[") {
		host = strings.TrimSuffix(strings.TrimPrefix(item, "["), "]")
	}
	if e, ok := parseAllowAddr(host); ok {
		e.port = port
		return e, nil
	}
	name := normalizeHost(host)
	if name == "" || strings.ContainsAny(name, "/:[]@ ") {
		return allowEntry{}, errors.New("want a host, an IP address or a CIDR prefix, optionally with :port")
	}
	return allowEntry{host: name, port: port}, nil
}

// parseAllowAddr parses an IP address or a CIDR prefix.
func parseAllowAddr(s string) (allowEntry, bool) {
	if p, err := netip.ParsePrefix(s); err == nil {
		return allowEntry{prefix: p.Masked()}, true
	}
	if ip, err := netip.ParseAddr(s); err == nil && ip.Zone() == "" {
		ip = ip.Unmap()
		return allowEntry{prefix: netip.PrefixFrom(ip, ip.BitLen())}, true
	}
	return allowEntry{}, false
}

// AllowURLHost adds the host of a loader URL, any port: what --loader flags
// do, so that the origins named on the command line are always reachable.
func (a *AllowList) AllowURLHost(rawURL string) error {
	t, err := parseTemplate(rawURL)
	if err != nil {
		return err
	}
	e, ok := parseAllowAddr(t.host)
	if !ok {
		e = allowEntry{host: normalizeHost(t.host)}
	}
	// An entry the list already covers would only lengthen the startup
	// log's list (127.0.0.1 beside 127.0.0.0/8).
	for _, have := range a.entries {
		if have.covers(e) {
			return nil
		}
	}
	a.entries = append(a.entries, e)
	return nil
}

// covers reports whether every address e allows, a allows too.
func (a allowEntry) covers(e allowEntry) bool {
	if a.port != 0 && a.port != e.port {
		return false
	}
	if a.host != "" || e.host != "" {
		return a.host == e.host
	}
	return a.prefix.Bits() <= e.prefix.Bits() && a.prefix.Contains(e.prefix.Addr())
}

// String lists the entries as --loader-allow takes them, for the startup
// log.
func (a *AllowList) String() string {
	items := make([]string, len(a.entries))
	for i, e := range a.entries {
		s := e.host
		if s == "" {
			s = e.prefix.String()
			if e.prefix.IsSingleIP() {
				s = e.prefix.Addr().String()
			}
		}
		if e.port != 0 {
			if strings.Contains(s, ":") {
				s = "[" + s + "]"
			}
			s += ":" + strconv.Itoa(int(e.port))
		}
		items[i] = s
	}
	return strings.Join(items, ",")
}

func normalizeHost(h string) string { return strings.TrimSuffix(strings.ToLower(h), ".") }

func (e allowEntry) portOK(port uint16) bool { return e.port == 0 || e.port == port }

// ipAllowed reports whether an IP entry covers ip:port.
func (a *AllowList) ipAllowed(ip netip.Addr, port uint16) bool {
	ip = ip.Unmap().WithZone("")
	for _, e := range a.entries {
		if e.host == "" && e.portOK(port) && e.prefix.Contains(ip) {
			return true
		}
	}
	return false
}

// nameListed reports whether a host name entry covers host:port.
func (a *AllowList) nameListed(host string, port uint16) bool {
	host = normalizeHost(host)
	for _, e := range a.entries {
		if e.host != "" && e.host == host && e.portOK(port) {
			return true
		}
	}
	return false
}

// guard applies an AllowList to a Registry's origin connections and
// counts its refusals.
type guard struct {
	allow    *AllowList
	resolver *net.Resolver
	dialer   net.Dialer
	refused  [3]atomic.Uint64 // by refusalIndex
}

// resolveTimeout bounds the name lookup of a check that has no deadline of
// its own (Register's).
const resolveTimeout = 2 * time.Second

func refusalIndex(reason string) int {
	switch reason {
	case RefusedRegister:
		return 0
	case RefusedRedirect:
		return 1
	}
	return 2
}

// addrs returns the addresses host may be reached at on port: host itself
// if it is an allowed IP, every address of a listed name, or the allowed
// addresses an unlisted name resolves to. A refusal is a *NotAllowedError,
// counted under reason.
func (g *guard) addrs(ctx context.Context, host string, port uint16, reason string) ([]netip.Addr, error) {
	refuse := func(why string) ([]netip.Addr, error) {
		g.refused[refusalIndex(reason)].Add(1)
		return nil, &NotAllowedError{Addr: net.JoinHostPort(host, strconv.Itoa(int(port))), Why: why}
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		if !g.allow.ipAllowed(ip, port) {
			return refuse("is not allowed")
		}
		return []netip.Addr{ip}, nil
	}
	ips, err := g.resolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil, err
	}
	if g.allow.nameListed(host, port) {
		return ips, nil
	}
	allowed := ips[:0:0]
	for _, ip := range ips {
		if g.allow.ipAllowed(ip, port) {
			allowed = append(allowed, ip)
		}
	}
	if len(allowed) == 0 {
		names := make([]string, len(ips))
		for i, ip := range ips {
			names[i] = ip.String()
		}
		return refuse("resolves to " + strings.Join(names, ", ") + ", not allowed")
	}
	return allowed, nil
}

// check refuses a loader or redirect URL whose host and port the
// allow-list does not cover. A listed name is taken without resolving it.
func (g *guard) check(ctx context.Context, host string, port uint16, reason string) error {
	if g.allow.nameListed(host, port) {
		return nil
	}
	_, err := g.addrs(ctx, host, port, reason)
	return err
}

// Resolves reports whether Register of a loader with rawURL would look its
// host up: a name the allow-list does not list. Only then may Register
// wait on DNS (for at most 2 s).
func (r *Registry) Resolves(rawURL string) bool {
	r.init()
	t, err := parseTemplate(rawURL)
	if err != nil {
		return false
	}
	_, err = netip.ParseAddr(t.host)
	return err != nil && !r.guard.allow.nameListed(t.host, t.port)
}

// dialContext is the origin transport's DialContext: it resolves the host
// itself, keeps the addresses the allow-list covers, and connects to those
// by number, so the address checked is the address connected to.
func (g *guard) dialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, p, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	port, err := strconv.ParseUint(p, 10, 16)
	if err != nil {
		return nil, fmt.Errorf("bad port in %q", addr)
	}
	ips, err := g.addrs(ctx, host, uint16(port), RefusedDial)
	if err != nil {
		return nil, err
	}
	var first error
	for _, ip := range ips {
		conn, err := g.dialer.DialContext(ctx, network, netip.AddrPortFrom(ip, uint16(port)).String())
		if err == nil {
			return conn, nil
		}
		if first == nil {
			first = err
		}
	}
	return nil, first
}

// Refusals counts the allow-list's refusals by reason since the Registry
// was made.
type Refusals struct {
	Register, Redirect, Dial uint64
}

// Refusals returns the allow-list's refusals so far, for metrics.
func (r *Registry) Refusals() Refusals {
	r.init()
	g := r.guard
	return Refusals{Register: g.refused[0].Load(), Redirect: g.refused[1].Load(), Dial: g.refused[2].Load()}
}
