#!/usr/bin/env bash
# Turns every C++ block of README.md and of the guide beside it,
# docs/usage.md (```cpp and ```c++), into a function of one translation
# unit, with a CMake project that builds it against the installed redlock
# with -Wall -Wextra -Werror, so that the examples cannot rot. Each block
# must follow a marker saying how it compiles:
#   <!-- readme-example: body -->         the body of a function returning
#                                         absl::Status, nothing in scope
#   <!-- readme-example: body-with-client -->  the same, with `client`
#                                         (absl::StatusOr<std::unique_ptr<
#                                         redlock::Redlock>>&) and `options`
#                                         (redlock::Options&) in scope
# `return absl::OkStatus();` is appended to each. #line directives point
# compiler errors at the page's lines (README.md, docs/usage.md). A C++
# block without a marker, or with an unknown one, is an error, and so is a
# page without a C++ block.
# Usage: readme_examples.sh README.md PRELUDE.h OUT_DIR [MORE.md...]
#   docs/usage.md beside README.md is always read too (it must exist); any
#   MORE.md after OUT_DIR as well.
#   then: cmake -S OUT_DIR -B OUT_DIR/build && cmake --build OUT_DIR/build
set -euo pipefail
readme=$1
prelude=$2
out=$3
shift 3
root=$(dirname "$readme")
guide="$root/docs/usage.md"
if [[ ! -f "$guide" ]]; then
  echo "readme_examples.sh: no docs/usage.md beside $readme" >&2
  exit 1
fi
pages=("$readme" "$guide" "$@")
# Each page's name as #line gives it: its path from README.md's folder.
names=()
for page in "${pages[@]}"; do
  names+=("$(realpath --relative-to="$root" "$page")")
done
mkdir -p "$out"
cp "$prelude" "$out/prelude.h"

awk -v names="${names[*]}" '
  function fail(msg) { print page ":" FNR ": " msg > "/dev/stderr"; bad = 1; exit 1 }
  function end_page() {
    if (inblock) fail("unterminated C++ block")
    if (page != "" && in_page == 0) fail("no C++ blocks found")
  }
  BEGIN { print "#include \"prelude.h\""; print ""; n = 0; split(names, name, " "); file = 0 }
  FNR == 1 { end_page(); file++; page = name[file]; in_page = 0; pending = ""; inblock = 0 }
  /^[[:space:]]*<!-- readme-example: [a-z-]+ -->[[:space:]]*$/ {
    kind = $0; sub(/.*readme-example: /, "", kind); sub(/ -->.*/, "", kind)
    if (kind != "body" && kind != "body-with-client") fail("unknown readme-example kind \"" kind "\"")
    pending = kind; pending_line = FNR; next
  }
  !inblock && /^[[:space:]]*```(cpp|c\+\+)[[:space:]]*$/ {
    if (pending == "" || pending_line != FNR - 1)
      fail("C++ block without a <!-- readme-example: ... --> line right above it")
    n++; in_page++
    if (pending == "body") {
      printf "absl::Status ReadmeExample%d() {\n", n
    } else {
      printf "absl::Status ReadmeExample%d(\n", n
      print "    [[maybe_unused]] absl::StatusOr<std::unique_ptr<redlock::Redlock>>& client,"
      print "    [[maybe_unused]] redlock::Options& options) {"
    }
    printf "#line %d \"%s\"\n", FNR + 1, page
    inblock = 1; pending = ""; indent = $0; sub(/```.*/, "", indent); next
  }
  inblock && /^[[:space:]]*```[[:space:]]*$/ {
    print "  return absl::OkStatus();"; print "}"; print ""; inblock = 0; next
  }
  inblock { line = $0; if (index(line, indent) == 1) line = substr(line, length(indent) + 1); print line; next }
  { pending = "" }
  END {
    if (bad) exit 1
    end_page()
    if (file != length(name)) { page = name[file + 1]; FNR = 0; fail("empty page") }
    print "int main() { return 0; }  // Compiled and linked, not run."
    print n " C++ blocks (" names ")" > "/dev/stderr"
  }
' "${pages[@]}" >"$out/readme_examples.cc"

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
