package resp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"os"
	"runtime"
	rtmetrics "runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/stampedeless/stampedeless/engine"
	"github.com/stampedeless/stampedeless/metrics"
)

func cmdDBSize(c *Conn, _ [][]byte) { c.w.Int(int64(c.srv.store.Len())) }

// cmdFlush implements FLUSHDB and FLUSHALL [ASYNC|SYNC]; there is one database.
func cmdFlush(c *Conn, args [][]byte) {
	async := false
	switch {
	case len(args) == 1:
	case len(args) == 2 && equalFold(args[1], "async"):
		async = true
	case len(args) == 2 && equalFold(args[1], "sync"):
	default:
		c.w.Error(errSyntax)
		return
	}
	c.srv.store.Flush(async)
	if sh := c.srv.opts.Shared; sh != nil {
		sh.Flushed(context.Background())
	}
	c.w.OK()
}

func cmdTime(c *Conn, _ [][]byte) {
	now := time.Now()
	c.w.Array(2)
	c.w.BulkInt(now.Unix())
	c.w.BulkInt(int64(now.Nanosecond() / 1000))
}

// infoSection is one section of INFO's reply.
type infoSection struct {
	name  string
	write func(s *Server, b *infoBuilder)
}

// infoSections lists INFO's sections in order; all of them are in the
// default reply.
var infoSections = []infoSection{
	{"server", (*Server).infoServer},
	{"clients", (*Server).infoClients},
	{"memory", (*Server).infoMemory},
	{"stats", (*Server).infoStats},
	{"keyspace", (*Server).infoKeyspace},
	{"stampede", (*Server).infoStampede},
	{"cluster", (*Server).infoCluster},
}

// infoBuilder writes INFO's "field:value" lines.
type infoBuilder struct{ strings.Builder }

func (b *infoBuilder) field(name string, value any) {
	fmt.Fprintf(b, "%s:%v\r\n", name, value)
}

// cmdInfo implements INFO [section ...]; "all", "everything" and "default"
// select every section.
func cmdInfo(c *Conn, args [][]byte) {
	want := func(string) bool { return true }
	if len(args) > 1 {
		names := make(map[string]bool)
		for _, a := range args[1:] {
			names[string(lower(a))] = true
		}
		if !names["all"] && !names["everything"] && !names["default"] {
			want = func(name string) bool { return names[name] }
		}
	}
	var b infoBuilder
	for _, sec := range infoSections {
		if !want(sec.name) {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\r\n")
		}
		b.WriteString("# " + strings.ToUpper(sec.name[:1]) + sec.name[1:] + "\r\n")
		sec.write(c.srv, &b)
	}
	c.w.BulkString(b.String())
}

func (s *Server) infoServer(b *infoBuilder) {
	uptime := int64(time.Since(s.started) / time.Second)
	b.field("redis_version", RedisVersion)
	b.field("stampedeless_version", s.opts.Version)
	b.field("redis_mode", "standalone")
	b.field("os", runtime.GOOS+" "+runtime.GOARCH)
	b.field("arch_bits", strconv.Itoa(32<<(^uint(0)>>63)))
	b.field("go_version", runtime.Version())
	b.field("process_id", os.Getpid())
	b.field("tcp_port", s.port())
	b.field("uptime_in_seconds", uptime)
	b.field("uptime_in_days", uptime/86400)
}

// port is the TCP port of the first listener, or 0.
func (s *Server) port() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range s.listeners {
		if a, ok := l.Addr().(*net.TCPAddr); ok {
			return a.Port
		}
	}
	return 0
}

func (s *Server) infoClients(b *infoBuilder) {
	b.field("connected_clients", s.connectedClients())
	b.field("maxclients", s.maxClients.Load())
	b.field("blocked_clients", 0)
	b.field("event_loop", boolInt(s.loop != nil))
	b.field("event_loop_clients", s.eventLoopClients())
}

func (s *Server) infoMemory(b *infoBuilder) {
	samples := []rtmetrics.Sample{
		{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/memory/classes/total:bytes"},
	}
	rtmetrics.Read(samples)
	heap, total := samples[0].Value.Uint64(), samples[1].Value.Uint64()
	st := s.store.Stats()
	// Records live in the store's arena, mapped outside Go's heap.
	used := int64(heap) + st.ArenaBytes
	rss := int64(residentBytes(total + uint64(st.ArenaBytes)))
	b.field("used_memory", used)
	b.field("used_memory_human", humanBytes(used))
	b.field("used_memory_rss", rss)
	b.field("used_memory_rss_human", humanBytes(rss))
	b.field("maxmemory", st.MaxCost)
	b.field("maxmemory_human", humanBytes(st.MaxCost))
	b.field("maxmemory_policy", s.store.EvictionPolicy().String())
	b.field("mem_fragmentation_ratio", strconv.FormatFloat(float64(rss)/float64(max(used, 1)), 'f', 2, 64))
	b.field("mem_fragmentation_bytes", rss-used)
	b.field("cache_cost_bytes", st.Cost)
	b.field("cache_cost_human", humanBytes(st.Cost))
	b.field("arena_bytes", st.ArenaBytes)
	b.field("arena_live_bytes", st.ArenaLiveBytes)
	b.field("index_bytes", st.IndexBytes)
}

// residentBytes is the process's resident set size from /proc, or fallback
// where /proc is not available.
func residentBytes(fallback uint64) uint64 {
	data, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return fallback
	}
	fields := strings.Fields(string(data))
	if len(fields) < 2 {
		return fallback
	}
	pages, err := strconv.ParseUint(fields[1], 10, 64)
	if err != nil {
		return fallback
	}
	return pages * uint64(os.Getpagesize())
}

