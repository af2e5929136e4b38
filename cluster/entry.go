package cluster

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/stampedeless/stampedeless/engine"
)

// Entry is a cache entry as the shared tier holds it: the value with its
// envelope. In Redis it is a hash, readable with HGETALL:
//
//	v        the value
//	fresh    fresh deadline, unix milliseconds (absent: none)
//	stale    stale deadline, unix milliseconds (absent: none); the
//	         hash expires then
//	etag     the origin's ETag, for revalidation
//	lastmod  the origin's Last-Modified
//	loader   the prefix of the loader that filled it (absent: a client write)
//	missing  "1": the origin said the key does not exist (a negative entry)
//
// Deadlines travel in milliseconds because Lua numbers are doubles: unix
// nanoseconds would lose precision inside the scripts that compare them.
type Entry struct {
	Value []byte
	// FreshUntil and StaleUntil are unix nanoseconds, zero when there is no
	// such deadline, as in engine.Envelope.
	FreshUntil, StaleUntil int64
	ETag, LastModified     string
	Loader                 string
	// Missing marks a negative entry: the origin answered 404 or 410.
	Missing bool
}

// SetOptions are the options that store e in the local tier under fence.
func (e Entry) SetOptions(fence *engine.Fence) engine.SetOptions {
	opts := engine.SetOptions{FreshUntil: e.FreshUntil, StaleUntil: e.StaleUntil, Fence: fence}
	if e.Loader != "" {
		opts.Fill = &engine.FillMeta{Loader: e.Loader, ETag: e.ETag, LastModified: e.LastModified}
	}
	return opts
}

// entryOf is the shared form of a local entry.
func entryOf(env engine.Envelope) Entry {
	e := Entry{Value: env.Value, FreshUntil: env.FreshUntil, StaleUntil: env.StaleUntil}
	if env.Fill != nil {
		e.Loader, e.ETag, e.LastModified = env.Fill.Loader, env.Fill.ETag, env.Fill.LastModified
	}
	return e
}

// fields returns e as HSET's field/value arguments.
func (e Entry) fields() []any {
	f := []any{"v", e.Value}
	add := func(name, v string) {
		if v != "" {
			f = append(f, name, v)
		}
	}
	add("fresh", formatMillis(e.FreshUntil))
	add("stale", formatMillis(e.StaleUntil))
	add("etag", e.ETag)
	add("lastmod", e.LastModified)
	add("loader", e.Loader)
	if e.Missing {
		f = append(f, "missing", "1")
	}
	return f
}

// expireAt is the argument the scripts give PEXPIREAT: the stale deadline in
// unix milliseconds, or "0" for an entry that never expires.
func (e Entry) expireAt() string {
	if e.StaleUntil == 0 {
		return "0"
	}
	return strconv.FormatInt(max(toMillis(e.StaleUntil), 1), 10)
}

// errMalformed is returned for a hash this package did not write.
var errMalformed = errors.New("cluster: malformed entry in Redis")

// decodeEntry reads an entry from its hash's fields.
func decodeEntry(h map[string]string) (Entry, error) {
	v, ok := h["v"]
	if !ok {
		return Entry{}, errMalformed
	}
	e := Entry{Value: []byte(v), ETag: h["etag"], LastModified: h["lastmod"], Loader: h["loader"],
		Missing: h["missing"] == "1"}
	var err error
	if e.FreshUntil, err = parseMillis(h["fresh"]); err != nil {
		return Entry{}, err
	}
	if e.StaleUntil, err = parseMillis(h["stale"]); err != nil {
		return Entry{}, err
	}
	if e.FreshUntil == 0 {
		e.FreshUntil = e.StaleUntil
	}
	return e, nil
}

// Failure is a failed fill shared with the fleet: the lease holder's load
// failed, and the key's loads pause fleet-wide until Until. It is never
// stored as a value.
type Failure struct {
	Loader, Reason string
	Until          time.Time
}

// Error says which loader failed and why.
func (f *Failure) Error() string {
	return fmt.Sprintf("loader %q: %s (fleet cooldown)", f.Loader, f.Reason)
}

// fields returns f as HSET's field/value arguments.
func (f Failure) fields() []any {
	return []any{"loader", f.Loader, "reason", f.Reason, "until", strconv.FormatInt(f.Until.UnixMilli(), 10)}
}

// decodeFailure reads a failure from its hash's fields.
func decodeFailure(h map[string]string) (*Failure, error) {
	until, err := strconv.ParseInt(h["until"], 10, 64)
	if err != nil {
		return nil, fmt.Errorf("%w: until %q", errMalformed, h["until"])
	}
	return &Failure{Loader: h["loader"], Reason: h["reason"], Until: time.UnixMilli(until)}, nil
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
