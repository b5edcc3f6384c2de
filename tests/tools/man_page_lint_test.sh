#!/usr/bin/env bash
# docs/man/redlock.1 renders without a warning from whatever of groff, man-db
# and mandoc is installed, and has the sections a section-1 page needs.
# Exits 77 (ctest: skipped) when no renderer is installed.
#
#   man_page_lint_test.sh path/to/redlock.1
set -uo pipefail

readonly PAGE=$1
source "$(dirname "${BASH_SOURCE[0]}")/checks.sh"

if ! command -v groff >/dev/null && ! command -v mandoc >/dev/null; then
  echo "SKIP: neither groff (Debian: groff-base) nor mandoc is installed, so $PAGE cannot be checked"
  exit 77
fi

checked=()
if command -v groff >/dev/null; then
  # -ww: every warning; -z: no output, only the diagnostics.
  warnings="$(groff -man -Tutf8 -ww -z "$PAGE" 2>&1)"
  [[ -z "$warnings" ]] || fail "groff -man -ww warns: $warnings"
  text="$(groff -man -Tascii -P-cbou "$PAGE" 2>/dev/null)"
  for heading in NAME SYNOPSIS DESCRIPTION COMMANDS OPTIONS ENVIRONMENT \
    "EXIT STATUS" EXAMPLES "SEE ALSO"; do
    grep -qx "$heading" <<<"$text" || fail "no section $heading in the rendered page"
  done
  sed -n '/^SEE ALSO/,$p' <<<"$text" | grep -q 'flock(1)' ||
    fail "SEE ALSO does not name flock(1)"
  grep -A1 '^NAME' <<<"$text" | grep -qE '^ +redlock +- ' ||
    fail "NAME is not 'redlock - ...' (whatis(1) reads it)"
  checked+=("groff -man -ww")
fi
if command -v man >/dev/null; then
  warnings="$(MANWIDTH=80 man --warnings -l "$PAGE" 2>&1 >/dev/null)"
  [[ -z "$warnings" ]] || fail "man --warnings -l warns: $warnings"
  checked+=("man --warnings -l")
fi
if command -v mandoc >/dev/null; then
  warnings="$(mandoc -T lint -W warning "$PAGE" 2>&1)"
  [[ -z "$warnings" ]] || fail "mandoc -T lint warns: $warnings"
  checked+=("mandoc -T lint")
else
  echo "note: mandoc is not installed; not run"
fi

((failures == 0)) || exit 1
echo "PASS: no warnings from ${checked[*]}; every section is there"
