# hardening_sanitizer_test_list (cmake -P): a sanitizer build registers no
# test that runs valgrind (nor a placeholder that would show as skipped).
#   -DCTEST=  -DBUILD_DIR=
execute_process(COMMAND "${CTEST}" --test-dir "${BUILD_DIR}" -N -R valgrind
                OUTPUT_VARIABLE listing RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR NOT listing MATCHES "Total Tests: ([0-9]+)")
  message(FATAL_ERROR "ctest -N failed (${rc}):\n${listing}")
endif()
if(NOT CMAKE_MATCH_1 EQUAL 0)
  message(FATAL_ERROR "a sanitizer build registers valgrind tests:\n${listing}")
endif()
message("no valgrind test registered")
