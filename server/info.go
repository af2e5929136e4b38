package server

import (
	"bytes"
	"fmt"
	"maps"
	"net"
	"os"
	"runtime"
	rtmetrics "runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/stampedeless/stampedeless/commands"
	"github.com/stampedeless/stampedeless/engine"
	"github.com/stampedeless/stampedeless/internal/memsize"
	"github.com/stampedeless/stampedeless/internal/rusage"
	"github.com/stampedeless/stampedeless/metrics"
	"github.com/stampedeless/stampedeless/resp"
	"github.com/stampedeless/stampedeless/server/internal/pubsub"
)

// infoSection is one section of INFO's reply.
type infoSection struct {
	name  string
	write func(s *Server, b *infoBuilder)
	// extra sections are left out of INFO without arguments and of INFO
	// default, as Redis leaves out commandstats.
	extra bool
}

// infoSections lists INFO's own sections in Redis's order; the families'
// sections (the read-through family's stampede) follow (Server.info).
var infoSections = []infoSection{
	{name: "server", write: (*Server).infoServer},
	{name: "clients", write: (*Server).infoClients},
	{name: "memory", write: (*Server).infoMemory},
	{name: "persistence", write: (*Server).infoPersistence},
	{name: "stats", write: (*Server).infoStats},
	{name: "replication", write: (*Server).infoReplication},
	{name: "cpu", write: (*Server).infoCPU},
	{name: "commandstats", write: (*Server).infoCommandStats, extra: true},
	{name: "errorstats", write: (*Server).infoErrorStats},
	{name: "cluster", write: (*Server).infoCluster},
	{name: "keyspace", write: (*Server).infoKeyspace},
}

// infoBuilder writes INFO's "field:value" lines.
type infoBuilder struct{ strings.Builder }

func (b *infoBuilder) field(name string, value any) {
	fmt.Fprintf(b, "%s:%v\r\n", name, value)
}

// cmdInfo implements INFO [section ...] as Redis's genInfoSectionDict
// reads its arguments, in any case and order: "default" (also no
// argument) selects the sections but the extra ones, "all" and
// "everything" select every section, other names select themselves, and
// names of no section select nothing, so they may make the reply empty.
// Sections come in their fixed order whatever the order asked. The text is a verbatim string in
// RESP3, as in Redis.
func cmdInfo(c *Conn, args [][]byte) {
	all, dflt := false, len(args) == 1
	names := make(map[string]bool)
	for _, a := range args[1:] {
		switch name := string(resp.Lower(a)); name {
		case "all", "everything":
			all = true
		case "default":
			dflt = true
		default:
			names[name] = true
		}
	}
	var b infoBuilder
	for _, sec := range c.srv.info {
		if !all && !names[sec.name] && (!dflt || sec.extra) {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\r\n")
		}
		b.WriteString("# " + strings.ToUpper(sec.name[:1]) + sec.name[1:] + "\r\n")
		sec.write(c.srv, &b)
	}
	c.w.Verbatim("txt", b.String())
}

func (s *Server) infoServer(b *infoBuilder) {
	uptime := int64(time.Since(s.started) / time.Second)
	b.field("redis_version", RedisVersion)
	b.field("stampedeless_version", s.opts.Version)
	b.field("redis_mode", "standalone")
	b.field("os", runtime.GOOS+" "+runtime.GOARCH)
	b.field("arch_bits", strconv.Itoa(32<<(^uint(0)>>63)))
	b.field("multiplexing_api", s.multiplexingAPI())
	b.field("go_version", runtime.Version())
	b.field("process_id", os.Getpid())
	b.field("tcp_port", s.port())
	b.field("uptime_in_seconds", uptime)
	b.field("uptime_in_days", uptime/86400)
}

// multiplexingAPI is INFO's multiplexing_api: what the event loops wait
// with, and whether they batch their reads and writes through io_uring
// (all of them do, or none, unless a ring failed).
func (s *Server) multiplexingAPI() string {
	if s.loops.URing() {
		return "epoll+io_uring"
	}
	return "epoll"
}

// port is the TCP port of the first listener, or 0.
func (s *Server) port() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range s.listeners {
		if a, ok := l.Addr().(*net.TCPAddr); ok && !isTLS(l) {
			return a.Port
		}
	}
	return 0
}

