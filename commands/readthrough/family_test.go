package readthrough

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stampedeless/stampedeless/commands/commandstest"
	"github.com/stampedeless/stampedeless/commands/keyspace"
	"github.com/stampedeless/stampedeless/loader"
	"github.com/stampedeless/stampedeless/metrics"
	"github.com/stampedeless/stampedeless/radar"
	"github.com/stampedeless/stampedeless/swr"
)

// The family's handlers run here through commandstest, with no server and
// no TCP to the client: a command that waits for a load waits as the
// server makes it wait (Client.Await), after the handler. The origins are
// real HTTP servers on loopback (origin), the store, the Filler, the
// registry and the radar real ones on the harness's fake clock.

// Names of the decoded replies, for the tables.
type (
	Err = commandstest.Err
	Map = commandstest.Map
)

// Case is one command line of a table (commandstest.Split) and its reply,
// decoded (an untyped integer stands for an int64).
type Case struct {
	Cmd  string
	Want any
}

// harness runs the read-through family's commands.
type harness struct {
	*commandstest.Harness
	opts Options
}

// newHarness serves the family with its defaults, changed by with.
func newHarness(t *testing.T, with ...func(*Options)) *harness {
	h := commandstest.New(t)
	opts := Options{
		Loaders: loader.NewRegistry(loader.Options{}),
		Metrics: metrics.New().Fill,
		Logger:  slog.New(slog.NewTextHandler(io.Discard, nil)),
		Radar:   radar.New(radar.Options{Now: h.Clock.Now}),
	}
	for _, w := range with {
		w(&opts)
	}
	opts.Filler = swr.New(swr.Options{Store: h.Store, Loaders: opts.Loaders, Metrics: opts.Metrics, Logger: opts.Logger,
		Radar: opts.Radar, Now: h.Clock.Now, AfterFunc: h.Clock.AfterFunc, TTLJitter: -1})
	// The keyspace's commands too, as the server serves them: a test
	// reads and writes the keys the family's commands fill.
	h.Serve(keyspace.Commands()...)
	h.Serve(Commands(opts)...)
	return &harness{Harness: h, opts: opts}
}

// newServed is newHarness with an origin registered as the loader of
// the keys "k:*".
func newServed(t *testing.T, with ...func(*Options)) (*harness, *origin) {
	t.Helper()
	f, o := newHarness(t, with...), newOrigin(t)
	f.Check("LOADER.REGISTER k: "+o.loader(), "OK")
	return f, o
}

// Run checks the cases in order.
func (f *harness) Run(cases []Case) {
	f.T().Helper()
	for _, c := range cases {
		f.Check(c.Cmd, c.Want)
	}
}

// origin is an HTTP origin on loopback that answers GET /<key> with the
// value set for key, 404 for a key with none, and the status set for a
// key with one; it counts its calls by key.
type origin struct {
	*httptest.Server
	mu     sync.Mutex
	values map[string]string
	status map[string]int
	tags   map[string]string // Surrogate-Key header by key
	calls  map[string]int
	hold   chan struct{} // while not nil, every call waits for it to close
}

func newOrigin(t *testing.T) *origin {
	o := &origin{values: map[string]string{}, status: map[string]int{}, tags: map[string]string{}, calls: map[string]int{}}
	o.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := strings.TrimPrefix(r.URL.Path, "/")
		o.mu.Lock()
		o.calls[key]++
		value, found := o.values[key]
		status, tags, hold := o.status[key], o.tags[key], o.hold
		o.mu.Unlock()
		if hold != nil {
			<-hold
		}
		if tags != "" {
			w.Header().Set(loader.SurrogateKeyHeader, tags)
		}
		switch {
		case status != 0:
			w.WriteHeader(status)
		case !found:
			w.WriteHeader(http.StatusNotFound)
		default:
			io.WriteString(w, value)
		}
	}))
	t.Cleanup(o.Close)
	return o
}

// set makes the origin answer value for key.
func (o *origin) set(key, value string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.values[key] = value
}

// callsOf is how often the origin was asked for key.
func (o *origin) callsOf(key string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.calls[key]
}

// loader is the origin's URL for a loader: the key after the host.
func (o *origin) loader() string { return o.URL + "/{key}" }
