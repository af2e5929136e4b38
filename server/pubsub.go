package server

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/stampedeless/stampedeless/commands"
	"github.com/stampedeless/stampedeless/internal/glob"
	"github.com/stampedeless/stampedeless/resp"
)

// subKind is a kind of subscription: to a channel (SUBSCRIBE), a pattern
// (PSUBSCRIBE) or a shard channel (SSUBSCRIBE). Without a Redis Cluster,
// shard channels are a namespace of their own that patterns do not see,
// and otherwise behave as channels do.
type subKind int

const (
	subChannel subKind = iota
	subPattern
	subShard
	subKinds
)

// subNames are the words of each kind's confirmations and messages.
var subNames = [subKinds]struct{ subscribe, unsubscribe, message string }{
	subChannel: {"subscribe", "unsubscribe", "message"},
	subPattern: {"psubscribe", "punsubscribe", "pmessage"},
	subShard:   {"ssubscribe", "sunsubscribe", "smessage"},
}

// pubsub is the server's subscriptions. Publishers hold mu for reading
// while they push, and (un)subscribing holds it for writing while the
// confirmation is queued, so a message never reaches a connection before
// the confirmation of the subscription it came through, nor after the
// confirmation of its end. Pushing does no I/O (netloop.Conn.Push).
type pubsub struct {
	mu      sync.RWMutex
	subs    [subKinds]map[string]*subscribers
	clients int // connections with a subscription
	// delivered counts messages queued for subscribers.
	delivered atomic.Int64
}

// subscribers are the connections subscribed to one name.
type subscribers struct {
	name  []byte // the channel or pattern, for matching without converting
	conns map[*Conn]struct{}
}

// subscriptions are one connection's. The connection's loop (or its
// continuation) changes them holding pubsub.mu; counts are also read by other connections
// (CLIENT LIST).
type subscriptions struct {
	names  [subKinds]map[string]struct{}
	counts [subKinds]atomic.Int32
}

// count is the number a confirmation of kind reports: channels and
// patterns together, or shard channels alone, as in Redis.
func (s *subscriptions) count(kind subKind) int64 {
	if kind == subShard {
		return int64(s.counts[subShard].Load())
	}
	return int64(s.counts[subChannel].Load() + s.counts[subPattern].Load())
}

// total is every subscription: a RESP2 connection with any is in
// subscriber mode.
func (s *subscriptions) total() int {
	return int(s.counts[subChannel].Load() + s.counts[subPattern].Load() + s.counts[subShard].Load())
}

// add subscribes c to name; with p.mu held for writing.
func (p *pubsub) add(c *Conn, kind subKind, name []byte) {
	mine := &c.subs.names[kind]
	if _, ok := (*mine)[string(name)]; ok {
		return
	}
	if *mine == nil {
		*mine = make(map[string]struct{})
	}
	key := string(name)
	(*mine)[key] = struct{}{}
	if p.subs[kind] == nil {
		p.subs[kind] = make(map[string]*subscribers)
	}
	set := p.subs[kind][key]
	if set == nil {
		set = &subscribers{name: []byte(key), conns: make(map[*Conn]struct{})}
		p.subs[kind][key] = set
	}
	set.conns[c] = struct{}{}
	if c.subs.total() == 0 {
		p.clients++
	}
	c.subs.counts[kind].Add(1)
}

// remove unsubscribes c from name; with p.mu held for writing.
func (p *pubsub) remove(c *Conn, kind subKind, name string) {
	mine := c.subs.names[kind]
	if _, ok := mine[name]; !ok {
		return
	}
	delete(mine, name)
	if set := p.subs[kind][name]; set != nil {
		delete(set.conns, c)
		if len(set.conns) == 0 {
			delete(p.subs[kind], name)
		}
	}
	c.subs.counts[kind].Add(-1)
	if c.subs.total() == 0 {
		p.clients--
	}
}

// subscribe implements SUBSCRIBE, PSUBSCRIBE and SSUBSCRIBE: one
// confirmation per name, each with the count after it. The connection
// enters push mode.
func (c *Conn) subscribe(kind subKind, names [][]byte) {
	c.startPushing()
	p := &c.srv.pubsub
	p.mu.Lock()
	if !c.mayStillSubscribe(kind, names) {
		p.mu.Unlock()
		return
	}
	for _, name := range names {
		p.add(c, kind, name)
		c.writeSubscription(subNames[kind].subscribe, name, c.subs.count(kind))
	}
	c.w.Flush() // queued before any message the new subscriptions bring
	p.mu.Unlock()
}

// unsubscribe implements UNSUBSCRIBE, PUNSUBSCRIBE and SUNSUBSCRIBE: from
// the names given, or from every name of the kind (in sorted order; Redis's
// is its hash table's), or, with none, one confirmation with a null name.
// A connection left with no subscription leaves push mode, unless it
// tracks keys.
func (c *Conn) unsubscribe(kind subKind, names [][]byte) {
	p := &c.srv.pubsub
	p.mu.Lock()
	if len(names) == 0 {
		for _, n := range slices.Sorted(mapKeys(c.subs.names[kind])) {
			names = append(names, []byte(n))
		}
		if len(names) == 0 {
			c.writeSubscription(subNames[kind].unsubscribe, nil, c.subs.count(kind))
		}
	}
	for _, name := range names {
		p.remove(c, kind, string(name))
		c.writeSubscription(subNames[kind].unsubscribe, name, c.subs.count(kind))
	}
	if c.pushing() {
		c.w.Flush()
	}
	p.mu.Unlock()
	if c.subs.total() == 0 && !c.track.Tracked() {
		c.stopPushing()
	}
}

