#!/usr/bin/env python3
"""Drive one Spark Ariadne release as an oracle: one Spark session, many scenarios, JSON lines in and out.

Usage: ariadne_oracle_diff.py --jar JAR

The Go differential and both-directions tests (interop/go/oracle_*_test.go) start this once per test
binary and send one request per scenario on standard input, one JSON object a line:

  {"id": 7, "store": "/abs/store/root", "steps": [STEP, ...]}

and read one answer a line on standard output:

  {"id": 7, "seconds": 3.2, "results": [RESULT, ...]}      (one RESULT per STEP, in order)

The JVM's own stdout (the alpha jars println) goes to standard error, so standard output carries
only answers. A failing step gives {"error": "<JavaClass>: <first line>"} and the scenario goes on
(a test may expect an error). Steps ("index" names the index; each step opens it afresh with a bare
reconnect unless it was created in this scenario, so every step sees the persisted state):

  {"op": "conf", "set": {k: v}, "unset": [k]}            Spark confs (spark.ariadne.*)
  {"op": "create", "index": n, "schema": JSON, "format": f, "options": {..}}
  {"op": "call", "index": n, "method": "addIndex", "args": [..]}   any method: addIndex,
        addBloomIndex, addRangeIndex, addTemporalIndex, addComputedIndex, addExplodedFieldIndex,
        update, compact; numbers in args are passed as Double when written with a dot, Integer else
  {"op": "add_files", "index": n, "files": [uri, ..]}
  {"op": "delete_files", "index": n, "files": [uri, ..]}
  {"op": "vacuum", "index": n, "hours": 0}
  {"op": "locate", "index": n, "query": {col: [v, ..]}, "types": {col: "long"|"int"|"double"|"string"|...}}
        -> {"files": [sorted URIs]}
  {"op": "join", "index": n, "on": [..], "how": "inner", "keys_schema": JSON, "rows": [[..], ..],
   "index_left": true, "select": [..]}
        -> {"columns": [..], "schema": Spark schema JSON, "rows": [sorted canonical lines]}
  {"op": "bloom_bytes", "index": n, "column": c}  -> {"blooms": {filename: base64 of the stored bytes}}
        read with Spark from the index's main Delta table (column bloom_<c>)

stdin closing ends the process.
"""

import argparse
import base64
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import canonical  # noqa: E402
import sparkenv  # noqa: E402


