// Remote functions: registered by name on every rank, called by id.
//
//   double step(int cell, std::vector<double> halo);
//   STRATA_MPI_REMOTE(step);                  // at namespace scope, once
//   auto f = mpi.submit_at(1, step, 7, halo);  // future<double>
//
// The id is a 64-bit FNV-1a hash of the name as written in the macro, so
// every rank of one binary agrees on it; the session compares a digest of
// the registries at start and names the functions a rank lacks. Arguments
// are taken by value or const reference (they cross ranks by value, see
// serialize.hpp); a non-const reference parameter is a compile error.
//
// STRATA_MPI_REMOTE_INLINE(fn) registers a handler that runs inside the
// receiving rank's progress pass as its item is decoded (on the progress
// thread or the comm worker, or on a thread helping them while it waits),
// without becoming a task (YGM's handlers, Charm++'s immediate messages): for
// tiny, non-blocking updates (a histogram bin, a counter) where a task per
// item would cost more than the work. A call to the caller's own rank goes
// the same way, so passes never overlap and a rank's inline handlers run one
// at a time: what only they touch needs no atomics. A handler must not
// block, wait on a future, or take long: it holds up the rank's message
// progress.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <vector>

#include <strata/mpi/serialize.hpp>

namespace strata::mpi {

// The error a future of a remote call holds when the function threw on its
// rank (the message names the function, the rank and what it threw), or the
// rank is gone.
class remote_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

namespace detail {

// One item of a run: its encoded arguments.
struct posted_item {
  const std::byte* args;
  std::size_t n;
};
inline constexpr std::size_t k_posted_run = 32;

struct remote_entry {
  std::string name;
  std::uint64_t id = 0;
  const void* fn = nullptr;
  // Decodes the arguments, runs the function, appends the encoded result to
  // `out`. Throws what the function throws, or decode_error.
  void (*invoke)(reader& args, std::vector<std::byte>& out) = nullptr;
  // A function with no result: decodes the arguments and runs it, with no
  // result buffer (post_at's short way: an inline handler's items are run
  // from the receive loop straight through this). Null for the others.
  void (*call_posted)(const std::byte* args, std::size_t n) = nullptr;
  // The same over a run of items (call_posted_run). Null with call_posted.
  void (*call_posted_run)(const posted_item* items, std::size_t count,
                          void (*failed)(void* ctx, std::size_t index, const char* what), void* ctx) = nullptr;
  bool run_inline = false;  // on the MPI owner at receipt (STRATA_MPI_REMOTE_INLINE)
};

// The process-wide registry (static initialisers fill it before main).
// A second registration of one name with another function is a
// usage_error at session start (reported then, not during static init).
void register_remote(remote_entry e);
const remote_entry* find_remote(const void* fn) noexcept;
const remote_entry* find_remote(std::uint64_t id) noexcept;
std::uint64_t name_hash(std::string_view name) noexcept;

template <class F>
struct fn_traits;
template <class R, class... A>
struct fn_traits<R (*)(A...)> {
  using result = R;
  using args = std::tuple<std::decay_t<A>...>;
  static constexpr bool by_value_or_const_ref =
      ((!std::is_lvalue_reference_v<A> || std::is_const_v<std::remove_reference_t<A>>) && ...);
};
template <class R, class... A>
struct fn_traits<R (*)(A...) noexcept> : fn_traits<R (*)(A...)> {};

template <auto Fn>
void invoke_thunk(reader& r, std::vector<std::byte>& out) {
  using T = fn_traits<decltype(Fn)>;
  auto args = r.value<typename T::args>();
  if (r.left() != 0) throw decode_error("strata::mpi: trailing bytes after the arguments");
  if constexpr (std::is_void_v<typename T::result>) {
    std::apply(Fn, std::move(args));
  } else {
    writer w(out);
    w.value(std::apply(Fn, std::move(args)));
  }
}

template <auto Fn>
void call_posted_thunk(const std::byte* p, std::size_t n) {
  using T = fn_traits<decltype(Fn)>;
  reader r(p, n);
  auto args = r.value<typename T::args>();
  if (r.left() != 0) throw decode_error("strata::mpi: trailing bytes after the arguments");
  std::apply(Fn, std::move(args));
}

// Runs up to k_posted_run items of one function without a result, in order:
// their arguments decoded first, then the calls in a loop of their own, so
// that a handler that misses in cache (a histogram's random bin) overlaps
// its miss with the next calls' as a plain loop over an array does; called
// once per item among the decoding and dispatch, each call's miss stood
// alone. An item that does not decode, or whose call throws, is handed to
// `failed` (what: the exception's message, or null) and the rest run.
// Arguments that are not trivially copyable, or larger than
// k_posted_arg_max (a run of them on the stack would be too much: a plain
// struct may be as large as a buffer), are decoded and called one item at a
// time.
inline constexpr std::size_t k_posted_arg_max = 64;
template <auto Fn>
void call_posted_run(const posted_item* items, std::size_t count,
                     void (*failed)(void* ctx, std::size_t index, const char* what), void* ctx) {
  using T = fn_traits<decltype(Fn)>;
  using A = typename T::args;
  constexpr bool two_phase =
      std::is_trivially_copyable_v<A> && std::is_default_constructible_v<A> && sizeof(A) <= k_posted_arg_max;
  if constexpr (two_phase) {
    A args[k_posted_run];
    bool ok[k_posted_run];
    if (count > k_posted_run) count = k_posted_run;
    for (std::size_t i = 0; i < count; ++i) {
      try {
        reader r(items[i].args, items[i].n);
        args[i] = r.value<A>();
        if (r.left() != 0) throw decode_error("strata::mpi: trailing bytes after the arguments");
        ok[i] = true;
      } catch (const std::exception& e) {
        ok[i] = false;
        failed(ctx, i, e.what());
      }
    }
    for (std::size_t i = 0; i < count; ++i) {
      if (!ok[i]) continue;
      try {
        std::apply(Fn, args[i]);
      } catch (const std::exception& e) {
        failed(ctx, i, e.what());
      } catch (...) {
        failed(ctx, i, nullptr);
      }
    }
  } else {
    for (std::size_t i = 0; i < count && i < k_posted_run; ++i) {
      try {
        call_posted_thunk<Fn>(items[i].args, items[i].n);
      } catch (const std::exception& e) {
        failed(ctx, i, e.what());
      } catch (...) {
        failed(ctx, i, nullptr);
      }
    }
  }
}

template <auto Fn>
bool register_fn(const char* name, bool run_inline = false) {
  using T = fn_traits<decltype(Fn)>;
  static_assert(T::by_value_or_const_ref,
                "STRATA_MPI_REMOTE: a remote function takes its arguments by value or const reference");
  static_assert(std::is_void_v<typename T::result> || serializable<typename T::result>,
                "STRATA_MPI_REMOTE: the result type cannot cross ranks (see <strata/mpi/serialize.hpp>)");
  static_assert(serializable<typename T::args>,
                "STRATA_MPI_REMOTE: an argument type cannot cross ranks (see <strata/mpi/serialize.hpp>)");
  remote_entry e{name, name_hash(name), reinterpret_cast<const void*>(Fn), &invoke_thunk<Fn>};
  if constexpr (std::is_void_v<typename T::result>) {
    e.call_posted = &call_posted_thunk<Fn>;
    e.call_posted_run = &call_posted_run<Fn>;
  }
  e.run_inline = run_inline;
  register_remote(std::move(e));
  return true;
}

}  // namespace detail
}  // namespace strata::mpi

#define STRATA_MPI_CAT2_(a, b) a##b
#define STRATA_MPI_CAT_(a, b) STRATA_MPI_CAT2_(a, b)
// Registers function `fn` (a name visible here, qualified or not) as a
// remote function of this binary. At namespace scope, once per function.
#define STRATA_MPI_REMOTE(fn)                                                      \
  [[maybe_unused]] static const bool STRATA_MPI_CAT_(strata_mpi_remote_, __COUNTER__) = \
      ::strata::mpi::detail::register_fn<&(fn)>(#fn)
// As STRATA_MPI_REMOTE, run on the receiving rank's MPI owner (see above).
#define STRATA_MPI_REMOTE_INLINE(fn)                                               \
  [[maybe_unused]] static const bool STRATA_MPI_CAT_(strata_mpi_remote_, __COUNTER__) = \
      ::strata::mpi::detail::register_fn<&(fn)>(#fn, true)
