#!/usr/bin/env bash
# The build refuses an include that runs up (cmake/layers.cmake: each
# layer's target depends on cmake/check_layering.cmake reading its folder).
# This test pins that the refusal works and covers the tree:
#
#   - the check fails on an include of a folder the target may not use,
#     naming the file and the include, and writes no stamp;
#   - it passes, writing its stamp, when every include is allowed, and
#     always allows the public headers ("redlock/...");
#   - every folder of src/ is a declared layer (redlock_layer(NAME x) in
#     CMakeLists.txt, or a target checked with FOLDERS src/x), and no source
#     file sits at the top of src/;
#   - the tool, the benchmarks and the fuzzers are checked too.
#
# Usage: layering_test.sh SOURCE_DIR
set -euo pipefail
root=$(cd "$1" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/redlock-layering.XXXXXX")
trap 'rm -rf "$work"' EXIT
bad=0
fail() {
  echo "FAIL: $*"
  bad=$((bad + 1))
}

check() {  # check WHO FILES ALLOWED: runs the build's check over $work.
  cmake -DWHO="$1" -DROOT="$work" -DFILES="$2" -DALLOWED="$3" \
    -DSTAMP="$work/stamp" -P "$root/cmake/check_layering.cmake" 2>&1
}

mkdir -p "$work/src/engine" "$work/tools/redlock"
cat >"$work/src/engine/up.cc" <<'CC'
#include "src/engine/engine.h"
#include "src/algorithm/vote.h"
#include "redlock/lock.h"
#include "src/admin/probe.h"
CC
if out=$(check redlock_engine "src/engine/up.cc" "src/engine;src/algorithm"); then
  fail "an engine file including src/admin/probe.h was let through: $out"
elif [[ $out != *"src/engine/up.cc includes src/admin/probe.h"* ]]; then
  fail "the refusal does not name the file and the include: $out"
elif [[ $out == *"includes src/algorithm/vote.h"* || $out == *"redlock/lock.h"* ]]; then
  fail "the refusal names allowed includes too: $out"
elif [[ -e $work/stamp ]]; then
  fail "a refused check wrote its stamp"
fi

cat >"$work/tools/redlock/ok.cc" <<'CC'
#include "tools/redlock/cli.h"
#include "src/admin/probe.h"
#include "redlock/redlock.h"
CC
if ! out=$(check redlock_cli "tools/redlock/ok.cc" "tools/redlock;src/admin"); then
  fail "allowed includes were refused: $out"
elif [[ $(cat "$work/stamp") != "2 includes checked" ]]; then
  fail "the stamp says '$(cat "$work/stamp")', not 2 includes checked"
fi
# A folder's name is not a prefix of another's: src/admin does not allow
# src/administration/.
echo '#include "src/administration/x.h"' >"$work/tools/redlock/near.cc"
if out=$(check redlock_cli "tools/redlock/near.cc" "tools/redlock;src/admin"); then
  fail "src/administration/x.h passed as src/admin: $out"
fi

# Every folder of src/ is a layer the build checks.
cd "$root"
for path in src/*; do
  name=${path#src/}
  if [[ -f $path ]]; then
    fail "$path is at the top of src/; put it in the folder of its layer"
  elif ! grep -q "redlock_layer(NAME $name\$" CMakeLists.txt &&
       ! grep -rq "FOLDERS src/$name\b" CMakeLists.txt cmake; then
    fail "src/$name/ is not a layer the build checks (cmake/layers.cmake)"
  fi
done
# And what sits above the library.
for folder in tools/redlock tools/torture tools/fault_proxy bench fuzz \
              include/redlock; do
  if ! grep -rq "FOLDERS $folder\b" CMakeLists.txt cmake tools bench fuzz; then
    fail "$folder is not checked by the build (redlock_check_layering)"
  fi
done

echo "layering: $bad failures"
((bad == 0))
