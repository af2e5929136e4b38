package loader

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultTimeout is a loader's timeout when its Config leaves it zero.
const DefaultTimeout = 5 * time.Second

// DefaultMaxValueSize is the largest origin body accepted when
// Options.MaxValueSize is zero: Redis's own limit on a bulk string.
const DefaultMaxValueSize = 512 << 20

// ErrConfig is matched (errors.Is) by every error Register returns.
var ErrConfig = errors.New("loader: invalid loader")

// Options configures a Registry. The zero value is usable.
type Options struct {
	// Transport makes the origin requests. If nil, the Registry builds its
	// own from http.DefaultTransport's settings, with MaxIdleConnsPerHost
	// equal to the fill budget: Go's default of 2 idle connections per host
	// would make a stampede of fills open and close a connection each. Its
	// connections go straight to the origin (no HTTP_PROXY) and are checked
	// against Allow after resolving; a Transport given here does its own
	// dialing, and Allow then applies only to loader URLs and redirects.
	Transport http.RoundTripper
	// Allow is the set of addresses origins may be reached at
	// (--loader-allow), checked at Register, for each redirect and for each
	// connection. If nil, Loopback() is used.
	Allow *AllowList
	// Resolver resolves origin host names for Allow's checks. If nil,
	// net.DefaultResolver is used.
	Resolver *net.Resolver
	// MaxValueSize is the largest origin body accepted, in bytes
	// (--max-value-size). If zero, DefaultMaxValueSize is used.
	MaxValueSize int64
	// MaxConcurrentFills bounds origin calls in flight across all loaders
	// (--max-concurrent-fills). If zero, DefaultMaxConcurrentFills is used.
	MaxConcurrentFills int
}

// Config describes one loader, as given to LOADER.REGISTER or --loader.
type Config struct {
	// Prefix selects the keys this loader fills; the longest registered
	// prefix of a key wins, and the empty prefix matches every key.
	Prefix string
	// URL is the origin endpoint, http or https. Its "{key}" placeholders
	// are replaced by the key, path-escaped in the path and query-escaped in
	// the query; without one, the key is sent as a "key" query parameter.
	URL string
	// Timeout is the deadline of each load, whoever is waiting for it. If
	// zero, DefaultTimeout is used.
	Timeout time.Duration
	// Concurrency bounds this loader's origin calls in flight, inside the
	// global budget, so that one slow origin cannot take the whole budget.
	// If zero, only the global budget applies.
	Concurrency int
}

// Stats are a loader's counters since it was registered.
type Stats struct {
	InFlight    int64  // origin requests being made now
	Fills       uint64 // Fetch calls (each at most one origin request)
	Found       uint64 // fills answered 200 with a value
	NotFound    uint64 // fills answered 404 or 410
	NotModified uint64 // fills answered 304
	Failures    uint64 // fills that returned an error matching ErrOrigin
}

// Info describes a registered loader, for LOADER.LIST and metrics.
type Info struct {
	Prefix      string
	URL         string
	Timeout     time.Duration
	Concurrency int // 0: only the global budget applies
	Stats
}

// Registry maps key prefixes to loaders and owns what they share: one HTTP
// client, so keep-alive connections are reused across loaders and fills,
// and the fill budget.
//
// Lookups read an immutable snapshot without locking, since every GETFILL
// miss does one; registrations copy it.
//
// The zero value is usable with default Options. A Registry is safe for
// concurrent use.
type Registry struct {
	opts Options

	once   sync.Once // initializes client, budget and guard
	client *http.Client
	budget *Budget
	guard  *guard

	mu    sync.Mutex            // serializes writers of table
	table atomic.Pointer[table] // nil until the first Register
}

// table is one immutable snapshot of the registered loaders.
type table struct {
	byPrefix map[string]*Loader
	lengths  []int // distinct prefix lengths, longest first
}

// NewRegistry returns a Registry with opts.
func NewRegistry(opts Options) *Registry {
	return &Registry{opts: opts}
}

