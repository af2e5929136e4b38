package cluster

import "github.com/redis/go-redis/v9"

// The Lua scripts that make each lease step atomic. Every script's keys
// share one hash tag (see names), so each runs on one Redis Cluster node.
// go-redis runs them with EVALSHA and loads them on NOSCRIPT.

// claimScript decides a fill: the shared entry if there is one (for a
// refresh, only one still fresh at a given time), else the fleet's failure
// if the key is cooling down, else the lease if it is free, else "held"
// with the holder's token. An entry comes before a failure because a stale
// value is the answer during a cooldown.
//
// A takeover names the token of the lease its caller followed for
// --lease-wait in vain: if that lease is still held, it passes to the
// caller (compare and set), so of the followers whose wait runs out one
// wins, and the others find the winner's lease held and follow it.
//
// KEYS: value, failure, lease. ARGV: token, lease ms, fresh-after (unix
// ms; "0": any entry will do), the token to take over ("": none).
var claimScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 1 then
  local fresh = tonumber(redis.call('HGET', KEYS[1], 'fresh') or '0')
  local after = tonumber(ARGV[3])
  if after == 0 or fresh == 0 or fresh > after then
    return {'val', redis.call('HGETALL', KEYS[1])}
  end
end
if redis.call('EXISTS', KEYS[2]) == 1 then
  return {'err', redis.call('HGETALL', KEYS[2])}
end
if redis.call('SET', KEYS[3], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return {'lease'}
end
local holder = redis.call('GET', KEYS[3])
if ARGV[4] ~= '' and holder == ARGV[4] then
  redis.call('SET', KEYS[3], ARGV[1], 'PX', ARGV[2])
  return {'lease'}
end
return {'held', holder}
`)

// settleScript publishes a lease holder's result, if it still holds the
// lease: it replaces the hash at KEYS[1] (the value, or the failure), clears
// KEYS[3] (the failure after a success; the failure itself after a failure,
// which is rewritten anyway), releases the lease and announces the result
// on the event channel. A holder whose lease expired and was taken over, or
// was cleared by a client write, gets 0 and changes nothing: its result is
// older than what the fleet has.
//
// KEYS: target hash, lease, cleared. ARGV: token, channel, message,
// PEXPIREAT ms ("0": none), then HSET's field/value pairs.
var settleScript = redis.NewScript(`
if redis.call('GET', KEYS[2]) ~= ARGV[1] then
  return 0
end
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3])
redis.call('HSET', KEYS[1], unpack(ARGV, 5))
if ARGV[4] ~= '0' then
  redis.call('PEXPIREAT', KEYS[1], ARGV[4])
end
redis.call('PUBLISH', ARGV[2], ARGV[3])
return 1
`)

// releaseScript deletes the lease if it still holds token: compare and
// delete, so a holder never frees a lease that has passed to another.
//
// KEYS: lease. ARGV: token.
var releaseScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
`)

// renewScript extends the lease if it still holds token.
//
// KEYS: lease. ARGV: token, lease ms.
var renewScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
`)

// writeScript makes the shared tier follow a client write: the entry is
// replaced (or deleted) and the key's lease is cleared, so that a fill that
// started before the write cannot publish over it. With a message, it also
// announces the write on the event channel, in the same round trip.
//
// KEYS: value, lease. ARGV: channel, message ("": none), then "-1" to
// delete, else PEXPIREAT ms ("0": none) followed by HSET's field/value
// pairs.
var writeScript = redis.NewScript(`
redis.call('DEL', KEYS[1], KEYS[2])
if ARGV[3] ~= '-1' then
  redis.call('HSET', KEYS[1], unpack(ARGV, 4))
  if ARGV[3] ~= '0' then
    redis.call('PEXPIREAT', KEYS[1], ARGV[3])
  end
end
if ARGV[2] ~= '' then
  redis.call('PUBLISH', ARGV[1], ARGV[2])
