# Every bad argument makes strata-bench exit 2 with a message naming the
# argument and what is accepted. Run: cmake -DBENCH=path -P bad_command_line.cmake

# expect_usage_error(REGEX ARG...): strata-bench ARG... exits 2, stderr matches REGEX.
function(expect_usage_error expected)
  execute_process(COMMAND ${BENCH} ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 2)
    message(FATAL_ERROR "strata-bench ${ARGN}: exit status ${rc}, expected 2\n${err}")
  endif()
  if(NOT err MATCHES "${expected}")
    message(FATAL_ERROR "strata-bench ${ARGN}: stderr does not match '${expected}':\n${err}")
  endif()
endfunction()

expect_usage_error("--runtimes 'serial,bogus': unknown runtime 'bogus'. accepted: .*serial, strata, tbb, omp, omp-llvm"
                   --runtimes serial,bogus)
expect_usage_error("--threads '0': '0' is not a thread count or range. accepted" --threads 0)
expect_usage_error("--threads '4-2'" --threads 4-2)
expect_usage_error("--threads '1,,2'" --threads 1,,2)
expect_usage_error("--threads 'x'" --threads x)
expect_usage_error("--threads '99999'" --threads 99999)
expect_usage_error("--reps '0': accepted: a whole number of timed runs from 1" --reps 0)
expect_usage_error("--reps 'many'" --reps many)
expect_usage_error("--reps needs a value" --reps)
expect_usage_error("--filter '\\(unclosed': not a valid regular expression" --filter "(unclosed")
expect_usage_error("--filter 'no-such-bench' matches no benchmark; the names are fib" --filter no-such-bench)
expect_usage_error("unknown argument '--frobnicate'. accepted" --frobnicate)
expect_usage_error("--list takes no value" --list=yes)
expect_usage_error("--rates '1000,x': accepted: a comma-separated list of rates" --latency --rates 1000,x)
expect_usage_error("--rates '0'" --latency --rates 0)
expect_usage_error("--duration-ms '5': accepted: milliseconds from 100" --latency --duration-ms 5)
expect_usage_error("--connections '0': accepted: 1 to 10000" --latency --connections 0)
expect_usage_error("--rates, --duration-ms and --connections apply to --latency only" --rates 1000)
expect_usage_error("--latency takes --rates, --duration-ms, --connections and --json only" --latency --threads 2)
