package cluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stampedeless/stampedeless/engine"
	"github.com/stampedeless/stampedeless/internal/lograte"
	"github.com/stampedeless/stampedeless/metrics"
	"github.com/stampedeless/stampedeless/swr"
)

// Defaults for Options fields left zero.
const (
	// DefaultTimeout bounds each Redis operation: a command never waits
	// longer than this on a dead Redis.
	DefaultTimeout = 250 * time.Millisecond
	// DefaultLeaseWait is how long a follower waits for another replica's
	// fill before it takes that replica's lease over.
	DefaultLeaseWait = 5 * time.Second
)

// Timing of the event channel and of followers' polls.
const (
	beatInterval = 500 * time.Millisecond // also how often a down Redis is retried
	peerTimeout  = 4 * beatInterval       // a peer not heard for this long is gone
	pollMin      = 5 * time.Millisecond   // first fallback poll of a follower
	pollMax      = 100 * time.Millisecond // slowest fallback poll
	slotPollMax  = 50 * time.Millisecond  // slowest poll for a fleet fill slot
)

// Errors of Claim and of a Lease's Publish and Fail. Claim returns a
// *swr.FleetFailure too.
var (
	// ErrUnavailable: Redis did not answer in time (or is known to be down);
	// the caller goes on alone, as a single process would.
	ErrUnavailable = errors.New("cluster: the shared Redis is unavailable")
	// ErrLeaseHeld: another replica holds the lease, and the claim was not
	// to follow it (swr.ClaimOptions.NoFollow). It matches swr.ErrFleetHeld.
	ErrLeaseHeld = fmt.Errorf("cluster: another replica holds the lease: %w", swr.ErrFleetHeld)
	// ErrLeaseLost: the lease was gone when its holder came to publish (it
	// expired and was taken over, or a client wrote the key); the result was
	// not published. It matches swr.ErrFleetLeaseLost.
	ErrLeaseLost = fmt.Errorf("cluster: the lease is no longer held: %w", swr.ErrFleetLeaseLost)
	// ErrFleetBusy: every --fleet-max-concurrent-fills slot stayed taken for
	// --lease-wait (for a lease, or to take one over). It matches
	// swr.ErrFleetBusy.
	ErrFleetBusy = fmt.Errorf("cluster: no fleet fill slot became free within --lease-wait: %w", swr.ErrFleetBusy)
)

// Options configures a Client. Redis and Store are required.
type Options struct {
	// Redis is the shared Redis: a single server, Sentinel or Redis Cluster.
	// The Client owns it and closes it.
	Redis redis.UniversalClient
	// Store is the local tier that invalidations from other replicas drop
	// keys from and the shared tier fills.
	Store *engine.Store
	// Prefix namespaces every key and channel (--redis-prefix). If empty,
	// DefaultPrefix.
	Prefix string
	// Timeout bounds each Redis operation (--redis-timeout). If zero,
	// DefaultTimeout.
	Timeout time.Duration
	// LeaseWait is how long a follower waits for another replica's fill
	// before it takes the lease over (--lease-wait). If zero,
	// DefaultLeaseWait.
	LeaseWait time.Duration
	// FleetMaxConcurrentFills bounds origin calls across the fleet
	// (--fleet-max-concurrent-fills); zero means no fleet-wide bound.
	FleetMaxConcurrentFills int
	// Metrics receives the cluster metrics. If nil, a private set.
	Metrics *metrics.Cluster
	// Logger logs Redis going away and coming back. If nil, slog.Default().
	Logger *slog.Logger
	// Now returns the current time: the clock the shared tier's deadlines
	// are compared on, and peers' last-heard times are kept on. If nil,
	// time.Now. Give it the clock of the Store and the Filler, which set
	// those deadlines. Waits (--lease-wait, polls) run on real timers.
	Now func() time.Time
}

