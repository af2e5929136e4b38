package server

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"

	"github.com/stampedeless/stampedeless/internal/memsize"
	"github.com/stampedeless/stampedeless/resp"
)

// inertParam is a Redis 7.0 parameter that governs nothing here
// (replication, cluster, AOF, defragmentation, threads, Redis's own TLS
// and process settings): CONFIG GET answers redis-server 7.0.15's default
// until CONFIG SET changes it, and CONFIG SET checks the value as Redis
// does (check, which also gives the form CONFIG GET shows) and keeps it,
// without effect. One that Redis cannot change at run time has no check,
// and is refused as Redis refuses it.
type inertParam struct {
	name string
	// alias, if set, is the name whose value this one shares
	// (slave-priority is replica-priority).
	alias string
	value string
	check func(v string) (string, error)
	// hidden: CONFIG GET answers it by name only (config_hidden.go).
	hidden bool
}

// inertValues are the inert parameters' values that CONFIG SET changed.
type inertValues struct {
	mu sync.Mutex // guards m
	m  map[string]string
}

func (p *inertParam) key() string {
	if p.alias != "" {
		return p.alias
	}
	return p.name
}

func (p *inertParam) get(s *Server) string {
	iv := &s.inertConfig
	iv.mu.Lock()
	defer iv.mu.Unlock()
	if v, ok := iv.m[p.key()]; ok {
		return v
	}
	return p.value
}

func (p *inertParam) set(s *Server, v string) error {
	v, err := p.check(v)
	if err != nil {
		return err
	}
	iv := &s.inertConfig
	iv.mu.Lock()
	defer iv.mu.Unlock()
	if iv.m == nil {
		iv.m = make(map[string]string)
	}
	iv.m[p.key()] = v
	return nil
}

// configParam is the inert parameter's entry in CONFIG's table.
func (p *inertParam) configParam() configParam {
	cp := configParam{name: p.name, get: p.get, hidden: p.hidden}
	if p.check != nil {
		cp.set = p.set
	}
	return cp
}

func init() {
	for i := range inertParams {
		configParams = append(configParams, inertParams[i].configParam())
	}
}

// The checks of Redis's kinds of parameter, with its error texts.

func inertBool(v string) (string, error) {
	switch strings.ToLower(v) {
	case "yes":
		return "yes", nil
	case "no":
		return "no", nil
	}
	return "", errors.New("argument must be 'yes' or 'no'")
}

func inertString(v string) (string, error) { return v, nil }

func inertMemory(v string) (string, error) { return inertMemoryFrom(0)(v) }

// inertMemoryFrom checks a memory value of at least lo bytes.
func inertMemoryFrom(lo int64) func(string) (string, error) {
	return func(v string) (string, error) {
		n, err := memsize.Parse(v)
		switch {
		case err != nil || n < 0:
			return "", errors.New("argument must be a memory value")
		case n < lo:
			return "", fmt.Errorf("argument must be between %d and %d inclusive", lo, int64(math.MaxInt64))
		}
		return strconv.FormatInt(n, 10), nil
	}
}

// inertBacklog checks repl-backlog-size, which Redis raises to its
// smallest backlog, 16 KB.
func inertBacklog(v string) (string, error) {
	v, err := inertMemoryFrom(1)(v)
	if n, _ := strconv.ParseInt(v, 10, 64); err == nil && n < 16<<10 {
		v = strconv.Itoa(16 << 10)
	}
	return v, err
}

// inertNo checks a yes-or-no parameter that this server cannot turn on,
// refusing yes with Redis's text for a build without the feature.
func inertNo(refusal string) func(string) (string, error) {
	return func(v string) (string, error) {
		v, err := inertBool(v)
		if err == nil && v == "yes" {
			err = errors.New(refusal)
		}
		return v, err
	}
}

