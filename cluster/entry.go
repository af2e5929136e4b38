package cluster

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/stampedeless/stampedeless/engine"
	"github.com/stampedeless/stampedeless/swr"
)

// An entry (swr.FleetEntry) is a hash in the shared tier, readable with
// HGETALL:
//
//	v        the value: for a collection (hash, set, sorted set, list,
//	         stream), its portable form (engine.Store.Export)
//	type     the key's type if not a string, as TYPE names it: "hash",
//	         "set", "zset", "list" or "stream"
//	fresh    fresh deadline, unix milliseconds (absent: none)
//	stale    stale deadline, unix milliseconds (absent: none); the
//	         hash expires then
//	etag     the origin's ETag, for revalidation
//	lastmod  the origin's Last-Modified
//	loader   the prefix of the loader that filled it (absent: a client write)
//	missing  "1": the origin said the key does not exist (a negative entry)
//	loadus   how long the fill took, in microseconds (early refresh's delta)
//	tags     the origin's tags, each on a line of its own (a tag has no
//	         control character); each tag's set (purge.go) lists the key
//
// Deadlines travel in milliseconds because Lua numbers are doubles: unix
// nanoseconds would lose precision inside the scripts that compare them.

// entryOf is the shared form of a local entry.
func entryOf(env engine.Envelope) swr.FleetEntry {
	e := swr.FleetEntry{Type: env.Type, Value: env.Value, FreshUntil: env.FreshUntil, StaleUntil: env.StaleUntil}
	if env.Fill != nil {
		e.Loader, e.ETag, e.LastModified, e.LoadTime = env.Fill.Loader, env.Fill.ETag, env.Fill.LastModified, env.Fill.LoadTime
	}
	return e
}

// entryFields returns e as HSET's field/value arguments.
func entryFields(e swr.FleetEntry) []any {
	f := []any{"v", e.Value}
	add := func(name, v string) {
		if v != "" {
			f = append(f, name, v)
		}
	}
	if e.Type != engine.TypeString {
		add("type", e.Type.String())
	}
	add("fresh", formatMillis(e.FreshUntil))
	add("stale", formatMillis(e.StaleUntil))
	add("etag", e.ETag)
	add("lastmod", e.LastModified)
	add("loader", e.Loader)
	if e.LoadTime > 0 {
		add("loadus", strconv.FormatInt(e.LoadTime.Microseconds(), 10))
	}
	if e.Missing {
		f = append(f, "missing", "1")
	}
	add("tags", strings.Join(e.Tags, "\n"))
	return f
}

// entryExpireAt is the argument the scripts give PEXPIREAT: the stale
// deadline in unix milliseconds, or "0" for an entry that never expires.
func entryExpireAt(e swr.FleetEntry) string {
	if e.StaleUntil == 0 {
		return "0"
	}
	return strconv.FormatInt(max(toMillis(e.StaleUntil), 1), 10)
}

// errMalformed is returned for a hash this package did not write.
var errMalformed = errors.New("cluster: malformed entry in Redis")

// decodeEntry reads an entry from its hash's fields.
func decodeEntry(h map[string]string) (swr.FleetEntry, error) {
	v, ok := h["v"]
	if !ok {
		return swr.FleetEntry{}, errMalformed
	}
	e := swr.FleetEntry{Value: []byte(v), ETag: h["etag"], LastModified: h["lastmod"], Loader: h["loader"],
		Missing: h["missing"] == "1"}
	if t, ok := h["type"]; ok {
		if e.Type, ok = engine.ParseType(t); !ok {
			return swr.FleetEntry{}, fmt.Errorf("%w: type %q", errMalformed, t)
		}
	}
	var err error
	if e.FreshUntil, err = parseMillis(h["fresh"]); err != nil {
		return swr.FleetEntry{}, err
	}
	if e.StaleUntil, err = parseMillis(h["stale"]); err != nil {
		return swr.FleetEntry{}, err
	}
	if e.FreshUntil == 0 {
		e.FreshUntil = e.StaleUntil
	}
	if us, err := strconv.ParseInt(h["loadus"], 10, 64); err == nil && us > 0 {
		e.LoadTime = time.Duration(us) * time.Microsecond
	}
	if t := h["tags"]; t != "" {
		e.Tags = strings.Split(t, "\n")
	}
	return e, nil
}

// failureFields returns f as HSET's field/value arguments.
func failureFields(f swr.FleetFailure) []any {
	return []any{"loader", f.Loader, "reason", f.Reason, "until", strconv.FormatInt(f.Until.UnixMilli(), 10)}
}

// decodeFailure reads a failure from its hash's fields.
func decodeFailure(h map[string]string) (*swr.FleetFailure, error) {
	until, err := strconv.ParseInt(h["until"], 10, 64)
	if err != nil {
		return nil, fmt.Errorf("%w: until %q", errMalformed, h["until"])
	}
	return &swr.FleetFailure{Loader: h["loader"], Reason: h["reason"], Until: time.UnixMilli(until)}, nil
}

// pairs turns the flat reply of HGETALL inside a script into a map.
func pairs(v any) (map[string]string, error) {
	list, ok := v.([]any)
	if !ok || len(list)%2 != 0 {
		return nil, fmt.Errorf("%w: %T", errMalformed, v)
	}
	h := make(map[string]string, len(list)/2)
	for i := 0; i < len(list); i += 2 {
		k, ok1 := list[i].(string)
		val, ok2 := list[i+1].(string)
		if !ok1 || !ok2 {
			return nil, errMalformed
		}
		h[k] = val
	}
	return h, nil
}

func toMillis(unixNano int64) int64 { return unixNano / int64(time.Millisecond) }

func formatMillis(unixNano int64) string {
	if unixNano == 0 {
		return ""
	}
	return strconv.FormatInt(max(toMillis(unixNano), 1), 10)
}

func parseMillis(s string) (int64, error) {
	if s == "" {
		return 0, nil
	}
	ms, err := strconv.ParseInt(s, 10, 64)
	if err != nil || ms <= 0 {
		return 0, fmt.Errorf("%w: deadline %q", errMalformed, s)
	}
	return ms * int64(time.Millisecond), nil
}
