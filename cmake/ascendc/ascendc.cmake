# ascendc.cmake -- ${ASCENDC_CMAKE_DIR}/ascendc.cmake, as in CANN:
#
#   include(${ASCENDC_CMAKE_DIR}/ascendc.cmake)      # after project()
#   ascendc_library(kernels SHARED add_custom.cpp)   # see ascendc_functions.cmake
#   target_link_libraries(main PRIVATE kernels)      # gets aclrtlaunch_*.h
#
# Reads SOC_VERSION (default: the environment's, else Ascend910B1) and
# RUN_MODE (npu, the default, or sim: the kernels run on aclsim's simulated
# devices; cpu: Ascend's CPU-debug mode, see tikicpulib.h).
# It enables the ASC language (aclsim-cc) and defines host_intf_pub (the acl
# include path and the runtime) and, as empty targets, the CANN host
# libraries such projects link besides the runtime (tiling_api, register,
# platform, ascendalog, ...): aclsim provides none of their functions, so a
# program that calls one fails to link with an undefined symbol.
include_guard(GLOBAL)
include("${CMAKE_CURRENT_LIST_DIR}/aclsim_prefix.cmake")

if(NOT DEFINED RUN_MODE OR "${RUN_MODE}" STREQUAL "")
  set(RUN_MODE npu)
endif()
if(NOT "${RUN_MODE}" MATCHES "^(npu|sim|cpu)$")
  message(FATAL_ERROR "ascendc.cmake: RUN_MODE '${RUN_MODE}' is not npu, sim or cpu")
endif()

list(APPEND CMAKE_MODULE_PATH "${CMAKE_CURRENT_LIST_DIR}/asc_modules")
get_property(_aclsim_langs GLOBAL PROPERTY ENABLED_LANGUAGES)
if(NOT "ASC" IN_LIST _aclsim_langs)
  enable_language(ASC)
endif()
unset(_aclsim_langs)
include("${CMAKE_CURRENT_LIST_DIR}/ascendc_functions.cmake")

if(NOT TARGET host_intf_pub)
  add_library(host_intf_pub INTERFACE)
  target_link_libraries(host_intf_pub INTERFACE aclsim_ascendc_runtime)
endif()

foreach(_aclsim_lib tiling_api register platform ascendalog unified_dlog graph_base
                    error_manager profapi ge_common_base mmpa ascend_dump c_sec
                    opapi nnopbase)
  if(NOT TARGET ${_aclsim_lib})
    add_library(${_aclsim_lib} INTERFACE IMPORTED GLOBAL)
  endif()
endforeach()
unset(_aclsim_lib)
