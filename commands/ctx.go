package commands

import (
	"context"
	"time"

	"github.com/stampedeless/stampedeless/engine"
	"github.com/stampedeless/stampedeless/resp"
)

// Ctx is what a handler runs with beside its arguments: where its reply
// goes, the store, and the facts of the client that sent it. The server
// keeps one per connection (and one per script's calls) and passes it by
// pointer, so a call costs no allocation and reads W and Store directly.
type Ctx struct {
	W     *resp.Writer
	Store *engine.Store
	// Client is the server's side of the call.
	Client Client
	// Events receives the keyspace notifications of the handler's writes
	// (Notify); nil sends none.
	Events *Events
}

// Notify sends a keyspace notification of class, Redis's
// notifyKeyspaceEvent: a handler calls it once its write succeeded, where
// Redis does, with Redis's event name. Cheap when the class is off: a nil
// check and an atomic load, no allocation.
func (x *Ctx) Notify(class EventClass, event string, key []byte) {
	x.Events.Notify(x.Store.Index(), class, event, key)
}

// NotifyIn is Notify of a key of another database than the command's
// (MOVE's move_to, COPY ... DB's copy_to).
func (x *Ctx) NotifyIn(db *engine.Store, class EventClass, event string, key []byte) {
	x.Events.Notify(db.Index(), class, event, key)
}

// Client is what a handler may ask of the client it serves.
type Client interface {
	// NoTouch reports CLIENT NO-TOUCH: the client's reads do not make
	// keys more likely to stay.
	NoTouch() bool
	// MaxBulk is proto-max-bulk-len as it stands: the longest string a
	// command may make.
	MaxBulk() int64
	// InSection reports whether the call runs inside EXEC or a script,
	// holding the atomic section: nothing may wait there.
	InSection() bool
	// Block waits, where the client may wait and never inside the
	// section, for a write to make one of keys ready: serve, run then in
	// the atomic section, takes what it needs and reports whether it
	// could (a key of another type cannot); once one has, reply answers,
	// and timedOut once timeout (0: none) passes first. The handler
	// returns at once; what serve, reply and timedOut keep must not alias
	// its arguments, which the reader reuses.
	Block(keys [][]byte, timeout time.Duration, serve func(ready []byte) bool, reply, timedOut func())
	// BlockRead is Block for a reader that takes nothing from the key
	// (XREAD, XREADGROUP): one it cannot serve does not stop the key's
	// later clients from being tried, as a pop that finds nothing does.
	BlockRead(keys [][]byte, timeout time.Duration, serve func(ready []byte) bool, reply, timedOut func())
	// Await runs wait, which waits (for a load), once the handler has
	// returned and left the atomic section, where the client may wait:
	// first the replies before this command are flushed (the wait may be
	// for a client that needs one of them), and a client that closes its
	// connection meanwhile cancels wait's ctx. The reply wait returns is
	// written once the watch has ended. Never called inside the section
	// (InSection).
	Await(wait func(ctx context.Context) (reply func()))
	// Defer runs fn, which may wait (a name to resolve), where the client
	// may wait: at once, or once the handler has returned when it runs
	// where nothing may wait. fn must not alias the handler's arguments.
	Defer(fn func())
	// AfterSection runs fn, the fleet I/O of a write made inside EXEC or
	// a script, once the atomic section is left, in order.
	AfterSection(fn func())
	// Local reports whether the client connects from loopback or a unix
	// socket.
	Local() bool
	// Who names the client for a log line: its user and its address.
	Who() (user, addr string)
	// WritableKeys is the filter of the keys the client's user may write,
	// for a command that touches keys its arguments do not name
	// (PURGE.TAG); nil when the user may write every key.
	WritableKeys() func(key string) bool
	// ReadableKeys is the filter of the keys the client's user may read,
	// for a command that lists keys its arguments do not name (FILL.TOP);
	// nil when the user may read every key.
	ReadableKeys() func(key string) bool
	// ReadsAllKeys reports whether the client's user may read every key
	// by an ACL selector that allows the call args (the command and its
	// arguments; nil: any call), which SORT asks before its BY and GET
	// patterns read keys its arguments do not name (Redis's check for
	// unrestricted key access).
	ReadsAllKeys(args [][]byte) bool
	// InScript reports whether the call is a script's (redis.call), whose
	// reply must not depend on how a replica holds a value: SORT then
	// sorts a set even BY a constant, as Redis does.
	InScript() bool
}
