#!/usr/bin/env python3
"""Build Ariadne index store roots with releases of the Spark Ariadne library, and record their answers.

Usage: ariadne_fixtures.py [RELEASE ...] [--out DIR]

With no RELEASE, every release of interop/releases.txt, oldest first. Each release runs in its own
process (one JVM and one SparkSession per release: a jar cannot be swapped inside a running JVM).
The jar of RELEASE is sparkenv.oracle_jar(RELEASE): ARIADNE_ORACLES_DIR (default
<repo>/../shared/oracles/ariadne)/<RELEASE>/*.jar. Spark runs local[1] unless ARIADNE_SPARK_MASTER
says otherwise. For each release:

1. Copy the data files of CASES from ../shared/testdata/ariadne/data to the fixed path DATA_DIR
   (/tmp/ariadne-interop-data/data), so every file name the release records is
   file:///tmp/ariadne-interop-data/data/<file> (the Go test maps that prefix to <out>/data/, a copy of
   the same files committed beside the fixtures).
2. Start local Spark with the release jar on spark.jars and spark.ariadne.storagePath = a fresh store
   root, and drive dev.cjfravel.ariadne.Index through py4j: one index per case of CASES that the release
   supports (definitions, addFile, update).
3. Run the locate and join queries (LOCATES, JOINS) on every index built and write
   <out>/<RELEASE>/answers.json, beside the copied store root <out>/<RELEASE>/root/ (lock files, _temp/
   and Hadoop's .crc side files left out: our readers do not need them, and Hadoop's local file system
   reads a file without its .crc).

answers.json:
  {"release": ..., "jar": <file name>, "jar_sha256": ..., "data_prefix": "file:///tmp/ariadne-interop-data/data/",
   "built": [index names], "skipped": [{"index", "reason"}],
   "markers": {index: {"metadata_version": n|null, "storage_format_version": n|null}},
   "locate": [{"index", "query": {col: [values]}, "files": [sorted basenames]} | {..., "error": "..."}],
   "join":   [{"index", "on", "type", "index_on_left", "query_schema", "query_rows",
               "columns": [...], "rows": [canonical lines]} | {..., "error": "..."}],
   "seconds": elapsed}
"""

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sparkenv  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = sparkenv.REPO
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
T1 = ["table1_part0.csv", "table1_part1.csv"]

# First release with each API (README of the oracle folder, "What differs between versions").
TEMPORAL_SINCE = "0.0.1-alpha-39"
BETA = "0.1.0-beta"  # range indexes, auto-bloom, file_size

# (index name, schema, format, read options, files, [(method, args)], minimum release, extra conf)
CASES = [
    ("regular", T1S, "csv", CSV_H, T1, [("addIndex", ["Id"]), ("addIndex", ["Version"])], None, {}),
    ("bloom", T1S, "csv", CSV_H, T1, [("addBloomIndex", ["Id", 0.01])], None, {}),
    ("range", T1S, "csv", CSV_H, T1, [("addRangeIndex", ["Value"]), ("addIndex", ["Id"])], BETA, {}),
    ("computed", T3S, "csv", CSV_H, ["table3_part0.csv", "table3_part1.csv"],
     [("addComputedIndex", ["category", "substring(Id, 1, 4)"])], None, {}),
    ("temporal", TEMPORAL, "csv", CSV_H, ["temporal_part0.csv", "temporal_part1.csv"],
     [("addTemporalIndex", ["Id", "UpdatedAt"])], TEMPORAL_SINCE, {}),
    ("exploded", ARRAYS, "json", MULTILINE, ["array_test.json"],
     [("addExplodedFieldIndex", ["users", "id", "user_id"]), ("addIndex", ["event_id"])], None, {}),
    # Large-index and auto-bloom paths: every table1 file has 3 distinct Ids (>= largeIndexLimit = 3),
    # part1 also 3 distinct Versions; so those cells go to large_indexes/<col> and, from 0.1.0-beta,
    # Id and Version become auto-bloom columns.
    ("large", T1S, "csv", CSV_H, T1, [("addIndex", ["Id"]), ("addIndex", ["Version"])], None,
     {"spark.ariadne.largeIndexLimit": "3"}),
    # largeIndexLimit = 1: every file's Id cell spills to large_indexes/Id (the oracle README reports
    # that alpha-37 then locates nothing). Built only where asked (--only large1): alpha-37 and the
    # reference release.
    ("large1", T1S, "csv", CSV_H, T1, [("addIndex", ["Id"])], None, {"spark.ariadne.largeIndexLimit": "1"}),
]

