#!/usr/bin/env python3
"""Read prepared Parquet files (package prepared) with pyarrow and with Spark.

Usage: prepared_check.py FILE...

The files hold lakegen's Listen rows (user_id long, ts timestamp, track_uri string, duration_ms int,
context string). Prints one JSON object on stdout:

  {"<FILE>": {"pyarrow": {"rows": ["<line>", ...]},       rows in file order
              "spark":   {"rows": ["<line>", ...]},       rows as spark.read.parquet returns them
              "metadata": {"marker": "<ariadne.prepared value>" | null,
                           "sorting_columns": [[column index, descending, nulls first], ...] per row group,
                           "page_index": [true|false per column of row group 0],
                           "num_row_groups": N}}}

A line is "user_id|ts in microseconds since the epoch|track_uri|duration_ms|context".
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def line(user_id, ts_micros, track, duration, context):
    return "%d|%d|%s|%d|%s" % (user_id, ts_micros, track, duration, context)


def with_pyarrow(path):
    import pyarrow.parquet as pq

    t = pq.read_table(path)
    cols = [t.column(n).to_pylist() for n in ("user_id", "track_uri", "duration_ms", "context")]
    ts = t.column("ts").cast("int64").to_pylist()
    rows = [line(u, s, tr, d, c) for u, s, tr, d, c in zip(cols[0], ts, cols[1], cols[2], cols[3])]
    pf = pq.ParquetFile(path)
    md = pf.metadata
    kv = md.metadata or {}
    marker = kv.get(b"ariadne.prepared")
    sorting = []
    for i in range(md.num_row_groups):
        sc = md.row_group(i).sorting_columns or ()
        sorting.append([[c.column_index, c.descending, c.nulls_first] for c in sc])
    rg0 = md.row_group(0)
    page_index = [rg0.column(i).has_column_index and rg0.column(i).has_offset_index for i in range(rg0.num_columns)]
    meta = {"marker": marker.decode() if marker else None, "sorting_columns": sorting,
            "page_index": page_index, "num_row_groups": md.num_row_groups}
    return rows, meta


def with_spark(spark, path):
    df = spark.read.parquet(path).selectExpr("user_id", "unix_micros(ts) AS ts", "track_uri", "duration_ms", "context")
    return [line(r.user_id, r.ts, r.track_uri, r.duration_ms, r.context) for r in df.collect()]


def main():
    if len(sys.argv) < 2:
        sys.stderr.write(__doc__)
        sys.exit(2)
    import sparkenv

    spark = sparkenv.session("ariadne-prepared-check")
    out = {}
    for path in sys.argv[1:]:
        rows, meta = with_pyarrow(path)
        out[path] = {"pyarrow": {"rows": rows}, "spark": {"rows": with_spark(spark, path)}, "metadata": meta}
    spark.stop()
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