// humanBytes formats n the way Redis's *_human fields do.
func humanBytes(n int64) string {
	const unit = 1024
	f := float64(n)
	for _, suffix := range []string{"B", "K", "M", "G", "T"} {
		if f < unit || suffix == "T" {
			if suffix == "B" {
				return strconv.FormatInt(n, 10) + "B"
			}
			return strconv.FormatFloat(f, 'f', 2, 64) + suffix
		}
		f /= unit
	}
	return ""
}

func (s *Server) infoStats(b *infoBuilder) {
	st := s.statsSinceReset()
	b.field("total_connections_received", s.connectionsSeen.Load())
	b.field("total_commands_processed", s.commandsTotal.Load())
	b.field("rejected_connections", s.rejectedConns.Load())
	b.field("expired_keys", st.Expired)
	// Redis counts every key lost to memory pressure as evicted; ristretto
	// also loses new keys at admission, which are counted here and below.
	b.field("evicted_keys", st.Evicted+st.Rejected)
	b.field("rejected_keys", st.Rejected)
	b.field("keyspace_hits", st.Hits)
	b.field("keyspace_misses", st.Misses)
}

func (s *Server) infoKeyspace(b *infoBuilder) {
	if n := s.store.Len(); n > 0 {
		b.field("db0", fmt.Sprintf("keys=%d,expires=%d,avg_ttl=0", n, s.store.Volatile()))
	}
}

// answerKinds are the labels of stampedeless_fill_answers_total, in INFO's order.
var answerKinds = []string{"fresh", "stale", "stale_if_error", "loaded", "negative", "cooldown", "timeout", "timeout_stale", "error"}

// infoStampede reports each loader's read-through counters, the same ones
// /metrics exports.
func (s *Server) infoStampede(b *infoBuilder) {
	infos := s.opts.Loaders.List()
	m := s.metrics.Fill
	b.field("loaders", len(infos))
	for i, in := range infos {
		name := in.Prefix
		var line strings.Builder
		fmt.Fprintf(&line, "prefix=%s,timeout_ms=%d,in_flight=%d,fills=%d,failures=%d", name,
			in.Timeout.Milliseconds(), in.InFlight, in.Fills, in.Failures)
		for _, kind := range answerKinds {
			fmt.Fprintf(&line, ",answers_%s=%.0f", kind, metrics.Value(m.Answers.WithLabelValues(name, kind)))
		}
		fmt.Fprintf(&line, ",coalesced_waiters=%.0f,refreshes_started=%.0f,refreshes_dropped=%.0f,past_grace=%.0f",
			metrics.Value(m.Coalesced.WithLabelValues(name)),
			metrics.Value(m.Refreshes.WithLabelValues(name, "started")),
			metrics.Value(m.Refreshes.WithLabelValues(name, "dropped")),
			metrics.Value(m.PastGrace.WithLabelValues(name)))
		b.field("loader"+strconv.Itoa(i), line.String())
	}
}

// infoCluster reports --redis mode: whether it is on, whether Redis
// answers, the replicas heard, and the counters /metrics exports.
func (s *Server) infoCluster(b *infoBuilder) {
	sh := s.opts.Shared
	if sh == nil {
		b.field("cluster_mode", "off")
		return
	}
	b.field("cluster_mode", "redis")
	b.field("cluster_prefix", sh.Prefix())
	b.field("cluster_redis_up", boolInt(sh.Available()))
	b.field("cluster_peers", sh.Peers())
	m := s.metrics.Cluster
	for _, r := range []string{"acquired", "contended", "takeover", "lost"} {
		b.field("leases_"+r, int64(metrics.Value(m.Leases.WithLabelValues(r))))
	}
	for _, r := range []string{"hit", "miss"} {
		b.field("shared_lookups_"+r, int64(metrics.Value(m.SharedLookups.WithLabelValues(r))))
	}
	for _, r := range []string{"published", "rejected"} {
		b.field("publications_"+r, int64(metrics.Value(m.Publications.WithLabelValues(r))))
	}
	b.field("invalidations_sent", int64(metrics.Value(m.InvalidationsSent)))
	b.field("invalidations_received", int64(metrics.Value(m.InvalidationsReceived)))
	b.field("lease_wait_fallbacks", int64(metrics.Value(m.LeaseWaitFallbacks)))
	b.field("redis_errors", int64(metrics.Value(m.RedisErrors)))
}