# (index, {column: [values]}) for locateFiles.
LOCATES = [
    ("regular", {"Id": [1]}), ("regular", {"Id": [4]}), ("regular", {"Id": [2, 4]}),
    ("regular", {"Id": [99]}), ("regular", {"Id": ["1"]}), ("regular", {"Version": [2]}),
    ("regular", {"Id": [1], "Version": [3]}), ("regular", {"Id": [2], "Version": [3]}),
    ("bloom", {"Id": [4]}), ("bloom", {"Id": [2]}), ("bloom", {"Id": [1, 4]}), ("bloom", {"Id": [99]}),
    ("range", {"Value": [9.0]}), ("range", {"Value": [3.5]}), ("range", {"Value": [4.0]}),
    ("range", {"Value": [100.0]}), ("range", {"Value": [4.0], "Id": [4]}),
    ("computed", {"category": ["cat1"]}), ("computed", {"category": ["cat3"]}),
    ("computed", {"category": ["cat2", "cat4"]}), ("computed", {"category": ["cat9"]}),
    ("temporal", {"Id": [1]}), ("temporal", {"Id": [3]}), ("temporal", {"Id": [5]}),
    ("temporal", {"Id": [2, 4]}), ("temporal", {"Id": [9]}),
    ("exploded", {"event_id": ["e2"]}), ("exploded", {"user_id": [100]}), ("exploded", {"user_id": [102]}),
    ("exploded", {"user_id": [999]}),
    ("large", {"Id": [4]}), ("large", {"Id": [2]}), ("large", {"Id": [1, 3]}), ("large", {"Id": [99]}),
    ("large", {"Version": [3]}), ("large", {"Id": [1], "Version": [3]}),
    ("large1", {"Id": [4]}), ("large1", {"Id": [2]}), ("large1", {"Id": [1, 3]}), ("large1", {"Id": [99]}),
]

# (index, join columns, join type, query schema DDL, query rows, index on the left).
# Index on the left is the library's index.join(df, ...); otherwise Index.DataFrameOps(df).join(index, ...).
JOINS = [
    ("regular", ["Id", "Version"], "inner", "Id int, Version int", [(1, 3), (4, 1), (9, 9)], True),
    ("regular", ["Id"], "inner", "Id int", [(4,)], False),
    ("regular", ["Id"], "left_outer", "Id int", [(3,), (7,)], False),
    ("bloom", ["Id"], "inner", "Id int", [(2,), (4,)], True),
    ("range", ["Value"], "inner", "Value double", [(9.0,), (4.0,)], True),
    ("computed", ["Id"], "inner", "Id string", [("cat3_1",)], True),
    # The join on the computed column itself (the case above joins on the unindexed source column).
    ("computed", ["category"], "inner", "category string", [("cat3",), ("cat9",)], True),
    ("temporal", ["Id"], "inner", "Id int", [(1,), (3,), (5,)], True),
    ("exploded", ["user_id"], "inner", "user_id int", [(101,)], True),
    ("large", ["Id"], "inner", "Id int", [(4,), (2,)], True),
    ("large1", ["Id"], "inner", "Id int", [(4,), (2,)], True),
]

# Cases built only when named by --only (a new case added for some releases, not regenerated for all).
ONLY_ON_REQUEST = {"large1"}


