#!/usr/bin/env bash
# tools/setup.sh: shared by ./run.sh and ./test.sh. Installs the Debian
# packages strata needs that are missing (apt-get, needs root), then
# configures (once) and builds (incrementally) one CMake preset.
#
#   tools/setup.sh PRESET [test]     "test" adds the packages only tests need
set -euo pipefail

preset=${1:?usage: tools/setup.sh PRESET [test]}
purpose=${2:-run}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# Build and library dependencies (nlohmann-json for JSON output, CLI11 for
# strata-bench's command line), benchmark peers (oneTBB; OpenMP: libgomp from
# g++, LLVM libomp through clang; the C++ Actor Framework for the actor
# benchmarks), likwid for the optional Marker API, and matplotlib for
# strata-bench --plot.
packages=(g++ cmake ninja-build pkg-config libhwloc-dev hwloc libnuma-dev numactl
          nlohmann-json3-dev libcli11-dev
          libopenmpi-dev openmpi-bin libboost-dev libgtest-dev libtbb-dev likwid clang libomp-dev
          libcaf-dev python3-matplotlib)
# The NUMA VM test boots a Debian cloud kernel under QEMU; the bridge's
# termination protocol is model-checked with spin (Promela); the slurm tests
# run a local cluster (tools/slurm/cluster.sh) of Debian's SLURM and munge;
# a timeline is opened in Chromium's trace engine (python3-websocket drives it);
# strata-http is driven by wrk; tools/static_analysis.sh runs clang-tidy and cppcheck.
if [[ $purpose == test ]]; then
  packages+=(qemu-system-x86 busybox-static cpio spin slurm-wlm munge chromium python3-websocket wrk
             clang-tidy cppcheck)
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if ((${#missing[@]})); then
  if [[ $(id -u) -ne 0 ]]; then
    echo "strata: missing Debian packages: ${missing[*]}" >&2
    echo "strata: installing them needs root: sudo apt-get install ${missing[*]}" >&2
    exit 1
  fi
  echo "strata: installing missing Debian packages: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

cd "$root"
build="build/$preset"
if [[ ! -f $build/CMakeCache.txt ]]; then
  cmake --preset "$preset" >/dev/null
fi
# STRATA_BUILD_LABELS (set by ./test.sh -L LABELS, e.g. "unit|fault"): build
# only what those labels' tests need (the strata-tests-<label> targets,
# tests/CMakeLists.txt); otherwise, or when a label has no such target (its
# tests are scripts with needs of their own), everything.
targets=()
if [[ -n ${STRATA_BUILD_LABELS:-} ]]; then
  IFS='|' read -ra labels <<< "$STRATA_BUILD_LABELS"
  for label in "${labels[@]}"; do
    if [[ ! $label =~ ^[a-z]+$ ]]; then
      echo "strata: STRATA_BUILD_LABELS=$STRATA_BUILD_LABELS: '$label' is not a label (accepted: labels joined by |," \
           "as in unit|fault)" >&2
      exit 2
    fi
    if ! ninja -C "$build" -t query "strata-tests-$label" >/dev/null 2>&1; then
      targets=()
      break
    fi
    targets+=("strata-tests-$label")
  done
fi
if ((${#targets[@]})); then
  cmake --build --preset "$preset" --target "${targets[@]}"
else
  cmake --build --preset "$preset"
fi
