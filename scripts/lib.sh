# Sourced by demo.sh, examples.sh and stack.sh: build the binaries, start
# processes on ports the kernel picks, read their addresses from their logs,
# and stop everything that was started when the script exits, however it
# exits. soak.sh uses only need.
#
# The caller sets `set -euo pipefail`, cds to the repository root, and then
# calls lib_init once.

lib_pids=()
lib_work=""

lib_cleanup() {
  local pid
  for pid in "${lib_pids[@]}"; do
    kill "$pid" 2>/dev/null || true
  done
  for pid in "${lib_pids[@]}"; do
    wait "$pid" 2>/dev/null || true
  done
  [ -n "$lib_work" ] && rm -rf "$lib_work"
  return 0
}

# lib_init: a work directory ($lib_work) removed at exit, with the cleanup
# trap set.
lib_init() {
  lib_work=$(mktemp -d)
  trap lib_cleanup EXIT
  trap 'exit 130' INT TERM
}

# need <tool>...: fail with a hint unless every tool is on PATH.
need() {
  local tool
  for tool in "$@"; do
    command -v "$tool" >/dev/null || { echo "$(basename "$0"): $tool not found on PATH (.ci/run shows the apt-get packages)" >&2; exit 1; }
  done
}

# build_stampedeless: builds ./cmd/stampedeless into $lib_work/stampedeless.
build_stampedeless() {
  go build -o "$lib_work/stampedeless" ./cmd/stampedeless
}

# start <name> <command...>: runs the command in the background with its
# output in $lib_work/<name>.log, to be stopped at exit.
start() {
  local name=$1; shift
  "$@" >"$lib_work/$name.log" 2>&1 &
  lib_pids+=($!)
}

# logged_addr <name> <message>: waits up to 20 s for the slog line
# `msg="<message>" addr=<host:port>` in <name>'s log and prints host:port.
logged_addr() {
  local log="$lib_work/$1.log" msg=$2 addr="" _
  for _ in $(seq 200); do
    addr=$(sed -n "s/.*msg=\"$msg\" addr=\([^ ]*\).*/\1/p" "$log" | head -n1)
    [ -n "$addr" ] && { echo "$addr"; return 0; }
    sleep 0.1
  done
  echo "$(basename "$0"): no '$msg' line in $1's log within 20 s:" >&2
  tail -n 20 "$log" >&2
  return 1
}

# origin_stat <base-url> <field>: one number from the demo origin's /stats.
origin_stat() {
  curl -fsS "$1/stats" | sed -n "s/.*\"$2\":\([0-9]*\).*/\1/p"
}

# origin_reset <base-url>: zeroes the demo origin's counters.
origin_reset() {
  curl -fsS -X POST "$1/reset" >/dev/null
}
