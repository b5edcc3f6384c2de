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
# Library sources every target links: the option parser, the reply copy and
# the vote mappers (with what they call).
LIB_SOURCES=(src/config/options.cc src/config/master_uri.cc src/config/master_list.cc src/algorithm/redis_reply.cc src/algorithm/vote.cc src/algorithm/scripts.cc src/algorithm/fence_scripts.cc src/algorithm/lock_scripts.cc src/algorithm/marker_scripts.cc src/algorithm/rwlock_scripts.cc src/algorithm/semaphore_scripts.cc
  src/algorithm/sha1.cc src/algorithm/membership.cc src/algorithm/persistence.cc)
# What the wire target links on top: the owned transport, the Master and the
# Subscriber on the production runtime (with what they call).
WIRE_SOURCES=(src/transport/wire.cc src/transport/reply_reader.cc src/transport/tls.cc
  src/transport/openssl_library.cc src/engine/master.cc src/engine/master_identity.cc
  src/engine/wakeups.cc src/transport/libevent_runtime.cc src/transport/deferred.cc src/algorithm/clock.cc
  src/algorithm/token.cc src/config/keys.cc)
CXX="${FUZZ_CXX:-clang++-14}"
SANITIZE="-fsanitize=address,undefined -fno-sanitize-recover=all"
CXXFLAGS=(-std=c++17 -O1 -g -fno-omit-frame-pointer -I. -Iinclude)
OUT=build-fuzz

# clang and its runtime libraries (libFuzzer is in libclang-rt-14-dev), on
# top of the project's usual dependencies.
ensure_fuzz_deps() {
  ensure_deps
  ensure_packages clang-14 libclang-rt-14-dev
}

# Compiles the library sources once (instrumented for coverage) and links
# each target. One line on success, the compiler's output on failure.
build_fuzzers() {
  local started=$SECONDS log rc=0 src obj objs=() wire_objs=() name libs
  local wire_libs extra_objs extra_libs
  log="$(mktemp "${TMPDIR:-/tmp}/redlock-fuzz-build.XXXXXX")"
  mkdir -p "$OUT/obj"
  # shellcheck disable=SC2207
  libs=($(pkg-config --libs hiredis absl_status absl_statusor absl_strings \
    absl_str_format absl_time)) || rc=$?
  # shellcheck disable=SC2207
  # OpenSSL is loaded at run time (src/transport/openssl_library.h).
  wire_libs=(-ldl $(pkg-config --libs libevent_core absl_random_random \
    absl_hash absl_raw_hash_set)) || rc=$?
  for src in "${LIB_SOURCES[@]}" "${WIRE_SOURCES[@]}"; do
    ((rc == 0)) || break
    obj="$OUT/obj/$(basename "$src" .cc).o"
    if [[ " ${WIRE_SOURCES[*]} " == *" $src "* ]]; then
      wire_objs+=("$obj")
    else
      objs+=("$obj")
    fi
    # shellcheck disable=SC2086
    "$CXX" "${CXXFLAGS[@]}" $SANITIZE -fsanitize=fuzzer-no-link \
      -c "$src" -o "$obj" >>"$log" 2>&1 || rc=$?
  done
  for name in "${FUZZERS[@]}"; do
    ((rc == 0)) || break
    extra_objs=()
    extra_libs=()
    if [[ $name == wire ]]; then
      extra_objs=("${wire_objs[@]}")
      extra_libs=("${wire_libs[@]}")
    fi
    # shellcheck disable=SC2086
    "$CXX" "${CXXFLAGS[@]}" $SANITIZE -fsanitize=fuzzer \
      "fuzz/${name}_fuzzer.cc" "${extra_objs[@]}" "${objs[@]}" \
      "${extra_libs[@]}" "${libs[@]}" \
      -o "$OUT/${name}_fuzzer" >>"$log" 2>&1 || rc=$?
  done
  if ((rc != 0)); then
    cat "$log" >&2
    rm -f "$log"
    echo "error: fuzzer build failed (exit $rc)" >&2
    return "$rc"
  fi
  rm -f "$log"
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
