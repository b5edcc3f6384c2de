#!/usr/bin/env bash
# Builds the libFuzzer targets in fuzz/ with clang (ASan + UBSan) into
# build-fuzz/ and runs each one for a bounded time, starting from the seed
# corpus committed in fuzz/corpus/<name>/.
#
#   scripts/fuzz.sh            # CI: 30s per target
#   scripts/fuzz.sh --long     # 10 minutes per target
#   scripts/fuzz.sh --time N   # N seconds per target
#   scripts/fuzz.sh --build    # build only
#
# New interesting inputs go to build-fuzz/corpus/<name>/ (kept between runs,
# never into the committed seeds). A crash or broken invariant stops the run
# with the fuzzer's report; the input is saved as
# build-fuzz/artifacts/<name>-crash-*. Turn it into a case in
# tests/transport/fuzz_regressions_test.cc, fix the bug, then commit both.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/lib.sh

seconds=30
build_only=0
while (($# > 0)); do
  case "$1" in
    --long) seconds=600 ;;
    --time) seconds="${2:?--time needs seconds}"; shift ;;
    --build) build_only=1 ;;
    *) echo "usage: $0 [--long | --time SECONDS] [--build]" >&2; exit 2 ;;
  esac
  shift
done

FUZZERS=(uri reply wire)
CXX="${FUZZ_CXX:-clang++-14}"
CC="${FUZZ_CC:-clang-14}"
SANITIZE="-fsanitize=address,undefined -fno-sanitize-recover=all"
OUT=build-fuzz

# clang and its runtime libraries (libFuzzer is in libclang-rt-14-dev), on
# top of the project's usual dependencies.
ensure_fuzz_deps() {
  ensure_deps
  ensure_packages clang-14 libclang-rt-14-dev
}

# Configures $OUT as a build of its own (fuzz/CMakeLists.txt): the library
# and the fuzzers only, every file instrumented for coverage and checked by
# ASan and UBSan; the fuzzers link the library target. One line on success,
# the output of cmake and the compiler on failure.
build_fuzzers() {
  local started=$SECONDS log rc=0 targets=()
  log="$(mktemp "${TMPDIR:-/tmp}/redlock-fuzz-build.XXXXXX")"
  for name in "${FUZZERS[@]}"; do targets+=("${name}_fuzzer"); done
  cmake -S . -B "$OUT" -G Ninja -DCMAKE_BUILD_TYPE=Fuzz \
    -DCMAKE_C_COMPILER="$CC" -DCMAKE_CXX_COMPILER="$CXX" \
    -DCMAKE_CXX_FLAGS_FUZZ="-O1 -g -fno-omit-frame-pointer" \
    -DCMAKE_C_FLAGS_FUZZ="-O1 -g -fno-omit-frame-pointer" \
    -DCMAKE_CXX_FLAGS="$SANITIZE -fsanitize=fuzzer-no-link" \
    -DCMAKE_C_FLAGS="$SANITIZE -fsanitize=fuzzer-no-link" \
    -DCMAKE_EXE_LINKER_FLAGS="$SANITIZE" \
    -DBUILD_SHARED_LIBS=OFF -DREDLOCK_BUILD_FUZZERS=ON \
    -DREDLOCK_BUILD_TESTS=OFF -DREDLOCK_BUILD_BENCHMARKS=OFF \
    -DREDLOCK_BUILD_TOOLS=OFF -DREDLOCK_BUILD_PROMETHEUS=OFF \
    >>"$log" 2>&1 || rc=$?
  if ((rc == 0)); then
    cmake --build "$OUT" -j"$(nproc 2>/dev/null || echo 2)" \
      --target "${targets[@]}" >>"$log" 2>&1 || rc=$?
  fi
  if ((rc != 0)); then
    cat "$log" >&2
    rm -f "$log"
    echo "error: fuzzer build failed (exit $rc)" >&2
    return "$rc"
  fi
  rm -f "$log"
  for name in "${FUZZERS[@]}"; do
    ln -sf "fuzz/${name}_fuzzer" "$OUT/${name}_fuzzer"
  done
  echo "Built ${FUZZERS[*]} fuzzers in $OUT ($((SECONDS - started))s)."
}

# run_fuzzer NAME: SECONDS of fuzzing. Prints one summary line; the whole
# log (with the crash report) if it finds something.
run_fuzzer() {
  local name=$1 log rc=0 started=$SECONDS max_len=4096
  # A real handshake's replies (INFO server and memory) are about 2.5 KB.
  [[ $name == wire ]] && max_len=8192
  mkdir -p "$OUT/corpus/$name" "$OUT/artifacts" "$OUT/logs"
  log="$OUT/logs/$name.log"
  ASAN_OPTIONS="detect_leaks=1:allocator_may_return_null=1" \
  UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1" \
    "$OUT/${name}_fuzzer" -max_total_time="$seconds" -timeout=10 \
      -rss_limit_mb=2048 -max_len="$max_len" -print_final_stats=1 \
      -artifact_prefix="$OUT/artifacts/$name-" \
      "$OUT/corpus/$name" "fuzz/corpus/$name" >"$log" 2>&1 || rc=$?
  if ((rc != 0)); then
    cat "$log" >&2
    echo "error: the $name fuzzer failed (exit $rc); input saved in $OUT/artifacts/" >&2
    return "$rc"
  fi
  local runs cov
  runs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")"
  cov="$(grep -o 'cov: [0-9]*' "$log" | tail -n 1)"
  echo "Fuzzed $name for $((SECONDS - started))s: ${runs:-?} inputs, ${cov:-cov: ?} edges, corpus $(find "$OUT/corpus/$name" -type f | wc -l) files, no crash."
}

ensure_fuzz_deps
build_fuzzers
((build_only)) && exit 0
rc=0
for name in "${FUZZERS[@]}"; do
  run_fuzzer "$name" || rc=1
done
exit "$rc"
