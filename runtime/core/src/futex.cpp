// Futex wait/wake on 32-bit atomics (Linux).
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <climits>
#include <ctime>

#include <strata/runtime/ext/sync.hpp>

namespace strata::detail {

void futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t expected, long timeout_ns) noexcept {
  struct timespec ts {};
  struct timespec* tp = nullptr;
  if (timeout_ns > 0) {
    ts.tv_sec = timeout_ns / 1'000'000'000;
    ts.tv_nsec = timeout_ns % 1'000'000'000;
    tp = &ts;
  }
  // The kernel compares *word with expected atomically against wakers: a
  // change between our check and the sleep returns at once (EAGAIN).
  ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAIT_PRIVATE, expected, tp, nullptr, 0);
}

void futex_wake(std::atomic<std::uint32_t>& word, int count) noexcept {
  ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAKE_PRIVATE, count, nullptr, nullptr, 0);
}

}  // namespace strata::detail
