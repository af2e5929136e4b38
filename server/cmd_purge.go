package server

import (
	"context"
	"strconv"

	"github.com/stampedeless/stampedeless/resp"
	"github.com/stampedeless/stampedeless/swr"
)

// cmdPurgeTag implements PURGE.TAG [SOFT] tag [tag ...]: every key whose
// origin tagged it with any of the tags is deleted or, with SOFT, made
// stale, so it is served stale while one refresh runs. The reply is the
// number of keys purged. SOFT is the option only when a tag follows it: a
// single tag named SOFT is purged by PURGE.TAG SOFT.
//
// Like DEL and FLUSHALL, it needs no more than an authenticated connection
// (not --enable-loader-commands): it sends no request anywhere, and purging
// is what an origin's deploy hook does.
//
// Its keys are not among its arguments, so the ACL's key patterns apply
// key by key: a user purges only the tagged keys it may write, and the
// others stay, uncounted, as if not tagged. A tenant limited to
// ~tenantA:* purges its own keys under a tag it shares with others, and
// nothing else; no NOPERM, since it names no key it may not use.
func cmdPurgeTag(c *Conn, args [][]byte) {
	tags, soft := args[1:], false
	if resp.EqualFold(args[1], "soft") && len(args) > 2 {
		tags, soft = args[2:], true
	}
	names := make([]string, len(tags))
	for i, t := range tags {
		names[i] = string(t)
	}
	n, err := c.srv.opts.Filler.Purge(context.Background(), c.fillCaller(), names, soft, c.writableKeys())
	if err != nil {
		c.w.Error("ERR PURGE.TAG purged " + strconv.Itoa(n) + " keys on this replica only: the shared Redis did not take the purge; run it again")
		return
	}
	c.w.Int(int64(n))
}

// writableKeys is the filter of the keys c's user may write, for a
// command that touches keys its arguments do not name (PURGE.TAG); nil
// when the user may write every key.
func (c *Conn) writableKeys() swr.KeyFilter {
	p := c.user.Load().Perms()
	if p.AllKeys() {
		return nil
	}
	return func(key string) bool { return p.CanAccessKey([]byte(key), false, true) }
}
