// strata-bench --placement-report: where the pages of the strata STREAM
// placements really are.
//
// For each thread count P, one strata runtime of P workers; for each
// placement of stream/strata_arrays.hpp, the three arrays are built exactly
// as the benchmark builds them, one triad pass runs (numa_static) and is
// checked, and then every 64th page of each worker's chunk of each array is
// sampled: strata::nodes_of (move_pages) says which node holds it (-1, "no
// node": never touched, or in the middle of a migration), compared with the
// node of worker w, the one that computes that chunk. Only pages that lie
// wholly inside a chunk are sampled.
//
// Expected on a NUMA machine with pinned workers: per-node 100 % local
// (bound); first-touch close to 100 % (a transparent huge page straddling
// two chunks goes to whichever worker writes it first); interleaved about
// 1/nodes; serial-init the share of workers on the node of the thread that
// wrote the arrays. Automatic NUMA balancing moves unbound pages afterwards
// (first-touch, serial-init), so those two vary from run to run where it is
// on; the header line says whether THP and balancing are on. One node:
// everything is local.
//
// Output: a table on stdout (one row per worker and one "all" row per
// placement), and the same as JSON with --json FILE. Exit status 0 when every
// triad check passed, 1 otherwise (locality itself is reported, not judged).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace strata_bench::stream {

inline constexpr std::size_t k_report_page_stride = 64;  // sample every 64th page

// n == 0: the benchmark's size (STRATA_BENCH_STREAM_N or 2^25).
int run_placement_report(const std::vector<unsigned>& threads, std::size_t n, const std::string& json_path);

}  // namespace strata_bench::stream
