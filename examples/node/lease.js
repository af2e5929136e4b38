// Get-or-compute on stampedeless's application fills (FILL.LEASE, FILL.SET,
// FILL.ABORT) with ioredis: of all the callers of a missing or stale key, in
// any number of processes, one computes the value and the others wait for it.
'use strict';

// How long a caller waits for another caller's computation (FILL.LEASE's
// TIMEOUT), in ms.
const WAIT_MS = 2000;

// leaseCache returns getOrCompute(key, ttl, grace, compute), which resolves
// to key's value: the cached one while it is fresh (ttl seconds) or within
// its grace; else the one of compute(), an async function called by exactly
// one caller (the lease holder) and cached for ttl + grace, which the others
// wait for. It resolves to null if the key's filler said it does not exist
// (FILL.SET ... NOTFOUND). When compute rejects, the holder aborts the
// lease with its message, so the waiters reject with the ReplyError
// "LOADERR app: <message>", and every caller while the key cools down with
// "LOADERR app: cooling down for <time left> after: <message>". When
// WAIT_MS passes first, the caller rejects with the server's "TIMEOUT ..."
// instead of computing too: the lease is there for computations too slow or
// costly to run once per caller. A value computed after the lease was lost
// (compute outlasted FILL.LEASE's LEASE, 10 s, or a client wrote the key) is
// returned, not cached.
//
// ioredis sends every command of a client down one connection, in order, so
// FILL.SET and FILL.ABORT go down a second one: behind FILL.LEASEs waiting
// for them, they would wait until those timed out. close() closes it.
function leaseCache(redis) {
  const settle = redis.duplicate();
  async function getOrCompute(key, ttl, grace, compute) {
    const [value, token] = await redis.call('FILL.LEASE', key, ttl, grace, 'TIMEOUT', WAIT_MS);
    if (token === null) return value;
    let computed;
    try {
      computed = await compute();
    } catch (err) {
      // Best effort: if it fails (LEASELOST, or no connection), the lease
      // ends at its term anyway, and compute's error is the news.
      await settle.call('FILL.ABORT', key, token, String(err.message ?? err)).catch(() => {});
      throw err;
    }
    await settle.call('FILL.SET', key, token, computed).catch((err) => {
      if (!err.message.startsWith('LEASELOST')) throw err;
    });
    return computed;
  }
  return { getOrCompute, close: () => settle.disconnect() };
}

module.exports = { leaseCache, WAIT_MS };
