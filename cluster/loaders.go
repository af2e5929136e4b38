package cluster

import (
	"context"
	"errors"

	"github.com/stampedeless/stampedeless/loader"
)

// The fleet's loader registrations (loader.Fleet): one hash, <prefix>loaders,
// with a field per loader prefix, whose value is the registration as
// loader.EncodeRegistration encodes it, rank first so that loaderPutScript
// can compare ranks without decoding.
//
// Header values travel and rest in plain text: whoever can read the shared
// Redis can read them.

// rankLen is the length of a registration's rank: version and replica.
const rankLen = loader.RankLen

// noReplica stands for a registration made without a fleet.
const noReplica = loader.NoReplica

var errBadRegistration = errors.New("cluster: malformed loader registration")

// loaderWatch is what WatchLoaders set.
type loaderWatch struct {
	heard  func(loader.Registration) error
	resync func() error
}

func encodeRegistration(reg loader.Registration) string { return loader.EncodeRegistration(reg) }

func decodeRegistration(prefix, v string) (loader.Registration, error) {
	reg, err := loader.DecodeRegistration(prefix, v)
	if err != nil {
		return reg, errBadRegistration
	}
	return reg, nil
}

// PutLoader stores reg in the shared Redis and announces it (loader.Fleet).
// With Redis down it returns ErrUnavailable at once.
func (c *Client) PutLoader(ctx context.Context, reg loader.Registration, force bool) (loader.Registration, error) {
	if !c.up.Load() {
		return reg, ErrUnavailable
	}
	val := encodeRegistration(reg)
	announce := message{kind: msgLoader, sender: c.id, keys: []string{reg.Prefix, val}}.encode()
	ctx, cancel := c.opCtx(ctx)
	defer cancel()
	out, err := loaderPutScript.Run(ctx, c.rdb, []string{c.names.loaders()},
		reg.Prefix, val, boolArg(force), c.names.events(), announce).Slice()
	if err != nil {
		return reg, c.check(err)
	}
	if len(out) != 2 {
		return reg, errBadRegistration
	}
	stored, _ := out[1].(string)
	if n, _ := out[0].(int64); n == 1 {
		c.m.LoaderRegistrations.WithLabelValues("stored").Inc()
	}
	return decodeRegistration(reg.Prefix, stored)
}

// Loaders returns every registration in the shared Redis (loader.Fleet).
// One that cannot be decoded is logged and left out. With Redis down it
// returns ErrUnavailable at once.
func (c *Client) Loaders(ctx context.Context) ([]loader.Registration, error) {
	if !c.up.Load() {
		return nil, ErrUnavailable
	}
	ctx, cancel := c.opCtx(ctx)
	defer cancel()
	all, err := c.rdb.HGetAll(ctx, c.names.loaders()).Result()
	if err != nil {
		return nil, c.check(err)
	}
	regs := make([]loader.Registration, 0, len(all))
	for prefix, v := range all {
		reg, err := decodeRegistration(prefix, v)
		if err != nil {
			c.log.Warn("a loader registration in the shared Redis cannot be read; ignored", "prefix", prefix, "key", c.names.loaders())
			continue
		}
		regs = append(regs, reg)
	}
	return regs, nil
}

// WatchLoaders sets the functions that receive other replicas' loader
// registrations and reconcile after Redis comes back (loader.Fleet).
func (c *Client) WatchLoaders(heard func(loader.Registration) error, resync func() error) {
	c.loaders.Store(&loaderWatch{heard: heard, resync: resync})
}

// heardLoader applies a registration another replica announced.
func (c *Client) heardLoader(m message) {
	w := c.loaders.Load()
	if w == nil || len(m.keys) != 2 {
		return
	}
	reg, err := decodeRegistration(m.keys[0], m.keys[1])
	if err != nil {
		return
	}
	c.m.LoaderRegistrations.WithLabelValues("heard").Inc()
	c.refused(w.heard(reg))
}

// refused logs the loader registrations this replica would not apply.
// Their errors never hold a header value.
func (c *Client) refused(err error) {
	if errors.Is(err, loader.ErrConfig) {
		c.m.LoaderRegistrations.WithLabelValues("refused").Inc()
		c.log.Warn("a loader registered by the fleet is refused on this replica; its prefix has no loader here", "err", err)
	}
}

// kickResync asks syncLoaders for a reconciliation: after Redis answers
// again, or the event channel was subscribed again, when announcements may
// have been missed.
func (c *Client) kickResync() {
	select {
	case c.resync <- struct{}{}:
	default: // one is pending already
	}
}

// syncLoaders runs the reconciliations kickResync asks for, one at a time,
// until Close. They make round trips, which the listener must not.
func (c *Client) syncLoaders() {
	defer c.wg.Done()
	for {
		select {
		case <-c.done:
			return
		case <-c.resync:
		}
		w := c.loaders.Load()
		if w == nil {
			continue
		}
		c.m.LoaderRegistrations.WithLabelValues("resync").Inc()
		err := w.resync()
		c.refused(err)
		if err != nil && !errors.Is(err, loader.ErrConfig) && !errors.Is(err, ErrUnavailable) {
			c.log.Warn("reconciling loader registrations with the shared Redis failed; retried when it answers again", "err", err)
		}
	}
}

func boolArg(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// A replica id is what an encoded registration holds (a negative constant
// would not compile either way).
const _ = uint(replicaIDLen-loader.ReplicaIDLen) + uint(loader.ReplicaIDLen-replicaIDLen)
