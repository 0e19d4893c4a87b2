# One run of the drop-in proof (cmake -P): prepare PFM inputs, compile
# oidn_program.c with the plain C compiler against lull's
# libOpenImageDenoise exactly as a user would, and run it.
#
#   -DCC=  -DCFLAGS=(|-separated)  -DSOURCE=  -DINCLUDE_DIR=  -DLIB_DIR=
#   -DWORK_DIR=  -DINPUTS_TOOL=  -DINPUTS_ARGS=(|-separated; OUTDIR appended)
#   -DPROGRAM_ARGS=(|-separated options of oidn_program, e.g. -d|cuda|-b)
# Prints "drop-in skipped" (the test's skip expression) when the inputs
# tool exits 77.
foreach(var CC SOURCE INCLUDE_DIR LIB_DIR WORK_DIR INPUTS_TOOL INPUTS_ARGS)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "drop_in.cmake: ${var} is not set")
  endif()
endforeach()

string(REPLACE "|" ";" CFLAGS "${CFLAGS}")
string(REPLACE "|" ";" INPUTS_ARGS "${INPUTS_ARGS}")
string(REPLACE "|" ";" PROGRAM_ARGS "${PROGRAM_ARGS}")

file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")

execute_process(COMMAND "${INPUTS_TOOL}" ${INPUTS_ARGS} "${WORK_DIR}" RESULT_VARIABLE rc)
if(rc EQUAL 77)
  message("drop-in skipped: no inputs")
  return()
elseif(NOT rc EQUAL 0)
  message(FATAL_ERROR "preparing the inputs failed (${rc})")
endif()

set(program "${WORK_DIR}/oidn_program")
set(compile "${CC}" ${CFLAGS} "-I${INCLUDE_DIR}" "${SOURCE}" "-L${LIB_DIR}" -lOpenImageDenoise -lm
            -o "${program}")
string(REPLACE ";" " " shown "${compile}")
message("${shown}")
execute_process(COMMAND ${compile} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "compiling the OIDN program failed")
endif()

execute_process(
  COMMAND "${CMAKE_COMMAND}" -E env "LD_LIBRARY_PATH=${LIB_DIR}" --unset=OIDN_DEFAULT_DEVICE
          "${program}" ${PROGRAM_ARGS} "${WORK_DIR}/color.pfm" "${WORK_DIR}/albedo.pfm" "${WORK_DIR}/normal.pfm"
          "${WORK_DIR}/ref.pfm" "${WORK_DIR}/output.pfm"
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the OIDN program failed (${rc})")
endif()
