package server

import "testing"

// TestClientNodeIORedis runs ioredis (testdata/node-ioredis) in its default
// configuration: a MULTI/EXEC, a transaction whose INCR fails at EXEC time
// (the error in its own slot, the rest applied), one aborted at queue time,
// and a WATCH another connection breaks (exec resolves null) or leaves alone;
// then MONITOR through its monitor(), which parses the lines, and keyspace
// events through its psubscribe.
func TestClientNodeIORedis(t *testing.T) {
	runNodeClient(t, "node-ioredis", []string{
		`{"client-info-resp":"3"}`,
		`{"multi":["OK",2,"2"]}`,
		`{"multi-runtime-error":["OK",{"error":"ERR value is not an integer or out of range"},"text"]}`,
		`{"multi-queue-error":"EXECABORT Transaction discarded because of previous errors."}`,
		`{"after-queue-error":"text"}`,
		`{"watch":"OK"}`,
		`{"other-set":"OK"}`,
		`{"watch-broken-exec":null}`,
		`{"after-broken":"99"}`,
		`{"watch-again":"OK"}`,
		`{"watch-exec":["OK"]}`,
		`{"after-exec":"100"}`,
		`{"monitor":[[["set","io:m","a \"b\"\\n\\x01"],"0","127.0.0.1"],[["eval","return redis.call('get', KEYS[1])","1","io:m"],"0","127.0.0.1"],[["get","io:m"],"0","lua"],[["echo","end"],"0","127.0.0.1"]]}`,
		`{"keyspace-events":["set io:e","incrby io:e","hset io:h","set io:x","expire io:x","expired io:x","del io:e","del io:h","set io:done"]}`,
		`{"del":5}`,
	})
}

// TestClientNodeKeyv runs keyv with @keyv/redis (testdata/node-keyv) in their
// default configuration: setMany, hasMany and deleteMany each go out as one
// MULTI/EXEC, getMany as one MGET.
func TestClientNodeKeyv(t *testing.T) {
	runNodeClient(t, "node-keyv", []string{
		`{"client-info-resp":2}`,
		`{"setMany":"undefined"}`,
		`{"hasMany":[true,true,true,false]}`,
		`{"getMany":["one",{"n":2},[3],"undefined"]}`,
		`{"raw-a":"{\"value\":\"one\"}"}`,
		`{"pttl-c-set":true}`,
		`{"deleteMany":true}`,
		`{"deleteMany-none":false}`,
		`{"hasMany-after":[false,true,true,false]}`,
		`{"getMany-after":["undefined",{"n":2},[3],"undefined"]}`,
		`{"deleteMany-rest":true}`,
		`{"exists-after":0}`,
	})
}

// TestClientNodeRedisOM runs redis-om (testdata/node-redis-om), Redis's
// object mapper for Node, storing entities as hashes through node-redis 4:
// save (MULTI of UNLINK and HSET), fetch (HGETALL) of one and of several,
// a save that empties an entity (its hash removed), expire and remove; and
// the hashes it wrote, their type and encoding.
func TestClientNodeRedisOM(t *testing.T) {
	runNodeClient(t, "node-redis-om", []string{
		`{"client-info-resp":2}`,
		`{"save":{"id":"1","key":"album:1","artist":"Mushroomhead","title":"The Righteous & The Butterfly","year":2014,"genres":["metal","industrial"],"outOfPublication":true,"released":"2014-05-27T00:00:00.000Z","studio":{"longitude":-81.69,"latitude":41.5}}}`,
		`{"raw":{"artist":"Mushroomhead","genres":"metal|industrial","outOfPublication":"1","released":"1401148800","studio":"-81.69,41.5","title":"The Righteous & The Butterfly","year":"2014"}}`,
		`{"type":"hash"}`,
		`{"encoding":"listpack"}`,
		`{"fetch":{"id":"1","key":"album:1","artist":"Mushroomhead","title":"The Righteous & The Butterfly","year":2014,"genres":["metal","industrial"],"outOfPublication":true,"released":"2014-05-27T00:00:00.000Z","studio":{"longitude":-81.69,"latitude":41.5}}}`,
		`{"save-again":{"id":"1","key":"album:1","artist":"Mushroomhead","title":"The Righteous & The Butterfly","year":2015,"genres":["metal"],"outOfPublication":true,"released":"2014-05-27T00:00:00.000Z","studio":null}}`,
		`{"raw-again":{"artist":"Mushroomhead","genres":"metal","outOfPublication":"1","released":"1401148800","title":"The Righteous & The Butterfly","year":"2015"}}`,
		`{"encoding-long":"hashtable"}`,
		`{"fetch-many":[{"id":"1","key":"album:1","artist":"Mushroomhead","title":"The Righteous & The Butterfly","year":2015,"genres":["metal"],"outOfPublication":true,"released":"2014-05-27T00:00:00.000Z"},{"id":"2","key":"album:2","artist":"XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX","title":"Long","year":1,"genres":[]},{"id":"3","key":"album:3","genres":[]}]}`,
		`{"save-empty":{"id":"2","key":"album:2"}}`,
		`{"exists-empty":0}`,
		`{"ttl":true}`,
		`{"exists-removed":0}`,
		`{"fetch-removed":{"id":"1","key":"album:1","genres":[]}}`,
	})
}
