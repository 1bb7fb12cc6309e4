/* The bridge's termination detection (mpi_bridge/src/quiescence.hpp), as
 * spin checks it: two ranks, each with a worker that runs the items it
 * receives (an item may post up to two more, to any rank, within a budget)
 * and a progress thread that joins waves at any moment, reading its rank's
 * counters; a wave ends when both joined, and the detector declares
 * quiescence after two equal waves with sent == done. The assertion: when
 * it does, no item is queued or running anywhere.
 *
 *   spin -a -DBUDGET=2 quiescence.pml && gcc -O2 -DSAFETY -o pan pan.c && ./pan
 *
 * BUDGET (items the run may create in all, the first included): CI checks 2
 * (19083 states, seconds); 3 was checked by hand (88349465 states, 0
 * errors, 4 minutes, -DCOLLAPSE). Both mutants are caught at 2.
 *
 * Mutants (each must violate the assertion; tools/spin/check.sh runs all):
 *   -DONE_WAVE         declare after a single wave with sent == done
 *   -DDONE_AT_RECEIPT  count an item done when it arrives, not when it has
 *                      run (and posted what it posts): counting buffers or
 *                      receipts instead of finished items
 */
#define R 2
#ifndef BUDGET
#define BUDGET 3
#endif

byte sent[R];
byte done[R];
chan q[R] = [BUDGET] of { bit };
byte budget = BUDGET;
byte live = 0;           /* ground truth: items posted and not finished (changed with the counters) */

bool joined[R];
byte njoined = 0;
byte acc_sent = 0;
byte acc_done = 0;
byte prev_sent = 0;
byte prev_done = 0;
bool have_prev = false;
bool quiet = false;

/* bridge::post: the item is counted before it can be received anywhere. */
inline post(from) {
  if
  :: budget > 0 ->
       budget--;
       atomic { sent[from]++; live++ }
       if
       :: q[0]!1
       :: q[1]!1
       fi
  :: else -> skip
  fi
}

proctype worker(byte me) {
  do
  :: q[me]?_ ->
#ifdef DONE_AT_RECEIPT
       done[me]++;   /* (live, the ground truth, still waits for the end) */
#endif
       if
       :: true -> skip
       :: true -> post(me)
       :: true -> post(me); post(me)
       fi;
#ifndef DONE_AT_RECEIPT
       atomic { done[me]++; live-- }
#else
       live--
#endif
  :: quiet -> break
  od
}

proctype progress(byte me) {
  do
  :: !quiet && !joined[me] ->
       /* bridge::step_quiescence: done read before sent, then the
        * Iallreduce contribution. */
       byte d, s;
       d = done[me];
       s = sent[me];
       atomic { acc_done = acc_done + d; acc_sent = acc_sent + s; joined[me] = true; njoined++; d = 0; s = 0 }
  :: atomic {
       !quiet && njoined == R ->
#ifdef ONE_WAVE
       if
       :: acc_sent == acc_done -> quiet = true
       :: else -> skip
       fi;
#else
       if
       :: have_prev && acc_sent == prev_sent && acc_done == prev_done && acc_sent == acc_done -> quiet = true
       :: else -> prev_sent = acc_sent; prev_done = acc_done; have_prev = true
       fi;
#endif
       if
       :: quiet -> assert(live == 0 && len(q[0]) == 0 && len(q[1]) == 0)
       :: else -> skip
       fi;
       acc_sent = 0; acc_done = 0; njoined = 0; joined[0] = false; joined[1] = false
     }
  :: quiet -> break
  od
}

init {
  atomic {
    post(0);   /* the first item, from rank 0's main thread */
    run worker(0); run worker(1); run progress(0); run progress(1)
  }
}
