#!/usr/bin/env bash
# Turns every C++ block of README.md (```cpp and ```c++) into a function of
# one translation unit, with a CMake project that builds it against the
# installed redlock with -Wall -Wextra -Werror, so that the examples cannot
# rot. Each block must follow a marker saying how it compiles:
#   <!-- readme-example: body -->         the body of a function returning
#                                         absl::Status, nothing in scope
#   <!-- readme-example: body-with-client -->  the same, with `client`
#                                         (absl::StatusOr<std::unique_ptr<
#                                         redlock::Redlock>>&) and `options`
#                                         (redlock::Options&) in scope
# `return absl::OkStatus();` is appended to each. #line directives point
# compiler errors at README.md's lines. A C++ block without a marker, or
# with an unknown one, is an error.
# Usage: readme_examples.sh README.md PRELUDE.h OUT_DIR
#   then: cmake -S OUT_DIR -B OUT_DIR/build && cmake --build OUT_DIR/build
set -euo pipefail
readme=$1
prelude=$2
out=$3
mkdir -p "$out"
cp "$prelude" "$out/prelude.h"

awk -v readme="$(basename "$readme")" '
  function fail(msg) { print readme ":" NR ": " msg > "/dev/stderr"; bad = 1; exit 1 }
  BEGIN { print "#include \"prelude.h\""; print ""; n = 0 }
  /^[[:space:]]*<!-- readme-example: [a-z-]+ -->[[:space:]]*$/ {
    kind = $0; sub(/.*readme-example: /, "", kind); sub(/ -->.*/, "", kind)
    if (kind != "body" && kind != "body-with-client") fail("unknown readme-example kind \"" kind "\"")
    pending = kind; pending_line = NR; next
  }
  !inblock && /^[[:space:]]*```(cpp|c\+\+)[[:space:]]*$/ {
    if (pending == "" || pending_line != NR - 1)
      fail("C++ block without a <!-- readme-example: ... --> line right above it")
    n++
    if (pending == "body") {
      printf "absl::Status ReadmeExample%d() {\n", n
    } else {
      printf "absl::Status ReadmeExample%d(\n", n
      print "    [[maybe_unused]] absl::StatusOr<std::unique_ptr<redlock::Redlock>>& client,"
      print "    [[maybe_unused]] redlock::Options& options) {"
    }
    printf "#line %d \"%s\"\n", NR + 1, readme
    inblock = 1; pending = ""; indent = $0; sub(/```.*/, "", indent); next
  }
  inblock && /^[[:space:]]*```[[:space:]]*$/ {
    print "  return absl::OkStatus();"; print "}"; print ""; inblock = 0; next
  }
  inblock { line = $0; if (index(line, indent) == 1) line = substr(line, length(indent) + 1); print line; next }
  { pending = "" }
  END {
    if (bad) exit 1
    if (inblock) fail("unterminated C++ block")
    if (n == 0) fail("no C++ blocks found")
    print "int main() { return 0; }  // Compiled and linked, not run."
    print n " C++ blocks" > "/dev/stderr"
  }
' "$readme" >"$out/readme_examples.cc"

cat >"$out/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.25)
project(readme_examples LANGUAGES CXX)
set(CMAKE_CXX_STANDARD 17)
set(CMAKE_CXX_STANDARD_REQUIRED ON)
find_package(redlock CONFIG REQUIRED COMPONENTS prometheus)
find_package(prometheus-cpp CONFIG REQUIRED)
add_executable(readme_examples readme_examples.cc)
target_compile_options(readme_examples PRIVATE -Wall -Wextra -Werror)
target_link_libraries(readme_examples PRIVATE redlock::redlock
  redlock::prometheus prometheus-cpp::pull)
CMAKE
