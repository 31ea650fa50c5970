#!/usr/bin/env python3
"""Write small Delta tables with Spark (delta-spark) and with delta-rs, for our Go reader to check.

Usage: delta_write.py OUT_PATH [--engine both|spark|deltars]

Creates under OUT_PATH one table per (engine, scenario):

  spark_append      create + 2 appends (partitioned by `part`)
  spark_delete      create + DELETE WHERE id % 3 = 0
  spark_merge       create + MERGE upsert by id (update matched, insert new)
  spark_optimize    4 appends + OPTIMIZE (compaction: adds and removes)
  spark_checkpoint  12 appends with delta.checkpointInterval = 5 (checkpoints at 5 and 10)
  deltars_append, deltars_delete, deltars_merge, deltars_optimize, deltars_checkpoint
                    the same with the `deltalake` package (checkpoint via create_checkpoint())

and OUT_PATH/expected.json: for every table its version, schemaString and canonical rows as read
back by delta-rs (docs/interop.md, "Canonical rows"), and by Spark when Spark wrote the table.
Every table has the same columns:
  id long, name string, amount decimal(10,2), ts timestamp, d date, score double, flag boolean,
  tags array<string>, attrs map<string,int>, info struct<city:string, zip:int>, part string
"""

import argparse
import datetime as dt_
import decimal
import json
import os
import shutil
import sys

import pyarrow as pa

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import delta_check  # noqa: E402

UTC = dt_.timezone.utc

ARROW_SCHEMA = pa.schema([
    ("id", pa.int64()), ("name", pa.string()), ("amount", pa.decimal128(10, 2)),
    ("ts", pa.timestamp("us", tz="UTC")), ("d", pa.date32()), ("score", pa.float64()),
    ("flag", pa.bool_()), ("tags", pa.list_(pa.string())),
    ("attrs", pa.map_(pa.string(), pa.int32())),
    ("info", pa.struct([("city", pa.string()), ("zip", pa.int32())])), ("part", pa.string()),
])


def make_rows(start, n, tag="v1"):
    """n deterministic rows with ids start..start+n-1 covering nulls, unicode and edge values."""
    rows = []
    for i in range(start, start + n):
        rows.append({
            "id": i,
            "name": None if i % 7 == 0 else "%s-name-%d-é✓" % (tag, i),
            "amount": decimal.Decimal(i * 125 - 300).scaleb(-2),
            "ts": dt_.datetime(2024, 1, 1, tzinfo=UTC) + dt_.timedelta(hours=i, microseconds=i * 1001),
            "d": dt_.date(2024, 1, 1) + dt_.timedelta(days=i),
            "score": [0.1, -0.0, 1e16, 2.5, float("nan"), None, 1.0 / 3][i % 7],
            "flag": None if i % 5 == 0 else i % 2 == 0,
            "tags": None if i % 6 == 0 else ["t%d" % (i % 3), tag][: 1 + i % 2],
            "attrs": None if i % 4 == 0 else [("k%d" % j, i * 10 + j) for j in range(i % 3)],
            "info": None if i % 8 == 0 else {"city": "city%d" % (i % 4), "zip": 10000 + i},
            "part": "p%d" % (i % 3),
        })
    return rows


def arrow_table(rows):
    return pa.Table.from_pylist(rows, schema=ARROW_SCHEMA)


def spark_df(spark, rows):
    from pyspark.sql.types import (ArrayType, BooleanType, DateType, DecimalType, DoubleType, IntegerType,
                                   LongType, MapType, StringType, StructField, StructType, TimestampType)
    schema = StructType([
        StructField("id", LongType()), StructField("name", StringType()),
        StructField("amount", DecimalType(10, 2)), StructField("ts", TimestampType()),
        StructField("d", DateType()), StructField("score", DoubleType()), StructField("flag", BooleanType()),
        StructField("tags", ArrayType(StringType())), StructField("attrs", MapType(StringType(), IntegerType())),
        StructField("info", StructType([StructField("city", StringType()), StructField("zip", IntegerType())])),
        StructField("part", StringType()),
    ])
    data = []
    for r in rows:
        r = dict(r)
        r["attrs"] = None if r["attrs"] is None else dict(r["attrs"])
        r["info"] = None if r["info"] is None else (r["info"]["city"], r["info"]["zip"])
        data.append(tuple(r[f.name] for f in schema.fields))
    return spark.createDataFrame(data, schema).coalesce(1)


