// task: a small callable in a fixed 128-byte frame.
//
// Frames come from the spawning worker's frame_pool (node-local memory,
// allocated by the worker after it is pinned), so a spawn allocates nothing
// from the heap: a callable of up to k_inline_bytes is constructed in place;
// a larger one is boxed on the heap (counted in stats, never on the fast
// path of the runtime's own algorithms). The deque and inboxes move frame
// pointers only.
//
// A frame records how its completion is reported: to a task_group (owner's
// plain counter when run by the group's owner worker, an atomic counter when
// stolen or spawned from elsewhere), or nowhere (detached; its exception is
// counted and reported once). A routed frame is not run when it arrives
// through an inbox: it is handed to a work source (an actor's message goes
// to its mailbox; work_source.hpp).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <new>
#include <type_traits>
#include <utility>

namespace strata {

class task_group;

namespace detail {

struct worker;

inline constexpr std::size_t k_frame_bytes = 128;
inline constexpr std::uint32_t k_no_home = 0xffffffffu;   // heap frame: delete
inline constexpr std::uint32_t k_embedded = 0xfffffffeu;  // part of another object (an actor's turn): never freed

// How the frame's completion is reported.
enum class completion : std::uint8_t {
  detached,        // nothing waits
  group_owner,     // spawned by the group's owner worker: plain counter when the owner runs it
  group_foreign,   // spawned elsewhere (other worker, outside): atomic counter
  routed,          // for the work source `sink` of the worker whose inbox it reaches: accept(), not run
  join,            // parallel_invoke's frame on its caller's stack: raise its done flag, free nothing
};

// Tag of the constructor of a parallel_invoke frame.
struct join_frame_tag {
  explicit join_frame_tag() = default;
};

// Not alignas(64): the pools carve frames from line-aligned slabs (so a
// pooled frame is two whole cache lines), and a parallel_invoke frame on a
// caller's stack then needs no stack realignment (and no frame pointer) in
// every fork-join function.
struct task {
  using run_fn = void (*)(task*) noexcept(false);
  using destroy_fn = void (*)(task*) noexcept;

  // storage is left for the callable (emplace_callable builds it there).
  // cppcheck-suppress uninitMemberVar
  task() noexcept
      : run(nullptr), destroy(nullptr), group(nullptr), home(k_no_home), how(completion::detached), sink(0), kind(0),
        pad(0), tag(0) {}
  // A parallel_invoke frame on its caller's stack: only what run_task reads
  // of it is set (run, group, how); it is never freed, destroyed or linked.
  // `group` is the caller's running group, so that a stolen first callable
  // runs as part of the same group as an inline one (waiting on that group
  // from it is then a usage_error either way).
  // cppcheck-suppress uninitMemberVar
  task(join_frame_tag, run_fn r, task_group* running) noexcept : run(r), group(running), how(completion::join) {}

  run_fn run;          // runs the callable (may throw)
  destroy_fn destroy;  // destroys the callable; nullptr when trivially destructible
  task_group* group;
  std::uint32_t home;  // worker whose pool owns the frame; k_no_home: heap
  completion how;
  std::uint8_t sink;        // routed: index of the work source that accepts it
  std::uint8_t kind;        // routed: the work source's own kind of frame (set by whoever routes it)
  std::uint8_t pad;
  std::atomic<task*> next;  // inbox / free-list link (value-initialised: nullptr)
  std::uint64_t tag;        // the work source's own tag (a message: the destination actor's address bits)
  alignas(16) unsigned char storage[k_frame_bytes - 48];
};
static_assert(sizeof(task) == k_frame_bytes, "one task frame is two cache lines");
static_assert(offsetof(task, storage) == 48, "the header (with tag) fits in front of the callable");

inline constexpr std::size_t k_inline_bytes = sizeof(task::storage);

template <class F>
struct boxed {
  F* f;
};

// True when a callable of type F does not fit a frame and is boxed on the heap.
template <class F>
inline constexpr bool k_boxed = !(sizeof(std::decay_t<F>) <= k_inline_bytes && alignof(std::decay_t<F>) <= 16);

// Builds the callable F in frame t (in place or boxed) and sets run/destroy.
template <class F>
void emplace_callable(task* t, F&& fn) {
  using D = std::decay_t<F>;
  if constexpr (!k_boxed<F>) {
    ::new (static_cast<void*>(t->storage)) D(std::forward<F>(fn));
    t->run = [](task* self) { (*std::launder(reinterpret_cast<D*>(self->storage)))(); };
    if constexpr (std::is_trivially_destructible_v<D>) {
      t->destroy = nullptr;  // nothing to run: saves an indirect call per task
    } else {
      t->destroy = [](task* self) noexcept { std::launder(reinterpret_cast<D*>(self->storage))->~D(); };
    }
  } else {
    ::new (static_cast<void*>(t->storage)) boxed<D>{new D(std::forward<F>(fn))};
    t->run = [](task* self) { (*std::launder(reinterpret_cast<boxed<D>*>(self->storage))->f)(); };
    t->destroy = [](task* self) noexcept { delete std::launder(reinterpret_cast<boxed<D>*>(self->storage))->f; };
  }
}

}  // namespace detail
}  // namespace strata
