package loader

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/textproto"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
	"unicode/utf8"
)

// KeyHeader carries the key on every origin request, so an origin need not
// parse it back out of its URL.
const KeyHeader = "X-Stampedeless-Key"

// KeyEncodingHeader is sent, with the value "percent", when the key cannot
// travel in KeyHeader as it is (control bytes, or spaces at either end that
// HTTP would trim); KeyHeader then holds url.PathEscape(key).
const KeyEncodingHeader = "X-Stampedeless-Key-Encoding"

// ErrOrigin is matched (errors.Is) by every failure of Fetch; see
// OriginError for the loader and reason that -LOADERR reports.
var ErrOrigin = errors.New("loader: origin failed")

// OriginError is a failed Fetch: a status other than 200, 304, 404 and 410,
// a timeout, a connection error, or a body over the size limit.
type OriginError struct {
	// Loader is the failing loader's prefix.
	Loader string
	// Reason says what went wrong in a few words ("status 503", "timeout
	// after 5s", "connection refused", "body over 512mb"). It is one line
	// of valid UTF-8 and never repeats the origin's body, so it can go
	// into a RESP error reply as it is.
	Reason string
	// Err is the underlying error, if any.
	Err error
}

// Error quotes the prefix, which may hold any bytes a key can.
func (e *OriginError) Error() string { return fmt.Sprintf("loader %q: %s", e.Loader, e.Reason) }

// Is makes errors.Is(err, ErrOrigin) true.
func (e *OriginError) Is(target error) bool { return target == ErrOrigin }

// Unwrap returns the underlying error.
func (e *OriginError) Unwrap() error { return e.Err }

// Validators are an entry's validators from its last fill, sent back on a
// refresh so the origin can answer 304 Not Modified instead of the body.
// The zero value makes an unconditional request.
type Validators struct {
	ETag         string // sent as If-None-Match
	LastModified string // sent as If-Modified-Since
}

func (v Validators) empty() bool { return v.ETag == "" && v.LastModified == "" }

// Result is what an origin said about a key.
type Result struct {
	// Value is the body of a 200 answer.
	Value []byte
	// Found is false when the origin said the key does not exist (404 or
	// 410); that is an answer, not a failure.
	Found bool
	// NotModified is true for a 304 answer to a conditional request: the
	// caller's copy is still good and Value is empty. Found is also true.
	NotModified bool
	// ETag and LastModified are the validators to send on the next
	// refresh: the answer's headers, or for a 304 without them, the
	// validators that were sent.
	ETag         string
	LastModified string
	// Tags are the origin's surrogate keys for the value, which PURGE.TAG
	// names: its Surrogate-Key header (space separated, as Fastly and
	// Varnish's xkey) and its Cache-Tag header (comma separated, as
	// Cloudflare), in that order without repeats; for a batch loader, the
	// result's "tags". Empty on a 304 that sent none: the stored value
	// keeps its own.
	Tags []string
}

// Loader is an origin endpoint registered for a key prefix. Get one from a
// Registry; it is safe for concurrent use, and stays usable after it was
// unregistered or replaced, so fetches in progress can finish.
type Loader struct {
	prefix      string
	url         string
	tmpl        template
	timeout     time.Duration
	concurrency int
	batch       int           // Config.Batch: the most keys per request; 0 for a loader of one key per GET
	slots       chan struct{} // one token per origin call in flight; nil without a Concurrency
	header      http.Header   // Config.Headers, canonical; values are secrets
	headerNames []string      // header's names, sorted
	source      string        // SourceConfig or SourceRegister
	version     uint64        // the registration's; 0 for a default
	reg         *Registry     // client, budget, size limit

	inFlight                                               atomic.Int64
	fills, found, notFound, notModified, failures, batches atomic.Uint64
}

// Prefix returns the loader's prefix, which is also its name in -LOADERR
// replies, engine entries and metrics.
func (l *Loader) Prefix() string { return l.prefix }

// URL returns the URL the loader was registered with.
func (l *Loader) URL() string { return l.url }

// Timeout returns the deadline of each of the loader's loads.
func (l *Loader) Timeout() time.Duration { return l.timeout }

// Batch returns the most keys one of the loader's requests carries (the
// batch protocol, FetchBatch), or 0 for a loader that sends one GET per key.
func (l *Loader) Batch() int { return l.batch }

// Stats returns the loader's counters.
func (l *Loader) Stats() Stats {
	return Stats{
		InFlight:    l.inFlight.Load(),
		Fills:       l.fills.Load(),
		Found:       l.found.Load(),
		NotFound:    l.notFound.Load(),
		NotModified: l.notModified.Load(),
		Failures:    l.failures.Load(),
		Batches:     l.batches.Load(),
	}
}

