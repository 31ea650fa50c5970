#!/usr/bin/env python3
"""How the Spark library resolves column names and text literals (issue #13 item 5), measured once.

Usage: spark_names.py JAR SHARED_TESTDATA STORE_DIR

Drives the library's jar through py4j (../shared/oracles/ariadne/README.md) on table1 of the shared test data:
add-index with the wrong case, computed expressions naming columns in another case, locates with names and
text literals in other cases and forms, joins with the join column in another case and the output column
order. Prints one JSON object: step -> answer (file names, join columns and rows, or "ERROR <first line>").
The answers are the data of fileindex's TestSparkNameResolution (docs/compatibility.md, "Column names and
literals").
"""
import json, os, sys, shutil
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sparkenv
from pathlib import Path
jar, shared, store = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
spark = sparkenv.session("spark-names", extra_jars=[jar])
shutil.rmtree(store, ignore_errors=True)
spark.conf.set("spark.ariadne.storagePath", str(store))
jvm, jss = spark._jvm, spark._jsparkSession
PU = jvm.org.apache.spark.api.python.PythonUtils
loader = jvm.java.lang.Thread.currentThread().getContextClassLoader()
Index = jvm.java.lang.Class.forName("dev.cjfravel.ariadne.Index$", True, loader).getField("MODULE$").get(None)
opts = jvm.java.util.HashMap(); opts.put("header", "true")
schema = jvm.org.apache.spark.sql.types.StructType.fromDDL("Id INT, Version INT, Value DOUBLE")
idx = Index.apply("t1", schema, "csv", False, PU.toScalaMap(opts), jss)
data = shared / "data"
idx.addFile(PU.toSeq([(data / f).resolve().as_uri() for f in ("table1_part0.csv", "table1_part1.csv")]))
out = {}
def tryit(name, f):
    try:
        out[name] = f()
    except Exception as e:
        s = str(e)
        out[name] = "ERROR " + (s.split("\n")[0][:300])
def locate(col, v):
    values = spark.sparkContext._gateway.new_array(jvm.java.lang.Object, 1); values[0] = v
    keys = jvm.java.util.HashMap(); keys.put(col, values)
    found = idx.locateFiles(PU.toScalaMap(keys))
    return sorted(os.path.basename(x) for x in jvm.scala.collection.JavaConverters.setAsJavaSetConverter(found).asJava())
tryit("addIndex(id)", lambda: str(idx.addIndex("id")))
tryit("addIndex(Id)", lambda: str(idx.addIndex("Id")))
tryit("addRangeIndex(value)", lambda: str(idx.addRangeIndex("value")))
tryit("addComputedIndex(c, ID + 1)", lambda: str(idx.addComputedIndex("c", "ID + 1")))
tryit("addComputedIndex(C2, version * 10)", lambda: str(idx.addComputedIndex("C2", "version * 10")))
tryit("update", lambda: str(idx.update()))
for col, v in [("Id", 4), ("id", 4), ("ID", 4), ("Id", "4"), ("Id", "04"), ("Id", " 4"), ("Id", 4.0), ("Id", "4.0"), ("c", 5), ("C", 5), ("c", "5"), ("C2", 10), ("c2", 10), ("Value", 4.5), ("value", 4.5)]:
    tryit("locate %s=%r" % (col, v), lambda: locate(col, v))
from pyspark.sql import DataFrame
def join(df, cols, how, left_index=True):
    j = idx.join(df._jdf, PU.toSeq(cols), how) if left_index else Index.DataFrameOps(df._jdf).join(idx, PU.toSeq(cols), how)
    d = DataFrame(j, spark)
    return {"columns": d.columns, "rows": sorted(str(r) for r in d.collect())}
tryit("join Id", lambda: join(spark.createDataFrame([(4, "x")], "Id INT, tag STRING"), ["Id"], "inner"))
tryit("join id", lambda: join(spark.createDataFrame([(4, "x")], "id INT, tag STRING"), ["id"], "inner"))
tryit("join ID df-left", lambda: join(spark.createDataFrame([(4, "x")], "ID INT, tag STRING"), ["ID"], "inner", False))
tryit("join Id string key", lambda: join(spark.createDataFrame([("4", "x")], "Id STRING, tag STRING"), ["Id"], "inner"))
tryit("join c", lambda: join(spark.createDataFrame([(5, "x")], "c INT, tag STRING"), ["c"], "inner"))
tryit("join C", lambda: join(spark.createDataFrame([(5, "x")], "C INT, tag STRING"), ["C"], "inner"))
tryit("join Id,Version", lambda: join(spark.createDataFrame([(4, 1, "x")], "Version INT, Id INT, tag STRING"), ["Id", "Version"], "left"))
print(json.dumps(out, indent=1))
