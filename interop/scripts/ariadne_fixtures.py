#!/usr/bin/env python3
"""Build Ariadne index store roots with a published Spark Ariadne release, and record its answers.

Usage: ariadne_fixtures.py RELEASE [--jar PATH] [--out DIR]

RELEASE is a version such as 0.0.1-alpha-37 or 0.1.10-beta; the JAR defaults to the cached
ariadne-spark35_2.12-RELEASE.jar (or ariadne_2.12-RELEASE.jar for alpha artifact ids) from
interop/install.sh. Steps:

1. Copy ../shared/testdata/ariadne/data to the fixed path DATA_DIR (/tmp/ariadne-interop-data/data),
   so every filename the release records is file:///tmp/ariadne-interop-data/data/<file>.
2. Start local Spark (interop/scripts/sparkenv.py) with the release JAR on spark.jars and
   spark.ariadne.storagePath = a fresh store root, and drive the Scala API
   dev.cjfravel.ariadne.Index through py4j: one index per index type the release supports
   (CASES below), addFile + update each.
3. Run the fixed locate and join queries (QUERIES) and write the answers to
   <out>/<RELEASE>/answers.json, beside the copied store root <out>/<RELEASE>/root/ (lock files and
   _temp/ left out), plus <out>/<RELEASE>/metadata_versions.json (the version markers each index's
   metadata.json carries, i.e. what this release writes).

answers.json:
  {"release": ..., "data_prefix": "file:///tmp/ariadne-interop-data/data/",
   "locate": [{"index": ..., "query": {col: [values]}, "files": [sorted basenames]} | {..., "error": "..."}],
   "join":   [{"index": ..., "on": [...], "type": ..., "query_rows": [...], "rows": [canonical lines]}]}
"""

import argparse
import json
import os
import shutil
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import canonical  # noqa: E402
import sparkenv  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
SRC_DATA = os.path.join(ROOT, "..", "shared", "testdata", "ariadne", "data")
DATA_DIR = "/tmp/ariadne-interop-data/data"
DATA_PREFIX = "file://" + DATA_DIR + "/"

T1S = '{"type":"struct","fields":[{"name":"Id","type":"integer","nullable":true,"metadata":{}},' \
      '{"name":"Version","type":"integer","nullable":true,"metadata":{}},' \
      '{"name":"Value","type":"double","nullable":true,"metadata":{}}]}'
T3S = '{"type":"struct","fields":[{"name":"Id","type":"string","nullable":true,"metadata":{}},' \
      '{"name":"Value","type":"double","nullable":true,"metadata":{}}]}'
TEMPORAL = '{"type":"struct","fields":[{"name":"Id","type":"integer","nullable":true,"metadata":{}},' \
           '{"name":"Value","type":"double","nullable":true,"metadata":{}},' \
           '{"name":"UpdatedAt","type":"timestamp","nullable":true,"metadata":{}}]}'
ARRAYS = '{"type":"struct","fields":[{"name":"event_id","type":"string","nullable":true,"metadata":{}},' \
         '{"name":"event_type","type":"string","nullable":true,"metadata":{}},' \
         '{"name":"users","type":{"type":"array","elementType":{"type":"struct","fields":[' \
         '{"name":"id","type":"integer","nullable":true,"metadata":{}},' \
         '{"name":"name","type":"string","nullable":true,"metadata":{}}]},"containsNull":true},' \
         '"nullable":true,"metadata":{}},' \
         '{"name":"tags","type":{"type":"array","elementType":"string","containsNull":true},' \
         '"nullable":true,"metadata":{}}]}'

CSV_H = {"header": "true"}
MULTILINE = {"multiLine": "true"}

# (index name, schema, format, read options, files, [(method, args)], minimum release, extra conf)
CASES = [
    ("regular", T1S, "csv", CSV_H, ["table1_part0.csv", "table1_part1.csv"],
     [("addIndex", ["Id"]), ("addIndex", ["Version"])], "0.0.1-alpha-37", {}),
    ("bloom", T1S, "csv", CSV_H, ["table1_part0.csv", "table1_part1.csv"],
     [("addBloomIndex", ["Id", 0.01])], "0.0.1-alpha-37", {}),
    ("range", T1S, "csv", CSV_H, ["table1_part0.csv", "table1_part1.csv"],
     [("addRangeIndex", ["Value"]), ("addIndex", ["Id"])], "0.0.1-alpha-37", {}),
    ("computed", T3S, "csv", CSV_H, ["table3_part0.csv", "table3_part1.csv"],
     [("addComputedIndex", ["category", "substring(Id, 1, 4)"])], "0.0.1-alpha-37", {}),
    ("temporal", TEMPORAL, "csv", CSV_H, ["temporal_part0.csv", "temporal_part1.csv"],
     [("addTemporalIndex", ["Id", "UpdatedAt"])], "0.0.1-alpha39", {}),
    ("exploded", ARRAYS, "json", MULTILINE, ["array_test.json"],
     [("addExplodedFieldIndex", ["users", "id", "user_id"]), ("addIndex", ["event_id"])],
     "0.0.1-alpha-37", {}),
    # Large-index and auto-bloom paths: Id has 3 distinct values per file, >= largeIndexLimit = 3.
    ("large", T1S, "csv", CSV_H, ["table1_part0.csv", "table1_part1.csv"],
     [("addIndex", ["Id"]), ("addIndex", ["Version"])], "0.0.1-alpha-37",
     {"spark.ariadne.largeIndexLimit": "3"}),
]

