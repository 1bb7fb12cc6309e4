# cmake -P script run by ctest (see CMakeLists.txt). Fails on the first step
# that does not work, with that step's output.
#
#   static  the build under test, installed into WORK_DIR/static/prefix: the
#           consumers link libstrata_*.a (no libstrata_* among their NEEDED)
#   shared  the sources configured with BUILD_SHARED_LIBS=ON in
#           WORK_DIR/shared-build, installed into WORK_DIR/shared/prefix:
#           every module is libstrata_<name>.so with the SONAME
#           libstrata_<name>.so.SOVERSION, and the consumers load the installed
#           ones (NEEDED by SONAME, resolved into the prefix by ldd)
cmake_minimum_required(VERSION 3.25)
string(REPLACE "," ";" module_libs "${MODULE_LIBS}")
find_program(LDD ldd)
if(NOT READELF OR NOT LDD)
  message(FATAL_ERROR "consumer check: needs readelf and ldd (binutils, libc-bin)")
endif()
set(topology STRATA_TOPOLOGY=pack:2\ numa:2\ l3:1\ core:4\ pu:2)
set(expected "workers=16 numa_nodes=4 tier0_of_worker0=1,2,3")

function(step what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "consumer check: ${what} failed (${rc}):\n${out}\n${err}")
  endif()
  set(step_output "${out}" PARENT_SCOPE)
endfunction()

# The libstrata_* entries among the NEEDED of an ELF file, into out_var.
function(needed_strata_libs file out_var)
  step("readelf -d ${file}" ${READELF} -d ${file})
  string(REGEX MATCHALL "\\(NEEDED\\)[^\n]*\\[libstrata_[^]\n]*\\]" lines "${step_output}")
  set(libs)
  foreach(line IN LISTS lines)
    string(REGEX REPLACE ".*\\[(libstrata_[^]\n]*)\\]" "\\1" lib "${line}")
    list(APPEND libs ${lib})
  endforeach()
  set(${out_var} ${libs} PARENT_SCOPE)
endfunction()

# A consumer built against a shared install: it needs at least one strata
# library (which ones depends on --as-needed), each by its SONAME, and the
# loader finds each in the prefix. ARGN: a launcher such as "cmake -E env".
function(check_loads_shared what file libdir)
  needed_strata_libs(${file} needed)
  if(NOT needed)
    message(FATAL_ERROR "consumer check: the ${what} needs no libstrata_*.so (readelf -d ${file})")
  endif()
  step("ldd ${file}" ${ARGN} ${LDD} ${file})
  foreach(soname IN LISTS needed)
    string(REGEX REPLACE "^lib(.*)\\.so\\..*$" "\\1" lib "${soname}")
    if(NOT lib IN_LIST module_libs OR NOT soname STREQUAL "lib${lib}.so.${SOVERSION}")
      message(FATAL_ERROR "consumer check: the ${what} needs ${soname}, expected lib<module>.so.${SOVERSION} "
                          "for one of ${module_libs}")
    endif()
    string(FIND "${step_output}" "${soname} => ${libdir}/${soname} " at)
    if(at EQUAL -1)
      message(FATAL_ERROR "consumer check: the ${what} does not load ${libdir}/${soname}:\n${step_output}")
    endif()
  endforeach()
endfunction()

