/* The split deque's owner/thief protocol on its shared part
 * (runtime/core/include/strata/runtime/ext/deque.hpp: worker_deque::push,
 * pop, publish, take_shared; stealer::steal), as spin checks it: one owner
 * that pushes N tasks, publishes half of its private part at any moment and
 * pops until the deque is empty, and two thieves that steal. The
 * assertions: no task is taken twice, and when everyone is done every task
 * was taken once (none lost).
 *
 * The seq_cst fence of take_shared (between its store of split and its load
 * of top) and of steal are the program order here (spin's interleavings are
 * sequentially consistent); a missing fence is modelled by the reordering it
 * allows (TAKE_NO_FENCE: the owner's load of top passes its store of split).
 * Indices are the code's, without the ring's wrap-around (N slots).
 *
 *   spin -a deque.pml && cc -O2 -DSAFETY -o pan pan.c && ./pan
 *
 * Mutants (each must violate an assertion; tools/spin/check.sh runs them):
 *   -DTAKE_NO_FENCE  take_shared reads top before it stores split - 1
 *   -DLAST_NO_CAS    the owner takes the last shared task without its CAS on top
 */
#ifndef N
#define N 3
#endif
#define THIEVES 2
#define TRIES 2

byte buf[N];
byte top;       /* shared: thieves' CAS, the owner's take-back CAS */
byte split;     /* shared: written by the owner, read by thieves */
byte taken[N + 1];
byte done;      /* processes finished */

inline take(v) {
  d_step { taken[v]++; assert(taken[v] == 1) }
}

proctype owner() {
  byte bottom = 0, split_l = 0, top_cache = 0;
  byte v = 0, b, t, n, k;
  bit got;
  /* Push N tasks (values 1..N), publishing half of the private part at any moment. */
  do
  :: v < N -> v++; buf[bottom] = v; bottom++
  :: bottom > split_l ->  /* publish */
    n = bottom - split_l;
    k = (n + 1) / 2;
    split_l = split_l + k;
    split = split_l
  :: v == N -> break
  od;
  /* Pop until empty (a publish may still come between two pops). */
  do
  :: bottom > split_l ->  /* private: plain */
    bottom--;
    take(buf[bottom])
  :: bottom > split_l ->
    n = bottom - split_l;
    k = (n + 1) / 2;
    split_l = split_l + k;
    split = split_l
  :: bottom == split_l && split_l <= top_cache -> break  /* take_shared: nothing below split */
  :: bottom == split_l && split_l > top_cache ->         /* take_shared */
    b = split_l - 1;
#ifdef TAKE_NO_FENCE
    t = top;
    split = b;
#else
    split = b;
    t = top;
#endif
    if
    :: t <= b ->
      v = buf[b];
      if
      :: t == b ->  /* the last one: race the thieves with a CAS on top */
#ifdef LAST_NO_CAS
        got = 1;
#else
        d_step {
          if
          :: top == t -> top = t + 1; got = 1
          :: else -> got = 0
          fi
        };
#endif
        if
        :: got -> take(v)
        :: else -> skip
        fi;
        split_l = b + 1;
        split = split_l;
        top_cache = b + 1;
        bottom = b + 1
      :: else ->
        take(v);
        split_l = b;
        bottom = b;
        top_cache = t
      fi
    :: else ->  /* a thief took it */
      split_l = b + 1;
      split = split_l;
      top_cache = t;
      bottom = b + 1
    fi
  od;
  done++
}

proctype thief() {
  byte tries = 0, t, s, v;
  do
  :: tries < TRIES ->
    tries++;
    t = top;
    s = split;
    if
    :: t < s ->
      v = buf[t];
      d_step {
        if
        :: top == t -> top = t + 1; taken[v]++; assert(taken[v] == 1)
        :: else -> skip  /* lost: another thief or the owner's take-back */
        fi
      }
    :: else -> skip  /* empty: the real thief raises the request flag */
    fi
  :: else -> break
  od;
  done++
}

proctype check() {
  byte i;
  done == THIEVES + 1;
  i = 1;
  do
  :: i <= N -> assert(taken[i] == 1); i++
  :: else -> break
  od
}

init {
  atomic {
    run owner();
    run thief();
    run thief();
    run check()
  }
}
