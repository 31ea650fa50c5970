#!/usr/bin/env bash
# The project's test command: everything CI checks, on a clean clone.
# Installs what it needs (Go modules; the interop harness installs its own
# Python packages and JARs into a cache outside the repository).
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== go vet"
go vet ./...

echo "== gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go'))
if [ -n "$unformatted" ]; then
  echo "gofmt would change:"; echo "$unformatted"; exit 1
fi

echo "== go test"
# -p 2: the machine has 2 cores; -count=1: never trust a cached pass in CI.
go test -p 2 -count=1 -timeout 30m ./...

if [ -x interop/run.sh ] && [ "${ARIADNE_SKIP_INTEROP:-0}" != "1" ]; then
  echo "== interop harness"
  interop/run.sh
fi
