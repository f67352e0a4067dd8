# ctest script: install the kcla build tree into a scratch prefix, then configure, build
# and run examples/consumer against the installed package.
foreach(var KCLA_BINARY_DIR CONSUMER_SOURCE_DIR WORK_DIR CXX_COMPILER)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "TestConsumer.cmake: ${var} not set")
  endif()
endforeach()
file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "command failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  message(STATUS "${out}")
endfunction()

run(${CMAKE_COMMAND} --install ${KCLA_BINARY_DIR} --prefix ${prefix})
run(${CMAKE_COMMAND} -S ${CONSUMER_SOURCE_DIR} -B ${WORK_DIR}/build -G Ninja
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=${CXX_COMPILER}
    "-DCMAKE_PREFIX_PATH=${prefix}" -DKokkos_DIR=${KOKKOS_ROOT}
    -DKokkosKernels_DIR=${KOKKOSKERNELS_ROOT})
run(${CMAKE_COMMAND} --build ${WORK_DIR}/build)
if(RUN_CONSUMER)
  run(${WORK_DIR}/build/kcla_consumer)
endif()
