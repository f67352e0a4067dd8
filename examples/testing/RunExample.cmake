# ctest driver for the examples: runs a program, fails unless it exits with 0 and its
# output matches EXPECT, then optionally runs a second command (THEN) the same way.
#
#   cmake -DPROGRAM=exe -DARGS="a^b^c" [-DEXPECT=regex] [-DREQUIRE=file]
#         [-DTHEN="exe2^x^y"] [-DTHEN_EXPECT=regex] -P RunExample.cmake
#
# Arguments are separated by '^' (a ';' would be split by add_test). When REQUIRE names a
# file that does not exist (an optional data set), it prints "kcla-example-skipped" and
# stops: the test sets SKIP_REGULAR_EXPRESSION to that.
foreach(var PROGRAM)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "RunExample.cmake: ${var} not set")
  endif()
endforeach()

if(DEFINED REQUIRE AND NOT EXISTS "${REQUIRE}")
  message(STATUS "kcla-example-skipped: ${REQUIRE} is absent (scripts/data/fetch.sh fetches it)")
  return()
endif()

function(run_checked program args expect)
  string(REPLACE "^" ";" arg_list "${args}")
  execute_process(COMMAND ${program} ${arg_list} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err)
  list(JOIN arg_list " " shown)
  message(STATUS "$ ${program} ${shown}\n${out}${err}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "exit status ${rc} (expected 0)")
  endif()
  if(NOT "${expect}" STREQUAL "" AND NOT "${out}" MATCHES "${expect}")
    message(FATAL_ERROR "the output does not match '${expect}'")
  endif()
endfunction()

run_checked("${PROGRAM}" "${ARGS}" "${EXPECT}")
if(DEFINED THEN)
  string(REPLACE "^" ";" then_list "${THEN}")
  list(POP_FRONT then_list then_program)
  string(REPLACE ";" "^" then_args "${then_list}")
  run_checked("${then_program}" "${then_args}" "${THEN_EXPECT}")
endif()