// writeSubscription writes a (un)subscribe confirmation; a nil name is
// written as null.
func (c *Conn) writeSubscription(word string, name []byte, count int64) {
	c.w.Push(3)
	c.w.BulkString(word)
	if name == nil {
		c.w.Null()
	} else {
		c.w.Bulk(name)
	}
	c.w.Int(count)
}

// leavePubSub drops every subscription of a closing connection, without
// confirmations.
func (c *Conn) leavePubSub() {
	if c.subs.total() == 0 {
		return
	}
	p := &c.srv.pubsub
	p.mu.Lock()
	for kind := range subKinds {
		for name := range c.subs.names[kind] {
			p.remove(c, kind, name)
		}
	}
	p.mu.Unlock()
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// publish delivers message to the local subscribers of channel (for
// subShard, of the shard channel) and of the patterns that match it, and
// returns how many received it: a connection subscribed both to the
// channel and to a matching pattern counts, and receives it, twice. The
// messages for from, the publisher (nil for a relayed message), are not
// pushed but returned: as in Redis 7.2, they follow its reply.
func (s *Server) publish(kind subKind, channel, message []byte, from *Conn) (n int64, mine []func(*resp.Writer)) {
	p := &s.pubsub
	word := subNames[kind].message
	direct := func(w *resp.Writer) {
		w.Push(3)
		w.BulkString(word)
		w.Bulk(channel)
		w.Bulk(message)
	}
	deliver := func(c *Conn, fn func(*resp.Writer)) {
		if c == from {
			mine = append(mine, fn)
		} else {
			c.push(fn)
		}
		n++
	}
	p.mu.RLock()
	defer func() {
		p.mu.RUnlock()
		p.delivered.Add(n)
	}()
	if set := p.subs[kind][string(channel)]; set != nil {
		for c := range set.conns {
			deliver(c, direct)
		}
	}
	if kind != subChannel || len(p.subs[subPattern]) == 0 {
		return n, mine
	}
	subject := string(channel)
	for _, set := range p.subs[subPattern] {
		if !glob.Match(set.name, subject) {
			continue
		}
		matched := func(w *resp.Writer) {
			w.Push(4)
			w.BulkString("pmessage")
			w.Bulk(set.name)
			w.Bulk(channel)
			w.Bulk(message)
		}
		for c := range set.conns {
			deliver(c, matched)
		}
	}
	return n, mine
}

// relay is what the shared tier calls with a message another replica
// published.
func (s *Server) relay(channel, message []byte, sharded bool) {
	kind := subChannel
	if sharded {
		kind = subShard
	}
	s.publish(kind, channel, message, nil)
}

func cmdSubscribe(c *Conn, args [][]byte)    { c.subscribe(subChannel, args[1:]) }
func cmdPSubscribe(c *Conn, args [][]byte)   { c.subscribe(subPattern, args[1:]) }
func cmdSSubscribe(c *Conn, args [][]byte)   { c.subscribe(subShard, args[1:]) }
func cmdUnsubscribe(c *Conn, args [][]byte)  { c.unsubscribe(subChannel, args[1:]) }
func cmdPUnsubscribe(c *Conn, args [][]byte) { c.unsubscribe(subPattern, args[1:]) }
func cmdSUnsubscribe(c *Conn, args [][]byte) { c.unsubscribe(subShard, args[1:]) }

func cmdPublish(c *Conn, args [][]byte)  { c.publish(subChannel, args[1], args[2]) }
func cmdSPublish(c *Conn, args [][]byte) { c.publish(subShard, args[1], args[2]) }

// publish implements PUBLISH and SPUBLISH. With a shared tier the message
// also goes to the other replicas' subscribers, but the reply counts only
// this replica's: the others' are not known when it is sent.
func (c *Conn) publish(kind subKind, channel, message []byte) {
	s := c.srv
	if s.opts.Shared != nil && c.looped {
		// The message goes to the other replicas through Redis: off the
		// loop, and before the reply, as the reply's count is sent.
		c.whereItMayWaitWith([][]byte{channel, message}, func(a [][]byte) { c.publish(kind, a[0], a[1]) })
		return
	}
	n, mine := s.publish(kind, channel, message, c)
	if s.opts.Shared != nil {
		b := broadcast{channel: channel, message: message, sharded: kind == subShard}
		if c.tx.inSection {
			// Inside EXEC or a script, which hold the section: sent once
			// it is left (shareDeferred), copied from the reader's buffer.
			b.channel, b.message = bytes.Clone(channel), bytes.Clone(message)
			c.broadcasts = append(c.broadcasts, b)
		} else {
			b.send(context.Background(), s.opts.Shared)
		}
	}
	c.w.Int(n)
	for _, fn := range mine {
		fn(c.w)
	}
}

// broadcast is a message published here for the other replicas'
// subscribers (--redis).
type broadcast struct {
	channel, message []byte
	sharded          bool
}

// send gives b to the shared tier. An error is the shared tier's to count
// and log; the message still reached this replica's subscribers, as
// without --redis.
func (b broadcast) send(ctx context.Context, sh Shared) {
	sh.Broadcast(ctx, b.channel, b.message, b.sharded)
}

// cmdPubSubChannels implements PUBSUB CHANNELS [pattern] and PUBSUB
// SHARDCHANNELS [pattern], in sorted order (Redis's is its hash table's).
func cmdPubSubChannels(c *Conn, args [][]byte) { c.listChannels(subChannel, args) }

func cmdPubSubShardChannels(c *Conn, args [][]byte) { c.listChannels(subShard, args) }

func (c *Conn) listChannels(kind subKind, args [][]byte) {
	if len(args) > 3 {
		// Redis's text: the subcommand as given, the command upper-cased.
		c.w.Error("ERR unknown subcommand or wrong number of arguments for '" + string(commands.Truncate(args[1], 128)) +
			"'. Try " + strings.ToUpper(string(args[0])) + " HELP.")
		return
	}
	p := &c.srv.pubsub
	var names []string
	p.mu.RLock()
	for name := range p.subs[kind] {
		if len(args) == 2 || glob.Match(args[2], name) {
			names = append(names, name)
		}
	}
	p.mu.RUnlock()
	slices.Sort(names)
	c.w.Array(len(names))
	for _, n := range names {
		c.w.BulkString(n)
	}
}

// cmdPubSubNumSub implements PUBSUB NUMSUB [channel ...] and PUBSUB
// SHARDNUMSUB [channel ...]: pattern subscribers are not counted.
func cmdPubSubNumSub(c *Conn, args [][]byte) { c.numSub(subChannel, args[2:]) }

func cmdPubSubShardNumSub(c *Conn, args [][]byte) { c.numSub(subShard, args[2:]) }

func (c *Conn) numSub(kind subKind, names [][]byte) {
	p := &c.srv.pubsub
	counts := make([]int64, len(names))
	p.mu.RLock()
	for i, name := range names {
		if set := p.subs[kind][string(name)]; set != nil {
			counts[i] = int64(len(set.conns))
		}
	}
	p.mu.RUnlock()
	c.w.Array(2 * len(names))
	for i, name := range names {
		c.w.Bulk(name)
		c.w.Int(counts[i])
	}
}

// cmdPubSubNumPat implements PUBSUB NUMPAT: the patterns subscribed to,
// each counted once however many connections subscribe to it.
func cmdPubSubNumPat(c *Conn, _ [][]byte) { c.w.Int(int64(c.srv.pubsub.count(subPattern))) }

func cmdPubSubHelp(c *Conn, _ [][]byte) {
	commands.WriteHelp(c.w, "PUBSUB",
		"CHANNELS [<pattern>]", "    Return the currently active channels matching a <pattern> (default: '*').",
		"NUMPAT", "    Return number of subscriptions to patterns.",
		"NUMSUB [<channel> ...]", "    Return the number of subscribers for the specified channels, excluding",
		"    pattern subscriptions(default: no channels).",
		"SHARDCHANNELS [<pattern>]", "    Return the currently active shard level channels matching a <pattern> (default: '*').",
		"SHARDNUMSUB [<shardchannel> ...]", "    Return the number of subscribers for the specified shard level channel(s)")
}

// count is how many names of kind have subscribers.
func (p *pubsub) count(kind subKind) int {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return len(p.subs[kind])
}

// subscribers is how many connections have a subscription.
func (p *pubsub) subscriberCount() int {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.clients
}

// registerPubSubMetrics exports the subscriptions and the output buffers.
func (s *Server) registerPubSubMetrics() {
	p := &s.pubsub
	m := s.metrics
	m.Gauge("pubsub_channels", "Channels with a subscriber (INFO pubsub_channels).",
		func() float64 { return float64(p.count(subChannel)) })
	m.Gauge("pubsub_patterns", "Patterns with a subscriber (INFO pubsub_patterns).",
		func() float64 { return float64(p.count(subPattern)) })
	m.Gauge("pubsub_shard_channels", "Shard channels with a subscriber (INFO pubsubshard_channels).",
		func() float64 { return float64(p.count(subShard)) })
	m.Gauge("pubsub_clients", "Connections with a subscription (INFO pubsub_clients).",
		func() float64 { return float64(p.subscriberCount()) })
	m.Counter("pubsub_messages_delivered_total", "Messages queued for subscribers: one per receiving subscription, relayed from other replicas included.",
		func() float64 { return float64(p.delivered.Load()) })
	m.Gauge("client_recent_max_output_buffer_bytes", "The largest output buffer a subscriber had queued in the last 8 seconds (INFO client_recent_max_output_buffer).",
		func() float64 { return float64(s.recentMaxOutputBuffer()) })
}