class Oracle:
    def __init__(self, spark):
        self.spark = spark
        self.jvm = spark.sparkContext._jvm
        self.gw = spark.sparkContext._gateway
        self.PU = self.jvm.org.apache.spark.api.python.PythonUtils
        loader = self.jvm.java.lang.Thread.currentThread().getContextClassLoader()
        self.Index = self.jvm.java.lang.Class.forName("dev.cjfravel.ariadne.Index$", True, loader) \
            .getField("MODULE$").get(None)
        self.handles = {}

    def seq(self, items):
        return self.PU.toSeq(list(items))

    def smap(self, d):
        return self.PU.toScalaMap(d)

    def value(self, v, t=None):
        J = self.jvm.java.lang
        if v is None:
            return None
        if t in ("long", "bigint"):
            return J.Long.valueOf(int(v))
        if t in ("int", "integer"):
            return J.Integer.valueOf(int(v))
        if t in ("short", "smallint"):
            return J.Short.valueOf(int(v))
        if t in ("double",):
            return J.Double.valueOf(float(v))
        if t in ("float",):
            return J.Float.valueOf(float(v))
        if t in ("string",):
            return J.String(str(v))
        if t in ("boolean",):
            return J.Boolean.valueOf(bool(v))
        if t == "date":
            return self.jvm.java.sql.Date.valueOf(v)
        if t == "timestamp":
            return self.jvm.java.sql.Timestamp.valueOf(v)
        if isinstance(v, bool):
            return J.Boolean.valueOf(v)
        if isinstance(v, int):
            return J.Integer.valueOf(v)
        if isinstance(v, float):
            return J.Double.valueOf(v)
        return v

    # py4j turns every boxed Long, Short or Float that reaches Python into a Python number, which it sends
    # back as an Integer or Double: values of those types are therefore made in the JVM, by Spark SQL casts.
    JVM_TYPED = {"long": "BIGINT", "bigint": "BIGINT", "short": "SMALLINT", "smallint": "SMALLINT",
                 "float": "FLOAT"}

    def objects(self, values, t=None):
        """A Java Object[] of values, typed by t: one type name for all, or a list (one per value)."""
        types = [t[i] if isinstance(t, list) else t for i in range(len(values))]
        if any(x in self.JVM_TYPED for x in types):
            exprs = []
            for v, x in zip(values, types):
                if v is None:
                    exprs.append("NULL")
                elif x in self.JVM_TYPED:
                    exprs.append("CAST('%s' AS %s)" % (repr(v) if isinstance(v, float) else int(v), self.JVM_TYPED[x]))
                elif isinstance(v, str) or x in ("string",):
                    exprs.append("'%s'" % str(v).replace("'", "''"))
                elif x == "double" or isinstance(v, float):
                    exprs.append("CAST('%r' AS DOUBLE)" % float(v))
                else:
                    exprs.append("CAST(%d AS INT)" % int(v))
            row = self.spark._jsparkSession.sql("SELECT " + ", ".join(exprs)).head()
            return row.toSeq().toArray(self.jvm.scala.reflect.ClassTag.Any())
        arr = self.gw.new_array(self.jvm.java.lang.Object, len(values))
        for i, v in enumerate(values):
            arr[i] = self.value(v, types[i])
        return arr

    def handle(self, name):
        h = self.handles.get(name)
        if h is None:
            none = self.jvm.scala.Option.empty()
            h = self.Index.apply(name, none, none, False, none, self.spark._jsparkSession)
            self.handles[name] = h
        return h

    def step(self, s):
        op = s["op"]
        if op == "conf":
            for k, v in s.get("set", {}).items():
                self.spark.conf.set(k, str(v))
            for k in s.get("unset", []):
                self.spark.conf.unset(k)
            return {}
        if op == "create":
            st = self.jvm.org.apache.spark.sql.types.DataType.fromJson(s["schema"])
            opts = self.jvm.java.util.HashMap()
            for k, v in s.get("options", {}).items():
                opts.put(k, v)
            self.handles[s["index"]] = self.Index.apply(s["index"], st, s["format"], False,
                                                        self.smap(opts), self.spark._jsparkSession)
            return {}
        idx = self.handle(s["index"])
        if op == "call":
            args = []
            for a in s.get("args", []):
                args.append(a)
            r = getattr(idx, s["method"])(*args)
            return {"value": None if r is None else str(r)}
        if op == "add_files":
            idx.addFile(self.seq(s["files"]))
            return {}
        if op == "delete_files":
            idx.deleteFiles(self.seq(s["files"]))
            return {}
        if op == "vacuum":
            idx.vacuum(int(s.get("hours", 0)))
            return {}
        if op == "locate":
            types = s.get("types", {})
            m = self.jvm.java.util.HashMap()
            for k, v in s["query"].items():
                m.put(k, self.objects(v, types.get(k)))
            found = idx.locateFiles(self.smap(m)).mkString("\n")
            return {"files": sorted(f for f in found.split("\n") if f)}
        if op == "join":
            from pyspark.sql import DataFrame
            import delta_check
            # The keys DataFrame is made in the JVM (RowFactory rows + a StructType): a DataFrame from a
            # Python list would start Python workers, which is slow on a loaded machine.
            st_json = json.loads(s["keys_schema"])
            types = [f["type"] for f in st_json["fields"]]
            jrows = self.jvm.java.util.ArrayList()
            for r in s["rows"]:
                jrows.add(self.jvm.org.apache.spark.sql.RowFactory.create(self.objects(r, types)))
            jst = self.jvm.org.apache.spark.sql.types.DataType.fromJson(s["keys_schema"])
            q = DataFrame(self.spark._jsparkSession.createDataFrame(jrows, jst), self.spark)
            if s.get("select"):
                idx = idx.select(self.seq(s["select"]))
            if s.get("index_left", True):
                jdf = idx.join(q._jdf, self.seq(s["on"]), s["how"])
            else:
                jdf = self.Index.DataFrameOps(q._jdf).join(idx, self.seq(s["on"]), s["how"])
            df = DataFrame(jdf, self.spark)
            rows = canonical.render_table(delta_check.spark_to_arrow(df), df.columns)
            return {"columns": list(df.columns), "schema": df.schema.json(), "rows": sorted(rows)}
        if op == "bloom_bytes":
            path = os.path.join(self.spark.conf.get("spark.ariadne.storagePath"), "indexes", s["index"], "index")
            col = "bloom_" + s["column"]
            out = {}
            for r in self.spark.read.format("delta").load(path).select("filename", col).collect():
                if r[1] is not None:
                    out[r[0]] = base64.b64encode(bytes(r[1])).decode("ascii")
            return {"blooms": out}
        raise ValueError("unknown op %r" % op)

    def scenario(self, req):
        self.handles = {}
        self.spark.conf.set("spark.ariadne.storagePath", req["store"])
        results = []
        for s in req["steps"]:
            t0 = time.time()
            try:
                r = self.step(s)
                r["ms"] = int((time.time() - t0) * 1000)
                results.append(r)
            except Exception as e:  # py4j.protocol.Py4JJavaError, ValueError, ...
                msg = str(e)
                je = getattr(e, "java_exception", None)
                if je is not None:
                    msg = "%s: %s" % (je.getClass().getName(), (je.getMessage() or "").splitlines()[0][:400]
                                      if je.getMessage() else "")
                else:
                    msg = "%s: %s" % (type(e).__name__, msg.splitlines()[0][:400] if msg else "")
                results.append({"error": msg})
        return results


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jar", required=True)
    args = ap.parse_args()
    # Keep our stdout for answers: py4j and the JVM's println go to stderr.
    out = os.fdopen(os.dup(1), "w", buffering=1, encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    spark = sparkenv.session("ariadne-oracle-diff", extra_jars=[args.jar],
                             conf={"spark.sql.execution.arrow.pyspark.enabled": "true"})
    o = Oracle(spark)
    out.write(json.dumps({"ready": True}) + "\n")
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        req = json.loads(line)
        t0 = time.time()
        res = o.scenario(req)
        out.write(json.dumps({"id": req.get("id"), "seconds": round(time.time() - t0, 2), "results": res},
                             ensure_ascii=False) + "\n")
    out.close()
    os._exit(0)


if __name__ == "__main__":
    main()
