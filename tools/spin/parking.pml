/* The parking protocol (runtime/core/src/parking.cpp: idle_phase,
 * maybe_wake, notify_worker, wake_claim, cancel_park), as spin checks it:
 * two workers of one package and a producer that hands ITEMS items out, each
 * either to one worker's inbox (submit_on, an actor message: notify_worker)
 * or to shared work any worker may take (a deque publish, an injector push:
 * maybe_wake). A worker runs its inbox, then shared work; idle, it may spin
 * (searching everything; the spin cap may skip that phase), leaves the
 * spinning state and re-checks, then parks in two phases: announce
 * (sleepers + 1, sleeping = 1), re-check everything, then sleep until a
 * waker flips sleeping to 0, or cancel.
 *
 * seq_cst operations and fences of the code are the program order here
 * (spin's interleavings are sequentially consistent); a missing fence is
 * modelled by the reordering it would allow (PUSH_AFTER_CHECK).
 *
 * The property: when nothing can move any more (every worker asleep, the
 * producer done), no inbox and no shared queue holds work: no lost wake-up,
 * and no worker sleeps while its inbox holds work.
 *
 *   spin -a parking.pml && cc -O2 -DSAFETY -o pan pan.c && ./pan
 *
 * Mutants (each must violate the property; tools/spin/check.sh runs them):
 *   -DNO_RECHECK        a parker sleeps right after announcing, without the
 *                       second look at its inbox and the shared work
 *   -DPUSH_AFTER_CHECK  a producer reads the worker's sleeping word before
 *                       its push is visible (notify_worker's fence removed)
 */
#define W 2
#ifndef ITEMS
#define ITEMS 3
#endif

byte inbox[W];   /* items queued for worker w */
byte shared;     /* items any worker may take */
byte spinners;   /* the package's idle word, low half */
byte sleepers;   /* and high half */
bit sleeping[W];
byte consumed;
bit produced;    /* the producer has handed out every item */

/* wake_claim: whoever flips sleeping 1 -> 0 takes the worker out of the
 * sleeper count (and wakes it: its wait below is on sleeping == 0). */
inline wake_claim(w, claimed) {
  d_step { claimed = sleeping[w]; sleeping[w] = 0 };
  if
  :: claimed -> sleepers--
  :: else -> skip
  fi
}

/* wake_one: the first sleeper found. */
inline wake_one(c) {
  wake_claim(0, c);
  if
  :: !c -> wake_claim(1, c)
  :: else -> skip
  fi
}

/* One look at the worker's own inbox, then the shared work (find_task). */
inline search(me, got) {
  d_step {
    if
    :: inbox[me] > 0 -> inbox[me]--; got = 1
    :: else -> got = 0
    fi
  };
  if
  :: !got -> d_step {
       if
       :: shared > 0 -> shared--; got = 1
       :: else -> skip
       fi
     }
  :: else -> skip
  fi
}

proctype producer() {
  byte n = 0;
  byte w;
  bit c;
  do
  :: n < ITEMS ->
    if
    :: true ->  /* to one worker's inbox: push, fence, read its sleeping word */
      if
      :: w = 0
      :: w = 1
      fi;
#ifdef PUSH_AFTER_CHECK
      c = sleeping[w];
      inbox[w]++;
      if
      :: c -> wake_claim(w, c)
      :: else -> skip
      fi;
#else
      inbox[w]++;
      if
      :: sleeping[w] -> wake_claim(w, c)
      :: else -> skip
      fi;
#endif
    :: true ->  /* shared: publish, fence, wake a sleeper only if nobody spins */
      shared++;
      if
      :: spinners == 0 && sleepers > 0 -> wake_one(c)
      :: else -> skip
      fi
    fi;
    n++
  :: else -> break
  od;
  produced = 1
}

proctype worker(byte me) {
  bit got;
  bit c;
  byte prev;
top:
  search(me, got);
  if
  :: got -> consumed++; goto top
  :: else -> skip
  fi;
  /* The spin phase, or not (the cap: at most about half the busy workers spin). */
  if
  :: true ->
    spinners++;
    search(me, got);
    if
    :: got ->
      d_step { prev = spinners; spinners-- };
      if  /* the last spinner to find work keeps the search going */
      :: prev == 1 && sleepers > 0 -> wake_one(c)
      :: else -> skip
      fi;
      consumed++;
      goto top
    :: else -> skip
    fi;
    spinners--;
    search(me, got);  /* Go's dance: re-check after leaving the spinning state */
    if
    :: got -> consumed++; goto top
    :: else -> skip
    fi
  :: true -> skip
  fi;
  /* Park: announce, re-check, sleep or cancel. */
  sleepers++;
  sleeping[me] = 1;
#ifndef NO_RECHECK
  search(me, got);
  if
  :: got ->
    wake_claim(me, c);  /* cancel_park: take ourselves out if no waker did */
    consumed++;
    goto top
  :: else -> skip
  fi;
#endif
end_sleep:
  sleeping[me] == 0;
  goto top
}

/* When nothing can move, nothing may be left. */
proctype monitor() {
  timeout -> assert(produced && inbox[0] == 0 && inbox[1] == 0 && shared == 0 && consumed == ITEMS)
}

init {
  atomic {
    run producer();
    run worker(0);
    run worker(1);
    run monitor()
  }
}
