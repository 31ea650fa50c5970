#!/usr/bin/env python3
"""Read one Delta table with delta-rs AND with Spark + delta-spark; print both as canonical JSON.

Usage: delta_check.py TABLE_PATH [--engine both|deltars|spark] [--version N]
       delta_check.py --batch REQUESTS.json [--engine ...]

Prints one JSON object on stdout (so a Go test can compare a table our code wrote):

  {"table": PATH,
   "deltars": {"version": N, "schema": "<schemaString from the log>",
               "engine_schema": "<the schema the engine reports, as Spark schema JSON>",
               "num_rows": N, "rows": [canonical lines], "rows_sha256": "...", "error": null | "..."},
   "spark":   {... same keys ...}}

With --batch, REQUESTS.json is a JSON list of {"table": PATH, "version": N or null} and the output is
{"results": [one object as above per request, in request order]}: one Spark session serves them all
(starting Spark costs about 10 s, reading a small table well under one).
"engine_schema" is delta-rs' DeltaTable.schema().to_json() and Spark's DataFrame.schema.json().

Rows are canonical row lines (docs/interop.md, "Canonical rows"); both engines' results go through
the same renderer via Arrow, so equal tables give equal lines. Exit status 0 even when an engine
refuses the table (its "error" says why); 2 on usage errors.
"""

import argparse
import json
import os
import sys

import pyarrow as pa

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import canonical  # noqa: E402
from delta_golden import raw_schema_string  # noqa: E402


def _result(version, schema, lines, error=None, engine_schema=None):
    if error is not None:
        return {"version": version, "schema": schema, "engine_schema": engine_schema, "num_rows": None,
                "rows": None, "rows_sha256": None, "error": error}
    return {"version": version, "schema": schema, "engine_schema": engine_schema, "num_rows": len(lines),
            "rows": lines, "rows_sha256": canonical.rows_sha256(lines), "error": None}


def read_deltars(path, version=None):
    from deltalake import DeltaTable, QueryBuilder
    v = schema = None
    try:
        dt = DeltaTable(path, version=version)
        v = dt.version()
        schema = raw_schema_string(path, v)
        names = [f.name for f in dt.schema().fields]
        reader = QueryBuilder().register("t", dt).execute("SELECT * FROM t")
        table = pa.RecordBatchReader.from_stream(reader).read_all()
        return _result(v, schema, canonical.render_table(table, names), engine_schema=dt.schema().to_json())
    except Exception as e:
        return _result(v, schema, None, "%s: %s" % (type(e).__name__, (str(e).splitlines() or [""])[0]))


def spark_to_arrow(df):
    """Arrow table of a Spark DataFrame, converted by Spark itself (no pandas on the path)."""
    # DataFrame._collect_as_arrow is what toPandas uses under Arrow; it keeps nested types.
    batches = df._collect_as_arrow()
    schema = batches[0].schema if batches else None
    if schema is None:
        from pyspark.sql.pandas.types import to_arrow_schema
        schema = to_arrow_schema(df.schema)
    return pa.Table.from_batches(batches, schema=schema)


def read_spark(path, version=None):
    import sparkenv
    v = schema = None
    try:
        spark = sparkenv.session("delta-check", conf={"spark.sql.execution.arrow.pyspark.enabled": "true"})
        if version is None:  # the latest version (loads the latest snapshot)
            from delta.tables import DeltaTable
            v = DeltaTable.forPath(spark, path).history(1).collect()[0]["version"]
        else:  # time travel reads only the log up to version
            v = version
        schema = raw_schema_string(path, v)
        reader = spark.read.format("delta")
        if version is not None:
            reader = reader.option("versionAsOf", version)
        df = reader.load(path)
        table = spark_to_arrow(df)
        return _result(v, schema, canonical.render_table(table, df.columns), engine_schema=df.schema.json())
    except Exception as e:
        return _result(v, schema, None, _spark_error(e))


def _spark_error(e):
    """One line naming the JVM exception (Py4JJavaError's own text is only 'An error occurred …')."""
    je = getattr(e, "java_exception", None)
    if je is not None:
        text = je.toString()
        cause = je.getCause()
        while cause is not None:
            text = cause.toString()
            cause = cause.getCause()
        return text.splitlines()[0][:500]
    return "%s: %s" % (type(e).__name__, (str(e).splitlines() or [""])[0])


def check(table, version, engine):
    """Both engines' (or one engine's) reading of table at version (None = latest)."""
    path = os.path.abspath(table)
    out = {"table": path, "version": version}
    if engine in ("both", "deltars"):
        out["deltars"] = read_deltars(path, version)
    if engine in ("both", "spark"):
        out["spark"] = read_spark(path, version)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("table", nargs="?")
    ap.add_argument("--engine", choices=["both", "deltars", "spark"], default="both")
    ap.add_argument("--version", type=int, default=None)
    ap.add_argument("--batch", help="JSON file: a list of {\"table\": PATH, \"version\": N or null}")
    args = ap.parse_args()
    if (args.table is None) == (args.batch is None):
        ap.error("give exactly one of TABLE_PATH and --batch")
    if args.batch:
        with open(args.batch, encoding="utf-8") as f:
            requests = json.load(f)
        out = {"results": [check(r["table"], r.get("version"), args.engine) for r in requests]}
    else:
        out = check(args.table, args.version, args.engine)
    sys.stdout.write(json.dumps(out, ensure_ascii=False, separators=(",", ":")) + "\n")
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
