#!/usr/bin/env bash
# docker-compose.yml's topology without Docker: a redis-server, the demo
# origin and three stampedeless replicas in --redis mode, started natively on
# free loopback ports with the same flags as the compose file
# (deploy/deploy_test.go checks that they are the same). Prometheus and
# Grafana are left out (Grafana has no Debian package, and CI installs
# neither): each replica's /metrics address is printed instead.
#
# It smoke-tests the stack: a GETFILL burst of one cold key on all three
# replicas at once must make one origin call in all, and every replica must
# then hold the same value. Then it stops everything. With KEEP=1 it leaves
# the stack running until Ctrl-C instead.
#
#   scripts/stack.sh
#   KEEP=1 scripts/stack.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh

# The command lines of docker-compose.yml's replicas and origin, with the
# addresses as placeholders: @ADDR@ and @METRICS@ (the replica's), @REDIS@
# and @ORIGIN@ (host:port).
replica_args=(serve --addr @ADDR@ --metrics-addr @METRICS@ --redis redis://@REDIS@ --loader 'demo:=http://@ORIGIN@/{key}')
origin_args=(origin --addr @ORIGIN@ --latency 200ms --etag --change-every 1m)
redis_args=(--save '' --appendonly no)

need redis-server redis-cli redis-benchmark curl
lib_init
build_stampedeless
bin="$lib_work/stampedeless"

# fill <args...>: the args with the placeholders replaced by $addr,
# $metrics, $redis and $origin, into the array filled.
fill() {
  filled=()
  local a
  for a in "$@"; do
    a=${a//@ADDR@/${addr:-}}
    a=${a//@METRICS@/${metrics:-}}
    a=${a//@REDIS@/${redis:-}}
    a=${a//@ORIGIN@/${origin:-}}
    filled+=("$a")
  done
}

# redis-server cannot pick its own port (0 turns TCP off): try random ones.
redis=""
for attempt in 1 2 3 4 5; do
  port=$((20000 + RANDOM % 40000))
  start "redis-$attempt" redis-server --port "$port" --bind 127.0.0.1 "${redis_args[@]}"
  for _ in $(seq 50); do
    if [ "$(redis-cli -p "$port" ping 2>/dev/null)" = PONG ]; then redis=127.0.0.1:$port; break; fi
    sleep 0.1
  done
  [ -n "$redis" ] && break
done
[ -n "$redis" ] || { echo "stack: redis-server did not start"; tail "$lib_work"/redis-*.log; exit 1; }

origin=127.0.0.1:0
fill "${origin_args[@]}"
start origin "$bin" "${filled[@]}"
origin=$(logged_addr origin "origin ready")

replicas=()
metrics_addrs=()
for i in 1 2 3; do
  addr=127.0.0.1:0 metrics=127.0.0.1:0
  fill "${replica_args[@]}"
  start "stampedeless-$i" "$bin" "${filled[@]}"
done
for i in 1 2 3; do
  replicas+=("$(logged_addr "stampedeless-$i" "stampedeless ready")")
  metrics_addrs+=("$(logged_addr "stampedeless-$i" "serving metrics")")
  grep -q 'msg="fleet mode' "$lib_work/stampedeless-$i.log" || {
    echo "stack: stampedeless-$i is not in --redis mode:"; cat "$lib_work/stampedeless-$i.log"; exit 1; }
done

echo "redis-server  $redis"
echo "origin        http://$origin (stats at /stats)"
for i in 0 1 2; do
  echo "stampedeless-$((i + 1)) ${replicas[$i]}  metrics http://${metrics_addrs[$i]}/metrics"
done
echo "(Prometheus and Grafana run only under docker compose.)"
echo

key=demo:stack
echo "== GETFILL $key 60 30: 100 clients on each of the three replicas at once =="
pids=()
for i in 0 1 2; do
  # redis-benchmark spins forever if its server dies: bound it.
  timeout 120 redis-benchmark -p "${replicas[$i]##*:}" -c 100 -n 3000 -q GETFILL "$key" 60 30 \
    >"$lib_work/bench-$i.out" 2>&1 &
  pids+=($!)
done
passed=0 failed=0
# check <what failed> <command...>: counts the command's success.
check() {
  local what=$1; shift
  if "$@"; then passed=$((passed + 1)); else echo "FAIL: $what"; failed=$((failed + 1)); fi
}
for i in 0 1 2; do
  check "redis-benchmark on stampedeless-$((i + 1)) failed (it stops at the first error reply)" wait "${pids[$i]}"
  echo "stampedeless-$((i + 1)): $(tr '\r' '\n' <"$lib_work/bench-$i.out" | grep 'requests per second' || echo '(no result)')"
done

calls=$(origin_stat "http://$origin" calls)
echo "origin calls: $calls"
check "want 1 origin call across the fleet, got $calls" test "$calls" = 1

values=()
for i in 0 1 2; do
  values+=("$(redis-cli -p "${replicas[$i]##*:}" GET "$key")")
  echo "stampedeless-$((i + 1)) GET $key: ${values[$i]}"
done
same_value() {
  [[ "${values[0]}" == "value of $key, version 1, made at "* ]] &&
    [ "${values[0]}" = "${values[1]}" ] && [ "${values[0]}" = "${values[2]}" ]
}
check "the replicas do not hold the same origin value" same_value
for i in 0 1 2; do
  up=$(curl -fsS "http://${metrics_addrs[$i]}/metrics" | sed -n 's/^stampedeless_cluster_redis_up //p')
  check "stampedeless-$((i + 1)) stampedeless_cluster_redis_up is '$up'" test "$up" = 1
done

if [ "$failed" != 0 ]; then
  for i in 1 2 3; do echo "--- stampedeless-$i log"; tail -n 15 "$lib_work/stampedeless-$i.log"; done
  echo "stack: $passed passed, $failed failed"; exit 1
fi
echo "stack: $passed passed, 0 failed"
if [ "${KEEP:-}" = 1 ]; then
  echo "KEEP=1: the stack runs until Ctrl-C"
  # wait, unlike a foreground sleep, lets the INT/TERM trap run at once.
  sleep infinity &
  lib_pids+=($!)
  wait $!
fi
