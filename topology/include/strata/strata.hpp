// strata: the in-process API in one header.
#pragma once

#include <strata/config.hpp>
#include <strata/topology/config.hpp>
#include <strata/topology/error.hpp>
#include <strata/topology/placement.hpp>
#include <strata/topology/topology.hpp>
