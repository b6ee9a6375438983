# ctest driver of sim.probe: runs sim_probe on the simulated driver and
# compares its answers with a real driver's (sim_probe.driver580.txt).
# -DPROBE=<sim_probe> -DLIBCUDA=<libcuda.so.1> -DIMAGE=simcuda:<kernels.so>
# -DEXPECTED=<reference> -DOUT=<output file>
execute_process(
  COMMAND ${CMAKE_COMMAND} -E env PROBE_LIBCUDA=${LIBCUDA} ${PROBE} ${IMAGE}
  OUTPUT_FILE ${OUT} ERROR_VARIABLE err RESULT_VARIABLE rc TIMEOUT 120)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "sim_probe failed (${rc}): ${err}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${OUT} ${EXPECTED} RESULT_VARIABLE differ)
if(NOT differ EQUAL 0)
  find_program(DIFF_PROGRAM diff)
  if(DIFF_PROGRAM)
    execute_process(COMMAND ${DIFF_PROGRAM} ${EXPECTED} ${OUT})
  endif()
  message(FATAL_ERROR "the simulated driver answers differently from the real one:\n"
    "  expected (real driver): ${EXPECTED}\n  simulator: ${OUT}")
endif()
