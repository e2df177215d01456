# AclsimCannLayout.cmake -- CANN's install layout (docs/ascendc.md):
#
#   <prefix>/set_env.sh                                  source it, as CANN's
#   <prefix>/include/{acl,aclsim,ascendc}/               headers
#   <prefix>/lib64/libascendcl.so + libacl_rt.so, libruntime.so (same runtime)
#   <prefix>/compiler/tikcpp/ascendc_kernel_cmake/       ASCENDC_CMAKE_DIR:
#        ascendc.cmake, ascendc_functions.cmake, asc_modules/ (ASC language)
#   <prefix>/lib/cmake/ASC/ASCConfig.cmake               find_package(ASC)
#   <prefix>/lib/cmake/aclsim/                           find_package(aclsim)
#   <prefix>/lib/cmake/tikicpulib/, tools/tikicpulib/lib/cmake/tikicpulib/
#                                                        find_package(tikicpulib)
#
# and the staged install ${PROJECT_BINARY_DIR}/stage, refreshed by every build
# (target aclsim_stage), that the Ascend C project tests use.
set(ACLSIM_ASCENDC_CMAKE_DEST "compiler/tikcpp/ascendc_kernel_cmake")
set(_aclsim_src "${PROJECT_SOURCE_DIR}/cmake/ascendc")

# Other names of the runtime: symbolic links to libascendcl.so (the linker
# records libascendcl's SONAME, so one runtime is loaded whatever name linked).
set(_aclsim_alias_dir "${PROJECT_BINARY_DIR}/cann-aliases")
file(MAKE_DIRECTORY "${_aclsim_alias_dir}")
set(_aclsim_aliases)
foreach(_name acl_rt runtime)
  file(CREATE_LINK "libascendcl.so" "${_aclsim_alias_dir}/lib${_name}.so" SYMBOLIC)
  list(APPEND _aclsim_aliases "${_aclsim_alias_dir}/lib${_name}.so")
endforeach()
install(FILES ${_aclsim_aliases} DESTINATION "${CMAKE_INSTALL_LIBDIR}" COMPONENT Development)

# CMake modules of both Ascend C flows.
install(FILES
  "${_aclsim_src}/ascendc.cmake"
  "${_aclsim_src}/ascendc_functions.cmake"
  "${_aclsim_src}/aclsim_prefix.cmake"
  "${_aclsim_src}/aclsim-env.cmake"
  DESTINATION "${ACLSIM_ASCENDC_CMAKE_DEST}" COMPONENT Development)
install(DIRECTORY "${_aclsim_src}/asc_modules"
  DESTINATION "${ACLSIM_ASCENDC_CMAKE_DEST}" COMPONENT Development)

# Package files that locate the prefix relative to themselves.
function(_aclsim_config_file template dest)
  file(RELATIVE_PATH _up "/p/${dest}" "/p")
  string(REGEX REPLACE "/$" "" ACLSIM_CONFIG_TO_PREFIX "${_up}")
  get_filename_component(_name "${template}" NAME_WLE)
  string(MAKE_C_IDENTIFIER "${dest}" _tag)
  configure_file("${_aclsim_src}/${template}" "${PROJECT_BINARY_DIR}/cann-config/${_tag}/${_name}" @ONLY)
  install(FILES "${PROJECT_BINARY_DIR}/cann-config/${_tag}/${_name}"
    DESTINATION "${dest}" COMPONENT Development)
endfunction()
# Package files go to lib/cmake/, not lib64/cmake/: find_package searches lib64
# only on some distributions (not Debian) and only after project(), and
# find_package(ASC) may come before project().
_aclsim_config_file(ASCConfig.cmake.in "lib/cmake/ASC")
_aclsim_config_file(tikicpulibConfig.cmake.in "lib/cmake/tikicpulib")
_aclsim_config_file(tikicpulibConfig.cmake.in "tools/tikicpulib/lib/cmake/tikicpulib")

# set_env.sh: written at install time, so its fallback prefix (for shells that
# cannot tell a sourced file's path) is the prefix actually installed to.
install(CODE "
  set(ACLSIM_INSTALL_PREFIX \"\${CMAKE_INSTALL_PREFIX}\")
  configure_file(\"${_aclsim_src}/set_env.sh.in\"
    \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/set_env.sh\" @ONLY)
  message(STATUS \"Installing: \$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/set_env.sh\")
" COMPONENT Development)

# The staged install, after everything it installs is built.  The install
# log goes to stage-install.log rather than into every build's output.
file(WRITE "${PROJECT_BINARY_DIR}/aclsim-stage.cmake" "
execute_process(COMMAND \"${CMAKE_COMMAND}\" --install \"${PROJECT_BINARY_DIR}\"
                        --prefix \"${ACLSIM_STAGE_DIR}\" --config \"\${CONFIG}\"
                OUTPUT_FILE \"${PROJECT_BINARY_DIR}/stage-install.log\"
                ERROR_FILE \"${PROJECT_BINARY_DIR}/stage-install.log\"
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR \"staged install failed (\${rc}): see ${PROJECT_BINARY_DIR}/stage-install.log\")
endif()
")
add_custom_target(aclsim_stage ALL
  COMMAND "${CMAKE_COMMAND}" "-DCONFIG=$<CONFIG>" -P "${PROJECT_BINARY_DIR}/aclsim-stage.cmake"
  COMMENT "Staged install in ${ACLSIM_STAGE_DIR}"
  VERBATIM)
add_dependencies(aclsim_stage ascendcl ascendcl_static)
if(TARGET aclsim-cc)
  add_dependencies(aclsim_stage aclsim-cc)
endif()
