# Installed package: strataConfig.cmake, strataConfigVersion.cmake, the
# exported targets (strata::strata, strata::<module>) and strata.pc.
include(CMakePackageConfigHelpers)
set(STRATA_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/strata)

install(EXPORT strataTargets NAMESPACE strata:: DESTINATION ${STRATA_CMAKE_DIR})
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/strataConfig.cmake.in
  ${PROJECT_BINARY_DIR}/strataConfig.cmake INSTALL_DESTINATION ${STRATA_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/strataConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/strataConfig.cmake ${PROJECT_BINARY_DIR}/strataConfigVersion.cmake
  DESTINATION ${STRATA_CMAKE_DIR})

# pkg-config: libraries in link order (dependents first). hwloc and libnuma
# are linked into shared strata libraries, so a shared install lists them
# only for static linking (Libs.private); a static install needs them in Libs.
get_property(_strata_libs GLOBAL PROPERTY STRATA_MODULE_LIBS)
list(REVERSE _strata_libs)
list(TRANSFORM _strata_libs PREPEND "-l" OUTPUT_VARIABLE _strata_lflags)
set(_strata_dep_lflags -lhwloc -lnuma)
if(BUILD_SHARED_LIBS)
  string(JOIN " " STRATA_PC_LIBS ${_strata_lflags})
  string(JOIN " " STRATA_PC_LIBS_PRIVATE ${_strata_dep_lflags})
else()
  string(JOIN " " STRATA_PC_LIBS ${_strata_lflags} ${_strata_dep_lflags})
  set(STRATA_PC_LIBS_PRIVATE "")
endif()
# Relocatable: the prefix is found relative to the .pc file itself.
file(RELATIVE_PATH STRATA_PC_UP /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
configure_file(${CMAKE_CURRENT_LIST_DIR}/strata.pc.in ${PROJECT_BINARY_DIR}/strata.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/strata.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
