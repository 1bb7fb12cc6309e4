#!/usr/bin/python3
"""tools/merge_records.py OUT.json IN.json...: strata-bench records of several
runs (the steps of a scaling job) as one list, then the scaling table.

A record that repeats (bench, params, runtime, threads), such as the serial
run every step makes, is kept once: the first. The table has one row per
(bench, params, runtime) and one column per thread count: the median in ms
and, where a serial record exists, the speedup over it.
"""
import json
import sys

if len(sys.argv) < 3:
    print(__doc__, file=sys.stderr)
    sys.exit(2)
merged, seen = [], set()
for path in sys.argv[2:]:
    try:
        records = json.load(open(path))
    except (OSError, ValueError) as e:
        sys.exit("merge_records: cannot read %s: %s" % (path, e))
    for r in records:
        key = (r["bench"], r["params"], r["runtime"], r["threads"])
        if key not in seen:
            seen.add(key)
            merged.append(r)
with open(sys.argv[1], "w") as f:
    json.dump(merged, f, indent=1)
threads = sorted({r["threads"] for r in merged})
serial = {(r["bench"], r["params"]): r["median_s"] for r in merged if r["runtime"] == "serial" and r["check"] == "ok"}
rows = {}
for r in merged:
    if r["runtime"] != "serial":
        rows.setdefault((r["bench"], r["params"], r["runtime"]), {})[r["threads"]] = r
print("%-10s %-28s %-8s %s" % ("bench", "params", "runtime", "  ".join("%16s" % ("%d threads" % t) for t in threads)))
for (bench, params, runtime), by_t in rows.items():
    base = next((v for (b, p), v in serial.items() if b == bench and (params == p or params.startswith(p + " "))), None)
    cells = []
    for t in threads:
        r = by_t.get(t)
        if r is None:
            cells.append("%16s" % "-")
        elif r["check"] != "ok":
            cells.append("%16s" % "FAIL")
        else:
            speed = " (%.2fx)" % (base / r["median_s"]) if base else ""
            cells.append("%16s" % ("%.2f ms%s" % (r["median_s"] * 1e3, speed)))
    print("%-10s %-28s %-8s %s" % (bench, params[:28], runtime, "  ".join(cells)))
print("merge_records: %d records from %d runs into %s" % (len(merged), len(sys.argv) - 2, sys.argv[1]))
