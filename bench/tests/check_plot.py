#!/usr/bin/python3
"""strata-bench --plot, for real: check_plot.py STRATA_BENCH DIR

Runs a small suite (fib and skynet, serial, strata and the peers built in,
threads 1 and 2) with --plot DIR and STRATA_PERF_COUNTERS=1, then checks
what a user gets: results.json with every check ok and the strata records
carrying their perf_event counts per timed run, three PNG pictures, and an
index.html that shows them with the machine report and the table.
"""
import json
import os
import shutil
import subprocess
import sys


def fail(msg):
    print("check_plot: FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


bench, out = sys.argv[1], sys.argv[2]
shutil.rmtree(out, ignore_errors=True)
env = dict(os.environ, STRATA_PERF_COUNTERS="1")
subprocess.run([bench, "--filter", "^(fib|skynet)$", "--threads", "1,2", "--reps", "1", "--plot", out],
               env=env, check=True)
records = json.load(open(os.path.join(out, "results.json")))
if not records or any(r["check"] != "ok" for r in records):
    fail("a record is missing or failed its check")
strata = [r for r in records if r["runtime"] == "strata"]
if not strata:
    fail("no strata record")
for r in strata:
    counters = r.get("counters_per_run", {})
    if "perf.context_switches" not in counters:
        fail("strata record %s@%d has no perf.context_switches per run: %s" % (r["params"], r["threads"], counters))
    if any(v < 0 for v in counters.values()):
        fail("a negative count: %s" % counters)
print("check_plot: %d records; strata counters per run, e.g. %s" % (len(records), strata[0]["counters_per_run"]))
for png in ("time.png", "speedup.png", "vs-best-peer.png"):
    path = os.path.join(out, png)
    with open(path, "rb") as f:
        if f.read(8) != b"\x89PNG\r\n\x1a\n":
            fail(png + " is not a PNG")
    if os.path.getsize(path) < 5000:
        fail(png + " is too small to hold a plot")
page = open(os.path.join(out, "index.html")).read()
for needle in ("<img src='time.png'", "<img src='speedup.png'", "<img src='vs-best-peer.png'",
               "Machine and placement", "<td class='l'>fib</td>"):
    if needle not in page:
        fail("index.html lacks " + needle)
machine = open(os.path.join(out, "machine.txt")).read()
if len(machine) < 50 or machine.splitlines()[0] not in page:
    fail("machine.txt is empty or not in index.html")
print("check_plot: OK: %s" % ", ".join(sorted(os.listdir(out))))
