#!/usr/bin/env bash
# systemd-analyze verify on examples/systemd/redlock-nightly.{service,timer},
# which must pass without a word of complaint, and the service's
# SuccessExitStatus= must be the tool's conflict exit code (75 in
# `redlock --help`'s exit codes). Exits 77 (ctest: skipped) without
# systemd-analyze.
#
# verify checks that ExecStart='s programs exist and that the
# Documentation= man page opens, so it runs on copies whose two absolute
# paths point at the built redlock and a stub job, with MANPATH at the
# source tree's page.
#
#   systemd_units_test.sh SOURCE_DIR path/to/redlock
set -uo pipefail

readonly SRC=$1 REDLOCK=$2
UNITS="$SRC/examples/systemd"
source "$(dirname "${BASH_SOURCE[0]}")/checks.sh"

# The code the help gives for "held by another owner".
conflict="$("$REDLOCK" --help | awk '/^Exit codes:/ { on = 1 } on && /held by another owner/ { print $1; exit }')"
[[ "$conflict" =~ ^[0-9]+$ ]] || fail "no 'held by another owner' exit code in redlock --help"
success="$(sed -n 's/^SuccessExitStatus=//p' "$UNITS/redlock-nightly.service")"
[[ "$success" == "$conflict" ]] ||
  fail "SuccessExitStatus=$success, but redlock exits $conflict when another replica holds the lock"
grep -q '^ExecStart=/usr/bin/redlock run ' "$UNITS/redlock-nightly.service" ||
  fail "ExecStart= is not '/usr/bin/redlock run ...'"

if ! command -v systemd-analyze >/dev/null; then
  echo "SKIP: systemd-analyze is not installed (Debian: systemd), so the units were not verified"
  ((failures == 0)) || exit 1
  exit 77
fi

WORK="$(mktemp -d "${TMPDIR:-/tmp}/redlock-units.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
cp "$UNITS/redlock-nightly.service" "$UNITS/redlock-nightly.timer" "$WORK/"
printf '#!/bin/sh\nexit 0\n' >"$WORK/recalc-ratings"
chmod +x "$WORK/recalc-ratings"
sed -i -e "s|^ExecStart=/usr/bin/redlock |ExecStart=$(realpath "$REDLOCK") |" \
  -e "s|/usr/local/bin/recalc-ratings|$WORK/recalc-ratings|" \
  "$WORK/redlock-nightly.service"
mkdir -p "$WORK/man/man1"
cp "$SRC/docs/man/redlock.1" "$WORK/man/man1/"

out="$(cd "$WORK" && MANPATH="$WORK/man" SYSTEMD_LOG_LEVEL=notice \
  systemd-analyze verify ./redlock-nightly.service ./redlock-nightly.timer 2>&1)"
rc=$?
((rc == 0)) || fail "systemd-analyze verify exited $rc"
[[ -z "$out" ]] || fail "systemd-analyze verify says: $out"

((failures == 0)) || exit 1
echo "PASS: systemd-analyze verify accepts both units; SuccessExitStatus=$success is redlock's conflict code"
