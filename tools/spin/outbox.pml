/* Fast appends to an outbox (mpi_bridge/src/bridge.hpp, Fast appends;
 * bridge_send.cpp append_fast and post's locked path; bridge_outbox.cpp
 * copy_slot, seal_slot, seal_outbox's request, retire_quiet), as spin
 * checks it: one producer appends ITEMS items to one slot of its outbox
 * while the owner copies out what the slot holds, asks the producer to seal
 * it (clears `listed`, frees nothing), and retires it.
 *
 * The producer runs on x86-TSO: its plain stores (busy, the item's bytes,
 * the cursor) enter a FIFO store buffer that drains to memory at any time
 * (the drain process); its loads see its own latest buffered store, else
 * memory. Its locked path starts with the lock's exchange, which drains the
 * buffer. The owner's steps are sequentially consistent (they run under the
 * outbox lock, with acquire loads and a system call). membarrier
 * (MEMBARRIER_CMD_PRIVATE_EXPEDITED) is one step that drains the producer's
 * buffer: the full barrier the kernel makes it execute. The item's bytes
 * are one store of its number into the slot's buffer of that generation;
 * the cursor counts items.
 *
 * Properties: no item's store lands in a buffer that was given back (use
 * after free), a copy-out never reads an item not yet written, and at the
 * end every item was sent exactly once, in the order it was posted.
 *
 *   spin -a outbox.pml && cc -O2 -DSAFETY -o pan pan.c && ./pan
 *
 * Mutants (each must violate a property; tools/spin/check.sh runs them):
 *   -DNO_MEMBARRIER  the retire runs no membarrier
 *   -DNO_BUSY_CHECK  the retire frees a buffer while `busy` is set
 *   -DNO_RECHECK     the retire frees the buffer without looking at the
 *                    cursor again
 */
#ifndef ITEMS
#define ITEMS 3
#endif
#define CAP 2      /* items a buffer holds */
#define SB 6       /* the producer's store buffer, in stores */
#define GENS 6     /* buffer generations: one per open, at most ITEMS + 1 */

#define K_BUSY 1
#define K_DATA 2
#define K_CURSOR 3

/* Memory. */
bit lock;
bit listed;        /* fast appends allowed */
bit busy;
byte cursor;       /* items written (published) in the slot's buffer */
byte taken;        /* items copied out or sealed (under lock) */
byte gen;          /* the slot's buffer, 0: none (an open buffer may be unlisted: a request) */
byte next_gen;
bit alive[GENS];
byte data[CAP];    /* item number + 1, 0: not written */
byte sent;         /* items sent, in order */
bit done;          /* the producer posted everything */

/* The producer's store buffer: kind, index or value, value, generation. */
byte sb_kind[SB];
byte sb_a[SB];
byte sb_v[SB];
byte sb_g[SB];
byte sb_len;
byte j;  /* sb_drain_one's index (used inside d_steps only) */

inline sb_push(k, a, v, g) {
  d_step {
    sb_len < SB;  /* a full buffer stalls the producer */
    sb_kind[sb_len] = k; sb_a[sb_len] = a; sb_v[sb_len] = v; sb_g[sb_len] = g;
    sb_len++
  }
}

/* The oldest buffered store reaches memory. */
inline sb_drain_one() {
  if
  :: sb_kind[0] == K_BUSY -> busy = sb_v[0]
  :: sb_kind[0] == K_CURSOR -> cursor = sb_v[0]
  :: sb_kind[0] == K_DATA ->
     assert(alive[sb_g[0]]);  /* an item written into a buffer given back */
     data[sb_a[0]] = sb_v[0]
  fi;
  j = 0;
  do
  :: j + 1 < sb_len ->
     sb_kind[j] = sb_kind[j + 1]; sb_a[j] = sb_a[j + 1]; sb_v[j] = sb_v[j + 1]; sb_g[j] = sb_g[j + 1];
     j++
  :: else -> break
  od;
  sb_len--
}

inline sb_drain_all() {
  do
  :: sb_len > 0 -> sb_drain_one()
  :: else -> break
  od
}

