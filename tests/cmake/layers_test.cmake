# cmake/layers.cmake holds the layers: the source tree passes it, and a copy
# with upward includes planted (ir including the runtime; the tuner
# including the run path it sits below) and a public header of a higher
# layer (codegen including lanejit/kernel.h) fails it, naming each.
#   cmake -DSOURCE_DIR=<repo> -DWORK_DIR=<scratch> -P tests/cmake/layers_test.cmake
set(check ${SOURCE_DIR}/cmake/layers.cmake)

# Before: the tree as it is.
execute_process(COMMAND ${CMAKE_COMMAND} -DLANEJIT_LAYERS_ROOT=${SOURCE_DIR} -P ${check}
                RESULT_VARIABLE clean_rc OUTPUT_VARIABLE clean_out ERROR_VARIABLE clean_err)
if(NOT clean_rc EQUAL 0)
  message(FATAL_ERROR "the source tree fails its own layer check:\n${clean_err}")
endif()

# Before: a copy with three upward includes.
file(REMOVE_RECURSE ${WORK_DIR})
file(COPY ${SOURCE_DIR}/src DESTINATION ${WORK_DIR})
file(READ ${WORK_DIR}/src/ir/dim.cpp dim)
file(WRITE ${WORK_DIR}/src/ir/dim.cpp "#include \"runtime/prepared_call.h\"\n${dim}")
file(APPEND ${WORK_DIR}/src/tune/tuner.cpp "#include \"runtime/entry_choice.h\"\n")
file(APPEND ${WORK_DIR}/src/codegen/target.h "#include <lanejit/kernel.h>\n")
# Action.
execute_process(COMMAND ${CMAKE_COMMAND} -DLANEJIT_LAYERS_ROOT=${WORK_DIR} -P ${check}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
file(REMOVE_RECURSE ${WORK_DIR})
# Expected: it fails, naming each.
if(rc EQUAL 0)
  message(FATAL_ERROR "an upward include passed the layer check")
endif()
string(REGEX REPLACE "[ \n]+" " " err "${err}")
foreach(expected "src/ir/dim.cpp: #include \"runtime/prepared_call.h\": ir may not include runtime"
                 "src/tune/tuner.cpp: #include \"runtime/entry_choice.h\": tune may not include runtime"
                 "src/codegen/target.h: #include <lanejit/kernel.h>: codegen may not include kernel")
  string(FIND "${err}" "${expected}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "the check did not report '${expected}':\n${err}")
  endif()
endforeach()
message(STATUS "layers: the tree passes; planted upward includes fail")
