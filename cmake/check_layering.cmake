# Run by the build (cmake/layers.cmake) as
#   cmake -DWHO=<target> -DROOT=<source dir> -DFILES=<a;b;...>
#         -DALLOWED=<folder;folder;...> -DSTAMP=<file> -P check_layering.cmake
# Every project include in FILES ("src/...", "tools/...", "bench/...",
# "fuzz/...", "tests/...") must be of a file under one of the ALLOWED
# folders; public headers ("redlock/...") are always allowed. Fails naming
# each include that does not, so the target that has it does not build.
# Writes STAMP when every include is allowed.
set(bad "")
set(checked 0)
foreach(file IN LISTS FILES)
  file(STRINGS "${ROOT}/${file}" lines
    REGEX "^#include \"(src|tools|bench|fuzz|tests)/[^\"]*\"")
  foreach(line IN LISTS lines)
    string(REGEX REPLACE "^#include \"([^\"]*)\".*" "\\1" included "${line}")
    math(EXPR checked "${checked} + 1")
    set(ok FALSE)
    foreach(folder IN LISTS ALLOWED)
      string(FIND "${included}" "${folder}/" at)
      if(at EQUAL 0)
        set(ok TRUE)
        break()
      endif()
    endforeach()
    if(NOT ok)
      string(APPEND bad "\n  ${file} includes ${included}")
    endif()
  endforeach()
endforeach()
if(NOT bad STREQUAL "")
  string(REPLACE ";" " " allowed_text "${ALLOWED}")
  message(FATAL_ERROR "${WHO} may include only from [${allowed_text}] "
    "and the public headers (redlock/...); these run the wrong way "
    "(cmake/layers.cmake):${bad}")
endif()
file(WRITE "${STAMP}" "${checked} includes checked\n")
