#!/usr/bin/env bash
# Runs every test with competing goroutines or processes N times (default
# 20) — store put-if-absent and compare-and-swap across processes, lock
# contention and stale-lock healing across processes, concurrent Delta
# appends and upserts (goroutines and processes), concurrent index creation
# and file tracking (goroutines and processes), row index commits racing
# (Update against Update, Remove and Compact) and concurrent lookups — and
# reports failures.
# Not part of CI (it takes minutes); run it after touching store, lock,
# delta, index or rowindex.
set -uo pipefail
cd "$(dirname "$0")/.."
n="${1:-20}"
bin="$(mktemp -d)"; trap 'rm -rf "$bin"' EXIT
for p in store lock delta index rowindex; do go test -c -o "$bin/$p.test" "./$p/" || exit 1; done
declare -A runs=(
  [store]='TestProcessPutIfAbsent|TestProcessCASCounter|Conformance'
  [lock]='TestStaleHealingRace|TestCompetingProcesses'
  [delta]='TestConcurrentAppends|TestConcurrentUpserts|TestMultiProcessAppends'
  [index]='TestConcurrentAddFiles|TestConcurrentCreate|TestCompetingProcesses'
  [rowindex]='TestConcurrentCommitLoses|TestConcurrentUpdateAndRemove|TestConcurrentLookups'
)
start=$(date +%s); failures=0
for i in $(seq 1 "$n"); do
  for p in store lock delta index rowindex; do
    if ! (cd "$p" && "$bin/$p.test" -test.count=1 -test.run "${runs[$p]}" > "$bin/$p.$i.log" 2>&1); then
      echo "run $i: $p FAILED"; cat "$bin/$p.$i.log"; failures=$((failures + 1))
    fi
  done
  echo "run $i/$n done ($(( $(date +%s) - start ))s)"
done
echo "$n runs, $failures failures, $(( $(date +%s) - start ))s"
[ "$failures" -eq 0 ]
