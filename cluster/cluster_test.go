package cluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/redis/go-redis/v9"

	"github.com/stampedeless/stampedeless/engine"
	"github.com/stampedeless/stampedeless/internal/fakeclock"
	"github.com/stampedeless/stampedeless/internal/redistest"
	"github.com/stampedeless/stampedeless/internal/testwait"
	"github.com/stampedeless/stampedeless/loader"
	"github.com/stampedeless/stampedeless/metrics"
	"github.com/stampedeless/stampedeless/swr"
)

// replica is one Client with its own store, as one stampedeless process has.
type replica struct {
	*Client
	store *engine.Store
	m     *metrics.Cluster
}

func newReplica(t *testing.T, addrs []string, opts Options) *replica {
	t.Helper()
	store, err := engine.New(engine.Options{MaxMemory: 64 << 20, Now: opts.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(store.Close)
	ropts, err := RedisOptions(strings.Join(addrs, ","), "", false, opts.Timeout)
	if err != nil {
		t.Fatal(err)
	}
	opts.Redis = redis.NewUniversalClient(ropts)
	opts.Store = store
	opts.Metrics = metrics.New().Cluster
	opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	c, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &replica{Client: c, store: store, m: opts.Metrics}
}

// set stores key as a client write would.
func set(t *testing.T, store *engine.Store, key, value string) {
	t.Helper()
	if _, err := store.Set([]byte(key), []byte(value), engine.SetOptions{}); err != nil {
		t.Fatal(err)
	}
}

// waitPeers waits until every replica hears all the others.
func waitPeers(t *testing.T, rs ...*replica) {
	t.Helper()
	for _, r := range rs {
		if !testwait.Until(func() bool { return r.Peers() >= len(rs)-1 }) {
			t.Fatalf("replica %s hears %d peers, want %d", r.ID(), r.Peers(), len(rs)-1)
		}
	}
}

func TestMessageRoundTrip(t *testing.T) {
	for _, m := range []message{
		{kind: msgWrite, sender: "0123456789abcdef", id: 7, keys: []string{"a", "", "\x00}{\r\n", strings.Repeat("k", 300)}},
		{kind: msgBeat, sender: "fedcba9876543210"},
	} {
		got, err := decodeMessage(m.encode())
		if err != nil {
			t.Fatal(err)
		}
		if got.kind != m.kind || got.sender != m.sender || got.id != m.id || strings.Join(got.keys, "|") != strings.Join(m.keys, "|") {
			t.Fatalf("round trip: got %+v, want %+v", got, m)
		}
	}
	for _, bad := range []string{"", "w", "w0123456789abcdef", "w0123456789abcdef\x00\x05ab"} {
		if _, err := decodeMessage(bad); err == nil {
			t.Errorf("decodeMessage(%q): no error", bad)
		}
	}
}

func TestNamesShareATagPerKey(t *testing.T) {
	n := names{prefix: DefaultPrefix}
	for _, key := range []string{"user:1", "", "}x", "a}b", "{a}", "x{y}z"} {
		tags := map[string]bool{}
		for _, name := range []string{n.value(key), n.lease(key), n.failure(key)} {
			tags[hashTag(name)] = true
		}
		if len(tags) != 1 || tags[""] {
			t.Errorf("key %q: tags %v, want one non-empty tag", key, tags)
		}
	}
	if n.value("") == n.value("~") || n.value("}") == n.value("=}") {
		t.Error("escaped names collide with plain ones")
	}
	if err := checkPrefix("app{1}:"); err == nil {
		t.Error("a prefix with braces was accepted")
	}
}

// hashTag is Redis Cluster's rule: the part between the first '{' and the
// next '}', if not empty.
func hashTag(name string) string {
	open := strings.IndexByte(name, '{')
	if open < 0 {
		return ""
	}
	end := strings.IndexByte(name[open+1:], '}')
	if end <= 0 {
		return ""
	}
	return name[open+1 : open+1+end]
}

// A leader that stalls past its lease is replaced, and its late publication
// is rejected: the newer value stays.
func TestStalledLeaderIsFencedOut(t *testing.T) {
	addr := redistest.Start(t).Addr()
	opts := Options{Timeout: 50 * time.Millisecond, LeaseWait: 5 * time.Second}
	a, b := newReplica(t, []string{addr}, opts), newReplica(t, []string{addr}, opts)
	ctx := context.Background()

	claimA, err := a.Claim(ctx, 0, "k", swr.ClaimOptions{LoadTimeout: 100 * time.Millisecond})
	if err != nil || claimA.Lease == nil {
		t.Fatalf("A's claim: %+v, %v", claimA, err)
	}
	// B follows A until A's lease expires, then takes it over.
	claimB, err := b.Claim(ctx, 0, "k", swr.ClaimOptions{LoadTimeout: time.Second})
	if err != nil || claimB.Lease == nil {
		t.Fatalf("B's claim: %+v, %v", claimB, err)
	}
	if got := testutil.ToFloat64(b.m.Leases.WithLabelValues("takeover")); got != 1 {
		t.Fatalf("B's takeovers = %v, want 1", got)
	}
	if err := claimB.Lease.Publish(ctx, swr.FleetEntry{Value: []byte("new")}); err != nil {
		t.Fatal(err)
	}
	if err := claimA.Lease.Publish(ctx, swr.FleetEntry{Value: []byte("old")}); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("A's late publication: %v, want ErrLeaseLost", err)
	}
	if got := testutil.ToFloat64(a.m.Publications.WithLabelValues("rejected")); got != 1 {
		t.Fatalf("A's rejected publications = %v, want 1", got)
	}
	claim, err := a.Claim(ctx, 0, "k", swr.ClaimOptions{LoadTimeout: time.Second})
	if err != nil || !claim.Found || string(claim.Entry.Value) != "new" {
		t.Fatalf("after both: %+v, %v; want the newer value", claim, err)
	}
}

// Followers get the holder's value, woken by its publication, and its
// failure, with the fleet cooldown.
func TestFollowersGetTheHoldersResult(t *testing.T) {
	addr := redistest.Start(t).Addr()
	a, b := newReplica(t, []string{addr}, Options{}), newReplica(t, []string{addr}, Options{})
	waitPeers(t, a, b)
	ctx := context.Background()
	for _, tc := range []struct {
		key  string
		fail bool
	}{{"ok", false}, {"broken", true}} {
		lead, err := a.Claim(ctx, 0, tc.key, swr.ClaimOptions{LoadTimeout: time.Second})
		if err != nil || lead.Lease == nil {
			t.Fatalf("%s: leader's claim %+v, %v", tc.key, lead, err)
		}
		type result struct {
			c   swr.FleetClaim
			err error
		}
		got := make(chan result, 1)
		go func() {
			c, err := b.Claim(ctx, 0, tc.key, swr.ClaimOptions{LoadTimeout: time.Second})
			got <- result{c, err}
		}()
		testwait.For(t, "the second claim to find the lease held", func() bool {
			return testutil.ToFloat64(b.m.Leases.WithLabelValues("contended")) > 0
		})
		until := time.Now().Add(time.Minute)
		if tc.fail {
			err = lead.Lease.Fail(ctx, swr.FleetFailure{Loader: "x:", Reason: "origin said 500", Until: until})
		} else {
			err = lead.Lease.Publish(ctx, swr.FleetEntry{Value: []byte("v"), FreshUntil: until.UnixNano(), StaleUntil: until.UnixNano()})
		}
		if err != nil {
			t.Fatal(err)
		}
		r := <-got
		var f *swr.FleetFailure
		switch {
		case tc.fail && (!errors.As(r.err, &f) || f.Reason != "origin said 500" || f.Loader != "x:"):
			t.Fatalf("follower of a failed load got %+v, %v", r.c, r.err)
		case !tc.fail && (r.err != nil || !r.c.Found || string(r.c.Entry.Value) != "v"):
			t.Fatalf("follower got %+v, %v", r.c, r.err)
		}
	}
	// The cooldown holds for every later claim too.
	if _, err := b.Claim(ctx, 0, "broken", swr.ClaimOptions{LoadTimeout: time.Second}); err == nil {
		t.Fatal("a claim during the fleet cooldown got no failure")
	}
}

// A client write clears the key's lease: a fill that started before it
// cannot publish over it, and the other replica drops its copy before the
// write returns.
func TestWriteFencesFillAndInvalidates(t *testing.T) {
	addr := redistest.Start(t).Addr()
	a, b := newReplica(t, []string{addr}, Options{}), newReplica(t, []string{addr}, Options{})
	waitPeers(t, a, b)
	ctx := context.Background()

	set(t, b.store, "k", "old")
	lead, err := a.Claim(ctx, 0, "k", swr.ClaimOptions{LoadTimeout: time.Second})
	if err != nil || lead.Lease == nil {
		t.Fatalf("claim: %+v, %v", lead, err)
	}
	set(t, a.store, "k", "written")
	a.Written(ctx, 0, [][]byte{[]byte("k")})
	if _, found := b.store.Peek([]byte("k")); found {
		t.Fatal("B still has its copy after A's write returned")
	}
	if err := lead.Lease.Publish(ctx, swr.FleetEntry{Value: []byte("filled")}); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("publication after a write: %v, want ErrLeaseLost", err)
	}
	b.Fault(ctx, 0, [][]byte{[]byte("k")})
	if v, _ := b.store.Get([]byte("k")); string(v) != "written" {
		t.Fatalf("B faulted in %q, want the write", v)
	}
}

