# What `cmake --install` puts under the prefix (/usr/local by default):
#   lib/liblanejit.so.<version>  the library, LLVM linked privately
#   include/lanejit/             the public headers (no LLVM types in them)
#   lib/cmake/lanejit/           find_package(lanejit CONFIG) -> lanejit::lanejit
#   bin/lanejit                  the CLI
# The Python package is installed by python/CMakeLists.txt.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# The shared library is the static library's objects (already PIC), whole,
# so no source is compiled twice. Its LLVM, fmt and JSON dependencies are
# PRIVATE: a consumer links lanejit::lanejit and needs none of their headers.
add_library(lanejit_shared SHARED ${CMAKE_CURRENT_LIST_DIR}/shared_library.cpp)
target_link_libraries(lanejit_shared PRIVATE "$<LINK_LIBRARY:WHOLE_ARCHIVE,lanejit>")
target_include_directories(lanejit_shared PUBLIC
  $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
  $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
target_compile_features(lanejit_shared PUBLIC cxx_std_20) # std::span in the headers
set_target_properties(lanejit_shared PROPERTIES
  OUTPUT_NAME lanejit EXPORT_NAME lanejit
  VERSION ${PROJECT_VERSION} SOVERSION ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR})
add_library(lanejit::lanejit ALIAS lanejit_shared)

install(TARGETS lanejit_shared EXPORT lanejitTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/lanejit
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS lanejit_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS lanejit_compile_probe RUNTIME DESTINATION ${CMAKE_INSTALL_LIBEXECDIR}/lanejit)

set(LANEJIT_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/lanejit)
install(EXPORT lanejitTargets NAMESPACE lanejit:: DESTINATION ${LANEJIT_CMAKE_DIR})
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/lanejitConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/lanejitConfig.cmake INSTALL_DESTINATION ${LANEJIT_CMAKE_DIR})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/lanejitConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/lanejitConfig.cmake
  ${CMAKE_CURRENT_BINARY_DIR}/lanejitConfigVersion.cmake DESTINATION ${LANEJIT_CMAKE_DIR})
