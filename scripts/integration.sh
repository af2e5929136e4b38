#!/usr/bin/env bash
# Drives a freshly built stampedeless with the real Redis tools: redis-cli
# one-shot and piped, redis-cli's help (COMMAND DOCS), and redis-benchmark.
# Fails on any unexpected reply, any benchmark error, or a server crash.
# The server takes its flags from the environment too (STAMPEDELESS_EVENT_LOOPS=1
# runs it all against one event loop).
set -euo pipefail
cd "$(dirname "$0")/.."

for tool in redis-cli redis-benchmark; do
  command -v "$tool" >/dev/null || { echo "integration: $tool not found (apt-get install redis-tools)" >&2; exit 1; }
done

work=$(mktemp -d)
server_pid=""
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

go build -o "$work/stampedeless" ./cmd/stampedeless
# Port 0: the kernel picks a free port, and the server logs the address.
"$work/stampedeless" --addr 127.0.0.1:0 --metrics-addr "" 2>"$work/server.log" &
server_pid=$!
port=""
for _ in $(seq 100); do
  port=$(sed -n 's/.*stampedeless ready" addr=127.0.0.1:\([0-9]*\).*/\1/p' "$work/server.log")
  [ -n "$port" ] && break
  sleep 0.1
done
[ -n "$port" ] || { echo "integration: server did not start"; cat "$work/server.log"; exit 1; }

cli() { redis-cli -p "$port" "$@"; }
fail=0
passed=0
failed=0
expect() { # expect <want> <command...>
  local want=$1; shift
  local got
  got=$(cli "$@" 2>&1)
  if [ "$got" != "$want" ]; then
    echo "FAIL: redis-cli $* -> '$got', want '$want'"; fail=1; failed=$((failed + 1))
  else
    echo "ok: redis-cli $* -> $got"; passed=$((passed + 1))
  fi
}

expect PONG ping
expect OK set greeting "hello world"
expect "hello world" get greeting
expect OK set counter 10 ex 100
expect 11 incr counter
expect 100 ttl counter
expect 2 exists greeting counter
expect 1 del greeting
expect "" get greeting
expect "ERR unknown command 'nosuch', with args beginning with: 'x' " nosuch x

# Piped mode: redis-cli reads commands from stdin (it also fetches COMMAND
# DOCS first, as in interactive mode).
piped=$(printf 'SET piped 1\nINCRBY piped 41\nGET piped\nDBSIZE\n' | cli)
want=$'OK\n42\n42\n2'
if [ "$piped" != "$want" ]; then echo "FAIL: piped redis-cli gave: $piped"; fail=1; else echo "ok: piped redis-cli"; fi

# redis-cli builds its help and argument hints from COMMAND DOCS.
help=$(cli help set | sed 's/\x1b\[[0-9;]*m//g')
if ! grep -q 'ignoring its type' <<<"$help" || ! grep -q 'SET key value \[NX|XX\] \[GET\] \[EX seconds|PX milliseconds|EXAT unix-time-seconds|PXAT unix-time-milliseconds|KEEPTTL\]' <<<"$help"; then
  echo "FAIL: redis-cli help set:"; echo "$help"; fail=1
else
  echo "ok: redis-cli help set shows the argument syntax from COMMAND DOCS"
fi

# redis-benchmark's whole default test list (no -t) must complete every
# test without an error reply.
bench=$(timeout 300 redis-benchmark -p "$port" -n 10000 -q 2>&1 | tr '\r' '\n' | grep -v 'rps=' | grep . || true)
echo "$bench"
for t in PING_INLINE PING_MBULK SET GET INCR LPUSH RPUSH LPOP RPOP SADD HSET SPOP ZADD ZPOPMIN LRANGE_100 LRANGE_300 LRANGE_500 LRANGE_600 MSET; do
  grep -q "^$t.*requests per second" <<<"$bench" || { echo "FAIL: redis-benchmark $t did not complete"; fail=1; }
done
if grep -qiE 'error|err ' <<<"$bench"; then echo "FAIL: redis-benchmark reported errors"; fail=1; fi
bench16=$(timeout 120 redis-benchmark -p "$port" -t set,get -n 20000 -P 16 -r 100000 -q 2>&1 | tr '\r' '\n' | grep 'requests per second' || true)
echo "$bench16"
[ "$(grep -c 'requests per second' <<<"$bench16")" = 2 ] || { echo "FAIL: pipelined redis-benchmark"; fail=1; }

if ! kill -0 "$server_pid" 2>/dev/null; then echo "FAIL: server died"; cat "$work/server.log"; fail=1; fi
expect PONG ping

if [ "$fail" != 0 ]; then
  echo "server log:"; cat "$work/server.log"
  echo "integration: $passed passed, $((failed > 0 ? failed : 1)) failed"; exit 1
fi
echo "integration: $passed passed, 0 failed"