/* The producer's load of the cursor: its own latest buffered store first. */
inline load_cursor(c, k) {
  d_step {
    c = cursor;
    k = 0;
    do
    :: k < sb_len -> if :: sb_kind[k] == K_CURSOR -> c = sb_v[k] :: else -> skip fi; k++
    :: else -> break
    od
  }
}

/* Sends the items from `taken` to `upto` (under lock), in order. */
inline send_upto(upto) {
  do
  :: taken < upto ->
     assert(data[taken] != 0);          /* published but not written */
     assert(data[taken] == sent + 1);   /* exactly once, in order */
     sent++;
     taken++
  :: else -> break
  od
}

active proctype drain() {
end:
  do
  :: d_step { sb_len > 0 -> sb_drain_one() }
  od
}

active proctype producer() {
  byte i = 0;
  byte c;
  bit l;
  byte g;
  byte k;
  do
  :: i == ITEMS -> break
  :: else ->
     /* append_fast */
     sb_push(K_BUSY, 0, 1, 0);
     l = listed;
     load_cursor(c, k);
     g = gen;
     if
     :: l && c < CAP ->
        sb_push(K_DATA, c, i + 1, g);
        sb_push(K_CURSOR, 0, c + 1, 0);
        sb_push(K_BUSY, 0, 0, 0);
        i++
     :: else ->
        sb_push(K_BUSY, 0, 0, 0);
        /* the locked path: the lock's exchange drains the store buffer */
        atomic { lock == 0 -> lock = 1 };
        d_step {
          sb_drain_all();
          if
          :: gen != 0 && !listed && cursor > taken ->  /* asked to seal: seal_slot */
             send_upto(cursor);
             alive[gen] = 0; gen = 0; cursor = 0; taken = 0
          :: gen != 0 && !listed && cursor == taken -> listed = 1  /* copied out meanwhile */
          :: else -> skip
          fi;
          if
          :: gen != 0 && cursor == CAP ->  /* full: seal_slot (or given back, nothing left) */
             send_upto(cursor);
             alive[gen] = 0; gen = 0; listed = 0; cursor = 0; taken = 0
          :: else -> skip
          fi;
          if
          :: gen == 0 ->  /* open_slot */
             next_gen++; gen = next_gen; alive[gen] = 1;
             data[0] = 0; data[1] = 0; cursor = 0; taken = 0; listed = 1
          :: else -> skip
          fi;
          data[cursor] = i + 1;
          cursor++;
          i++
        };
        lock = 0
     fi
  od;
  done = 1
}

active proctype owner() {
  do
  :: /* a look: copy_slot */
     atomic { lock == 0 -> lock = 1 };
     d_step {
       if
       :: gen != 0 && cursor > taken -> send_upto(cursor)
       :: else -> skip
       fi
     };
     lock = 0
  :: /* a look, the timer: the producer is asked to seal */
     atomic { lock == 0 -> lock = 1 };
     d_step {
       if
       :: listed && cursor > taken -> listed = 0
       :: else -> skip
       fi
     };
     lock = 0
  :: /* retire_quiet */
     atomic { lock == 0 -> lock = 1 };
     if
     :: gen != 0 && cursor == taken ->
        listed = 0;
#ifndef NO_MEMBARRIER
        d_step { sb_drain_all() };
#endif
        if
#ifndef NO_BUSY_CHECK
        :: busy -> listed = 1  /* inside an append: kept */
#endif
#ifndef NO_RECHECK
        :: cursor != taken -> listed = 1  /* an append that began before the barrier */
#endif
        :: else -> alive[gen] = 0; gen = 0; cursor = 0; taken = 0
        fi
     :: else -> skip
     fi;
     lock = 0
  :: done && sb_len == 0 -> break
  od;
  /* the last wave: everything the producer wrote is copied out */
  atomic { lock == 0 -> lock = 1 };
  d_step {
    if
    :: gen != 0 -> send_upto(cursor)
    :: else -> skip
    fi
  };
  assert(sent == ITEMS);  /* no item lost */
  lock = 0
}
