#!/usr/bin/env python3
"""Write delta-rs golden files for every Delta table under a test-data folder.

Usage: delta_golden.py [--src DIR] [--out DIR] [--max-rows N]

For each folder containing `_delta_log` (nested folders included), the table is opened with
the real `deltalake` package (delta-rs) and read through its DataFusion engine
(QueryBuilder, which applies column mapping and deletion vectors). The result is written to
<out>/<relative-table-path with / replaced by __>.json:

  {"table": ..., "version": N, "error": null | "<delta-rs error text>",
   "files": [sorted add.path values as found in the log], "num_rows": N,
   "schema": "<schemaString as found in the log>", "rows": [...] | null,
   "rows_sha256": "<hex>"}

Rows are canonical row lines (docs/interop.md, "Canonical rows") parsed back to JSON values;
they are kept only when num_rows <= --max-rows. A table delta-rs refuses gets its error text
and the walk goes on.
"""

import argparse
import glob
import json
import os
import sys

import pyarrow as pa
import pyarrow.parquet as pq
from deltalake import DeltaTable, QueryBuilder

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import canonical  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))


def find_tables(src):
    """Relative paths (with '/') of every folder under src that holds a _delta_log, sorted."""
    out = []
    for dirpath, dirnames, _ in os.walk(src):
        if "_delta_log" in dirnames:
            out.append(os.path.relpath(dirpath, src).replace(os.sep, "/"))
            dirnames.remove("_delta_log")
    return sorted(out)


def _metadata_from_actions(lines):
    found = None
    for line in lines:
        line = line.strip()
        if not line:
            continue
        action = json.loads(line)
        if "metaData" in action:
            found = action["metaData"].get("schemaString")
    return found


def _metadata_from_checkpoint(path):
    if path.endswith(".json"):
        with open(path, encoding="utf-8") as f:
            return _metadata_from_actions(f)
    t = pq.read_table(path, columns=["metaData"])
    for m in t.column("metaData").to_pylist():
        if m and m.get("schemaString") is not None:
            return m["schemaString"]
    return None


def raw_schema_string(table_dir, version):
    """The schemaString of the newest metaData action at or below version, as found in the log."""
    log = os.path.join(table_dir, "_delta_log")
    for v in range(version, -1, -1):
        commit = os.path.join(log, "%020d.json" % v)
        if os.path.exists(commit):
            with open(commit, encoding="utf-8") as f:
                s = _metadata_from_actions(f)
            if s is not None:
                return s
        for cp in sorted(glob.glob(os.path.join(log, "%020d.checkpoint*" % v))):
            s = _metadata_from_checkpoint(cp)
            if s is not None:
                return s
    return None


def golden(src, rel, max_rows):
    table_dir = os.path.join(src, rel)
    g = {"table": rel, "version": None, "error": None, "files": [], "num_rows": None,
         "schema": None, "rows": None, "rows_sha256": None}
    try:
        dt = DeltaTable(table_dir)
        g["version"] = dt.version()
        g["schema"] = raw_schema_string(table_dir, dt.version())
        adds = pa.table(dt.get_add_actions(flatten=True))
        g["files"] = sorted(adds.column("path").to_pylist())
        names = [f.name for f in dt.schema().fields]
        reader = QueryBuilder().register("t", dt).execute("SELECT * FROM t")
        table = pa.RecordBatchReader.from_stream(reader).read_all()
        lines = canonical.render_table(table, names)
    except Exception as e:  # delta-rs refused the table: record its words and go on
        g["error"] = "%s: %s" % (type(e).__name__, e)
        return g
    g["num_rows"] = len(lines)
    g["rows_sha256"] = canonical.rows_sha256(lines)
    if len(lines) <= max_rows:
        g["rows"] = lines
    return g


# Tables where delta-rs' answer is known to differ from Spark's (and from what our reader must
# return). The golden still records delta-rs' answer; the note says what differs.
NOTES = {
    "table_with_edge_timestamps": "delta-rs overflows INT96 timestamps beyond the int64 nanosecond "
    "range: BIG_DATE holds 9999-12-31T00:00:00Z and 9999-12-30T00:00:00Z in the Parquet files "
    "(Spark and pyarrow with coerce_int96_timestamp_unit='us' read those); delta-rs wraps them to 1816.",
    "spark-variant-checkpoint": "variant columns: delta-rs renders each variant as a struct of "
    "binary metadata/value; our row model refuses variant with an error.",
}


def encode(g):
    """The golden file text: one key per line, each canonical row line verbatim on its own line.

    Rows are written byte-for-byte as rendered, so a reader that decodes them as raw JSON
    (Go: []json.RawMessage) gets exactly the canonical line.
    """
    parts = []
    for key in ("table", "version", "error", "note", "files", "num_rows", "schema", "rows", "rows_sha256"):
        if key == "note" and key not in g:
            continue
        v = g.get(key)
        if key in ("files", "rows") and v:
            body = "[\n" + ",\n".join("  " + (x if key == "rows" else canonical.json_string(x)) for x in v) + "\n ]"
        else:
            body = json.dumps(v, ensure_ascii=False, separators=(",", ":"))
        parts.append(" %s: %s" % (canonical.json_string(key), body))
    return "{\n" + ",\n".join(parts) + "\n}\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--src", default=os.path.join(ROOT, "..", "shared", "testdata", "delta-rs"))
    ap.add_argument("--out", default=os.path.join(ROOT, "delta", "testdata", "golden"))
    ap.add_argument("--max-rows", type=int, default=500)
    args = ap.parse_args()
    src = os.path.abspath(args.src)
    os.makedirs(args.out, exist_ok=True)
    for rel in find_tables(src):
        g = golden(src, rel, args.max_rows)
        if rel in NOTES:
            g["note"] = NOTES[rel]
        name = rel.replace("/", "__") + ".json"
        text = encode(g)
        json.loads(text)  # the file must be valid JSON
        with open(os.path.join(args.out, name), "w", encoding="utf-8") as f:
            f.write(text)
        status = "error: " + g["error"][:100] if g["error"] else "v%d, %d rows, %d files" % (
            g["version"], g["num_rows"], len(g["files"]))
        print("%-50s %s" % (rel, status), flush=True)
    sys.stdout.flush()
    # delta-rs' runtime can abort in its thread teardown at interpreter exit; all output is written.
    os._exit(0)


if __name__ == "__main__":
    main()
