#!/usr/bin/env bash
# Installs the built project into a temporary prefix and builds a consumer
# against it twice: with find_package(redlock CONFIG) and with pkg-config.
# Usage: run_install_test.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src=$1
build=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cmake --install "$build" --prefix "$work/prefix" > "$work/install.log"
test -f "$work/prefix/include/redlock/redlock.h"
test -f "$work/prefix/lib/cmake/redlock/redlockConfig.cmake" ||
  test -f "$work/prefix/lib/x86_64-linux-gnu/cmake/redlock/redlockConfig.cmake"
# The installed library holds none of the simulation's unsafe rules.
installed_lib=$(find "$work/prefix" -name 'libredlock.a' | head -n1)
test -n "$installed_lib"
bash "$src/tests/tools/library_symbols_test.sh" "$installed_lib"
pc=$(find "$work/prefix" -name redlock.pc | head -n1)
test -n "$pc"

echo "== find_package(redlock CONFIG)"
cmake -S "$src/tests/install/consumer" -B "$work/consumer" \
  -DCMAKE_PREFIX_PATH="$work/prefix" > "$work/configure.log" ||
  { cat "$work/configure.log"; exit 1; }
cmake --build "$work/consumer" > "$work/build.log" ||
  { cat "$work/build.log"; exit 1; }
"$work/consumer/consumer"

# redlock::prometheus, when the build had prometheus-cpp.
if [[ -n "$(find "$work/prefix" -name redlockPrometheusTargets.cmake)" ]]; then
  echo "== find_package(redlock CONFIG COMPONENTS prometheus)"
  cmake -S "$src/tests/install/prometheus_consumer" \
    -B "$work/prometheus_consumer" -DCMAKE_PREFIX_PATH="$work/prefix" \
    > "$work/configure-prometheus.log" ||
    { cat "$work/configure-prometheus.log"; exit 1; }
  cmake --build "$work/prometheus_consumer" > "$work/build-prometheus.log" ||
    { cat "$work/build-prometheus.log"; exit 1; }
  "$work/prometheus_consumer/prometheus_consumer"

  # The C++ blocks of README.md and docs/usage.md, warnings as errors (they use redlock::prometheus).
  echo "== the C++ examples of README.md and docs/usage.md"
  "$src/tests/tools/readme_examples.sh" "$src/README.md" \
    "$src/tests/tools/readme_examples/prelude.h" "$work/readme_examples"
  cmake -S "$work/readme_examples" -B "$work/readme_examples/build" \
    -DCMAKE_PREFIX_PATH="$work/prefix" > "$work/configure-readme.log" ||
    { cat "$work/configure-readme.log"; exit 1; }
  cmake --build "$work/readme_examples/build" > "$work/build-readme.log" ||
    { cat "$work/build-readme.log"; exit 1; }
fi

echo "== pkg-config"
export PKG_CONFIG_PATH="$(dirname "$pc")"
# shellcheck disable=SC2046
g++ -std=c++17 "$src/tests/install/consumer/main.cc" -o "$work/consumer_pc" \
  $(pkg-config --cflags redlock) $(pkg-config --libs --static redlock)
"$work/consumer_pc"
echo "install and consume: ok"
