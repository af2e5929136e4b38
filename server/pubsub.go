package server

import (
	"bytes"
	"context"
	"strings"

	"github.com/stampedeless/stampedeless/commands"
	"github.com/stampedeless/stampedeless/resp"
	"github.com/stampedeless/stampedeless/server/internal/pubsub"
)

// Pub/sub's commands. The registry of subscriptions is package pubsub's;
// here are the confirmations and the messages, written holding its lock
// (pubsub.Registry), and PUBLISH's way to the other replicas (--redis).
// Pushing does no I/O (netloop.Conn.Push).

// subscribe implements SUBSCRIBE, PSUBSCRIBE and SSUBSCRIBE: one
// confirmation per name, each with the count after it. The connection
// enters push mode.
func (c *Conn) subscribe(kind pubsub.Kind, names [][]byte) {
	c.startPushing()
	p := &c.srv.pubsub
	p.Lock()
	if !c.mayStillSubscribe(kind, names) {
		p.Unlock()
		return
	}
	for _, name := range names {
		p.AddLocked(c, &c.subs, kind, name)
		c.writeSubscription(pubsub.Words[kind].Subscribe, name, c.subs.Count(kind))
	}
	c.w.Flush() // queued before any message the new subscriptions bring
	p.Unlock()
}

// unsubscribe implements UNSUBSCRIBE, PUNSUBSCRIBE and SUNSUBSCRIBE: from
// the names given, or from every name of the kind (in sorted order; Redis's
// is its hash table's), or, with none, one confirmation with a null name.
// A connection left with no subscription leaves push mode, unless it
// tracks keys.
func (c *Conn) unsubscribe(kind pubsub.Kind, names [][]byte) {
	p := &c.srv.pubsub
	p.Lock()
	if len(names) == 0 {
		for _, n := range c.subs.Sorted(kind) {
			names = append(names, []byte(n))
		}
		if len(names) == 0 {
			c.writeSubscription(pubsub.Words[kind].Unsubscribe, nil, c.subs.Count(kind))
		}
	}
	for _, name := range names {
		p.RemoveLocked(c, &c.subs, kind, string(name))
		c.writeSubscription(pubsub.Words[kind].Unsubscribe, name, c.subs.Count(kind))
	}
	if c.pushing() {
		c.w.Flush()
	}
	p.Unlock()
	if c.subs.Total() == 0 && !c.track.Tracked() {
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
func (c *Conn) leavePubSub() { c.srv.pubsub.Leave(c, &c.subs) }

// publish delivers message to the local subscribers of channel (for
// pubsub.Shard, of the shard channel) and of the patterns that match it, and
// returns how many received it: a connection subscribed both to the
// channel and to a matching pattern counts, and receives it, twice. The
// messages for from, the publisher (nil for a relayed message), are not
// pushed but returned: as in Redis 7.2, they follow its reply.
func (s *Server) publish(kind pubsub.Kind, channel, message []byte, from *Conn) (n int64, mine []func(*resp.Writer)) {
	word := pubsub.Words[kind].Message
	direct := func(w *resp.Writer) {
		w.Push(3)
		w.BulkString(word)
		w.Bulk(channel)
		w.Bulk(message)
	}
	// matched is the message of the pattern last matched, made once for
	// its subscribers.
	var pattern []byte
	var matched func(*resp.Writer)
	n = s.pubsub.Publish(kind, channel, func(c *Conn, p []byte) {
		fn := direct
		if p != nil {
			if matched == nil || !bytes.Equal(p, pattern) {
				pattern = p
				matched = func(w *resp.Writer) {
					w.Push(4)
					w.BulkString("pmessage")
					w.Bulk(p)
					w.Bulk(channel)
					w.Bulk(message)
				}
			}
			fn = matched
		}
		if c == from {
			mine = append(mine, fn)
		} else {
			c.push(fn)
		}
	})
	return n, mine
}

// relay is what the shared tier calls with a message another replica
// published.
func (s *Server) relay(channel, message []byte, sharded bool) {
	kind := pubsub.Channel
	if sharded {
		kind = pubsub.Shard
	}
	s.publish(kind, channel, message, nil)
}

func cmdSubscribe(c *Conn, args [][]byte)    { c.subscribe(pubsub.Channel, args[1:]) }
func cmdPSubscribe(c *Conn, args [][]byte)   { c.subscribe(pubsub.Pattern, args[1:]) }
func cmdSSubscribe(c *Conn, args [][]byte)   { c.subscribe(pubsub.Shard, args[1:]) }
func cmdUnsubscribe(c *Conn, args [][]byte)  { c.unsubscribe(pubsub.Channel, args[1:]) }
func cmdPUnsubscribe(c *Conn, args [][]byte) { c.unsubscribe(pubsub.Pattern, args[1:]) }
func cmdSUnsubscribe(c *Conn, args [][]byte) { c.unsubscribe(pubsub.Shard, args[1:]) }

func cmdPublish(c *Conn, args [][]byte)  { c.publish(pubsub.Channel, args[1], args[2]) }
func cmdSPublish(c *Conn, args [][]byte) { c.publish(pubsub.Shard, args[1], args[2]) }

// publish implements PUBLISH and SPUBLISH. With a shared tier the message
// also goes to the other replicas' subscribers, but the reply counts only
// this replica's: the others' are not known when it is sent.
func (c *Conn) publish(kind pubsub.Kind, channel, message []byte) {
	s := c.srv
	if s.opts.Shared != nil && c.looped {
		// The message goes to the other replicas through Redis: off the
		// loop, and before the reply, as the reply's count is sent.
		c.whereItMayWaitWith([][]byte{channel, message}, func(a [][]byte) { c.publish(kind, a[0], a[1]) })
		return
	}
	n, mine := s.publish(kind, channel, message, c)
	if s.opts.Shared != nil {
		b := broadcast{channel: channel, message: message, sharded: kind == pubsub.Shard}
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
func cmdPubSubChannels(c *Conn, args [][]byte) { c.listChannels(pubsub.Channel, args) }

func cmdPubSubShardChannels(c *Conn, args [][]byte) { c.listChannels(pubsub.Shard, args) }

func (c *Conn) listChannels(kind pubsub.Kind, args [][]byte) {
	if len(args) > 3 {
		// Redis's text: the subcommand as given, the command upper-cased.
		c.w.Error("ERR unknown subcommand or wrong number of arguments for '" + string(commands.Truncate(args[1], 128)) +
			"'. Try " + strings.ToUpper(string(args[0])) + " HELP.")
		return
	}
	var pattern []byte
	if len(args) == 3 {
		pattern = args[2]
	}
	names := c.srv.pubsub.Names(kind, len(args) == 3, pattern)
	c.w.Array(len(names))
	for _, n := range names {
		c.w.BulkString(n)
	}
}

// cmdPubSubNumSub implements PUBSUB NUMSUB [channel ...] and PUBSUB
// SHARDNUMSUB [channel ...]: pattern subscribers are not counted.
func cmdPubSubNumSub(c *Conn, args [][]byte) { c.numSub(pubsub.Channel, args[2:]) }

func cmdPubSubShardNumSub(c *Conn, args [][]byte) { c.numSub(pubsub.Shard, args[2:]) }

func (c *Conn) numSub(kind pubsub.Kind, names [][]byte) {
	counts := c.srv.pubsub.NumSub(kind, names)
	c.w.Array(2 * len(names))
	for i, name := range names {
		c.w.Bulk(name)
		c.w.Int(counts[i])
	}
}

// cmdPubSubNumPat implements PUBSUB NUMPAT: the patterns subscribed to,
// each counted once however many connections subscribe to it.
func cmdPubSubNumPat(c *Conn, _ [][]byte) { c.w.Int(int64(c.srv.pubsub.Count(pubsub.Pattern))) }

func cmdPubSubHelp(c *Conn, _ [][]byte) {
	commands.WriteHelp(c.w, "PUBSUB",
		"CHANNELS [<pattern>]", "    Return the currently active channels matching a <pattern> (default: '*').",
		"NUMPAT", "    Return number of subscriptions to patterns.",
		"NUMSUB [<channel> ...]", "    Return the number of subscribers for the specified channels, excluding",
		"    pattern subscriptions(default: no channels).",
		"SHARDCHANNELS [<pattern>]", "    Return the currently active shard level channels matching a <pattern> (default: '*').",
		"SHARDNUMSUB [<shardchannel> ...]", "    Return the number of subscribers for the specified shard level channel(s)")
}

// registerPubSubMetrics exports the subscriptions and the output buffers.
func (s *Server) registerPubSubMetrics() {
	p := &s.pubsub
	m := s.metrics
	m.Gauge("pubsub_channels", "Channels with a subscriber (INFO pubsub_channels).",
		func() float64 { return float64(p.Count(pubsub.Channel)) })
	m.Gauge("pubsub_patterns", "Patterns with a subscriber (INFO pubsub_patterns).",
		func() float64 { return float64(p.Count(pubsub.Pattern)) })
	m.Gauge("pubsub_shard_channels", "Shard channels with a subscriber (INFO pubsubshard_channels).",
		func() float64 { return float64(p.Count(pubsub.Shard)) })
	m.Gauge("pubsub_clients", "Connections with a subscription (INFO pubsub_clients).",
		func() float64 { return float64(p.Clients()) })
	m.Counter("pubsub_messages_delivered_total", "Messages queued for subscribers: one per receiving subscription, relayed from other replicas included.",
		func() float64 { return float64(p.Delivered()) })
	m.Gauge("client_recent_max_output_buffer_bytes", "The largest output buffer a subscriber had queued in the last 8 seconds (INFO client_recent_max_output_buffer).",
		func() float64 { return float64(s.recentMaxOutputBuffer()) })
}
