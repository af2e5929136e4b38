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

// MaxBatch bounds Config.Batch: the most keys one batch request carries.
const MaxBatch = 10_000

// DefaultMaxValueSize is the largest origin body accepted when
// Options.MaxValueSize is zero: Redis's own limit on a bulk string.
const DefaultMaxValueSize = 512 << 20

// ErrConfig is matched (errors.Is) by every error Register returns.
var ErrConfig = errors.New("invalid loader")

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
	// Batch, if not zero, makes the loader a batch loader: it asks the
	// origin for up to Batch keys in one POST of the batch protocol
	// (FetchBatch), and its URL holds no {key}. Zero: one GET per key.
	Batch int
	// Headers are sent on every origin request, after the loader's own
	// (User-Agent may be replaced; the key and validator headers may not).
	// Their values are secrets: see Header.
	Headers []Header
}

// Stats are a loader's counters since it was registered.
type Stats struct {
	InFlight    int64  // origin requests being made now
	Fills       uint64 // Fetch calls (each at most one origin request)
	Found       uint64 // fills answered 200 with a value
	NotFound    uint64 // fills answered 404 or 410
	NotModified uint64 // fills answered 304
	Failures    uint64 // fills that returned an error matching ErrOrigin
	Batches     uint64 // batch requests (FetchBatch), each of one or more fills
}

// Info describes a registered loader, for LOADER.LIST and metrics.
type Info struct {
	Prefix      string
	URL         string
	Timeout     time.Duration
	Concurrency int // 0: only the global budget applies
	Batch       int // 0: one GET per key
	// HeaderNames are the names of the loader's configured headers, sorted;
	// their values are never shown.
	HeaderNames []string
	// Source says where the loader comes from: SourceConfig or
	// SourceRegister.
	Source string
	// Version is the registration's version (Registration); 0 for a
	// loader from the configuration.
	Version uint64
	Stats
}

// Where a loader comes from, for Info.Source.
const (
	// SourceConfig: RegisterDefault, the --loader flags; local to this
	// process and never shared.
	SourceConfig = "config"
	// SourceRegister: Register (LOADER.REGISTER), on this replica or, with
	// a Fleet, on any replica.
	SourceRegister = "register"
)

// Registry maps key prefixes to loaders and owns what they share: one HTTP
// client, so keep-alive connections are reused across loaders and fills,
// and the fill budget.
//
// A prefix's loader comes from one of two layers. Defaults
// (RegisterDefault: the configuration) are this process's own. A
// registration (Register, Unregister) overrides the default of its prefix
// until it is unregistered, when the default applies again; with a Fleet
// (Share), registrations are the fleet's, shared by every replica.
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

	mu       sync.Mutex            // serializes writers of table; guards the fields below
	defaults map[string]*Loader    // RegisterDefault, by prefix
	records  map[string]record     // the latest registration of each prefix, removals included
	fleet    Fleet                 // nil without Share
	table    atomic.Pointer[table] // nil until the first registration
}

// record is a prefix's latest registration and the loader built from it:
// nil for a removal, or for a registration from the fleet that this
// replica refused (the prefix then has no loader here).
type record struct {
	reg    Registration
	loader *Loader
}

// table is one immutable snapshot of the registered loaders.
type table struct {
	byPrefix map[string]*Loader
	lengths  []prefixLength // distinct prefix lengths, longest first
}

