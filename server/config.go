package server

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/stampedeless/stampedeless/commands"
	"github.com/stampedeless/stampedeless/engine"
	"github.com/stampedeless/stampedeless/internal/glob"
	"github.com/stampedeless/stampedeless/internal/memsize"
	"github.com/stampedeless/stampedeless/internal/redisconfig"
	"github.com/stampedeless/stampedeless/persist"
	"github.com/stampedeless/stampedeless/resp"
)

// configParam is one parameter of CONFIG GET and SET. set is nil for
// parameters that cannot change at run time.
type configParam struct {
	name string
	get  func(s *Server) string
	set  func(s *Server, value string) error
	// hidden: no pattern of CONFIG GET matches it, as Redis's
	// HIDDEN_CONFIG.
	hidden bool
}

var configParams = []configParam{
	{name: "maxmemory",
		get: func(s *Server) string { return strconv.FormatInt(s.store.MaxMemory(), 10) },
		set: func(s *Server, v string) error {
			n, err := memsize.Parse(v)
			if err != nil {
				return err
			}
			s.store.SetMaxMemory(n)
			return nil
		}},
	{name: "maxmemory-policy",
		get: func(s *Server) string { return s.store.EvictionPolicy().String() },
		set: func(s *Server, v string) error {
			p, err := engine.ParseEvictionPolicy(v)
			if err != nil {
				return errors.New("argument(s) must be one of the following: " + strings.Join(engine.PolicyNames(), ", "))
			}
			s.store.SetEvictionPolicy(p)
			return nil
		}},
	{name: "maxmemory-samples",
		get: func(s *Server) string { return strconv.Itoa(s.store.EvictionParams().Samples) },
		set: evictionParam(1, math.MaxInt32, func(p *engine.EvictionParams, n int) { p.Samples = n })},
	{name: "maxmemory-eviction-tenacity",
		get: func(s *Server) string { return strconv.Itoa(s.store.EvictionParams().Tenacity) },
		set: evictionParam(0, 100, func(p *engine.EvictionParams, n int) { p.Tenacity = n })},
	{name: "lfu-log-factor",
		get: func(s *Server) string { return strconv.Itoa(s.store.EvictionParams().LFULogFactor) },
		set: evictionParam(0, math.MaxInt32, func(p *engine.EvictionParams, n int) { p.LFULogFactor = n })},
	{name: "lfu-decay-time",
		get: func(s *Server) string { return strconv.Itoa(s.store.EvictionParams().LFUDecayTime) },
		set: evictionParam(0, math.MaxInt32, func(p *engine.EvictionParams, n int) { p.LFUDecayTime = n })},
	{name: "maxclients",
		get: func(s *Server) string { return strconv.FormatInt(s.maxClients.Load(), 10) },
		set: func(s *Server, v string) error {
			n, err := redisconfig.Integer(v, 1, math.MaxUint32)
			if err != nil {
				return err
			}
			s.maxClients.Store(n)
			return nil
		}},
	{name: "requirepass",
		get: func(s *Server) string { return *s.requirePass.Load() },
		set: func(s *Server, v string) error {
			s.requirePass.Store(&v)
			s.acl.users.SetDefaultPassword(v)
			return nil
		}},
	{name: "protected-mode",
		get: func(s *Server) string { return yesNo(s.protectedMode.Load()) },
		set: func(s *Server, v string) error {
			on, err := configBool(v)
			if err == nil {
				s.protectedMode.Store(on)
			}
			return err
		}},
	{name: "proto-max-bulk-len",
		get: func(s *Server) string { return strconv.FormatInt(s.maxBulk.Load(), 10) },
		set: func(s *Server, v string) error {
			n, err := memsize.Parse(v)
			if err != nil || n < 1024*1024 {
				return fmt.Errorf("argument must be a memory value of at least 1mb")
			}
			s.maxBulk.Store(n)
			return nil
		}},
	{name: "loglevel",
		get: func(s *Server) string { return logLevelName(s.opts.LogLevel) },
		set: func(s *Server, v string) error {
			lvl, ok := logLevels[strings.ToLower(v)]
			if !ok || s.opts.LogLevel == nil {
				return fmt.Errorf("argument(s) must be one of the following: debug, verbose, notice, warning")
			}
			s.opts.LogLevel.Set(lvl)
			return nil
		}},
	{name: "zset-max-listpack-entries", get: zsetListpack.getEntries, set: zsetListpack.setEntries},
	{name: "zset-max-ziplist-entries", get: zsetListpack.getEntries, set: zsetListpack.setEntries},
	{name: "zset-max-listpack-value", get: zsetListpack.getValue, set: zsetListpack.setValue},
	{name: "zset-max-ziplist-value", get: zsetListpack.getValue, set: zsetListpack.setValue},
	{name: "stream-node-max-entries", get: streamNode.getEntries, set: streamNode.setEntries},
	{name: "stream-node-max-bytes", get: streamNode.getValue, set: streamNode.setValue},
	{name: "hash-max-listpack-entries", get: hashListpack.getEntries, set: hashListpack.setEntries},
	{name: "hash-max-ziplist-entries", get: hashListpack.getEntries, set: hashListpack.setEntries},
	{name: "hash-max-listpack-value", get: hashListpack.getValue, set: hashListpack.setValue},
	{name: "hash-max-ziplist-value", get: hashListpack.getValue, set: hashListpack.setValue},
	{name: "set-max-intset-entries",
		get: func(s *Server) string { return strconv.FormatInt(s.store.IntsetLimit(), 10) },
		set: func(s *Server, v string) error {
			n, err := redisconfig.Integer(v, 0, math.MaxInt64)
			if err == nil {
				s.store.SetIntsetLimit(n)
			}
			return err
		}},
	{name: "slowlog-log-slower-than", get: getSlowlogSlowerThan, set: setSlowlogSlowerThan},
	{name: "slowlog-max-len", get: getSlowlogMaxLen, set: setSlowlogMaxLen},
	{name: "acllog-max-len",
		get: func(s *Server) string { return strconv.FormatInt(s.acl.log.MaxLen(), 10) },
		set: func(s *Server, v string) error {
			n, err := redisconfig.Integer(v, 0, math.MaxInt64)
			if err == nil {
				s.acl.log.SetMaxLen(n)
			}
			return err
		}},
	{name: "latency-monitor-threshold", get: getLatencyThreshold, set: setLatencyThreshold},
	{name: "hll-sparse-max-bytes",
		get: func(s *Server) string { return strconv.FormatInt(s.store.HLLSparseMaxBytes(), 10) },
		set: func(s *Server, v string) error {
			n, err := memsize.Parse(v)
			if err == nil {
				s.store.SetHLLSparseMaxBytes(n)
			}
			return err
		}},
	{name: "busy-reply-threshold", get: getBusyThreshold, set: setBusyThreshold},
	// In Redis's order, the old name first.
	{name: "list-max-ziplist-size", get: getListNodeSize, set: setListNodeSize},
	{name: "list-max-listpack-size", get: getListNodeSize, set: setListNodeSize},
	// list-compress-depth is taken and shown, and compresses nothing:
	// lists are held uncompressed (README, deliberate differences).
	{name: "list-compress-depth",
		get: func(s *Server) string { return strconv.FormatInt(s.listCompressDepth.Load(), 10) },
		set: func(s *Server, v string) error {
			n, err := redisconfig.Integer(v, 0, math.MaxInt32)
			if err == nil {
				s.listCompressDepth.Store(n)
			}
			return err
		}},
	{name: "lua-time-limit", get: getBusyThreshold, set: setBusyThreshold},
	{name: "save",
		get: func(s *Server) string { return persist.FormatSavePoints(s.opts.Saver.SavePoints()) },
		set: func(s *Server, v string) error {
			p, err := persist.ParseSavePoints(v)
			if err == nil {
				s.opts.Saver.SetSavePoints(p)
			}
			return err
		}},
	// Protected in Redis 7.0 (enable-protected-configs no): read only.
	{name: "dir", get: func(s *Server) string { return filepath.Dir(s.saverPath()) }, set: protectedConfig},
	{name: "dbfilename", get: func(s *Server) string { return filepath.Base(s.saverPath()) }, set: protectedConfig},
	{name: "appendonly", get: func(*Server) string { return "no" }, set: onlyValue("no")},
	{name: "enable-debug-command", get: func(s *Server) string { return s.opts.EnableDebugCommand }},
	{name: "databases", get: func(s *Server) string { return strconv.Itoa(s.store.Databases()) }},
	{name: "timeout",
		get: func(s *Server) string { return strconv.FormatInt(s.idleTimeout.Load(), 10) },
		set: func(s *Server, v string) error {
			n, err := redisconfig.Integer(v, 0, math.MaxInt32)
			if err == nil {
				s.idleTimeout.Store(n)
				s.notifyLoops() // a loop waiting without a deadline starts counting
			}
			return err
		}},
	{name: "tracking-table-max-keys",
		get: func(s *Server) string { return strconv.FormatInt(s.tracking.MaxKeys(), 10) },
		set: func(s *Server, v string) error {
			n, err := redisconfig.Integer(v, 0, math.MaxInt64)
			if err != nil {
				return err
			}
			s.tracking.SetMaxKeys(n)
			return nil
		}},
	{name: "notify-keyspace-events",
		get: func(s *Server) string { return s.keyEvents.events.Classes().String() },
		set: func(s *Server, v string) error {
			classes, err := commands.ParseEventClasses(v)
			if err == nil {
				s.setKeyspaceEvents(classes)
			}
			return err
		}},
	{name: "port", get: func(s *Server) string { return strconv.Itoa(s.port()) }, set: (*Server).setPort},
	{name: "client-query-buffer-limit", get: func(*Server) string { return strconv.Itoa(resp.DefaultMaxQuery) },
		set: onlyCurrent(func(*Server) string { return strconv.Itoa(resp.DefaultMaxQuery) }, "bounds a query at 1 GiB")},
	{name: "client-output-buffer-limit",
		get: func(s *Server) string {
			return "normal 0 0 0 slave " + replicaOutputLimit.String() + " pubsub " + s.pubsubLimit.Load().String()
		},
		set: setOutputLimits},
	// What the server listens on, chosen at start (--addr, --tls-port,
	// --unixsocket): CONFIG SET takes only what it is.
	{name: "bind", get: func(s *Server) string { return s.listening().bind },
		set: onlyCurrent(func(s *Server) string { return s.listening().bind }, "binds at start (--addr)")},
	{name: "tls-port", get: func(s *Server) string { return strconv.Itoa(s.listening().tlsPort) },
		set: onlyCurrent(func(s *Server) string { return strconv.Itoa(s.listening().tlsPort) }, "opens its TLS port at start (--tls-port)")},
	{name: "unixsocket", get: func(s *Server) string { return s.listening().unixSocket }},
	{name: "aclfile", get: func(s *Server) string { return s.opts.ACLFile }},
	// Fixed here: the expiry sweeper runs every 100 ms (hz 10).
	{name: "hz", get: func(*Server) string { return "10" }, set: onlyCurrent(func(*Server) string { return "10" }, "sweeps expired keys every 100 ms")},
}

