#!/usr/bin/env bash
# tests/runtime/core/likwid_perfctr.sh PROFILE_TEST
#
# Runs the profiling test under likwid-perfctr -m, where likwid can measure:
# its report must name the test's regions. Where it cannot (no hardware PMU
# or MSR access: a VM), it says so and the test is skipped (exit 77), loudly.
set -uo pipefail
bin=${1:?usage: likwid_perfctr.sh PROFILE_TEST}
command -v likwid-perfctr >/dev/null || { echo "likwid_perfctr.sh: SKIP: no likwid-perfctr (apt-get install likwid)"; exit 77; }
out=$(timeout 120 likwid-perfctr -m -g CLOCK -C 0 "$bin" 2>&1)
rc=$?
echo "$out" | tail -n 30
if grep -qE "Unsupported Processor|Cannot get access to MSRs|perfmon.*not supported|No such file or directory.*msr" <<<"$out"; then
  why=$(grep -m1 -E "Unsupported Processor|Cannot get access to MSRs" <<<"$out")
  echo "likwid_perfctr.sh: SKIP: likwid-perfctr cannot measure on this machine: $why"
  exit 77
fi
[[ $rc -eq 0 ]] || { echo "likwid_perfctr.sh: FAIL: likwid-perfctr exited $rc"; exit 1; }
grep -q "Region test.inner" <<<"$out" || { echo "likwid_perfctr.sh: FAIL: no report of region test.inner"; exit 1; }
echo "likwid_perfctr.sh: PASS"