# (index, {column: [values]}) for locateFiles.
LOCATES = [
    ("regular", {"Id": [1]}), ("regular", {"Id": [4]}), ("regular", {"Id": [2, 4]}),
    ("regular", {"Id": [99]}), ("regular", {"Id": [1], "Version": [3]}), ("regular", {"Version": [2]}),
    ("bloom", {"Id": [4]}), ("bloom", {"Id": [2]}), ("bloom", {"Id": [99]}),
    ("range", {"Value": [9.0]}), ("range", {"Value": [3.5]}), ("range", {"Value": [100.0]}),
    ("computed", {"category": ["cat1"]}), ("computed", {"category": ["cat3"]}),
    ("computed", {"category": ["cat9"]}),
    ("temporal", {"Id": [1]}), ("temporal", {"Id": [3]}), ("temporal", {"Id": [5]}),
    ("exploded", {"user_id": [100]}), ("exploded", {"user_id": [102]}), ("exploded", {"user_id": [999]}),
    ("large", {"Id": [4]}), ("large", {"Id": [2]}), ("large", {"Id": [1, 3]}), ("large", {"Id": [99]}),
]

# (index, join columns, join type, query schema DDL, query rows) for Index.join.
JOINS = [
    ("regular", ["Id", "Version"], "inner", "Id int, Version int", [(1, 3), (4, 1), (9, 9)]),
    ("regular", ["Id"], "left_outer", "Id int", [(3,)]),
    ("bloom", ["Id"], "inner", "Id int", [(2,), (4,)]),
    ("range", ["Value"], "inner", "Value double", [(9.0,)]),
    ("temporal", ["Id"], "inner", "Id int", [(1,), (3,), (5,)]),
    ("exploded", ["user_id"], "inner", "user_id int", [(101,)]),
    ("large", ["Id"], "inner", "Id int", [(4,)]),
]


def version_key(v):
    """Sort key of a release version: 0.0.1-alpha-37 / 0.0.1-alpha44 < 0.1.0-beta < ... < 0.1.10-beta."""
    base, _, tag = v.partition("-")
    nums = tuple(int(x) for x in base.split("."))
    digits = "".join(c for c in tag if c.isdigit())
    stage = 0 if tag.startswith("alpha") else 1
    return nums + (stage, int(digits) if digits and stage == 0 else 0)


def find_jar(release):
    for artifact in ("ariadne-spark35_2.12", "ariadne_2.12"):
        p = os.path.join(sparkenv.CACHE, "jars", "%s-%s.jar" % (artifact, release))
        if os.path.exists(p):
            return p
    raise FileNotFoundError("no cached JAR for Ariadne %s in %s/jars: add it to interop/releases.txt and "
                            "run interop/install.sh" % (release, sparkenv.CACHE))


class Driver:
    """py4j access to dev.cjfravel.ariadne.Index in one Spark session."""

    def __init__(self, spark):
        self.spark = spark
        self.jvm = spark.sparkContext._jvm
        self.gw = spark.sparkContext._gateway

    def scala_map(self, d):
        return self.jvm.org.apache.spark.api.python.PythonUtils.toScalaMap(d)

    def seq(self, items):
        return self.jvm.org.apache.spark.api.python.PythonUtils.toSeq(list(items))

    def companion(self):
        return getattr(self.jvm.dev.cjfravel.ariadne, "Index$").__getattr__("MODULE$")

    def index(self, name, schema_json, fmt, options):
        st = self.jvm.org.apache.spark.sql.types.DataType.fromJson(schema_json)
        return self.companion().apply(name, st, fmt, self.scala_map(options))

    def objects(self, values):
        arr = self.gw.new_array(self.jvm.java.lang.Object, len(values))
        for i, v in enumerate(values):
            if isinstance(v, float):
                arr[i] = self.jvm.java.lang.Double.valueOf(v)
            elif isinstance(v, int):
                arr[i] = self.jvm.java.lang.Integer.valueOf(v)
            else:
                arr[i] = v
        return arr

    def reopen(self, name):
        """A fresh Index(name) instance (bare reconnect: no preflight until the first query)."""
        none = self.jvm.scala.Option.empty()
        return self.companion().apply(name, none, none, False, none)

    def locate(self, idx, query):
        m = {k: self.objects(v) for k, v in query.items()}
        files = idx.locateFiles(self.scala_map(m)).mkString("\n")
        return sorted(f for f in files.split("\n") if f)


