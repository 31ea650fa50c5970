#!/usr/bin/env python3
"""Evaluate the computed-index function cases through Spark itself (issue #13 item 5).

Usage: spark_functions.py CASES.json OUT.json

CASES.json is internal/duck/testdata/spark_functions.json: the edge-value rows (columns with Spark
types) and the Spark SQL expressions that computed indexes may use. For each case this evaluates the
expression over all rows in ONE local SparkSession (session time zone UTC, ANSI mode off, as Spark
3.5's default) and writes CASES.json back out to OUT.json with, per case:

  "spark_type":  the result's Spark type (simpleString), or absent when Spark refused the expression
  "spark":       one canonical JSON fragment per row (docs/interop.md "Canonical rows"), row order kept
  "spark_error": the first line of Spark's error when the expression fails (analysis or run time)

Passing the repository's own CASES.json as OUT.json refreshes the recorded values that the Go unit
tests of internal/duck check without Spark; the interop test (TestSparkFunctions) writes to a temporary
file and compares Spark's live answers with both the record and our DuckDB translation.
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import canonical  # noqa: E402
import delta_check  # noqa: E402
import sparkenv  # noqa: E402

# How each column is fed: built as the type below from the JSON value, then cast with Spark's own
# cast (so doubles NaN/Infinity, dates and timestamps are parsed by Spark, never by Python).
_FEED = {"double": "string", "date": "string", "timestamp": "string"}


def _map_feed(t):
    """A map column's JSON value is a list of [key, value] pairs (JSON objects lose their order in Go);
    it is fed as an array of (key, value) structs and built with map_from_entries, which keeps that
    order (a Python dict would go through a Java HashMap and lose it)."""
    from pyspark.sql.types import ArrayType, MapType, StructField, StructType, _parse_datatype_string
    m = _parse_datatype_string(t)
    if not isinstance(m, MapType):
        return None
    return ArrayType(StructType([StructField("key", m.keyType, False),
                                 StructField("value", m.valueType, True)]), False)


def spark_error(e):
    """One stable line naming Spark's error: the innermost JVM exception's class and message (py4j's own
    text, "An error occurred while calling o617.getResult", names a gateway object that changes per run)."""
    je = getattr(e, "java_exception", None)
    if je is not None:
        while je.getCause() is not None:
            je = je.getCause()
        text = (je.toString().splitlines() or [""])[0]
        cls, sep, msg = text.partition(":")
        return cls.rsplit(".", 1)[-1] + sep + msg
    return "%s: %s" % (type(e).__name__, (str(e).strip().splitlines() or [""])[0])


def main():
    if len(sys.argv) != 3:
        sys.stderr.write(__doc__)
        sys.exit(2)
    with open(sys.argv[1], encoding="utf-8") as f:
        doc = json.load(f)
    from pyspark.sql.types import StructType, _parse_datatype_string

    spark = sparkenv.session("spark-functions", conf={
        "spark.sql.execution.arrow.pyspark.enabled": "true",
        "spark.sql.ansi.enabled": "false",
    })
    cols = doc["columns"]
    st = StructType()
    for c in cols:
        st.add(c["name"], _map_feed(c["type"]) or _parse_datatype_string(_FEED.get(c["type"], c["type"])), True)
    st.add("_i", _parse_datatype_string("int"), False)
    data = []
    for n, r in enumerate(doc["rows"]):
        data.append([None if v is None else str(v) if cols[k]["type"] in _FEED else v
                     for k, v in enumerate(r)] + [n])
    raw = spark.createDataFrame(data, st)
    sel = ["_i"] + ["cast(`%s` as %s) as `%s`" % (c["name"], c["type"], c["name"]) if c["type"] in _FEED
                    else "map_from_entries(`%s`) as `%s`" % (c["name"], c["name"]) if _map_feed(c["type"])
                    else "`%s`" % c["name"] for c in cols]
    df = raw.selectExpr(*sel).cache()
    df.count()
    for case in doc["cases"]:
        for k in ("spark_type", "spark", "spark_error"):
            case.pop(k, None)
        try:
            out = df.selectExpr("_i", "(%s) as v" % case["expr"])
            case["spark_type"] = out.schema["v"].dataType.simpleString()
            table = delta_check.spark_to_arrow(out)
            vals = {}
            for line in canonical.render_table(table, ["_i", "v"]):
                head, _, frag = line[len('{"_i":'):-1].partition(',"v":')
                vals[int(head)] = frag
            case["spark"] = [vals[n] for n in range(len(doc["rows"]))]
        except Exception as e:  # noqa: BLE001 - Spark's refusal is a recorded answer
            case.pop("spark_type", None)
            case["spark_error"] = spark_error(e)
    with open(sys.argv[2], "w", encoding="utf-8") as f:
        json.dump(doc, f, ensure_ascii=False, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
