// Package server serves Redis clients: it accepts connections, reads their
// commands with package resp, dispatches them through the command table and
// answers in the protocol each connection chose with HELLO. It owns what
// shares a connection's state: MULTI/WATCH, client-side caching, pub/sub,
// the ACL's checks, scripts' calls, CONFIG and INFO.
//
// Connections are served by package netloop's event loops
// (DefaultEventLoops unless Options.EventLoops says otherwise), each an
// epoll thread as redis-server's; the server is their netloop.Client, one
// per connection (serve.go). A command that must wait leaves the rest of
// its work to a goroutine while its connection is parked (Conn.Await).
//
// A command that reads or writes keys runs inside the store's atomic
// section, shared (dispatch.go); EXEC runs its queue holding it exclusively
// (multi.go), and so does a script (scripting.go), so no other command
// interleaves with a transaction or a script; they take turns at the
// section's gate (gate.go). The store's changes reach WATCH
// (internal/watch) and client-side caching (internal/tracking) through
// one listener (watched.go).
package server

import (
	"context"
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stampedeless/stampedeless/commands"
	"github.com/stampedeless/stampedeless/netloop"
	"github.com/stampedeless/stampedeless/persist"
	"github.com/stampedeless/stampedeless/resp"
	"github.com/stampedeless/stampedeless/server/internal/blocked"
	"github.com/stampedeless/stampedeless/server/internal/migrate"
	"github.com/stampedeless/stampedeless/server/internal/pause"
	"github.com/stampedeless/stampedeless/server/internal/pubsub"
	"github.com/stampedeless/stampedeless/server/internal/tracking"
	"github.com/stampedeless/stampedeless/server/internal/watch"

	"github.com/stampedeless/stampedeless/engine"
	"github.com/stampedeless/stampedeless/internal/clock"
	"github.com/stampedeless/stampedeless/internal/latency"
	"github.com/stampedeless/stampedeless/internal/lograte"
	"github.com/stampedeless/stampedeless/internal/redisconfig"
	"github.com/stampedeless/stampedeless/internal/slowlog"
	"github.com/stampedeless/stampedeless/metrics"
)

// Defaults for Options fields left zero.
const (
	DefaultMaxClients   = 10000
	DefaultWriteTimeout = 30 * time.Second
)

// RedisVersion is the Redis version reported to clients, which some gate
// features on; stampedeless implements the Redis 7 semantics of its commands.
const RedisVersion = "7.2.0"

// ErrServerClosed is returned by Serve after Shutdown.
var ErrServerClosed = errors.New("server: closed")

