#!/usr/bin/env bash
# Static analysis of the library (issue 23): clang-tidy with the checks in
# .clang-tidy and cppcheck (warning, performance, portability) over every
# translation unit of runtime/, topology/, numa_alloc/, mpi_bridge/ and
# tools/ in the dev build's compile_commands.json. Any finding fails; the
# only accepted ones are in tools/cppcheck.suppress, each with its reason.
# Usage: tools/static_analysis.sh   (installs what is missing, builds dev first)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$root/tools/setup.sh" dev test
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 - "$root" "$work" <<'PY'
import json, os, re, sys
root, work = sys.argv[1], sys.argv[2]
db = json.load(open(os.path.join(root, "build/dev/compile_commands.json")))
lib = re.compile(re.escape(root) + r"/(runtime|topology|numa_alloc|mpi_bridge|tools)/")
keep = [e for e in db if lib.match(os.path.normpath(os.path.join(e["directory"], e["file"])))]
json.dump(keep, open(os.path.join(work, "compile_commands.json"), "w"))
print(f"static analysis: {len(keep)} translation units of the library")
PY
units=$(python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))))" "$work/compile_commands.json")
jobs=$(nproc)

status=0
if ! run-clang-tidy -p "$work" -quiet -j "$jobs" > "$work/tidy.log" 2>&1; then status=1; fi
tidy=$(grep -cE '(warning|error): ' "$work/tidy.log" || true)
if ((tidy != 0 || status != 0)); then
  grep -E -A3 '(warning|error): ' "$work/tidy.log" | sed 's/\x1b\[[0-9;]*m//g' | head -200
  echo "static analysis: clang-tidy: $tidy finding(s) in $units units"
  status=1
else
  echo "static analysis: clang-tidy: 0 findings in $units units"
fi

if ! cppcheck --project="$work/compile_commands.json" --std=c++20 -j "$jobs" -q \
    --enable=warning,performance,portability --inline-suppr \
    --suppressions-list="$root/tools/cppcheck.suppress" --error-exitcode=3 \
    --template='{file}:{line}: {severity} [{id}] {message}' 2> "$work/cppcheck.log"; then
  status=1
fi
cpp=$(grep -cE '^\S+:[0-9]+: ' "$work/cppcheck.log" || true)
if ((cpp != 0)); then
  cat "$work/cppcheck.log"
  status=1
fi
echo "static analysis: cppcheck: $cpp finding(s) in $units units"
exit $status
