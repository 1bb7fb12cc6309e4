#!/bin/sh
# Fuzzes one of strata's parsers with libFuzzer (clang, -fsanitize=fuzzer,
# address,undefined). Usage: tools/fuzz/run.sh TARGET SECONDS [WORKDIR]
#   env         config::from_env(): every STRATA_* variable (tests/fuzz/env_fuzz.cpp)
#   place_list  place lists, parsed and placed (tests/fuzz/place_list_fuzz.cpp)
#   topology    synthetic descriptions and lstopo XML (tests/fuzz/topology_fuzz.cpp)
#   bench_cli   strata-bench's command line (tests/fuzz/bench_cli_fuzz.cpp)
# The target is built from the sources it exercises, the committed seeds
# (tests/fuzz/seeds/TARGET) and every input that once failed
# (tests/fuzz/regressions/TARGET) form a fresh corpus, and libFuzzer runs for
# SECONDS. A crash, a sanitizer report or a hang (over 10 s on one input)
# fails, and the input stays in WORKDIR: commit it to regressions/TARGET.
# STRATA_CONFIG_INCLUDE: the directory holding the build's generated
# strata/config.hpp (default: build/dev's).
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
target=${1:?usage: run.sh TARGET SECONDS [WORKDIR]}
seconds=${2:?usage: run.sh TARGET SECONDS [WORKDIR]}
work=${3:-$(mktemp -d)}
cxx=${CLANGXX:-clang++}
command -v "$cxx" >/dev/null || { echo "fuzz: $cxx not found (apt-get install clang)"; exit 1; }
generated=${STRATA_CONFIG_INCLUDE:-$root/build/dev/generated/include}
if [ ! -f "$generated/strata/config.hpp" ]; then
  echo "fuzz: no $generated/strata/config.hpp (build first, or set STRATA_CONFIG_INCLUDE)"
  exit 1
fi
topo="$root/topology/src/config.cpp $root/topology/src/fault.cpp $root/topology/src/place_list.cpp
      $root/topology/src/placement.cpp $root/topology/src/placement_report.cpp $root/topology/src/topology.cpp
      $root/topology/src/topology_report.cpp"
inc="-I$root/topology/include -I$root/topology/src -I$root/runtime/core/include -I$generated"
libs="-lhwloc"
max_len=1024
case $target in
  env) sources="$topo $root/runtime/core/src/config.cpp" ;;
  place_list) sources=$topo ;;
  topology) sources=$topo max_len=32768 ;;  # room for the committed lstopo exports
  bench_cli)
    sources="$root/bench/harness/cli.cpp $root/bench/harness/json_output.cpp $root/bench/harness/measure.cpp
             $root/bench/harness/report.cpp $root/bench/harness/runtimes.cpp $root/bench/common/usable_cpus.cpp"
    inc="-I$root/bench -I$generated" libs="" ;;
  *) echo "fuzz: unknown target '$target'; accepted: env, place_list, topology, bench_cli"; exit 2 ;;
esac
mkdir -p "$work"
rm -rf "$work/corpus"
mkdir -p "$work/corpus"
cp "$root/tests/fuzz/seeds/$target"/* "$work/corpus/"
if [ -d "$root/tests/fuzz/regressions/$target" ]; then cp "$root/tests/fuzz/regressions/$target"/* "$work/corpus/"; fi
# shellcheck disable=SC2086
# Objects are shared between the targets (three compile topology/src) and
# kept between runs, in OBJECTS (default: beside WORKDIR), named by a digest
# of the flags and the preprocessed source, so a stale one is never linked.
# A per-object lock keeps targets fuzzed side by side (ctest -j) from
# compiling the same file twice: a first pass compiles what nobody else is
# compiling, a second waits for the rest.
objdir=${STRATA_FUZZ_OBJECTS:-$(dirname "$work")/objects}
mkdir -p "$objdir"
# Line tables (-g1) are all a crash report needs; full -g costs a third more compile time.
flags="-std=c++20 -O1 -g1 -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined"
all="$root/tests/fuzz/${target}_fuzz.cpp $sources"
objects=""
for src in $all; do
  key=$({ echo "$cxx $flags $inc"; "$cxx" $flags $inc -E "$src"; } | sha1sum | cut -c1-16)
  objects="$objects $objdir/$(basename "$src" .cpp)-$key.o"
done
compile_all() {  # $1: -n (skip what is locked) or nothing (wait for it)
  set -- "$1" $objects
  wait_flag=$1
  shift
  for src in $all; do
    obj=$1
    shift
    [ -f "$obj" ] && continue
    (
      flock $wait_flag 9 || exit 0
      [ -f "$obj" ] || { "$cxx" $flags $inc -c "$src" -o "$obj.tmp.$$" && mv "$obj.tmp.$$" "$obj"; }
    ) 9>"$obj.lock"
  done
}
compile_all -n
compile_all ""
for obj in $objects; do [ -f "$obj" ] || { echo "fuzz: $target: $obj was not built"; exit 1; }; done
"$cxx" -fsanitize=fuzzer,address,undefined -o "$work/$target" $objects $libs -lpthread
cd "$work"
if ! ASAN_OPTIONS=detect_leaks=1 "./$target" -max_total_time="$seconds" -timeout=10 -max_len="$max_len" -seed=1 \
     corpus > fuzz.log 2>&1; then
  tail -40 fuzz.log
  echo "fuzz: $target: FAIL (the failing input is in $work: commit it to tests/fuzz/regressions/$target)"
  exit 1
fi
runs=$(sed -n 's/^Done \([0-9]*\) runs.*/\1/p' fuzz.log)
echo "fuzz: $target: ${runs:-?} inputs in $seconds s, no crash, no sanitizer report, no hang"
