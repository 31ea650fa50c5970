#!/usr/bin/env bash
# Installs the interop harness: a Python venv with pinned pyspark, delta-spark, deltalake and
# pyarrow (interop/requirements.txt), the JARs of interop/jars.txt, and the Spark Ariadne releases
# of interop/releases.txt, all into a cache OUTSIDE the repository:
#
#   ${ARIADNE_INTEROP_CACHE:-$HOME/.cache/ariadne-interop}/
#     venv/                    Python virtual environment
#     venv/.requirements.sha256 hash of the requirements it was built from
#     jars/<artifact>-<version>.jar (+ .sha1)  verified downloads
#     releases.available       Ariadne coordinates that were actually served
#
# Idempotent: a second run only checks what is there (seconds). Prints what it did.
# Ariadne releases that Maven Central does not serve are reported and skipped; set
# ARIADNE_INTEROP_REQUIRE_RELEASES=1 to make that an error.
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
  log "installed: $("$cache/venv/bin/pip" freeze | grep -iE '^(pyspark|delta-spark|deltalake|pyarrow|py4j)=' | tr '\n' ' ')"
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

# 3. Spark Ariadne releases (optional unless ARIADNE_INTEROP_REQUIRE_RELEASES=1).
avail="$cache/releases.available"
: > "$avail.tmp"
missing=0
while read -r coord; do
  [[ -z "$coord" || "$coord" == \#* ]] && continue
  IFS=: read -r g a v <<< "$coord"
  rc=0; fetch_jar "$g" "$a" "$v" || rc=$?
  case "$rc" in
    0) echo "$coord" >> "$avail.tmp" ;;
    2) missing=$((missing + 1)) ;;
    *) exit 1 ;;
  esac
done < "$here/releases.txt"
mv "$avail.tmp" "$avail"
log "Ariadne releases available: $(wc -l < "$avail"), not served: $missing (list in $avail)"
if [[ "$missing" -gt 0 && "${ARIADNE_INTEROP_REQUIRE_RELEASES:-0}" == "1" ]]; then
  log "ARIADNE_INTEROP_REQUIRE_RELEASES=1 and $missing release(s) are not served"
  exit 1
fi
log "done: cache $cache"