// Options configures a Server. Zero values mean the documented defaults.
type Options struct {
	// Store holds the keys; required.
	Store *engine.Store
	// Commands are the families' commands (commands/keyspace,
	// commands/readthrough), served beside the server's own: connection,
	// transactions, scripting, pub/sub, ACL, CONFIG, INFO and the like.
	Commands []*commands.Spec
	// InfoSections are the families' sections of INFO, after its own.
	InfoSections []commands.InfoSection
	// RequirePass, if set, is the default user's password: clients AUTH
	// before other commands.
	RequirePass string
	// Users defines users at start, one "name rules..." each in Redis's
	// ACL syntax ("alice on >secret ~cache:* +@read"); ACLFile, an ACL file
	// of "user name rules..." lines, which ACL LOAD reads again and ACL SAVE
	// writes. One or the other (ErrUsersAndACLFile).
	Users   []string
	ACLFile string
	// MaxClients bounds open connections. If zero, DefaultMaxClients.
	MaxClients int
	// MaxValueSize bounds a bulk string and a stored value. If zero,
	// resp.DefaultMaxBulk (512 MiB), as Redis's proto-max-bulk-len.
	MaxValueSize int64
	// WriteTimeout disconnects a client that does not read its replies.
	// If zero, DefaultWriteTimeout.
	WriteTimeout time.Duration
	// Logger receives operational logs. If nil, slog.Default().
	Logger *slog.Logger
	// LogLevel, if set, is exposed as CONFIG GET/SET loglevel.
	LogLevel *slog.LevelVar
	// Metrics receives the server's metrics. If nil, a private registry.
	Metrics *metrics.Registry
	// Clock is the server's clock, which its event loops read once per
	// batch of commands; give the store, the Filler and the fleet its Now,
	// so that they cost no read of the system clock. If nil, the server
	// makes one of its own, stopped at Shutdown.
	Clock *clock.Clock
	// Version is stampedeless's own version, reported by INFO.
	Version string
	// Shared, if not nil, is the tier shared with other replicas (--redis).
	Shared Shared
	// PubSubOutputLimit bounds the output a subscriber may have queued and
	// not yet read, as Redis's client-output-buffer-limit pubsub class. If
	// nil, DefaultPubSubOutputLimit.
	PubSubOutputLimit *OutputLimit
	// ProtectedMode refuses clients that are not local (127.0.0.0/8, ::1,
	// a unix socket) with Redis's -DENIED reply while no password is set,
	// as Redis's protected-mode; CONFIG SET protected-mode changes it.
	ProtectedMode bool
	// LuaTimeLimit is busy-reply-threshold (lua-time-limit): how long a
	// script runs before other clients are answered BUSY and SCRIPT KILL
	// may stop it. If zero, DefaultLuaTimeLimit; negative: never.
	LuaTimeLimit time.Duration
	// MaxScripts and MaxScriptBytes bound the script cache, by count and
	// by estimated size; past either the least recently used script is
	// evicted. MaxScriptBytes also bounds, separately, what the function
	// libraries hold, as measured (scripting.Options.MaxBytes). If zero,
	// the scripting package's defaults.
	MaxScripts     int
	MaxScriptBytes int64
	// Shutdown, if set, asks the process to stop as SIGTERM does, for the
	// SHUTDOWN command: it must return at once, and the process then shuts
	// the server down (Server.Shutdown). Without it SHUTDOWN answers
	// Redis's "Errors trying to SHUTDOWN" error.
	Shutdown func()
	// Saver runs SAVE, BGSAVE, LASTSAVE and SHUTDOWN's save, and reports
	// INFO persistence. Nil is a Saver that never writes (no --dir).
	Saver *persist.Saver
	// NotifyKeyspaceEvents are the classes of keyspace notifications
	// sent, as Redis's notify-keyspace-events (commands.ParseEventClasses);
	// zero: none. CONFIG SET notify-keyspace-events changes them.
	NotifyKeyspaceEvents commands.EventClass
	// EventLoops is how many event loops serve the connections, each an
	// OS thread (Linux only); zero or less: DefaultEventLoops.
	EventLoops int
	// NoURing turns io_uring off: each event loop then makes each
	// socket read and write as a system call of its own, where with it
	// a loop makes all of a turn's reads in one, and all its writes in
	// another (Linux only; without io_uring, as if set).
	NoURing bool
	// EnableDebugCommand says who may run DEBUG, as Redis's
	// enable-debug-command: ProtectedNo (also if empty), ProtectedYes, or
	// ProtectedLocal (clients on loopback or the unix socket).
	EnableDebugCommand string
	// IdleTimeout closes a client idle this long, as Redis's timeout (in
	// whole seconds); CONFIG SET timeout changes it. Zero: never.
	IdleTimeout time.Duration
}

