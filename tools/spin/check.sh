#!/bin/sh
# Model-checks tools/spin/quiescence.pml (the termination protocol must
# hold) and its mutants (each must be caught). Needs spin and a C compiler.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
run() {  # run LABEL [DEFINE]: prints pan's verdict, returns 0 when no error was found
  rm -f pan pan.* ./*.trail
  spin -a -DBUDGET=${SPIN_BUDGET:-2} ${2:+-D$2} "$here/quiescence.pml" >/dev/null
  cc -O2 -DSAFETY -DCOLLAPSE -DMEMLIM=4096 -o pan pan.c
  ./pan -m200000 > out.txt 2>&1 || true
  states=$(sed -n 's/^ *\([0-9e+.]*\) states, stored.*/\1/p' out.txt | head -1)
  errors=$(sed -n 's/.*errors: \([0-9]*\).*/\1/p' out.txt | head -1)
  echo "spin: $1: ${errors:-?} error(s), ${states:-?} states"
  [ "${errors:-1}" = 0 ]
}
run protocol || { cat out.txt; echo "spin: FAIL: the protocol violates its assertion"; exit 1; }
for m in ONE_WAVE DONE_AT_RECEIPT; do
  if run "mutant $m" "$m"; then echo "spin: FAIL: mutant $m was not caught"; exit 1; fi
done
echo "spin: PASS (protocol holds, both mutants caught)"
