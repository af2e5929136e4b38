// Reads through stampedeless from Node.js with ioredis: GETFILL has no
// typed method, so it goes through redis.call. Then it computes values in
// the application, once per key however many callers want them, with the
// get-or-compute helper of lease.js (FILL.LEASE, FILL.SET, FILL.ABORT).
//
// Start the demo origin and a server whose loader for "demo:" points at it,
// then run the example:
//
//   go run ./cmd/stampedeless origin --not-found-prefix demo:missing: &
//   go run ./cmd/stampedeless --loader 'demo:=http://127.0.0.1:8080/{key}' &
//   cd examples/node && npm ci && node index.js 127.0.0.1:6380
'use strict';

const Redis = require('ioredis');
const { leaseCache } = require('./lease');

// getFill resolves to key's value: from the cache while it is fresh (ttl
// seconds) or stale (grace seconds more, while one refresh runs); else from
// the key's one origin call, however many callers wait for it, waiting at
// most timeoutMs. It resolves to null when the origin answered 404 or 410,
// and rejects with a ReplyError such as "LOADERR demo: status 503" (the
// origin failed), "TIMEOUT ..." (timeoutMs passed first) or "NOLOADER ..."
// (no loader for the key's prefix).
function getFill(redis, key, ttl, grace, timeoutMs) {
  return redis.call('GETFILL', key, ttl, grace, 'TIMEOUT', timeoutMs);
}

async function main() {
  const [host, port] = (process.argv[2] || '127.0.0.1:6380').split(':');
  const redis = new Redis({ host, port: Number(port), maxRetriesPerRequest: 1 });
  try {
    // A miss: the value comes from the origin, and is then cached.
    console.log(`demo:user:42 = ${await getFill(redis, 'demo:user:42', 60, 30, 2000)}`);

    // 100 reads of a cold key at once (pipelined on ioredis's one
    // connection): one origin call serves them all.
    const reads = Array.from({ length: 100 }, () => getFill(redis, 'demo:hot', 60, 30, 2000));
    const values = await Promise.all(reads);
    console.log(`${values.length} concurrent reads of demo:hot: ${new Set(values).size} distinct value(s)`);

    // A key the origin does not have is null (remembered for --negative-ttl).
    const missing = await getFill(redis, 'demo:missing:1', 60, 30, 2000);
    console.log(missing === null
      ? 'demo:missing:1: not found at the origin'
      : `demo:missing:1 = ${missing} (want not found: start the origin with --not-found-prefix demo:missing:)`);

    // Errors are replies; their first word says which.
    try {
      await getFill(redis, 'nowhere:1', 60, 30, 2000);
    } catch (err) {
      if (!(err instanceof Redis.ReplyError)) throw err;
      console.log(`nowhere:1: ${err.message.split(' ')[0]} error: ${err.message}`);
    }

    await leaseExamples(redis);
  } finally {
    redis.disconnect();
  }
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// leaseExamples has 100 callers want a value nobody has computed yet, then
// 10 want one whose computation fails; it prints how many computations ran
// and what the callers got.
async function leaseExamples(redis) {
  const { getOrCompute, close } = leaseCache(redis);
  try {
    let computations = 0;
    const report = async () => {
      computations++;
      await sleep(100); // a slow query
      return '42 rows';
    };
    const values = await Promise.all(Array.from({ length: 100 }, () => getOrCompute('lease:report', 60, 30, report)));
    const wrong = values.find((v) => v !== '42 rows');
    if (wrong !== undefined) throw new Error(`lease:report: a caller got ${wrong}, want 42 rows`);
    console.log(`${values.length} concurrent computes of lease:report: ${computations} computation(s), all got "${values[0]}"`);

    // The computation fails: its caller gets its error, the waiters get it
    // as LOADERR app: ..., and the next caller, without computing, gets
    // LOADERR app: cooling down for ... after: ... while the key cools down.
    computations = 0;
    const broken = async () => {
      computations++;
      await sleep(100);
      throw new Error('database down');
    };
    const results = await Promise.allSettled(Array.from({ length: 10 }, () => getOrCompute('lease:broken', 60, 30, broken)));
    const count = (matches) => results.filter((r) => r.status === 'rejected' && matches(r.reason.message)).length;
    // A waiter whose FILL.LEASE the server reads after the abort (ioredis
    // sends them all on one connection) is told of the cooldown instead:
    // LOADERR app: cooling down for ... after: database down.
    const shared = (m) => m.startsWith('LOADERR app: ') && m.endsWith('database down');
    console.log(`${results.length} concurrent computes of lease:broken: ${computations} computation(s), ` +
      `${count((m) => m === 'database down')} got "database down", ${count(shared)} got "LOADERR app: ...database down"`);
    const again = await getOrCompute('lease:broken', 60, 30, broken).catch((err) => err.message);
    console.log(`lease:broken again: ${again} (${computations} computation(s) in all)`);
  } finally {
    close();
  }
}

main().catch((err) => {
  console.error('example:', err);
  process.exitCode = 1;
});