// inertHostname checks cluster-announce-hostname as Redis does.
func inertHostname(v string) (string, error) {
	for _, r := range v {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '.') {
			return "", errors.New("Hostnames may only contain alphanumeric characters, hyphens or dots")
		}
	}
	return v, nil
}

// inertProcTitle checks proc-title-template as Redis's
// validateProcTitleTemplate: "{{" and "}}" are braces, "{name}" one of its
// variables, a lone "}" itself, and the title it makes (of an empty process name) must not
// be empty.
func inertProcTitle(v string) (string, error) {
	invalid := errors.New("template format is invalid or contains unknown variables")
	// What each variable expands to, empty or not, with an empty title.
	vars := map[string]bool{"title": false, "listen-addr": true, "server-mode": false, "config-file": true,
		"port": true, "tls-port": true, "unixsocket": false}
	nonEmpty := false
	for i := 0; i < len(v); i++ {
		switch {
		case strings.HasPrefix(v[i:], "{{"), strings.HasPrefix(v[i:], "}}"):
			nonEmpty = true
			i++
		case v[i] == '{':
			end := strings.IndexByte(v[i:], '}')
			if end < 0 {
				return "", invalid
			}
			expands, ok := vars[v[i+1:i+end]]
			if !ok {
				return "", invalid
			}
			nonEmpty = nonEmpty || expands
			i += end
		default:
			nonEmpty = true
		}
	}
	if !nonEmpty {
		return "", invalid
	}
	return v, nil
}

func inertInt(lo, hi int64) func(string) (string, error) {
	return func(v string) (string, error) {
		n, err := configInteger(v, lo, hi)
		return strconv.FormatInt(n, 10), err
	}
}

func inertEnum(names ...string) func(string) (string, error) {
	return func(v string) (string, error) {
		for _, n := range names {
			if strings.EqualFold(v, n) {
				return n, nil
			}
		}
		return "", errors.New("argument(s) must be one of the following: " + strings.Join(names, ", "))
	}
}

// inertPercentiles checks latency-tracking-info-percentiles: numbers from
// 0 to 100, any count of them.
func inertPercentiles(v string) (string, error) {
	fields := strings.Fields(v)
	for i, f := range fields {
		x, err := strconv.ParseFloat(f, 64)
		switch {
		case err != nil:
			return "", errors.New("Invalid latency-tracking-info-percentiles parameters")
		case x < 0 || x > 100:
			return "", errors.New("latency-tracking-info-percentiles parameters should sit between [0.0,100.0]")
		}
		fields[i] = strconv.FormatFloat(x, 'f', -1, 64)
	}
	return strings.Join(fields, " "), nil
}

// inertMemoryOrPercent checks maxmemory-clients: a memory value, or a
// percentage of maxmemory.
func inertMemoryOrPercent(v string) (string, error) {
	if p, ok := strings.CutSuffix(v, "%"); ok {
		if n, ok := resp.ParseInt([]byte(p)); ok && n > 100 {
			return "", errors.New("percentage argument must be less or equal to 100")
		} else if ok && n >= 0 {
			return strconv.FormatInt(n, 10) + "%", nil
		}
	} else if n, err := memsize.Parse(v); err == nil && n >= 0 {
		return strconv.FormatInt(n, 10), nil
	}
	return "", errors.New("argument must be a memory or percent value")
}

// inertOOMScores checks oom-score-adj-values: three scores from -2000 to
// 2000.
func inertOOMScores(v string) (string, error) {
	fields := strings.Fields(v)
	if len(fields) != 3 {
		return "", errors.New("wrong number of arguments")
	}
	for _, f := range fields {
		if n, ok := resp.ParseInt([]byte(f)); !ok || n < -2000 || n > 2000 {
			return "", errors.New("Invalid oom-score-adj-values, elements must be between -2000 and 2000.")
		}
	}
	return strings.Join(fields, " "), nil
}