// --fleet-max-concurrent-fills: the slot after the last waits for a release.
func TestFleetSlots(t *testing.T) {
	addr := redistest.Start(t).Addr()
	opts := Options{FleetMaxConcurrentFills: 2, LeaseWait: 300 * time.Millisecond}
	a, b := newReplica(t, []string{addr}, opts), newReplica(t, []string{addr}, opts)
	ctx := context.Background()
	l1, err1 := a.Claim(ctx, 0, "k1", swr.ClaimOptions{LoadTimeout: time.Second})
	l2, err2 := b.Claim(ctx, 0, "k2", swr.ClaimOptions{LoadTimeout: time.Second})
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	if _, err := a.Claim(ctx, 0, "k3", swr.ClaimOptions{LoadTimeout: time.Second}); !errors.Is(err, ErrFleetBusy) {
		t.Fatalf("third concurrent fill: %v, want ErrFleetBusy", err)
	}
	got := make(chan error, 1)
	go func() {
		c, err := b.Claim(ctx, 0, "k3", swr.ClaimOptions{LoadTimeout: time.Second})
		if err == nil {
			c.Lease.Release()
		}
		got <- err
	}()
	if err := l1.Lease.Publish(ctx, swr.FleetEntry{Value: []byte("1")}); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatalf("fill after a slot was freed: %v", err)
	}
	l2.Lease.Release()
}

