#!/usr/bin/env bash
# The whole test suite: formatting, vet, unit and integration tests under the
# race detector, then the redis-cli / redis-benchmark integration script.
# Needs Go 1.26 and, for the comparison and integration tests, redis-server
# and redis-tools (apt-get install redis-server redis-tools).
set -euo pipefail
cd "$(dirname "$0")/.."

unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$unformatted" ]; then
  echo "gofmt: these files need formatting:"; echo "$unformatted"; exit 1
fi
go vet ./...
go test -race -count=1 ./...
bash scripts/integration.sh
