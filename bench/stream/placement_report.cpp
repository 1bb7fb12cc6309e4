#include "stream/placement_report.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>

#include <strata/numa_alloc/memory.hpp>

#include "common/strata_session.hpp"
#include "harness/json_output.hpp"
#include "harness/report.hpp"
#include "stream/strata_arrays.hpp"

namespace strata_bench::stream {
namespace {

struct tally {
  std::size_t sampled = 0, local = 0, remote = 0;
  std::size_t no_node = 0;              // node_of() == -1: not resident (never touched, or being migrated)
  std::map<int, std::size_t> per_node;  // node (-1: no node) -> pages

  void add(int page_node, int home) {
    ++sampled;
    ++per_node[page_node];
    if (page_node < 0) {
      ++no_node;
    } else if (page_node == home) {
      ++local;
    } else {
      ++remote;
    }
  }
  void add(const tally& t) {
    sampled += t.sampled;
    local += t.local;
    remote += t.remote;
    no_node += t.no_node;
    for (const auto& [node, pages] : t.per_node) {
      per_node[node] += pages;
    }
  }
  std::string local_percent() const {
    if (sampled == 0) {
      return "-";
    }
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f", 100.0 * static_cast<double>(local) / static_cast<double>(sampled));
    return buf;
  }
  // "0:48 1:48", "-1" for pages without a node.
  std::string nodes_text() const {
    std::string s;
    for (const auto& [node, pages] : per_node) {
      if (!s.empty()) {
        s += ' ';
      }
      s += std::to_string(node);
      s += ':';
      s += std::to_string(pages);
    }
    return s.empty() ? "-" : s;
  }
  // The tally's items of a JSON record.
  void add_to(nlohmann::ordered_json& j) const {
    j["sampled"] = sampled;
    j["local"] = local;
    j["remote"] = remote;
    j["no_node"] = no_node;
    j["local_fraction"] = sampled == 0 ? nlohmann::ordered_json(nullptr)
                                       : nlohmann::ordered_json(static_cast<double>(local) /
                                                                static_cast<double>(sampled));
    nlohmann::ordered_json nodes = nlohmann::ordered_json::object();
    for (const auto& [node, pages] : per_node) {
      nodes[std::to_string(node)] = pages;
    }
    j["pages_per_node"] = std::move(nodes);
  }
};

struct worker_result {
  unsigned worker = 0;
  int pu = -1;
  int node = -1;  // OS index
  tally pages;
};

struct placement_result {
  placement where = placement::serial_init;
  unsigned threads = 0;
  bool pinned = false;
  std::string check;  // "ok" or "FAIL: ..."
  std::vector<worker_result> workers;
  tally all;
};

std::size_t page_bytes() {
  const long p = sysconf(_SC_PAGESIZE);
  return p > 0 ? static_cast<std::size_t>(p) : 4096;
}

// The first word of the THP setting ("[always] madvise never" -> "always").
std::string huge_pages_mode() {
  std::ifstream f("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string line;
  if (!std::getline(f, line)) {
    return "unknown";
  }
  const std::size_t open = line.find('[');
  const std::size_t close = line.find(']', open);
  return open == std::string::npos || close == std::string::npos ? line : line.substr(open + 1, close - open - 1);
}

// Automatic NUMA balancing migrates pages toward the threads that use them,
// after the fact: "on", "off" or "unknown".
std::string numa_balancing_mode() {
  std::ifstream f("/proc/sys/kernel/numa_balancing");
  int mode = -1;
  if (!(f >> mode)) {
    return "unknown";
  }
  return mode == 0 ? "off" : "on (" + std::to_string(mode) + ")";
}

// Builds the arrays, runs one checked pass, samples the pages.
placement_result examine(strata::runtime& rt, placement where, std::size_t n) {
  placement_result res;
  res.where = where;
  res.threads = rt.num_workers();
  res.pinned = rt.pinned();
  try {
    placed_arrays arrays(rt, where, n);
    rt.submit([&rt, &arrays] { arrays.run_passes(rt, 1); }).get();
    const verdict v = arrays.finish_run();
    res.check = v.ok ? "ok" : "FAIL: " + v.detail;

    const std::size_t page = page_bytes();
    const std::size_t stride = page * k_report_page_stride;
    std::vector<const void*> pages;
    std::vector<unsigned> owner;  // worker whose chunk holds pages[k]
    for (unsigned w = 0; w < arrays.workers(); ++w) {
      const std::size_t count = arrays.bound(w + 1) - arrays.bound(w);
      for (std::size_t a = 0; a < 3 && count > 0; ++a) {
        const auto begin = reinterpret_cast<std::uintptr_t>(arrays.chunk(a, w));
        const std::uintptr_t end = begin + count * sizeof(double);
        for (std::uintptr_t p = (begin + page - 1) / page * page; p + page <= end; p += stride) {
          pages.push_back(reinterpret_cast<const void*>(p));
          owner.push_back(w);
        }
      }
    }
    std::vector<int> nodes(pages.size(), -1);
    strata::nodes_of(pages.data(), pages.size(), nodes.data());

    res.workers.resize(arrays.workers());
    for (unsigned w = 0; w < arrays.workers(); ++w) {
      res.workers[w].worker = w;
      res.workers[w].pu = rt.placement()[w].pu_os_index;
      res.workers[w].node = worker_node(rt, w);
    }
    for (std::size_t k = 0; k < pages.size(); ++k) {
      worker_result& wr = res.workers[owner[k]];
      wr.pages.add(nodes[k], wr.node);
    }
    for (const worker_result& wr : res.workers) {
      res.all.add(wr.pages);
    }
  } catch (const std::exception& e) {
    res.check = std::string("FAIL: ") + e.what();
  }
  return res;
}

void print_report(std::ostream& out, const std::vector<placement_result>& results) {
  using row = std::vector<std::string>;
  std::vector<row> rows{{"placement", "threads", "worker", "cpu", "node", "sampled", "local", "remote",
                         "no node", "local %", "pages per node", "check"}};
  auto number = [](int v) { return v < 0 ? std::string("-") : std::to_string(v); };
  for (const placement_result& r : results) {
    const std::string where(name(r.where));
    for (const worker_result& w : r.workers) {
      rows.push_back({where, std::to_string(r.threads), std::to_string(w.worker), number(w.pu), number(w.node),
                      std::to_string(w.pages.sampled), std::to_string(w.pages.local),
                      std::to_string(w.pages.remote), std::to_string(w.pages.no_node), w.pages.local_percent(),
                      w.pages.nodes_text(), ""});
    }
    rows.push_back({where, std::to_string(r.threads), "all", "-", "-", std::to_string(r.all.sampled),
                    std::to_string(r.all.local), std::to_string(r.all.remote), std::to_string(r.all.no_node),
                    r.all.local_percent(), r.all.nodes_text(), r.check});
  }
  std::vector<std::size_t> width(rows.front().size(), 0);
  for (const row& x : rows) {
    for (std::size_t c = 0; c < x.size(); ++c) {
      width[c] = std::max(width[c], x[c].size());
    }
  }
  for (const row& x : rows) {
    std::string line;
    for (std::size_t c = 0; c < x.size(); ++c) {
      const std::string pad(width[c] - x[c].size(), ' ');
      const bool left = c == 0 || c >= 10;  // names and text left, numbers right
      line += c == 0 ? "" : "  ";
      line += left ? x[c] + pad : pad + x[c];
    }
    line.erase(line.find_last_not_of(' ') + 1);
    out << line << '\n';
  }
}

void write_report_json(std::ostream& out, const std::vector<placement_result>& results, std::size_t n) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const placement_result& r : results) {
    nlohmann::ordered_json j = {{"placement", name(r.where)},
                                {"threads", r.threads},
                                {"n", n},
                                {"page_bytes", page_bytes()},
                                {"sample_every_pages", k_report_page_stride},
                                {"pinned", r.pinned}};
    r.all.add_to(j);
    j["check"] = r.check;
    nlohmann::ordered_json workers = nlohmann::ordered_json::array();
    for (const worker_result& w : r.workers) {
      nlohmann::ordered_json wj = {{"worker", w.worker}, {"pu", w.pu}, {"node", w.node}};
      w.pages.add_to(wj);
      workers.push_back(std::move(wj));
    }
    j["workers"] = std::move(workers);
    list.push_back(std::move(j));
  }
  write_json_lines(out, list);
}

}  // namespace

