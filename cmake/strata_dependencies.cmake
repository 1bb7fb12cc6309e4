# Mandatory dependencies, found through pkg-config. A missing one stops the
# configure with the Debian package that provides it.
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