// evictionParam sets one of the store's EvictionParams to an integer
// between lo and hi.
func evictionParam(lo, hi int64, set func(*engine.EvictionParams, int)) func(*Server, string) error {
	return func(s *Server, v string) error {
		n, err := redisconfig.Integer(v, lo, hi)
		if err != nil {
			return err
		}
		s.store.TuneEviction(func(p *engine.EvictionParams) { set(p, int(n)) })
		return nil
	}
}

// onlyCurrent accepts setting a parameter to the value it has, and refuses
// another, saying why the server cannot change it.
func onlyCurrent(get func(*Server) string, why string) func(*Server, string) error {
	return func(s *Server, v string) error {
		if cur := get(s); v != cur {
			return fmt.Errorf("stampedeless %s; only %q is accepted", why, cur)
		}
		return nil
	}
}

// listenAddrs are what the server listens on, as bind, tls-port and
// unixsocket show them.
type listenAddrs struct {
	bind       string
	tlsPort    int
	unixSocket string
}

func (s *Server) listening() listenAddrs {
	s.mu.Lock()
	defer s.mu.Unlock()
	var la listenAddrs
	var hosts []string
	for _, l := range s.listeners {
		switch a := l.Addr().(type) {
		case *net.UnixAddr:
			la.unixSocket = a.Name
		case *net.TCPAddr:
			if isTLS(l) {
				la.tlsPort = a.Port
				continue
			}
			host := a.IP.String()
			if a.IP.IsUnspecified() {
				host = "*"
			}
			if !slices.Contains(hosts, host) {
				hosts = append(hosts, host)
			}
		}
	}
	la.bind = strings.Join(hosts, " ")
	return la
}

