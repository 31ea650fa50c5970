"""A small-footprint local Spark session with Delta Lake, for the interop scripts.

The JARs come from the interop cache (interop/install.sh); nothing is resolved at run time.
Settings: local[2] (ARIADNE_SPARK_MASTER overrides), spark.driver.memory 2g, one shuffle partition,
UI off, session time zone UTC.

The Spark Ariadne library's jars (the "oracles", one per release) are not in the cache: they are
read where they lie, by one convention shared by every script and Go test (docs/interop.md,
"Oracle jars"): the folder ARIADNE_ORACLES_DIR, default <repo>/../shared/oracles/ariadne, holds
<version>/<artifact>-<version>.jar for each release; oracles_dir() and oracle_jar(version) resolve
them. interop/install.sh verifies them against jars.json in that folder.
"""

import glob
import os

CACHE = os.environ.get("ARIADNE_INTEROP_CACHE", os.path.expanduser("~/.cache/ariadne-interop"))
REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


def oracles_dir():
    """The folder of the Spark Ariadne library's jars: ARIADNE_ORACLES_DIR, default
    <repo>/../shared/oracles/ariadne (absolute)."""
    d = os.environ.get("ARIADNE_ORACLES_DIR") or os.path.join(REPO, "..", "shared", "oracles", "ariadne")
    return os.path.abspath(d)


def oracle_jar(version):
    """The jar of one release of the Spark Ariadne library: the single *.jar in
    oracles_dir()/<version>/. FileNotFoundError when the folder holds none (or several)."""
    found = sorted(glob.glob(os.path.join(oracles_dir(), version, "*.jar")))
    if len(found) != 1:
        raise FileNotFoundError("oracle jar of Ariadne %s: want exactly one %s/%s/*.jar, found %d "
                                "(set ARIADNE_ORACLES_DIR; see docs/interop.md)"
                                % (version, oracles_dir(), version, len(found)))
    return found[0]


def releases():
    """The releases of interop/releases.txt, in file order (oldest first)."""
    out = []
    with open(os.path.join(REPO, "interop", "releases.txt"), encoding="utf-8") as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if line:
                out.append(line)
    return out


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
         .master(os.environ.get("ARIADNE_SPARK_MASTER", "local[2]"))
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
