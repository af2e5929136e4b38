package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"net/http/pprof"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/urfave/cli/v2"

	"github.com/stampedeless/stampedeless/cluster"
	"github.com/stampedeless/stampedeless/commands"
	"github.com/stampedeless/stampedeless/commands/keyspace"
	"github.com/stampedeless/stampedeless/commands/readthrough"
	"github.com/stampedeless/stampedeless/engine"
	"github.com/stampedeless/stampedeless/internal/clock"
	"github.com/stampedeless/stampedeless/internal/memsize"
	"github.com/stampedeless/stampedeless/loader"
	"github.com/stampedeless/stampedeless/metrics"
	"github.com/stampedeless/stampedeless/radar"
	"github.com/stampedeless/stampedeless/radar/board"
	"github.com/stampedeless/stampedeless/server"
	"github.com/stampedeless/stampedeless/swr"
)

// shutdownGrace bounds how long in-flight commands may run after a signal.
const shutdownGrace = 5 * time.Second

// defaultAddr is where the server listens, and `stampedeless ping` knocks,
// unless --addr says otherwise.
const defaultAddr = "127.0.0.1:6380"

// envPrefix names each flag's environment variable: --max-memory is
// STAMPEDELESS_MAX_MEMORY.
const envPrefix = "STAMPEDELESS_"

func env(flag string) []string {
	return []string{envPrefix + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))}
}

