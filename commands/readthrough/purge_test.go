package readthrough

import (
	"strings"
	"testing"
)

// TestPurgeTag: PURGE.TAG deletes the keys the origin tagged, or with
// SOFT makes them stale (served while one refresh runs); a user purges
// only the keys it may write; a tag named SOFT alone is a tag.
func TestPurgeTag(t *testing.T) {
	f, o := newServed(t)
	for key, tags := range map[string]string{"k:1": "red blue", "k:2": "blue", "k:3": "green", "k:soft": "SOFT", "k:mine": "blue"} {
		o.set(key, "v"+key)
		o.tags[key] = tags
	}
	for _, k := range []string{"k:1", "k:2", "k:3", "k:soft", "k:mine"} {
		f.Check("GETFILL "+k+" 10 5", "v"+k)
	}
	f.Client.Writable = func(key string) bool { return !strings.HasSuffix(key, "mine") }
	f.Run([]Case{
		{"PURGE.TAG nosuch", 0},
		{"PURGE.TAG blue", 2},
		{"EXISTS k:1 k:2 k:mine", 1},
		{"PURGE.TAG SOFT", 1},
		{"EXISTS k:soft", 0},
		{"PURGE.TAG SOFT green", 1},
		{"EXISTS k:3", 1},
	})
	f.Check("FILL.INFO k:3", []any{"state", "stale", "fresh_ms", 0, "stale_ms", 15000, "loader", "k:", "in_flight", 0, "tags", []any{"green"}})
	f.Client.Writable = nil
	f.Check("PURGE.TAG blue", 1)
}
