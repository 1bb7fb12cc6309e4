// strata: the in-process API in one header (target strata::strata): the
// core runtime, actors, lock-mode and dataflow tasks, event loops, NUMA memory,
// topology.
#pragma once

#include <strata/access/dataflow.hpp>
#include <strata/access/resource.hpp>
#include <strata/actors/actor.hpp>
#include <strata/config.hpp>
#include <strata/io/event_loop.hpp>
#include <strata/numa_alloc/memory.hpp>
#include <strata/numa_alloc/numa_allocator.hpp>
#include <strata/runtime/config.hpp>
#include <strata/runtime/error.hpp>
#include <strata/runtime/first_touch.hpp>
#include <strata/runtime/future.hpp>
#include <strata/runtime/invoke.hpp>
#include <strata/runtime/parallel.hpp>
#include <strata/runtime/runtime.hpp>
#include <strata/runtime/stats.hpp>
#include <strata/runtime/task_group.hpp>
#include <strata/topology/config.hpp>
#include <strata/topology/error.hpp>
#include <strata/topology/ids.hpp>
#include <strata/topology/placement.hpp>
#include <strata/topology/topology.hpp>
