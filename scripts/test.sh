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

echo "== fuzz (bounded)"
# Every fuzz target runs for a few seconds beyond its seed corpus (which
# `go test` above already ran): no panic on any input. ARIADNE_FUZZ_TIME sets
# the time per target (default 3s; 14 targets, ~1-2 minutes with the
# instrumented builds), ARIADNE_SKIP_FUZZ=1 skips the step. A failing input
# is written to the package's testdata/fuzz/<target>/: commit it with the fix.
if [ "${ARIADNE_SKIP_FUZZ:-0}" != "1" ]; then
  fuzz_time="${ARIADNE_FUZZ_TIME:-3s}"
  for target in \
    ./metadata:FuzzParse ./lock:FuzzParseLockInfo ./bloom:FuzzUnmarshal \
    ./delta:FuzzParseActions ./delta:FuzzReadCheckpoint \
    ./internal/pqrow:FuzzReadParquet \
    ./rowindex:FuzzDecodeCursor ./rowindex:FuzzDecodeStored ./rowindex:FuzzManifest \
    ./rowindex:FuzzFragment ./rowindex:FuzzDataPages \
    ./fileindex:FuzzLocateSnapshotSections \
    ./server/api:FuzzDecodeLookup ./server/api:FuzzDecodeJoin; do
    pkg="${target%%:*}" name="${target##*:}"
    echo "-- $name ($pkg, $fuzz_time)"
    go test -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzz_time" -parallel 1 "$pkg"
  done
fi

if [ -x interop/run.sh ] && [ "${ARIADNE_SKIP_INTEROP:-0}" != "1" ]; then
  echo "== interop harness"
  interop/run.sh
fi
