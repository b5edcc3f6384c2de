# The layers of the code and which may use which (docs/design.md, "The
# parts"). Each folder of src/ is a layer and a target of its own, in the
# style of Abseil's absl_cc_library: its sources and the layers it depends
# on, and nothing else. The build refuses an include that runs up: before a
# layer's target compiles, cmake/check_layering.cmake reads every #include
# of its folder and fails the build naming any include of a folder the
# layer does not depend on (directly or through another layer). The same
# check guards the tool (tools/), the benchmarks (bench/) and the fuzzers
# (fuzz/), which sit above the library:
#
#   algorithm   pure pieces, no I/O
#   config      options and their parsing         -> algorithm
#   transport   sockets, TLS, libevent             -> algorithm
#   engine      the engine and its operations      -> config transport
#   api         the public facades                 -> engine
#   admin       the operator's API (not installed) -> engine
#   prometheus  the optional observer              -> public headers only
#   tools/      the redlock tool                   -> admin
#
# libredlock is made of the objects of algorithm..api; redlock_admin of
# admin's.

# The folders a layer may include from: its own and its dependencies',
# transitively. REDLOCK_LAYER_<name>_FOLDERS after redlock_layer().
function(redlock_layer_folders out)
  set(folders "")
  foreach(dep IN LISTS ARGN)
    if(NOT DEFINED REDLOCK_LAYER_${dep}_FOLDERS)
      message(FATAL_ERROR "unknown layer ${dep} (cmake/layers.cmake)")
    endif()
    list(APPEND folders ${REDLOCK_LAYER_${dep}_FOLDERS})
  endforeach()
  list(REMOVE_DUPLICATES folders)
  set(${out} "${folders}" PARENT_SCOPE)
endfunction()

# redlock_check_layering(TARGET <target> FOLDERS <dir>... ALLOWED <dir>...)
# Makes <target> depend on a check that every file under FOLDERS (relative
# to the source root) includes only from FOLDERS, ALLOWED and the public
# headers. Re-run whenever one of those files changes.
function(redlock_check_layering)
  cmake_parse_arguments(ARG "" "TARGET" "FOLDERS;ALLOWED" ${ARGN})
  set(globs "")
  foreach(folder IN LISTS ARG_FOLDERS)
    list(APPEND globs "${PROJECT_SOURCE_DIR}/${folder}/*.h"
      "${PROJECT_SOURCE_DIR}/${folder}/*.cc")
  endforeach()
  file(GLOB_RECURSE files CONFIGURE_DEPENDS RELATIVE "${PROJECT_SOURCE_DIR}"
    ${globs})
  set(stamp "${CMAKE_CURRENT_BINARY_DIR}/${ARG_TARGET}.layering")
  set(allowed ${ARG_FOLDERS} ${ARG_ALLOWED})
  string(REPLACE ";" "\\;" files_arg "${files}")
  string(REPLACE ";" "\\;" allowed_arg "${allowed}")
  list(TRANSFORM files PREPEND "${PROJECT_SOURCE_DIR}/" OUTPUT_VARIABLE deps)
  add_custom_command(OUTPUT "${stamp}"
    COMMAND ${CMAKE_COMMAND} -DWHO=${ARG_TARGET} -DROOT=${PROJECT_SOURCE_DIR}
      -DFILES=${files_arg} -DALLOWED=${allowed_arg} -DSTAMP=${stamp}
      -P ${PROJECT_SOURCE_DIR}/cmake/check_layering.cmake
    DEPENDS ${deps} ${PROJECT_SOURCE_DIR}/cmake/check_layering.cmake
    COMMENT "Checking that ${ARG_TARGET}'s includes run down"
    VERBATIM)
  add_custom_target(${ARG_TARGET}_layering DEPENDS "${stamp}")
  add_dependencies(${ARG_TARGET} ${ARG_TARGET}_layering)
endfunction()

# redlock_layer(NAME <name> SOURCES <file>... DEPS <layer>...
#               [LINK <library>...])
# An object library redlock_<name> of src/<name>/'s SOURCES, compiled as
# the library is, which may include from src/<name>/ and its DEPS' folders.
function(redlock_layer)
  cmake_parse_arguments(ARG "" "NAME" "SOURCES;DEPS;LINK" ${ARGN})
  redlock_layer_folders(below ${ARG_DEPS})
  set(REDLOCK_LAYER_${ARG_NAME}_FOLDERS src/${ARG_NAME} ${below}
    PARENT_SCOPE)
  set(target redlock_${ARG_NAME})
  add_library(${target} OBJECT ${ARG_SOURCES})
  target_include_directories(${target} PUBLIC
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}>)
  foreach(dep IN LISTS ARG_DEPS)
    target_link_libraries(${target} PUBLIC redlock_${dep})
  endforeach()
  target_link_libraries(${target} PUBLIC ${ARG_LINK})
  target_compile_options(${target} PRIVATE -Wall -Wextra
    -Wno-unused-parameter
    # GCC 12 reports std::optional members as maybe-uninitialized falsely.
    $<$<CXX_COMPILER_ID:GNU>:-Wno-maybe-uninitialized>)
  redlock_check_layering(TARGET ${target} FOLDERS src/${ARG_NAME}
    ALLOWED ${below})
endfunction()
