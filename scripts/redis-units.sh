#!/usr/bin/env bash
# Runs Redis's own Tcl test units against this server and against
# redis-server, each unit on a fresh server, and prints both results side by
# side with the tests that fail here but pass on redis-server.
#
#   scripts/redis-units.sh [unit...]       (default: every unit a cache
#                                          server's clients meet, below)
#
# Environment:
#   REDIS_SRC  a Redis source tree with its tests (default /tmp/redis-7.0.15)
#   PORT       the port each server under test listens on (default 21000)
#   BASEPORT   runtest's own ports start here (default 22000)
#   SIDES      "ours redis" (default), "ours" or "redis"
#   OUT        where each unit's log is kept (default: a new temporary dir)
#   TIMEOUT    seconds one unit may take (default 1200)
#   SINGLEDB   1: runtest's single-database mode (--singledb: the tests
#              keep to database 0 and select none), as Redis's own suite
#              ran against a server with one database; default 0
#   TAGS       runtest tag filters applied to both (default "-needs:repl
#              -needs:aof": this server has no replication and writes no
#              append-only file)
#   SKIP       names of tests skipped on both, one a line (default: the
#              tests of an append-only file, and those that read the
#              replication stream (SYNC), which this server has not; each
#              would end its unit)
#
# Both servers run Redis's defaults: 16 databases, noeviction, no
# persistence, DEBUG enabled; the tests run without runtest's single-db
# mode unless SINGLEDB=1. Tests tagged external:skip are skipped by
# runtest itself against an external server.
set -euo pipefail
cd "$(dirname "$0")/.."

