#!/usr/bin/env bash
# Builds and vets the module for Windows and macOS from this machine: every
# package (and its tests) that does not import DuckDB. DuckDB's Go bindings
# link a C++ library through cgo, so a package that imports them
# (internal/duck and what uses it: the CLI, fileindex, the server) needs a
# C toolchain for the target and is built on its own platform only. The
# store package also runs its tests with the ariadne_nomap tag here, which
# selects the read path those systems use (ReadAt, no mmap(2)).
set -euo pipefail
cd "$(dirname "$0")/.."

duck='github.com/duckdb/duckdb-go/v2'
# No C toolchain for the targets: cgo off explicitly, so a CGO_ENABLED=1 in
# the environment does not send the cross builds looking for one.
export CGO_ENABLED=0
for goos in windows darwin; do
  # Packages whose own build does not reach DuckDB: built.
  build=$(GOOS=$goos go list -e -f '{{if .GoFiles}}{{.ImportPath}} {{join .Deps " "}}{{end}}' ./... |
    awk -v d="$duck" '{ ok = 1; for (i = 2; i <= NF; i++) if ($i == d) ok = 0; if (ok) print $1 }')
  # Of those, the ones whose tests do not reach it either: vetted.
  bad=$(GOOS=$goos go list -e -test -f '{{.ImportPath}} {{join .Deps " "}}' ./... |
    awk -v d="$duck" '{ for (i = 2; i <= NF; i++) if ($i == d) { sub(/(_test)?( \[.*\]|\.test)$/, "", $1); print $1; break } }' | sort -u)
  vet=$(comm -23 <(echo "$build" | sort) <(echo "$bad"))
  echo "-- $goos: build $(echo "$build" | wc -l) packages, vet $(echo "$vet" | wc -l)"
  GOOS=$goos go build $build
  GOOS=$goos go vet $vet
done
echo "-- store with -tags ariadne_nomap"
CGO_ENABLED=1 go test -count=1 -tags ariadne_nomap ./store
