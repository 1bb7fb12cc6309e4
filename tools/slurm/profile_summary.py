#!/usr/bin/python3
"""tools/slurm/profile_summary.py DIR: what a profiling run (tools/slurm/profile.sh) left in DIR.

For every timeline (trace-*.json): its threads, spans and events by kind,
and dropped events; for profile.json: the perf_event counts per timed run of
each strata record. Exit 1 when a file is missing or unreadable.
"""
import glob
import json
import os
import sys

if len(sys.argv) != 2:
    print(__doc__, file=sys.stderr)
    sys.exit(2)
dir_ = sys.argv[1]
traces = sorted(glob.glob(os.path.join(dir_, "trace-*.json")))
if not traces:
    sys.exit("profile_summary: no trace-*.json in %s" % dir_)
for path in traces:
    try:
        doc = json.load(open(path))
    except (OSError, ValueError) as e:
        sys.exit("profile_summary: %s: %s" % (path, e))
    kinds, threads = {}, set()
    for e in doc["traceEvents"]:
        if e["ph"] == "M":
            continue
        threads.add(e["tid"])
        kinds[e["name"]] = kinds.get(e["name"], 0) + 1
    print("trace %s: %d threads, %s; %d dropped" % (os.path.basename(path), len(threads),
          ", ".join("%s %d" % kv for kv in sorted(kinds.items())), doc["otherData"]["dropped_events"]))
profile = os.path.join(dir_, "profile.json")
try:
    records = json.load(open(profile))
except (OSError, ValueError) as e:
    sys.exit("profile_summary: %s: %s" % (profile, e))
for r in records:
    counters = ", ".join("%s %.0f" % (k[5:], v) for k, v in r.get("counters_per_run", {}).items())
    print("bench %s [%s] %s@%d: median %.3f ms, %s; per run: %s" % (r["bench"], r["params"], r["runtime"],
          r["threads"], r["median_s"] * 1e3, r["check"], counters or "no counters"))
