package digest

import (
	"testing"

	"github.com/stampedeless/stampedeless/engine"
)

func item(typ engine.Type, members ...string) *engine.SnapshotItem {
	it := &engine.SnapshotItem{}
	it.Type = typ
	for _, m := range members {
		it.Members = append(it.Members, []byte(m))
	}
	return it
}

// TestItemOrder: a set's digest does not depend on its members' order, a
// list's does, and a deadline changes a value's digest.
func TestItemOrder(t *testing.T) {
	if Item(item(engine.TypeSet, "a", "b")) != Item(item(engine.TypeSet, "b", "a")) {
		t.Error("a set's digest depends on its order")
	}
	if Item(item(engine.TypeList, "a", "b")) == Item(item(engine.TypeList, "b", "a")) {
		t.Error("a list's digest does not depend on its order")
	}
	v := item(engine.TypeString)
	v.Value = []byte("v")
	expiring := *v
	expiring.StaleUntil = 1
	if Item(v) == Item(&expiring) {
		t.Error("a deadline does not change the digest")
	}
}
