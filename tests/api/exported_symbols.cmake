# Checks (cmake -P) that a shared library exports exactly the names listed in
# exported_symbols.txt: every OIDN function a program may link, and no
# internal symbol.
#   -DNM=<nm>  -DLIBRARY=<.so>  -DEXPECTED=<exported_symbols.txt>
execute_process(COMMAND "${NM}" -D --defined-only "${LIBRARY}"
                OUTPUT_VARIABLE out RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${NM} failed on ${LIBRARY}")
endif()
string(REGEX MATCHALL "[0-9a-fA-F]+ [TtWiV] [A-Za-z_][A-Za-z0-9_]*" entries "${out}")
set(actual "")
foreach(entry IN LISTS entries)
  string(REGEX REPLACE "^.* " "" name "${entry}")
  list(APPEND actual "${name}")
endforeach()
file(STRINGS "${EXPECTED}" expected REGEX "^[A-Za-z_]")
set(missing ${expected})
list(REMOVE_ITEM missing ${actual})
set(extra ${actual})
list(REMOVE_ITEM extra ${expected})
list(LENGTH actual count)
if(missing OR extra)
  message(FATAL_ERROR "${LIBRARY}: missing: ${missing}\nnot expected: ${extra}")
endif()
message("${LIBRARY}: ${count} symbols, as expected")
