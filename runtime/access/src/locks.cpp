// Taking locks: one lock without waiting (try_lock), a task's whole list
// all or none (try_acquire_all), and validating and sorting a submitted
// list (prepare_locks). The queues are in dispatch.cpp.
#include "locks.hpp"

#include <string>
#include <vector>

#include <strata/runtime/error.hpp>

namespace strata::detail {

using namespace lock_word;

bool try_lock(const access_system& d, resource_state& r, access_mode mode, unsigned holder,
              std::uint16_t ticket, bool* cleared) noexcept {
  std::uint32_t w = r.word.load(std::memory_order_seq_cst);
  for (;;) {
    if (mode == access_mode::write) {
      if ((w & k_write) != 0 || readers_of(w) != 0) {
        // Register as the waiting writer (readers then front-run at most d.front_runs times).
        if ((w & k_ticket_mask) == 0 && ticket != 0 &&
            !r.word.compare_exchange_weak(w, w | ticket, std::memory_order_seq_cst, std::memory_order_seq_cst)) {
          continue;
        }
        return false;
      }
      std::uint32_t next = with_holder(w | k_write, holder);
      const bool served = ticket != 0 && (w & k_ticket_mask) == ticket;
      if (served) next &= ~k_ticket_mask;  // our registration is served
      if (r.word.compare_exchange_weak(w, next, std::memory_order_seq_cst, std::memory_order_seq_cst)) {
        r.front_runs.store(0, std::memory_order_relaxed);  // relaxed: read under the same word's protocol
        if (served) *cleared = true;
        return true;
      }
      continue;
    }
    if ((w & k_write) != 0 || readers_of(w) == k_max_readers) return false;
    const bool writer_waits = (w & k_ticket_mask) != 0;
    if (writer_waits) {
      // relaxed: the count is a budget; the CAS on the word below decides.
      std::uint32_t f = r.front_runs.load(std::memory_order_relaxed);
      do {
        if (f >= d.front_runs) return false;
      } while (!r.front_runs.compare_exchange_weak(f, f + 1, std::memory_order_relaxed));
    }
    const std::uint32_t next = readers_of(w) == 0 ? with_holder(w + k_reader, holder) : w + k_reader;
    if (r.word.compare_exchange_weak(w, next, std::memory_order_seq_cst, std::memory_order_seq_cst)) return true;
    if (writer_waits) r.front_runs.fetch_sub(1, std::memory_order_relaxed);  // relaxed: give the budget back
  }
}

unsigned unlock(resource_state& r, access_mode mode) noexcept {
  if (mode == access_mode::read) {
    return holder_of(r.word.fetch_sub(k_reader, std::memory_order_seq_cst));  // seq_cst: see release_locks in dispatch.cpp
  }
  return holder_of(r.word.fetch_and(~k_write, std::memory_order_seq_cst));  // seq_cst: as above
}

resource_state* try_acquire_all(const access_system& d, const access_lock* locks, std::size_t n,
                                std::uint16_t ticket, unsigned holder, std::size_t* taken, bool* cleared) noexcept {
  bool served = false;
  for (std::size_t i = 0; i < n; ++i) {
    resource_state* r = locks[i].res();
    if (!try_lock(d, *r, locks[i].mode(), holder, ticket, &served)) {
      for (std::size_t j = i; j-- > 0;) unlock(*locks[j].res(), locks[j].mode());
      if (taken != nullptr) *taken = i;
      if (cleared != nullptr) *cleared = served;
      return r;
    }
  }
  return nullptr;
}
resource_state* try_acquire_all(const access_system& d, access_request& req, unsigned holder, std::size_t* taken,
                                bool* cleared) noexcept {
  return try_acquire_all(d, req.locks, req.n_locks, req.ticket, holder, taken, cleared);
}

namespace {

// What is wrong with a list that prepare_locks refused: the first empty or
// foreign resource, else the first duplicate (usage_error naming it).
[[noreturn, gnu::noinline]] void refuse_access_list(runtime_core& rt, const access* list, std::size_t n,
                                                    const char* api) {
  auto fail = [api](const std::string& why) { throw usage_error(std::string("strata::runtime::") + api + ": " + why); };
  if (n == 0) fail("empty access list; accepted: one or more read(r) / write(r)");
  for (std::size_t i = 0; i < n; ++i) {
    const resource& r = list[i].res;
    if (!r.valid()) fail("access " + std::to_string(i) + " names an empty resource (default-constructed)");
    if (r.owner() != &rt) fail("resource " + std::to_string(r.id()) + " belongs to another runtime");
  }
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      if (list[j].res == list[i].res) {
        fail("resource " + std::to_string(list[i].res.id()) +
             " appears twice in one access list; accepted: each resource once (write(r) covers reading it)");
      }
    }
  }
  // Not reached: sort_locks refuses only the cases above.
  throw usage_error(std::string("strata::runtime::") + api + ": invalid access list");
}

// Fills out[0..n) sorted by id (ids[0..n) alongside), from the handles only
// (see resource): an insertion sort, lists are short. False when the list
// is empty or names an empty, foreign or repeated resource.
[[gnu::always_inline]] inline bool sort_locks(runtime_core& rt, const access* list, std::size_t n, access_lock* out,
                                              std::uint32_t* ids) noexcept {
  if (n == 0) return false;
  for (std::size_t i = 0; i < n; ++i) {
    const resource& r = list[i].res;
    if (!r.valid() || r.owner() != &rt) return false;
    const std::uint32_t id = r.id();
    std::size_t j = i;
    for (; j > 0 && ids[j - 1] > id; --j) {
      ids[j] = ids[j - 1];
      out[j] = out[j - 1];
    }
    ids[j] = id;
    out[j] = access_lock(r.state(), list[i].mode);
  }
  for (std::size_t i = 1; i < n; ++i) {
    if (ids[i] == ids[i - 1]) return false;
  }
  return true;
}

[[gnu::noinline]] void prepare_long_locks(runtime_core& rt, const access* list, std::size_t n, access_lock* out,
                                          const char* api) {
  std::vector<std::uint32_t> ids(n);
  if (!sort_locks(rt, list, n, out, ids.data())) refuse_access_list(rt, list, n, api);
}

}  // namespace

void prepare_locks_any(runtime_core& rt, const access* list, std::size_t n, access_lock* out, const char* api) {
  constexpr std::size_t k_short = 8;
  if (n > k_short) return prepare_long_locks(rt, list, n, out, api);
  std::uint32_t ids[k_short];
  if (!sort_locks(rt, list, n, out, ids)) refuse_access_list(rt, list, n, api);
}

void prepare_access(runtime_core& rt, access_request& req, const access* list, std::size_t n, const char* api) {
  if (n > access_request::k_inline_locks) {
    req.more_locks = std::make_unique<access_lock[]>(n);
    req.locks = req.more_locks.get();
  }
  prepare_locks(rt, list, n, req.locks, api);
  req.n_locks = static_cast<std::uint32_t>(n);
}

bool acquire_frame_locks_from(worker& w, access_head& head, std::size_t first, std::size_t* taken) noexcept {
  // The rest all or none (a frame task has no ticket); on refusal also give
  // back the `first` locks the inline path took, youngest first.
  std::size_t more = 0;
  if (try_acquire_all(system_of(head.locks), head.locks + first, head.n - first, 0, w.index, &more) == nullptr) {
    return true;
  }
  for (std::size_t j = first; j-- > 0;) unlock(*head.locks[j].res(), head.locks[j].mode());
  *taken = first + more;
  return false;
}

}  // namespace strata::detail
