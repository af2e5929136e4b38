#!/usr/bin/env bash
# The soak run of the test suite: bench/soak for $DURATION (default 60s) in
# fleet mode, three replicas sharing a redis-server that is killed and
# stopped, under mixed go-redis load with cut connections, CLIENT KILLs, a
# failing origin and a churn server at its memory bound. It prints the
# table of checks and fails when one that must hold fails. Then the
# linearizability check of the commands (server's
# TestCommandsAreLinearizable) on 20 histories per setting instead of the
# suite's 3, under the race detector. Needs redis-server.
#
#   scripts/soak.sh
#   DURATION=10m scripts/soak.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh

need redis-server
go run ./bench/soak -redis -duration "${DURATION:-60s}"
LIN_ROUNDS=20 go test -count=1 -race -run TestCommandsAreLinearizable ./server/
