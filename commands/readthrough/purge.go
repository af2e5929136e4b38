package readthrough

import (
	"context"
	"strconv"

	"github.com/stampedeless/stampedeless/commands"
	"github.com/stampedeless/stampedeless/resp"
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
func (f *family) cmdPurgeTag(c *commands.Ctx, args [][]byte) {
	tags, soft := args[1:], false
	if resp.EqualFold(args[1], "soft") && len(args) > 2 {
		tags, soft = args[2:], true
	}
	names := make([]string, len(tags))
	for i, t := range tags {
		names[i] = string(t)
	}
	n, err := f.filler(c).Purge(context.Background(), fillCaller(c), names, soft, c.Client.WritableKeys())
	if err != nil {
		c.W.Error("ERR PURGE.TAG purged " + strconv.Itoa(n) + " keys on this replica only: the shared Redis did not take the purge; run it again")
		return
	}
	c.W.Int(int64(n))
}
