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

A file with a blob column (key-value entry ariadne.blob; prepared.Options.Blob, docs/prepared.md) has the
key and one binary column in place of the others: both readers read that column and the rows come from
decoding it here with the documented row encoding (ariadne-row-1) and the fields the entry lists.
"""

import json
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def line(user_id, ts_micros, track, duration, context):
    return "%d|%d|%s|%d|%s" % (user_id, ts_micros, track, duration, context)


FIXED = {"BOOLEAN": ("<?", 1), "INT32": ("<i", 4), "INT64": ("<q", 8), "FLOAT": ("<f", 4), "DOUBLE": ("<d", 8)}


def blob_decoder(marker):
    """A decoder of one blob value (ariadne-row-1) into {field: value}, from the ariadne.blob entry."""
    m = json.loads(marker)
    assert m["version"] == 1 and m["encoding"] == "ariadne-row-1", m
    fields = m["fields"]
    nopt = sum(1 for f in fields if f["optional"])

    def decode(b):
        b = bytes(b)
        at, bit, out = (nopt + 7) // 8, 0, {}
        for f in fields:
            if f["optional"]:
                null = b[bit // 8] >> (bit % 8) & 1
                bit += 1
                if null:
                    out[f["name"]] = None
                    continue
            t = f["type"]
            if t in FIXED:
                fmt, n = FIXED[t]
                out[f["name"]] = struct.unpack_from(fmt, b, at)[0]
                at += n
            elif t == "BYTE_ARRAY":
                n, shift = 0, 0
                while True:
                    c = b[at]
                    at += 1
                    n |= (c & 0x7F) << shift
                    shift += 7
                    if c < 0x80:
                        break
                out[f["name"]] = b[at:at + n]
                at += n
            else:  # INT96, FIXED_LEN_BYTE_ARRAY: not in these files
                raise ValueError("type %s" % t)
        assert at == len(b), (at, len(b))
        return out

    return m["column"], decode


def blob_line(v):
    return line(v["user_id"], v["ts"], v["track_uri"].decode(), v["duration_ms"], v["context"].decode())


def with_pyarrow(path):
    import pyarrow.parquet as pq

    t = pq.read_table(path)
    pf = pq.ParquetFile(path)
    md = pf.metadata
    kv = md.metadata or {}
    if b"ariadne.blob" in kv:
        col, decode = blob_decoder(kv[b"ariadne.blob"])
        rows = [blob_line(decode(b)) for b in t.column(col).to_pylist()]
        assert t.column("user_id").to_pylist() == [int(r.split("|")[0]) for r in rows]
    else:
        cols = [t.column(n).to_pylist() for n in ("user_id", "track_uri", "duration_ms", "context")]
        ts = t.column("ts").cast("int64").to_pylist()
        rows = [line(u, s, tr, d, c) for u, s, tr, d, c in zip(cols[0], ts, cols[1], cols[2], cols[3])]
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
    import pyarrow.parquet as pq

    kv = pq.ParquetFile(path).metadata.metadata or {}
    if b"ariadne.blob" in kv:
        col, decode = blob_decoder(kv[b"ariadne.blob"])
        return [blob_line(decode(r[col])) for r in spark.read.parquet(path).select(col).collect()]
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