def version_key(v):
    """Sort key of a release version: 0.0.1-alpha-37 = 0.0.1-alpha37 < 0.0.1-alpha-44 < 0.1.0-beta < 0.1.10-beta."""
    base, _, tag = v.partition("-")
    nums = tuple(int(x) for x in base.split("."))
    digits = "".join(c for c in tag if c.isdigit())
    stage = 0 if tag.startswith("alpha") else 1
    return nums + (stage, int(digits) if digits and stage == 0 else 0)


def supports(release, since):
    return since is None or version_key(release) >= version_key(since)


def java_error(e):
    """One line naming the innermost JVM exception (Py4JJavaError's own text is only 'An error occurred')."""
    je = getattr(e, "java_exception", None)
    if je is not None:
        text = je.toString()
        cause = je.getCause()
        while cause is not None:
            text = cause.toString()
            cause = cause.getCause()
        return text.splitlines()[0][:300]
    return "%s: %s" % (type(e).__name__, (str(e).splitlines() or [""])[0][:300])


class Driver:
    """py4j access to dev.cjfravel.ariadne.Index in one Spark session (oracle README, "Using a jar")."""

    def __init__(self, spark):
        self.spark = spark
        self.jss = spark._jsparkSession
        self.jvm = spark.sparkContext._jvm
        self.gw = spark.sparkContext._gateway
        self.pu = self.jvm.org.apache.spark.api.python.PythonUtils
        # spark.jars are loaded by the context class loader, not py4j's: look the companion up there.
        loader = self.jvm.java.lang.Thread.currentThread().getContextClassLoader()
        cls = self.jvm.java.lang.Class.forName("dev.cjfravel.ariadne.Index$", True, loader)
        self.companion = cls.getField("MODULE$").get(None)

    def scala_map(self, d):
        m = self.jvm.java.util.HashMap()
        for k, v in d.items():
            m.put(k, v)
        return self.pu.toScalaMap(m)

    def seq(self, items):
        return self.pu.toSeq(list(items))

    def index(self, name, schema_json, fmt, options):
        st = self.jvm.org.apache.spark.sql.types.DataType.fromJson(schema_json)
        return self.companion.apply(name, st, fmt, False, self.scala_map(options), self.jss)

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

    def locate(self, idx, query):
        m = {k: self.objects(v) for k, v in query.items()}
        files = idx.locateFiles(self.scala_map(m)).mkString("\n")
        return sorted(f for f in files.split("\n") if f)

    def join(self, idx, df, on, how, index_on_left):
        if index_on_left:
            return idx.join(df._jdf, self.seq(on), how)
        return self.companion.DataFrameOps(df._jdf).join(idx, self.seq(on), how)


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for b in iter(lambda: f.read(1 << 20), b""):
            h.update(b)
    return h.hexdigest()


def data_files():
    out = []
    for c in CASES:
        for f in c[4]:
            if f not in out:
                out.append(f)
    return sorted(out)


def copy_data(dest):
    """Make dest hold exactly the data files of CASES, as in SRC_DATA. Files already equal are left
    alone, so releases built at the same time never see a file vanish."""
    import filecmp
    os.makedirs(dest, exist_ok=True)
    want = data_files()
    for f in os.listdir(dest):
        if f not in want:
            os.remove(os.path.join(dest, f))
    for f in want:
        src, dst = os.path.join(SRC_DATA, f), os.path.join(dest, f)
        if not (os.path.exists(dst) and filecmp.cmp(src, dst, shallow=False)):
            shutil.copy2(src, dst)