// A follower whose --lease-wait runs out takes the lease over only under a
// fill slot of its own: with every slot taken it gets ErrFleetBusy and
// leaves the holder's lease alone; once one frees it takes the lease, and
// the budget counts its load.
func TestLeaseWaitTakeoverTakesASlot(t *testing.T) {
	addr := redistest.Start(t).Addr()
	opts := Options{FleetMaxConcurrentFills: 1, LeaseWait: 200 * time.Millisecond}
	a, b := newReplica(t, []string{addr}, opts), newReplica(t, []string{addr}, opts)
	ctx := context.Background()
	held, err := a.Claim(ctx, 0, "k", swr.ClaimOptions{LoadTimeout: 10 * time.Second})
	if err != nil || held.Lease == nil {
		t.Fatalf("first claim: %+v %v", held, err)
	}
	// B follows A's lease, in vain, then wants the one slot A holds.
	if _, err := b.Claim(ctx, 0, "k", swr.ClaimOptions{LoadTimeout: 10 * time.Second}); !errors.Is(err, ErrFleetBusy) {
		t.Fatalf("follower past --lease-wait with the budget full: %v, want ErrFleetBusy", err)
	}
	// A's slot freed (its lease stays: a Release of the slot alone is
	// what a holder whose load outlives the budget's wait would leave).
	a.freeSlot(held.Lease.(*Lease))
	taken, err := b.Claim(ctx, 0, "k", swr.ClaimOptions{LoadTimeout: 10 * time.Second})
	if err != nil || taken.Lease == nil {
		t.Fatalf("follower past --lease-wait with a slot free: %+v, %v; want the lease", taken, err)
	}
	if got := testutil.ToFloat64(b.m.Leases.WithLabelValues("takeover")); got != 1 {
		t.Fatalf("B's takeovers = %v, want 1", got)
	}
	// The budget counts the taken-over load: nobody else gets a slot.
	if _, err := a.Claim(ctx, 0, "other", swr.ClaimOptions{LoadTimeout: 10 * time.Second}); !errors.Is(err, ErrFleetBusy) {
		t.Fatalf("a claim while the takeover loads: %v, want ErrFleetBusy", err)
	}
	if err := held.Lease.Publish(ctx, swr.FleetEntry{Value: []byte("late")}); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("the old holder's publication after the takeover: %v, want ErrLeaseLost", err)
	}
	if err := taken.Lease.Publish(ctx, swr.FleetEntry{Value: []byte("new")}); err != nil {
		t.Fatal(err)
	}
	other, err := a.Claim(ctx, 0, "other", swr.ClaimOptions{LoadTimeout: 10 * time.Second})
	if err != nil || other.Lease == nil {
		t.Fatalf("a claim after the takeover's load ended: %+v, %v", other, err)
	}
	other.Lease.Release()
}

