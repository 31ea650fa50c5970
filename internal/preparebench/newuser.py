"""The new user's case of issue 12, at full size: 20 unsorted Parquet files of
100,000 rows each (2M rows) written by pyarrow with its defaults (SNAPPY,
dictionary encoding on every column), the shape of prepared/newuser_test.go
(which is the same case scaled down 20x and written by arrow-go).

    python newuser.py DIR [FILES] [ROWS_PER_FILE]

A benchmark tool (docs/prepared.md), not part of the product; needs pyarrow
(interop's venv has it).
"""
import os
import random
import sys

import pyarrow as pa
import pyarrow.parquet as pq


def main():
    out = sys.argv[1]
    files = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    rows = int(sys.argv[3]) if len(sys.argv) > 3 else 100_000
    total = files * rows  # users and tracks scale with the rows, as from the test (20,000 and 8,000 per 100,000 rows)
    users, hot, tracks, countries = 20_000 * total // 100_000, 50, 8_000 * total // 100_000, 30
    rng = random.Random(12)
    os.makedirs(out, exist_ok=True)
    for f in range(files):
        uid, ts, track, dur, country, ctx = [], [], [], [], [], []
        for _ in range(rows):
            u = rng.randrange(users)
            if rng.randrange(5) == 0:
                u = rng.randrange(hot)
            uid.append(u * 7919 + 1_000_003)
            ts.append(1_717_200_000_000 + rng.randrange(30 * 86_400_000))
            track.append("spotify:track:%022d" % rng.randrange(tracks))
            dur.append(90_000 + rng.randrange(240_000))
            country.append(None if rng.randrange(20) == 0 else "C%02d" % rng.randrange(countries))
            ctx.append('{"type":"playlist","id":"%016x","pos":%d}' % (rng.getrandbits(64), rng.randrange(100)))
        t = pa.table({
            "user_id": pa.array(uid, pa.int64()),
            "ts": pa.array(ts, pa.timestamp("ms", tz="UTC")),
            "track_uri": pa.array(track, pa.string()),
            "duration_ms": pa.array(dur, pa.int32()),
            "country": pa.array(country, pa.string()),
            "context": pa.array(ctx, pa.string()),
        })
        pq.write_table(t, os.path.join(out, "part-%05d.parquet" % f))
    print("%d files, %d rows, %d users (%d hot), %d tracks" % (files, files * rows, users, hot, tracks))


if __name__ == "__main__":
    main()
