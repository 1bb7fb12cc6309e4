# Mandatory dependencies, found through pkg-config (or, for the header-only
# libraries, their CMake packages). A missing one stops the configure with the
# Debian package that provides it.
find_package(PkgConfig QUIET)
if(NOT PKG_CONFIG_FOUND)
  message(FATAL_ERROR "strata needs pkg-config: apt-get install pkg-config")
endif()

function(strata_require_pkg prefix module debian_package)
  pkg_check_modules(${prefix} QUIET IMPORTED_TARGET GLOBAL ${module})
  if(NOT ${prefix}_FOUND)
    message(FATAL_ERROR "strata needs ${module} (pkg-config module '${module}' not found): "
                        "apt-get install ${debian_package}")
  endif()
  message(STATUS "strata: ${module} ${${prefix}_VERSION}")
endfunction()

strata_require_pkg(HWLOC hwloc libhwloc-dev)
if(HWLOC_VERSION VERSION_LESS 2.0)
  message(FATAL_ERROR "strata needs hwloc >= 2.0 (found ${HWLOC_VERSION})")
endif()

# libnuma ships a numa.pc on Debian 12; fall back to the plain library.
pkg_check_modules(NUMA QUIET IMPORTED_TARGET GLOBAL numa)
if(NOT NUMA_FOUND)
  find_library(NUMA_LIBRARY numa)
  find_path(NUMA_INCLUDE_DIR numa.h)
  if(NOT NUMA_LIBRARY OR NOT NUMA_INCLUDE_DIR)
    message(FATAL_ERROR "strata needs libnuma: apt-get install libnuma-dev")
  endif()
  add_library(PkgConfig::NUMA INTERFACE IMPORTED GLOBAL)
  target_link_libraries(PkgConfig::NUMA INTERFACE ${NUMA_LIBRARY})
  target_include_directories(PkgConfig::NUMA INTERFACE ${NUMA_INCLUDE_DIR})
endif()

find_package(Threads REQUIRED)

# Header-only libraries used inside strata's sources and tools only: no public
# header includes them and the installed package does not need them.
#   nlohmann-json  JSON output (the to_json() reports, strata-bench's files)
#   CLI11          strata-bench's command line
find_package(nlohmann_json 3 QUIET CONFIG)
if(NOT nlohmann_json_FOUND)
  message(FATAL_ERROR "strata needs nlohmann-json 3 (CMake package 'nlohmann_json' not found): "
                      "apt-get install nlohmann-json3-dev")
endif()
message(STATUS "strata: nlohmann_json ${nlohmann_json_VERSION}")
# For PRIVATE_DEPS of strata_add_module. CMake exports the private
# dependencies of a static library as $<LINK_ONLY:...> so that consumers link
# them; a header-only library needs no linking, and BUILD_INTERFACE keeps it
# out of the installed targets, so strataConfig.cmake needs no nlohmann-json.
set(STRATA_JSON_DEP $<BUILD_INTERFACE:nlohmann_json::nlohmann_json>)
if(STRATA_BUILD_BENCH)
  find_package(CLI11 2 QUIET CONFIG)
  if(NOT CLI11_FOUND)
    message(FATAL_ERROR "strata-bench needs CLI11 2 (CMake package 'CLI11' not found): "
                        "apt-get install libcli11-dev")
  endif()
  message(STATUS "strata: CLI11 ${CLI11_VERSION}")
endif()
