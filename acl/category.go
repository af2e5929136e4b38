// Package acl holds stampedeless's users and what each may do: Redis 7's
// ACL rules (on/off, passwords, key and channel patterns, commands and
// command categories), parsed into permissions that a connection checks
// before each command, the registry of users that ACL SETUSER, DELUSER and
// LOAD change, and the log of denials that ACL LOG shows. It knows commands
// only as names and categories (Table); which arguments are keys or
// channels is the caller's to say.
package acl

import "strings"

// Category is a set of ACL command categories, such as @read or @admin.
type Category uint32

// The categories, in Redis's order, which ACL CAT and COMMAND INFO follow.
const (
	Keyspace Category = 1 << iota
	Read
	Write
	Set
	SortedSet
	List
	Hash
	String
	Bitmap
	HyperLogLog
	Geo
	Stream
	PubSub
	Admin
	Fast
	Slow
	Blocking
	Dangerous
	Connection
	Transaction
	Scripting
)

// categoryNames are the categories' names, one per bit from the lowest.
var categoryNames = [...]string{
	"keyspace", "read", "write", "set", "sortedset", "list", "hash", "string",
	"bitmap", "hyperloglog", "geo", "stream", "pubsub", "admin", "fast", "slow",
	"blocking", "dangerous", "connection", "transaction", "scripting",
}

// CategoryNames returns every category's name, in Redis's order.
func CategoryNames() []string { return categoryNames[:] }

// ParseCategory returns the category named name ("read", any case, without
// the '@'), and whether there is one.
func ParseCategory(name string) (Category, bool) {
	for i, n := range categoryNames {
		if strings.EqualFold(n, name) {
			return 1 << i, true
		}
	}
	return 0, false
}

// Names returns the names of the categories in c, in Redis's order.
func (c Category) Names() []string {
	var out []string
	for i, n := range categoryNames {
		if c&(1<<i) != 0 {
			out = append(out, n)
		}
	}
	return out
}
