# CMakeASCInformation.cmake -- compile and link rules of the ASC language.
#
# Sources: *.asc, and any file marked
#   set_source_files_properties(f.cpp PROPERTIES LANGUAGE ASC)
# (the rule passes `-x asc`, so aclsim-cc treats it as Ascend C).
# The language adds <prefix>/include (acl/, kernel_operator.h) to every ASC
# compile and links the runtime (libascendcl) into every target it links.
# CMAKE_ASC_STANDARD (default 17) becomes -std=c++NN; flags from $ASCFLAGS.
# CMAKE_ASC_RUN_MODE=cpu compiles for Ascend's CPU-debug mode
# (ASCENDC_CPU_DEBUG defined, tikicpulib.h on the include path).
include(CMakeCommonLanguageInclude)
include("${CMAKE_CURRENT_LIST_DIR}/../aclsim_prefix.cmake")

set(CMAKE_ASC_OUTPUT_EXTENSION .o)
set(CMAKE_INCLUDE_FLAG_ASC "-I")
set(CMAKE_INCLUDE_SYSTEM_FLAG_ASC "-isystem ")
set(CMAKE_ASC_COMPILE_OPTIONS_PIC "-fPIC")
set(CMAKE_ASC_COMPILE_OPTIONS_PIE "-fPIE")
set(CMAKE_ASC_LINK_OPTIONS_PIE "-fPIE;-pie")
set(CMAKE_ASC_LINK_OPTIONS_NO_PIE "-no-pie")
set(CMAKE_ASC_COMPILE_OPTIONS_VISIBILITY "-fvisibility=")
set(CMAKE_ASC_COMPILE_OPTIONS_SYSROOT "--sysroot=")
set(CMAKE_ASC_LINKER_WRAPPER_FLAG "-Wl,")
set(CMAKE_ASC_LINKER_WRAPPER_FLAG_SEP ",")
set(CMAKE_SHARED_LIBRARY_CREATE_ASC_FLAGS "${CMAKE_SHARED_LIBRARY_CREATE_CXX_FLAGS}")
if(NOT CMAKE_SHARED_LIBRARY_CREATE_ASC_FLAGS)
  set(CMAKE_SHARED_LIBRARY_CREATE_ASC_FLAGS "-shared")
endif()
set(CMAKE_SHARED_MODULE_CREATE_ASC_FLAGS "${CMAKE_SHARED_LIBRARY_CREATE_ASC_FLAGS}")
set(CMAKE_SHARED_LIBRARY_SONAME_ASC_FLAG "-Wl,-soname,")
set(CMAKE_SHARED_LIBRARY_RUNTIME_ASC_FLAG "-Wl,-rpath,")
set(CMAKE_SHARED_LIBRARY_RUNTIME_ASC_FLAG_SEP ":")
set(CMAKE_EXECUTABLE_RUNTIME_ASC_FLAG "-Wl,-rpath,")
set(CMAKE_EXECUTABLE_RUNTIME_ASC_FLAG_SEP ":")
set(CMAKE_SHARED_LIBRARY_RPATH_LINK_ASC_FLAG "-Wl,-rpath-link,")
set(CMAKE_EXECUTABLE_RPATH_LINK_ASC_FLAG "-Wl,-rpath-link,")
# aclsim-cc writes gcc-style dependency files naming the user's files.
set(CMAKE_DEPFILE_FLAGS_ASC "-MD -MT <DEP_TARGET> -MF <DEP_FILE>")
set(CMAKE_ASC_DEPFILE_FORMAT gcc)
if(CMAKE_GENERATOR MATCHES "Makefiles|WMake")
  set(CMAKE_ASC_DEPENDS_USE_COMPILER TRUE)
endif()

if(NOT DEFINED CMAKE_ASC_STANDARD OR CMAKE_ASC_STANDARD STREQUAL "")
  set(CMAKE_ASC_STANDARD "${CMAKE_ASC_STANDARD_DEFAULT}")
endif()
if(NOT CMAKE_ASC_STANDARD MATCHES "^[0-9]+$")
  message(FATAL_ERROR "ASC: CMAKE_ASC_STANDARD='${CMAKE_ASC_STANDARD}' must be a number such as 17 or 20")
endif()

set(CMAKE_ASC_FLAGS_DEBUG_INIT "-O0 -g")
set(CMAKE_ASC_FLAGS_RELEASE_INIT "-O3 -DNDEBUG")
set(CMAKE_ASC_FLAGS_RELWITHDEBINFO_INIT "-O2 -g -DNDEBUG")
set(CMAKE_ASC_FLAGS_MINSIZEREL_INIT "-Os -DNDEBUG")
set(CMAKE_ASC_FLAGS_INIT "$ENV{ASCFLAGS} ${CMAKE_ASC_FLAGS_INIT}")
cmake_initialize_per_config_variable(CMAKE_ASC_FLAGS "Flags used by the ASC (Ascend C) compiler")

