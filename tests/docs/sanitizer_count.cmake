# docs_sanitizer_count (cmake -P): the number of tests the sanitizer run
# has, as docs/reliability.md gives it ("the sanitizer build runs N
# tests"), against what this sanitizer build runs with the labels
# tests/run.sh leaves out there (its sanitizer_exclude="...").
#
#   -DCTEST=  -DBUILD_DIR=  -DRUN_SCRIPT=tests/run.sh  -DDOC=docs/reliability.md
foreach(var CTEST BUILD_DIR RUN_SCRIPT DOC)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "sanitizer_count.cmake: ${var} is not set")
  endif()
endforeach()

file(READ "${RUN_SCRIPT}" script)
if(NOT script MATCHES "sanitizer_exclude=\"([^\"]+)\"")
  message(FATAL_ERROR "${RUN_SCRIPT} sets no sanitizer_exclude=\"...\"")
endif()
set(exclude "${CMAKE_MATCH_1}")

execute_process(COMMAND "${CTEST}" --test-dir "${BUILD_DIR}" -N --label-exclude "${exclude}"
                OUTPUT_VARIABLE listing RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR NOT listing MATCHES "Total Tests: ([0-9]+)")
  message(FATAL_ERROR "ctest -N failed (${rc}):\n${listing}")
endif()
set(runs "${CMAKE_MATCH_1}")

file(READ "${DOC}" doc)
string(REGEX REPLACE "[ \n]+" " " doc "${doc}")
if(NOT doc MATCHES "the sanitizer build runs ([0-9]+) tests")
  message(FATAL_ERROR "${DOC} does not say \"the sanitizer build runs N tests\"")
endif()
set(documented "${CMAKE_MATCH_1}")

message("the sanitizer run: ${runs} tests (ctest --label-exclude '${exclude}'); "
        "${DOC} says ${documented}")
if(NOT runs EQUAL documented)
  message(FATAL_ERROR "${DOC} says the sanitizer build runs ${documented} tests; it runs "
                      "${runs}: write ${runs} there")
endif()