def build(release, jar, out):
    shutil.rmtree(DATA_DIR, ignore_errors=True)
    shutil.copytree(SRC_DATA, DATA_DIR)
    store = "/tmp/ariadne-interop-store/" + release
    shutil.rmtree(store, ignore_errors=True)
    os.makedirs(store)
    spark = sparkenv.session("ariadne-" + release, extra_jars=[jar],
                             conf={"spark.ariadne.storagePath": store,
                                   "spark.sql.execution.arrow.pyspark.enabled": "true"})
    d = Driver(spark)
    answers = {"release": release, "data_prefix": DATA_PREFIX, "built": [], "skipped": [],
               "locate": [], "join": []}
    for name, schema, fmt, opts, files, calls, since, conf in CASES:
        if version_key(release) < version_key(since):
            answers["skipped"].append({"index": name, "reason": "needs %s" % since})
            continue
        for k, v in conf.items():
            spark.conf.set(k, v)
        try:
            idx = d.index(name, schema, fmt, opts)
            for method, args in calls:
                getattr(idx, method)(*args)
            idx.addFile(d.seq([DATA_PREFIX + f for f in files]))
            idx.update()
            answers["built"].append(name)
        except Exception as e:
            answers["skipped"].append({"index": name, "reason": "%s: %s" % (type(e).__name__, str(e)[:300])})
        finally:
            for k in conf:
                spark.conf.unset(k)

    for name, query in LOCATES:
        if name not in answers["built"]:
            continue
        rec = {"index": name, "query": query}
        try:
            idx = d.reopen(name)
            rec["files"] = [f[len(DATA_PREFIX):] if f.startswith(DATA_PREFIX) else f
                            for f in d.locate(idx, query)]
        except Exception as e:
            rec["error"] = "%s: %s" % (type(e).__name__, str(e).splitlines()[0][:300])
        answers["locate"].append(rec)

    from pyspark.sql import DataFrame
    import delta_check
    for name, on, how, ddl, rows in JOINS:
        if name not in answers["built"]:
            continue
        rec = {"index": name, "on": on, "type": how, "query_schema": ddl, "query_rows": rows}
        try:
            idx = d.reopen(name)
            q = spark.createDataFrame(rows, ddl)
            jdf = idx.join(q._jdf, d.seq(on), how)
            df = DataFrame(jdf, spark)
            rec["rows"] = canonical.render_table(delta_check.spark_to_arrow(df), df.columns)
        except Exception as e:
            rec["error"] = "%s: %s" % (type(e).__name__, str(e).splitlines()[0][:300])
        answers["join"].append(rec)

    dest = os.path.join(out, release)
    shutil.rmtree(dest, ignore_errors=True)
    shutil.copytree(store, os.path.join(dest, "root"),
                    ignore=shutil.ignore_patterns("_temp", "*.lock", ".*.crc", "*.crc"))
    markers = {}
    for name in answers["built"]:
        with open(os.path.join(store, "indexes", name, "metadata.json"), encoding="utf-8") as f:
            m = json.load(f)
        markers[name] = {"metadata_version": m.get("metadata_version"),
                         "storage_format_version": m.get("storage_format_version")}
    with open(os.path.join(dest, "metadata_versions.json"), "w", encoding="utf-8") as f:
        json.dump(markers, f, indent=1, sort_keys=True)
        f.write("\n")
    with open(os.path.join(dest, "answers.json"), "w", encoding="utf-8") as f:
        json.dump(answers, f, ensure_ascii=False, indent=1)
        f.write("\n")
    return answers


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("release")
    ap.add_argument("--jar")
    ap.add_argument("--out", default=os.path.join(ROOT, "interop", "fixtures"))
    args = ap.parse_args()
    try:
        jar = args.jar or find_jar(args.release)
    except FileNotFoundError as e:
        print("ariadne_fixtures: %s" % e, file=sys.stderr)
        sys.exit(3)
    t0 = time.time()
    a = build(args.release, jar, os.path.abspath(args.out))
    print("ariadne %s: built %s, skipped %s, %d locate and %d join answers in %.0f s" % (
        args.release, a["built"], a["skipped"], len(a["locate"]), len(a["join"]), time.time() - t0), flush=True)
    os._exit(0)


if __name__ == "__main__":
    main()