REDIS_SRC=${REDIS_SRC:-/tmp/redis-7.0.15}
PORT=${PORT:-21000}
BASEPORT=${BASEPORT:-22000}
SIDES=${SIDES:-ours redis}
TIMEOUT=${TIMEOUT:-1200}
TAGS=${TAGS:--needs:repl -needs:aof}
SINGLEDB=${SINGLEDB:-0}
SKIP=${SKIP:-"Same dataset digest if saving/reloading as AOF?
EXPIRES after a reload (snapshot + append only file rewrite)
EXPIRES after AOF reload (without rewrite)
SET - use KEEPTTL option, TTL should not be removed after loadaof
GETEX use of PERSIST option should remove TTL after loadaof
All TTL in commands are propagated as absolute timestamp in replication stream
GETEX propagate as to replica as PERSIST, DEL, or nothing
SCAN: Lazy-expire should not be wrapped in MULTI/EXEC
RANDOMKEY: Lazy-expire should not be wrapped in MULTI/EXEC
SWAPDB wants to wake blocked client, but the key already expired
MULTI + LPUSH + EXPIRE + DEBUG SLEEP on blocked client, key already expired
BLMPOP propagate as pop with count command to replica
LMPOP propagate as pop with count command to replica
GETDEL propagate as DEL command to replica
GETEX without argument does not propagate to replica
ZMPOP propagate as pop with count command to replica
BZMPOP propagate as pop with count command to replica"}
units=("$@")
if [ ${#units[@]} -eq 0 ]; then
  units=(type/string type/incr keyspace expire info protocol multi pubsub
    tracking scripting functions type/hash type/set type/list type/list-2
    type/list-3 type/zset hyperloglog sort dump scan other introspection
    introspection-2 slowlog querybuf bitops bitfield type/stream
    type/stream-cgroups geo)
fi

for tool in tclsh redis-server redis-cli go; do
  command -v "$tool" >/dev/null || { echo "$(basename "$0"): $tool not found on PATH" >&2; exit 1; }
done
[ -x "$REDIS_SRC/runtest" ] || { echo "$(basename "$0"): no runtest in $REDIS_SRC" >&2; exit 1; }

work=$(mktemp -d)
OUT=${OUT:-$work/logs}
mkdir -p "$OUT"
pid=""
cleanup() {
  if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  rm -rf "$work/bin" "$work/dir" "$work/redis"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

mkdir -p "$work/bin"
go build -o "$work/bin/stampedeless" ./cmd/stampedeless

# A copy of the tests in which the server blocks that turn an append-only
# file on (overrides {appendonly yes ...}) are tagged needs:aof: against an
# external server runtest sets their overrides with CONFIG SET, which this
# server refuses for appendonly, and the refusal would end the unit. Both
# servers run the same copy.
tests="$work/redis"
mkdir -p "$tests"
cp -r "$REDIS_SRC/tests" "$REDIS_SRC/runtest" "$tests/"
ln -s "$REDIS_SRC/src" "$tests/src"
find "$tests/tests/unit" -name '*.tcl' -exec perl -pi -e \
  's/(start_server \{tags \{"?)([^"}]*)("?\}\s*overrides \{appendonly \{?yes)/$1$2 needs:aof$3/' {} +

tagargs=()
for t in $TAGS; do tagargs+=(--tags "$t"); done
[ "$SINGLEDB" = 1 ] && tagargs+=(--singledb)
while IFS= read -r t; do
  [ -n "$t" ] && tagargs+=(--skiptest "$t")
done <<<"$SKIP"

# start_server <side>: a fresh server on $PORT with an empty directory.
start_server() {
  rm -rf "$work/dir"; mkdir -p "$work/dir"
  if [ "$1" = ours ]; then
    "$work/bin/stampedeless" --addr "127.0.0.1:$PORT" --maxmemory-policy noeviction \
      --dir "$work/dir" --enable-debug-command yes --event-loops 2 --metrics-addr '' \
      >"$OUT/$1.$2.server.log" 2>&1 &
  else
    redis-server --port "$PORT" --bind 127.0.0.1 --dir "$work/dir" --save '' \
      --appendonly no --enable-debug-command yes >"$OUT/$1.$2.server.log" 2>&1 &
  fi
  pid=$!
  for _ in $(seq 100); do
    redis-cli -p "$PORT" ping >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  echo "$(basename "$0"): the $1 server did not answer on port $PORT" >&2
  exit 1
}

stop_server() {
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  pid=""
}

# run_unit <side> <unit>: the unit's log, colours stripped, in $OUT.
run_unit() {
  local log="$OUT/$1.${2//\//_}.log"
  start_server "$1" "${2//\//_}"
  (cd "$tests" && timeout "$TIMEOUT" ./runtest --host 127.0.0.1 --port "$PORT" \
    --baseport "$BASEPORT" --single "unit/$2" "${tagargs[@]}" 2>&1) |
    sed 's/\x1b\[[0-9;]*m//g' >"$log" || true
  stop_server
  summary "$1" "$2"
}

# count <side> <unit> ok|err
count() {
  local log="$OUT/$1.${2//\//_}.log"
  [ -f "$log" ] || { echo -; return; }
  case $3 in
    ok) grep -c '^\[ok\]' "$log" || true ;;
    err) grep -c '^\[err\]\|^\[exception\]' "$log" || true ;;
  esac
}

# failing <side> <unit>: the names of the tests that failed.
failing() {
  local log="$OUT/$1.${2//\//_}.log"
  [ -f "$log" ] || return 0
  sed -n 's/^\[err\]: \(.*\) in tests\/.*/\1/p; s/^\[exception\]: \(.*\)/exception: \1/p' "$log"
}

summary() {
  echo "$1 $2: ok=$(count "$1" "$2" ok) err=$(count "$1" "$2" err)"
  failing "$1" "$2" | sed 's/^/  /'
}

for side in $SIDES; do
  for u in "${units[@]}"; do run_unit "$side" "$u"; done
done

echo
printf '%-18s %8s %8s %8s %8s\n' unit ours.ok ours.err redis.ok redis.err
for u in "${units[@]}"; do
  printf '%-18s %8s %8s %8s %8s\n' "$u" "$(count ours "$u" ok)" "$(count ours "$u" err)" \
    "$(count redis "$u" ok)" "$(count redis "$u" err)"
done
echo
echo "failing here, passing on redis-server:"
for u in "${units[@]}"; do
  comm -23 <(failing ours "$u" | sort -u) <(failing redis "$u" | sort -u) | sed "s|^|  $u: |"
done
echo "logs: $OUT"
