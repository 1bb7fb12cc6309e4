#!/bin/sh
# Fuzzes the MPI bridge's decoder with libFuzzer (clang): builds
# tests/mpi/fuzz/decoder_fuzz.cpp with -fsanitize=fuzzer,address,undefined,
# writes the seed corpus (make_seeds.cpp) and runs RUNS inputs (default
# 100000). Any crash or sanitizer report fails. Usage: tools/fuzz.sh [RUNS] [WORKDIR]
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
runs=${1:-100000}
work=${2:-$(mktemp -d)}
# A fresh corpus each run (the seeds only), so a run is reproducible; the
# crash-* inputs of a failing run stay in WORKDIR.
rm -rf "$work/corpus"
mkdir -p "$work/corpus"
cxx=${CLANGXX:-clang++}
command -v "$cxx" >/dev/null || { echo "fuzz.sh: $cxx not found (apt-get install clang)"; exit 1; }
inc="-I$root/mpi_bridge/include -I$root/mpi_bridge/src -I$root/runtime/actors/include"
"$cxx" -std=c++20 -O1 -g $inc -o "$work/make_seeds" "$root/tests/mpi/fuzz/make_seeds.cpp" "$root/mpi_bridge/src/wire.cpp"
"$work/make_seeds" "$work/corpus"
# Inputs that once crashed the decoder stay in the corpus.
cp "$root"/tests/mpi/fuzz/regressions/* "$work/corpus/"
"$cxx" -std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined $inc \
  -o "$work/decoder_fuzz" "$root/tests/mpi/fuzz/decoder_fuzz.cpp" "$root/mpi_bridge/src/wire.cpp"
cd "$work"
if ! ./decoder_fuzz -runs="$runs" -max_len=4096 -seed=1 corpus > fuzz.log 2>&1; then
  tail -40 fuzz.log
  echo "fuzz.sh: FAIL (crash inputs are in $work)"
  exit 1
fi
grep -E '^Done|cov:' fuzz.log | tail -2
echo "fuzz.sh: $runs inputs, no crash, no sanitizer report"