// Server serves RESP clients. Its methods are safe for concurrent use.
type Server struct {
	store   *engine.Store
	log     *slog.Logger
	metrics *metrics.Registry
	opts    Options
	table   map[string]*command
	// info are INFO's sections: its own (infoSections), then the families'.
	info    []infoSection
	unknown counters
	started time.Time

	// acl holds the users and the log of denials (acl.go).
	acl aclState
	// blocked are the clients blocked on keys (internal/blocked; their
	// waits in blocking.go).
	blocked blocked.Registry
	// listCompressDepth is list-compress-depth, shown but not applied.
	listCompressDepth atomic.Int64
	// inertConfig holds the values CONFIG SET gave the Redis parameters
	// that govern nothing here (internal/redisconfig).
	inertConfig redisconfig.Values
	// replicaMinimum is min-replicas-to-write and min-replicas-max-lag.
	replicaMinimum replicaMinimum
	// refusals rate-limits the log lines of refused clients, by kind
	// (refusals.go).
	refusals lograte.Limiter

	// Settable at run time with CONFIG SET.
	requirePass atomic.Pointer[string]
	maxClients  atomic.Int64
	// idleTimeout is CONFIG SET timeout: seconds after which an idle
	// client is closed (netloop.Host.IdleTimeout); 0: never.
	idleTimeout   atomic.Int64
	maxBulk       atomic.Int64
	protectedMode atomic.Bool
	// denyScriptsOff is DEBUG SET-DISABLE-DENY-SCRIPTS: scripts may call
	// the commands flagged noscript, for tests of what those reply.
	denyScriptsOff atomic.Bool

	nextConnID      atomic.Int64
	commandsTotal   atomic.Int64
	connectionsSeen atomic.Int64
	rejectedConns   atomic.Int64                 // at --max-clients or by protected mode, as Redis counts them
	deniedConns     atomic.Int64                 // by protected mode
	statsBase       atomic.Pointer[engine.Stats] // the engine's counters at CONFIG RESETSTAT

	// gate is the way into the store's atomic section for EXEC and
	// scripts (exclusive) and for commands waiting for them (gate.go).
	gate    *sectionGate
	scripts scriptState

	watches         watch.Registry
	tracking        tracking.Table
	txResults       txResults
	errors          errorStats // INFO errorstats
	changesMu       sync.Mutex // protects changeConsumers
	changeConsumers int        // parts of the server that need the store's changes (consumeChanges)

	mu        sync.Mutex // protects listeners, moved, conns, shaking and closing
	listeners []net.Listener
	// moved maps a listener CONFIG SET port replaced to its replacement,
	// until its Serve call takes it (movedListener).
	moved map[net.Listener]net.Listener
	conns map[*Conn]struct{}
	// shaking are the sockets of the TLS handshakes under way, which
	// Shutdown's deadline cuts (cutHandshakes).
	shaking map[net.Conn]struct{}
	closing bool
	wg      sync.WaitGroup // one per connection, and the event loop's

	// loops serve the connections; accept gives each to the next in turn.
	loops *netloop.Loops

	pubsub      pubsub.Registry[*Conn]
	keyEvents   keyspaceEvents
	pubsubLimit atomic.Pointer[OutputLimit]
	// outputLimitCloses counts connections closed at pubsubLimit.
	outputLimitCloses atomic.Int64

	// slowlog and latency are SLOWLOG's and LATENCY's; clock times
	// commands for them (observe.go).
	slowlog slowlog.Log
	latency latency.Monitor
	clock   *clock.Clock
	// ownClock: the server made its clock and stops it at Shutdown.
	ownClock bool
	// monitors are the connections in MONITOR mode (monitor.go).
	monitors monitors
	// pause is CLIENT PAUSE's gate (internal/pause; its commands and
	// waits in pause.go).
	pause pause.Gate
	// migrate keeps MIGRATE's connections to its targets (migrate.go).
	migrate *migrate.Targets
}

// ErrNoStore is returned by New without Options.Store.
var ErrNoStore = errors.New("server: Options.Store is required")

