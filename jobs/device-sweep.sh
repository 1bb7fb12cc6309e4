#!/usr/bin/env bash
# The thread sweep for a larger node that has no network and none of our
# Debian packages (the 16-core machine some sessions are lent): strata-bench
# with its peers at 1..N threads. Each (benchmark, thread count) is its own
# invocation with its own time limit and JSON file, so a peer that does not
# finish (libgomp's nqueens at 16 threads) costs only that step, and a
# total budget keeps the whole sweep inside a short lease. Two steps:
#
#   jobs/device-sweep.sh pack          on this machine, after ./run.sh built the
#                                      release preset: copies strata-bench, its
#                                      libomp helper, strata-info and the shared
#                                      libraries they need (not glibc's) into
#                                      build/device/ (about 9 MB; carry that path)
#   jobs/device-sweep.sh run OUT       on the node: machine report and the sweep,
#                                      OUT/<bench>-t<threads>.{json,txt,err}
#
# run reads from the environment: THREADS (default 1,2,4,8,16; counts above
# the usable CPUs are skipped by strata-bench), REPS (default 3), BENCHES
# (default below, the issues' targets first), STEP_TIMEOUT (seconds per
# step, default 45) and BUDGET (seconds for the whole sweep, default 480:
# no step starts after it; the skipped ones are listed). Serial runs in the
# 1-thread steps only. Exit status: 0 when every step finished with every
# check ok, 1 otherwise (the files and the summary say which), 2 on bad use.
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
pack_dir="$root/build/device"
default_benches="fib uts-t1 nqueens skynet forkjoin bank cholesky pingpong counting threadring uts-t3 reduce"

die() {
  echo "device-sweep: $*" >&2
  exit 2
}

pack() {
  local release="$root/build/release"
  local bins=("$release/bench/strata-bench" "$release/bench/strata-bench-omp-llvm" "$release/tools/strata-info")
  for b in "${bins[@]}"; do
    [[ -x $b ]] || die "$b is missing: run ./run.sh (or build the release preset) first"
  done
  rm -rf "$pack_dir"
  mkdir -p "$pack_dir/bin" "$pack_dir/lib" || die "cannot create $pack_dir"
  cp "${bins[@]}" "$pack_dir/bin/" || die "cannot copy the programs into $pack_dir/bin"
  # Every library ldd resolves, except glibc's own (libc, libm, libpthread,
  # libdl, librt, the loader): those must match the node's loader.
  local libs
  libs=$(ldd "${bins[@]}" | awk '$2 == "=>" && $3 ~ /^\// {print $3}' | sort -u |
    grep -Ev '/(libc|libm|libpthread|libdl|librt|ld-linux[^/]*)\.so') || die "ldd found no libraries to pack"
  for lib in $libs; do
    cp -L "$lib" "$pack_dir/lib/" || die "cannot copy $lib"
  done
  echo "device-sweep: packed $(ls "$pack_dir/bin" | wc -l) programs and $(ls "$pack_dir/lib" | wc -l) libraries" \
    "($(du -sh "$pack_dir" | cut -f1)) into build/device/"
}

run() {
  local out=${1:-}
  [[ -n $out ]] || die "usage: jobs/device-sweep.sh run OUT"
  [[ -x $pack_dir/bin/strata-bench ]] || die "build/device/ is missing: run 'jobs/device-sweep.sh pack' here first and carry build/device"
  local threads=${THREADS:-1,2,4,8,16}
  local reps=${REPS:-3}
  local step_timeout=${STEP_TIMEOUT:-45}
  local budget=${BUDGET:-480}
  local benches=${BENCHES:-$default_benches}
  [[ $threads =~ ^[1-9][0-9]*(,[1-9][0-9]*)*$ ]] || die "THREADS=$threads: accepted a comma list of positive counts (1,2,4)"
  [[ $reps =~ ^[1-9][0-9]*$ ]] || die "REPS=$reps: accepted a positive integer"
  [[ $step_timeout =~ ^[1-9][0-9]*$ ]] || die "STEP_TIMEOUT=$step_timeout: accepted a positive number of seconds"
  [[ $budget =~ ^[1-9][0-9]*$ ]] || die "BUDGET=$budget: accepted a positive number of seconds"
  mkdir -p "$out" || die "cannot create $out"
  export LD_LIBRARY_PATH="$pack_dir/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  # Set here, so strata-bench does not re-execute itself to set them.
  export OMP_PROC_BIND=close OMP_PLACES=cores

  local status=0
  {
    echo "== $(date -u +%FT%TZ) $(uname -srm)"
    lscpu 2>/dev/null | head -20
    "$pack_dir/bin/strata-info" || status=1
  } > "$out/machine.txt" 2>&1
  local skipped=()
  for b in $benches; do
    for t in ${threads//,/ }; do
      if (( SECONDS >= budget )); then
        skipped+=("$b-t$t")
        continue
      fi
      local runtimes=strata,tbb,omp,omp-llvm,caf
      [[ $t -eq 1 ]] && runtimes=serial,$runtimes
      local step="$b-t$t" start=$SECONDS
      timeout "$step_timeout" "$pack_dir/bin/strata-bench" --filter "^$b\$" --threads "$t" --reps "$reps" \
        --runtimes "$runtimes" --json "$out/$step.json" > "$out/$step.txt" 2> "$out/$step.err"
      local rc=$?
      [[ $rc -eq 0 ]] || status=1
      case $rc in
        0) echo "device-sweep: $step ok ($((SECONDS - start)) s)" ;;
        124) echo "device-sweep: $step stopped after ${step_timeout} s (progress lines in $step.err)" ;;
        *) echo "device-sweep: $step exit status $rc (see $step.err)" ;;
      esac
    done
  done
  if (( ${#skipped[@]} > 0 )); then
    echo "device-sweep: budget of ${budget} s spent; not run: ${skipped[*]}"
    status=1
  fi
  return $status
}

case ${1:-} in
  pack) pack ;;
  run) run "${2:-}" ;;
  *) die "usage: jobs/device-sweep.sh pack | run OUT" ;;
esac
