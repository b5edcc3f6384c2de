#!/usr/bin/env bash
# Builds the test suite twice with gcc's sanitizers and runs it in each build:
#
#   build-asan  AddressSanitizer + UndefinedBehaviorSanitizer (leaks checked,
#               any UB report is fatal), Debug at -O1
#   build-tsan  ThreadSanitizer, -O1
#
# Benchmarks are not built. The install and docker-compose tests are skipped:
# they check packaging, not code, and the first would install a sanitized
# library; so is the demo's test, which checks what a user sees first (a
# sanitizer's own report on stderr would be a line the story does not have). The torture runs (label torture) are skipped too: they judge
# timing (a double grant that must appear within a short run, liveness within
# a TTL), which a sanitizer's several-fold slowdown on two cores distorts;
# they run in the plain build (scripts/test.sh). A test that fails is run
# once more (--repeat until-pass:2): the redis suites bound waits generously,
# but a sanitized build on two loaded cores can still miss one. The price: a
# sanitizer report that shows in one run only would pass on the retry.
# Arguments go to both ctest runs (e.g. `-R fault_`).
# Usage: scripts/sanitizers.sh [--asan-only|--tsan-only] [CTEST ARGS...]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/lib.sh

run_asan=1
run_tsan=1
case "${1:-}" in
  --asan-only) run_tsan=0; shift ;;
  --tsan-only) run_asan=0; shift ;;
esac

# build_sanitized DIR FLAGS [CMAKE ARGS...]: configures DIR (once) with gcc and
# the compile/link FLAGS, then builds it. Quiet like lib.sh's build_project,
# which always builds build/ with its own settings: one line on success, the
# whole log on failure.
build_sanitized() {
  local build_dir="$REDLOCK_ROOT/$1" flags="$2" log started rc=0
  shift 2
  log="$(mktemp "${TMPDIR:-/tmp}/redlock-build.XXXXXX")"
  started=$SECONDS
  if [[ ! -f "$build_dir/CMakeCache.txt" ]]; then
    CC=gcc CXX=g++ cmake -S "$REDLOCK_ROOT" -B "$build_dir" -G Ninja \
      -DCMAKE_BUILD_TYPE=Debug \
      -DREDLOCK_BUILD_BENCHMARKS=OFF \
      "-DCMAKE_C_FLAGS=$flags" "-DCMAKE_CXX_FLAGS=$flags" \
      "-DCMAKE_EXE_LINKER_FLAGS=$flags" "-DCMAKE_SHARED_LINKER_FLAGS=$flags" \
      "$@" >"$log" 2>&1 || rc=$?
  fi
  if ((rc == 0)); then
    cmake --build "$build_dir" -j"$(nproc 2>/dev/null || echo 2)" \
      >>"$log" 2>&1 || rc=$?
  fi
  if ((rc != 0)); then
    cat "$log" >&2
    rm -f "$log"
    echo "error: build of $build_dir failed (exit $rc)" >&2
    return "$rc"
  fi
  rm -f "$log"
  echo "Built the tests in $build_dir ($((SECONDS - started))s)."
}

# run_tests DIR [CTEST ARGS...]: the suite minus the packaging tests. Prints
# ctest's summary on success, its whole output (the sanitizer reports of the
# failing tests included) on failure.
run_tests() {
  local build_dir="$REDLOCK_ROOT/$1" started=$SECONDS rc=0 log
  shift
  log="$(mktemp "${TMPDIR:-/tmp}/redlock-ctest.XXXXXX")"
  ctest --test-dir "$build_dir" --output-on-failure -j2 --timeout 300 \
    --repeat until-pass:2 \
    -E "install_and_consume|docker_compose_config|demo_prints_only_its_story" \
    -LE torture "$@" \
    >"$log" 2>&1 || rc=$?
  if ((rc != 0)); then
    cat "$log" >&2
  else
    grep -E "tests passed|No tests were found" "$log" || true
  fi
  rm -f "$log"
  echo "ctest in $build_dir: exit $rc ($((SECONDS - started))s)."
  return "$rc"
}

ensure_deps
supp="$REDLOCK_ROOT/tests/sanitizers"
rc=0

if ((run_asan)); then
  build_sanitized build-asan \
    "-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all -O1"
  ASAN_OPTIONS="detect_leaks=1" \
  LSAN_OPTIONS="suppressions=$supp/lsan.supp:print_suppressions=0" \
  UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1" \
    run_tests build-asan "$@" || rc=1
fi

if ((run_tsan)); then
  build_sanitized build-tsan "-fsanitize=thread -O1"
  TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$supp/tsan.supp" \
    run_tests build-tsan "$@" || rc=1
fi

if ((rc != 0)); then
  echo "error: a sanitizer run failed (see above)" >&2
fi
exit "$rc"
