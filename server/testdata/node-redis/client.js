// node-redis in its default configuration, which speaks RESP3 (HELLO 3),
// against the server at the address given. It prints one line per step;
// resp/clients_test.go runs it against stampedeless and redis-server and
// requires the same lines from both.
'use strict';
const { createClient } = require('redis');

async function main() {
  const addr = process.argv[2];
  const client = createClient({ url: `redis://${addr}` });
  client.on('error', (err) => { console.error('client error:', err.message); process.exitCode = 1; });
  await client.connect();
  const out = (name, value) => console.log(`${name} ${JSON.stringify(value)}`);
  out('set', await client.set('node:k', 'v'));
  out('get', await client.get('node:k'));
  out('get-missing', await client.get('node:missing'));
  out('set-nx-exists', await client.set('node:k', 'w', { NX: true }));
  out('mget', await client.mGet(['node:k', 'node:missing']));
  out('expire', await client.expire('node:k', 100));
  out('ttl', await client.ttl('node:k'));
  out('incrbyfloat', await client.incrByFloat('node:f', 1.5));
  out('config-get', await client.configGet('appendonly'));
  const info = await client.clientInfo();
  out('client-info-resp', info.resp);
  out('info-has-version', (await client.info('server')).includes('redis_version:'));
  out('del', await client.del(['node:k', 'node:f', 'node:missing']));
  await clientSideCache(addr, client, out);
  out('quit', await client.quit());
}

// clientSideCache turns on node-redis's client-side cache (CLIENT TRACKING
// in RESP3): a repeated GET is a cache hit, and another connection's SET
// invalidates it, which the cache learns asynchronously.
async function clientSideCache(addr, writer, out) {
  const cached = createClient({ url: `redis://${addr}`, RESP: 3, clientSideCache: { ttl: 0, maxEntries: 0 } });
  await cached.connect();
  await writer.set('node:csc', 'v1');
  out('csc-get', [await cached.get('node:csc'), await cached.get('node:csc')]);
  out('csc-hits', cached.clientSideCache.stats().hitCount);
  await writer.set('node:csc', 'v2');
  let seen = false;
  for (const deadline = Date.now() + 30000; !seen && Date.now() < deadline;) {
    seen = (await cached.get('node:csc')) === 'v2';
    if (!seen) await new Promise((resolve) => setTimeout(resolve, 5));
  }
  out('csc-invalidated', seen);
  await writer.del('node:csc');
  await cached.quit();
}

main().catch((err) => { console.error(err); process.exit(1); });
