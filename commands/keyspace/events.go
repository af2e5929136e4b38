package keyspace

import "github.com/stampedeless/stampedeless/commands"

// The keyspace events a handler sends beside the one of its write (Redis's
// notifyKeyspaceEvent calls): the handlers call c.Notify where Redis does,
// once the write succeeded.

// notifyIfRemoved sends "del" for key if the write that emptied it removed
// it, as Redis does after a pop or a removal of the last element. Whether
// it is gone is asked only when someone listens.
func notifyIfRemoved(c *commands.Ctx, key []byte) {
	if c.Events.Classes()&commands.EventGeneric == 0 {
		return
	}
	if _, found := c.Store.TypeOf(key); !found {
		c.Notify(commands.EventGeneric, "del", key)
	}
}

// notifyRemoved sends a removal's events: the type's event, then "del" if
// the key is gone.
func notifyRemoved(c *commands.Ctx, class commands.EventClass, event string, key []byte) {
	c.Notify(class, event, key)
	notifyIfRemoved(c, key)
}

// listEvent is the name of a push or a pop at one end of a list.
func listEvent(left bool, push string, pop string) string {
	if left {
		return push
	}
	return pop
}

// notifyPopped sends a list pop's events.
func notifyPopped(c *commands.Ctx, key []byte, left bool) {
	notifyRemoved(c, commands.EventList, listEvent(left, "lpop", "rpop"), key)
}

// notifyStored sends a *STORE command's events (SINTERSTORE, ZUNIONSTORE,
// BITOP...): event if it stored a value, "del" if it removed dst to store
// nothing, none if dst was and stays missing.
func notifyStored(c *commands.Ctx, class commands.EventClass, event string, dst []byte, stored, existed bool) {
	switch {
	case stored:
		c.Notify(class, event, dst)
	case existed:
		c.Notify(commands.EventGeneric, "del", dst)
	}
}

// destinationExists reports whether a *STORE command's dst exists before
// it writes, when someone listens (else false: it is not needed).
func destinationExists(c *commands.Ctx, dst []byte) bool {
	if c.Events.Classes()&commands.EventGeneric == 0 {
		return false
	}
	_, found := c.Store.TypeOf(dst)
	return found
}