func (r *Registry) init() {
	r.once.Do(func() {
		r.budget = NewBudget(r.opts.MaxConcurrentFills)
		r.guard = &guard{allow: r.opts.Allow, resolver: r.opts.Resolver, dialer: net.Dialer{KeepAlive: 30 * time.Second}}
		if r.guard.allow == nil {
			r.guard.allow = Loopback()
		}
		if r.guard.resolver == nil {
			r.guard.resolver = net.DefaultResolver
		}
		rt := r.opts.Transport
		if rt == nil {
			t := http.DefaultTransport.(*http.Transport).Clone()
			t.MaxIdleConns = 0 // no total cap: the per-host cap bounds it
			t.MaxIdleConnsPerHost = r.budget.Limit()
			// A proxy would be the address dialed and checked, not the
			// origin.
			t.Proxy = nil
			t.DialContext = r.guard.dialContext
			rt = t
		}
		r.client = &http.Client{
			Transport:     rt,
			CheckRedirect: r.checkRedirect,
			// No Timeout: each Fetch sets its own deadline, the loader's.
		}
	})
}

// maxRedirects bounds the redirects one Fetch follows. They run inside the
// load's deadline and slot: a redirect is not a second load.
const maxRedirects = 5

// checkRedirect follows a redirect only to an address the allow-list
// covers (the connection is checked again when it is made).
func (r *Registry) checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) > maxRedirects {
		return fmt.Errorf("stopped after %d redirects", maxRedirects)
	}
	host, port := urlHostPort(req.URL)
	return r.guard.check(req.Context(), host, port, RefusedRedirect)
}

func (r *Registry) maxValueSize() int64 {
	if r.opts.MaxValueSize > 0 {
		return min(r.opts.MaxValueSize, math.MaxInt64-1) // readBody reads one byte more
	}
	return DefaultMaxValueSize
}

// Budget returns the fill budget shared by all loaders, for metrics.
func (r *Registry) Budget() *Budget {
	r.init()
	return r.budget
}

// CloseIdleConnections closes the shared client's idle origin connections,
// on shutdown. Fetches in progress are not affected.
func (r *Registry) CloseIdleConnections() {
	r.init()
	r.client.CloseIdleConnections()
}

// Register adds a loader, replacing any loader registered for the same
// prefix; the replaced loader's fetches in progress finish, and its counters
// are not carried over.
func (r *Registry) Register(c Config) error {
	r.init()
	tmpl, err := parseTemplate(c.URL)
	if err != nil {
		return err
	}
	if c.Timeout < 0 {
		return fmt.Errorf("%w: negative timeout %v", ErrConfig, c.Timeout)
	}
	if c.Concurrency < 0 {
		return fmt.Errorf("%w: negative concurrency %d", ErrConfig, c.Concurrency)
	}
	ctx, cancel := context.WithTimeout(context.Background(), resolveTimeout)
	defer cancel()
	if err := r.guard.check(ctx, tmpl.host, tmpl.port, RefusedRegister); err != nil {
		if errors.Is(err, ErrNotAllowed) {
			return fmt.Errorf("loader url %q: %w", c.URL, err)
		}
		return fmt.Errorf("%w: url %q: cannot resolve %s: %s", ErrConfig, c.URL, tmpl.host, oneLine(errReason(err)))
	}
	l := &Loader{
		prefix:      c.Prefix,
		url:         c.URL,
		tmpl:        tmpl,
		timeout:     c.Timeout,
		concurrency: c.Concurrency,
		reg:         r,
	}
	if l.timeout == 0 {
		l.timeout = DefaultTimeout
	}
	if c.Concurrency > 0 {
		l.slots = make(chan struct{}, c.Concurrency)
	}
	r.update(func(m map[string]*Loader) { m[c.Prefix] = l })
	return nil
}

// Unregister removes the loader for exactly prefix and reports whether
// there was one. Its fetches in progress finish.
func (r *Registry) Unregister(prefix string) bool {
	found := false
	r.update(func(m map[string]*Loader) {
		_, found = m[prefix]
		delete(m, prefix)
	})
	return found
}

// update replaces the table with a copy changed by change.
func (r *Registry) update(change func(map[string]*Loader)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	m := make(map[string]*Loader)
	if old := r.table.Load(); old != nil {
		for p, l := range old.byPrefix {
			m[p] = l
		}
	}
	change(m)
	t := &table{byPrefix: m}
	for p := range m {
		if !slices.Contains(t.lengths, len(p)) {
			t.lengths = append(t.lengths, len(p))
		}
	}
	slices.Sort(t.lengths)
	slices.Reverse(t.lengths)
	r.table.Store(t)
}

