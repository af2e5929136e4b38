package cluster

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/redis/go-redis/v9"

	"github.com/stampedeless/stampedeless/internal/redistest"
	"github.com/stampedeless/stampedeless/internal/testwait"
	"github.com/stampedeless/stampedeless/loader"
)

// loaderReplica is a replica with its loader registry shared with the
// fleet, as cmd/stampedeless wires them.
type loaderReplica struct {
	*replica
	reg *loader.Registry
}

// testOrigins allows the made-up origins of these tests, which are never
// connected to.
func testOrigins(t *testing.T) *loader.AllowList {
	t.Helper()
	allow, err := loader.ParseAllowList([]string{"f.test,flag.test,gone.test,o.test,one.test,two.test,origin0.test,origin1.test,127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	return allow
}

func newLoaderReplica(t *testing.T, addr string, defaults ...loader.Config) *loaderReplica {
	t.Helper()
	r := newReplica(t, []string{addr}, Options{Timeout: 2 * time.Second})
	reg := loader.NewRegistry(loader.Options{Allow: testOrigins(t)})
	t.Cleanup(reg.CloseIdleConnections)
	for _, d := range defaults {
		if err := reg.RegisterDefault(d); err != nil {
			t.Fatal(err)
		}
	}
	if err := reg.Share(r.Client); err != nil {
		t.Fatalf("Share: %v", err)
	}
	return &loaderReplica{replica: r, reg: reg}
}

// loaderOf describes the loader of prefix: url, source and version, or
// "<none>".
func (r *loaderReplica) loaderOf(prefix string) string {
	l, ok := r.reg.Lookup(prefix)
	if !ok || l.Prefix() != prefix {
		return "<none>"
	}
	in := l.Info()
	return fmt.Sprintf("%s %s v%d", in.URL, in.Source, in.Version)
}

// waitLoader waits until every replica's loader of prefix is want.
func waitLoader(t *testing.T, prefix, want string, rs ...*loaderReplica) {
	t.Helper()
	for i, r := range rs {
		if !testwait.Until(func() bool { return r.loaderOf(prefix) == want }) {
			t.Fatalf("replica %d: loader of %q is %q, want %q", i, prefix, r.loaderOf(prefix), want)
		}
	}
}

// headerOrigin answers every request with the Authorization header it got.
func headerOrigin(t *testing.T) *httptest.Server {
	o := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "auth=%s", r.Header.Get("Authorization"))
	}))
	t.Cleanup(o.Close)
	return o
}

// TestLoadersReachEveryReplica: a registration on A, with its header,
// loads on B; an unregistration on B is forgotten on A, where the default
// applies again; a replica started later, or after a FLUSHALL, has the
// fleet's registrations from the start.
func TestLoadersReachEveryReplica(t *testing.T) {
	addr := redistest.Start(t).Addr()
	o := headerOrigin(t)
	flag := loader.Config{Prefix: "u:", URL: "http://flag.test/{key}"}
	a, b := newLoaderReplica(t, addr, flag), newLoaderReplica(t, addr)
	waitPeers(t, a.replica, b.replica)

	if err := a.reg.Register(loader.Config{Prefix: "u:", URL: o.URL + "/{key}",
		Headers: []loader.Header{{Name: "Authorization", Value: "Bearer t0ken"}}}); err != nil {
		t.Fatal(err)
	}
	want := o.URL + "/{key} register v1"
	waitLoader(t, "u:", want, a, b)
	l, _ := b.reg.Lookup("u:1")
	res, err := l.Fetch(context.Background(), "u:1", loader.Validators{})
	if err != nil || string(res.Value) != "auth=Bearer t0ken" {
		t.Fatalf("B's fetch through A's registration: %q, %v", res.Value, err)
	}
	if n := testutil.ToFloat64(b.m.LoaderRegistrations.WithLabelValues("heard")); n != 1 {
		t.Errorf("B heard %v registrations, want 1", n)
	}

	// A client FLUSHALL empties the cache, not the configuration.
	a.Flushed(context.Background(), 0)
	c := newLoaderReplica(t, addr)
	if got := c.loaderOf("u:"); got != want {
		t.Fatalf("a replica started later: loader %q, want %q", got, want)
	}

	if ok, err := b.reg.Unregister("u:"); !ok || err != nil {
		t.Fatalf("Unregister on B = %v, %v", ok, err)
	}
	waitLoader(t, "u:", "http://flag.test/{key} config v0", a) // A's default again
	waitLoader(t, "u:", "<none>", b, c)
	d := newLoaderReplica(t, addr)
	if got := d.loaderOf("u:"); got != "<none>" {
		t.Fatalf("a replica started after the unregistration has %q", got)
	}
	// A default is this replica's own: it cannot be unregistered, and its
	// error reaches neither Redis nor the others.
	if ok, err := a.reg.Unregister("u:"); ok || err == nil {
		t.Fatalf("Unregister of A's default = %v, %v", ok, err)
	}
}