// New returns a Server for opts.
func New(opts Options) (*Server, error) {
	if opts.Store == nil {
		return nil, ErrNoStore
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Metrics == nil {
		opts.Metrics = metrics.New()
	}
	if opts.WriteTimeout == 0 {
		opts.WriteTimeout = DefaultWriteTimeout
	}
	if opts.EnableDebugCommand == "" {
		opts.EnableDebugCommand = ProtectedNo
	}
	if opts.Saver == nil {
		opts.Saver = persist.NewSaver(opts.Store, "", nil, opts.Logger)
	}
	s := &Server{
		store:   opts.Store,
		log:     opts.Logger,
		metrics: opts.Metrics,
		opts:    opts,
		started: time.Now(),
		conns:   make(map[*Conn]struct{}),
		migrate: migrate.New(migrate.IdleTimeout),
	}
	s.watches.Init(s.store, s.consumeChanges)
	s.blocked.Init(s.consumeChanges)
	s.pause.Init(s.store.SetFrozen)
	s.slowlog.Init()
	s.initTracking()
	s.initKeyspaceEvents(opts.NotifyKeyspaceEvents)
	s.initScripting(opts)
	s.gate = newSectionGate(s.store.Section(), s.scripts.eng.Busy)
	s.txResults = txResults{
		ran:          s.metrics.Transactions.WithLabelValues("exec"),
		watchChanged: s.metrics.Transactions.WithLabelValues("watch_changed"),
		aborted:      s.metrics.Transactions.WithLabelValues("execabort"),
	}
	pass := opts.RequirePass
	s.requirePass.Store(&pass)
	s.maxClients.Store(int64(orDefault(opts.MaxClients, DefaultMaxClients)))
	s.idleTimeout.Store(int64(opts.IdleTimeout / time.Second))
	s.maxBulk.Store(orDefault(opts.MaxValueSize, resp.DefaultMaxBulk))
	limit := DefaultPubSubOutputLimit
	if opts.PubSubOutputLimit != nil {
		limit = *opts.PubSubOutputLimit
	}
	s.pubsubLimit.Store(&limit)
	s.protectedMode.Store(opts.ProtectedMode)
	table, err := buildTable(s.metrics, append(commandTable(), opts.Commands...))
	if err != nil {
		return nil, err
	}
	s.table = table
	s.info = append([]infoSection(nil), infoSections...)
	for _, sec := range opts.InfoSections {
		s.info = append(s.info, infoSection{name: sec.Name, write: func(_ *Server, b *infoBuilder) { sec.Write(b.field) }})
	}
	if err := s.initACL(opts); err != nil {
		return nil, err
	}
	s.unknown = newCounters(s.metrics, "unknown")
	s.metrics.Gauge("connected_clients", "Open client connections.", func() float64 {
		return float64(s.connectedClients())
	})
	s.registerPubSubMetrics()
	s.metrics.Counter("connections_denied_total", "Client connections refused by protected mode: not from loopback or a unix socket while no password is set.", func() float64 {
		return float64(s.deniedConns.Load())
	})
	s.registerTrackingMetrics()
	s.registerPauseMetrics()
	// Last before the loops, which read it: a New that fails leaves no
	// clock of its own ticking.
	s.clock = opts.Clock
	if s.clock == nil {
		s.clock, s.ownClock = clock.New(), true
	}
	if err := s.startLoops(opts.EventLoops); err != nil {
		if s.ownClock {
			s.clock.Stop()
		}
		return nil, err
	}
	s.metrics.Gauge("waiting_clients", "Client connections parked on a command that waits (a load, a blocked pop, the atomic section, a script, Redis), off their event loop.", func() float64 {
		return float64(s.waitingClients())
	})
	if opts.Shared != nil {
		opts.Shared.Relay(s.relay)
	}
	return s, nil
}

// orDefault returns v, or def when v is not positive.
func orDefault[T int | int64](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// Serve accepts connections on l until Shutdown, and returns ErrServerClosed
// then. Temporary accept errors (such as running out of file descriptors)
// are retried with a growing delay instead of spinning.
func (s *Server) Serve(l net.Listener) error { return s.serve(l, nil) }

// serve is Serve, speaking TLS with tlsConfig if it is not nil.
func (s *Server) serve(l net.Listener, tlsConfig *tls.Config) error {
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		l.Close()
		return ErrServerClosed
	}
	s.listeners = append(s.listeners, l)
	s.mu.Unlock()

	var delay time.Duration
	for {
		nc, err := l.Accept()
		if err != nil {
			if s.isClosing() {
				return ErrServerClosed
			}
			if next := s.movedListener(l); next != nil {
				l = next
				continue
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() || isTemporary(err) {
				delay = max(5*time.Millisecond, min(2*delay, time.Second))
				s.log.Warn("accept failed; retrying", "err", err, "delay", delay)
				time.Sleep(delay)
				continue
			}
			return err
		}
		delay = 0
		s.accept(nc, tlsConfig)
	}
}

// isTemporary reports accept errors worth retrying, such as EMFILE.
func isTemporary(err error) bool {
	var t interface{ Temporary() bool }
	return errors.As(err, &t) && t.Temporary()
}

func (s *Server) accept(nc net.Conn, tlsConfig *tls.Config) {
	s.connectionsSeen.Add(1)
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		nc.Close()
		return
	}
	var refusal string
	switch {
	case int64(len(s.conns)) >= s.maxClients.Load():
		refusal = "-ERR max number of clients reached\r\n"
		s.metrics.ConnectionsRejected.Inc()
	case s.protectedRefuses(nc.RemoteAddr()):
		refusal = deniedProtectedMode
		s.deniedConns.Add(1)
	}
	if refusal != "" {
		s.rejectedConns.Add(1)
		s.wg.Add(1)
		s.mu.Unlock()
		go func() {
			defer s.wg.Done()
			if refusal == deniedProtectedMode {
				s.logRefused(refusedProtected, "protected mode refused a client that is not local; set a password or --protected-mode no",
					"client", nc.RemoteAddr().String())
			}
			refuse(nc, refusal)
		}()
		return
	}
	c := newConn(s, nc)
	s.conns[c] = struct{}{}
	s.wg.Add(1)
	if tlsConfig != nil {
		if s.shaking == nil {
			s.shaking = make(map[net.Conn]struct{})
		}
		s.shaking[nc] = struct{}{}
	}
	s.mu.Unlock()
	s.metrics.ConnectionsAccepted.Inc()
	if tlsConfig != nil {
		go s.handshake(c, nc, tlsConfig)
		return
	}
	s.adopt(c, nc)
}

// DefaultEventLoops is the event loops a server runs unless told: one per
// two CPUs Go may use (GOMAXPROCS), at least one. A loop busy serving
// keeps a core; the other is for what it does not do itself: the kernel's
// side of its sockets, Go's runtime (the collector, the eviction policy's
// goroutines) and the continuations of commands that wait. Measured on two
// cores shared with the load generator, two loops cost half as much CPU
// per request again as one, for no more throughput.
func DefaultEventLoops() int { return max(1, runtime.GOMAXPROCS(0)/2) }

// startLoops starts n event loops, or DefaultEventLoops.
func (s *Server) startLoops(n int) error {
	if n <= 0 {
		n = DefaultEventLoops()
	}
	loops, err := netloop.New(netloop.Config{
		Loops:         n,
		NoURing:       s.opts.NoURing,
		WriteTimeout:  s.opts.WriteTimeout,
		Log:           s.log,
		Clock:         s.clock,
		OutputBlocked: s.metrics.OutputBlocked,
		Parks:         s.metrics.Parks,
	}, (*loopHost)(s))
	if err != nil {
		return err
	}
	s.loops = loops
	s.wg.Add(n)
	loops.Start(s.wg.Done)
	return nil
}

// adopt gives an accepted connection to the next event loop, which serves
// it until it closes.
func (s *Server) adopt(c *Conn, nc net.Conn) {
	if err := s.loops.Adopt(&c.link, nc); err != nil {
		s.log.Warn("event loop: cannot take a connection; closing it", "err", err)
		nc.Close()
		s.finish(c, closedByClient)
	}
}

func (s *Server) isClosing() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closing
}

