// redis-om (Redis's object mapper for Node) in its default configuration,
// storing entities as hashes through node-redis 4, against the server at the
// address given: save is a MULTI of UNLINK and HSET, fetch an HGETALL,
// remove an UNLINK, expire an EXPIRE. It prints one JSON line per step;
// resp/clients_node_test.go runs it against stampedeless and redis-server
// and requires the same lines from both.
'use strict';
const { createClient } = require('redis');
const { Schema, Repository, EntityId, EntityKeyName } = require('redis-om');

async function main() {
  const client = createClient({ url: `redis://${process.argv[2]}` });
  client.on('error', (err) => {
    console.error('redis error:', err && err.message ? err.message : err);
    process.exitCode = 1;
  });
  await client.connect();
  const out = (name, value) => console.log(JSON.stringify({ [name]: value }));
  // An entity as JSON shows it, with the id and key redis-om attaches as
  // symbols.
  const show = (e) => ({ id: e[EntityId], key: e[EntityKeyName], ...e });
  const schema = new Schema('album', {
    artist: { type: 'string' },
    title: { type: 'text' },
    year: { type: 'number' },
    genres: { type: 'string[]' },
    outOfPublication: { type: 'boolean' },
    released: { type: 'date' },
    studio: { type: 'point' },
  }, { dataStructure: 'HASH' });
  const albums = new Repository(schema, client);
  const raw = async (key) => {
    const h = await client.hGetAll(key);
    return Object.fromEntries(Object.entries(h).sort(([a], [b]) => a.localeCompare(b)));
  };
  try {
    await client.del(['album:1', 'album:2', 'album:3', 'album:4']);
    out('client-info-resp', (await client.clientInfo()).resp);
    out('save', show(await albums.save('1', {
      artist: 'Mushroomhead', title: 'The Righteous & The Butterfly', year: 2014,
      genres: ['metal', 'industrial'], outOfPublication: true,
      released: new Date('2014-05-27T00:00:00Z'), studio: { longitude: -81.69, latitude: 41.5 },
    })));
    out('raw', await raw('album:1'));
    out('type', await client.type('album:1'));
    out('encoding', await client.objectEncoding('album:1'));
    out('fetch', show(await albums.fetch('1')));
    // Saving again replaces the hash: a field set to null is gone.
    const a = await albums.fetch('1');
    a.year = 2015;
    a.genres = ['metal'];
    a.studio = null;
    out('save-again', show(await albums.save(a)));
    out('raw-again', await raw('album:1'));
    // A long text makes Redis hold the hash as a hashtable.
    await albums.save('2', { artist: 'X'.repeat(100), title: 'Long', year: 1 });
    out('encoding-long', await client.objectEncoding('album:2'));
    out('fetch-many', (await albums.fetch('1', '2', '3')).map(show));
    // An entity with no field left removes its hash.
    out('save-empty', show(await albums.save('2', {})));
    out('exists-empty', await client.exists('album:2'));
    await albums.expire('1', 100);
    const ttl = await client.ttl('album:1');
    out('ttl', ttl > 90 && ttl <= 100);
    await albums.save('4', { artist: 'Y', year: 4 });
    await albums.remove('1', '4');
    out('exists-removed', await client.exists(['album:1', 'album:4']));
    out('fetch-removed', show(await albums.fetch('1')));
  } finally {
    await client.quit();
  }
}

main().catch((err) => { console.error(err); process.exit(1); });