// getBusyThreshold and setBusyThreshold are busy-reply-threshold and its
// old name lua-time-limit, in milliseconds. A new value applies to the
// scripts that start after; 0 is never busy.
func getBusyThreshold(s *Server) string {
	return strconv.FormatInt(s.scripts.thresholdMillis.Load(), 10)
}

func setBusyThreshold(s *Server, v string) error {
	n, err := redisconfig.Integer(v, 0, math.MaxInt64)
	if err != nil {
		return err
	}
	s.scripts.setThreshold(n)
	return nil
}

// getListNodeSize and setListNodeSize are list-max-listpack-size and its
// old name list-max-ziplist-size: the bound of a list's nodes, entries if
// positive, 4 KB to 64 KB for -1 to -5 (engine.Store.SetListMaxListpackSize).
func getListNodeSize(s *Server) string {
	return strconv.FormatInt(s.store.ListMaxListpackSize(), 10)
}

func setListNodeSize(s *Server, v string) error {
	n, err := redisconfig.Integer(v, math.MinInt32, math.MaxInt32)
	if err == nil {
		s.store.SetListMaxListpackSize(n)
	}
	return err
}

// replicaOutputLimit is the replica class of client-output-buffer-limit,
// Redis's default; stampedeless has no replicas to apply it to.
var replicaOutputLimit = OutputLimit{Hard: 256 << 20, Soft: 64 << 20, SoftTime: 60 * time.Second}

