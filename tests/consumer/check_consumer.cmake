# cmake -P script run by ctest (see CMakeLists.txt). Fails on the first step
# that does not work, with that step's output.
function(step what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "consumer check: ${what} failed (${rc}):\n${out}\n${err}")
  endif()
  set(step_output "${out}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)
step("install" ${CMAKE_COMMAND} --install ${STRATA_BUILD_DIR} --prefix ${prefix})
foreach(f lib/cmake/strata/strataConfig.cmake lib/cmake/strata/strataConfigVersion.cmake
          lib/pkgconfig/strata.pc include/strata/strata.hpp include/strata/config.hpp bin/strata-info)
  if(NOT EXISTS ${prefix}/${f})
    message(FATAL_ERROR "consumer check: the install lacks ${f}")
  endif()
endforeach()

# 1. CMake: find_package(strata CONFIG REQUIRED), target strata::strata.
step("configure the consumer" ${CMAKE_COMMAND} -S ${CONSUMER_SOURCE_DIR} -B ${WORK_DIR}/build -G ${GENERATOR}
     -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_CXX_COMPILER=${CXX_COMPILER})
step("build the consumer" ${CMAKE_COMMAND} --build ${WORK_DIR}/build)
step("run the consumer" ${CMAKE_COMMAND} -E env STRATA_TOPOLOGY=pack:2\ numa:2\ l3:1\ core:4\ pu:2
     ${WORK_DIR}/build/strata_consumer)
if(NOT step_output MATCHES "workers=16 numa_nodes=4 tier0_of_worker0=1,2,3")
  message(FATAL_ERROR "consumer check: unexpected output from the CMake consumer: ${step_output}")
endif()

# 2. pkg-config: compile and link the same program with `pkg-config --cflags --libs strata`.
set(ENV{PKG_CONFIG_PATH} ${prefix}/lib/pkgconfig)
step("pkg-config" pkg-config --cflags --libs strata)
string(STRIP "${step_output}" pc_flags)
separate_arguments(pc_flags UNIX_COMMAND "${pc_flags}")
step("compile with pkg-config flags" ${CXX_COMPILER} ${CONSUMER_SOURCE_DIR}/main.cpp -o ${WORK_DIR}/pc_consumer ${pc_flags})
step("run the pkg-config consumer" ${CMAKE_COMMAND} -E env STRATA_TOPOLOGY=pack:2\ numa:2\ l3:1\ core:4\ pu:2
     ${WORK_DIR}/pc_consumer)
if(NOT step_output MATCHES "workers=16 numa_nodes=4 tier0_of_worker0=1,2,3")
  message(FATAL_ERROR "consumer check: unexpected output from the pkg-config consumer: ${step_output}")
endif()
message(STATUS "consumer check: CMake and pkg-config consumers built and ran against ${prefix}")
