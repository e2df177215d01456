# CMakeTestASCCompiler.cmake -- aclsim-cc is part of the installation that
# provides these modules; checking that it runs is enough (no try_compile, to
# keep configuring fast).
if(NOT CMAKE_ASC_COMPILER_WORKS)
  execute_process(COMMAND "${CMAKE_ASC_COMPILER}" --version
    RESULT_VARIABLE _aclsim_asc_rc OUTPUT_VARIABLE _aclsim_asc_out ERROR_VARIABLE _aclsim_asc_out)
  if(NOT _aclsim_asc_rc EQUAL 0)
    message(FATAL_ERROR "ASC: '${CMAKE_ASC_COMPILER} --version' failed (${_aclsim_asc_rc}):\n${_aclsim_asc_out}")
  endif()
  message(STATUS "Check for working ASC compiler: ${CMAKE_ASC_COMPILER} - works")
  set(CMAKE_ASC_COMPILER_WORKS 1 CACHE INTERNAL "")
  unset(_aclsim_asc_rc)
  unset(_aclsim_asc_out)
endif()
