#!/usr/bin/env bash
# `redlock --version` and `-V`: the tool's and the library's version, then
# hiredis (built with), the libevent and the OpenSSL this process loaded.
# Needs no masters. Usage: version_flag_test.sh REDLOCK_BINARY VERSION
set -euo pipefail
redlock=$1
version=$2
fail() { echo "FAIL: $*" >&2; exit 1; }

for flags in "--version" "-V" "-V status job" "--version --masters=bogus"; do
  # shellcheck disable=SC2086
  out=$("$redlock" $flags) || fail "redlock $flags exited $?"
  mapfile -t lines <<<"$out"
  ((${#lines[@]} == 4)) || fail "redlock $flags: ${#lines[@]} lines: $out"
  [[ "${lines[0]}" == "redlock $version (library $version)" ]] ||
    fail "redlock $flags: first line: ${lines[0]}"
  [[ "${lines[1]}" =~ ^hiredis\ [0-9]+\.[0-9]+\.[0-9]+\ \(built\ with\)$ ]] ||
    fail "redlock $flags: hiredis line: ${lines[1]}"
  [[ "${lines[2]}" == "libevent $(pkg-config --modversion libevent)" ]] ||
    fail "redlock $flags: libevent line: ${lines[2]}"
  # `openssl version`: "OpenSSL 3.0.15 3 Sep 2024 (Library: OpenSSL ...)".
  openssl_lib=$(openssl version)
  openssl_lib=${openssl_lib##*(Library: }
  openssl_lib=${openssl_lib%)}
  [[ "${lines[3]}" == "$openssl_lib" ]] ||
    fail "redlock $flags: OpenSSL line: ${lines[3]} (openssl: $openssl_lib)"
done
echo "version flag: ok"
