package cluster

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/stampedeless/stampedeless/loader"
)

// The fleet's loader registrations (loader.Fleet): one hash, <prefix>loaders,
// with a field per loader prefix. A field's value is a registration, rank
// first so that loaderPutScript can compare ranks without decoding:
//
//	version   20 decimal digits
//	replica   16 bytes, the registering replica's id ("0"s for none)
//	fields    as message keys (appendStrings): "-" for a removal; else "+",
//	          url, timeout in ms, concurrency, batch, then each header's
//	          name and value. A registration without a batch field (an
//	          even count of fields) is a loader of batch 0, as replicas
//	          before batch loaders wrote it.
//
// Header values travel and rest in plain text: whoever can read the shared
// Redis can read them.

// rankLen is the length of a registration's rank: version and replica.
const rankLen = 20 + replicaIDLen

// noReplica stands for a registration made without a fleet.
const noReplica = "0000000000000000"

var errBadRegistration = errors.New("cluster: malformed loader registration")

// loaderWatch is what WatchLoaders set.
type loaderWatch struct {
	heard  func(loader.Registration) error
	resync func() error
}

func encodeRegistration(reg loader.Registration) string {
	replica := reg.Replica
	if len(replica) != replicaIDLen {
		replica = noReplica
	}
	b := fmt.Appendf(nil, "%020d%s", reg.Version, replica)
	if reg.Removed {
		return string(appendStrings(b, []string{"-"}))
	}
	fields := []string{"+", reg.URL, strconv.FormatInt(reg.Timeout.Milliseconds(), 10), strconv.Itoa(reg.Concurrency),
		strconv.Itoa(reg.Batch)}
	for _, h := range reg.Headers {
		fields = append(fields, h.Name, h.Value)
	}
	return string(appendStrings(b, fields))
}

func decodeRegistration(prefix, v string) (loader.Registration, error) {
	reg := loader.Registration{Config: loader.Config{Prefix: prefix}}
	if len(v) < rankLen {
		return reg, errBadRegistration
	}
	version, err := strconv.ParseUint(v[:20], 10, 64)
	if err != nil {
		return reg, errBadRegistration
	}
	reg.Version = version
	if r := v[20:rankLen]; r != noReplica {
		reg.Replica = r
	}
	f, err := parseStrings([]byte(v[rankLen:]))
	switch {
	case err != nil || len(f) == 0:
		return reg, errBadRegistration
	case f[0] == "-" && len(f) == 1:
		reg.Removed = true
		return reg, nil
	case f[0] != "+" || len(f) < 4:
		return reg, errBadRegistration
	}
	ms, err1 := strconv.ParseInt(f[2], 10, 64)
	n, err2 := strconv.Atoi(f[3])
	headers, batch, err3 := 4, 0, error(nil)
	if len(f)%2 != 0 { // with a batch field
		batch, err3 = strconv.Atoi(f[4])
		headers = 5
	}
	if err1 != nil || err2 != nil || err3 != nil {
		return reg, errBadRegistration
	}
	reg.URL, reg.Timeout, reg.Concurrency, reg.Batch = f[1], time.Duration(ms)*time.Millisecond, n, batch
	for i := headers; i < len(f); i += 2 {
		reg.Headers = append(reg.Headers, loader.Header{Name: f[i], Value: f[i+1]})
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