// TestOneFollowerTakesOver: the holder of a lease stops (it never
// publishes, and its lease has long to live); of the followers on two
// other replicas whose --lease-wait runs out, exactly one takes the lease
// over, and the other gets its result.
func TestOneFollowerTakesOver(t *testing.T) {
	addr := redistest.Start(t).Addr()
	opts := Options{LeaseWait: time.Second, Timeout: 5 * time.Second}
	a := newReplica(t, []string{addr}, opts)
	followers := []*replica{newReplica(t, []string{addr}, opts), newReplica(t, []string{addr}, opts)}
	waitPeers(t, append([]*replica{a}, followers...)...)
	ctx := context.Background()
	dead, err := a.Claim(ctx, 0, "k", swr.ClaimOptions{LoadTimeout: time.Minute})
	if err != nil || dead.Lease == nil {
		t.Fatalf("the holder's claim: %+v, %v", dead, err)
	}
	type result struct {
		c   swr.FleetClaim
		err error
	}
	got := make(chan result, len(followers))
	for _, r := range followers {
		go func() {
			c, err := r.Claim(ctx, 0, "k", swr.ClaimOptions{LoadTimeout: time.Minute})
			got <- result{c, err}
		}()
	}
	first := <-got
	if first.err != nil || first.c.Lease == nil {
		t.Fatalf("the first follower to return: %+v, %v; want the lease taken over", first.c, first.err)
	}
	// The other follower lost the race for the lease, or saw the winner's
	// lease first: either way it follows the winner, for a whole
	// --lease-wait, and gets its result.
	if err := first.c.Lease.Publish(ctx, swr.FleetEntry{Value: []byte("v")}); err != nil {
		t.Fatal(err)
	}
	second := <-got
	if second.err != nil || !second.c.Found || string(second.c.Entry.Value) != "v" {
		t.Fatalf("the other follower: %+v, %v; want the winner's value", second.c, second.err)
	}
	taken := 0.0
	for _, r := range followers {
		taken += testutil.ToFloat64(r.m.Leases.WithLabelValues("takeover"))
	}
	if taken != 1 {
		t.Fatalf("takeovers = %v, want 1", taken)
	}
	if err := dead.Lease.Publish(ctx, swr.FleetEntry{Value: []byte("late")}); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("the old holder's publication: %v, want ErrLeaseLost", err)
	}

	// Two takeovers of one lease: the first wins, the second finds the
	// winner holding it.
	dead, err = a.Claim(ctx, 0, "k2", swr.ClaimOptions{LoadTimeout: time.Minute})
	if err != nil || dead.Lease == nil {
		t.Fatalf("the holder's claim of k2: %+v, %v", dead, err)
	}
	old := dead.Lease.(*Lease).token
	b, c := followers[0], followers[1]
	won := &Lease{c: b.Client.in(0), key: "k2", token: "b-token", ttl: time.Minute}
	lost := &Lease{c: c.Client.in(0), key: "k2", token: "c-token", ttl: time.Minute}
	if res, err := b.Client.in(0).takeOver(ctx, won, 0, old); err != nil || res.Lease == nil {
		t.Fatalf("the first takeover: %+v, %v; want the lease", res, err)
	}
	if res, err := c.Client.in(0).takeOver(ctx, lost, 0, old); err != nil || res.Lease != nil || res.holder != "b-token" {
		t.Fatalf("the second takeover: %+v, %v; want the first's lease held", res, err)
	}
	won.Release()
}

// Keys whose braces would break the hash tag still keep all their Redis
// keys in one slot of a real Redis Cluster: every script runs (no
// CROSSSLOT), and values go round trip.
func TestAwkwardKeysOnRedisCluster(t *testing.T) {
	c := redistest.StartCluster(t, 3)
	r := newReplica(t, strings.Split(c.Addrs(), ","), Options{})
	ctx := context.Background()
	for _, key := range []string{"", "}x", "a}b", "{x}", "{}", "plain"} {
		claim, err := r.Claim(ctx, 0, key, swr.ClaimOptions{LoadTimeout: time.Second})
		if err != nil || claim.Lease == nil {
			t.Fatalf("key %q: claim %+v, %v", key, claim, err)
		}
		if err := claim.Lease.Publish(ctx, swr.FleetEntry{Value: []byte("v" + key)}); err != nil {
			t.Fatalf("key %q: publish: %v", key, err)
		}
		claim, err = r.Claim(ctx, 0, key, swr.ClaimOptions{LoadTimeout: time.Second})
		if err != nil || !claim.Found || string(claim.Entry.Value) != "v"+key {
			t.Fatalf("key %q: after publishing, claim %+v, %v", key, claim, err)
		}
		set(t, r.store, key, "w"+key)
		r.Written(ctx, 0, [][]byte{[]byte(key)})
		r.store.Delete([]byte(key))
		r.Fault(ctx, 0, [][]byte{[]byte(key)})
		if v, _ := r.store.Get([]byte(key)); string(v) != "w"+key {
			t.Fatalf("key %q: faulted in %q after a write", key, v)
		}
	}
	if got := testutil.ToFloat64(r.m.RedisErrors); got != 0 {
		t.Fatalf("%v Redis errors", got)
	}
}