// Client is one replica's membership in a fleet that shares a Redis: the
// shared tier, the fill leases, the fleet fill budget and the invalidation
// channel. It is safe for concurrent use.
type Client struct {
	opts  Options
	rdb   redis.UniversalClient
	names names
	id    string // this replica's id on the event channel
	m     *metrics.Cluster
	log   *slog.Logger
	// refusals rate-limits the log lines of Redis's error replies: a
	// full Redis (OOM) refuses every write, and each would be a line.
	refusals lograte.Limiter
	// dials names the cause when Redis is unreachable (markDown's line).
	dials dialErrors

	up     atomic.Bool
	nextID atomic.Uint64 // invalidation ids

	// dbs is each database's part: its keys, store and event channel;
	// byChannel finds it by its channel.
	dbs       []*dbTier
	byChannel map[string]*dbTier

	mu      sync.Mutex
	waiters map[waitKey]map[chan struct{}]struct{} // followers by key
	acks    map[uint64]*ackWait                    // invalidations awaiting acknowledgement
	peers   map[string]time.Time                   // other replicas, last heard

	pubsub    *redis.PubSub
	relaySub  *redis.PubSub                                                // the pub/sub channel
	relay     atomic.Pointer[func(channel, message []byte, sharded bool)]  // set by Relay
	acksOut   chan ackOut                                                  // acknowledgements for the acker to send
	loaders   atomic.Pointer[loaderWatch]                                  // set by WatchLoaders
	purges    atomic.Pointer[func(db int, tags, keys []string, soft bool)] // set by WatchPurges
	resync    chan struct{}                                                // kickResync to syncLoaders
	done      chan struct{}                                                // closed by Close
	wg        sync.WaitGroup
	closeOnce sync.Once
}

// dbTier is one database's part of the fleet: its keys in the shared tier
// (under keys's names), its local store and its event channel. A write,
// fill, flush or purge in database n is announced on database n's channel
// and applied to database n's store by every replica that hears it.
type dbTier struct {
	*Client
	db    int
	keys  names         // this database's Redis keys and event channel
	store *engine.Store // this database's local store
}

// in returns database db's part.
func (c *Client) in(db int) *dbTier { return c.dbs[db] }

// waitKey is a key of one database, which followers wait on.
type waitKey struct {
	db  int
	key string
}

// ackOut is an acknowledgement to send: invalidation id of replica to.
type ackOut struct {
	to string
	id uint64
}

// ackBatch bounds the acknowledgements sent in one round trip.
const ackBatch = 1024

// ackWait is an invalidation waiting for its acknowledgements.
type ackWait struct {
	want map[string]bool // peers that have not acknowledged yet
	done chan struct{}   // closed when want empties
}

