# strata_add_module(NAME SOURCES ... [DEPS ...] [PRIVATE_DEPS ...])
#
# Every module looks alike: a compiled library strata_<NAME>, alias and
# export name strata::<NAME>, public headers in <module>/include (installed),
# sources in <module>/src (never installed), warnings on, position
# independent so it links into shared consumers.
#
# Static by default; -DBUILD_SHARED_LIBS=ON makes every module a shared
# library libstrata_<NAME>.so.<VERSION> with the SONAME
# libstrata_<NAME>.so.<MAJOR>.<MINOR>: before 1.0 a minor release may break
# the ABI, so the SONAME changes with the minor version. An installed module
# finds the others next to itself ($ORIGIN), so a relocated prefix needs no
# LD_LIBRARY_PATH.
set(STRATA_WARNINGS -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion)

function(strata_add_module name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS;PRIVATE_DEPS" ${ARGN})
  set(target strata_${name})
  add_library(${target} ${ARG_SOURCES})
  add_library(strata::${name} ALIAS ${target})
  set_target_properties(${target} PROPERTIES
    EXPORT_NAME ${name}
    OUTPUT_NAME strata_${name}
    POSITION_INDEPENDENT_CODE ON
    VERSION ${PROJECT_VERSION}
    SOVERSION ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR}
    INSTALL_RPATH $ORIGIN)
  target_compile_features(${target} PUBLIC cxx_std_20)
  target_compile_options(${target} PRIVATE ${STRATA_WARNINGS})
  target_include_directories(${target} PUBLIC
    $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/include>
    $<BUILD_INTERFACE:${PROJECT_BINARY_DIR}/generated/include>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>
    PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src)
  target_link_libraries(${target} PUBLIC ${ARG_DEPS} PRIVATE ${ARG_PRIVATE_DEPS})
  install(TARGETS ${target} EXPORT strataTargets
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
    RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  install(DIRECTORY include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  set_property(GLOBAL APPEND PROPERTY STRATA_MODULES strata::${name})
  set_property(GLOBAL APPEND PROPERTY STRATA_MODULE_LIBS strata_${name})
endfunction()
