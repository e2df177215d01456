# ascendc_functions.cmake -- CANN's CMake functions for Ascend C kernels, on
# top of the ASC language (aclsim-cc).  Included by the ASC language
# (find_package(ASC) / project(... LANGUAGES ASC)) and by ascendc.cmake.
#
#   ascendc_library(<name> STATIC|SHARED|OBJECT <source>...)
#       Compiles the kernel sources as Ascend C.  Users linking <name> get
#       ${CMAKE_BINARY_DIR}/include/<name>, which holds aclrtlaunch_<kernel>.h
#       for every __global__ kernel (aclrtlaunch_<kernel>(blockDim, stream,
#       args...) and ACLRT_LAUNCH_KERNEL(kernel)), <prefix>/include and the
#       runtime.  With RUN_MODE=cpu the kernels are compiled for Ascend's
#       CPU-debug mode and <name> links tikicpulib::${SOC_VERSION}.
#   ascendc_fatbin_library(<name> <source>...)
#       A kernel binary for aclrtBinaryLoadFromFile: in aclsim a shared object,
#       built as ${CMAKE_BINARY_DIR}/fatbin/<name>/<name>.o and installed as
#       <install prefix>/fatbin/<name>/<name>.o, where CANN puts its binary.
#   ascendc_compile_definitions(<name> <scope> <def>...)   (-D prefixes allowed)
#   ascendc_compile_options(<name> <scope> <opt>... [-forward-options-to-host-compiler <opt>...])
#   ascendc_include_directories(<name> <scope> <dir>...)
include_guard(GLOBAL)
include("${CMAKE_CURRENT_LIST_DIR}/aclsim_prefix.cmake")

# Ascend C sources as ASC, with the SoC, in the folder of the target.
function(_aclsim_ascendc_sources out_var)
  set(_abs)
  foreach(_src IN LISTS ARGN)
    get_filename_component(_a "${_src}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    list(APPEND _abs "${_a}")
  endforeach()
  set_source_files_properties(${_abs} PROPERTIES LANGUAGE ASC)
  set(${out_var} "${_abs}" PARENT_SCOPE)
endfunction()

function(_aclsim_ascendc_common target_name)
  set_target_properties(${target_name} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  if("${RUN_MODE}" STREQUAL "cpu")
    if(NOT TARGET tikicpulib::${SOC_VERSION})
      find_package(tikicpulib REQUIRED
        HINTS "${ACLSIM_PREFIX}/tools/tikicpulib/lib/cmake" NO_DEFAULT_PATH)
    endif()
    target_compile_definitions(${target_name} PRIVATE ASCENDC_CPU_DEBUG=1 __CCE_KT_TEST__=1)
    target_link_libraries(${target_name} PUBLIC tikicpulib::${SOC_VERSION})
  endif()
endfunction()

function(ascendc_library target_name target_type)
  string(TOUPPER "${target_type}" _type)
  if(NOT _type MATCHES "^(SHARED|STATIC|OBJECT)$")
    message(FATAL_ERROR "ascendc_library(${target_name}): target type '${target_type}' "
      "is not supported; use SHARED, STATIC or OBJECT")
  endif()
  if(NOT ARGN)
    message(FATAL_ERROR "ascendc_library(${target_name}): no kernel source given")
  endif()
  _aclsim_ascendc_sources(_srcs ${ARGN})
  add_library(${target_name} ${_type} ${_srcs})
  _aclsim_ascendc_common(${target_name})

  # The generated launch headers, as CANN: ${CMAKE_BINARY_DIR}/include/<name>.
  set(_hdr_dir "${CMAKE_BINARY_DIR}/include/${target_name}")
  file(MAKE_DIRECTORY "${_hdr_dir}")
  target_compile_options(${target_name} PRIVATE
    "$<$<COMPILE_LANGUAGE:ASC>:--aclsim-launch-header-dir=${_hdr_dir}>")
  target_include_directories(${target_name} INTERFACE "${_hdr_dir}")
  # The headers appear while the kernels compile.  A stamp made after them is
  # an interface source, so every target linking <name> compiles after them
  # (also with Ninja, which does not wait for linked libraries).
  set(_stamp "${CMAKE_CURRENT_BINARY_DIR}/${target_name}_launch_headers.stamp")
  add_custom_command(OUTPUT "${_stamp}"
    COMMAND "${CMAKE_COMMAND}" -E touch "${_stamp}"
    DEPENDS "$<TARGET_OBJECTS:${target_name}>"
    VERBATIM)
  target_sources(${target_name} INTERFACE "$<BUILD_INTERFACE:${_stamp}>")
  target_link_libraries(${target_name} PUBLIC aclsim_ascendc_runtime)
  set_target_properties(${target_name} PROPERTIES
    ARCHIVE_OUTPUT_DIRECTORY "${CMAKE_BINARY_DIR}/lib"
    LIBRARY_OUTPUT_DIRECTORY "${CMAKE_BINARY_DIR}/lib")

  if(NOT _type STREQUAL "OBJECT")
    include(GNUInstallDirs)
    install(TARGETS ${target_name}
      LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
      ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
      RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
    install(DIRECTORY "${_hdr_dir}/" DESTINATION include)
  endif()
endfunction()

function(ascendc_fatbin_library target_name)
  if(NOT ARGN)
    message(FATAL_ERROR "ascendc_fatbin_library(${target_name}): no kernel source given")
  endif()
  _aclsim_ascendc_sources(_srcs ${ARGN})
  add_library(${target_name} MODULE ${_srcs})
  _aclsim_ascendc_common(${target_name})
  set_target_properties(${target_name} PROPERTIES
    PREFIX "" SUFFIX ".o" OUTPUT_NAME "${target_name}"
    LINKER_LANGUAGE ASC
    LIBRARY_OUTPUT_DIRECTORY "${CMAKE_BINARY_DIR}/fatbin/${target_name}")
  target_include_directories(${target_name} PRIVATE "${ACLSIM_PREFIX}/include")
  install(TARGETS ${target_name} LIBRARY DESTINATION "fatbin/${target_name}")
endfunction()

function(ascendc_compile_definitions target_name target_scope)
  if(ARGN)
    target_compile_definitions(${target_name} ${target_scope} ${ARGN})
  endif()
endfunction()

# Options after -forward-options-to-host-compiler are for CANN's host compile
# of the same file; aclsim compiles each file once, so they apply as well.
function(ascendc_compile_options target_name target_scope)
  set(_opts)
  foreach(_o IN LISTS ARGN)
    if(NOT _o STREQUAL "-forward-options-to-host-compiler")
      list(APPEND _opts "${_o}")
    endif()
  endforeach()
  if(_opts)
    target_compile_options(${target_name} ${target_scope} ${_opts})
  endif()
endfunction()

function(ascendc_include_directories target_name target_scope)
  if(ARGN)
    target_include_directories(${target_name} ${target_scope} ${ARGN})
  endif()
endfunction()