// New joins the fleet: it subscribes to the event channel and starts the
// goroutines that listen on it and send heartbeats; Close stops them. A
// Redis that does not answer is not an error: the Client starts as
// unavailable and becomes available when Redis does.
func New(opts Options) (*Client, error) {
	if opts.Redis == nil || opts.Store == nil {
		return nil, errors.New("cluster: Options.Redis and Options.Store are required")
	}
	if opts.Prefix == "" {
		opts.Prefix = DefaultPrefix
	}
	if err := checkPrefix(opts.Prefix); err != nil {
		return nil, err
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.LeaseWait <= 0 {
		opts.LeaseWait = DefaultLeaseWait
	}
	if opts.Metrics == nil {
		opts.Metrics = metrics.New().Cluster
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	c := &Client{
		opts:    opts,
		rdb:     opts.Redis,
		names:   names{prefix: opts.Prefix},
		id:      randomHex(replicaIDLen / 2),
		m:       opts.Metrics,
		log:     opts.Logger,
		waiters: make(map[waitKey]map[chan struct{}]struct{}),
		acks:    make(map[uint64]*ackWait),
		peers:   make(map[string]time.Time),
		acksOut: make(chan ackOut, ackBatch),
		resync:  make(chan struct{}, 1),
		done:    make(chan struct{}),
	}
	c.byChannel = make(map[string]*dbTier)
	channels := []string{c.names.acks(c.id)}
	for n := range opts.Store.Databases() {
		t := &dbTier{Client: c, db: n, keys: c.names.inDB(n), store: opts.Store.DB(n)}
		c.dbs = append(c.dbs, t)
		c.byChannel[t.keys.events()] = t
		channels = append(channels, t.keys.events())
	}
	c.rdb.AddHook(&c.dials)
	ctx, cancel := c.opCtx(context.Background())
	err := c.rdb.Ping(ctx).Err()
	cancel()
	if err != nil {
		c.log.Warn("the shared Redis does not answer; serving alone until it does", "err", c.dials.explain(err))
	} else {
		c.up.Store(true)
		c.m.RedisUp.Set(1)
	}
	c.pubsub = c.rdb.Subscribe(context.Background(), channels...)
	events := c.pubsub.ChannelWithSubscriptions(
		redis.WithChannelSize(4096),
		redis.WithChannelHealthCheckInterval(time.Second),
		redis.WithChannelPingTimeout(opts.Timeout),
	)
	c.relaySub = c.rdb.Subscribe(context.Background(), c.names.pubsub())
	relayed := c.relaySub.Channel(
		redis.WithChannelSize(4096),
		redis.WithChannelHealthCheckInterval(time.Second),
	)
	c.wg.Add(5)
	go c.syncLoaders()
	go c.relayMessages(relayed)
	go c.listen(events)
	go c.heartbeat()
	go c.acker()
	return c, nil
}

// Close leaves the fleet: it tells the other replicas, stops listening and
// closes the Redis client.
func (c *Client) Close() error {
	c.closeOnce.Do(func() {
		c.send(message{kind: msgBye, sender: c.id})
		close(c.done)
		c.pubsub.Close()
		c.relaySub.Close()
		c.wg.Wait()
		c.rdb.Close()
	})
	return nil
}

// ID is this replica's id on the event channel.
func (c *Client) ID() string { return c.id }

// Available reports whether Redis answers; while it does not, callers go on
// alone.
func (c *Client) Available() bool { return c.up.Load() }

// Peers reports how many other replicas this one hears.
func (c *Client) Peers() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.peers)
}

// Prefix is the namespace of the fleet's keys in Redis.
func (c *Client) Prefix() string { return c.opts.Prefix }

func (c *Client) opCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, c.opts.Timeout)
}