int run_placement_report(const std::vector<unsigned>& threads, std::size_t n, const std::string& json_path) {
  if (n == 0) {
    try {
      n = array_size();
    } catch (const std::invalid_argument& e) {
      std::cerr << "strata-bench: " << e.what() << "\n";
      return 2;
    }
  }
  std::ofstream json;
  if (!json_path.empty()) {
    json.open(json_path);
    if (!json) {
      std::cerr << "strata-bench: --json '" << json_path << "': cannot open the file for writing\n";
      return 2;
    }
  }

  std::string allowed;
  for (int node : strata::numa_allowed_nodes()) {
    if (!allowed.empty()) {
      allowed += ',';
    }
    allowed += std::to_string(node);
  }
  std::cout << "placement report: n = " << n << " doubles per array, 3 arrays ("
            << (3 * n * sizeof(double) + (std::size_t{1} << 19)) / (std::size_t{1} << 20)
            << " MiB); every " << k_report_page_stride << "th " << page_bytes()
            << "-byte page of each worker's chunk sampled after one triad pass\n"
            << "NUMA binding: " << (strata::numa_binding_available() ? "yes" : "no") << "; nodes: " << allowed
            << "; transparent huge pages: " << huge_pages_mode()
            << "; automatic NUMA balancing: " << numa_balancing_mode() << "\n"
            << "no node: move_pages gave no node (never touched, or being migrated)\n";

  std::vector<placement_result> results;
  for (unsigned p : threads) {
    std::shared_ptr<strata::runtime> rt;
    try {
      rt = make_strata_runtime(p);
    } catch (const std::exception& e) {
      for (placement where : k_placements) {
        placement_result r;
        r.where = where;
        r.threads = p;
        r.check = std::string("FAIL: setup: ") + e.what();
        results.push_back(std::move(r));
      }
      continue;
    }
    std::cout << "threads " << p << ": workers " << (rt->pinned() ? "pinned" : "NOT pinned (node of a worker is "
                                                                                  "where it was planned, not where it ran)")
              << "\n";
    for (placement where : k_placements) {
      results.push_back(examine(*rt, where, n));
      std::cerr << "strata-bench: placement " << name(where) << " threads=" << p << " "
                << results.back().all.local_percent() << " % local " << results.back().check << std::endl;
    }
  }
  std::cout << "\n";
  print_report(std::cout, results);

  if (json.is_open()) {
    write_report_json(json, results, n);
    json.close();
    if (!json) {
      std::cerr << "strata-bench: --json '" << json_path << "': write failed\n";
      return 1;
    }
  }
  const bool all_ok =
      std::all_of(results.begin(), results.end(), [](const placement_result& r) { return r.check == "ok"; });
  return all_ok ? 0 : 1;
}

}  // namespace strata_bench::stream