func (s *Server) infoClients(b *infoBuilder) {
	b.field("connected_clients", s.connectedClients())
	b.field("maxclients", s.maxClients.Load())
	b.field("client_recent_max_output_buffer", s.recentMaxOutputBuffer())
	// Redis counts the clients CLIENT PAUSE holds as blocked.
	b.field("blocked_clients", s.blocked.Clients()+s.pause.Held())
	trackingClients, _, _, _ := s.tracking.Stats()
	b.field("tracking_clients", trackingClients)
	b.field("pubsub_clients", s.pubsub.Clients())
	b.field("event_loops", s.loops.Len())
	b.field("waiting_clients", s.waitingClients())
	b.field("client_pause", s.pause.Shown())
	b.field("paused_clients", s.pause.Held())
	clients, keys := s.watches.Stats()
	b.field("watching_clients", clients)
	b.field("total_watched_keys", keys)
}

// usedMemory is used_memory, as Redis counts it: the bytes allocated for
// what the process holds, not what its allocators keep around them. Here
// that is Go's live heap as of its last collection (garbage not yet
// collected is as jemalloc's freed pages, outside used_memory) and the
// arena's live records (space freed in a segment but not yet compacted is
// its fragmentation). RSS beyond it is mem_fragmentation_bytes.
func usedMemory(heapLive uint64, st engine.Stats) int64 {
	return int64(heapLive) + st.ArenaLiveBytes
}

// goMemory reads the Go heap's live bytes as of the last collection
// (used_memory) and all the memory the runtime holds.
func goMemory() (heapLive, total uint64) {
	samples := []rtmetrics.Sample{
		{Name: "/gc/heap/live:bytes"},
		{Name: "/memory/classes/total:bytes"},
	}
	rtmetrics.Read(samples)
	return samples[0].Value.Uint64(), samples[1].Value.Uint64()
}

func (s *Server) infoMemory(b *infoBuilder) {
	heap, total := goMemory()
	st := s.store.Stats()
	used := usedMemory(heap, st)
	rss := int64(residentBytes(total + uint64(st.ArenaBytes)))
	b.field("used_memory", used)
	b.field("used_memory_human", memsize.Human(used))
	b.field("used_memory_rss", rss)
	b.field("used_memory_rss_human", memsize.Human(rss))
	b.field("maxmemory", st.MaxCost)
	b.field("maxmemory_human", memsize.Human(st.MaxCost))
	b.field("maxmemory_policy", s.store.EvictionPolicy().String())
	b.field("mem_fragmentation_ratio", strconv.FormatFloat(float64(rss)/float64(max(used, 1)), 'f', 2, 64))
	b.field("mem_fragmentation_bytes", rss-used)
	b.field("cache_cost_bytes", st.Cost)
	b.field("cache_cost_human", memsize.Human(st.Cost))
	b.field("arena_bytes", st.ArenaBytes)
	b.field("arena_live_bytes", st.ArenaLiveBytes)
	b.field("index_bytes", st.IndexBytes)
	s.infoScripts(b)
	// What the memory bound does not count: Redis's replication and AOF
	// buffers, here what the process holds beside the store's records
	// (used_memory less it is what --max-memory bounds). Nothing is
	// freed in the background.
	b.field("mem_not_counted_for_evict", max(used-st.Cost, 0))
	b.field("lazyfree_pending_objects", 0)
	b.field("lazyfreed_objects", 0)
}

// residentBytes is the process's resident set size from /proc, or fallback
// where /proc is not available.
func residentBytes(fallback uint64) uint64 {
	if total, _, ok := memsize.Resident(); ok {
		return uint64(total)
	}
	return fallback
}

