#!/usr/bin/env python3
"""Read an index store root (spec §4.1) the way the Spark side sees it.

Usage: index_check.py ROOT

Prints one JSON object on stdout:

  {"root": ROOT,
   "metadata": {"<index name>": {"keys": [top-level keys in file order],
                                 "value": <the parsed object>, "error": null | "..."}},
   "tables":   {"<path relative to ROOT>": {"deltars": {...}, "spark": {...}}}}

"metadata" parses every indexes/<name>/metadata.json with Python's json module (keys kept in file
order, so a caller can check the Gson field order of spec §4.6). "tables" reads every Delta table
of the root (filelists/<name>/, indexes/<name>/index/, indexes/<name>/large_indexes/<col>/) with
delta-rs and with Spark + delta-spark, as delta_check.py does (canonical rows).
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import delta_check  # noqa: E402


def delta_tables(root):
    """Relative paths of the Delta tables under root (folders holding _delta_log), sorted."""
    found = []
    for dirpath, dirnames, _ in os.walk(root):
        if "_delta_log" in dirnames:
            found.append(os.path.relpath(dirpath, root))
            dirnames[:] = []  # a table's data folders hold no further tables
    return sorted(found)


def main():
    if len(sys.argv) != 2:
        sys.stderr.write(__doc__)
        sys.exit(2)
    root = os.path.abspath(sys.argv[1])
    out = {"root": root, "metadata": {}, "tables": {}}
    idx = os.path.join(root, "indexes")
    for name in sorted(os.listdir(idx)) if os.path.isdir(idx) else []:
        p = os.path.join(idx, name, "metadata.json")
        if not os.path.isfile(p):
            continue
        try:
            with open(p, encoding="utf-8") as f:
                text = f.read()
            keys = []  # the top-level object's keys in file order (the hook sees it last)
            json.loads(text, object_pairs_hook=lambda kv: keys.append([k for k, _ in kv]) or dict(kv))
            out["metadata"][name] = {"keys": keys[-1], "value": json.loads(text), "error": None}
        except Exception as e:  # a parse failure is the finding, not a crash
            out["metadata"][name] = {"keys": None, "value": None, "error": "%s: %s" % (type(e).__name__, e)}
    for rel in delta_tables(root):
        out["tables"][rel] = delta_check.check(os.path.join(root, rel), None, "both")
    sys.stdout.write(json.dumps(out, ensure_ascii=False, separators=(",", ":")) + "\n")
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