// serveFlags are the flags of `stampedeless serve`, which is also what runs
// with no subcommand.
func serveFlags() []cli.Flag {
	return append([]cli.Flag{
		&cli.StringFlag{Name: "addr", Value: defaultAddr, EnvVars: env("addr"),
			Usage: "address to serve the Redis protocol on (empty: none, for a server reached only by --tls-port or --unixsocket)"},
		&cli.StringFlag{Name: "max-memory", Value: "1gb", EnvVars: env("max-memory"),
			Usage: "memory bound for keys and values (bytes, or with a unit: 512mb, 2gb, as Redis's maxmemory); past it keys are evicted; 0: no bound"},
		&cli.StringFlag{Name: "maxmemory-policy", Value: "allkeys-lfu", EnvVars: env("maxmemory-policy"),
			Usage: "what happens at --max-memory, as Redis's maxmemory-policy: allkeys-lfu evicts the least frequently used keys (by a TinyLFU sketch), allkeys-lru the least recently used, allkeys-random any; volatile-lru, volatile-lfu, volatile-random and volatile-ttl (nearest deadline) only keys with a TTL; noeviction refuses writes with -OOM"},
		&cli.IntFlag{Name: "maxmemory-samples", Value: engine.DefaultEvictionParams.Samples, EnvVars: env("maxmemory-samples"),
			Usage: "keys sampled per eviction round, as Redis's (more: closer to exact LRU/LFU, more CPU per eviction)"},
		&cli.IntFlag{Name: "maxmemory-eviction-tenacity", Value: engine.DefaultEvictionParams.Tenacity, EnvVars: env("maxmemory-eviction-tenacity"),
			Usage: "how long one write may evict, 0 to 100, as Redis's (10: 500 µs; 100: no limit)"},
		&cli.IntFlag{Name: "lfu-log-factor", Value: engine.DefaultEvictionParams.LFULogFactor, EnvVars: env("lfu-log-factor"),
			Usage: "how many accesses the LFU counter (OBJECT FREQ) takes to grow, as Redis's"},
		&cli.IntFlag{Name: "lfu-decay-time", Value: engine.DefaultEvictionParams.LFUDecayTime, EnvVars: env("lfu-decay-time"),
			Usage: "minutes after which an unaccessed LFU counter loses one (0: never), as Redis's"},
		&cli.StringFlag{Name: "max-value-size", Value: "512mb", EnvVars: env("max-value-size"),
			Usage: "largest bulk string or value accepted, as Redis's proto-max-bulk-len"},
		&cli.IntFlag{Name: "max-clients", Value: server.DefaultMaxClients, EnvVars: env("max-clients"),
			Usage: "most client connections open at once; more get -ERR max number of clients reached"},
		&cli.StringFlag{Name: "pubsub-output-buffer-limit", Value: server.DefaultPubSubOutputLimit.Human(), EnvVars: env("pubsub-output-buffer-limit"),
			Usage: "\"<hard> <soft> <soft seconds>\": a subscriber with this much output queued and unread (or the soft amount for longer than the seconds) is disconnected, as Redis's client-output-buffer-limit pubsub; 0 is no bound"},
		&cli.StringFlag{Name: "notify-keyspace-events", EnvVars: env("notify-keyspace-events"),
			Usage: "the keyspace notifications sent on __keyspace@0__:<key> and __keyevent@0__:<event>, Redis's notify-keyspace-events letters (\"Ex\": expired keys' events; \"KEA\": every event on both channels); empty: none"},
		&cli.IntFlag{Name: "databases", Value: engine.MaxDatabases, EnvVars: env("databases"),
			Usage: "how many databases SELECT offers, Redis's \"databases\": 1 to 16 (a record keeps its database in four bits); they share the memory bound; each is a read-through cache of its own, and with --redis each is shared apart"},
		&cli.IntFlag{Name: "event-loops", EnvVars: env("event-loops"),
			Usage: "how many event loops serve the connections, each an epoll thread as redis-server's, new connections given to each in turn; 0: one per two CPUs (GOMAXPROCS/2, at least 1), leaving a core beside each loop for the kernel's side of its sockets and Go's runtime"},
		&cli.BoolFlag{Name: "io-uring", Value: true, EnvVars: env("io-uring"),
			Usage: "let each event loop make a turn's socket reads in one system call, and its writes in another, through io_uring where the kernel allows it (INFO's multiplexing_api says epoll+io_uring); --io-uring=false: a system call per read and per write"},
		&cli.DurationFlag{Name: "lua-time-limit", Value: server.DefaultLuaTimeLimit, EnvVars: env("lua-time-limit"),
			Usage: "how long a script runs before other clients are answered BUSY and SCRIPT KILL may stop it, as Redis's busy-reply-threshold (CONFIG SET busy-reply-threshold, in ms); 0: never"},
		&cli.IntFlag{Name: "max-scripts", Value: server.DefaultMaxScripts, EnvVars: env("max-scripts"),
			Usage: "most scripts the script cache keeps (EVAL, SCRIPT LOAD); past it the least recently used is evicted and its clients get NOSCRIPT"},
		&cli.StringFlag{Name: "max-scripts-memory", Value: "64mb", EnvVars: env("max-scripts-memory"),
			Usage: "bound on the script cache's estimated size, past which the least recently used script is evicted; and, separately, on what the function libraries hold, measured from their Lua objects: a FUNCTION LOAD or RESTORE past it is refused, and while calls have grown them past it FCALL of a function with upvalues answers OOM (what they hold counts against --max-memory too)"},
		&cli.StringFlag{Name: "dir", EnvVars: env("dir"),
			Usage: "directory of the snapshot file, as Redis's dir: with it, SHUTDOWN and SIGTERM save a snapshot there and the next start loads it (empty: snapshots off, nothing is ever written)"},
		&cli.StringFlag{Name: "dbfilename", Value: "dump.rdb", EnvVars: env("dbfilename"),
			Usage: "name of the snapshot file in --dir, in Redis's RDB format (version 10, as redis-server 7.0 writes it)"},
		&cli.StringFlag{Name: "save", EnvVars: env("save"),
			Usage: "with --dir, Redis's save points: \"seconds changes\" pairs (\"3600 1 300 100\"): a background save when that many changes happened in that many seconds (empty: only SAVE, BGSAVE and shutdown save)"},
		&cli.BoolFlag{Name: "rdb-skip-unsupported", EnvVars: env("rdb-skip-unsupported"),
			Usage: "load a snapshot that holds types this server lacks (modules, functions) without them, instead of refusing to start"},
		&cli.BoolFlag{Name: "rdb-start-empty-if-corrupt", EnvVars: env("rdb-start-empty-if-corrupt"),
			Usage: "start empty when the snapshot is corrupt or truncated, instead of refusing to start (the bad file is kept until the next save replaces it)"},
		&cli.StringFlag{Name: "requirepass", EnvVars: env("requirepass"),
			Usage: "the default user's password, which clients must AUTH with before other commands (empty: none)"},
		&cli.GenericFlag{Name: "user", Value: &userFlag{}, EnvVars: env("user"),
			Usage: "define a user in Redis's ACL syntax, \"name rules...\" (\"app on >secret ~cache:* +@read\"); repeatable, and one per line in the environment variable"},
		&cli.StringFlag{Name: "aclfile", EnvVars: env("aclfile"),
			Usage: "ACL file of \"user name rules...\" lines, read at start and by ACL LOAD, written by ACL SAVE (not with --user)"},
		&cli.StringFlag{Name: "metrics-addr", Value: "127.0.0.1:9121", EnvVars: env("metrics-addr"),
			Usage: "address serving Prometheus metrics at /metrics (empty: off)"},
		&cli.StringSliceFlag{Name: "loader", EnvVars: env("loader"),
			Usage: "register a read-through loader at start: prefix=url, optionally followed by ,batch=n (a batch loader: up to n keys per POST) and ,header=Name:value (repeatable; $VAR in a value is read from the environment); a local default that LOADER.REGISTER overrides"},
		&cli.StringFlag{Name: "enable-loader-commands", Value: readthrough.LoaderCommandsLocal, EnvVars: env("enable-loader-commands"),
			Usage: "who may run LOADER.REGISTER/UNREGISTER: no, yes, or local (loopback connections only)"},
		&cli.IntFlag{Name: "timeout", Value: 0, EnvVars: env("timeout"),
			Usage: "close a client idle for more than this many seconds, as Redis's timeout (subscribers, MONITOR and blocked clients excepted); 0: never"},
		&cli.StringFlag{Name: "enable-debug-command", Value: server.ProtectedNo, EnvVars: env("enable-debug-command"),
			Usage: "who may run DEBUG, as Redis's enable-debug-command: no, yes, or local (loopback and unix socket connections only)"},
		&cli.DurationFlag{Name: "negative-ttl", Value: swr.DefaultNegativeTTL, EnvVars: env("negative-ttl"),
			Usage: "how long an origin's 404/410 is remembered"},
		&cli.DurationFlag{Name: "max-cooldown", Value: loader.DefaultCooldownMax, EnvVars: env("max-cooldown"),
			Usage: fmt.Sprintf("longest pause of a key's loads after repeated failures (starts at %v, doubling)", loader.DefaultCooldownBase)},
		&cli.DurationFlag{Name: "slow-fill", Value: swr.DefaultSlowFill, EnvVars: env("slow-fill"),
			Usage: "an origin call longer than this is logged as a slow fill, like a slow query, at most once per loader every 10s (0: off)"},
		&cli.IntFlag{Name: "max-concurrent-fills", Value: loader.DefaultMaxConcurrentFills, EnvVars: env("max-concurrent-fills"),
			Usage: "most origin calls in flight across all keys"},
		&cli.IntFlag{Name: "max-background-refreshes", Value: swr.DefaultMaxBackgroundRefreshes, EnvVars: env("max-background-refreshes"),
			Usage: "most stale-while-revalidate refreshes in flight"},
		&cli.Float64Flag{Name: "ttl-jitter", Value: swr.DefaultTTLJitter, EnvVars: env("ttl-jitter"),
			Usage: "fraction of a GETFILL ttl by which fresh deadlines are spread"},
		&cli.IntFlag{Name: "max-tags-per-key", Value: swr.DefaultMaxTagsPerKey, EnvVars: env("max-tags-per-key"),
			Usage: "most origin tags (Surrogate-Key, Cache-Tag) a key keeps for PURGE.TAG; the rest are dropped"},
		&cli.IntFlag{Name: "max-tag-entries", Value: swr.DefaultMaxTagEntries, EnvVars: env("max-tag-entries"),
			Usage: "most (key, tag) pairs the tag index holds; a full index evicts tagged keys (its memory counts in --max-memory)"},
		&cli.Float64Flag{Name: "early-refresh", EnvVars: env("early-refresh"),
			Usage: "beta of early refresh (XFetch): fresh GETFILL reads refresh a key early, likelier as its deadline nears and the slower its last load (0: off; GETFILL's EARLY overrides it)"},
		&cli.StringFlag{Name: "redis", EnvVars: env("redis"),
			Usage: "share fills, values and invalidations with other replicas through this Redis: redis://host:port (rediss:// for TLS, with user:password@ if needed), or host:port,host:port,... for a Redis Cluster (empty: off)"},
		&cli.StringFlag{Name: "redis-prefix", Value: cluster.DefaultPrefix, EnvVars: env("redis-prefix"),
			Usage: "namespace of stampedeless's keys and channels in the shared Redis"},
		&cli.DurationFlag{Name: "redis-timeout", Value: cluster.DefaultTimeout, EnvVars: env("redis-timeout"),
			Usage: "bound on each shared-Redis operation; past it the replica serves alone until Redis answers"},
		&cli.StringFlag{Name: "redis-master-name", EnvVars: env("redis-master-name"),
			Usage: "with --redis listing Sentinels: the name of the master they watch"},
		&cli.BoolFlag{Name: "redis-cluster", EnvVars: env("redis-cluster"),
			Usage: "treat a single --redis address as a Redis Cluster seed node"},
		&cli.DurationFlag{Name: "lease-wait", Value: cluster.DefaultLeaseWait, EnvVars: env("lease-wait"),
			Usage: "how long a replica waits for another replica's fill of a key before it takes that replica's lease over (one replica of the fleet wins and loads the key)"},
		&cli.IntFlag{Name: "fleet-max-concurrent-fills", EnvVars: env("fleet-max-concurrent-fills"),
			Usage: "with --redis: most origin calls in flight across all replicas together (0: no fleet-wide bound)"},
		&cli.BoolFlag{Name: "pprof", EnvVars: env("pprof"),
			Usage: "also serve Go's profiler at /debug/pprof/ on --metrics-addr"},
		&cli.StringFlag{Name: "log-level", Value: "info", EnvVars: env("log-level"),
			Usage: "debug, info, warn or error"},
		&cli.StringFlag{Name: "log-format", Value: "text", EnvVars: env("log-format"),
			Usage: "text or json"},
	}, securityFlags()...)
}