func (s *Server) infoStats(b *infoBuilder) {
	st := s.statsSinceReset()
	b.field("total_connections_received", s.connectionsSeen.Load())
	b.field("total_commands_processed", s.commandsTotal.Load())
	b.field("rejected_connections", s.rejectedConns.Load())
	b.field("expired_keys", st.Expired)
	b.field("evicted_keys", st.Evicted)
	b.field("keyspace_hits", st.Hits)
	b.field("keyspace_misses", st.Misses)
	b.field("pubsub_channels", s.pubsub.Count(pubsub.Channel))
	b.field("pubsub_patterns", s.pubsub.Count(pubsub.Pattern))
	b.field("pubsubshard_channels", s.pubsub.Count(pubsub.Shard))
	b.field("migrate_cached_sockets", s.migrate.Len())
	_, keys, items, prefixes := s.tracking.Stats()
	b.field("tracking_total_keys", keys)
	b.field("tracking_total_items", items)
	b.field("tracking_total_prefixes", prefixes)
	b.field("client_output_buffer_limit_disconnections", s.outputLimitCloses.Load())
	b.field("total_error_replies", s.errors.totalCount())
	// Redis 7.4's name: EVAL scripts the cache's bounds pushed out.
	b.field("evicted_scripts", s.scripts.eng.Evicted())
	s.infoACL(b)
}

// infoKeyspace writes a line for each database that holds keys.
func (s *Server) infoKeyspace(b *infoBuilder) {
	for n := range s.store.Databases() {
		db := s.store.DB(n)
		if keys := db.Len(); keys > 0 {
			expires, avg := db.VolatileTTL()
			b.field("db"+strconv.Itoa(n), fmt.Sprintf("keys=%d,expires=%d,avg_ttl=%d", keys, expires, avg.Milliseconds()))
		}
	}
}

// infoPersistence says there is none, in the fields clients look at
// (loading, which some wait on; the last save's status).
func (s *Server) infoPersistence(b *infoBuilder) {
	in := s.opts.Saver.Info()
	b.field("loading", 0) // the load at start ends before serving begins
	b.field("async_loading", 0)
	b.field("rdb_changes_since_last_save", in.ChangesSinceSave)
	b.field("rdb_bgsave_in_progress", commands.BoolInt(in.InProgress))
	b.field("rdb_last_save_time", in.LastSave.Unix())
	b.field("rdb_last_bgsave_status", okErr(in.LastOK))
	b.field("rdb_last_bgsave_time_sec", seconds(in.LastDuration))
	b.field("rdb_current_bgsave_time_sec", seconds(in.CurrentDuration))
	b.field("rdb_saves", in.Saves)
	b.field("rdb_last_load_keys_expired", in.Loaded.Expired)
	b.field("rdb_last_load_keys_loaded", in.Loaded.Keys)
	b.field("aof_enabled", 0)
	b.field("aof_rewrite_in_progress", 0)
	b.field("aof_last_bgrewrite_status", "ok")
	b.field("aof_last_write_status", "ok")
}

// infoReplication says this is a master without replicas, which WAIT
// also answers.
func (s *Server) infoReplication(b *infoBuilder) {
	b.field("role", "master")
	b.field("connected_slaves", 0)
	if s.replicaMinimum.on() {
		b.field("min_slaves_good_slaves", 0)
	}
	b.field("master_failover_state", "no-failover")
	b.field("master_repl_offset", 0)
	b.field("repl_backlog_active", 0)
}

// infoCPU reports the process's CPU time in seconds, as Redis does from
// getrusage, where the platform has it.
func (s *Server) infoCPU(b *infoBuilder) {
	if sys, user, ok := rusage.CPU(); ok {
		b.field("used_cpu_sys", fmt.Sprintf("%.6f", sys.Seconds()))
		b.field("used_cpu_user", fmt.Sprintf("%.6f", user.Seconds()))
	}
}

// infoCommandStats reports each command and subcommand called or refused
// since the start (or the last CONFIG RESETSTAT) as Redis's cmdstat lines
// do, from the counters /metrics exports: calls that ran, the µs they took
// as the slow log's clock measures them, the calls refused before they ran
// (rejected_calls) and those that ran and replied an error (failed_calls).
// A subcommand is cmdstat_container|subcommand.
func (s *Server) infoCommandStats(b *infoBuilder) {
	line := func(cmd *command) {
		ok, fail, rejected := cmd.counters.sinceReset()
		if ok+fail+rejected == 0 {
			return
		}
		calls, usec, perCall := ok+fail, cmd.counters.usec.Load(), 0.0
		if calls > 0 {
			perCall = float64(usec) / float64(calls)
		}
		b.field("cmdstat_"+cmd.Name, fmt.Sprintf("calls=%d,usec=%d,usec_per_call=%.2f,rejected_calls=%d,failed_calls=%d",
			calls, usec, perCall, rejected, fail))
	}
	for _, cmd := range s.sortedCommands() {
		line(cmd)
		for _, sub := range cmd.subcommands {
			line(sub)
		}
	}
}

