# aclsim_prefix.cmake -- shared by every Ascend C CMake file aclsim installs.
#
# Installed at <prefix>/compiler/tikcpp/ascendc_kernel_cmake/ (CANN's
# ASCENDC_CMAKE_DIR), so the install prefix is three folders up: the tree can be
# moved.  Sets, when not already set:
#   ACLSIM_PREFIX              the aclsim install prefix
#   ASCEND_CANN_PACKAGE_PATH   from the environment (set_env.sh), else the prefix
#   ASCEND_HOME_PATH           likewise
#   SOC_VERSION                from the environment, else Ascend910B1
include_guard(GLOBAL)

get_filename_component(ACLSIM_PREFIX "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)
set(ACLSIM_ASCENDC_CMAKE_DIR "${CMAKE_CURRENT_LIST_DIR}")

foreach(_aclsim_v ASCEND_CANN_PACKAGE_PATH ASCEND_HOME_PATH)
  if(NOT DEFINED ${_aclsim_v})
    if(DEFINED ENV{${_aclsim_v}})
      set(${_aclsim_v} "$ENV{${_aclsim_v}}")
    else()
      set(${_aclsim_v} "${ACLSIM_PREFIX}")
    endif()
  endif()
endforeach()
unset(_aclsim_v)

if(NOT SOC_VERSION)
  if(DEFINED ENV{SOC_VERSION} AND NOT "$ENV{SOC_VERSION}" STREQUAL "")
    set(SOC_VERSION "$ENV{SOC_VERSION}")
  else()
    set(SOC_VERSION "Ascend910B1")
  endif()
endif()

# The runtime: lib64/libascendcl.so (libacl_rt.so and libruntime.so are the
# same library under CANN's other names).
if(NOT TARGET aclsim_ascendc_runtime)
  add_library(aclsim_ascendc_runtime INTERFACE IMPORTED GLOBAL)
  set_target_properties(aclsim_ascendc_runtime PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${ACLSIM_PREFIX}/include"
    INTERFACE_LINK_DIRECTORIES "${ACLSIM_PREFIX}/lib64"
    INTERFACE_LINK_LIBRARIES "${ACLSIM_PREFIX}/lib64/libascendcl.so")
endif()
