# The library's layers, bottom to top (docs/architecture.md, "Layers"). A
# folder of src/ may include its own headers and those of folders in lower
# layers — never one above it or beside it. Public headers
# (include/lanejit/NAME.h) count as the folder that implements them.
#
#   include(cmake/layers.cmake)       configure: stops on an upward include
#   cmake -DLANEJIT_LAYERS_ROOT=DIR -P cmake/layers.cmake
#                                     checks DIR/src alone (tests/tools/layers_test.cmake)
set(LANEJIT_LAYER_LIST
  "error"                            # lanejit::Error, for everyone
  "io options ir"                    # files, compile options and switches, the IR and Dim
  "abi analysis"                     # shape binding and the launch ABI; IR analyses
  "text capture reference npy"       # the text format, the DSL and library, the FP64 oracle
  "check passes"                     # test cases against the oracle; IR passes
  "lower"                            # the plan and the lowering passes
  "codegen"                          # LLVM IR from the plan
  "jit"                              # LLVM's optimiser, ORC, the object loader
  "backend"                          # plan to native code, the one face of codegen and jit
  "cache launch"                     # the persistent cache and its bound; the thread pool,
                                     # row and column launch, workspaces
  "driver"                           # a compile: pass order, lowering, the code and its
                                     # entries, the report, both caches
  "kernel"                           # Kernel::Impl: a kernel's code and its own entries
  "tune"                             # measured configurations: the tuner, its records
  "runtime"                          # Kernel's methods: calls, checks, entry choice
  "inspect"                          # reading a kernel's machine code
  "aot")                             # objects and headers for programs without LLVM
set(LANEJIT_PUBLIC_HEADER_FOLDERS
  error=error dim=ir ir=ir element_types=ir verify=ir options=options buffer=abi shape_binding=abi launch_abi=abi
  text=text dsl=capture library=capture reference=reference check=check report=driver
  kernel=kernel bound_call=runtime kernel_cache=cache tune=tune inspect=inspect aot=aot)

# Sets ${out} to the violations under ${root}/src, one line each ("" when none).
function(lanejit_layer_violations root out)
  set(rank 0)
  foreach(layer IN LISTS LANEJIT_LAYER_LIST)
    separate_arguments(layer UNIX_COMMAND "${layer}")
    foreach(folder IN LISTS layer)
      set(rank_of_${folder} ${rank})
    endforeach()
    math(EXPR rank "${rank} + 1")
  endforeach()
  foreach(pair IN LISTS LANEJIT_PUBLIC_HEADER_FOLDERS)
    string(REPLACE "=" ";" pair "${pair}")
    list(GET pair 0 header)
    list(GET pair 1 folder)
    set(folder_of_${header} ${folder})
  endforeach()
  set(found "")
  file(GLOB folders RELATIVE ${root}/src ${root}/src/*)
  foreach(folder IN LISTS folders)
    if(NOT IS_DIRECTORY ${root}/src/${folder})
      continue()
    endif()
    if(NOT DEFINED rank_of_${folder})
      string(APPEND found "src/${folder}: a folder in no layer (cmake/layers.cmake)\n")
      continue()
    endif()
    file(GLOB files ${root}/src/${folder}/*)
    foreach(file IN LISTS files)
      file(STRINGS ${file} includes REGEX "^[ \t]*#[ \t]*include[ \t]*[\"<]")
      foreach(line IN LISTS includes)
        set(target "")
        if(line MATCHES "include[ \t]*\"([a-z_0-9]+)/")
          set(target ${CMAKE_MATCH_1})
        elseif(line MATCHES "include[ \t]*<lanejit/([a-z_0-9]+)\\.h>")
          set(target ${folder_of_${CMAKE_MATCH_1}})
          if(NOT target)
            string(APPEND found "${file}: ${line}: a public header in no layer\n")
            continue()
          endif()
        endif()
        if(NOT target OR target STREQUAL folder)
          continue()
        endif()
        if(NOT DEFINED rank_of_${target})
          string(APPEND found "${file}: ${line}: src/${target} is in no layer\n")
        elseif(NOT rank_of_${target} LESS rank_of_${folder})
          string(APPEND found
            "${file}: ${line}: ${folder} may not include ${target} (a layer ${rank_of_${target}} >= its ${rank_of_${folder}})\n")
        endif()
      endforeach()
    endforeach()
  endforeach()
  set(${out} "${found}" PARENT_SCOPE)
endfunction()

if(CMAKE_SCRIPT_MODE_FILE)
  lanejit_layer_violations("${LANEJIT_LAYERS_ROOT}" violations)
  if(violations)
    message(FATAL_ERROR "upward includes:\n${violations}")
  endif()
  message(STATUS "layers: no upward include")
else()
  lanejit_layer_violations("${PROJECT_SOURCE_DIR}" violations)
  if(violations)
    message(FATAL_ERROR "lanejit: includes that run up the layers (cmake/layers.cmake):\n${violations}")
  endif()
endif()
