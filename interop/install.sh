#!/usr/bin/env bash
# Installs the interop harness: a Python venv with pinned pyspark, delta-spark, deltalake and
# pyarrow (interop/requirements.txt) and the JARs of interop/jars.txt into a cache OUTSIDE the
# repository, and verifies the Spark Ariadne library's jars (the oracles) where they lie:
#
#   ${ARIADNE_INTEROP_CACHE:-$HOME/.cache/ariadne-interop}/
#     venv/                    Python virtual environment
#     venv/.requirements.sha256 hash of the requirements it was built from
#     jars/<artifact>-<version>.jar (+ .sha1)  verified downloads
#     releases.available       the releases of interop/releases.txt whose jar was verified
#
# The oracle jars are never downloaded: each release of interop/releases.txt must be
# ${ARIADNE_ORACLES_DIR:-<repo>/../shared/oracles/ariadne}/<version>/<artifact>-<version>.jar, and its
# sha256 must equal the one jars.json in that folder gives for the version. A jar whose sha256 differs
# always fails the install; a release whose jar (or jars.json entry) is missing fails it when
# ARIADNE_INTEROP_REQUIRE_RELEASES=1 (interop/run.sh, i.e. CI, sets that by default) and is otherwise
# reported and left out of releases.available.
#
# Idempotent: a second run only checks what is there (seconds). Prints what it did.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
cache="${ARIADNE_INTEROP_CACHE:-$HOME/.cache/ariadne-interop}"
central="${ARIADNE_MAVEN_CENTRAL:-https://repo1.maven.org/maven2}"
python="${ARIADNE_INTEROP_PYTHON:-python3}"
mkdir -p "$cache/jars"

log() { printf 'interop/install: %s\n' "$*"; }

# 1. Python venv with pinned packages. Rebuilt only when requirements.txt changes.
req_hash="$(sha256sum "$here/requirements.txt" | cut -d' ' -f1)"
stamp="$cache/venv/.requirements.sha256"
if [[ -x "$cache/venv/bin/python" && -f "$stamp" && "$(cat "$stamp")" == "$req_hash" ]]; then
  log "venv up to date ($cache/venv)"
else
  log "creating venv $cache/venv from requirements.txt"
  [[ -d "$cache/venv" ]] || "$python" -m venv "$cache/venv"
  "$cache/venv/bin/pip" install --quiet --disable-pip-version-check -r "$here/requirements.txt"
  echo "$req_hash" > "$stamp"
  log "installed: $("$cache/venv/bin/pip" freeze | grep -iE '^(pyspark|delta-spark|deltalake|pyarrow|py4j|zstandard)=' | tr '\n' ' ')"
fi

# fetch_jar GROUP ARTIFACT VERSION: download into $cache/jars with its .sha1 verified.
# Returns 0 when present (downloaded or cached), 2 when the registry does not serve it.
fetch_jar() {
  local g="$1" a="$2" v="$3"
  local name="$a-$v.jar" url="$central/${g//.//}/$a/$v/$a-$v.jar"
  local dst="$cache/jars/$name"
  if [[ -f "$dst" && -f "$dst.sha1" ]] && [[ "$(sha1sum "$dst" | cut -d' ' -f1)" == "$(cut -c1-40 "$dst.sha1")" ]]; then
    log "cached  $g:$a:$v"
    return 0
  fi
  local tmp; tmp="$(mktemp "$cache/jars/.dl.XXXXXX")"
  local code
  code="$(curl -sS -L --retry 3 -o "$tmp.sha1" -w '%{http_code}' "$url.sha1" || true)"
  if [[ "$code" != "200" ]]; then
    rm -f "$tmp" "$tmp.sha1"
    log "absent  $g:$a:$v (HTTP $code for .sha1)"
    return 2
  fi
  curl -sS -L --fail --retry 3 -o "$tmp" "$url"
  local want got
  want="$(tr -d ' \r\n' < "$tmp.sha1" | cut -c1-40)"
  got="$(sha1sum "$tmp" | cut -d' ' -f1)"
  if [[ "$want" != "$got" ]]; then
    rm -f "$tmp" "$tmp.sha1"
    log "CHECKSUM MISMATCH for $g:$a:$v (want $want, got $got)"
    return 1
  fi
  mv "$tmp.sha1" "$dst.sha1"
  mv "$tmp" "$dst"
  log "fetched $g:$a:$v (sha1 $got)"
}

# 2. The JARs of jars.txt (required): Delta Lake for Spark, the Spark Connect server plugin.
while read -r coord; do
  [[ -z "$coord" || "$coord" == \#* ]] && continue
  IFS=: read -r g a v <<< "$coord"
  fetch_jar "$g" "$a" "$v" || { log "required JAR $coord unavailable"; exit 1; }
done < "$here/jars.txt"

# 3. The Spark Ariadne library's jars: verified by sha256 against jars.json, never downloaded.
oracles="$(realpath -m "${ARIADNE_ORACLES_DIR:-$here/../../shared/oracles/ariadne}")"
avail="$cache/releases.available"
: > "$avail.tmp"
missing=0
while read -r line; do
  v="${line%%#*}"; v="${v//[[:space:]]/}"
  [[ -z "$v" ]] && continue
  # want = the sha256 jars.json gives for version v ("" when it has no entry).
  want="$("$python" - "$oracles/jars.json" "$v" <<'PY' 2>/dev/null || true
import json, sys
try:
    jars = json.load(open(sys.argv[1], encoding="utf-8"))["jars"]
except OSError:
    sys.exit(0)
print(next((j["sha256"] for j in jars if j["version"] == sys.argv[2]), ""))
PY
)"
  shopt -s nullglob; found=("$oracles/$v"/*.jar); shopt -u nullglob
  if [[ -z "$want" || ${#found[@]} -ne 1 ]]; then
    log "absent  Ariadne $v (jars.json entry: $([[ -n "$want" ]] && echo yes || echo none); jars in $oracles/$v: ${#found[@]}, want 1)"
    missing=$((missing + 1))
    continue
  fi
  got="$(sha256sum "${found[0]}" | cut -d' ' -f1)"
  if [[ "$got" != "$want" ]]; then
    log "CHECKSUM MISMATCH for Ariadne $v: ${found[0]} has sha256 $got, jars.json says $want"
    exit 1
  fi
  log "verified Ariadne $v ($(basename "${found[0]}"), sha256 ${got:0:12}…)"
  echo "$v" >> "$avail.tmp"
done < "$here/releases.txt"
mv "$avail.tmp" "$avail"
log "Ariadne releases verified: $(wc -l < "$avail"), missing: $missing (oracles $oracles; list in $avail)"
if [[ "$missing" -gt 0 && "${ARIADNE_INTEROP_REQUIRE_RELEASES:-0}" == "1" ]]; then
  log "ARIADNE_INTEROP_REQUIRE_RELEASES=1 and $missing release(s) are missing"
  exit 1
fi
log "done: cache $cache"