def write_spark(out):
    import sparkenv
    from delta.tables import DeltaTable
    spark = sparkenv.session("delta-write")
    made = []

    p = os.path.join(out, "spark_append")
    spark_df(spark, make_rows(0, 6)).write.format("delta").partitionBy("part").save(p)
    spark_df(spark, make_rows(6, 6)).write.format("delta").mode("append").save(p)
    spark_df(spark, make_rows(12, 3, "v2")).write.format("delta").mode("append").save(p)
    made.append(p)

    p = os.path.join(out, "spark_delete")
    spark_df(spark, make_rows(0, 12)).write.format("delta").save(p)
    DeltaTable.forPath(spark, p).delete("id % 3 = 0")
    made.append(p)

    p = os.path.join(out, "spark_merge")
    spark_df(spark, make_rows(0, 10)).write.format("delta").save(p)
    src = spark_df(spark, make_rows(5, 10, "v2"))
    (DeltaTable.forPath(spark, p).alias("t").merge(src.alias("s"), "t.id = s.id")
     .whenMatchedUpdateAll().whenNotMatchedInsertAll().execute())
    made.append(p)

    p = os.path.join(out, "spark_optimize")
    for k in range(4):
        spark_df(spark, make_rows(k * 4, 4)).write.format("delta").mode("append").save(p)
    DeltaTable.forPath(spark, p).optimize().executeCompaction()
    made.append(p)

    p = os.path.join(out, "spark_checkpoint")
    for k in range(12):
        w = spark_df(spark, make_rows(k * 2, 2)).write.format("delta").mode("append")
        if k == 0:
            w = w.option("delta.checkpointInterval", "5")
        w.save(p)
    made.append(p)
    return made


def write_deltars(out):
    from deltalake import DeltaTable, write_deltalake
    made = []

    p = os.path.join(out, "deltars_append")
    write_deltalake(p, arrow_table(make_rows(0, 6)), partition_by=["part"])
    write_deltalake(p, arrow_table(make_rows(6, 6)), mode="append")
    write_deltalake(p, arrow_table(make_rows(12, 3, "v2")), mode="append")
    made.append(p)

    p = os.path.join(out, "deltars_delete")
    write_deltalake(p, arrow_table(make_rows(0, 12)))
    DeltaTable(p).delete("id % 3 = 0")
    made.append(p)

    p = os.path.join(out, "deltars_merge")
    write_deltalake(p, arrow_table(make_rows(0, 10)))
    (DeltaTable(p).merge(arrow_table(make_rows(5, 10, "v2")), predicate="t.id = s.id",
                         source_alias="s", target_alias="t")
     .when_matched_update_all().when_not_matched_insert_all().execute())
    made.append(p)

    p = os.path.join(out, "deltars_optimize")
    for k in range(4):
        write_deltalake(p, arrow_table(make_rows(k * 4, 4)), mode="append")
    DeltaTable(p).optimize.compact()
    made.append(p)

    p = os.path.join(out, "deltars_checkpoint")
    for k in range(12):
        write_deltalake(p, arrow_table(make_rows(k * 2, 2)), mode="append")
        if k in (4, 9):
            DeltaTable(p).create_checkpoint()
    made.append(p)
    return made


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--engine", choices=["both", "spark", "deltars"], default="both")
    args = ap.parse_args()
    out = os.path.abspath(args.out)
    os.makedirs(out, exist_ok=True)
    for name in os.listdir(out):
        if name.startswith(("spark_", "deltars_")) or name == "expected.json":
            shutil.rmtree(os.path.join(out, name), ignore_errors=True) if os.path.isdir(
                os.path.join(out, name)) else os.remove(os.path.join(out, name))
    made = []
    if args.engine in ("both", "deltars"):
        made += write_deltars(out)
    if args.engine in ("both", "spark"):
        made += write_spark(out)
    expected = {}
    for p in made:
        name = os.path.basename(p)
        e = {"deltars": delta_check.read_deltars(p)}
        if args.engine in ("both", "spark"):
            e["spark"] = delta_check.read_spark(p)
        expected[name] = e
        print("%-20s deltars v%s %s rows%s" % (name, e["deltars"]["version"], e["deltars"]["num_rows"],
                                                 "" if "spark" not in e else ", spark %s rows, same=%s" % (
                                                     e["spark"]["num_rows"],
                                                     e["spark"]["rows_sha256"] == e["deltars"]["rows_sha256"])),
              flush=True)
    with open(os.path.join(out, "expected.json"), "w", encoding="utf-8") as f:
        json.dump(expected, f, ensure_ascii=False, indent=1)
        f.write("\n")
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
