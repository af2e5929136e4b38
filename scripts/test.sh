#!/usr/bin/env bash
# The whole test suite: formatting, vet, unit and integration tests under the
# race detector, then the redis-cli / redis-benchmark integration script and
# the stampede demo, the client examples (Go, and Node.js: needs node and
# npm), the compose topology run natively (stack.sh) and a 60 s soak run
# with faults (soak.sh).
# Needs Go 1.26; redis-server and redis-tools for the comparison and
# integration tests; curl, node and npm for the demo and examples. As root it
# installs those with apt-get when missing.
set -euo pipefail
cd "$(dirname "$0")/.."
# With CI set a test that needs redis-server or redis-cli fails when they are
# missing instead of skipping (internal/redistest.Binary), so this run cannot
# pass without comparing against a real Redis.
export CI=true

missing=()
command -v redis-server >/dev/null || missing+=(redis-server)
command -v redis-benchmark >/dev/null || missing+=(redis-tools)
command -v curl >/dev/null || missing+=(curl)
# The status page's browser test (cmd/stampedeless) drives chromium headless.
command -v chromium >/dev/null || missing+=(chromium)
if ! command -v node >/dev/null; then
  missing+=(nodejs npm)
elif ! command -v npm >/dev/null; then
  missing+=(npm)
fi
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "installing ${missing[*]} with apt-get"
    DEBIAN_FRONTEND=noninteractive apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  else
    echo "scripts/test.sh needs: apt-get install ${missing[*]}" >&2
    exit 1
  fi
fi

unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$unformatted" ]; then
  echo "gofmt: these files need formatting:"; echo "$unformatted"; exit 1
fi
go vet ./...
# The fleet tests (swr, cluster, cmd/stampedeless) start real Redis servers,
# Sentinels and Clusters beside several replicas and run on their own, one
# package at a time, after the rest: on two cores they share the machine
# with nothing else.
fleet='/swr$|/cluster$|/cmd/stampedeless$'
go test -race -count=1 $(go list ./... | grep -Ev "$fleet")
go test -race -count=1 -p 1 $(go list ./... | grep -E "$fleet")
# Each fuzz target for 30,000 inputs beyond its seed corpus (which ran
# above): a few seconds each, plus building each package once with the
# fuzzer's instrumentation (FUZZTIME=2m, or another count, for longer
# runs). A count, not a duration: Go 1.26's fuzzer can fail a target with
# "context deadline exceeded" when a duration ends while a starved worker
# is mid-input (go.dev/issue/75804, fixed in Go 1.27).
for target in resp:FuzzReader commands/keyspace:FuzzArgParsers commands/keyspace:FuzzOptions internal/glob:FuzzMatch loader:FuzzFetchResponse rdb:FuzzReader rdb:FuzzDump; do
  go test -run '^$' -fuzz "^${target#*:}\$" -fuzztime "${FUZZTIME:-30000x}" "./${target%%:*}"
done
bash scripts/integration.sh
bash scripts/demo.sh
bash scripts/examples.sh
bash scripts/stack.sh
bash scripts/soak.sh
