// ioredis in its default configuration (v6 opens with HELLO 3, falling back
// to RESP2 only if HELLO is refused) against the server at the
// address given: a MULTI/EXEC, a transaction with a runtime error, and an
// optimistic WATCH transaction another connection breaks. It prints one JSON
// line per step; resp/clients_node_test.go runs it against stampedeless and
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

    out('del', await redis.del('io:a', 'io:s', 'io:w', 'io:m'));
  } finally {
    redis.disconnect();
    other.disconnect();
  }
}

main().catch((err) => { console.error(err); process.exit(1); });
