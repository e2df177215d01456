# AclsimTesting.cmake -- helpers for the aclsim cmocka test-suite.
#
#   aclsim_add_test(NAME <name>
#                   SOURCES <file.c>...           # relative to the calling dir (tests/)
#                   [LIBS <lib>...]               # extra libraries / targets
#                   [STATIC]                      # link libascendcl.a instead of .so
#                   [DLOPEN]                      # link no libascendcl nor helpers: the
#                                                 # test dlopen()s ACLSIM_TEST_LIBRARY_PATH
#                   [TIMEOUT <seconds>]           # default 120
#                   [DEFINITIONS <DEF[=val]>...]  # extra compile definitions
#                   [ENVIRONMENT <VAR=value>...]  # ctest ENVIRONMENT property
#                   [LABELS <label>...]
#                   [ARGS <arg>...])              # command-line arguments
#
# Creates executable <name>, registers ctest test <name> and remembers the
# name and sources so tests/CMakeLists.txt does not auto-register the same
# tests/test-*.c file a second time.
#
# Every test executable gets:
#   * links: aclsim::ascendcl (shared; only exported symbols are reachable --
#     use STATIC for white-box tests of hidden/internal functions),
#     aclsim_test_helpers (tests/helpers/*.c, if any), cmocka, Threads, dl, m
#   * include dirs: include/, src/ (internal.h), tests/, tests/helpers/
#   * compile definitions (strings):
#       ACLSIM_TEST_KERNELS_PATH  absolute path of libaclsim_test_kernels.so
#                                 (only defined when tests/kernels/*.c exist)
#       ACLSIM_TEST_SOURCE_DIR    absolute path of tests/ in the source tree
#       ACLSIM_TEST_BINARY_DIR    absolute path of tests/ in the build tree
#   * ctest property TIMEOUT 120 (unless overridden)

include_guard(GLOBAL)

function(aclsim_add_test)
  cmake_parse_arguments(PARSE_ARGV 0 ARG
    "STATIC;DLOPEN"
    "NAME;TIMEOUT"
    "SOURCES;LIBS;DEFINITIONS;ENVIRONMENT;LABELS;ARGS")
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "aclsim_add_test: unknown arguments: ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT ARG_NAME)
    message(FATAL_ERROR "aclsim_add_test: NAME is required")
  endif()
  if(NOT ARG_SOURCES)
    message(FATAL_ERROR "aclsim_add_test(${ARG_NAME}): SOURCES is required")
  endif()
  if(TARGET ${ARG_NAME})
    message(FATAL_ERROR "aclsim_add_test: target '${ARG_NAME}' already exists")
  endif()
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 120)
  endif()

  set(_srcs)
  foreach(_s IN LISTS ARG_SOURCES)
    get_filename_component(_abs "${_s}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    list(APPEND _srcs "${_abs}")
  endforeach()

  add_executable(${ARG_NAME} ${_srcs})

  if(ARG_DLOPEN)
    # not linked: the test dlopen()s the library from ACLSIM_TEST_LIBRARY_PATH
    set(_lib)
    add_dependencies(${ARG_NAME} ascendcl)
    list(APPEND ARG_DEFINITIONS "ACLSIM_TEST_LIBRARY_PATH=\"$<TARGET_FILE:ascendcl>\"")
  elseif(ARG_STATIC)
    set(_lib aclsim::ascendcl_static)
    # let dlopen()ed test kernels resolve the library's public symbols
    set_target_properties(${ARG_NAME} PROPERTIES ENABLE_EXPORTS ON)
  else()
    set(_lib aclsim::ascendcl)
  endif()

  target_include_directories(${ARG_NAME} PRIVATE
    "${PROJECT_SOURCE_DIR}/include"
    "${PROJECT_SOURCE_DIR}/src"
    "${PROJECT_SOURCE_DIR}/tests"
    "${PROJECT_SOURCE_DIR}/tests/helpers")
  if(TARGET aclsim_test_helpers AND NOT ARG_DLOPEN)
    target_link_libraries(${ARG_NAME} PRIVATE aclsim_test_helpers)
  endif()
  target_link_libraries(${ARG_NAME} PRIVATE
    ${ARG_LIBS} ${_lib} aclsim::cmocka Threads::Threads ${CMAKE_DL_LIBS} m)

  target_compile_definitions(${ARG_NAME} PRIVATE
    "ACLSIM_TEST_SOURCE_DIR=\"${PROJECT_SOURCE_DIR}/tests\""
    "ACLSIM_TEST_BINARY_DIR=\"${PROJECT_BINARY_DIR}/tests\""
    ${ARG_DEFINITIONS})
  if(TARGET aclsim_test_kernels)
    target_compile_definitions(${ARG_NAME} PRIVATE
      "ACLSIM_TEST_KERNELS_PATH=\"$<TARGET_FILE:aclsim_test_kernels>\"")
    add_dependencies(${ARG_NAME} aclsim_test_kernels)
  endif()

  add_test(NAME ${ARG_NAME} COMMAND ${ARG_NAME} ${ARG_ARGS})
  set_tests_properties(${ARG_NAME} PROPERTIES TIMEOUT ${ARG_TIMEOUT})
  if(ARG_ENVIRONMENT)
    set_tests_properties(${ARG_NAME} PROPERTIES ENVIRONMENT "${ARG_ENVIRONMENT}")
  endif()
  if(ARG_LABELS)
    set_tests_properties(${ARG_NAME} PROPERTIES LABELS "${ARG_LABELS}")
  endif()

  set_property(GLOBAL APPEND PROPERTY ACLSIM_DECLARED_TESTS "${ARG_NAME}")
  set_property(GLOBAL APPEND PROPERTY ACLSIM_DECLARED_TEST_SOURCES ${_srcs})
endfunction()