// Lookup returns the loader with the longest prefix of key. It costs one
// map lookup per distinct prefix length, not one per loader.
func (r *Registry) Lookup(key string) (*Loader, bool) {
	t := r.table.Load()
	if t == nil {
		return nil, false
	}
	for _, n := range t.lengths {
		if n <= len(key) {
			if l, ok := t.byPrefix[key[:n]]; ok {
				return l, true
			}
		}
	}
	return nil, false
}

// List describes every registered loader, sorted by prefix.
func (r *Registry) List() []Info {
	t := r.table.Load()
	if t == nil {
		return nil
	}
	infos := make([]Info, 0, len(t.byPrefix))
	for _, l := range t.byPrefix {
		infos = append(infos, l.Info())
	}
	slices.SortFunc(infos, func(a, b Info) int { return strings.Compare(a.Prefix, b.Prefix) })
	return infos
}

// template is a loader URL split where escaping rules change, so that a key
// can never reach past the part of the URL it was put in.
type template struct {
	path  string // scheme, host and path, with any {key}
	query string // raw query without '?', with any {key}; no fragment
	keyed bool   // {key} occurs in path or query
	host  string // the host requests go to, without brackets
	port  uint16 // explicit, or the scheme's
}

const placeholder = "{key}"

// parseTemplate validates a loader URL: http or https, a host, and no
// {key} where a key could change the host the request goes to.
func parseTemplate(raw string) (template, error) {
	bad := func(why string) (template, error) {
		return template{}, fmt.Errorf("%w: url %q: %s", ErrConfig, raw, why)
	}
	s, _, _ := strings.Cut(raw, "#") // a fragment is never sent
	var t template
	t.path, t.query, _ = strings.Cut(s, "?")
	t.keyed = strings.Contains(s, placeholder)
	// Parse with a marker for the key, to see where a key would land.
	const marker = "stampedelesskeymarker"
	u, err := url.Parse(strings.ReplaceAll(s, placeholder, marker))
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return bad(oneLine(err.Error()))
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return bad("scheme must be http or https")
	case u.Opaque != "" || u.Host == "":
		return bad("no host")
	case strings.Contains(u.Host, marker) || strings.Contains(u.User.String(), marker):
		return bad("{key} may appear only in the path or the query")
	}
	if !t.keyed && u.Query().Has("key") {
		return bad(`has a "key" query parameter but no {key}`)
	}
	if u.Port() != "" {
		if _, err := strconv.ParseUint(u.Port(), 10, 16); err != nil {
			return bad("bad port")
		}
	}
	t.host, t.port = urlHostPort(u)
	return t, nil
}

// urlHostPort returns the host a URL's request connects to and the port,
// the scheme's when the URL names none.
func urlHostPort(u *url.URL) (string, uint16) {
	if p, err := strconv.ParseUint(u.Port(), 10, 16); err == nil {
		return u.Hostname(), uint16(p)
	}
	if u.Scheme == "https" {
		return u.Hostname(), 443
	}
	return u.Hostname(), 80
}

// expand returns the request URL for key.
func (t template) expand(key string) string {
	var b strings.Builder
	if !t.keyed {
		b.WriteString(t.path)
		b.WriteByte('?')
		if t.query != "" {
			b.WriteString(t.query)
			b.WriteByte('&')
		}
		b.WriteString("key=")
		b.WriteString(url.QueryEscape(key))
		return b.String()
	}
	b.WriteString(strings.ReplaceAll(t.path, placeholder, url.PathEscape(key)))
	if t.query != "" {
		b.WriteByte('?')
		b.WriteString(strings.ReplaceAll(t.query, placeholder, url.QueryEscape(key)))
	}
	return b.String()
}

// pathKeyed reports whether {key} occurs in the path, where the keys "."
// and ".." would be dot-segments that an origin resolves to another
// resource (and %2E is, per RFC 3986, the same as '.').
func (t template) pathKeyed() bool {
	return strings.Contains(t.path, placeholder)
}
