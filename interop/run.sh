#!/usr/bin/env bash
# The interop harness: checks our Go packages against the real engines (delta-rs, Spark 3.5 with
# delta-spark, a Spark Connect server with the Go Spark Connect client). scripts/test.sh runs it after
# `go test ./...`; it can also run alone:
#
#   interop/run.sh                 everything
#   ARIADNE_INTEROP_RUN=TestSparkConnect interop/run.sh    only the Go tests matching the regexp
#
# Stages (each timed, all must pass; nothing is skipped):
#   1. install   interop/install.sh: venv + JARs in ${ARIADNE_INTEROP_CACHE:-~/.cache/ariadne-interop},
#                and the Spark Ariadne library's jars verified in ${ARIADNE_ORACLES_DIR:-../shared/oracles/ariadne}
#                (ARIADNE_INTEROP_REQUIRE_RELEASES=1 by default here: a missing release fails the run)
#   2. python    the harness's own unit tests (interop/scripts/test_*.py: canonical rendering, goldens)
#   3. go build  vet and compile the Go interop tests (module interop/go, its own go.mod)
#   4. go test   run them inside a private network namespace whose only interface is loopback
#                (`unshare --net`): Spark 3.5's Connect server cannot be bound to 127.0.0.1, so the
#                namespace is what keeps it (and every Spark driver) off the machine's network.
#
# Prerequisites checked up front, with a clear message: go, java, python3 (for the venv), curl,
# unshare (util-linux) and ip (iproute2), and the right to create a network namespace (root here).
# Exit status: 0 when every stage passed, 1 otherwise.
set -uo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
cache="${ARIADNE_INTEROP_CACHE:-$HOME/.cache/ariadne-interop}"
export ARIADNE_INTEROP_CACHE="$cache"
# CI checks against every release of interop/releases.txt: a missing oracle jar fails the install
# stage (set ARIADNE_INTEROP_REQUIRE_RELEASES=0 to run without them).
export ARIADNE_INTEROP_REQUIRE_RELEASES="${ARIADNE_INTEROP_REQUIRE_RELEASES:-1}"
work="$(mktemp -d "${TMPDIR:-/tmp}/ariadne-interop.XXXXXX")"
trap 'rm -rf "$work"' EXIT

log() { printf 'interop/run: %s\n' "$*"; }
now() { date +%s.%N; }
summary=()
failed=0
# stage NAME CMD...: run one stage, record its result and duration.
stage() {
  local name="$1"; shift
  log "== $name"
  local t0 rc; t0="$(now)"
  "$@"; rc=$?
  local dt; dt="$(awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }')"
  if [[ $rc -eq 0 ]]; then
    summary+=("$(printf '%-9s ok     %7ss' "$name" "$dt")")
  else
    summary+=("$(printf '%-9s FAILED %7ss (exit %d)' "$name" "$dt" "$rc")")
    failed=1
  fi
  return $rc
}
finish() {
  log "== summary"
  local s; for s in "${summary[@]}"; do log "  $s"; done
  local total; total="$(awk -v a="$t_start" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }')"
  if [[ $failed -eq 0 ]]; then log "all stages passed in ${total}s"; else log "FAILED after ${total}s"; fi
  exit $failed
}
t_start="$(now)"

prereqs() {
  local missing=() c
  for c in go java python3 curl unshare ip awk; do
    command -v "$c" >/dev/null 2>&1 || missing+=("$c")
  done
  if [[ ${#missing[@]} -gt 0 ]]; then
    log "missing prerequisite command(s): ${missing[*]} (go: the Go toolchain; java: a JDK 17 for Spark 3.5;"
    log "  unshare: util-linux; ip: iproute2)"
    return 1
  fi
  if ! unshare --net true 2>/dev/null; then
    log "cannot create a network namespace (unshare --net): run as root or with CAP_SYS_ADMIN."
    log "  The Spark Connect test needs one: Spark 3.5's Connect server binds every interface."
    return 1
  fi
}

stage prereqs prereqs || finish
stage install bash "$here/install.sh" || finish
stage python "$cache/venv/bin/python" -m unittest discover -s "$here/scripts" -p 'test_*.py'

gobuild() {
  (cd "$here/go" && go vet ./... && go test -c -o "$work/interop.test" .)
}
stage "go build" gobuild || finish

gotest() {
  local args=(-test.count=1 -test.timeout=60m -test.v)
  [[ -n "${ARIADNE_INTEROP_RUN:-}" ]] && args+=(-test.run "$ARIADNE_INTEROP_RUN")
  # The binary runs in the package folder (tests find ../scripts and ../../../shared from there).
  (cd "$here/go" && unshare --net sh -c 'ip link set lo up && exec "$0" "$@"' "$work/interop.test" "${args[@]}") \
    > "$work/go-test.log" 2>&1
  local rc=$?
  # Results of each test (and subtest) with their times, then the failures in full.
  grep -E '^\s*--- (PASS|FAIL|SKIP)' "$work/go-test.log" | sed 's/^/interop\/run:   /'
  if [[ $rc -ne 0 ]]; then
    log "go test output (failures):"
    grep -vE '^\s*(=== (RUN|PAUSE|CONT)|--- PASS)' "$work/go-test.log" | head -300
  fi
  if grep -qE '^\s*--- SKIP' "$work/go-test.log"; then
    log "a Go interop test was skipped: the harness never skips"
    rc=1
  fi
  local pass fail
  pass="$(grep -cE '^--- PASS' "$work/go-test.log")"
  fail="$(grep -cE '^--- FAIL' "$work/go-test.log")"
  log "go interop tests: $pass passed, $fail failed"
  return $rc
}
stage "go test" gotest
finish
