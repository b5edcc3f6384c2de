#!/usr/bin/env bash
# The demo's output is its story: it runs (exit 0) on masters it starts
# itself, and prints nothing on stderr and no warning on stdout — a user's
# first screen (issue 46: the same persistence warning 25 times drowned it).
# Fails naming every line that is not part of the story.
# Usage: demo_test.sh SOURCE_DIR BUILD_DIR
set -uo pipefail
source_dir=$1
build_dir=$2
out=$(mktemp "${TMPDIR:-/tmp}/redlock-demo-test.XXXXXX")
err=$(mktemp "${TMPDIR:-/tmp}/redlock-demo-test.XXXXXX")
trap 'rm -f "$out" "$err"' EXIT
env -u REDLOCK_MASTERS REDLOCK_DEMO_BUILD_DIR="$build_dir" \
  timeout 240 bash "$source_dir/scripts/demo.sh" >"$out" 2>"$err"
rc=$?
bad=0
if ((rc != 0)); then
  echo "FAIL: demo.sh exited $rc"
  bad=1
fi
if [[ -s "$err" ]]; then
  echo "FAIL: $(wc -l <"$err") line(s) on stderr that are not part of the story:"
  sed 's/^/  /' "$err"
  bad=1
fi
if grep -qi 'warning' "$out"; then
  echo "FAIL: a warning on stdout:"
  grep -i 'warning' "$out" | sed 's/^/  /'
  bad=1
fi
if ((bad)); then
  echo "--- stdout:"
  cat "$out"
  exit 1
fi
echo "demo: exit 0, $(wc -l <"$out") lines of story, none on stderr"
