package cluster

import (
	"context"

	"github.com/redis/go-redis/v9"
)

// Broadcast relays a client's PUBLISH (SPUBLISH if sharded) to the other
// replicas through Redis, where each hands it to its own subscribers. With
// Redis down it returns ErrUnavailable at once: the message reaches this
// replica's subscribers only.
func (c *Client) Broadcast(ctx context.Context, channel, payload []byte, sharded bool) error {
	if !c.up.Load() {
		return ErrUnavailable
	}
	kind := msgPublish
	if sharded {
		kind = msgSPublish
	}
	m := message{kind: kind, sender: c.id, keys: []string{string(channel), string(payload)}}
	ctx, cancel := c.opCtx(ctx)
	defer cancel()
	// In a Redis Cluster, go-redis sends a PUBLISH to any node, and nodes
	// pass it on through the cluster bus, so two messages can overtake
	// each other. Routed by the channel's slot, every PUBLISH goes to the
	// node the replicas' subscriptions are on, and keeps its order.
	cmd := redis.NewIntCmd(ctx, "publish", c.names.pubsub(), m.encode())
	cmd.SetFirstKeyPos(1)
	if err := c.rdb.Process(ctx, cmd); err != nil {
		return c.check(err)
	}
	c.m.PubSubRelayed.WithLabelValues("sent").Inc()
	return nil
}

// Relay sets the function that receives the messages other replicas
// published, in the order Redis received them.
func (c *Client) Relay(deliver func(channel, message []byte, sharded bool)) {
	c.relay.Store(&deliver)
}

// relayMessages hands the messages of the pub/sub channel to Relay's
// function until Close.
func (c *Client) relayMessages(msgs <-chan *redis.Message) {
	defer c.wg.Done()
	for {
		select {
		case <-c.done:
			return
		case msg, ok := <-msgs:
			if !ok {
				return
			}
			m, err := decodeMessage(msg.Payload)
			deliver := c.relay.Load()
			if err != nil || m.sender == c.id || len(m.keys) != 2 || deliver == nil {
				continue
			}
			c.m.PubSubRelayed.WithLabelValues("received").Inc()
			(*deliver)([]byte(m.keys[0]), []byte(m.keys[1]), m.kind == msgSPublish)
		}
	}
}
