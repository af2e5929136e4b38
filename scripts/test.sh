#!/usr/bin/env bash
# The whole test suite: formatting, vet, unit and integration tests under the
# race detector, then the redis-cli / redis-benchmark integration script and
# the stampede demo.
# Needs Go 1.26, and redis-server and redis-tools for the comparison and
# integration tests; as root it installs those with apt-get when missing.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v redis-server >/dev/null || ! command -v redis-benchmark >/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "installing redis-server and redis-tools with apt-get"
    DEBIAN_FRONTEND=noninteractive apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server redis-tools >/dev/null
  else
    echo "scripts/test.sh needs redis-server and redis-tools: apt-get install redis-server redis-tools" >&2
    exit 1
  fi
fi

unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$unformatted" ]; then
  echo "gofmt: these files need formatting:"; echo "$unformatted"; exit 1
fi
go vet ./...
go test -race -count=1 ./...
bash scripts/integration.sh
bash scripts/demo.sh