// Redis going away is noticed at the first operation that fails, and
// shown (Available, cluster_redis_up); operations then fail at once with
// ErrUnavailable, and the heartbeat notices Redis coming back.
func TestHealthTracking(t *testing.T) {
	s := redistest.Start(t)
	r := newReplica(t, []string{s.Addr()}, Options{Timeout: 200 * time.Millisecond})
	ctx := context.Background()
	up := func() float64 { return testutil.ToFloat64(r.m.RedisUp) }
	if !r.Available() || up() != 1 {
		t.Fatalf("at the start: Available %v, cluster_redis_up %v; want true, 1", r.Available(), up())
	}
	s.Stop()
	for range 2 { // the operation that finds Redis gone, then one while it is known down
		if _, err := r.Claim(ctx, 0, "k", swr.ClaimOptions{LoadTimeout: time.Second}); !errors.Is(err, ErrUnavailable) {
			t.Fatalf("claim with Redis stopped: %v, want ErrUnavailable", err)
		}
		if r.Available() || up() != 0 {
			t.Fatalf("with Redis stopped: Available %v, cluster_redis_up %v; want false, 0", r.Available(), up())
		}
	}
	if n := testutil.ToFloat64(r.m.RedisErrors); n < 1 {
		t.Fatalf("cluster_redis_errors_total = %v with Redis stopped, want at least 1", n)
	}
	s.Restart()
	testwait.For(t, "the heartbeat to find Redis back", r.Available)
	if up() != 1 {
		t.Fatalf("cluster_redis_up = %v with Redis back, want 1", up())
	}
	claim, err := r.Claim(ctx, 0, "k", swr.ClaimOptions{LoadTimeout: time.Second})
	if err != nil || claim.Lease == nil {
		t.Fatalf("claim with Redis back: %+v, %v; want a lease", claim, err)
	}
	claim.Lease.Release()
}

// A replica not heard for peerTimeout on the Client's clock is forgotten
// by the heartbeat, and counted again once heard again.
func TestQuietPeersAreForgotten(t *testing.T) {
	s := redistest.Start(t)
	clock := fakeclock.New()
	r := newReplica(t, []string{s.Addr()}, Options{Now: clock.Now})
	// Another replica, as far as r can tell: its beats, sent by hand.
	rdb := redis.NewClient(&redis.Options{Addr: s.Addr()})
	t.Cleanup(func() { rdb.Close() })
	beat := func() {
		t.Helper()
		m := message{kind: msgBeat, sender: "0123456789abcdef"}
		if err := rdb.Publish(context.Background(), r.names.events(), m.encode()).Err(); err != nil {
			t.Fatal(err)
		}
	}
	gauge := func() float64 { return testutil.ToFloat64(r.m.Peers) }
	beat()
	testwait.For(t, "the beat to be heard", func() bool { return r.Peers() == 1 })
	if gauge() != 1 {
		t.Fatalf("cluster_peers = %v, want 1", gauge())
	}
	r.forgetQuietPeers(clock.Now().Add(peerTimeout))
	if r.Peers() != 1 {
		t.Fatal("a replica quiet for exactly peerTimeout was forgotten")
	}
	clock.Advance(peerTimeout + time.Nanosecond)
	testwait.For(t, "the heartbeat to forget the quiet replica", func() bool { return r.Peers() == 0 })
	if gauge() != 0 {
		t.Fatalf("cluster_peers = %v after the replica was forgotten, want 0", gauge())
	}
	beat()
	testwait.For(t, "the replica heard again to be counted", func() bool { return r.Peers() == 1 })
	if gauge() != 1 {
		t.Fatalf("cluster_peers = %v, want 1", gauge())
	}
}

// newFiller is a Filler on r's store and clock, with the loader "k:" on
// originURL, filling through fleet (r itself, or r behind a gate).
func newFiller(t *testing.T, r *replica, fleet swr.Fleet, originURL string, clock *fakeclock.Clock) *swr.Filler {
	t.Helper()
	return newFillerWith(t, r, fleet, originURL, clock, nil)
}

// newFillerWith is newFiller with the Filler's metrics (nil: a private set).
func newFillerWith(t *testing.T, r *replica, fleet swr.Fleet, originURL string, clock *fakeclock.Clock, m *metrics.Fill) *swr.Filler {
	t.Helper()
	loaders := loader.NewRegistry(loader.Options{})
	if err := loaders.Register(loader.Config{Prefix: "k:", URL: originURL + "/{key}"}); err != nil {
		t.Fatal(err)
	}
	return swr.New(swr.Options{Store: r.store, Loaders: loaders, Fleet: fleet, Now: clock.Now, TTLJitter: -1, Metrics: m})
}

