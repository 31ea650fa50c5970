"""A small-footprint local Spark session with Delta Lake, for the interop scripts.

The JARs come from the interop cache (interop/install.sh); nothing is resolved at run time.
Settings: local[2], spark.driver.memory 2g, one shuffle partition, UI off, session time zone UTC.
"""

import glob
import os

CACHE = os.environ.get("ARIADNE_INTEROP_CACHE", os.path.expanduser("~/.cache/ariadne-interop"))


def cache_jars(*names):
    """Paths of cached JARs whose file names start with one of names (e.g. 'delta-spark_2.12-')."""
    out = []
    for n in names:
        found = sorted(glob.glob(os.path.join(CACHE, "jars", n + "*.jar")))
        if not found:
            raise FileNotFoundError("JAR %s* not in %s/jars: run interop/install.sh" % (n, CACHE))
        out.append(found[-1])
    return out


def session(app="ariadne-interop", extra_jars=(), conf=None):
    """Start (or get) the local Spark session with Delta and the given extra JARs on spark.jars."""
    from pyspark.sql import SparkSession

    # Bind the driver to loopback only: the harness never talks to anything off this machine.
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    jars = cache_jars("delta-spark_2.12-", "delta-storage-") + list(extra_jars)
    b = (SparkSession.builder.appName(app)
         .master("local[2]")
         .config("spark.driver.memory", "2g")
         .config("spark.sql.shuffle.partitions", "1")
         .config("spark.default.parallelism", "2")
         .config("spark.driver.host", "127.0.0.1")
         .config("spark.driver.bindAddress", "127.0.0.1")
         .config("spark.ui.enabled", "false")
         .config("spark.ui.showConsoleProgress", "false")
         .config("spark.sql.session.timeZone", "UTC")
         .config("spark.driver.extraJavaOptions", "-Duser.timezone=UTC")
         .config("spark.jars", ",".join(jars))
         .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
         .config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog")
         .config("spark.databricks.delta.snapshotPartitions", "1")
         .config("spark.sql.warehouse.dir", os.path.join(CACHE, "spark-warehouse")))
    for k, v in (conf or {}).items():
        b = b.config(k, v)
    spark = b.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark
