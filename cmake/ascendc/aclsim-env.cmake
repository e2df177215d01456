# aclsim-env.cmake -- read by CMake before a project's first project() call,
# through the CMAKE_TOOLCHAIN_FILE environment variable that set_env.sh exports
# (only when the user has not set one).  It does not change the toolchain: it
# makes the variables CANN-style CMakeLists read (${ASCEND_CANN_PACKAGE_PATH},
# ${ASCEND_HOME_PATH}, ${SOC_VERSION}) come from the environment, so those
# projects configure with no -D option.  A -D on the command line still wins.
foreach(_aclsim_v ASCEND_CANN_PACKAGE_PATH ASCEND_HOME_PATH)
  if(DEFINED ENV{${_aclsim_v}} AND NOT DEFINED ${_aclsim_v})
    set(${_aclsim_v} "$ENV{${_aclsim_v}}" CACHE PATH "CANN (aclsim) install prefix, from the environment")
  endif()
endforeach()
if(DEFINED ENV{SOC_VERSION} AND NOT "$ENV{SOC_VERSION}" STREQUAL "" AND NOT DEFINED SOC_VERSION)
  set(SOC_VERSION "$ENV{SOC_VERSION}" CACHE STRING "SoC the kernels are compiled for, from the environment")
endif()
unset(_aclsim_v)