// waitingClients is how many connections are parked on a command that
// waits.
func (s *Server) waitingClients() int64 { return s.loops.Waiting() }

// notifyLoops wakes every event loop, to look at the server's state.
func (s *Server) notifyLoops() { s.loops.Notify() }

func (s *Server) connectedClients() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

// Shutdown stops accepting, lets every connection finish the commands it has
// received, and waits for them to close. If ctx ends first, a script still
// running is stopped, the remaining connections are closed and ctx's error
// is returned.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.closing = true
	if s.ownClock {
		s.clock.Stop()
	}
	for _, l := range s.listeners {
		l.Close()
	}
	s.mu.Unlock()
	s.pause.Close()
	// Each loop drains its connections: for a short while a connection
	// still runs what its client sends, and each batch extends its
	// while, so a pipeline in flight is answered; a quiet connection
	// closes when it passes.
	s.notifyLoops()

	done := make(chan struct{})
	go func() {
		s.wg.Wait()
		close(done)
	}()
	// Once every connection is gone, so is every MIGRATE.
	defer s.migrate.Close()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		// A script still running is stopped, written or not, as
		// SHUTDOWN NOSAVE stops it: its connection can then finish.
		s.scripts.eng.Close()
		s.cutHandshakes()
		s.loops.Force()
		<-done
		return ctx.Err()
	}
}
