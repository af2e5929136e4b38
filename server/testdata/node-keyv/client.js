// keyv with @keyv/redis in their default configuration against the server at
// the address given. @keyv/redis runs setMany, hasMany and deleteMany each as
// one MULTI/EXEC through node-redis, and getMany as one MGET. It prints one
// JSON line per step; resp/clients_node_test.go runs it against stampedeless
// and redis-server and requires the same lines from both.
'use strict';
const { createKeyv } = require('@keyv/redis');

async function main() {
  const keyv = createKeyv(`redis://${process.argv[2]}`);
  // keyv reports a failed store operation as an event and a false or
  // undefined result; make every such failure visible and fatal.
  keyv.on('error', (err) => {
    console.error('keyv error:', err && err.message ? err.message : err);
    process.exitCode = 1;
  });
  const client = await keyv.store.getClient();
  // undefined (what keyv returns for a miss) would vanish from JSON.
  const out = (name, value) => console.log(JSON.stringify({ [name]: value },
    (_, v) => (v === undefined ? 'undefined' : v)));
  const keys = ['kv:a', 'kv:b', 'kv:c', 'kv:missing'];
  try {
    await client.del(keys);
    out('client-info-resp', (await client.clientInfo()).resp);
    out('setMany', await keyv.setMany([
      { key: 'kv:a', value: 'one' },
      { key: 'kv:b', value: { n: 2 } },
      { key: 'kv:c', value: [3], ttl: 100000 },
    ]));
    out('hasMany', await keyv.hasMany(keys));
    out('getMany', await keyv.getMany(keys));
    // What keyv stored: its JSON envelope, and the TTL as a PX on the SET.
    out('raw-a', await client.get('kv:a'));
    const pttl = await client.pTTL('kv:c');
    out('pttl-c-set', pttl > 0 && pttl <= 100000);
    out('deleteMany', await keyv.deleteMany(['kv:a', 'kv:missing']));
    out('deleteMany-none', await keyv.deleteMany(['kv:a', 'kv:missing']));
    out('hasMany-after', await keyv.hasMany(keys));
    out('getMany-after', await keyv.getMany(keys));
    out('deleteMany-rest', await keyv.deleteMany(['kv:b', 'kv:c']));
    out('exists-after', await client.exists(keys));
  } finally {
    await keyv.disconnect();
  }
}

main().catch((err) => { console.error(err); process.exit(1); });
