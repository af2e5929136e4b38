#!/usr/bin/env bash
# A cache stampede, with and without GETFILL, in under a minute.
#
# Builds stampedeless, starts the demo origin (200 ms per call, counting its
# calls) and a server whose loader points at it, then has 500 clients read
# one cold key at once, 10,000 reads in all:
#   - with GETFILL: redis-benchmark -c 500 -n 10000 GETFILL demo:key 60 30
#   - without: the same clients doing cache-aside on the same server (GET; on
#     a miss call the origin and SET), with bench/cacheaside.
# It prints the origin's calls for each and stops everything. It fails when
# GETFILL made more than one origin call or cache-aside made only one, so
# scripts/test.sh runs it as a check. Needs redis-benchmark, redis-cli and curl.
#
#   scripts/demo.sh                       # defaults
#   CLIENTS=1000 LATENCY=500ms scripts/demo.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh

clients=${CLIENTS:-500}
requests=${REQUESTS:-10000}
latency=${LATENCY:-200ms}

need redis-benchmark redis-cli curl
lib_init
echo "building stampedeless and bench/cacheaside"
build_stampedeless
go build -o "$lib_work/cacheaside" ./bench/cacheaside

start origin "$lib_work/stampedeless" origin --addr 127.0.0.1:0 --latency "$latency"
origin="http://$(logged_addr origin "origin ready")"
start server "$lib_work/stampedeless" --addr 127.0.0.1:0 --metrics-addr 127.0.0.1:0 \
  --loader "demo:=$origin/{key}"
addr=$(logged_addr server "stampedeless ready")
metrics=$(logged_addr server "serving metrics")
port=${addr##*:}
echo "origin $origin (each call takes $latency), stampedeless on $addr, metrics on http://$metrics/metrics"
echo

echo "== with GETFILL: $clients clients, $requests reads of the cold key demo:key =="
echo "\$ redis-benchmark -p $port -c $clients -n $requests -q GETFILL demo:key 60 30"
# redis-benchmark spins forever if its server dies: bound it.
timeout 120 redis-benchmark -p "$port" -c "$clients" -n "$requests" -q GETFILL demo:key 60 30 \
  | tr '\r' '\n' | grep 'requests per second'
with=$(origin_stat "$origin" calls)
with_max=$(origin_stat "$origin" max_in_flight)
coalesced=$(curl -fsS "http://$metrics/metrics" | sed -n 's/^stampedeless_fill_coalesced_waiters_total{loader="demo:"} //p')
echo "origin calls: $with (at most $with_max at once); callers that joined the one load: ${coalesced:-0}"
echo "\$ redis-cli -p $port GET demo:key"
value=$(redis-cli -p "$port" GET demo:key)
echo "$value"
echo
origin_reset "$origin"

echo "== without: the same, cache-aside (GET; on a miss call the origin and SET) =="
echo "\$ go run ./bench/cacheaside -addr $addr -origin $origin -key plain:key -c $clients -n $requests"
timeout 120 "$lib_work/cacheaside" -addr "$addr" -origin "$origin" -key plain:key -c "$clients" -n "$requests"
without=$(origin_stat "$origin" calls)
without_max=$(origin_stat "$origin" max_in_flight)
echo "origin calls: $without (at most $without_max at once)"
echo

printf '%-28s %14s\n' "" "origin calls" "with GETFILL" "$with" "cache-aside" "$without"
if [ "$with" != 1 ] || [ "$without" -le 1 ] || [[ "$value" != "value of demo:key, version 1, made at "* ]]; then
  echo "demo: FAIL: want 1 origin call with GETFILL, more than 1 with cache-aside, and demo:key holding the origin's value" >&2
  echo "server log:" >&2; tail -n 20 "$lib_work/server.log" >&2
  echo "demo: 0 passed, 1 failed"
  exit 1
fi
echo "demo: 1 passed, 0 failed"
