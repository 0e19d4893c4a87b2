# The README's C example (cmake -P): builds examples/denoise_oidn.c from an
# install prefix with the README's own command lines and runs it on PFM
# inputs, as a user following the README would.
#
#   -DMODE=cc      the README's `cc examples/denoise_oidn.c ...` and
#                  `./denoise_oidn ...` lines, then the program's failures
#                  (exit statuses, an existing output kept)
#   -DMODE=cmake   the README's `cmake -S examples/denoise_oidn_cmake ...`,
#                  `cmake --build build-example` and
#                  `build-example/denoise_oidn ...` lines
#   -DREADME=  -DSOURCE_DIR=  -DPREFIX=  -DWORK_DIR=  -DINPUTS_TOOL=  -DCC=
#   -DEXTRA_FLAGS= (|-separated; added to the compile line)
#   -DEXTRA_CMAKE_ARGS= (|-separated; added to the configure line)
#
# The lines are taken from the README as written, with its placeholders
# replaced: $HOME/lull by the install prefix, examples/ by the source
# tree's, build/demo/ (where demo.sh writes the inputs) by the work folder,
# and `cc` by the build's C compiler (the same, but in sanitizer builds,
# which add their runtime through EXTRA_FLAGS).  Programs run without
# LD_LIBRARY_PATH: the rpath must find the library.
foreach(var MODE README SOURCE_DIR PREFIX WORK_DIR INPUTS_TOOL CC)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "example_program.cmake: ${var} is not set")
  endif()
endforeach()
string(REPLACE "|" ";" EXTRA_FLAGS "${EXTRA_FLAGS}")
string(REPLACE "|" ";" EXTRA_CMAKE_ARGS "${EXTRA_CMAKE_ARGS}")

file(READ "${README}" readme)

# The README's indented command line that starts with `start`, with the
# placeholders replaced, as a list of arguments in ${out}.
function(readme_command start out)
  string(REPLACE "." "\\." pattern "${start}")
  if(NOT readme MATCHES "\n    (${pattern}[^\n]*)")
    message(FATAL_ERROR "README.md has no command line starting with '${start}'")
  endif()
  set(line "${CMAKE_MATCH_1}")
  string(REGEX REPLACE "[ ]+#.*$" "" line "${line}")
  string(REPLACE "$HOME/lull" "${PREFIX}" line "${line}")
  string(REPLACE " examples/" " ${SOURCE_DIR}/examples/" line "${line}")
  string(REPLACE "build/demo/" "${WORK_DIR}/" line "${line}")
  string(REGEX REPLACE "^cc " "${CC} " line "${line}")
  message("README: ${line}")
  separate_arguments(args UNIX_COMMAND "${line}")
  set(${out} ${args} PARENT_SCOPE)
endfunction()

# Runs a command in the work folder without LD_LIBRARY_PATH; the exit
# status in ${status}, stderr in ${status}_stderr.
function(run status)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env --unset=LD_LIBRARY_PATH
                          --unset=OIDN_DEFAULT_DEVICE ${ARGN}
                  WORKING_DIRECTORY "${WORK_DIR}" RESULT_VARIABLE rc
                  OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
  message("${stdout}${stderr}")
  set(${status} "${rc}" PARENT_SCOPE)
  set(${status}_stderr "${stderr}" PARENT_SCOPE)
endfunction()

function(expect_status what expected actual)
  if(NOT "${actual}" STREQUAL "${expected}")
    message(FATAL_ERROR "${what}: exit status ${actual}, expected ${expected}")
  endif()
endfunction()

file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")
execute_process(COMMAND "${INPUTS_TOOL}" synthetic "${WORK_DIR}" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "preparing the inputs failed (${rc})")
endif()

if(MODE STREQUAL "cc")
  readme_command("cc examples/denoise_oidn.c" compile)
  run(rc ${compile} ${EXTRA_FLAGS})
  expect_status("compiling" 0 "${rc}")
  readme_command("./denoise_oidn " denoise)
elseif(MODE STREQUAL "cmake")
  readme_command("cmake -S examples/denoise_oidn_cmake" configure)
  run(rc ${configure} ${EXTRA_CMAKE_ARGS})
  expect_status("configuring" 0 "${rc}")
  readme_command("cmake --build build-example" build)
  run(rc ${build})
  expect_status("building" 0 "${rc}")
  readme_command("build-example/denoise_oidn " denoise)
else()
  message(FATAL_ERROR "MODE is cc or cmake, not ${MODE}")
endif()

run(rc ${denoise})
expect_status("denoising" 0 "${rc}")
# the output is finite and closer to the reference than the noisy colour
execute_process(COMMAND "${INPUTS_TOOL}" check "${WORK_DIR}" "${WORK_DIR}/denoised.pfm"
                RESULT_VARIABLE rc)
expect_status("checking denoised.pfm" 0 "${rc}")
if(NOT MODE STREQUAL "cc")
  return()
endif()

# Failures: the documented exit statuses, and an existing output kept.
list(GET denoise 0 program)
file(SHA256 "${WORK_DIR}/denoised.pfm" before)
run(rc ${program})
expect_status("no arguments" 2 "${rc}")
run(rc ${program} --hdr color.pfm --nrm normal.pfm -o denoised.pfm)
expect_status("--nrm without --alb" 2 "${rc}")
run(rc ${program} --hdr missing.pfm -o denoised.pfm)
expect_status("a missing input" 1 "${rc}")
file(WRITE "${WORK_DIR}/truncated.pfm" "PF\n96 64\n-1.0\n0123")
run(rc ${program} --hdr truncated.pfm -o denoised.pfm)
expect_status("a truncated input" 1 "${rc}")
if(NOT rc_stderr MATCHES "truncated")
  message(FATAL_ERROR "a truncated input: the message does not say so")
endif()
file(WRITE "${WORK_DIR}/small.pfm" "PF\n2 1\n-1.0\n012345678901234567890123")
run(rc ${program} --hdr color.pfm --alb small.pfm -o denoised.pfm)
expect_status("an albedo of another size" 1 "${rc}")
run(rc ${program} --hdr color.pfm -f NoSuchFilter -o denoised.pfm)
expect_status("an unknown filter" 1 "${rc}")
file(SHA256 "${WORK_DIR}/denoised.pfm" after)
if(NOT before STREQUAL after)
  message(FATAL_ERROR "a failed run changed the existing denoised.pfm")
endif()
# an output that cannot replace what is there (a folder): no partial file left
file(MAKE_DIRECTORY "${WORK_DIR}/folder.pfm")
run(rc ${program} --hdr color.pfm -o folder.pfm)
expect_status("an output that is a folder" 1 "${rc}")
if(NOT IS_DIRECTORY "${WORK_DIR}/folder.pfm" OR EXISTS "${WORK_DIR}/folder.pfm.partial")
  message(FATAL_ERROR "a failed write left a partial file or replaced the folder")
endif()
message("the example builds and runs as the README says")
