#!/usr/bin/env bash
# Every test: installs what is missing (Debian packages, as root), builds a
# preset incrementally (default: dev) and runs ctest on it.
#   ./test.sh                        all tests on the dev build
#   ./test.sh --preset asan -L unit  the unit label under ASan+UBSan
# Further arguments go to ctest. With -L on a sanitizer preset (a plain
# label or labels joined by |), only what those tests need is built.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
preset=dev
if [[ ${1:-} == --preset ]]; then
  preset=${2:?--preset needs a name: dev, release, asan, tsan}
  shift 2
fi
# -L LABELS on asan or tsan: build only those labels' tests (tools/setup.sh).
args=("$@")
for ((i = 0; i + 1 < ${#args[@]}; ++i)); do
  if [[ ${args[i]} == -L && $preset =~ ^(asan|tsan)$ && ${args[i + 1]} =~ ^[a-z|]+$ ]]; then
    export STRATA_BUILD_LABELS=${args[i + 1]}
  fi
done
t0=$(date +%s)
"$root/tools/setup.sh" "$preset" test
echo "strata: packages and $preset build took $(($(date +%s) - t0)) s"
cd "$root/build/$preset"
ctest --output-on-failure -j2 "$@"
