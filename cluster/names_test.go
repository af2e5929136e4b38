package cluster

import "testing"

// TestNamesKeepDatabasesApart: each database's Redis keys are its own, and
// a flush finds exactly the cache keys of the database it empties: not
// another database's, not the loaders or the fill slots, whatever the
// cache key is named.
func TestNamesKeepDatabasesApart(t *testing.T) {
	n := names{prefix: DefaultPrefix}
	for _, key := range []string{"k", "", "}x", "db3:val:{k}", "val:{y}", "loaders"} {
		for _, db := range []int{0, 1, 3, 15} {
			d := n.inDB(db)
			for _, name := range []string{d.value(key), d.lease(key), d.failure(key), d.tag(key)} {
				if got := n.cacheKeyDB(name); got != db {
					t.Errorf("cacheKeyDB(%q) = %d, want %d", name, got, db)
				}
			}
		}
		if n.inDB(0).value(key) == n.inDB(3).value(key) {
			t.Errorf("database 0 and 3 share the name of %q", key)
		}
	}
	for _, name := range []string{n.loaders(), n.fills(), n.events(), n.inDB(3).events(), n.acks("r"),
		DefaultPrefix + "db16:val:{k}", DefaultPrefix + "db03:val:{k}", DefaultPrefix + "db0:val:{k}", "other:val:{k}"} {
		if got := n.cacheKeyDB(name); got != -1 {
			t.Errorf("cacheKeyDB(%q) = %d, want -1: not a cache key", name, got)
		}
	}
}