// gatedFleet holds a Claim, while holding, until the test lets it go: the
// flight that asks holds its store fence and does not follow the lease yet.
type gatedFleet struct {
	swr.Fleet
	holding         atomic.Bool
	parked, release chan struct{}
}

func (g *gatedFleet) Claim(ctx context.Context, db int, key string, opts swr.ClaimOptions) (swr.FleetClaim, error) {
	if g.holding.Load() {
		g.parked <- struct{}{}
		<-g.release
	}
	return g.Fleet.Claim(ctx, db, key, opts)
}

// TestFillAnnouncementKeepsTheNewValue: the announcement of a fill (msgFilled)
// makes a replica drop an older copy of the key, never the copy of the value
// it announces, and never the fill on this replica that is taking that value.
// Otherwise the replica is left without the key, and once the key is stale
// its callers find it missing instead of being answered stale at once: one
// that looked before the fleet's stale copy was stored here joins the
// refresh started right after, and waits for the origin.
func TestFillAnnouncementKeepsTheNewValue(t *testing.T) {
	addr := redistest.Start(t).Addr()
	clock := fakeclock.New()
	opts := Options{Now: clock.Now, Timeout: 10 * time.Second}
	a, b := newReplica(t, []string{addr}, opts), newReplica(t, []string{addr}, opts)
	waitPeers(t, a, b)
	var calls atomic.Int64
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "v%d", calls.Add(1))
	}))
	t.Cleanup(origin.Close)
	gate := &gatedFleet{Fleet: b.Client, parked: make(chan struct{}), release: make(chan struct{})}
	fa, fb := newFiller(t, a, a.Client, origin.URL, clock), newFiller(t, b, gate, origin.URL, clock)
	ctx := context.Background()
	request := func(key string) swr.Request {
		return swr.Request{Key: key, TTL: time.Minute, Grace: time.Hour, Timeout: -1}
	}
	get := func(f *swr.Filler, key, want string) {
		t.Helper()
		if ans, err := f.Get(ctx, request(key)); err != nil || string(ans.Value) != want {
			t.Fatalf("GETFILL %s: %q, %v; want %q", key, ans.Value, err, want)
		}
	}
	// announced makes sure B's listener has handled everything A sent so
	// far: an invalidation A sends next reaches B after it.
	announced := func() {
		t.Helper()
		seen := testutil.ToFloat64(b.m.InvalidationsReceived)
		a.Written(ctx, 0, [][]byte{[]byte("k:barrier")})
		testwait.For(t, "B to hear A's invalidation", func() bool {
			return testutil.ToFloat64(b.m.InvalidationsReceived) > seen
		})
	}
	// announce hands B's listener A's announcement of key, as it arrives
	// when B's flight no longer follows (or does not yet follow) A's lease.
	announce := func(key string) {
		b.in(0).handle(message{kind: msgFilled, sender: a.ID(), keys: []string{key}}.encode())
	}
	answersAtOnce := func(key, want, why string) {
		t.Helper()
		ans, pending, err := fb.Start(request(key))
		if pending != nil || err != nil || string(ans.Value) != want {
			t.Fatalf("%s: B answers GETFILL %s with %q, %v, waiting for a load %v; want %q at once",
				why, key, ans.Value, err, pending != nil, want)
		}
	}

	// 1. A loads v1 and publishes it; B's flight takes v1 from the shared
	// tier and keeps it (as a follower does whose poll got there first);
	// then A's announcement reaches B's listener. The key goes stale: B
	// answers v1 at once, and its refresh publishes v2, at which A drops
	// its stale v1.
	get(fa, "k:late", "v1")
	announced()
	get(fb, "k:late", "v1")
	announce("k:late")
	clock.Advance(2 * time.Minute)
	answersAtOnce("k:late", "v1", "stale, after the announcement of the copy B holds")
	testwait.For(t, "B's refresh to keep v2 and A to drop v1", func() bool {
		env, _ := b.store.Peek([]byte("k:late"))
		_, found := a.store.Peek([]byte("k:late"))
		return string(env.Value) == "v2" && !fb.Info("k:late").InFlight && !found
	})

	// 2. A loads v3 and publishes it; B's flight takes its fence, and A's
	// announcement reaches B's listener before the flight asks the fleet;
	// then the flight takes v3 from the shared tier and keeps it.
	get(fa, "k:early", "v3")
	announced()
	gate.holding.Store(true)
	filled := make(chan error, 1)
	go func() {
		ans, err := fb.Get(ctx, request("k:early"))
		if err == nil && string(ans.Value) != "v3" {
			err = fmt.Errorf("answered %q, want v3", ans.Value)
		}
		filled <- err
	}()
	<-gate.parked
	gate.holding.Store(false)
	announce("k:early")
	close(gate.release)
	if err := <-filled; err != nil {
		t.Fatalf("B's GETFILL k:early: %v", err)
	}
	answersAtOnce("k:early", "v3", "after the announcement during B's fill")

	// 3. A's read of k:late finds the fleet's stale v2 and refreshes it:
	// once A publishes v4, B no longer has its stale v2, and its next read
	// finds v4 in the fleet.
	clock.Advance(2 * time.Minute)
	get(fa, "k:late", "v2")
	testwait.For(t, "A's refresh to publish v4 and B to drop v2", func() bool {
		_, found := b.store.Peek([]byte("k:late"))
		env, _ := a.store.Peek([]byte("k:late"))
		return !found && string(env.Value) == "v4" && !fa.Info("k:late").InFlight
	})
	get(fb, "k:late", "v4")
}