func newApp() *cli.App {
	serve := &cli.Command{
		Name:   "serve",
		Usage:  "run the server (the default)",
		Flags:  serveFlags(),
		Action: noArgs(runServe, false),
	}
	app := &cli.App{
		Name:  "stampedeless",
		Usage: "a Redis-protocol cache server that stops cache stampedes",
		// --version and -v as redis-server's, beside the version command.
		Flags: append(serveFlags(), &cli.BoolFlag{Name: "version", Aliases: []string{"v"},
			Usage: "print the version and exit, as stampedeless version does"}),
		Action: noArgs(func(c *cli.Context) error {
			if c.Bool("version") {
				return printVersion(c)
			}
			return runServe(c)
		}, true),
		OnUsageError: onUsageError,
		Commands: []*cli.Command{
			serve,
			originCommand(),
			pingCommand(),
			topCommand(),
			{
				Name:   "version",
				Usage:  "print the version",
				Action: noArgs(printVersion, false),
			},
		},
	}
	for _, cmd := range app.Commands {
		cmd.OnUsageError = onUsageError
	}
	return app
}

// printVersion is what stampedeless version and stampedeless --version
// print.
func printVersion(c *cli.Context) error {
	fmt.Fprintf(c.App.Writer, "stampedeless %s (redis protocol %s)\n", version, server.RedisVersion)
	return nil
}

