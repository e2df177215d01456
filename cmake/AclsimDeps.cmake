# AclsimDeps.cmake -- locate third-party dependencies of libascendcl.
#
# Used both by the aclsim build itself and by the installed aclsimConfig.cmake
# (the static library's link interface needs them).  Defines:
#
#   aclsim::cjson   IMPORTED target for cJSON (Debian: libcjson-dev).
#                   Its include directory is the one that *contains* the
#                   "cjson/" folder, so sources write  #include <cjson/cJSON.h>
#
# Lookup order: pkg-config module "libcjson" (used only as a hint, pkg-config
# is optional), then find_path/find_library in the default system locations.
# CJSON_ROOT / CMAKE_PREFIX_PATH can point at a custom install.

if(TARGET aclsim::cjson)
  return()
endif()

find_package(PkgConfig QUIET)
if(PKG_CONFIG_FOUND)
  pkg_check_modules(_ACLSIM_PC_CJSON QUIET libcjson)
endif()

# pkg-config reports .../include/cjson; we want its parent for <cjson/cJSON.h>.
set(_aclsim_cjson_hints)
foreach(_dir IN LISTS _ACLSIM_PC_CJSON_INCLUDE_DIRS)
  get_filename_component(_parent "${_dir}" DIRECTORY)
  list(APPEND _aclsim_cjson_hints "${_dir}" "${_parent}")
endforeach()

find_path(ACLSIM_CJSON_INCLUDE_DIR
  NAMES cjson/cJSON.h
  HINTS ${_aclsim_cjson_hints}
  DOC "Directory containing cjson/cJSON.h")
find_library(ACLSIM_CJSON_LIBRARY
  NAMES cjson
  HINTS ${_ACLSIM_PC_CJSON_LIBRARY_DIRS}
  DOC "cJSON library (libcjson.so)")
mark_as_advanced(ACLSIM_CJSON_INCLUDE_DIR ACLSIM_CJSON_LIBRARY)

if(ACLSIM_CJSON_INCLUDE_DIR AND ACLSIM_CJSON_LIBRARY)
  add_library(aclsim::cjson UNKNOWN IMPORTED)
  set_target_properties(aclsim::cjson PROPERTIES
    IMPORTED_LOCATION "${ACLSIM_CJSON_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${ACLSIM_CJSON_INCLUDE_DIR}")
  set(ACLSIM_CJSON_FOUND TRUE)
else()
  set(ACLSIM_CJSON_FOUND FALSE)
endif()

unset(_aclsim_cjson_hints)
unset(_dir)
unset(_parent)