// setOutputLimits sets client-output-buffer-limit, "<class> <hard> <soft>
// <soft seconds>" for one class or more, checked whole as Redis does. Only
// the pubsub class applies here: normal clients are bounded by the write
// timeout and there are no replicas, so those classes keep their values.
func setOutputLimits(s *Server, v string) error {
	f := strings.Fields(v)
	if len(f)%4 != 0 {
		return errors.New("Wrong number of arguments in buffer limit configuration.")
	}
	var pubsub *OutputLimit
	for i := 0; i < len(f); i += 4 {
		l, err := ParseOutputLimit(strings.Join(f[i+1:i+4], " "))
		switch class := strings.ToLower(f[i]); {
		case class != "normal" && class != "slave" && class != "replica" && class != "pubsub":
			return errors.New("Invalid client class specified in buffer limit configuration.")
		case err != nil:
			return err
		case class == "pubsub":
			pubsub = &l
		case class == "normal" && l != OutputLimit{}:
			return errors.New("stampedeless bounds normal clients by its write timeout; only 'normal 0 0 0' is accepted")
		case class != "normal" && l != replicaOutputLimit:
			return errors.New("stampedeless has no replicas; only 'replica " + replicaOutputLimit.String() + "' is accepted")
		}
	}
	if pubsub != nil {
		s.pubsubLimit.Store(pubsub)
	}
	return nil
}

