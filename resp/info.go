package resp

import (
	"fmt"
	"net"
	"os"
	"runtime"
	rtmetrics "runtime/metrics"
	"strconv"
	"strings"
	"time"

	"github.com/stampedeless/stampedeless/internal/memsize"
	"github.com/stampedeless/stampedeless/metrics"
)

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
		if _, ok := l.(tlsListener); ok {
			continue
		}
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
	b.field("used_memory", heap)
	b.field("used_memory_human", memsize.Human(int64(heap)))
	b.field("used_memory_rss", residentBytes(total))
	b.field("used_memory_rss_human", memsize.Human(int64(residentBytes(total))))
	b.field("maxmemory", st.MaxCost)
	b.field("maxmemory_human", memsize.Human(st.MaxCost))
	b.field("maxmemory_policy", "allkeys-lfu")
	b.field("cache_cost_bytes", st.Cost)
	b.field("cache_cost_human", memsize.Human(st.Cost))
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
