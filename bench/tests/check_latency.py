#!/usr/bin/env python3
"""strata_bench.latency: strata-bench --latency at one low rate, its records checked.

Usage: check_latency.py STRATA_BENCH OUT.json
Every server (asio-http where built, strata-http under each policy) in the
three scenarios (balanced, unbalanced, fan-out) answered every request with a 200, at the offered rate, and no
answer came before the 1 ms mock delay; the server costs were measured.
"""
import json
import subprocess
import sys

bench, out = sys.argv[1], sys.argv[2]
run = subprocess.run([bench, "--latency", "--rates", "500", "--duration-ms", "400", "--connections", "20",
                      "--json", out], capture_output=True, text=True, timeout=300)
print(run.stdout)
if run.returncode != 0:
    sys.exit(f"strata-bench --latency exited {run.returncode}:\n{run.stderr}")
records = json.load(open(out))
servers = {r["server"] for r in records}
policies = {"tiered_stealing", "pinned_mpsc", "hybrid"}
if not policies <= servers:
    sys.exit(f"missing servers: {policies - servers}")
scenarios = {"balanced", "unbalanced", "fan-out"}
if {r["scenario"] for r in records} != scenarios or len(records) != len(scenarios) * len(servers):
    sys.exit(f"{len(records)} records for {len(servers)} servers, expected the scenarios {sorted(scenarios)}")
for r in records:
    name = f'{r["scenario"]}/{r["server"]}'
    if not r["ok"]:
        sys.exit(f"{name}: {r.get('error')}")
    if abs(r["achieved_rate"] - 500) > 25 or r["unsent"] != 0:
        sys.exit(f"{name}: achieved {r['achieved_rate']} req/s of 500 offered, {r['unsent']} unsent")
    if r["p50_us"] < 1000 or not r["p50_us"] <= r["p99_us"] <= r["p99.9_us"]:
        sys.exit(f"{name}: percentiles out of order or under the 1 ms delay: {r}")
    if r["cpu_cores"] <= 0 or r["ctx_switches_per_s"] <= 0:
        sys.exit(f"{name}: server costs not measured: {r}")
print(f"check_latency: PASS: {len(records)} records, servers {sorted(servers)}")