// onlyValue accepts setting a parameter to the one value it has: nothing
// persists, so save "" and appendonly no are all there is.
func onlyValue(allowed string) func(*Server, string) error {
	return func(_ *Server, v string) error {
		if !strings.EqualFold(v, allowed) {
			return fmt.Errorf("stampedeless keeps no data on disk; only %q is accepted", allowed)
		}
		return nil
	}
}

var logLevels = map[string]slog.Level{
	"debug": slog.LevelDebug, "verbose": slog.LevelDebug,
	"notice": slog.LevelInfo, "warning": slog.LevelWarn,
}

func logLevelName(v *slog.LevelVar) string {
	if v == nil {
		return "notice"
	}
	switch l := v.Level(); {
	case l <= slog.LevelDebug:
		return "debug"
	case l <= slog.LevelInfo:
		return "notice"
	}
	return "warning"
}

func init() {
	for i := range redisconfig.Params {
		p := &redisconfig.Params[i]
		cp := configParam{name: p.Name, hidden: p.Hidden,
			get: func(s *Server) string { return s.inertConfig.Get(p) }}
		switch {
		case replicaParams[p.Name] || replicaParams[p.Alias]:
			cp.set = func(s *Server, v string) error { return s.setReplicaParam(p, v) }
		case p.Check != nil:
			cp.set = func(s *Server, v string) error { return s.inertConfig.Set(p, v) }
		}
		configParams = append(configParams, cp)
	}
}

func findConfigParam(name string) *configParam {
	for i := range configParams {
		if configParams[i].name == name {
			return &configParams[i]
		}
	}
	return nil
}

// cmdConfigGet implements CONFIG GET parameter [parameter ...] as Redis 7
// does: a name without glob characters is looked up ignoring case and
// echoed as given, a pattern matches names ignoring case, and a parameter
// named by several arguments is reported once. The reply is a map (a flat
// array in RESP2).
func cmdConfigGet(c *Conn, args [][]byte) {
	var found []*configParam
	var names []string
	for _, a := range args[2:] {
		if !bytes.ContainsAny(a, "[*?") {
			if p := findConfigParam(string(resp.Lower(a))); p != nil && !slices.Contains(found, p) {
				found, names = append(found, p), append(names, string(a))
			}
			continue
		}
		pattern := resp.Lower(a)
		for i := range configParams {
			if p := &configParams[i]; !p.hidden && !slices.Contains(found, p) && glob.Match(pattern, p.name) {
				found, names = append(found, p), append(names, p.name)
			}
		}
	}
	c.w.Map(len(found))
	for i, p := range found {
		c.w.BulkString(names[i])
		c.w.BulkString(p.get(c.srv))
	}
}

// cmdConfigSet implements CONFIG SET parameter value [parameter value ...]
// as Redis 7 does: every name is checked first, and the first that is
// unknown, immutable or repeated is the error, named as given. Then the
// values are set in order; if one is refused, the parameters already set
// get their old values back.
func cmdConfigSet(c *Conn, args [][]byte) {
	if len(args)%2 != 0 {
		c.w.Error(commands.ErrSyntax)
		return
	}
	pairs := args[2:]
	params := make([]*configParam, 0, len(pairs)/2)
	for i := 0; i < len(pairs); i += 2 {
		name := string(pairs[i])
		p := findConfigParam(string(resp.Lower(pairs[i])))
		failed := "ERR CONFIG SET failed (possibly related to argument '" + name + "') - "
		switch {
		case p == nil:
			c.w.Error("ERR Unknown option or number of arguments for CONFIG SET - '" + name + "'")
			return
		case p.set == nil:
			c.w.Error(failed + "can't set immutable config")
			return
		case slices.Contains(params, p):
			c.w.Error(failed + "duplicate parameter")
			return
		}
		params = append(params, p)
	}
	old := make([]string, len(params))
	for i, p := range params {
		old[i] = p.get(c.srv)
	}
	for i, p := range params {
		if err := p.set(c.srv, string(pairs[2*i+1])); err != nil {
			for j := range i {
				params[j].set(c.srv, old[j])
			}
			c.w.Error("ERR CONFIG SET failed (possibly related to argument '" + p.name + "') - " + err.Error())
			return
		}
	}
	c.w.OK()
}