// TestConcurrentRegistrationsConverge: two replicas registering one prefix
// at once, many times, end with the same registration everywhere: the last
// one Redis ran.
func TestConcurrentRegistrationsConverge(t *testing.T) {
	s := redistest.Start(t)
	a, b := newLoaderReplica(t, s.Addr()), newLoaderReplica(t, s.Addr())
	waitPeers(t, a.replica, b.replica)
	var wg sync.WaitGroup
	for i, r := range []*loaderReplica{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := range 50 {
				url := fmt.Sprintf("http://origin%d.test/%d/{key}", i, n)
				if err := r.reg.Register(loader.Config{Prefix: "race:", URL: url}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	rdb := redis.NewClient(&redis.Options{Addr: s.Addr()})
	defer rdb.Close()
	v, err := rdb.HGet(context.Background(), DefaultPrefix+"loaders", "race:").Result()
	if err != nil {
		t.Fatal(err)
	}
	stored, err := decodeRegistration("race:", v)
	if err != nil {
		t.Fatal(err)
	}
	// The last registration Redis ran wins: one replica's last.
	if !strings.HasSuffix(stored.URL, "/49/{key}") {
		t.Fatalf("stored %+v, want one replica's last registration", stored)
	}
	waitLoader(t, "race:", fmt.Sprintf("%s register v%d", stored.URL, stored.Version), a, b)
}

// TestLoaderRankInRedis: loaderPutScript keeps the registration of
// highest rank, the same whichever arrives first, and force raises the
// version above the stored one.
func TestLoaderRankInRedis(t *testing.T) {
	r := newReplica(t, []string{redistest.Start(t).Addr()}, Options{Timeout: 2 * time.Second})
	ctx := context.Background()
	low := strings.Repeat("1", replicaIDLen)
	high := strings.Repeat("f", replicaIDLen)
	reg := func(prefix string, version uint64, replica string) loader.Registration {
		return loader.Registration{Config: loader.Config{Prefix: prefix, URL: "http://" + replica[:1] + ".test/"},
			Version: version, Replica: replica}
	}
	put := func(g loader.Registration, force bool) loader.Registration {
		t.Helper()
		got, err := r.PutLoader(ctx, g, force)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	for _, order := range [][2]string{{low, high}, {high, low}} {
		p := "tie" + order[0][:1] + ":"
		put(reg(p, 5, order[0]), false)
		if got := put(reg(p, 5, order[1]), false); got.Replica != high || got.URL != "http://f.test/" {
			t.Errorf("equal versions, %s first: stored %+v, want the greater replica's", order[0][:1], got)
		}
	}
	put(reg("ver:", 7, low), false)
	if got := put(reg("ver:", 6, high), false); got.Version != 7 || got.Replica != low {
		t.Errorf("a lower version with a greater replica won: %+v", got)
	}
	if got := put(reg("ver:", 1, high), true); got.Version != 8 || got.Replica != high {
		t.Errorf("force: stored %+v, want version 8 from the forcing replica", got)
	}
	removed := loader.Registration{Config: loader.Config{Prefix: "ver:"}, Removed: true, Version: 9, Replica: low}
	if got := put(removed, false); !got.Removed || got.Version != 9 {
		t.Errorf("a removal: stored %+v", got)
	}
	all, err := r.Loaders(ctx)
	if err != nil || len(all) != 3 {
		t.Fatalf("Loaders() = %+v, %v; want three", all, err)
	}
}

// TestRegistrationEncoding: a registration survives the trip through
// Redis's hash, headers and odd bytes included.
func TestRegistrationEncoding(t *testing.T) {
	for _, reg := range []loader.Registration{
		{Config: loader.Config{Prefix: "\x00}{\r\n", URL: "http://o.test/{key}", Timeout: 1500 * time.Millisecond,
			Concurrency: 4, Headers: []loader.Header{{Name: "A", Value: "1"}, {Name: "A", Value: "2 :,"}}},
			Version: 1<<63 + 5, Replica: "0123456789abcdef"},
		{Config: loader.Config{Prefix: "b:", URL: "http://o.test/batch", Batch: 100, Headers: []loader.Header{{Name: "A", Value: "1"}}},
			Version: 2},
		{Config: loader.Config{Prefix: "p:"}, Removed: true, Version: 3},
	} {
		got, err := decodeRegistration(reg.Prefix, encodeRegistration(reg))
		if err != nil || fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", reg) {
			t.Errorf("round trip: %+v, %v; want %+v", got, err, reg)
		}
	}
	// As a replica without batch loaders wrote it: no batch field.
	old := fmt.Sprintf("%020d%s", 7, noReplica) + string(appendStrings(nil, []string{"+", "http://o.test/{key}", "250", "2", "H", "v"}))
	got, err := decodeRegistration("k:", old)
	if err != nil || got.URL != "http://o.test/{key}" || got.Concurrency != 2 || got.Batch != 0 ||
		len(got.Headers) != 1 || got.Headers[0] != (loader.Header{Name: "H", Value: "v"}) {
		t.Errorf("a registration without a batch field: %+v, %v", got, err)
	}
	for _, bad := range []string{"", "0001", strings.Repeat("0", rankLen), strings.Repeat("0", rankLen) + "\x01+"} {
		if _, err := decodeRegistration("p:", bad); err == nil {
			t.Errorf("decodeRegistration(%q): no error", bad)
		}
	}
}

// TestLoaderRegisteredWhileRedisIsDown: a registration made while Redis is
// down applies on its replica at once, and reaches the fleet when Redis
// comes back, empty: the replicas store their registrations again, and
// the most recent one wins everywhere.
func TestLoaderRegisteredWhileRedisIsDown(t *testing.T) {
	s := redistest.Start(t)
	a, b := newLoaderReplica(t, s.Addr()), newLoaderReplica(t, s.Addr())
	waitPeers(t, a.replica, b.replica)
	if err := a.reg.Register(loader.Config{Prefix: "k:", URL: "http://one.test/{key}"}); err != nil {
		t.Fatal(err)
	}
	if err := a.reg.Register(loader.Config{Prefix: "gone:", URL: "http://gone.test/{key}"}); err != nil {
		t.Fatal(err)
	}
	waitLoader(t, "k:", "http://one.test/{key} register v1", a, b)
	waitLoader(t, "gone:", "http://gone.test/{key} register v1", a, b)

	s.Stop()
	if err := b.reg.Register(loader.Config{Prefix: "k:", URL: "http://two.test/{key}"}); err != nil {
		t.Fatal(err)
	}
	if ok, err := b.reg.Unregister("gone:"); !ok || err != nil {
		t.Fatalf("Unregister with Redis down = %v, %v", ok, err)
	}
	if got := b.loaderOf("k:"); got != "http://two.test/{key} register v2" {
		t.Fatalf("with Redis down, B's own registration: %q", got)
	}
	if got := a.loaderOf("k:"); got != "http://one.test/{key} register v1" {
		t.Fatalf("with Redis down, A changed: %q", got)
	}

	s.Restart() // empty
	waitLoader(t, "k:", "http://two.test/{key} register v2", a, b)
	waitLoader(t, "gone:", "<none>", a, b)
	c := newLoaderReplica(t, s.Addr())
	if got := c.loaderOf("k:"); got != "http://two.test/{key} register v2" {
		t.Fatalf("a replica started after the outage: %q", got)
	}
}