// Info describes the loader.
func (l *Loader) Info() Info {
	return Info{
		Prefix:      l.prefix,
		URL:         l.url,
		Timeout:     l.timeout,
		Concurrency: l.concurrency,
		Batch:       l.batch,
		HeaderNames: slices.Clone(l.headerNames),
		Source:      l.source,
		Version:     l.version,
		Stats:       l.Stats(),
	}
}

// Fetch asks the origin for key with one GET, conditional when v has
// validators. 404 and 410 are a Result with Found false, not an error;
// every failure matches ErrOrigin and is an *OriginError.
//
// The load's deadline is the loader's timeout, counted from the call, and
// covers waiting for a slot (the loader's Concurrency, then the Registry's
// fill budget), the request and reading the body. ctx contributes only its
// values: its cancellation and deadline are ignored, because the load
// belongs to every caller waiting for the key, not to the one who started
// it.
//
// A batch loader (Config.Batch) asks for key with a batch request of one
// key (FetchBatch).
func (l *Loader) Fetch(ctx context.Context, key string, v Validators) (Result, error) {
	if l.batch > 0 {
		out := l.FetchBatch(ctx, []BatchKey{{Key: key, Validators: v}})
		return out[0].Result, out[0].Err
	}
	res, err := l.fetch(ctx, key, v)
	l.count(res, err)
	return res, err
}

// count adds one fill's result to the loader's counters.
func (l *Loader) count(res Result, err error) {
	l.fills.Add(1)
	switch {
	case err != nil:
		l.failures.Add(1)
	case res.NotModified:
		l.notModified.Add(1)
	case res.Found:
		l.found.Add(1)
	default:
		l.notFound.Add(1)
	}
}

// acquire takes the slots of one origin request, the loader's own first so
// that a loader at its limit does not sit on global slots other loaders
// could use, waiting no longer than ctx (the load's deadline) allows. done
// gives them back.
func (l *Loader) acquire(ctx context.Context) (done func(), err error) {
	if l.slots != nil {
		select {
		case l.slots <- struct{}{}:
		case <-ctx.Done():
			return nil, l.fail(l.timeoutReason()+" waiting for a loader slot", ctx.Err())
		}
	}
	if err := l.reg.budget.Acquire(ctx); err != nil {
		if l.slots != nil {
			<-l.slots
		}
		return nil, l.fail(l.timeoutReason()+" waiting for the fill budget", err)
	}
	l.inFlight.Add(1)
	return func() {
		l.inFlight.Add(-1)
		l.reg.budget.Release()
		if l.slots != nil {
			<-l.slots
		}
	}, nil
}

func (l *Loader) fetch(ctx context.Context, key string, v Validators) (Result, error) {
	l.reg.init()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), l.timeout)
	defer cancel()

	if l.tmpl.pathKeyed() && (key == "." || key == "..") {
		return Result{}, l.fail("key "+strconv.Quote(key)+" cannot go in the url path", nil)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, l.tmpl.expand(key), nil)
	if err != nil {
		return Result{}, l.fail("bad url: "+l.reason(ctx, err), err)
	}
	if l.header != nil {
		req.Header = l.header.Clone()
	}
	setKeyHeader(req.Header, key)
	if req.Header.Get("User-Agent") == "" {
		req.Header.Set("User-Agent", "stampedeless")
	}
	if v.ETag != "" {
		req.Header.Set("If-None-Match", v.ETag)
	}
	if v.LastModified != "" {
		req.Header.Set("If-Modified-Since", v.LastModified)
	}

	done, err := l.acquire(ctx)
	if err != nil {
		return Result{}, err
	}
	defer done()
	resp, err := l.reg.client.Do(req)
	if err != nil {
		return Result{}, l.fail(l.reason(ctx, err), err)
	}
	defer resp.Body.Close()

	switch resp.StatusCode {
	case http.StatusOK:
		body, err := l.readBody(ctx, resp)
		if err != nil {
			return Result{}, err
		}
		return Result{
			Value:        body,
			Found:        true,
			ETag:         resp.Header.Get("ETag"),
			LastModified: resp.Header.Get("Last-Modified"),
			Tags:         parseTags(resp.Header),
		}, nil
	case http.StatusNotFound, http.StatusGone:
		drain(resp.Body)
		return Result{}, nil
	case http.StatusNotModified:
		if v.empty() {
			// Nothing to renew: the caller has no copy the origin could
			// have validated.
			return Result{}, l.fail("status 304 to an unconditional request", nil)
		}
		res := Result{Found: true, NotModified: true, ETag: v.ETag, LastModified: v.LastModified}
		if e := resp.Header.Get("ETag"); e != "" {
			res.ETag = e
		}
		if lm := resp.Header.Get("Last-Modified"); lm != "" {
			res.LastModified = lm
		}
		res.Tags = parseTags(resp.Header)
		return res, nil
	default:
		drain(resp.Body)
		return Result{}, l.fail("status "+strconv.Itoa(resp.StatusCode), nil)
	}
}

