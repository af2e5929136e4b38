package cluster

import (
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// minPoolSize is the least number of connections a replica keeps to Redis:
// every flight in progress may be polling for a lease or a fleet slot at
// once, and waiting for a pooled connection must not look like a dead Redis.
const minPoolSize = 128

// RedisOptions turns the --redis flag into go-redis options. spec is a
// redis:// (or rediss://) URL or host:port for one server; a comma-separated
// list of host:port (or URLs) for the seed nodes of a Redis Cluster; or,
// with masterName, the addresses of Sentinels. forceCluster treats a single
// address as a Redis Cluster seed. Every operation is bounded by timeout and
// never retried, so a dead Redis costs a command at most that long.
func RedisOptions(spec, masterName string, forceCluster bool, timeout time.Duration) (*redis.UniversalOptions, error) {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	opts := &redis.UniversalOptions{
		MasterName:            masterName,
		IsClusterMode:         forceCluster,
		DialTimeout:           timeout,
		ReadTimeout:           timeout,
		WriteTimeout:          timeout,
		PoolTimeout:           timeout,
		PoolSize:              minPoolSize,
		MaxRetries:            -1,
		ContextTimeoutEnabled: true,
	}
	for _, item := range strings.Split(spec, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		if !strings.Contains(item, "://") {
			opts.Addrs = append(opts.Addrs, item)
			continue
		}
		u, err := redis.ParseURL(item)
		if err != nil {
			return nil, fmt.Errorf("--redis %q: %w", item, err)
		}
		opts.Addrs = append(opts.Addrs, u.Addr)
		// Credentials, database and TLS come from the first URL that has them.
		if opts.Username == "" && opts.Password == "" {
			opts.Username, opts.Password = u.Username, u.Password
		}
		if opts.DB == 0 {
			opts.DB = u.DB
		}
		if opts.TLSConfig == nil {
			opts.TLSConfig = u.TLSConfig
		}
	}
	if len(opts.Addrs) == 0 {
		return nil, fmt.Errorf("--redis: no address in %q", spec)
	}
	if opts.DB != 0 && (len(opts.Addrs) > 1 || forceCluster) && masterName == "" {
		return nil, fmt.Errorf("--redis: a Redis Cluster has only database 0")
	}
	return opts, nil
}