// cmdConfigResetStat implements CONFIG RESETSTAT: INFO's counters start
// again from zero. The engine's counters feed Prometheus, whose counters
// never reset, so INFO reports them from a baseline taken here instead.
func cmdConfigResetStat(c *Conn, _ [][]byte) {
	s := c.srv
	s.commandsTotal.Store(0)
	s.connectionsSeen.Store(0)
	s.rejectedConns.Store(0)
	s.outputLimitCloses.Store(0)
	s.resetACLStats()
	s.resetCommandStats()
	s.errors.reset()
	base := s.store.Stats()
	s.statsBase.Store(&base)
	c.w.OK()
}

// statsSinceReset is the engine's counters since the last CONFIG RESETSTAT.
func (s *Server) statsSinceReset() engine.Stats {
	st := s.store.Stats()
	if base := s.statsBase.Load(); base != nil {
		st.Hits -= base.Hits
		st.Misses -= base.Misses
		st.Evicted -= base.Evicted
		st.Expired -= base.Expired
	}
	return st
}

// cmdConfigRewrite implements CONFIG REWRITE, answering as a redis-server
// started without a configuration file does: the configuration is the
// command line's, and CONFIG SET's changes last until the process ends.
func cmdConfigRewrite(c *Conn, _ [][]byte) {
	c.w.Error("ERR The server is running without a config file")
}

func cmdConfigHelp(c *Conn, _ [][]byte) {
	commands.WriteHelp(c.w, "CONFIG",
		"GET <pattern>", "    Return parameters matching the glob-like <pattern> and their values.",
		"SET <directive> <value>", "    Set the configuration <directive> to <value>.",
		"RESETSTAT", "    Reset statistics reported by the INFO command.",
		"REWRITE", "    Rewrite the configuration file (there is none: CONFIG SET lasts until the process ends).")
}

// listpackPair is a pair of listpack limits the store sets together, a
// type's *-max-listpack-entries and *-max-listpack-value, under their
// Redis 7 names and their ziplist aliases.
type listpackPair struct {
	get func(*engine.Store) (entries, value int64)
	set func(s *engine.Store, entries, value int64)
}

var (
	zsetListpack = listpackPair{(*engine.Store).ZSetListpackLimits, (*engine.Store).SetZSetListpackLimits}
	hashListpack = listpackPair{(*engine.Store).HashListpackLimits, (*engine.Store).SetHashListpackLimits}
	streamNode   = listpackPair{(*engine.Store).StreamNodeLimits, (*engine.Store).SetStreamNodeLimits}
)

func (p listpackPair) getEntries(s *Server) string {
	n, _ := p.get(s.store)
	return strconv.FormatInt(n, 10)
}

func (p listpackPair) setEntries(s *Server, v string) error {
	n, err := redisconfig.Integer(v, 0, math.MaxInt64)
	if err != nil {
		return err
	}
	_, value := p.get(s.store)
	p.set(s.store, n, value)
	return nil
}

func (p listpackPair) getValue(s *Server) string {
	_, n := p.get(s.store)
	return strconv.FormatInt(n, 10)
}

func (p listpackPair) setValue(s *Server, v string) error {
	n, err := memsize.Parse(v)
	if err != nil || n < 0 {
		return errors.New("argument must be a memory value")
	}
	entries, _ := p.get(s.store)
	p.set(s.store, entries, n)
	return nil
}

// protectedConfig is Redis 7.0's refusal of a protected parameter under
// its default enable-protected-configs no.
func protectedConfig(*Server, string) error { return errors.New("can't set protected config") }

// saverPath is the snapshot file, or where Redis would put one by
// default when snapshots are off (the working directory's dump.rdb).
func (s *Server) saverPath() string {
	if p := s.opts.Saver.Path(); p != "" {
		return p
	}
	wd, err := os.Getwd()
	if err != nil {
		wd = "."
	}
	return filepath.Join(wd, "dump.rdb")
}
