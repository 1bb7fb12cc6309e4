// The CPUs of the harness's own thread, per runtime.
//
// With OMP_PROC_BIND set (strata-bench sets it by default, see main.cpp),
// GNU libgomp pins the initial thread to its first place as soon as it is
// loaded, before main. Every thread started from it afterwards inherits that
// one CPU: oneTBB's workers, and strata, which reads the calling thread's
// binding as the process binding (taskset, srun) and would put all its
// workers on that CPU. So the harness remembers libgomp's first place and the
// CPUs of all its places (the process's CPUs as libgomp found them, before it
// pinned anything), and before each configuration gives its thread the first
// place for omp and all the CPUs for every other runtime.
//
// Without libgomp in the process, or with OMP_PROC_BIND unset or false,
// nothing is pinned and these do nothing.
#pragma once

#include "harness/suite.hpp"

namespace strata_bench {

// Call once, from main(), on the initial thread, before anything reads the
// thread's CPUs.
void remember_main_thread_affinity();
// The CPUs the process may use: those of libgomp's places when it pinned the
// initial thread to one of them, else the thread's own (usable_cpus). The
// default thread list counts these.
unsigned process_cpus();
// The calling (initial) thread's CPUs for a configuration of runtime r.
void set_main_thread_affinity_for(runtime_id r);

}  // namespace strata_bench
