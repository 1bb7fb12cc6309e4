// placement_plan::compute(): places, worker-to-PU map and steal tiers.
#include <strata/topology/ext/place_list.hpp>
#include <strata/topology/placement.hpp>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <string>

namespace strata {
namespace {

// A place: its PUs split into primary slots (one per core: where workers go
// first) and secondary slots (SMT siblings, used only when workers outnumber
// cores).
struct place {
  std::vector<int> primary;
  std::vector<int> secondary;
};

void add_core(place& p, const core_info& c) {
  if (c.pus.empty()) return;
  p.primary.push_back(c.pus.front());
  p.secondary.insert(p.secondary.end(), c.pus.begin() + 1, c.pus.end());
}

std::vector<place> build_places(const topology& t, const place_spec& spec, const std::string& text) {
  std::vector<place> out;
  auto group_by = [&](auto key_of, std::size_t n_groups) {
    out.assign(n_groups, {});
    for (const auto& c : t.cores()) add_core(out[static_cast<std::size_t>(key_of(c))], c);
  };
  switch (spec.kind) {
    case place_kind::threads: {
      std::vector<pu_info> pus = t.pus();
      std::sort(pus.begin(), pus.end(), [](const pu_info& a, const pu_info& b) { return a.logical < b.logical; });
      for (const auto& pu : pus) out.push_back({{pu.os_index}, {}});
      break;
    }
    case place_kind::cores:
      for (const auto& c : t.cores()) {
        out.emplace_back();
        add_core(out.back(), c);
      }
      break;
    case place_kind::l3:
      if (t.num_l3() == 0) {
        throw config_error("strata: places '" + text + "' (STRATA_PLACES or config.places): machine '" + t.source() +
                           "' has no L3 cache; accepted here: threads, cores, numa, sockets or an explicit list");
      }
      group_by([](const core_info& c) { return c.l3; }, t.num_l3());
      break;
    case place_kind::numa:
      group_by([](const core_info& c) { return c.numa_node; }, t.num_numa_nodes());
      break;
    case place_kind::sockets:
      group_by([](const core_info& c) { return c.package; }, t.num_packages());
      break;
    case place_kind::explicit_list:
      for (const auto& pl : spec.places) {
        // Within a place, the first listed PU of each core is a primary
        // slot and its listed siblings are secondary: workers share a core
        // only when the place has no free core left.
        place p;
        std::vector<int> cores_seen;
        for (int pu : pl) {
          const pu_info* info = t.find_pu(pu);
          if (info == nullptr) {
            throw config_error("strata: places '" + text + "' (STRATA_PLACES or config.places) name PU " +
                               std::to_string(pu) + ", which is not usable on " + t.source() + " (usable PUs: " +
                               format_cpu_list(t.limits().usable_pus) + ")");
          }
          if (std::find(cores_seen.begin(), cores_seen.end(), info->core) == cores_seen.end()) {
            cores_seen.push_back(info->core);
            p.primary.push_back(pu);
          } else {
            p.secondary.push_back(pu);
          }
        }
        out.push_back(std::move(p));
      }
      break;
  }
  // Memory-only NUMA nodes and empty groups hold no slot.
  out.erase(std::remove_if(out.begin(), out.end(), [](const place& p) { return p.primary.empty(); }), out.end());
  if (spec.count) {
    if (*spec.count > out.size()) {
      throw config_error("strata: places '" + text + "' asks for " + std::to_string(*spec.count) + " places but " +
                         t.source() + " has " + std::to_string(out.size()));
    }
    out.resize(*spec.count);
  }
  return out;
}

// SLURM_CPUS_PER_TASK, validated; 0 when unset.
unsigned slurm_cpus_per_task() {
  const char* v = std::getenv("SLURM_CPUS_PER_TASK");
  if (v == nullptr) return 0;
  return static_cast<unsigned>(parse_decimal(v, "SLURM_CPUS_PER_TASK", 1, 1u << 20));
}

void note_env(std::vector<std::string>& notes, const char* name) {
  if (const char* v = std::getenv(name)) notes.push_back(std::string(name) + "=" + v);
}

}  // namespace

const char* to_string(tier_kind k) noexcept {
  switch (k) {
    case tier_kind::core: return "core";
    case tier_kind::l3: return "l3";
    case tier_kind::numa: return "numa";
    case tier_kind::package: return "package";
    case tier_kind::remote: return "remote";
  }
  return "?";
}

std::vector<tier_list> compute_steal_tiers(const topology& t, const std::vector<worker_place>& places) {
  std::vector<tier_list> all(places.size());
  for (std::size_t w = 0; w < places.size(); ++w) {
    const worker_place& me = places[w];
    struct level {
      tier_kind kind;
      std::vector<unsigned> members;  // includes w
    };
    level levels[4] = {{tier_kind::core, {}}, {tier_kind::l3, {}}, {tier_kind::numa, {}}, {tier_kind::package, {}}};
    std::map<int, std::vector<unsigned>> remote;  // distance -> workers
    for (const auto& o : places) {
      if (o.core == me.core) levels[0].members.push_back(o.worker);
      if (me.l3 >= 0 && o.l3 == me.l3) levels[1].members.push_back(o.worker);
      if (o.numa_node == me.numa_node) levels[2].members.push_back(o.worker);
      if (o.package == me.package) {
        levels[3].members.push_back(o.worker);
      } else {
        remote[t.numa_distance(me.numa_node, o.numa_node)].push_back(o.worker);
      }
    }
    // Nested sets (all contain w): nearest = smallest. Stable keeps the
    // fixed order core, l3, numa, package among equal sizes.
    std::stable_sort(std::begin(levels), std::end(levels),
                     [](const level& a, const level& b) { return a.members.size() < b.members.size(); });
    std::vector<bool> taken(places.size(), false);
    taken[w] = true;
    tier_list tiers;
    for (const auto& lv : levels) {
      steal_tier tier{lv.kind, 10, {}};
      for (unsigned v : lv.members) {
        if (taken[v]) continue;
        taken[v] = true;
        tier.workers.push_back(v);
        tier.distance = std::max(tier.distance, t.numa_distance(me.numa_node, places[v].numa_node));
      }
      if (!tier.workers.empty()) tiers.push_back(std::move(tier));
    }
    // Beyond the package, by NUMA distance; a worker already in a nearer
    // tier (a NUMA node that spans packages holds workers of both) is not
    // tried twice.
    for (auto& [distance, workers] : remote) {
      steal_tier tier{tier_kind::remote, distance, {}};
      for (unsigned v : workers) {
        if (!taken[v]) tier.workers.push_back(v);
        taken[v] = true;
      }
      if (!tier.workers.empty()) tiers.push_back(std::move(tier));
    }
    all[w] = std::move(tiers);
  }
  return all;
}

placement_plan placement_plan::compute(const placement_config& c) {
  placement_plan plan(c.topology ? *c.topology : topology::discover());
  const topology& t = plan.m_machine;
  plan.m_bind = c.bind;
  plan.m_places = c.places;
  auto& notes = plan.m_notes;

  const place_spec spec = parse_places(c.places, "places (STRATA_PLACES or config.places)");
  const std::vector<place> places = build_places(t, spec, c.places);

  // Slot order for close: every primary slot place by place, then the SMT siblings.
  std::vector<int> close_order;
  std::size_t n_primary = 0, n_all = 0;
  for (const auto& p : places) {
    close_order.insert(close_order.end(), p.primary.begin(), p.primary.end());
    n_primary += p.primary.size();
  }
  for (const auto& p : places) close_order.insert(close_order.end(), p.secondary.begin(), p.secondary.end());
  n_all = close_order.size();

  // Worker count.
  unsigned n = 0;
  if (c.deterministic_seed) {
    n = 1;
    notes.emplace_back("deterministic_seed set: 1 worker");
    if (c.workers && *c.workers != 1) {
      throw config_error("strata: deterministic_seed (STRATA_DETERMINISTIC_SEED) runs exactly 1 worker, but " +
                         std::to_string(*c.workers) + " workers were requested (STRATA_NUM_WORKERS or config.workers)");
    }
  } else if (c.workers) {
    n = *c.workers;
    notes.push_back("workers=" + std::to_string(n) + " set explicitly (STRATA_NUM_WORKERS or config.workers)");
  } else {
    n = static_cast<unsigned>(n_primary);
    notes.push_back("default: one worker per core of the places (" + std::to_string(n) + ")");
    if (t.is_this_system()) {
      if (const unsigned slurm = slurm_cpus_per_task()) {
        if (slurm < n) {
          n = slurm;
          notes.push_back("SLURM_CPUS_PER_TASK=" + std::to_string(slurm) + " limits the workers to " + std::to_string(n));
        } else if (slurm > n) {
          notes.push_back("SLURM_CPUS_PER_TASK=" + std::to_string(slurm) + " exceeds the " + std::to_string(n) +
                          " usable cores: check srun -c and --cpu-bind (Slurm 22.05 srun does not inherit -c)");
        }
      }
    }
  }
  if (n == 0) throw config_error("strata: 0 workers requested; accepted: at least 1");
  if (n > n_all && !c.oversubscribe) {
    // Inside a SLURM step the PUs are what the allocation gave this task:
    // say so, with the variables that decided it.
    std::string slurm;
    if (t.is_this_system() && std::getenv("SLURM_JOB_ID") != nullptr) {
      const char* cpt = std::getenv("SLURM_CPUS_PER_TASK");
      const char* bind = std::getenv("SLURM_CPU_BIND");
      slurm = "; the SLURM allocation gives this task " + std::to_string(n_all) + " (SLURM_CPUS_PER_TASK=" +
              (cpt != nullptr ? cpt : "unset") + ", SLURM_CPU_BIND=" + (bind != nullptr ? bind : "unset") +
              "): ask for more with srun -c / sbatch --cpus-per-task (Slurm 22.05 srun does not inherit -c), or";
    }
    throw config_error("strata: " + std::to_string(n) + " workers requested but places '" + c.places + "' on " +
                       t.source() + " offer " + std::to_string(n_all) + " PU(s) (" + format_cpu_list(close_order) +
                       ")" + (slurm.empty() ? ";" : slurm) +
                       " set STRATA_OVERSUBSCRIBE=1 (config.oversubscribe) to run more workers than PUs");
  }
  if (n > n_all) notes.push_back("oversubscribed: " + std::to_string(n) + " workers on " + std::to_string(n_all) + " PUs");

  // Worker -> PU, after OpenMP's OMP_PROC_BIND over the P places:
  //   close,  n <= P: worker i in place i (one worker per place);
  //   spread, n <= P: worker i in place floor(i * P / n) (the first place of
  //                   its share of the places);
  //   either, n > P:  place floor(i * P / n): consecutive workers share a
  //                   place, floor(n/P) or ceil(n/P) each.
  // Within a place a worker takes the next free slot, a core of its own
  // before an SMT sibling. With close and n <= P, places that bring a core
  // no earlier place has (places=threads: one PU per place, the second PU
  // of a core brings none) are taken first, so two workers share a core
  // only when every core of the places has one.
  std::vector<int> pu_of(n, -1);
  {
    std::map<int, bool> used;
    std::vector<std::size_t> next(places.size(), 0);
    const std::size_t np = places.size();
    std::vector<std::size_t> close_places;  // the places in the order close takes them (n <= P)
    if (c.bind != bind_policy::spread && n <= np) {
      std::vector<bool> core_seen(t.num_cores(), false);
      std::vector<std::size_t> later;
      for (std::size_t pi = 0; pi < np; ++pi) {
        bool fresh = false;
        for (int pu : places[pi].primary) {
          const auto core = static_cast<std::size_t>(t.find_pu(pu)->core);
          if (!core_seen[core]) fresh = true;
          core_seen[core] = true;
        }
        (fresh ? close_places : later).push_back(pi);
      }
      close_places.insert(close_places.end(), later.begin(), later.end());
    }
    for (unsigned i = 0; i < n; ++i) {
      const std::size_t pi = !close_places.empty() ? close_places[i] : static_cast<std::size_t>(i) * np / n;
      const place& p = places[pi];
      while (next[pi] < p.primary.size() + p.secondary.size()) {
        const std::size_t k = next[pi]++;
        const int pu = k < p.primary.size() ? p.primary[k] : p.secondary[k - p.primary.size()];
        if (!used[pu]) {
          pu_of[i] = pu;
          used[pu] = true;
          break;
        }
      }
    }
    // Overflow (a full place, or oversubscription): next free slot in close order, then wrap.
    std::size_t cursor = 0;
    for (unsigned i = 0; i < n; ++i) {
      if (pu_of[i] >= 0) continue;
      for (std::size_t tries = 0; tries < n_all && used[close_order[cursor % n_all]]; ++tries) ++cursor;
      pu_of[i] = close_order[cursor % n_all];
      used[pu_of[i]] = true;
      ++cursor;
    }
  }

  for (unsigned i = 0; i < n; ++i) {
    const pu_info* pu = t.find_pu(pu_of[i]);
    plan.m_workers.push_back({i, pu->os_index, pu->core, pu->l3, pu->numa_node, pu->package,
                              t.numa_nodes()[static_cast<std::size_t>(pu->numa_node)].os_index});
  }
  plan.m_tiers = compute_steal_tiers(t, plan.m_workers);

  // What limited the CPUs.
  const cpu_limits& lim = t.limits();
  if (t.is_this_system()) {
    if (lim.allowed_pus != lim.machine_pus) {
      notes.push_back("cgroup/cpuset allows PUs " + format_cpu_list(lim.allowed_pus) + " of " +
                      format_cpu_list(lim.machine_pus));
    }
    if (lim.bound_pus != lim.allowed_pus) {
      notes.push_back("process binding (taskset, srun --cpu-bind, mpirun --bind-to, likwid-pin) limits PUs to " +
                      format_cpu_list(lim.bound_pus));
    }
  } else {
    notes.push_back("machine is " + t.source() + ": not this system, workers are not pinned");
    if (lim.allowed_pus != lim.machine_pus) {
      notes.push_back("the description allows PUs " + format_cpu_list(lim.allowed_pus) + " of " +
                      format_cpu_list(lim.machine_pus));
    }
  }
  if (lim.allowed_numa_nodes != lim.machine_numa_nodes) {
    notes.push_back(std::string(t.is_this_system() ? "cgroup/cpuset (cpuset.mems)" : "the description") +
                    " allows NUMA nodes " + format_cpu_list(lim.allowed_numa_nodes) + " of " +
                    format_cpu_list(lim.machine_numa_nodes) +
                    ": the others, and packages left with no usable core and no allowed node, are left out");
  }
  if (c.bind == bind_policy::none) notes.emplace_back("bind=none: workers float; tiers use the nominal placement");
  for (const char* v : {"SLURM_JOB_ID", "SLURM_CPUS_PER_TASK", "SLURM_CPU_BIND", "SLURM_TASKS_PER_NODE",
                        "SLURM_LOCALID", "OMPI_COMM_WORLD_LOCAL_RANK"}) {
    note_env(notes, v);
  }
  return plan;
}

const tier_list& placement_plan::tiers_of(unsigned worker) const {
  if (worker >= m_tiers.size()) {
    throw config_error("strata: worker " + std::to_string(worker) + " does not exist (workers 0.." +
                       std::to_string(m_tiers.size() - 1) + ")");
  }
  return m_tiers[worker];
}

}  // namespace strata