// TestStaleReadersNeverWaitForTheFleetsRefresh: a caller on a replica
// without a copy of a stale key is answered with the stale value, never
// made to wait for the refresh another replica runs, even when it joins
// its own replica's refresh: it found no copy (Start) before another
// caller's flight took the fleet's stale entry and started that refresh,
// which follows the refreshing replica's lease (GETFILL and MGETFILL), or
// the copy that refresh began with is gone when it joins.
func TestStaleReadersNeverWaitForTheFleetsRefresh(t *testing.T) {
	addr := redistest.Start(t).Addr()
	clock := fakeclock.New()
	opts := Options{Now: clock.Now, Timeout: 10 * time.Second, LeaseWait: time.Minute}
	a, b := newReplica(t, []string{addr}, opts), newReplica(t, []string{addr}, opts)
	waitPeers(t, a, b)
	var calls, inFlight atomic.Int64
	gate := make(chan struct{})
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := calls.Add(1)
		if n > 1 {
			inFlight.Add(1)
			<-gate // the refresh, held until every caller on B was answered
		}
		fmt.Fprintf(w, "v%d", n)
	}))
	t.Cleanup(origin.Close)
	var once sync.Once
	release := func() { once.Do(func() { close(gate) }) }
	t.Cleanup(release)
	mb := metrics.New().Fill
	fa := newFiller(t, a, a.Client, origin.URL, clock)
	fb := newFillerWith(t, b, b.Client, origin.URL, clock, mb)
	ctx := context.Background()
	// A caller made to wait for the refresh gives up after its TIMEOUT,
	// and is counted as such.
	req := swr.Request{Key: "k:stale", TTL: time.Minute, Grace: time.Hour, Timeout: 2 * time.Second}
	waited := func() float64 {
		return testutil.ToFloat64(mb.Answers.WithLabelValues("k:", string(swr.AnswerTimeoutStale))) +
			testutil.ToFloat64(mb.Answers.WithLabelValues("k:", string(swr.AnswerTimeout)))
	}
	expect := func(what string, value []byte, err error) {
		t.Helper()
		if err != nil || string(value) != "v1" || waited() != 0 {
			t.Fatalf("%s: %q, %v after %v callers on B waited for the refresh; want the stale v1 at once", what, value, err, waited())
		}
	}

	// A fills the key; B has no copy. Then the key goes stale.
	if ans, err := fa.Get(ctx, req); err != nil || string(ans.Value) != "v1" {
		t.Fatalf("A's fill: %q, %v", ans.Value, err)
	}
	clock.Advance(2 * time.Minute)

	// 1. Callers on B find no copy there.
	_, single, err := fb.Start(req)
	if single == nil || err != nil {
		t.Fatalf("B's first look: pending %v, %v; want a load", single != nil, err)
	}
	_, many := fb.StartMany([]swr.Request{req})
	if many == nil {
		t.Fatal("B's first MGETFILL look needs no load")
	}
	// A's stale read starts the refresh, which holds the fleet's lease
	// and waits at the origin.
	if ans, err := fa.Get(ctx, req); err != nil || string(ans.Value) != "v1" {
		t.Fatalf("A's stale read: %q, %v", ans.Value, err)
	}
	testwait.For(t, "A's refresh to reach the origin", func() bool { return inFlight.Load() == 1 })
	// 2. Another caller on B takes the fleet's stale entry, which B keeps,
	// and starts B's refresh, which follows A's lease.
	ans, err := fb.Get(ctx, req)
	expect("B's load of the fleet's stale entry", ans.Value, err)
	testwait.For(t, "B's refresh to follow A's lease", func() bool {
		return testutil.ToFloat64(b.m.Leases.WithLabelValues("contended")) == 1
	})

	// 3. The callers of step 1 go on: they join B's refresh.
	ans, err = single.Wait(ctx)
	expect("GETFILL on B", ans.Value, err)
	ka := many.Wait(ctx)[0]
	expect("MGETFILL on B", ka.Value, ka.Err)

	// 4. B's copy goes without a write (as an eviction, or the
	// announcement of a newer value, takes it): a caller that finds no
	// copy joins B's refresh too, and is answered with the fleet's entry.
	b.store.DropStale([]byte(req.Key))
	_, gone, err := fb.Start(req)
	if gone == nil || err != nil {
		t.Fatalf("B's look after its copy went: pending %v, %v; want a load", gone != nil, err)
	}
	ans, err = gone.Wait(ctx)
	expect("GETFILL on B without its copy", ans.Value, err)

	// The refresh ends: B keeps its value, and the origin saw one call
	// for it.
	release()
	testwait.For(t, "the refresh to reach B", func() bool {
		env, _ := b.store.Peek([]byte(req.Key))
		return string(env.Value) == "v2"
	})
	if n := calls.Load(); n != 2 {
		t.Fatalf("%d origin calls, want 2 (the fill and one refresh)", n)
	}
}