// sinceReset are the command's calls that succeeded, failed and were
// refused since the last CONFIG RESETSTAT.
func (c *counters) sinceReset() (ok, fail, rejected int64) {
	return c.ok.value() - c.okBase.Load(), c.fail.value() - c.failBase.Load(), c.rejected.value() - c.rejectedBase.Load()
}

// reset makes INFO's commandstats start again from zero.
func (c *counters) reset() {
	c.okBase.Store(c.ok.value())
	c.failBase.Store(c.fail.value())
	c.rejectedBase.Store(c.rejected.value())
	c.usec.Store(0)
}

// resetCommandStats starts INFO's commandstats again from zero.
func (s *Server) resetCommandStats() {
	for _, cmd := range s.table {
		cmd.counters.reset()
		for _, sub := range cmd.subcommands {
			sub.counters.reset()
		}
	}
}

// infoCluster reports --redis mode: whether it is on, whether Redis
// answers, the replicas heard, and the counters /metrics exports. Redis
// Cluster is never enabled, as cluster_enabled says for Redis's clients.
func (s *Server) infoCluster(b *infoBuilder) {
	b.field("cluster_enabled", 0)
	sh := s.opts.Shared
	if sh == nil {
		b.field("cluster_mode", "off")
		return
	}
	b.field("cluster_mode", "redis")
	b.field("cluster_prefix", sh.Prefix())
	b.field("cluster_redis_up", commands.BoolInt(sh.Available()))
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
	for _, d := range []string{"sent", "received"} {
		b.field("pubsub_relayed_"+d, int64(metrics.Value(m.PubSubRelayed.WithLabelValues(d))))
	}
	for _, e := range []string{"stored", "heard", "refused", "resync"} {
		b.field("loader_registrations_"+e, int64(metrics.Value(m.LoaderRegistrations.WithLabelValues(e))))
	}
	b.field("redis_errors", int64(metrics.Value(m.RedisErrors)))
}

func okErr(ok bool) string {
	if ok {
		return "ok"
	}
	return "err"
}

// seconds is a duration in whole seconds as INFO gives one, -1 for none.
func seconds(d time.Duration) int64 {
	if d < 0 {
		return -1
	}
	return int64(d / time.Second)
}

// errorStats counts the error replies sent to clients by their code, the
// error's first word, as Redis's INFO errorstats and total_error_replies
// do; a script's commands' errors are counted as they reply, and the
// script's own reply only if it is not one of them (countReply). As in
// Redis, at most errorCodesLimit codes are kept: the errors of a code past
// it count in the total alone.
type errorStats struct {
	mu     sync.Mutex
	byCode map[string]int64
	total  int64
}

// errorCodesLimit is Redis's ERRORSTATS_LIMIT.
const errorCodesLimit = 128

// countAt counts the error reply c wrote at offset at, if it is one.
func (e *errorStats) countAt(c *Conn, at int) {
	if c.w.IsErrorAt(at) {
		e.count(c.w.Buffered()[at:])
	}
}

// count counts the error reply that starts reply.
func (e *errorStats) count(reply []byte) {
	msg := reply[1:]
	end := bytes.IndexAny(msg, " \r")
	if end < 0 {
		end = len(msg)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.total++
	code := string(msg[:end])
	if _, ok := e.byCode[code]; ok || len(e.byCode) < errorCodesLimit {
		if e.byCode == nil {
			e.byCode = make(map[string]int64)
		}
		e.byCode[code]++
	}
}

func (e *errorStats) totalCount() int64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.total
}

// reset starts the counts again (CONFIG RESETSTAT).
func (e *errorStats) reset() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.byCode, e.total = nil, 0
}

// infoErrorStats writes errorstat_<code>:count=n for each code, in name
// order.
func (s *Server) infoErrorStats(b *infoBuilder) {
	e := &s.errors
	e.mu.Lock()
	codes := make([]string, 0, len(e.byCode))
	for code := range e.byCode {
		codes = append(codes, code)
	}
	counts := maps.Clone(e.byCode)
	e.mu.Unlock()
	slices.Sort(codes)
	for _, code := range codes {
		b.field("errorstat_"+code, fmt.Sprintf("count=%d", counts[code]))
	}
}