# The installed package and both consumers, against one prefix.
function(check_install kind prefix)
  set(libdir ${prefix}/${LIBDIR})
  foreach(f ${LIBDIR}/cmake/strata/strataConfig.cmake ${LIBDIR}/cmake/strata/strataConfigVersion.cmake
            ${LIBDIR}/pkgconfig/strata.pc include/strata/strata.hpp include/strata/config.hpp bin/strata-info)
    if(NOT EXISTS ${prefix}/${f})
      message(FATAL_ERROR "consumer check (${kind}): the install lacks ${f}")
    endif()
  endforeach()
  foreach(lib IN LISTS module_libs)
    if(kind STREQUAL "static")
      if(NOT EXISTS ${libdir}/lib${lib}.a OR EXISTS ${libdir}/lib${lib}.so)
        message(FATAL_ERROR "consumer check (static): expected ${libdir}/lib${lib}.a and no lib${lib}.so")
      endif()
    else()
      foreach(f lib${lib}.so lib${lib}.so.${SOVERSION})
        if(NOT EXISTS ${libdir}/${f})
          message(FATAL_ERROR "consumer check (shared): the install lacks ${LIBDIR}/${f}")
        endif()
      endforeach()
      if(EXISTS ${libdir}/lib${lib}.a)
        message(FATAL_ERROR "consumer check (shared): a static lib${lib}.a was installed too")
      endif()
      step("readelf -d lib${lib}.so" ${READELF} -d ${libdir}/lib${lib}.so)
      if(NOT step_output MATCHES "\\(SONAME\\)[^\n]*\\[lib${lib}\\.so\\.${SOVERSION}\\]")
        message(FATAL_ERROR "consumer check (shared): lib${lib}.so lacks the SONAME lib${lib}.so.${SOVERSION}:\n"
                            "${step_output}")
      endif()
    endif()
  endforeach()
  # The shared strata-info finds its libraries through its install RPATH.
  step("run the installed strata-info (${kind})" ${CMAKE_COMMAND} -E env ${topology} ${prefix}/bin/strata-info --json)
  if(NOT step_output MATCHES "\"num_workers\":16")
    message(FATAL_ERROR "consumer check (${kind}): unexpected output from strata-info --json: ${step_output}")
  endif()

  # 1. CMake: find_package(strata CONFIG REQUIRED), target strata::strata.
  #    CMake gives the program a build-tree RPATH to the libraries it links.
  set(build ${WORK_DIR}/${kind}/consumer)
  step("configure the consumer (${kind})" ${CMAKE_COMMAND} -S ${CONSUMER_SOURCE_DIR} -B ${build} -G ${GENERATOR}
       -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_CXX_COMPILER=${CXX_COMPILER})
  step("build the consumer (${kind})" ${CMAKE_COMMAND} --build ${build})
  step("run the consumer (${kind})" ${CMAKE_COMMAND} -E env ${topology} ${build}/strata_consumer)
  if(NOT step_output MATCHES "${expected}")
    message(FATAL_ERROR "consumer check (${kind}): unexpected output from the CMake consumer: ${step_output}")
  endif()

  # 2. pkg-config: compile and link the same program with `pkg-config --cflags --libs strata`;
  #    against the shared install it runs with LD_LIBRARY_PATH, as a pkg-config user would.
  set(ENV{PKG_CONFIG_PATH} ${libdir}/pkgconfig)
  step("pkg-config (${kind})" pkg-config --cflags --libs strata)
  string(STRIP "${step_output}" pc_flags)
  separate_arguments(pc_flags UNIX_COMMAND "${pc_flags}")
  set(pc_consumer ${WORK_DIR}/${kind}/pc_consumer)
  step("compile with pkg-config flags (${kind})" ${CXX_COMPILER} ${CONSUMER_SOURCE_DIR}/main.cpp -o ${pc_consumer}
       ${pc_flags})
  set(launch ${CMAKE_COMMAND} -E env)
  if(kind STREQUAL "shared")
    list(APPEND launch LD_LIBRARY_PATH=${libdir})
  endif()
  step("run the pkg-config consumer (${kind})" ${launch} ${topology} ${pc_consumer})
  if(NOT step_output MATCHES "${expected}")
    message(FATAL_ERROR "consumer check (${kind}): unexpected output from the pkg-config consumer: ${step_output}")
  endif()

  if(kind STREQUAL "static")
    foreach(program ${build}/strata_consumer ${pc_consumer})
      needed_strata_libs(${program} needed)
      if(needed)
        message(FATAL_ERROR "consumer check (static): ${program} needs ${needed}")
      endif()
    endforeach()
  else()
    check_loads_shared("CMake consumer" ${build}/strata_consumer ${libdir})
    check_loads_shared("pkg-config consumer" ${pc_consumer} ${libdir} ${launch})
  endif()
  message(STATUS "consumer check (${kind}): CMake and pkg-config consumers built and ran against ${prefix}")
endfunction()

# Everything from an earlier run but the shared build directory.
file(GLOB earlier LIST_DIRECTORIES true ${WORK_DIR}/*)
list(REMOVE_ITEM earlier ${WORK_DIR}/shared-build)
if(earlier)
  file(REMOVE_RECURSE ${earlier})
endif()

step("install (static)" ${CMAKE_COMMAND} --install ${STRATA_BUILD_DIR} --prefix ${WORK_DIR}/static/prefix)
check_install(static ${WORK_DIR}/static/prefix)

set(shared_build ${WORK_DIR}/shared-build)
string(TOUPPER "${BUILD_TYPE}" build_type_upper)
step("configure the shared build" ${CMAKE_COMMAND} -S ${STRATA_SOURCE_DIR} -B ${shared_build} -G ${GENERATOR}
     -DCMAKE_C_COMPILER=${C_COMPILER} -DCMAKE_CXX_COMPILER=${CXX_COMPILER} -DCMAKE_BUILD_TYPE=${BUILD_TYPE}
     -DCMAKE_INSTALL_LIBDIR=${LIBDIR} -DBUILD_SHARED_LIBS=ON -DSTRATA_BUILD_TESTS=OFF -DSTRATA_BUILD_BENCH=OFF
     # Unoptimised, no debug info: this build checks the packaging, not the
     # code (54 s instead of 76 here; ctest runs nothing else meanwhile).
     "-DCMAKE_CXX_FLAGS_${build_type_upper}=-O0 -DNDEBUG")
step("build the shared build" ${CMAKE_COMMAND} --build ${shared_build})
step("install (shared)" ${CMAKE_COMMAND} --install ${shared_build} --prefix ${WORK_DIR}/shared/prefix)
check_install(shared ${WORK_DIR}/shared/prefix)