# The acl/ headers and kernel_operator.h; the runtime.
set(CMAKE_ASC_STANDARD_INCLUDE_DIRECTORIES "${ACLSIM_PREFIX}/include")
set(CMAKE_ASC_STANDARD_LIBRARIES
  "-L${ACLSIM_PREFIX}/lib64 -Wl,-rpath,${ACLSIM_PREFIX}/lib64 -lascendcl -lpthread")

# The SoC the kernels are compiled for (docs/ascendc.md: build time vs run time).
set(_aclsim_asc_soc_flag "--aclsim-soc=${SOC_VERSION}")

if(NOT DEFINED CMAKE_ASC_RUN_MODE OR CMAKE_ASC_RUN_MODE STREQUAL "")
  set(CMAKE_ASC_RUN_MODE npu)
endif()
if(NOT CMAKE_ASC_RUN_MODE MATCHES "^(npu|cpu|sim)$")
  message(FATAL_ERROR "ASC: CMAKE_ASC_RUN_MODE='${CMAKE_ASC_RUN_MODE}' is not npu, cpu or sim")
endif()
set(_aclsim_asc_mode_flags "")
if(CMAKE_ASC_RUN_MODE STREQUAL "cpu")
  set(_aclsim_asc_mode_flags "-DASCENDC_CPU_DEBUG=1 -D__CCE_KT_TEST__=1")
  list(APPEND CMAKE_ASC_STANDARD_INCLUDE_DIRECTORIES "${ACLSIM_PREFIX}/include/ascendc")
endif()

if(NOT CMAKE_ASC_COMPILE_OBJECT)
  set(CMAKE_ASC_COMPILE_OBJECT
    "<CMAKE_ASC_COMPILER> <DEFINES> <INCLUDES> ${_aclsim_asc_soc_flag} ${_aclsim_asc_mode_flags} -std=c++${CMAKE_ASC_STANDARD} <FLAGS> -o <OBJECT> -c -x asc <SOURCE>")
endif()
if(NOT CMAKE_ASC_CREATE_PREPROCESSED_SOURCE)
  set(CMAKE_ASC_CREATE_PREPROCESSED_SOURCE
    "<CMAKE_ASC_COMPILER> <DEFINES> <INCLUDES> ${_aclsim_asc_soc_flag} ${_aclsim_asc_mode_flags} -std=c++${CMAKE_ASC_STANDARD} <FLAGS> -E -x asc <SOURCE> > <PREPROCESSED_SOURCE>")
endif()
if(NOT CMAKE_ASC_LINK_EXECUTABLE)
  set(CMAKE_ASC_LINK_EXECUTABLE
    "<CMAKE_ASC_COMPILER> <FLAGS> <CMAKE_ASC_LINK_FLAGS> <LINK_FLAGS> <OBJECTS> -o <TARGET> <LINK_LIBRARIES>")
endif()
if(NOT CMAKE_ASC_CREATE_SHARED_LIBRARY)
  set(CMAKE_ASC_CREATE_SHARED_LIBRARY
    "<CMAKE_ASC_COMPILER> <CMAKE_SHARED_LIBRARY_ASC_FLAGS> <LANGUAGE_COMPILE_FLAGS> <LINK_FLAGS> <CMAKE_SHARED_LIBRARY_CREATE_ASC_FLAGS> <SONAME_FLAG><TARGET_SONAME> -o <TARGET> <OBJECTS> <LINK_LIBRARIES>")
endif()
# A shared module is a kernel binary for aclrtBinaryLoadFromFile: in aclsim a
# shared object, named <name>.o like CANN's device binaries.
if(NOT CMAKE_ASC_CREATE_SHARED_MODULE)
  set(CMAKE_SHARED_MODULE_PREFIX_ASC "")
  set(CMAKE_SHARED_MODULE_SUFFIX_ASC ".o")
  set(CMAKE_ASC_CREATE_SHARED_MODULE
    "<CMAKE_ASC_COMPILER> <CMAKE_SHARED_MODULE_ASC_FLAGS> <LANGUAGE_COMPILE_FLAGS> <LINK_FLAGS> <CMAKE_SHARED_MODULE_CREATE_ASC_FLAGS> -o <TARGET> <OBJECTS> <LINK_LIBRARIES>")
endif()
if(NOT DEFINED CMAKE_ASC_ARCHIVE_CREATE)
  set(CMAKE_ASC_ARCHIVE_CREATE "<CMAKE_AR> qc <TARGET> <LINK_FLAGS> <OBJECTS>")
endif()
if(NOT DEFINED CMAKE_ASC_ARCHIVE_APPEND)
  set(CMAKE_ASC_ARCHIVE_APPEND "<CMAKE_AR> q <TARGET> <LINK_FLAGS> <OBJECTS>")
endif()
if(NOT DEFINED CMAKE_ASC_ARCHIVE_FINISH)
  set(CMAKE_ASC_ARCHIVE_FINISH "<CMAKE_RANLIB> <TARGET>")
endif()

set(CMAKE_ASC_INFORMATION_LOADED 1)

# CANN's functions (ascendc_library & co.) come with the language.
include("${CMAKE_CURRENT_LIST_DIR}/../ascendc_functions.cmake")