// config is the parsed command line.
type config struct {
	listen      listenConfig
	metricsAddr string
	pprof       bool
	store       engine.Options
	server      server.Options
	// loaderCommands is --enable-loader-commands, for the read-through
	// family.
	loaderCommands string
	loaders        loader.Options
	initialLoaders []loader.Config
	fill           swr.Options
	persist        persistConfig
	// redis is nil unless --redis is set.
	redis   *redis.UniversalOptions
	cluster cluster.Options
}

func parseConfig(c *cli.Context) (config, error) {
	var cfg config
	maxMemory, err := memoryFlag(c, "max-memory")
	if err != nil {
		return cfg, err
	}
	maxValue, err := memoryFlag(c, "max-value-size")
	if err != nil {
		return cfg, err
	}
	level := new(slog.LevelVar)
	if err := level.UnmarshalText([]byte(c.String("log-level"))); err != nil {
		return cfg, fmt.Errorf("--log-level: %w", err)
	}
	handlerOpts := &slog.HandlerOptions{Level: level}
	var logger *slog.Logger
	switch c.String("log-format") {
	case "text":
		logger = slog.New(slog.NewTextHandler(os.Stderr, handlerOpts))
	case "json":
		logger = slog.New(slog.NewJSONHandler(os.Stderr, handlerOpts))
	default:
		return cfg, fmt.Errorf("--log-format: want text or json, got %q", c.String("log-format"))
	}
	if cfg.listen, err = parseListen(c); err != nil {
		return cfg, err
	}
	protected, err := parseProtectedMode(c)
	if err != nil {
		return cfg, err
	}
	cfg.metricsAddr = c.String("metrics-addr")
	cfg.pprof = c.Bool("pprof")
	policy, err := engine.ParseEvictionPolicy(c.String("maxmemory-policy"))
	if err != nil {
		return cfg, fmt.Errorf("--maxmemory-policy: want one of %s; got %q", strings.Join(engine.PolicyNames(), ", "), c.String("maxmemory-policy"))
	}
	if maxMemory == 0 {
		maxMemory = engine.NoMaxMemory // Redis's maxmemory 0
	}
	// The store bounds the process's memory unless GOMEMLIMIT does.
	eviction := engine.EvictionParams{
		Samples:      c.Int("maxmemory-samples"),
		Tenacity:     c.Int("maxmemory-eviction-tenacity"),
		LFULogFactor: c.Int("lfu-log-factor"),
		LFUDecayTime: c.Int("lfu-decay-time"),
	}
	switch {
	case eviction.Samples < 1:
		return cfg, fmt.Errorf("--maxmemory-samples: want 1 or more, got %d", eviction.Samples)
	case eviction.Tenacity < 0 || eviction.Tenacity > 100:
		return cfg, fmt.Errorf("--maxmemory-eviction-tenacity: want 0 to 100, got %d", eviction.Tenacity)
	case eviction.LFULogFactor < 0 || eviction.LFUDecayTime < 0:
		return cfg, errors.New("--lfu-log-factor and --lfu-decay-time: want 0 or more")
	}
	databases := c.Int("databases")
	if databases < 1 || databases > engine.MaxDatabases {
		return cfg, fmt.Errorf("--databases: want 1 to %d, got %d", engine.MaxDatabases, databases)
	}
	cfg.store = engine.Options{MaxMemory: maxMemory, Policy: policy, Eviction: eviction, Databases: databases,
		OwnsProcess: os.Getenv("GOMEMLIMIT") == ""}
	switch v := c.String("enable-loader-commands"); v {
	case readthrough.LoaderCommandsNo, readthrough.LoaderCommandsYes, readthrough.LoaderCommandsLocal:
	default:
		return cfg, fmt.Errorf("--enable-loader-commands: want no, yes or local, got %q", v)
	}
	if c.Int("timeout") < 0 {
		return cfg, fmt.Errorf("--timeout: want 0 or more seconds, got %d", c.Int("timeout"))
	}
	switch v := c.String("enable-debug-command"); v {
	case server.ProtectedNo, server.ProtectedYes, server.ProtectedLocal:
	default:
		return cfg, fmt.Errorf("--enable-debug-command: want no, yes or local, got %q", v)
	}
	cfg.loaders = loader.Options{MaxValueSize: maxValue, MaxConcurrentFills: c.Int("max-concurrent-fills")}
	if cfg.initialLoaders, err = parseLoaderFlags(c.StringSlice("loader"), os.LookupEnv); err != nil {
		return cfg, err
	}
	// Refused as GETFILL's EARLY refuses it: a negative or NaN beta would
	// silently turn early refresh off, an infinite one refresh on every read.
	if beta := c.Float64("early-refresh"); !(beta >= 0) || math.IsInf(beta, 1) {
		return cfg, fmt.Errorf("--early-refresh: want a finite beta of 0 or more, got %v", beta)
	}
	if cfg.loaders.Allow, err = loaderAllowList(c, cfg.initialLoaders); err != nil {
		return cfg, err
	}
	cfg.fill = swr.Options{
		NegativeTTL:            c.Duration("negative-ttl"),
		Cooldown:               &loader.Cooldown{Max: c.Duration("max-cooldown")},
		MaxBackgroundRefreshes: c.Int("max-background-refreshes"),
		TTLJitter:              c.Float64("ttl-jitter"),
		EarlyRefresh:           c.Float64("early-refresh"),
		MaxTagsPerKey:          c.Int("max-tags-per-key"),
		MaxTagEntries:          c.Int("max-tag-entries"),
		SlowFill:               c.Duration("slow-fill"),
	}
	if cfg.fill.SlowFill == 0 {
		cfg.fill.SlowFill = -1 // --slow-fill 0: off
	}
	if spec := c.String("redis"); spec != "" {
		cfg.redis, err = cluster.RedisOptions(spec, c.String("redis-master-name"), c.Bool("redis-cluster"), c.Duration("redis-timeout"))
		if err != nil {
			return cfg, err
		}
		if cfg.redis.TLSConfig != nil && cfg.listen.tls != nil {
			cfg.redis.TLSConfig = cfg.listen.tls.Client(cfg.redis.TLSConfig)
		}
		cfg.cluster = cluster.Options{
			Prefix:                  c.String("redis-prefix"),
			Timeout:                 c.Duration("redis-timeout"),
			LeaseWait:               c.Duration("lease-wait"),
			FleetMaxConcurrentFills: c.Int("fleet-max-concurrent-fills"),
			Logger:                  logger,
		}
	} else if c.Int("fleet-max-concurrent-fills") > 0 {
		return cfg, errors.New("--fleet-max-concurrent-fills needs --redis")
	}
	outputLimit, err := server.ParseOutputLimit(c.String("pubsub-output-buffer-limit"))
	if err != nil {
		return cfg, fmt.Errorf("--pubsub-output-buffer-limit: %w", err)
	}
	maxScriptBytes, err := memoryFlag(c, "max-scripts-memory")
	if err != nil {
		return cfg, err
	}
	luaTimeLimit := c.Duration("lua-time-limit")
	if luaTimeLimit == 0 {
		luaTimeLimit = -1 // never busy
	}
	if cfg.persist, err = parsePersist(c); err != nil {
		return cfg, err
	}
	users := c.Generic("user").(*userFlag).users
	if err := checkUserFlags(users, c.String("aclfile"), c.String("requirepass")); err != nil {
		return cfg, err
	}
	keyEvents, err := commands.ParseEventClasses(c.String("notify-keyspace-events"))
	if err != nil {
		return cfg, fmt.Errorf("--notify-keyspace-events: %w", err)
	}
	cfg.loaderCommands = c.String("enable-loader-commands")
	cfg.server = server.Options{
		PubSubOutputLimit:  &outputLimit,
		RequirePass:        c.String("requirepass"),
		Users:              users,
		ACLFile:            c.String("aclfile"),
		MaxClients:         c.Int("max-clients"),
		MaxValueSize:       maxValue,
		Logger:             logger,
		LogLevel:           level,
		Version:            version,
		EventLoops:         c.Int("event-loops"),
		NoURing:            !c.Bool("io-uring"),
		EnableDebugCommand: c.String("enable-debug-command"),
		IdleTimeout:        time.Duration(c.Int("timeout")) * time.Second,
		ProtectedMode:      protected,
		LuaTimeLimit:       luaTimeLimit,
		MaxScripts:         c.Int("max-scripts"),
		MaxScriptBytes:     maxScriptBytes,

		NotifyKeyspaceEvents: keyEvents,
	}
	return cfg, nil
}

