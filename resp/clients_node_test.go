package resp

import "testing"

// TestClientNodeIORedis runs ioredis (testdata/node-ioredis) in its default
// configuration: a MULTI/EXEC, a transaction whose INCR fails at EXEC time
// (the error in its own slot, the rest applied), one aborted at queue time,
// and a WATCH another connection breaks (exec resolves null) or leaves alone.
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
		`{"del":3}`,
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