// configParam is one parameter of CONFIG GET and SET. set is nil for
// parameters that cannot change at run time.
type configParam struct {
	name string
	get  func(s *Server) string
	set  func(s *Server, value string) error
}

var configParams = []configParam{
	{name: "maxmemory",
		get: func(s *Server) string { return strconv.FormatInt(s.store.MaxMemory(), 10) },
		set: func(s *Server, v string) error {
			n, err := ParseMemory(v)
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
			switch {
			case errors.Is(err, engine.ErrUnsupportedPolicy):
				return errors.New("stampedeless supports allkeys-lfu and noeviction only")
			case err != nil:
				return errors.New("argument(s) must be one of the following: volatile-lru, volatile-lfu, volatile-random, volatile-ttl, allkeys-lru, allkeys-lfu, allkeys-random, noeviction")
			}
			s.store.SetEvictionPolicy(p)
			return nil
		}},
	{name: "maxclients",
		get: func(s *Server) string { return strconv.FormatInt(s.maxClients.Load(), 10) },
		set: func(s *Server, v string) error {
			n, err := configInteger(v, 1, math.MaxUint32)
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
			return nil
		}},
	{name: "proto-max-bulk-len",
		get: func(s *Server) string { return strconv.FormatInt(s.maxBulk.Load(), 10) },
		set: func(s *Server, v string) error {
			n, err := ParseMemory(v)
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
	{name: "save", get: func(*Server) string { return "" }, set: onlyValue("")},
	{name: "appendonly", get: func(*Server) string { return "no" }, set: onlyValue("no")},
	{name: "databases", get: func(*Server) string { return "1" }},
	{name: "timeout", get: func(*Server) string { return "0" },
		set: func(_ *Server, v string) error {
			n, err := configInteger(v, 0, math.MaxInt32)
			if err == nil && n != 0 {
				err = errors.New("stampedeless never closes idle clients; only 0 is accepted")
			}
			return err
		}},
	{name: "port", get: func(s *Server) string { return strconv.Itoa(s.port()) }},
	{name: "client-query-buffer-limit", get: func(*Server) string { return strconv.Itoa(DefaultMaxQuery) }},
}

// configInteger parses an integer parameter as Redis's numeric
// configuration does, with its error texts.
func configInteger(v string, lo, hi int64) (int64, error) {
	n, ok := parseInteger([]byte(v))
	if !ok {
		return 0, errors.New("argument couldn't be parsed into an integer")
	}
	if n < lo || n > hi {
		return 0, fmt.Errorf("argument must be between %d and %d inclusive", lo, hi)
	}
	return n, nil
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
// named by several arguments is reported once.
func cmdConfigGet(c *Conn, args [][]byte) {
	var found []*configParam
	var names []string
	for _, a := range args[2:] {
		if !bytes.ContainsAny(a, "[*?") {
			if p := findConfigParam(string(lower(a))); p != nil && !slices.Contains(found, p) {
				found, names = append(found, p), append(names, string(a))
			}
			continue
		}
		pattern := lower(a)
		for i := range configParams {
			if p := &configParams[i]; !slices.Contains(found, p) && engine.Match(pattern, p.name) {
				found, names = append(found, p), append(names, p.name)
			}
		}
	}
	c.w.Array(2 * len(found))
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
		c.w.Error(errSyntax)
		return
	}
	pairs := args[2:]
	params := make([]*configParam, 0, len(pairs)/2)
	for i := 0; i < len(pairs); i += 2 {
		name := string(pairs[i])
		p := findConfigParam(string(lower(pairs[i])))
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
		st.Rejected -= base.Rejected
		st.Expired -= base.Expired
	}
	return st
}

func cmdConfigHelp(c *Conn, _ [][]byte) {
	writeHelp(c, "CONFIG",
		"GET <pattern>", "    Return parameters matching the glob-like <pattern> and their values.",
		"SET <directive> <value>", "    Set the configuration <directive> to <value>.",
		"RESETSTAT", "    Reset statistics reported by the INFO command.")
}

// ParseMemory parses a memory size as Redis's configuration does: a number
// with an optional unit b, k (1000), kb (1024), m, mb, g or gb, in any case.
func ParseMemory(s string) (int64, error) {
	units := []struct {
		suffix string
		mult   int64
	}{
		{"gb", 1 << 30}, {"mb", 1 << 20}, {"kb", 1 << 10},
		{"g", 1000 * 1000 * 1000}, {"m", 1000 * 1000}, {"k", 1000}, {"b", 1},
	}
	lowered := strings.ToLower(strings.TrimSpace(s))
	mult := int64(1)
	for _, u := range units {
		if strings.HasSuffix(lowered, u.suffix) {
			lowered, mult = strings.TrimSuffix(lowered, u.suffix), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(lowered, 10, 64)
	if err != nil || n < 0 || (n > 0 && mult > (1<<63-1)/n) {
		return 0, fmt.Errorf("argument must be a memory value")
	}
	return n * mult, nil
}
