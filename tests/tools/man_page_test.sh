#!/usr/bin/env bash
# Keeps docs/man/redlock.1 in step with the tool:
#   - every subcommand and option `redlock --help` lists is in the man page
#     (COMMANDS; OPTIONS), and the page lists no other;
#   - each subcommand's "Options:" list in COMMANDS is the set of options
#     the help marks as that subcommand's ("run, acquire: ...");
#   - every option the page documents is one the tool accepts (not "unknown
#     option");
#   - every REDLOCK_* variable the help names is under ENVIRONMENT, every
#     exit code of the help under EXIT STATUS.
# The tool has no per-subcommand help (`redlock run --help` is the main
# help), so the main help is the whole option table.
#
#   man_page_test.sh path/to/redlock path/to/redlock.1
set -uo pipefail

readonly REDLOCK=$1 PAGE=$2
source "$(dirname "${BASH_SOURCE[0]}")/help_lib.sh"
load_help "$REDLOCK"

source "$(dirname "${BASH_SOURCE[0]}")/checks.sh"
require_readable "$PAGE"

# The roff source of section $1 (".SH $1" up to the next .SH), with "\-"
# written "-".
section() {
  awk -v want="$1" '
    /^\.SH / { sub(/^\.SH +/, ""); gsub(/"/, ""); on = ($0 == want); next }
    on { print }' "$PAGE" | sed 's/\\-/-/g'
}

# The tag lines of section $1: the line after each .TP.
tags() {
  section "$1" | awk 'tp { print; tp = 0 } /^\.TP/ { tp = 1 }'
}

# Options as written in the page's OPTIONS tags: "-q", "--quiet", ...
man_options() {
  tags OPTIONS | grep -oE '(^|[ "])--?[a-zA-Z][a-z-]*' | sed -E 's/^[ "]//'
}

man_subcommands() {
  tags COMMANDS | awk '$1 == ".B" { print $2 }'
}

# The options listed after "Options:" in subcommand $1's COMMANDS entry.
man_options_of() {
  section COMMANDS | awk -v sub_="$1" '
    tp { on = ($1 == ".B" && $2 == sub_); tp = 0; listing = 0; next }
    /^\.TP/ { tp = 1; on = 0; next }
    on && /^Options:/ { listing = 1; next }
    on && listing { print }' | grep -oE -- '--[a-z][a-z-]*'
}

check() {
  local what=$1 want=$2 got=$3 diff
  if ! diff="$(compare_sets "$want" "$got")"; then
    fail "$what (< only in redlock --help, > only in $PAGE):"
    sed 's/^/    /' <<<"$diff"
  fi
}

# Sanity: the parsers found something, so an empty page cannot pass.
(($(help_options | wc -l) >= 10)) || fail "read fewer than 10 options from --help"
(($(man_options | wc -l) >= 10)) || fail "read fewer than 10 options from $PAGE"

check "subcommands" "$(help_subcommands)" "$(man_subcommands)"
check "options" "$(help_options)" "$(man_options)"
for sub in $(help_subcommands); do
  check "options of $sub" "$(help_options_of "$sub")" "$(man_options_of "$sub")"
done
check "REDLOCK_* variables under ENVIRONMENT" "$(help_env_vars)" \
  "$(tags ENVIRONMENT | grep -oE 'REDLOCK_[A-Z_]*[A-Z]')"
# EXIT STATUS may name more codes than the help's table (65 is only in
# reconfigure's description there); each of the help's must be in it.
man_codes="$(tags "EXIT STATUS" | awk '$1 == ".B" { print $2 }')"
for code in $(help_exit_codes); do
  grep -qxF -- "$code" <<<"$man_codes" || fail "exit code $code is not under EXIT STATUS"
done

# Every option the page documents must parse: with the masters unset, an
# accepted option gets some other complaint (a bad value, no masters, "does
# not apply to status"), an unknown one "unknown option".
for opt in $(man_options | sort -u); do
  case "$opt" in
    -h | --help)
      out="$(env -i PATH="$PATH" "$REDLOCK" "$opt" 2>&1)" ||
        fail "redlock $opt exited $?"
      [[ "$out" == "$HELP_TEXT" ]] || fail "redlock $opt does not print the help"
      continue
      ;;
    --*) arg="$opt=x" ;;
    *) arg="$opt" ;;
  esac
  err="$(env -i PATH="$PATH" "$REDLOCK" status "$arg" some-resource 2>&1 >/dev/null)"
  if [[ "$err" == *"unknown option"* ]]; then
    fail "the page documents $opt, which redlock rejects: $err"
  fi
done

if ((failures > 0)); then
  echo "$failures check(s) failed: update docs/man/redlock.1 and tools/redlock/args.cc together"
  exit 1
fi
echo "PASS: $(man_subcommands | wc -l) subcommands, $(man_options | sort -u | wc -l) options, the environment and exit codes of redlock --help are in $PAGE, and the tool accepts every option it documents"
