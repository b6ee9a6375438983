# ctest driver of sim.probe and sim.probe_rules: runs sim_probe on the
# simulated driver and compares its answers with a real driver's
# (sim_probe.driver580.txt) or with the expected answers of its rules section
# (sim_probe.rules.expected.txt, not recorded on a GPU yet).
# -DPROBE=<sim_probe> -DLIBCUDA=<libcuda.so.1> -DIMAGE=simcuda:<kernels.so>
# -DEXPECTED=<reference> -DOUT=<output file> [-DSECTION=rules]
# In the reference, lines starting with '#' and trailing "   # ..." comments
# are ignored.
execute_process(
  COMMAND ${CMAKE_COMMAND} -E env PROBE_LIBCUDA=${LIBCUDA} ${PROBE} ${IMAGE} ${SECTION}
  OUTPUT_FILE ${OUT} ERROR_VARIABLE err RESULT_VARIABLE rc TIMEOUT 120)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "sim_probe failed (${rc}): ${err}")
endif()
file(READ ${EXPECTED} expected)
string(REGEX REPLACE "(^|\n)#[^\n]*" "" expected "${expected}")
string(REGEX REPLACE "^\n+" "" expected "${expected}")
string(REGEX REPLACE "[ \t]+# [^\n]*" "" expected "${expected}")
set(stripped ${OUT}.expected)
file(WRITE ${stripped} "${expected}")
execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${OUT} ${stripped} RESULT_VARIABLE differ)
if(NOT differ EQUAL 0)
  find_program(DIFF_PROGRAM diff)
  if(DIFF_PROGRAM)
    execute_process(COMMAND ${DIFF_PROGRAM} ${stripped} ${OUT})
  endif()
  message(FATAL_ERROR "the simulated driver answers differently from the expected answers:\n"
    "  expected: ${EXPECTED}\n  simulator: ${OUT}")
endif()