end
return 1
`)

// slotScript takes one of the fleet's fill slots if fewer than the limit
// are held. Slots are members of a sorted set scored by when they expire,
// in Redis's own clock, so a replica that dies holding one leaks it only
// until then.
//
// KEYS: the slots. ARGV: token, slot ms, limit.
var slotScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[3]) then
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
  return 1
end
return 0
`)

// loaderPutScript stores a loader registration in the hash KEYS[1], under
// its prefix, and announces it on the event channel, if it outranks the
// registration stored there; with force it is stored anyway, its version
// raised to one above the stored one's if needed, so that the last
// registration Redis runs wins. Every registration starts with its rank:
// the version as 20 decimal digits, then the replica id's 16 bytes (see
// loaders.go). Ranks are compared here number and bytes, not as strings:
// Lua compares strings in the server's locale. Returns {1, stored} or
// {0, the registration that outranks it}.
//
// KEYS: loaders. ARGV: prefix, registration, "1" to force, channel, the
// announcement (which ends with the registration; a raised version is
// written into both).
var loaderPutScript = redis.NewScript(`
local function outranks(a, b)
  local va, vb = tonumber(string.sub(a, 1, 20)) or 0, tonumber(string.sub(b, 1, 20)) or 0
  if va ~= vb then return va > vb end
  for i = 21, 36 do
    local x, y = string.byte(a, i) or 0, string.byte(b, i) or 0
    if x ~= y then return x > y end
  end
  return false
end
local new = ARGV[2]
local cur = redis.call('HGET', KEYS[1], ARGV[1])
if cur and not outranks(new, cur) then
  if ARGV[3] ~= '1' then
    return {0, cur}
  end
  new = string.format('%020d', (tonumber(string.sub(cur, 1, 20)) or 0) + 1) .. string.sub(new, 21)
end
redis.call('HSET', KEYS[1], ARGV[1], new)
local msg = ARGV[5]
redis.call('PUBLISH', ARGV[4], string.sub(msg, 1, #msg - #new) .. new)
return {1, new}
`)

// tagAddScript lists a key in a tag's set, which lives as long as the
// longest-lived entry listed in it: its expiry is pushed out to the entry's
// stale deadline, and removed for an entry that never expires. Members are
// never removed: one whose entry is gone or no longer carries the tag is
// skipped by purgeKeyScript, and goes with the set.
//
// KEYS: tag set. ARGV: key, the entry's PEXPIREAT ms ("0": none), now ms.
var tagAddScript = redis.NewScript(`
local existed = redis.call('EXISTS', KEYS[1])
redis.call('SADD', KEYS[1], ARGV[1])
local at = tonumber(ARGV[2])
if at == 0 then
  redis.call('PERSIST', KEYS[1])
elseif existed == 0 then
  redis.call('PEXPIREAT', KEYS[1], at)
else
  local left = redis.call('PTTL', KEYS[1])
  if left >= 0 and tonumber(ARGV[3]) + left < at then
    redis.call('PEXPIREAT', KEYS[1], at)
  end
end
return 1
`)

// purgeKeyScript purges one shared entry if it carries any of the tags
// purged: hard, it deletes the entry and its lease (a fill that began
// before the purge cannot publish over it); soft, it makes the entry stale
// at now, keeping its value for the grace. It returns 1 if it purged.
//
// KEYS: value, lease. ARGV: "1" for soft, now ms, the tags.
var purgeKeyScript = redis.NewScript(`
local tags = redis.call('HGET', KEYS[1], 'tags')
if not tags then
  return 0
end
local have = {}
for t in string.gmatch(tags, '[^\n]+') do
  have[t] = true
end
local hit = false
for i = 3, #ARGV do
  if have[ARGV[i]] then
    hit = true
    break
  end
end
if not hit then
  return 0
end
if ARGV[1] == '1' then
  local fresh = tonumber(redis.call('HGET', KEYS[1], 'fresh') or '0')
  if fresh == 0 or fresh > tonumber(ARGV[2]) then
    redis.call('HSET', KEYS[1], 'fresh', ARGV[2])
  end
else
  redis.call('DEL', KEYS[1], KEYS[2])
end
return 1
`)
