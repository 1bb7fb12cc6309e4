# strata-bench --placement-report inside the 4-node NUMA guest: every triad
# check passes (exit status 0) and the per-node placement has every sampled
# page on its worker's node. The other placements are printed, not judged
# (first-touch depends on transparent huge pages and automatic NUMA
# balancing, serial-init on where the main thread ran).
# Run: cmake -DRUN_IN_VM=... -DCACHE=... -DBENCH=... -P placement_report_vm.cmake
execute_process(
  COMMAND ${RUN_IN_VM} --cache ${CACHE} --timeout 800 ${BENCH} --placement-report --n 4194304
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "strata-bench --placement-report in the NUMA VM: exit status ${rc}\n${err}")
endif()
if(NOT out MATCHES "NUMA binding: yes; nodes: 0,1,2,3")
  message(FATAL_ERROR "the guest did not show 4 NUMA nodes with binding")
endif()
# per-node, all workers: sampled local remote "no node" local % (bound pages:
# NUMA balancing leaves them alone)
if(NOT out MATCHES "per-node +[0-9]+ +all +- +- +([0-9]+) +([0-9]+) +0 +0 +100\\.0")
  message(FATAL_ERROR "per-node placement: not every sampled page is on its worker's node")
endif()
