#!/bin/sh
# failure.sh CASE MPIRUN... BINARY: runs failure_test under mpirun and checks
# how the job ended (see failure_test.cpp). Cases:
#   kill           plain mpirun: it sees rank 1 die and ends the job non-zero
#                  (its message names the rank; the survivors never get to
#                  their deadline)
#   kill-recovery  mpirun --enable-recovery leaves the survivors running:
#                  rank 0's deadline names rank 1 and when it was last heard
#                  (mpirun itself then exits 0: its recovery mode hides exit
#                  codes, so only the message is checked)
#   stop           rank 1 stopped: rank 0's deadline ends the job non-zero
#   goodbye        a closed session is no failure: the job exits 0
set -u
case=$1
shift
mode=${case%-recovery}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
start=$(date +%s)
"$@" "$mode" >"$out" 2>&1
rc=$?
took=$(( $(date +%s) - start ))
cat "$out"
echo "failure.sh: $case: mpirun exited $rc after ${took} s"
fail() { echo "failure.sh: FAIL: $*"; exit 1; }
case $case in
  kill)
    [ "$rc" -ne 0 ] || fail "the job exited 0"
    grep -q "rank 1" "$out" || fail "no message names rank 1" ;;
  kill-recovery|stop)
    grep -q "rank 0: rank 1 has been silent for .*last heard at" "$out" || fail "no message naming rank 1 and when"
    [ "$case" = kill-recovery ] || [ "$rc" -ne 0 ] || fail "the job exited 0" ;;
  goodbye)
    [ "$rc" -eq 0 ] || fail "exit $rc"
    grep -q "goodbye ok: .*closed its session" "$out" || fail "no remote_error"
    grep -q "goodbye ok for actors: .*closed its session" "$out" || fail "no remote_error for an actor ask" ;;
  *) fail "unknown case $case" ;;
esac
[ "$took" -le 12 ] || fail "took ${took} s (wanted at most 12: a 2 s deadline, mpirun's start and stop)"
echo "failure.sh: PASS"
