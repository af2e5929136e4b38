// ioredis in its default configuration (v6 opens with HELLO 3, falling back
// to RESP2 only if HELLO is refused) against the server at the
// address given: a MULTI/EXEC, a transaction with a runtime error, and an
// optimistic WATCH transaction another connection breaks. It prints one JSON
// line per step; server/clients_node_test.go runs it against stampedeless and
// redis-server and requires the same lines from both.
'use strict';
const Redis = require('ioredis');

// plain turns exec()'s [[err, result], ...] into JSON-friendly values: an
// error becomes {"error": message}.
function plain(replies) {
  if (replies === null) {
    return null;
  }
  return replies.map(([err, result]) => (err ? { error: err.message } : result));
}

async function main() {
  const [host, port] = process.argv[2].split(':');
  const redis = new Redis({ host, port: Number(port) });
  const other = new Redis({ host, port: Number(port) });
  const out = (name, value) => console.log(JSON.stringify({ [name]: value }));
  try {
    await redis.del('io:a', 'io:s', 'io:w');
    // The protocol the handshake settled on: 3 unless the server refused HELLO.
    out('client-info-resp', (await redis.client('INFO')).match(/ resp=(\d+)/)[1]);

    out('multi', plain(await redis.multi().set('io:a', '1').incr('io:a').get('io:a').exec()));

    // INCR of a non-integer fails when EXEC runs it, not when it is queued:
    // the other commands still run, and the error is in its own slot.
    out('multi-runtime-error', plain(await redis.multi()
      .set('io:s', 'text').incr('io:s').get('io:s').exec()));

    // A queue-time error (wrong arity) aborts the whole transaction: exec()
    // rejects with EXECABORT.
    try {
      await redis.multi().set('io:s', 'x').call('incr').exec();
      out('multi-queue-error', 'resolved');
    } catch (err) {
      out('multi-queue-error', err.message);
    }
    out('after-queue-error', await redis.get('io:s'));

    await redis.set('io:w', '10');
    out('watch', await redis.watch('io:w'));
    const seen = await redis.get('io:w');
    out('other-set', await other.set('io:w', '99'));
    out('watch-broken-exec', plain(await redis.multi().set('io:w', String(Number(seen) + 1)).exec()));
    out('after-broken', await redis.get('io:w'));

    // The same transaction, unbroken, commits.
    out('watch-again', await redis.watch('io:w'));
    const now = await redis.get('io:w');
    out('watch-exec', plain(await redis.multi().set('io:w', String(Number(now) + 1)).exec()));
    out('after-exec', await redis.get('io:w'));

    // MONITOR through ioredis's monitor(), a connection of its own: what
    // another connection runs, as ioredis parses the lines (arguments,
    // database, source without its port).
    const monitor = await redis.monitor();
    const lines = [];
    const ended = new Promise((resolve) => monitor.on('monitor', (time, args, source, database) => {
      lines.push([args, database, source.replace(/:\d+$/, '')]);
      if (args[0] === 'echo') resolve();
    }));
    await other.set('io:m', 'a "b"\n\x01');
    await other.eval("return redis.call('get', KEYS[1])", 1, 'io:m');
    await other.echo('end');
    await ended;
    monitor.disconnect();
    out('monitor', lines);

    // Keyspace events through ioredis's psubscribe on a connection of its
    // own, as a local cache that drops what the server changes or expires
    // listens: another connection's writes, and a key read after it expired.
    await redis.config('SET', 'notify-keyspace-events', 'KEA');
    const sub = redis.duplicate();
    const events = [];
    const done = new Promise((resolve) => sub.on('pmessage', (pattern, channel, key) => {
      events.push(channel.replace('__keyevent@0__:', '') + ' ' + key);
      if (key === 'io:done') resolve();
    }));
    await sub.psubscribe('__keyevent@0__:*');
    await other.set('io:e', '1');
    await other.incr('io:e');
    await other.hset('io:h', 'f', 'v');
    await other.set('io:x', 'v', 'PX', 1);
    while (await other.get('io:x') !== null) {
      await new Promise((r) => setTimeout(r, 5));
    }
    await other.del('io:e', 'io:h');
    await other.set('io:done', '1');
    await done;
    sub.disconnect();
    await redis.config('SET', 'notify-keyspace-events', '');
    out('keyspace-events', events);

    out('del', await redis.del('io:a', 'io:s', 'io:w', 'io:m', 'io:done'));
  } finally {
    redis.disconnect();
    other.disconnect();
  }
}

main().catch((err) => { console.error(err); process.exit(1); });
