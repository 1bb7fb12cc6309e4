// Taking and giving back locks (locks.cpp); internal to lock mode.
#pragma once

#include <cstddef>
#include <cstdint>

#include "access_system.hpp"

namespace strata::detail {

// One lock, no waiting. The holder byte is set only when the lock goes from
// free to held, so it names the same worker for as long as it is held. All
// CAS are seq_cst: they pair with each other and with the seq_cst
// `waiters` announcements (dispatch.cpp, announce). A writer with a ticket
// that is refused by readers registers the ticket in the word (readers then
// front-run it at most d.front_runs times); *cleared is set when its own
// registration was served (the ticket removed from the word).
bool try_lock(const access_system& d, resource_state& r, access_mode mode, unsigned holder, std::uint16_t ticket,
              bool* cleared) noexcept;
// Releases one lock; returns its holder byte before the release.
unsigned unlock(resource_state& r, access_mode mode) noexcept;
// All or none. On failure returns the resource that refused; *taken (if
// given) is the number of locks that were held for a moment and given
// back, and *cleared (if given) whether one of those moments served the
// request's own writer registration (the ticket is gone from that word).
resource_state* try_acquire_all(const access_system& d, const access_lock* locks, std::size_t n, std::uint16_t ticket,
                                unsigned holder, std::size_t* taken = nullptr, bool* cleared = nullptr) noexcept;
resource_state* try_acquire_all(const access_system& d, access_request& req, unsigned holder,
                                std::size_t* taken = nullptr, bool* cleared = nullptr) noexcept;

}  // namespace strata::detail
