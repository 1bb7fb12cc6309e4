# cmake -P script (bench/tests/CMakeLists.txt): strata-bench without
# --threads measures every thread count from 1 to the process's CPUs, also
# when libgomp pinned its initial thread to one CPU before main (the default
# OMP_PROC_BIND=close the harness sets).
execute_process(COMMAND nproc OUTPUT_VARIABLE cpus OUTPUT_STRIP_TRAILING_WHITESPACE)
execute_process(COMMAND ${BENCH} --filter ^forkjoin$ --runtimes strata --reps 1 --json ${OUT}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "strata-bench failed (${rc}):\n${out}\n${err}")
endif()
file(READ ${OUT} records)
foreach(p RANGE 1 ${cpus})
  if(NOT records MATCHES "\"threads\": ${p},")
    message(FATAL_ERROR "no record at ${p} thread(s) of ${cpus} CPUs without --threads:\n${records}\n${err}")
  endif()
endforeach()
message(STATUS "default thread list: 1..${cpus}")
