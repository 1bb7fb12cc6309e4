// --plot DIR: the run's records as pictures and a one-page summary.
//
// strata-bench writes DIR/results.json (the --json records) and
// DIR/machine.txt (strata's machine and placement report, when strata is
// built in), then runs tools/plot_bench.py (matplotlib, Debian's
// python3-matplotlib) on them: DIR/time.png, DIR/speedup.png,
// DIR/vs-best-peer.png and DIR/index.html.
#pragma once

#include <string>
#include <vector>

namespace strata_bench {

// Creates DIR (and its parents); the reason when that fails, else empty.
std::string prepare_plot_dir(const std::string& dir);
// Writes machine.txt and runs the plot script on json_path; false (said on
// stderr) when the script is missing or fails.
bool write_plots(const std::string& dir, const std::string& json_path, const std::vector<unsigned>& threads);

}  // namespace strata_bench