// memoryFlag is the memory size of the flag name. Its error keeps Redis's
// CONFIG SET text and adds what a size looks like, which that text omits.
func memoryFlag(c *cli.Context, name string) (int64, error) {
	n, err := memsize.Parse(c.String(name))
	if err != nil {
		return 0, fmt.Errorf("--%s: %w, got %q (bytes, or with a unit: 512mb, 2gb)", name, err, c.String(name))
	}
	return n, nil
}

func runServe(c *cli.Context) error {
	cfg, err := parseConfig(c)
	if err != nil {
		return err
	}
	log := cfg.server.Logger

	// The store, the Filler and the fleet compare the deadlines each other
	// set: they run on one clock, the server's, which its event loops read
	// once per batch of commands.
	clk := clock.New()
	defer clk.Stop()
	cfg.store.Now, cfg.fill.Now, cfg.cluster.Now, cfg.server.Clock = clk.Now, clk.Now, clk.Now, clk

	store, err := engine.New(cfg.store)
	if err != nil {
		return err
	}
	defer store.Close()

	reg := metrics.New()
	registerStoreMetrics(reg, store)
	loaders := loader.NewRegistry(cfg.loaders)
	registerLoaderMetrics(reg, loaders)
	for _, l := range cfg.initialLoaders {
		if err := loaders.RegisterDefault(l); err != nil {
			return fmt.Errorf("--loader %s=%s: %w", l.Prefix, l.URL, err)
		}
	}
	var fleet *cluster.Client
	if cfg.redis != nil {
		redis.SetLogger(cluster.NewRedisLogger(log))
		cfg.cluster.Redis, cfg.cluster.Store, cfg.cluster.Metrics = redis.NewUniversalClient(cfg.redis), store, reg.Cluster
		fleet, err = cluster.New(cfg.cluster)
		if err != nil {
			return err
		}
		defer fleet.Close()
		cfg.fill.Fleet, cfg.fill.Purges, cfg.server.Shared = fleet, fleet, fleet
		// Before serving, so the fleet's loaders answer the first GETFILL.
		if err := loaders.Share(fleet); err != nil {
			log.Warn("the fleet's loaders could not all be read or applied; serving with what there is, catching up when Redis answers", "err", err)
		}
		log.Info("fleet mode: sharing fills through Redis", "redis", cfg.redis.Addrs, "prefix", fleet.Prefix(),
			"replica", fleet.ID())
	}
	// The stampede radar: fed by the Filler, read by FILL.TOP, FILL.RADAR
	// and the status page; with --redis each replica keeps its own.
	rdr := radar.New(radar.Options{Now: clk.Now})
	replica := ""
	if fleet != nil {
		replica = fleet.ID()
	}
	cfg.fill.Store, cfg.fill.Loaders, cfg.fill.Metrics, cfg.fill.Logger, cfg.fill.Radar = store, loaders, reg.Fill, log, rdr
	cfg.server.Store = store
	cfg.server.Metrics = reg
	filler := swr.New(cfg.fill)
	readThrough := readthrough.Options{Filler: filler, Loaders: loaders, Metrics: reg.Fill, Logger: log,
		LoaderCommands: cfg.loaderCommands, Radar: rdr, Replica: replica}
	cfg.server.Commands = append(keyspace.Commands(), readthrough.Commands(readThrough)...)
	cfg.server.InfoSections = readthrough.InfoSections(readThrough)
	// SHUTDOWN stops the process as SIGTERM does.
	shutdownAsked := make(chan struct{})
	var askShutdown sync.Once
	cfg.server.Shutdown = func() { askShutdown.Do(func() { close(shutdownAsked) }) }
	saver, err := cfg.persist.load(store, filler, log)
	if err != nil {
		return err
	}
	if fleet != nil {
		reconcileSnapshot(c.Context, fleet, store, log)
	}
	cfg.server.Saver = saver
	srv, err := server.New(cfg.server)
	if err != nil {
		return err
	}

	lns, err := cfg.listen.listen()
	if err != nil {
		return alsoInUse(err, cfg.metricsAddr)
	}
	var metricsSrv *http.Server
	if cfg.metricsAddr != "" {
		mux := http.NewServeMux()
		mux.Handle("/metrics", reg.Handler())
		// The status page: the radar's figures, per loader and per key
		// (names, never values), for whoever reaches this port.
		mux.Handle("/", board.Page(listenerNames(lns), board.Local{Radar: rdr, Loaders: loaders, Replica: replica}.Board))
		if cfg.pprof {
			mux.HandleFunc("/debug/pprof/", pprof.Index)
			mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
			mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
			mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
		}
		metricsSrv = &http.Server{Addr: cfg.metricsAddr, Handler: mux, ReadHeaderTimeout: 5 * time.Second}
		mln, err := listenFlag("metrics-addr", cfg.metricsAddr)
		if err != nil {
			for _, ln := range lns {
				ln.Close()
			}
			return err
		}
		defer metricsSrv.Close()
		go func() {
			// Serve returns ErrServerClosed once runServe shuts it down or
			// returns; anything else stopped /metrics while the cache
			// serves on, which the operator must hear of.
			if err := metricsSrv.Serve(mln); !errors.Is(err, http.ErrServerClosed) {
				log.Error("the metrics server stopped; /metrics is no longer served", "err", err)
			}
		}()
		log.Info("serving metrics", "addr", mln.Addr().String())
	}

	ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
	defer stop()
	reloadOnSIGHUP(ctx, log, cfg.listen.tls)
	evictLogDone := make(chan struct{})
	go func() {
		defer close(evictLogDone)
		logEvictions(ctx, log, store, evictLogEvery)
	}()
	// Before the store closes (deferred above), which Stats must not outlive.
	defer func() { stop(); <-evictLogDone }()
	savePoints, stopSavePoints := context.WithCancel(ctx)
	defer stopSavePoints()
	savePointsDone := make(chan struct{})
	go func() { defer close(savePointsDone); saver.Run(savePoints) }()
	serveErr := make(chan error, len(lns))
	for _, ln := range lns {
		go func() { serveErr <- ln.serve(srv) }()
	}
	if store.MaxMemory() == 0 {
		log.Warn("--max-memory 0: the cache has no memory bound and grows until the machine runs out of memory; set a bound (--max-memory 1gb) unless something else limits the process")
	}
	log.Info("stampedeless ready", "addr", listenerNames(lns), "version", version,
		"max_memory", store.MaxMemory(), "protected_mode", protectedModeState(cfg.server.ProtectedMode, cfg.server.RequirePass),
		"loader_allow", cfg.loaders.Allow.String())

	select {
	case err := <-serveErr:
		return err
	case <-ctx.Done():
	case <-shutdownAsked:
	}
	log.Info("shutting down", "grace", shutdownGrace)
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if metricsSrv != nil {
		if err := metricsSrv.Shutdown(sctx); err != nil {
			log.Warn("metrics scrapes still running at the end of the grace period were cut", "err", err)
		}
	}
	if err := srv.Shutdown(sctx); err != nil {
		log.Warn("connections still open at the end of the grace period were closed", "err", err)
	}
	for range lns {
		if err := <-serveErr; err != nil && !errors.Is(err, server.ErrServerClosed) {
			return err
		}
	}
	// No client writes any more: the last snapshot holds everything.
	stopSavePoints()
	<-savePointsDone
	if err := saver.Final(); err != nil {
		return fmt.Errorf("the snapshot at shutdown failed (the previous one is intact): %w", err)
	}
	log.Info("stopped")
	return nil
}

// userFlag is --user: each occurrence is one user, whole, commas and all
// (a password may have one); the environment variable holds one per line.
type userFlag struct{ users []string }

func (f *userFlag) Set(v string) error {
	for _, line := range strings.Split(v, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			f.users = append(f.users, line)
		}
	}
	return nil
}

func (f *userFlag) String() string { return strings.Join(f.users, "\n") }

// checkUserFlags refuses the combinations where Redis would drop a setting
// silently: --user with --aclfile (Redis refuses it too), and --requirepass
// with an ACL file or a --user default, either of which defines the
// default user from scratch and so would discard the password.
func checkUserFlags(users []string, aclFile, requirePass string) error {
	definesDefault := false
	for _, u := range users {
		if name, _, _ := strings.Cut(u, " "); name == "default" {
			definesDefault = true
		}
	}
	switch {
	case len(users) > 0 && aclFile != "":
		return errors.New("--user and --aclfile: define the users in one place, the ACL file or the flags")
	case requirePass != "" && aclFile != "":
		return errors.New("--requirepass and --aclfile: give the default user's password in the ACL file (user default on >password ...)")
	case requirePass != "" && definesDefault:
		return errors.New("--requirepass and --user default: give the default user's password in its rules (>password)")
	}
	return nil
}
