#!/usr/bin/env bash
# `cmake --install --component tool` puts redlock(1) where man(1) finds it
# (gzip -9n compressed when gzip was found: no name, no time stamp, the page
# itself inside) and the bash completion where bash-completion loads it
# (share/bash-completion/completions/redlock).
#
#   tool_install_test.sh SOURCE_DIR BUILD_DIR
set -uo pipefail

readonly SRC=$1 BUILD=$2
PREFIX="$(mktemp -d "${TMPDIR:-/tmp}/redlock-tool-install.XXXXXX")"
trap 'rm -rf "$PREFIX"' EXIT
source "$(dirname "${BASH_SOURCE[0]}")/checks.sh"

# The compressed page is an ALL target; build it in case only some targets
# were built.
if cmake --build "$BUILD" --target help 2>/dev/null | grep -q redlock_man_page; then
  cmake --build "$BUILD" --target redlock_man_page >/dev/null ||
    fail "building redlock_man_page failed"
fi
cmake --install "$BUILD" --component tool --prefix "$PREFIX" >"$PREFIX.log" 2>&1 || {
  cat "$PREFIX.log"
  rm -f "$PREFIX.log"
  echo "FAIL: cmake --install --component tool failed"
  exit 1
}
rm -f "$PREFIX.log"

man1="$PREFIX/share/man/man1"
if [[ -f "$man1/redlock.1.gz" ]]; then
  cmp -s <(gzip -dc "$man1/redlock.1.gz") "$SRC/docs/man/redlock.1" ||
    fail "redlock.1.gz does not hold docs/man/redlock.1"
  # gzip -n: header bytes 4..7 (MTIME) are zero and FLG (byte 3) has no
  # FNAME bit, so the package is the same whenever it is built.
  read -r flg < <(od -An -tu1 -j3 -N1 "$man1/redlock.1.gz")
  read -r mtime < <(od -An -tu4 -j4 -N4 "$man1/redlock.1.gz")
  ((mtime == 0 && (flg & 8) == 0)) ||
    fail "redlock.1.gz has a time stamp ($mtime) or a file name (FLG $flg): not gzip -n"
elif [[ -f "$man1/redlock.1" ]]; then
  cmp -s "$man1/redlock.1" "$SRC/docs/man/redlock.1" ||
    fail "redlock.1 is not docs/man/redlock.1"
  echo "note: installed uncompressed (gzip was not found at configure time)"
else
  fail "no redlock.1 or redlock.1.gz under $man1 ($(ls -R "$PREFIX" | head -20 | xargs))"
fi

if command -v man >/dev/null; then
  found="$(MANPATH="$PREFIX/share/man" man -w redlock 2>&1)"
  [[ "$found" == "$man1/redlock.1"* ]] ||
    fail "man -w redlock with MANPATH=$PREFIX/share/man says: $found"
else
  echo "note: man is not installed; man -w not tried"
fi

completion="$PREFIX/share/bash-completion/completions/redlock"
if [[ -f "$completion" ]]; then
  cmp -s "$completion" "$SRC/tools/redlock/completion/redlock.bash" ||
    fail "$completion is not tools/redlock/completion/redlock.bash"
  bash --norc -c "source '$completion' && complete -p redlock" >/dev/null ||
    fail "sourcing $completion registers no completion for redlock"
else
  fail "no $completion"
fi

((failures == 0)) || exit 1
echo "PASS: man -w redlock finds $(MANPATH="$PREFIX/share/man" man -w redlock 2>/dev/null | sed "s|$PREFIX|PREFIX|"); the completion is at PREFIX/share/bash-completion/completions/redlock"
