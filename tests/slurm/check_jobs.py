"""check_jobs.py KIND ARG FILE: what the bench-node, scaling and profile jobs
left behind, read from their output FILE (which names the job's directory).

  bench-node CPUS   results.json with every check ok, at most CPUS threads
                    and CPUS among them; the three plots; index.html
  scaling CPUS      one step per count of cores up to CPUS, each with as many
                    workers; the merged table and plots
  profile TASKS     traces with task spans (and, with TASKS >= 2, MPI sends and
                    receives on every rank); perf counts per timed run; likwid
                    either measured or said why not
"""
import glob
import json
import os
import re
import sys


def fail(msg):
    sys.exit("check_jobs: FAIL: " + msg)


kind, arg, path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
text = open(path).read()
m = re.search(r"results in (\S+)", text)
if not m:
    fail("the output names no results directory")
d = m.group(1)


def records(name):
    rs = json.load(open(os.path.join(d, name)))
    if not rs:
        fail(name + " holds no record")
    bad = [r for r in rs if r["check"] != "ok"]
    if bad:
        fail("%s: failed checks: %s" % (name, bad[:2]))
    return rs


def pictures():
    for png in ("time.png", "speedup.png", "index.html"):
        if not os.path.getsize(os.path.join(d, png)):
            fail(png + " is empty")


if kind == "bench-node":
    rs = records("results.json")
    threads = {r["threads"] for r in rs}
    if max(threads) != arg:
        fail("threads %s, wanted up to the %d CPUs of the allocation" % (sorted(threads), arg))
    pictures()
    print("check_jobs: PASS: bench-node: %d records at threads %s, plots in %s" % (len(rs), sorted(threads), d))
elif kind == "scaling":
    steps = [(int(c), int(w)) for c, w in re.findall(r"--cpus-per-task=(\d+): strata-info reports (\d+) workers", text)]
    want = sorted({min(2 ** k, arg) for k in range(arg.bit_length() + 1)})
    if [c for c, _ in steps] != want or any(c != w for c, w in steps):
        fail("steps %s, wanted cores per task %s with as many workers" % (steps, want))
    rs = records("results.json")
    strata = {r["threads"] for r in rs if r["runtime"] == "strata"}
    if strata != set(want):
        fail("strata records at threads %s, wanted %s" % (sorted(strata), want))
    if "merge_records:" not in text:
        fail("no merged table in the output")
    pictures()
    print("check_jobs: PASS: scaling: steps %s, %d records" % (steps, len(rs)))
elif kind == "profile":
    traces = glob.glob(os.path.join(d, "trace-bench-*.json"))
    if not traces:
        fail("no trace of strata-bench")
    spans = 0
    for t in traces:
        doc = json.load(open(t))
        spans += sum(1 for e in doc["traceEvents"] if e["ph"] == "X" and e["name"] == "task")
    if spans == 0:
        fail("the strata-bench traces hold no task span")
    for r in records("profile.json"):
        if "perf.context_switches" not in r.get("counters_per_run", {}):
            fail("record %s has no perf_event counts per run" % r["params"])
    if not re.search(r"^(Region bench\.|likwid: SKIP: .+)", text, re.M):
        fail("likwid neither measured nor said why not")
    if arg >= 2:
        mpi = glob.glob(os.path.join(d, "trace-mpi-*.json"))
        pids = set()
        for t in mpi:
            doc = json.load(open(t))
            names = {e["name"] for e in doc["traceEvents"]}
            if {"mpi send", "mpi recv"} <= names:
                pids.add(os.path.basename(t).split("-")[2])
        if len(pids) < arg:
            fail("MPI sends and receives traced on %d rank(s), wanted %d: %s" % (len(pids), arg, mpi))
    if "profile_summary" in text and "trace " not in text:
        fail("no summary")
    print("check_jobs: PASS: profile: %d task spans in %d traces%s" % (
        spans, len(traces), ", MPI traced on %d ranks" % arg if arg >= 2 else ""))
else:
    fail("unknown kind " + kind)