def build(release, out, only=None, reuse=False):
    """Build one release's fixture (in this process: it starts the release's SparkSession).

    only: build and query just these indexes and merge them into the committed fixture (their
    folders in root/ and their entries in answers.json replaced, everything else kept). reuse (with
    only): build nothing; open the committed root's indexes (the release reconnects to what it built)
    and record only their queries' answers."""
    import canonical
    import delta_check
    from pyspark.sql import DataFrame

    t0 = time.time()
    jar = sparkenv.oracle_jar(release)
    if not os.path.isdir(DATA_DIR):
        copy_data(DATA_DIR)
    # ARIADNE_FIXTURE_STORE: the stores' parent folder, so two runs for the same release never share one.
    store = os.path.join(os.environ.get("ARIADNE_FIXTURE_STORE", "/tmp/ariadne-interop-store"), release)
    shutil.rmtree(store, ignore_errors=True)
    dest = os.path.join(out, release)
    if reuse:
        shutil.copytree(os.path.join(dest, "root"), store)
    else:
        os.makedirs(store)
    os.environ.setdefault("ARIADNE_SPARK_MASTER", "local[1]")
    spark = sparkenv.session("ariadne-" + release, extra_jars=[jar],
                             conf={"spark.ariadne.storagePath": store,
                                   "spark.sql.execution.arrow.pyspark.enabled": "true",
                                   # Tiny data, short-lived JVM on a shared 2-core machine: C1 only and
                                   # the serial collector spend far less CPU than C2 and G1's threads.
                                   "spark.driver.extraJavaOptions": "-Duser.timezone=UTC "
                                   "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"})
    d = Driver(spark)
    answers = {"release": release, "jar": os.path.basename(jar), "jar_sha256": sha256(jar),
               "data_prefix": DATA_PREFIX, "built": [], "skipped": [], "markers": {}, "locate": [], "join": []}
    idxs = {}
    for name, schema, fmt, opts, files, calls, since, conf in CASES:
        if (only is not None and name not in only) or (only is None and name in ONLY_ON_REQUEST):
            continue
        if reuse:
            idxs[name] = d.index(name, schema, fmt, opts)
            answers["built"].append(name)
            continue
        if not supports(release, since):
            answers["skipped"].append({"index": name, "reason": "needs %s" % since})
            continue
        for k, v in conf.items():
            spark.conf.set(k, v)
        try:
            t = time.time()
            idx = d.index(name, schema, fmt, opts)
            for method, args in calls:
                getattr(idx, method)(*args)
            idx.addFile(d.seq([DATA_PREFIX + f for f in files]))
            idx.update()
            idxs[name] = idx
            answers["built"].append(name)
            print("ariadne %s: built %s in %.0f s" % (release, name, time.time() - t), file=sys.stderr, flush=True)
        except Exception as e:
            answers["skipped"].append({"index": name, "reason": java_error(e)})
        finally:
            for k in conf:
                spark.conf.unset(k)

    for name, query in LOCATES:
        if name not in idxs:
            continue
        rec = {"index": name, "query": query}
        try:
            rec["files"] = [f[len(DATA_PREFIX):] if f.startswith(DATA_PREFIX) else f
                            for f in d.locate(idxs[name], query)]
        except Exception as e:
            rec["error"] = java_error(e)
        answers["locate"].append(rec)

    for name, on, how, ddl, rows, left in JOINS:
        if name not in idxs:
            continue
        rec = {"index": name, "on": on, "type": how, "index_on_left": left, "query_schema": ddl,
               "query_rows": rows}
        try:
            q = spark.createDataFrame(rows, ddl)
            df = DataFrame(d.join(idxs[name], q, on, how, left), spark)
            rec["columns"] = df.columns
            rec["rows"] = canonical.render_table(delta_check.spark_to_arrow(df), df.columns)
        except Exception as e:
            rec["error"] = java_error(e)
        answers["join"].append(rec)

    ignore = shutil.ignore_patterns("_temp", "*.lock", ".*.crc", "*.crc")
    if only is None:
        shutil.rmtree(dest, ignore_errors=True)
        shutil.copytree(store, os.path.join(dest, "root"), ignore=ignore)
    elif not reuse:
        for name in answers["built"]:
            for sub in (os.path.join("indexes", name), os.path.join("filelists", "[ariadne_index] " + name)):
                shutil.rmtree(os.path.join(dest, "root", sub), ignore_errors=True)
                if os.path.isdir(os.path.join(store, sub)):
                    shutil.copytree(os.path.join(store, sub), os.path.join(dest, "root", sub), ignore=ignore)
    for name in answers["built"]:
        with open(os.path.join(store, "indexes", name, "metadata.json"), encoding="utf-8") as f:
            m = json.load(f)
        answers["markers"][name] = {"metadata_version": m.get("metadata_version"),
                                    "storage_format_version": m.get("storage_format_version")}
    answers["seconds"] = round(time.time() - t0)
    if only is not None:
        answers = merge_answers(os.path.join(dest, "answers.json"), answers, only, reuse)
    with open(os.path.join(dest, "answers.json"), "w", encoding="utf-8") as f:
        json.dump(answers, f, ensure_ascii=False, indent=1)
        f.write("\n")
    return answers


