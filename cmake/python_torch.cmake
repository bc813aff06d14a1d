# The Python interpreter and torch the build uses: the virtual environment
# scripts/install-deps makes at .venv/ (python/requirements.txt: torch 2.13
# CPU, numpy, pytest, pybind11) unless Python_EXECUTABLE is given (as
# scikit-build-core does for `pip install .`). Its torch's CMake package
# (the wheel's libtorch) builds the bench's eager peer and the Python
# package's torch adapter; without torch both are left out.
if(NOT DEFINED Python_EXECUTABLE AND EXISTS ${PROJECT_SOURCE_DIR}/.venv/bin/python)
  set(Python_EXECUTABLE ${PROJECT_SOURCE_DIR}/.venv/bin/python CACHE FILEPATH
      "Python the package is built for and the tests run with")
endif()
find_package(Python 3 COMPONENTS Interpreter Development.Module)

if(Python_Interpreter_FOUND AND NOT DEFINED LANEJIT_TORCH_CMAKE_PREFIX)
  execute_process(
    COMMAND ${Python_EXECUTABLE} -c "import torch; print(torch.utils.cmake_prefix_path, end='')"
    OUTPUT_VARIABLE torch_prefix RESULT_VARIABLE torch_rc ERROR_QUIET)
  if(torch_rc EQUAL 0)
    set(LANEJIT_TORCH_CMAKE_PREFIX ${torch_prefix} CACHE PATH "torch's CMake package prefix")
  else()
    set(LANEJIT_TORCH_CMAKE_PREFIX "" CACHE PATH "torch's CMake package prefix")
  endif()
endif()
if(LANEJIT_TORCH_CMAKE_PREFIX)
  # TorchConfig warns that the static kineto library is absent: the wheel
  # ships libtorch shared, with kineto inside it.
  set(saved_log_level ${CMAKE_MESSAGE_LOG_LEVEL})
  set(CMAKE_MESSAGE_LOG_LEVEL ERROR)
  find_package(Torch CONFIG QUIET PATHS ${LANEJIT_TORCH_CMAKE_PREFIX} NO_DEFAULT_PATH)
  set(CMAKE_MESSAGE_LOG_LEVEL ${saved_log_level})
endif()
if(Torch_FOUND)
  # TorchConfig's TORCH_INSTALL_PREFIX is the wheel's torch/ directory.
  find_library(LANEJIT_TORCH_PYTHON_LIB torch_python PATHS ${TORCH_INSTALL_PREFIX}/lib NO_DEFAULT_PATH)
  message(STATUS "lanejit: torch ${Torch_VERSION} from ${TORCH_INSTALL_PREFIX}")
else()
  message(STATUS "lanejit: no torch for ${Python_EXECUTABLE}: the bench's eager peer and the torch adapter are off")
endif()
