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
                           "frames": "<ariadne.frames value>" | null,
                           "num_row_groups": N}}}

A line is "user_id|ts in microseconds since the epoch|track_uri|duration_ms|context".

A file with a blob column (key-value entry ariadne.blob; prepared.Options.Blob, docs/prepared.md) has the
key and one binary column in place of the others: both readers read that column and the rows come from
decoding it here with the documented row encoding (ariadne-row-1) and the fields the entry lists. A
co-grouped blob (entry with "codec": "zstd-dict", "encoding": "ariadne-block-1" or "-2"; --blob-codec zstd-dict) holds
one stored row per block of a key's rows: each value is a ZSTD frame compressed with the file's dictionary (the
entry's "dict", base64), decoded here with libzstd (the zstandard package), then its block laid out column by
column; a stored row gives its block's rows.

A file with an interleaved column group (ariadne.frames entry with "interleave"; --interleave) is read as any
framed file: the copies of the group's values are ZSTD skippable frames inside the key column's pages, which
libzstd skips, so both readers must return exactly the rows written.
"""

import json
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def line(user_id, ts_micros, track, duration, context):
    return "%d|%d|%s|%d|%s" % (user_id, ts_micros, track, duration, context)


FIXED = {"BOOLEAN": ("<?", 1), "INT32": ("<i", 4), "INT64": ("<q", 8), "FLOAT": ("<f", 4), "DOUBLE": ("<d", 8)}


def uvarint(b, at):
    """An unsigned LEB128 varint of b at offset at: (value, offset after it)."""
    n, shift = 0, 0
    while True:
        c = b[at]
        at += 1
        n |= (c & 0x7F) << shift
        shift += 7
        if c < 0x80:
            return n, at


def blob_decoder(marker):
    """A decoder of one blob value into a list of rows, each {field: value}, from the ariadne.blob entry:
    one row for the row encoding (ariadne-row-1), a block's rows for co-grouped blobs (zstd-dict)."""
    m = json.loads(marker)
    if m.get("codec") == "zstd-dict":
        return m["column"], block_decoder(m)
    col, decode = row_decoder(m)
    return col, lambda b: [decode(b)]


def block_decoder(m):
    """A decoder of one co-grouped blob value: a ZSTD frame with the file's dictionary holding an
    ariadne-block-1, ariadne-block-2 or ariadne-block-3 block (docs/prepared.md, "Co-grouped blobs with a dictionary"): a
    varint row count n, then per field a column of n values (the key, the first field, once): a null bitmap
    for an optional field (LSB first, set = null), then the non-null values, fixed widths little-endian,
    byte arrays as all their varint lengths then all their bytes. In ariadne-block-2 an INT32/INT64 value is
    base + u * scale, u an unsigned varint (with "delta": the first one, then zigzag varints of the
    difference from the previous u), a byte array is stored without the field's "prefix", and the frame is
    stored without its magic number and dictionary ID byte (put back here before libzstd decodes it).
    ariadne-block-3 is ariadne-block-2's block in a smaller frame: a tag byte, then for tag 0 a frame stored
    as in ariadne-block-2, for tag 1 (2) the content of a frame's only block, compressed (raw), whose frame
    header (dictionary ID, a 256 KiB window, no content size) and 3-byte block header are put back here."""
    import base64

    import zstandard

    assert m["version"] == 1 and m["encoding"] in ("ariadne-block-1", "ariadne-block-2", "ariadne-block-3"), m
    v2 = m["encoding"] in ("ariadne-block-2", "ariadne-block-3")
    v3 = m["encoding"] == "ariadne-block-3"
    dict_bytes = base64.b64decode(m["dict"])
    dctx = zstandard.ZstdDecompressor(dict_data=zstandard.ZstdCompressionDict(dict_bytes))
    fields = m["fields"]
    prefixes = [base64.b64decode(f.get("prefix", "")) for f in fields]
    dict_id = struct.unpack_from("<I", dict_bytes, 4)[0]
    assert not v2 or 0 < dict_id < 256, dict_id

    def restore(s):
        # RFC 8878 §3.1.1: magic, frame header descriptor (dictionary ID flag 1: one byte), window
        # descriptor unless single-segment, then the ID the writer left out.
        at = 1 if s[0] & 0x20 else 2
        return b"\x28\xb5\x2f\xfd" + bytes([s[0] | 1]) + s[1:at] + bytes([dict_id]) + s[at:]

    def expand(v):
        if v[0] == 0:
            return restore(v[1:])
        assert v[0] in (1, 2), v[0]
        content = v[1:]
        # Block header: last block, type 2 (compressed) or 0 (raw), the content's size.
        bh = 1 | (2 if v[0] == 1 else 0) << 1 | len(content) << 3
        return b"\x28\xb5\x2f\xfd" + bytes([1, (18 - 10) << 3, dict_id]) + struct.pack("<I", bh)[:3] + content

    def decode(z):
        z = bytes(z)
        if v3:
            z = expand(z)
        elif v2:
            z = restore(z)
        b = dctx.decompress(z, max_output_size=256 << 20)
        n, at = uvarint(b, 0)
        cols = []
        for fi, f in enumerate(fields):
            cnt = 1 if fi == 0 else n
            null = [False] * cnt
            if f["optional"]:
                nb = (cnt + 7) // 8
                null = [bool(b[at + i // 8] >> (i % 8) & 1) for i in range(cnt)]
                at += nb
            present = cnt - sum(null)
            t = f["type"]
            vals = []
            if t == "BYTE_ARRAY":
                lens = []
                for _ in range(present):
                    ln, at = uvarint(b, at)
                    lens.append(ln)
                for ln in lens:
                    vals.append(prefixes[fi] + b[at:at + ln])
                    at += ln
            elif v2 and t in ("INT32", "INT64"):
                prev = None
                for _ in range(present):
                    if prev is None or not f.get("delta"):
                        u, at = uvarint(b, at)
                    else:
                        zz, at = uvarint(b, at)
                        # Go adds the difference to a uint64: wrap as it does.
                        u = (prev + ((zz >> 1) ^ -(zz & 1))) & (2**64 - 1)
                    prev = u
                    vals.append(f.get("base", 0) + u * f["scale"])
            else:
                if t in FIXED:
                    fmt, w = FIXED[t]
                else:  # INT96, FIXED_LEN_BYTE_ARRAY: raw bytes
                    fmt, w = None, 12 if t == "INT96" else f["length"]
                for _ in range(present):
                    vals.append(struct.unpack_from(fmt, b, at)[0] if fmt else b[at:at + w])
                    at += w
            it = iter(vals)
            cols.append([None if null[i] else next(it) for i in range(cnt)])
        assert at == len(b), (at, len(b))
        return [{f["name"]: cols[fi][0 if fi == 0 else r] for fi, f in enumerate(fields)} for r in range(n)]

    return decode


def row_decoder(m):
    """A decoder of one blob value (ariadne-row-1) into {field: value}."""
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
                n, at = uvarint(b, at)
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
        rows, keys = [], []
        for k, b in zip(t.column("user_id").to_pylist(), t.column(col).to_pylist()):
            got = [blob_line(v) for v in decode(b)]
            rows += got
            keys += [k] * len(got)
        assert keys == [int(r.split("|")[0]) for r in rows]
    elif b"ariadne.cogroup" in kv:
        import pyarrow.compute as pc

        flat = {n: pc.list_flatten(t.column(n)) for n in ("ts", "track_uri", "duration_ms", "context")}
        for n in flat:
            assert len(flat[n]) == len(flat["ts"]), n
        users = pc.take(t.column("user_id"), pc.list_parent_indices(t.column("ts"))).to_pylist()
        ts = flat["ts"].cast("int64").to_pylist()
        cols = [flat[n].to_pylist() for n in ("track_uri", "duration_ms", "context")]
        rows = [line(u, s, tr, d, c) for u, s, tr, d, c in zip(users, ts, cols[0], cols[1], cols[2])]
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
    frames = kv.get(b"ariadne.frames")
    meta = {"marker": marker.decode() if marker else None, "sorting_columns": sorting,
            "page_index": page_index, "num_row_groups": md.num_row_groups,
            "frames": frames.decode() if frames else None}
    return rows, meta


def with_spark(spark, path):
    import pyarrow.parquet as pq

    kv = pq.ParquetFile(path).metadata.metadata or {}
    if b"ariadne.blob" in kv:
        col, decode = blob_decoder(kv[b"ariadne.blob"])
        rows = []
        for r in spark.read.parquet(path).select("user_id", col).collect():
            got = [blob_line(v) for v in decode(r[col])]
            assert all(int(g.split("|")[0]) == r.user_id for g in got)
            rows += got
        return rows
    df = spark.read.parquet(path)
    if b"ariadne.cogroup" in kv:
        df = df.selectExpr("user_id", "inline(arrays_zip(ts, track_uri, duration_ms, context))")
    df = df.selectExpr("user_id", "unix_micros(ts) AS ts", "track_uri", "duration_ms", "context")
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
