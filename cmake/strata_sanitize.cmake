# STRATA_SANITIZE=address|thread|undefined. "address" also enables UBSan.
# The thread build defines STRATA_TSAN so concurrency code swaps stand-alone
# fences for release/acquire operations (TSAN does not model fences).
if(STRATA_SANITIZE STREQUAL "address")
  set(_strata_san_flags -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
elseif(STRATA_SANITIZE STREQUAL "thread")
  set(_strata_san_flags -fsanitize=thread -fno-omit-frame-pointer)
  add_compile_definitions(STRATA_TSAN=1)
elseif(STRATA_SANITIZE STREQUAL "undefined")
  set(_strata_san_flags -fsanitize=undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
elseif(NOT STRATA_SANITIZE STREQUAL "")
  message(FATAL_ERROR "STRATA_SANITIZE='${STRATA_SANITIZE}': accepted values are address, thread, undefined or empty")
endif()
if(_strata_san_flags)
  add_compile_options(${_strata_san_flags})
  add_link_options(${_strata_san_flags})
endif()
