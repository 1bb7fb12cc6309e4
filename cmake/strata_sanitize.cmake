# STRATA_SANITIZE=address|thread|undefined. "address" also enables UBSan.
# The thread build sets STRATA_TSAN to 1 in the generated strata/config.hpp,
# so concurrency code swaps stand-alone fences for release/acquire
# operations (TSAN does not model fences), in the libraries and in every
# program built against them alike.
if(STRATA_SANITIZE STREQUAL "address")
  set(_strata_san_flags -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
elseif(STRATA_SANITIZE STREQUAL "thread")
  set(_strata_san_flags -fsanitize=thread -fno-omit-frame-pointer)
elseif(STRATA_SANITIZE STREQUAL "undefined")
  set(_strata_san_flags -fsanitize=undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
elseif(NOT STRATA_SANITIZE STREQUAL "")
  message(FATAL_ERROR "STRATA_SANITIZE='${STRATA_SANITIZE}': accepted values are address, thread, undefined or empty")
endif()
# Sanitizer builds exist to run the tests: their reports need file:line and
# no more, so every object gets line tables (-g1); full -g more than doubles
# the compile time of an instrumented object. The ASan build also compiles
# at -O1, the level the ASan documentation advises (it keeps the stack
# traces exact), which halves its compile time again; the TSan build keeps
# the build type's -O2, the optimised code whose races it is there to see.
if(STRATA_SANITIZE STREQUAL "address" OR STRATA_SANITIZE STREQUAL "undefined")
  add_compile_options("$<$<CONFIG:RelWithDebInfo>:-O1;-g1>")
elseif(STRATA_SANITIZE STREQUAL "thread")
  add_compile_options("$<$<CONFIG:RelWithDebInfo>:-g1>")
endif()
if(_strata_san_flags)
  add_compile_options(${_strata_san_flags})
  add_link_options(${_strata_san_flags})
endif()
if(STRATA_SANITIZE STREQUAL "thread")
  set(STRATA_TSAN_VALUE 1)
else()
  set(STRATA_TSAN_VALUE 0)
endif()