// check classifies err from a Redis operation. An error reply from Redis
// (a script error, say) is counted and returned as is; anything else (a
// timeout, a refused connection) marks Redis down until a heartbeat gets
// through, and is returned wrapped in ErrUnavailable.
func (c *Client) check(err error) error {
	if err == nil || errors.Is(err, redis.Nil) {
		return err
	}
	c.m.RedisErrors.Inc()
	var reply redis.Error
	if errors.As(err, &reply) {
		if n, ok := c.refusals.Allow("reply"); ok {
			c.log.Warn("the shared Redis refused an operation", "err", err, "refusals", n)
		}
		return err
	}
	if errors.Is(err, redis.ErrPoolTimeout) {
		// Every pooled connection is busy: Redis is slow or this replica
		// very busy, not gone.
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	c.markDown(err)
	return fmt.Errorf("%w: %w", ErrUnavailable, err)
}

func (c *Client) markDown(err error) {
	if c.up.Swap(false) {
		c.m.RedisUp.Set(0)
		c.log.Warn("the shared Redis is unavailable; falling back to per-process coalescing until it answers", "err", c.dials.explain(err))
	}
}

func (c *Client) markUp() {
	if !c.up.Swap(true) {
		c.m.RedisUp.Set(1)
		c.log.Info("the shared Redis answers again; fleet-wide coalescing resumed")
		c.kickResync()
	}
}

// send publishes m on the event channel of database 0, which the fleet's
// own messages (beats, loaders) travel on.
func (c *Client) send(m message) error {
	ctx, cancel := c.opCtx(context.Background())
	defer cancel()
	return c.rdb.Publish(ctx, c.names.events(), m.encode()).Err()
}

// send publishes m on the database's event channel.
func (t *dbTier) send(m message) error {
	ctx, cancel := t.opCtx(context.Background())
	defer cancel()
	return t.rdb.Publish(ctx, t.keys.events(), m.encode()).Err()
}

// heartbeat tells the fleet this replica is alive, forgets peers that went
// quiet, and is how a down Redis is noticed coming back.
func (c *Client) heartbeat() {
	defer c.wg.Done()
	t := time.NewTicker(beatInterval)
	defer t.Stop()
	for {
		select {
		case <-c.done:
			return
		case <-t.C:
		}
		if err := c.send(message{kind: msgBeat, sender: c.id}); err != nil {
			c.check(err)
		} else {
			c.markUp()
		}
		c.forgetQuietPeers(c.opts.Now())
	}
}

// listen handles the event and ack channels until Close.
func (c *Client) listen(events <-chan any) {
	defer c.wg.Done()
	for {
		select {
		case <-c.done:
			return
		case ev, ok := <-events:
			if !ok {
				return
			}
			switch ev := ev.(type) {
			case *redis.Subscription:
				// Subscribed, or subscribed again after a reconnect: make
				// the fleet (re)learn of this replica now, not at the next
				// beat, and catch up on loader registrations announced
				// while the subscription was down.
				if ev.Kind == "subscribe" && ev.Channel == c.names.events() {
					c.send(message{kind: msgHello, sender: c.id})
					c.kickResync()
				}
			case *redis.Message:
				t := c.byChannel[ev.Channel]
				if t == nil {
					t = c.in(0) // the acknowledgements' channel
				}
				t.handle(ev.Payload)
			}
		}
	}
}

// handle applies one message from another replica, heard on database
// t.db's channel.
func (t *dbTier) handle(payload string) {
	c := t.Client
	m, err := decodeMessage(payload)
	if err != nil || m.sender == c.id {
		return
	}
	if m.kind != msgBye {
		c.sawPeer(m.sender)
	}
	switch m.kind {
	case msgWrite:
		c.m.InvalidationsReceived.Inc()
		// Another replica's write lands between transactions, never inside
		// one, and all its keys at once. Invalidate tells the store's
		// listener even of a key this replica has no copy of: a client
		// tracking it may have cached its absence.
		t.store.Section().Shared(0, func() {
			for _, k := range m.keys {
				t.store.Invalidate([]byte(k))
			}
		})
		for _, k := range m.keys {
			t.wake(k)
		}
		c.ack(m)
	case msgFlush:
		c.m.InvalidationsReceived.Inc()
		t.store.Section().Shared(0, func() { t.store.Flush() })
		c.ack(m)
	case msgFlushAll:
		c.m.InvalidationsReceived.Inc()
		t.store.Section().Shared(0, func() { t.store.FlushAll() })
		c.ack(m)
	case msgFilled:
		for _, k := range m.keys {
			// A follower here takes the new value itself. Without one, a
			// stale local copy is older than the fleet's and is dropped
			// (not as a write), so the next read finds the new one in the
			// shared tier. A fresh copy stays: a lease is granted only
			// while the fleet's copy is missing or stale, so a fresh one is
			// the announced value or one still within its ttl. Deleting
			// (Store.Delete) lost a copy of the announced value:
			//  1. A's settleScript stores v1 and publishes msgFilled;
			//  2. B's flight, its poll first to v1 or not yet following
			//     A's lease (holding its fence), takes v1 and keeps it;
			//  3. B's listener hears msgFilled with no follower: the delete
			//     removes B's v1, or marks the fence so step 2 keeps nothing;
			//  4. v1 goes stale: B's callers find the key missing instead of
			//     being answered stale, and one that looked before B's next
			//     flight stored the fleet's stale v1 joins the refresh that
			//     flight's caller starts, and waits for the origin.
			if !t.wake(k) {
				t.store.DropStale([]byte(k))
			}
		}
	case msgFailed:
		for _, k := range m.keys {
			t.wake(k)
		}
	case msgLoader:
		c.heardLoader(m)
	case msgPurge:
		t.heardPurge(m)
	case msgHello:
		c.send(message{kind: msgBeat, sender: c.id})
	case msgBye:
		c.mu.Lock()
		delete(c.peers, m.sender)
		c.m.Peers.Set(float64(len(c.peers)))
		c.mu.Unlock()
	case msgAck:
		c.mu.Lock()
		for _, k := range m.keys {
			id, err := strconv.ParseUint(k, 10, 64)
			if w := c.acks[id]; err == nil && w != nil && w.want[m.sender] {
				delete(w.want, m.sender)
				if len(w.want) == 0 {
					close(w.done)
				}
			}
		}
		c.mu.Unlock()
	}
}

// ack queues the acknowledgement that invalidation m was applied here. The
// listener does not publish it itself: a round trip per message would make
// every writer in the fleet wait behind this replica's listener.
func (c *Client) ack(m message) {
	select {
	case c.acksOut <- ackOut{to: m.sender, id: m.id}:
	case <-c.done:
	}
}

// acker sends queued acknowledgements, all those waiting in one pipelined
// round trip, one message per replica that asked.
func (c *Client) acker() {
	defer c.wg.Done()
	for {
		var first ackOut
		select {
		case first = <-c.acksOut:
		case <-c.done:
			return
		}
		ids := map[string][]string{first.to: {strconv.FormatUint(first.id, 10)}}
	drain:
		for n := 1; n < ackBatch; n++ {
			select {
			case a := <-c.acksOut:
				ids[a.to] = append(ids[a.to], strconv.FormatUint(a.id, 10))
			default:
				break drain
			}
		}
		ctx, cancel := c.opCtx(context.Background())
		_, err := c.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for to, list := range ids {
				p.Publish(ctx, c.names.acks(to), message{kind: msgAck, sender: c.id, keys: list}.encode())
			}
			return nil
		})
		cancel()
		if err != nil {
			c.check(err)
		}
	}
}

