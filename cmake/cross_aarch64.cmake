# The aarch64 runtime, cross-built: lanejit-object-run (tools/object_run),
# the LLVM-free part of lanejit that loads and runs aarch64 kernel objects
# compiled on this machine (docs/aarch64.md). Built with Debian's cross
# toolchain (g++-aarch64-linux-gnu, scripts/install-deps) as a project of its
# own; tests/cross runs it under qemu-aarch64. No toolchain: skipped.
#
# Sets for tests/CMakeLists.txt:
#   LANEJIT_AARCH64_RUNNER   the runner's path, or empty when not built
#   LANEJIT_AARCH64_CC       aarch64-linux-gnu-gcc (the AOT C driver), or empty
#   LANEJIT_QEMU_AARCH64     qemu-aarch64, or empty
#   LANEJIT_AARCH64_SYSROOT  the cross sysroot qemu loads libraries from
find_program(LANEJIT_AARCH64_CXX aarch64-linux-gnu-g++)
find_program(LANEJIT_AARCH64_CC aarch64-linux-gnu-gcc)
find_program(LANEJIT_QEMU_AARCH64 qemu-aarch64)
set(LANEJIT_AARCH64_SYSROOT /usr/aarch64-linux-gnu CACHE PATH
    "Root of the aarch64 libraries qemu-aarch64 loads (qemu -L)")
set(LANEJIT_AARCH64_RUNNER "")
if(NOT LANEJIT_AARCH64_CXX)
  message(STATUS "lanejit: aarch64-linux-gnu-g++ not found: no aarch64 runtime, cross tests skip")
  return()
endif()

include(ExternalProject)
set(cross_dir ${CMAKE_BINARY_DIR}/aarch64)
# fmt's headers are the same for every architecture: the runner's sources
# use them header-only from where the host's fmt has them.
get_target_property(fmt_includes fmt::fmt INTERFACE_INCLUDE_DIRECTORIES)
list(GET fmt_includes 0 fmt_include)
file(WRITE ${cross_dir}/toolchain.cmake
  "set(CMAKE_SYSTEM_NAME Linux)\n"
  "set(CMAKE_SYSTEM_PROCESSOR aarch64)\n"
  "set(CMAKE_CXX_COMPILER ${LANEJIT_AARCH64_CXX})\n"
  "set(CMAKE_FIND_ROOT_PATH ${LANEJIT_AARCH64_SYSROOT})\n"
  "set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)\n"
  "set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)\n"
  "set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)\n")
ExternalProject_Add(lanejit_object_run_aarch64
  SOURCE_DIR ${PROJECT_SOURCE_DIR}/tools/object_run
  BINARY_DIR ${cross_dir}/object_run
  CMAKE_ARGS -DCMAKE_TOOLCHAIN_FILE=${cross_dir}/toolchain.cmake -DCMAKE_BUILD_TYPE=Release
             -DLANEJIT_FMT_INCLUDE=${fmt_include}
  # The sub-build is incremental: always asking it keeps it in step with
  # src/ edits, at the cost of one `make` that finds nothing to do.
  BUILD_ALWAYS ON
  INSTALL_COMMAND ""
  BUILD_BYPRODUCTS ${cross_dir}/object_run/lanejit-object-run)
set(LANEJIT_AARCH64_RUNNER ${cross_dir}/object_run/lanejit-object-run)
message(STATUS "lanejit: aarch64 runtime cross-built with ${LANEJIT_AARCH64_CXX}")