// TestEveryTypeTravels: a key of each type written on one replica is
// faulted in on another as the same value (its portable form, its type),
// and Reconcile finds the copies the shared tier's, streams among them,
// small (checked by value) and big (by SHA-1); a copy changed behind the
// tier's back is dropped.
func TestEveryTypeTravels(t *testing.T) {
	addr := redistest.Start(t).Addr()
	a, b := newReplica(t, []string{addr}, Options{}), newReplica(t, []string{addr}, Options{})
	waitPeers(t, a, b)
	ctx := context.Background()
	bs := func(s ...string) [][]byte {
		out := make([][]byte, len(s))
		for i, v := range s {
			out[i] = []byte(v)
		}
		return out
	}
	xadd := func(store *engine.Store, key string, n int) {
		t.Helper()
		err := store.StreamOp(bs(key), true, func(tx *engine.StreamTx) error {
			st, err := tx.Stream([]byte(key), false)
			if st == nil && err == nil {
				st = tx.Create([]byte(key))
			}
			if err != nil {
				return err
			}
			for i := range n {
				if _, err := st.Add(bs("field", fmt.Sprint(i)), nil, false, uint64(tx.NowMs())); err != nil {
					return err
				}
			}
			tx.Changed([]byte(key))
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	set(t, a.store, "string", "v")
	if _, err := a.store.HSet([]byte("hash"), bs("f", "v")); err != nil {
		t.Fatal(err)
	}
	if _, err := a.store.SAdd([]byte("set"), bs("m")); err != nil {
		t.Fatal(err)
	}
	if _, err := a.store.ZAdd([]byte("zset"), engine.ZAddOptions{}, []engine.ScoreMember{{Member: []byte("m"), Score: 1}}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.store.LPush([]byte("list"), bs("e"), false, false); err != nil {
		t.Fatal(err)
	}
	xadd(a.store, "stream", 3)
	xadd(a.store, "bigstream", 200)
	xadd(a.store.DB(3), "stream", 2) // another database's
	keys := bs("string", "hash", "set", "zset", "list", "stream", "bigstream")
	a.Written(ctx, 0, keys)
	a.Written(ctx, 3, bs("stream"))
	b.Fault(ctx, 0, keys)
	b.Fault(ctx, 3, bs("stream"))
	same := func(from, to *engine.Store, k []byte) {
		t.Helper()
		want, _ := from.Export(k)
		got, found := to.Export(k)
		if !found || got.Type != want.Type || !bytes.Equal(got.Value, want.Value) {
			t.Fatalf("%s on B: found %v, type %v (want %v), same value %v", k, found, got.Type, want.Type, bytes.Equal(got.Value, want.Value))
		}
	}
	for _, k := range keys {
		same(a.store, b.store, k)
	}
	same(a.store.DB(3), b.store.DB(3), []byte("stream"))
	if want, _ := a.store.Export([]byte("bigstream")); len(want.Value) <= reconcileInline {
		t.Fatalf("bigstream's form is %d bytes: Reconcile checks it by value", len(want.Value))
	}
	all := len(keys) + 1
	if checked, dropped, err := b.Reconcile(ctx); err != nil || checked != all || dropped != 0 {
		t.Fatalf("Reconcile: checked %d, dropped %d, %v; want %d, 0", checked, dropped, err, all)
	}
	xadd(b.store, "stream", 1)
	xadd(b.store, "bigstream", 1)
	xadd(b.store.DB(3), "stream", 1)
	if checked, dropped, err := b.Reconcile(ctx); err != nil || checked != all || dropped != 3 {
		t.Fatalf("Reconcile after changing the streams: checked %d, dropped %d, %v; want %d, 3", checked, dropped, err, all)
	}
}