func (c *Client) sawPeer(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.peers[id]; !ok {
		c.log.Debug("replica joined", "replica", id)
	}
	c.peers[id] = c.opts.Now()
	c.m.Peers.Set(float64(len(c.peers)))
}

func (c *Client) forgetQuietPeers(now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for id, seen := range c.peers {
		if now.Sub(seen) > peerTimeout {
			delete(c.peers, id)
			c.log.Debug("replica went quiet", "replica", id)
		}
	}
	c.m.Peers.Set(float64(len(c.peers)))
}

// follow registers a follower of key, woken when a result for the key is
// published.
func (t *dbTier) follow(key string) chan struct{} {
	ch := make(chan struct{}, 1)
	wk := waitKey{t.db, key}
	t.mu.Lock()
	set := t.waiters[wk]
	if set == nil {
		set = make(map[chan struct{}]struct{})
		t.waiters[wk] = set
	}
	set[ch] = struct{}{}
	t.mu.Unlock()
	return ch
}

func (t *dbTier) unfollow(key string, ch chan struct{}) {
	wk := waitKey{t.db, key}
	t.mu.Lock()
	delete(t.waiters[wk], ch)
	if len(t.waiters[wk]) == 0 {
		delete(t.waiters, wk)
	}
	t.mu.Unlock()
}

// wake wakes key's followers and reports whether there were any.
func (t *dbTier) wake(key string) bool {
	wk := waitKey{t.db, key}
	t.mu.Lock()
	defer t.mu.Unlock()
	for ch := range t.waiters[wk] {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
	return len(t.waiters[wk]) > 0
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}
