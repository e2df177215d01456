# CMakeDetermineASCCompiler.cmake -- the ASC language (Ascend C) for aclsim:
# its compiler is aclsim-cc, the driver in <prefix>/bin that compiles Ascend C
# for the CPU with the system C++ compiler (docs/ascendc-driver.md).
# Override with -DCMAKE_ASC_COMPILER=... or the ASC environment variable.
include("${CMAKE_CURRENT_LIST_DIR}/../aclsim_prefix.cmake")

if(NOT CMAKE_ASC_COMPILER)
  if(DEFINED ENV{ASC} AND NOT "$ENV{ASC}" STREQUAL "")
    set(CMAKE_ASC_COMPILER "$ENV{ASC}" CACHE FILEPATH "ASC (Ascend C) compiler")
  else()
    find_program(CMAKE_ASC_COMPILER NAMES aclsim-cc
      HINTS "${ACLSIM_PREFIX}/bin" NO_DEFAULT_PATH DOC "ASC (Ascend C) compiler")
  endif()
endif()
mark_as_advanced(CMAKE_ASC_COMPILER)
if(NOT CMAKE_ASC_COMPILER OR NOT EXISTS "${CMAKE_ASC_COMPILER}")
  message(FATAL_ERROR "ASC: the Ascend C compiler aclsim-cc was not found in "
    "${ACLSIM_PREFIX}/bin ('${CMAKE_ASC_COMPILER}'); is aclsim installed completely?")
endif()

set(CMAKE_ASC_COMPILER_ID "aclsim")
set(CMAKE_ASC_SOURCE_FILE_EXTENSIONS asc)
set(CMAKE_ASC_OUTPUT_EXTENSION .o)
set(CMAKE_ASC_COMPILER_ENV_VAR "ASC")
if(NOT CMAKE_ASC_STANDARD_DEFAULT)
  set(CMAKE_ASC_STANDARD_DEFAULT 17)
endif()

configure_file("${CMAKE_CURRENT_LIST_DIR}/CMakeASCCompiler.cmake.in"
  "${CMAKE_PLATFORM_INFO_DIR}/CMakeASCCompiler.cmake" @ONLY)
