package cluster

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/stampedeless/stampedeless/engine"
)

// DefaultPrefix namespaces stampedeless's keys and channels in a shared Redis
// (--redis-prefix).
const DefaultPrefix = "stampedeless:"

// Kinds of Redis key kept per cache key.
const (
	kindValue = "val"   // the shared tier's entry, a hash (see entry.go)
	kindLease = "lease" // the fill lease: a random token, SET NX PX
	kindError = "err"   // the fleet-wide cooldown after a failed fill, a hash
	kindTag   = "tag"   // the keys published with a tag, a set (purge.go)
)

// names builds the Redis keys and channels of one prefix.
//
// Every Redis key of one cache key must hash to the same Redis Cluster slot,
// so that the scripts that touch several of them run on one node. The cache
// key is therefore the hash tag: <prefix><kind>:{<key>}. Redis takes the tag
// to end at the first '}' after the first '{', which is the same for every
// kind of the same key, so a '}' inside a key is harmless, except at its
// very start or in an empty key: the tag would be empty and Redis would hash
// the whole name, a different slot per kind. Those keys are written
// <prefix><kind>!{=}<key> instead; the '!' after the kind keeps the two forms
// apart, so the mapping stays one-to-one.
type names struct{ prefix string }

// checkPrefix rejects prefixes that would take over the hash tag.
func checkPrefix(prefix string) error {
	if strings.ContainsAny(prefix, "{}") {
		return fmt.Errorf("cluster: --redis-prefix %q must not contain '{' or '}': they would change which Redis Cluster slot keys hash to", prefix)
	}
	return nil
}

func (n names) key(kind, key string) string {
	if key == "" || key[0] == '}' {
		return n.prefix + kind + "!{=}" + key
	}
	return n.prefix + kind + ":{" + key + "}"
}

// inDB returns the names of database db's keys and event channel. Database
// 0's are the prefix's own; another's are under <prefix>db<n>:, so that a
// Redis Cluster, which has database 0 only, keeps every database apart.
// The fleet's own keys and channels (loaders, fills, acks, pubsub) are
// database 0's names'.
func (n names) inDB(db int) names {
	if db == 0 {
		return n
	}
	return names{prefix: n.prefix + "db" + strconv.Itoa(db) + ":"}
}

// cacheKeyDB returns the database of k if k is a cache key under n (a
// value, lease, failure or tag set of any database), or -1 if it is not
// one: the loader registrations, the fill slots and anything else under
// the prefix are not. n must be database 0's names.
func (n names) cacheKeyDB(k string) int {
	rest, ok := strings.CutPrefix(k, n.prefix)
	if !ok {
		return -1
	}
	db := 0
	if after, ok := strings.CutPrefix(rest, "db"); ok {
		num, tail, ok := strings.Cut(after, ":")
		d, err := strconv.Atoi(num)
		if !ok || err != nil || d <= 0 || d >= engine.MaxDatabases || strconv.Itoa(d) != num {
			return -1
		}
		db, rest = d, tail
	}
	for _, kind := range []string{kindValue, kindLease, kindError, kindTag} {
		if r, ok := strings.CutPrefix(rest, kind); ok && r != "" && (r[0] == ':' || r[0] == '!') {
			return db
		}
	}
	return -1
}

// value, lease and failure are the Redis keys of a cache key.
func (n names) value(key string) string   { return n.key(kindValue, key) }
func (n names) lease(key string) string   { return n.key(kindLease, key) }
func (n names) failure(key string) string { return n.key(kindError, key) }

// tag is the set of the keys published with tag. The tag is its hash tag,
// as a cache key is its own.
func (n names) tag(tag string) string { return n.key(kindTag, tag) }

// loaders is the hash of the fleet's loader registrations, by prefix
// (loaders.go).
func (n names) loaders() string { return n.prefix + "loaders" }

// fills is the sorted set of --fleet-max-concurrent-fills slots.
func (n names) fills() string { return n.prefix + "fills" }

// events is the channel every replica publishes and listens on, one per
// database (inDB).
func (n names) events() string { return n.prefix + "events" }

// pubsub is the channel clients' pub/sub messages are relayed on, kept
// apart from events so that a flood of them does not delay invalidations.
func (n names) pubsub() string { return n.prefix + "pubsub" }

// acks is the channel a replica hears acknowledgements of its
// invalidations on.
func (n names) acks(replica string) string { return n.prefix + "ack:" + replica }

// pattern matches every Redis key of the prefix, for FLUSHALL.
func (n names) pattern() string { return escapeGlob(n.prefix) + "*" }

// escapeGlob quotes the glob metacharacters of s for SCAN MATCH.
func escapeGlob(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '*', '?', '[', ']', '\\':
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