def merge_answers(path, new, only, reuse):
    """The committed answers with the entries of the indexes in only replaced by new's."""
    with open(path, encoding="utf-8") as f:
        old = json.load(f)
    if new["jar_sha256"] != old["jar_sha256"]:
        raise SystemExit("%s: recorded with another jar (%s)" % (path, old["jar_sha256"]))
    if not reuse:
        old["built"] = [n for n in old["built"] if n not in only] + new["built"]
        old["skipped"] = [x for x in old["skipped"] if x["index"] not in only] + new["skipped"]
        for n in only:
            old["markers"].pop(n, None)
        old["markers"].update(new["markers"])
    for k in ("locate", "join"):
        old[k] = [x for x in old[k] if x["index"] not in only] + new[k]
    old.setdefault("partial_runs", []).append({"indexes": sorted(only), "reuse": reuse,
                                               "seconds": new["seconds"]})
    return old


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("release", nargs="*")
    ap.add_argument("--out", default=os.path.join(ROOT, "interop", "fixtures"))
    ap.add_argument("--jobs", type=int, default=1, help="releases built at once (one JVM each)")
    ap.add_argument("--only", help="comma-separated index names: build (or with --reuse, only query) these "
                    "and merge them into the committed fixture")
    ap.add_argument("--reuse", action="store_true", help="with --only: open the committed root, build nothing")
    ap.add_argument("--in-process", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    out = os.path.abspath(args.out)
    releases = args.release or sparkenv.releases()
    only = set(args.only.split(",")) if args.only else None
    if args.reuse and only is None:
        ap.error("--reuse needs --only")
    if args.in_process:
        a = build(releases[0], out, only, args.reuse)
        print("ariadne %s: built %s, skipped %s, %d locate and %d join answers in %d s" % (
            a["release"], a["built"], [s["index"] for s in a["skipped"]], len(a["locate"]), len(a["join"]),
            a["seconds"]), flush=True)
        # The alpha jars leave non-daemon threads behind; do not wait for the JVM to wind down.
        os._exit(0)
    for r in releases:
        sparkenv.oracle_jar(r)  # fail before any Spark start when a jar is missing
    copy_data(os.path.join(out, "data"))
    copy_data(DATA_DIR)
    failed = []
    running = []
    todo = list(releases)
    while todo or running:
        while todo and len(running) < max(1, args.jobs):
            r = todo.pop(0)
            cmd = [sys.executable, os.path.abspath(__file__), "--in-process", "--out", out]
            if only is not None:
                cmd += ["--only", ",".join(sorted(only))] + (["--reuse"] if args.reuse else [])
            running.append((r, subprocess.Popen(cmd + [r])))
        time.sleep(1)
        for r, p in list(running):
            if p.poll() is not None:
                running.remove((r, p))
                if p.returncode != 0:
                    failed.append(r)
    if failed:
        print("ariadne_fixtures: failed: %s" % " ".join(failed), file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