// prefixLength is one length the table's prefixes have, and its only
// loader if just one prefix has it: the usual case (a few loaders, of
// different lengths), where a lookup compares the key's first n bytes
// with one prefix instead of hashing them into the map (a twentieth of a
// pipelined GETFILL hit's time).
type prefixLength struct {
	n      int
	only   *Loader // nil: several prefixes have length n
	prefix string  // only's
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

// RegisterDefault adds a loader from the configuration (--loader). It
// applies while no registration (Register) of its prefix overrides it, is
// never shared with a Fleet, and cannot be unregistered.
func (r *Registry) RegisterDefault(c Config) error {
	l, err := r.newLoader(c, SourceConfig, 0)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.defaults == nil {
		r.defaults = make(map[string]*Loader)
	}
	r.defaults[c.Prefix] = l
	r.publishLocked()
	return nil
}

// Register registers a loader for c.Prefix (LOADER.REGISTER), replacing
// any registration of the prefix and overriding its default; the replaced
// loader's fetches in progress finish, and its counters are not carried
// over. With a Fleet the registration is the fleet's: stored in the
// shared store and announced to every replica. While the shared store is
// unavailable it applies here and is stored at the next Resync.
func (r *Registry) Register(c Config) error {
	if _, err := r.newLoader(c, SourceRegister, 0); err != nil {
		return err // checked before it can reach the fleet
	}
	return r.propose(Registration{Config: c})
}

// Unregister removes the registration of exactly prefix (LOADER.UNREGISTER)
// and reports whether there was one; the prefix's default, if any, applies
// again. Fetches in progress finish. A default cannot be unregistered: for
// a prefix with only a default it returns ErrDefault. With a Fleet the
// removal is the fleet's, as for Register.
func (r *Registry) Unregister(prefix string) (bool, error) {
	r.mu.Lock()
	rec, registered := r.records[prefix]
	_, hasDefault := r.defaults[prefix]
	r.mu.Unlock()
	switch {
	case registered && !rec.reg.Removed:
		return true, r.propose(Registration{Config: Config{Prefix: prefix}, Removed: true})
	case hasDefault:
		return false, fmt.Errorf("%w: the loader of %q is from the configuration (--loader); LOADER.REGISTER can override it, nothing can remove it at run time", ErrDefault, prefix)
	}
	return false, nil
}

// ErrDefault is matched (errors.Is) by Unregister's error for a prefix
// whose only loader is a default.
var ErrDefault = errors.New("loader: a default cannot be unregistered")

// newLoader checks c and builds its loader.
func (r *Registry) newLoader(c Config, source string, version uint64) (*Loader, error) {
	r.init()
	tmpl, err := parseTemplate(c.URL)
	if err != nil {
		return nil, err
	}
	if c.Timeout < 0 {
		return nil, fmt.Errorf("%w: negative timeout %v", ErrConfig, c.Timeout)
	}
	if c.Concurrency < 0 {
		return nil, fmt.Errorf("%w: negative concurrency %d", ErrConfig, c.Concurrency)
	}
	switch {
	case c.Batch < 0 || c.Batch > MaxBatch:
		return nil, fmt.Errorf("%w: batch %d out of range 0-%d", ErrConfig, c.Batch, MaxBatch)
	case c.Batch > 0 && tmpl.keyed:
		return nil, fmt.Errorf("%w: url %q: a batch loader's url has no {key}: the keys go in the request body", ErrConfig, c.URL)
	}
	header, names, err := buildHeaders(c.Headers)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), resolveTimeout)
	defer cancel()
	if err := r.guard.check(ctx, tmpl.host, tmpl.port, RefusedRegister); err != nil {
		if errors.Is(err, ErrNotAllowed) {
			return nil, fmt.Errorf("loader url %q: %w", c.URL, err)
		}
		return nil, fmt.Errorf("%w: url %q: cannot resolve %s: %s", ErrConfig, c.URL, tmpl.host, oneLine(errReason(err)))
	}
	l := &Loader{
		prefix:      c.Prefix,
		url:         c.URL,
		tmpl:        tmpl,
		timeout:     c.Timeout,
		concurrency: c.Concurrency,
		batch:       c.Batch,
		header:      header,
		headerNames: names,
		source:      source,
		version:     version,
		reg:         r,
	}
	if l.timeout == 0 {
		l.timeout = DefaultTimeout
	}
	if c.Concurrency > 0 {
		l.slots = make(chan struct{}, c.Concurrency)
	}
	return l, nil
}

// publishLocked replaces the table with one built from the two layers. The
// caller holds r.mu.
func (r *Registry) publishLocked() {
	m := make(map[string]*Loader, len(r.defaults)+len(r.records))
	for p, l := range r.defaults {
		m[p] = l
	}
	for p, rec := range r.records {
		switch {
		case rec.reg.Removed:
			// The default, if any, applies again.
		case rec.loader == nil:
			delete(m, p) // refused here: no loader rather than another one
		default:
			m[p] = rec.loader
		}
	}
	t := &table{byPrefix: m}
	for p, l := range m {
		i := slices.IndexFunc(t.lengths, func(pl prefixLength) bool { return pl.n == len(p) })
		if i < 0 {
			t.lengths = append(t.lengths, prefixLength{n: len(p), only: l, prefix: p})
		} else {
			t.lengths[i].only = nil
		}
	}
	slices.SortFunc(t.lengths, func(a, b prefixLength) int { return b.n - a.n })
	r.table.Store(t)
}

// Lookup returns the loader with the longest prefix of key. It costs one
// map lookup per distinct prefix length, not one per loader.
func (r *Registry) Lookup(key string) (*Loader, bool) { return lookup(r, key) }

// LookupBytes is Lookup of a key as the wire gives it, with no copy.
func (r *Registry) LookupBytes(key []byte) (*Loader, bool) { return lookup(r, key) }

func lookup[K string | []byte](r *Registry, key K) (*Loader, bool) {
	t := r.table.Load()
	if t == nil {
		return nil, false
	}
	for _, pl := range t.lengths {
		if pl.n > len(key) {
			continue
		}
		if pl.only != nil {
			if pl.prefix == string(key[:pl.n]) {
				return pl.only, true
			}
			continue
		}
		if l, ok := t.byPrefix[string(key[:pl.n])]; ok {
			return l, true
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