// readBody reads a 200 answer's body, refusing it once it is over the size
// limit: from Content-Length before reading anything, otherwise after
// reading at most one byte too many.
func (l *Loader) readBody(ctx context.Context, resp *http.Response) ([]byte, error) {
	limit := l.reg.maxValueSize()
	over := func() error { return l.fail("body over "+formatSize(limit), nil) }
	if n := resp.ContentLength; n > limit {
		return nil, over()
	} else if n >= 0 && n <= maxPrealloc {
		// The transport reports an error rather than return more or fewer
		// bytes than Content-Length, so the value is allocated once.
		b := make([]byte, n)
		if _, err := io.ReadFull(resp.Body, b); err != nil {
			return nil, l.fail("reading body: "+l.reason(ctx, err), err)
		}
		return b, nil
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, l.fail("reading body: "+l.reason(ctx, err), err)
	}
	if int64(len(b)) > limit {
		return nil, over()
	}
	return b, nil
}

// maxPrealloc bounds what readBody allocates on the word of Content-Length
// alone; bigger bodies grow as their bytes actually arrive, so that an origin
// cannot make 256 fills allocate 512 MB each before sending anything.
const maxPrealloc = 1 << 20

// drain reads a little of a body that is not wanted, so that a short error
// page does not cost the keep-alive connection.
func drain(r io.Reader) {
	_, _ = io.CopyN(io.Discard, r, 4<<10)
}

func (l *Loader) fail(reason string, err error) error {
	return &OriginError{Loader: l.prefix, Reason: oneLine(reason), Err: err}
}

func (l *Loader) timeoutReason() string { return "timeout after " + l.timeout.String() }

// reason names a request or body error in a few words. The load's own
// deadline is checked first: once it has passed, whatever the transport
// says is a consequence of it.
func (l *Loader) reason(ctx context.Context, err error) string {
	if ctx.Err() != nil {
		return l.timeoutReason()
	}
	return errReason(err)
}

// errReason names a connection, name lookup, allow-list or body error in a few
// words, without the URL (which has the key).
func errReason(err error) string {
	var dnsErr *net.DNSError
	var netErr net.Error
	var refused *NotAllowedError
	switch {
	case errors.As(err, &refused):
		return refused.Error()
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset"
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return "connection closed"
	case errors.As(err, &dnsErr) && dnsErr.IsNotFound:
		return "no such host " + dnsErr.Name
	case errors.As(err, &netErr) && netErr.Timeout():
		return "timeout"
	}
	var headerErr textproto.ProtocolError
	if errors.As(err, &headerErr) {
		// Its text ends with the origin's bad header line.
		return "malformed response header"
	}
	var urlErr *url.Error
	if errors.As(err, &urlErr) {
		err = urlErr.Err // without the method and the URL, which has the key
	}
	// net/http quotes what it could not parse ("malformed HTTP response
	// \"...\""), which is the origin's text: the reason stops before it.
	msg := err.Error()
	if i := strings.IndexByte(msg, '"'); i > 0 {
		msg = strings.TrimRight(msg[:i], " :")
	}
	return msg
}

// setKeyHeader puts key in KeyHeader, percent-encoded (and flagged so) when
// HTTP would reject or alter it.
func setKeyHeader(h http.Header, key string) {
	plain := !strings.HasPrefix(key, " ") && !strings.HasSuffix(key, " ")
	for i := 0; plain && i < len(key); i++ {
		plain = key[i] >= 0x20 && key[i] != 0x7f
	}
	if plain {
		h.Set(KeyHeader, key)
		return
	}
	h.Set(KeyHeader, url.PathEscape(key))
	h.Set(KeyEncodingHeader, "percent")
}

// maxReason bounds a reason's length: it is one line of an error reply.
const maxReason = 200

// oneLine makes s safe for a one-line error reply: newlines become spaces,
// invalid UTF-8 is dropped, and the length is bounded.
func oneLine(s string) string {
	s = strings.ToValidUTF8(s, "")
	s = strings.Map(func(r rune) rune {
		if r == '\r' || r == '\n' {
			return ' '
		}
		return r
	}, s)
	if len(s) > maxReason {
		cut := maxReason
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "..."
	}
	return s
}

// formatSize writes a byte count the way Redis configuration does: 512mb,
// 64kb, 100b.
func formatSize(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return strconv.FormatInt(n>>30, 10) + "gb"
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.FormatInt(n>>20, 10) + "mb"
	case n >= 1<<10 && n%(1<<10) == 0:
		return strconv.FormatInt(n>>10, 10) + "kb"
	}
	return strconv.FormatInt(n, 10) + "b"
}
