#!/usr/bin/env bash
# Runs the client examples (examples/go with go-redis, examples/node with
# ioredis), each against a fresh server whose "demo:" loader points at the
# demo origin, and checks what each prints, how many origin calls each made,
# and how many leases its server handed out for the get-or-compute helper.
# Needs node and npm (the npm registry for `npm ci`), curl and redis-cli.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh

need node npm curl redis-cli
lib_init
build_stampedeless
go build -o "$lib_work/example-go" ./examples/go

start origin "$lib_work/stampedeless" origin --addr 127.0.0.1:0 --latency 100ms \
  --not-found-prefix demo:missing:
origin="http://$(logged_addr origin "origin ready")"
# new_server <name>: each example gets its own empty server, so that both
# make the same origin calls.
new_server() {
  start "$1" "$lib_work/stampedeless" --addr 127.0.0.1:0 --metrics-addr "" --loader "demo:=$origin/{key}"
  addr=$(logged_addr "$1" "stampedeless ready")
}

# What both examples print; * matches the origin's timestamp and the
# cooldown's time left.
want=(
  "demo:user:42 = value of demo:user:42, version 1, made at *"
  "100 concurrent reads of demo:hot: 1 distinct value(s)"
  "demo:missing:1: not found at the origin"
  "nowhere:1: NOLOADER error: NOLOADER no loader registered for key 'nowhere:1'"
  '100 concurrent computes of lease:report: 1 computation(s), all got "42 rows"'
  '10 concurrent computes of lease:broken: 1 computation(s), 1 got "database down", 9 got "LOADERR app: ...database down"'
  "lease:broken again: LOADERR app: cooling down for *s after: database down (1 computation(s) in all)"
)
# What the server's INFO says of the helper's leases: one token per key, one
# FILL.SET (lease:report), one FILL.ABORT (lease:broken).
want_leases="leases_granted=2,leases_set=1,leases_aborted=1,leases_expired=0,leases_lost=0,"

fail=0
passed=0
# check <name> <output>: the output's lines against $want, 3 origin
# calls (demo:user:42, demo:hot once for 100 readers, and demo:missing:1),
# and the leases in $addr's INFO against $want_leases.
check() {
  local name=$1 out=$2 i line calls leases
  mapfile -t lines <<<"$out"
  for i in "${!want[@]}"; do
    line=${lines[$i]:-}
    # shellcheck disable=SC2053 # the wanted line is a glob pattern
    if [[ "$line" != ${want[$i]} ]]; then
      echo "FAIL: $name line $((i + 1)): '$line', want '${want[$i]}'"; fail=1
    fi
  done
  [ "${#lines[@]}" = "${#want[@]}" ] || { echo "FAIL: $name printed ${#lines[@]} lines, want ${#want[@]}"; fail=1; }
  calls=$(origin_stat "$origin" calls)
  [ "$calls" = 3 ] || { echo "FAIL: $name made $calls origin calls, want 3"; fail=1; }
  leases=$(redis-cli -h "${addr%:*}" -p "${addr##*:}" INFO stampede | grep -o 'leases_[a-z]*=[0-9]*,' | tr -d '\n')
  [ "$leases" = "$want_leases" ] || { echo "FAIL: $name: server's $leases, want $want_leases"; fail=1; }
  [ "$fail" = 0 ] && { echo "ok: $name ($calls origin calls, one lease per key)"; passed=$((passed + 1)); }
  origin_reset "$origin"
}

new_server server-go
echo "\$ go run ./examples/go -addr $addr"
out=$(timeout 60 "$lib_work/example-go" -addr "$addr")
echo "$out"
check examples/go "$out"

new_server server-node
echo "\$ (cd examples/node && npm ci && node index.js $addr)"
(cd examples/node && timeout 300 npm ci --no-audit --no-fund --loglevel=error)
out=$(cd examples/node && timeout 60 node index.js "$addr")
echo "$out"
check examples/node "$out"

if [ "$fail" != 0 ]; then
  echo "server logs:"; tail -n 20 "$lib_work"/server-*.log
  echo "examples: $passed passed, $((2 - passed)) failed"; exit 1
fi
echo "examples: 2 passed, 0 failed"