// inertParams are Redis 7.0.15's parameters that are no other entry of
// configParams, in name order.
var inertParams = []inertParam{
	{name: "latency-tracking-info-percentiles", value: "50 99 99.9", check: inertPercentiles},
	{name: "maxmemory-clients", value: "0", check: inertMemoryOrPercent},
	{name: "oom-score-adj-values", value: "0 200 800", check: inertOOMScores},
	{name: "acl-pubsub-default", value: "resetchannels", check: inertEnum("allchannels", "resetchannels")},
	{name: "active-defrag-cycle-max", value: "25", check: inertInt(1, 99)},
	{name: "active-defrag-cycle-min", value: "1", check: inertInt(1, 99)},
	{name: "active-defrag-ignore-bytes", value: "104857600", check: inertMemoryFrom(1)},
	{name: "active-defrag-max-scan-fields", value: "1000", check: inertInt(1, math.MaxInt64)},
	{name: "active-defrag-threshold-lower", value: "10", check: inertInt(0, 1000)},
	{name: "active-defrag-threshold-upper", value: "100", check: inertInt(0, 1000)},
	{name: "active-expire-effort", value: "1", check: inertInt(1, 10)},
	{name: "activedefrag", value: "no", check: inertNo("Active defragmentation cannot be enabled: it requires a Redis server compiled with a modified Jemalloc like the one shipped by default with the Redis source distribution")},
	{name: "activerehashing", value: "yes", check: inertBool},
	{name: "always-show-logo", value: "no"},
	{name: "aof-disable-auto-gc", value: "no", check: inertBool},
	{name: "aof-load-truncated", value: "yes", check: inertBool},
	{name: "aof-rewrite-incremental-fsync", value: "yes", check: inertBool},
	{name: "aof-timestamp-enabled", value: "no", check: inertBool},
	{name: "aof-use-rdb-preamble", value: "yes", check: inertBool},
	{name: "aof_rewrite_cpulist", value: ""},
	{name: "appenddirname", value: "appendonlydir"},
	{name: "appendfilename", value: "appendonly.aof"},
	{name: "appendfsync", value: "everysec", check: inertEnum("everysec", "always", "no")},
	{name: "auto-aof-rewrite-min-size", value: "67108864", check: inertMemory},
	{name: "auto-aof-rewrite-percentage", value: "100", check: inertInt(0, math.MaxInt32)},
	{name: "bgsave_cpulist", value: ""},
	{name: "bind-source-addr", value: "", check: inertString},
	{name: "bio_cpulist", value: ""},
	{name: "cluster-allow-pubsubshard-when-down", value: "yes", check: inertBool},
	{name: "cluster-allow-reads-when-down", value: "no", check: inertBool},
	{name: "cluster-allow-replica-migration", value: "yes", check: inertBool},
	{name: "cluster-announce-bus-port", value: "0", check: inertInt(0, 65535)},
	{name: "cluster-announce-hostname", value: "", check: inertHostname},
	{name: "cluster-announce-ip", value: "", check: inertString},
	{name: "cluster-announce-port", value: "0", check: inertInt(0, 65535)},
	{name: "cluster-announce-tls-port", value: "0", check: inertInt(0, 65535)},
	{name: "cluster-config-file", value: "nodes.conf"},
	{name: "cluster-enabled", value: "no"},
	{name: "cluster-link-sendbuf-limit", value: "0", check: inertMemory},
	{name: "cluster-migration-barrier", value: "1", check: inertInt(0, math.MaxInt32)},
	{name: "cluster-node-timeout", value: "15000", check: inertInt(0, math.MaxInt64)},
	{name: "cluster-port", value: "0"},
	{name: "cluster-preferred-endpoint-type", value: "ip", check: inertEnum("ip", "hostname", "unknown-endpoint")},
	{name: "cluster-replica-no-failover", value: "no", check: inertBool},
	{name: "cluster-replica-validity-factor", value: "10", check: inertInt(0, math.MaxInt32)},
	{name: "cluster-require-full-coverage", value: "yes", check: inertBool},
	{name: "cluster-slave-no-failover", alias: "cluster-replica-no-failover", value: "no", check: inertBool},
	{name: "cluster-slave-validity-factor", alias: "cluster-replica-validity-factor", value: "10", check: inertInt(0, math.MaxInt32)},
	{name: "crash-log-enabled", value: "yes", check: inertBool},
	{name: "crash-memcheck-enabled", value: "yes", check: inertBool},
	{name: "daemonize", value: "no"},
	{name: "disable-thp", value: "yes"},
	{name: "dynamic-hz", value: "yes", check: inertBool},
	{name: "enable-module-command", value: "no"},
	{name: "enable-protected-configs", value: "no"},
	{name: "ignore-warnings", value: "", check: inertString},
	{name: "io-threads", value: "1"},
	{name: "io-threads-do-reads", value: "no"},
	{name: "jemalloc-bg-thread", value: "yes", check: inertBool},
	{name: "latency-tracking", value: "yes", check: inertBool},
	{name: "lazyfree-lazy-eviction", value: "no", check: inertBool},
	{name: "lazyfree-lazy-expire", value: "no", check: inertBool},
	{name: "lazyfree-lazy-server-del", value: "no", check: inertBool},
	{name: "lazyfree-lazy-user-del", value: "no", check: inertBool},
	{name: "lazyfree-lazy-user-flush", value: "no", check: inertBool},
	{name: "logfile", value: ""},
	{name: "masterauth", value: "", check: inertString},
	{name: "masteruser", value: "", check: inertString},
	{name: "min-replicas-max-lag", value: "10", check: inertInt(0, math.MaxInt32)},
	{name: "min-replicas-to-write", value: "0", check: inertInt(0, math.MaxInt32)},
	{name: "min-slaves-max-lag", alias: "min-replicas-max-lag", value: "10", check: inertInt(0, math.MaxInt32)},
	{name: "min-slaves-to-write", alias: "min-replicas-to-write", value: "0", check: inertInt(0, math.MaxInt32)},
	{name: "no-appendfsync-on-rewrite", value: "no", check: inertBool},
	{name: "oom-score-adj", value: "no", check: inertEnum("no", "yes", "relative", "absolute")},
	{name: "pidfile", value: ""},
	{name: "proc-title-template", value: "{title} {listen-addr} {server-mode}", check: inertProcTitle},
	{name: "propagation-error-behavior", value: "ignore", check: inertEnum("ignore", "panic", "panic-on-replicas")},
	{name: "rdb-del-sync-files", value: "no", check: inertBool},
	{name: "rdb-save-incremental-fsync", value: "yes", check: inertBool},
	{name: "rdbchecksum", value: "yes"},
	{name: "rdbcompression", value: "yes", check: inertBool},
	{name: "repl-backlog-size", value: "1048576", check: inertBacklog},
	{name: "repl-backlog-ttl", value: "3600", check: inertInt(0, math.MaxInt64)},
	{name: "repl-disable-tcp-nodelay", value: "no", check: inertBool},
	{name: "repl-diskless-load", value: "disabled", check: inertEnum("disabled", "on-empty-db", "swapdb")},
	{name: "repl-diskless-sync", value: "yes", check: inertBool},
	{name: "repl-diskless-sync-delay", value: "5", check: inertInt(0, math.MaxInt32)},
	{name: "repl-diskless-sync-max-replicas", value: "0", check: inertInt(0, math.MaxInt32)},
	{name: "repl-ping-replica-period", value: "10", check: inertInt(1, math.MaxInt32)},
	{name: "repl-ping-slave-period", alias: "repl-ping-replica-period", value: "10", check: inertInt(1, math.MaxInt32)},
	{name: "repl-timeout", value: "60", check: inertInt(1, math.MaxInt32)},
	{name: "replica-announce-ip", value: "", check: inertString},
	{name: "replica-announce-port", value: "0", check: inertInt(0, 65535)},
	{name: "replica-announced", value: "yes", check: inertBool},
	{name: "replica-ignore-disk-write-errors", value: "no", check: inertBool},
	{name: "replica-ignore-maxmemory", value: "yes", check: inertBool},
	{name: "replica-lazy-flush", value: "no", check: inertBool},
	{name: "replica-priority", value: "100", check: inertInt(0, math.MaxInt32)},
	{name: "replica-read-only", value: "yes", check: inertBool},
	{name: "replica-serve-stale-data", value: "yes", check: inertBool},
	{name: "replicaof", value: ""},
	{name: "sanitize-dump-payload", value: "no", check: inertEnum("no", "yes", "clients")},
	{name: "server_cpulist", value: ""},
	{name: "set-proc-title", value: "yes"},
	{name: "shutdown-on-sigint", value: "default", check: inertEnum("default", "save", "nosave", "now", "force")},
	{name: "shutdown-on-sigterm", value: "default", check: inertEnum("default", "save", "nosave", "now", "force")},
	{name: "shutdown-timeout", value: "10", check: inertInt(0, math.MaxInt32)},
	{name: "slave-announce-ip", alias: "replica-announce-ip", value: "", check: inertString},
	{name: "slave-announce-port", alias: "replica-announce-port", value: "0", check: inertInt(0, 65535)},
	{name: "slave-ignore-maxmemory", alias: "replica-ignore-maxmemory", value: "yes", check: inertBool},
	{name: "slave-lazy-flush", alias: "replica-lazy-flush", value: "no", check: inertBool},
	{name: "slave-priority", alias: "replica-priority", value: "100", check: inertInt(0, math.MaxInt32)},
	{name: "slave-read-only", alias: "replica-read-only", value: "yes", check: inertBool},
	{name: "slave-serve-stale-data", alias: "replica-serve-stale-data", value: "yes", check: inertBool},
	{name: "slaveof", alias: "replicaof", value: ""},
	{name: "socket-mark-id", value: "0"},
	{name: "stop-writes-on-bgsave-error", value: "yes", check: inertBool},
	{name: "supervised", value: "no"},
	{name: "syslog-enabled", value: "no"},
	{name: "syslog-facility", value: "local0"},
	{name: "syslog-ident", value: "redis"},
	{name: "tcp-backlog", value: "511"},
	{name: "tcp-keepalive", value: "300", check: inertInt(0, math.MaxInt32)},
	{name: "tls-auth-clients", value: "yes", check: inertEnum("no", "yes", "optional")},
	{name: "tls-ca-cert-dir", value: "", check: inertString},
	{name: "tls-ca-cert-file", value: "", check: inertString},
	{name: "tls-cert-file", value: "", check: inertString},
	{name: "tls-ciphers", value: "", check: inertString},
	{name: "tls-ciphersuites", value: "", check: inertString},
	{name: "tls-client-cert-file", value: "", check: inertString},
	{name: "tls-client-key-file", value: "", check: inertString},
	{name: "tls-client-key-file-pass", value: "", check: inertString},
	{name: "tls-cluster", value: "no", check: inertNo("Unable to update TLS configuration. Check server logs.")},
	{name: "tls-dh-params-file", value: "", check: inertString},
	{name: "tls-key-file", value: "", check: inertString},
	{name: "tls-key-file-pass", value: "", check: inertString},
	{name: "tls-prefer-server-ciphers", value: "no", check: inertBool},
	{name: "tls-protocols", value: "", check: inertString},
	{name: "tls-replication", value: "no", check: inertNo("Unable to update TLS configuration. Check server logs.")},
	{name: "tls-session-cache-size", value: "20480", check: inertInt(0, math.MaxInt32)},
	{name: "tls-session-cache-timeout", value: "300", check: inertInt(0, math.MaxInt32)},
	{name: "tls-session-caching", value: "yes", check: inertBool},
	{name: "unixsocketperm", value: "0"},
}
