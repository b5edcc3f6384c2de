#!/usr/bin/env bash
# The bash completion (tools/redlock/completion/redlock.bash) against the
# tool's own help: it is sourced in `bash --norc` (no bash-completion
# loaded), COMP_WORDS/COMP_CWORD are set as bash sets them, _redlock is
# called and COMPREPLY checked. The subcommands it offers must be the ones
# `redlock --help` lists, and each subcommand's options the ones the help
# says it takes, so adding either to the tool without the completion fails.
#
#   completion_test.sh path/to/redlock path/to/redlock.bash
set -uo pipefail

readonly REDLOCK=$1 COMPLETION=$2
source "$(dirname "${BASH_SOURCE[0]}")/help_lib.sh"
load_help "$REDLOCK"

source "$(dirname "${BASH_SOURCE[0]}")/checks.sh"
require_readable "$COMPLETION"

# complete WORD... : COMPREPLY, one per line, for the command line WORD...
# with the cursor on the last word (bash splits --name=VALUE at "=", so
# callers pass "--quorum" "=" "u" for --quorum=u).
complete_words() {
  env -i PATH="$PATH" bash --norc --noprofile -c '
    source "$1" || exit 3
    shift
    complete -p redlock >/dev/null || exit 4
    COMP_WORDS=("$@")
    COMP_CWORD=$(($# - 1))
    COMP_LINE="$*"
    COMP_POINT=${#COMP_LINE}
    _redlock || exit 5
    for w in "${COMPREPLY[@]}"; do printf "%s\n" "$w"; done' \
    _ "$COMPLETION" "$@"
}

expect_set() {
  local what=$1 want=$2 got=$3 diff
  if ! diff="$(compare_sets "$want" "$got")"; then
    fail "$what (< only in redlock --help, > only in the completion):"
    sed 's/^/    /' <<<"$diff"
  fi
}

expect_exactly() {
  local what=$1 want=$2 got=$3
  [[ "$(sort <<<"$got")" == "$(sort <<<"$want")" ]] ||
    fail "$what: expected [$(xargs <<<"$want")], got [$(xargs <<<"$got")]"
}

subs="$(help_subcommands)"
(($(wc -l <<<"$subs") >= 6)) || fail "read fewer than 6 subcommands from --help"

# Subcommands after "redlock ": exactly those of --help.
expect_set "subcommands after 'redlock '" "$subs" "$(complete_words redlock "")"
expect_exactly "'redlock re'" "$(grep '^re' <<<"$subs")" \
  "$(complete_words redlock re)"

# Each subcommand's options: the common ones and its own, long names, and
# for run and elect the "--" before the command.
common="$(help_common_options)"
for sub in $subs; do
  [[ "$sub" == help ]] && continue
  want="$(printf '%s\n%s\n' "$common" "$(help_options_of "$sub")")"
  got="$(complete_words redlock "$sub" --)"
  if [[ "$sub" == run || "$sub" == elect ]]; then
    grep -qxF -- -- <<<"$got" || fail "'redlock $sub --' does not offer '--'"
    got="$(grep -vxF -- -- <<<"$got")"
  fi
  expect_set "options of $sub" "$want" "$got"
done
# Before the subcommand, every option the tool has.
expect_set "options before the subcommand" \
  "$(help_options | grep -- '^--')" "$(complete_words redlock --)"

# An option of run, with a value before it and the resource after.
expect_exactly "'redlock run --gr'" "--grace" "$(complete_words redlock run --gr)"
expect_exactly "'redlock --ttl 5m run res --fe'" "--fencing" \
  "$(complete_words redlock --ttl 5m run res --fe)"
# An option that run does not take is not offered.
[[ -z "$(complete_words redlock run --prom)" ]] ||
  fail "'redlock run --prom' offers --prometheus, which run does not take"

# The fixed values of --quorum, also as --quorum=.
expect_exactly "'redlock status --quorum '" $'majority\nunanimous' \
  "$(complete_words redlock status --quorum "")"
expect_exactly "'redlock status --quorum=u'" "unanimous" \
  "$(complete_words redlock status --quorum = u)"
# A duration is the user's: nothing offered.
[[ -z "$(complete_words redlock run --ttl "")" ]] ||
  fail "'redlock run --ttl ' offers values"

# RESOURCE and TOKEN are the user's.
[[ -z "$(complete_words redlock run "")" ]] || fail "'redlock run ' offers something"
[[ -z "$(complete_words redlock release backup "")" ]] ||
  fail "'redlock release backup ' offers something"

# After run's "--": the command (from PATH), then its arguments, not
# redlock's options.
got="$(complete_words redlock run res -- bas)"
grep -qxF bash <<<"$got" || fail "'redlock run res -- bas' does not offer bash"
got="$(complete_words redlock run res -- grep --)"
grep -qxF -- --ttl <<<"$got" && fail "'redlock run res -- grep --' offers redlock's --ttl"
# The same after elect's "--"; and elect's --value takes a value.
got="$(complete_words redlock elect sched -- bas)"
grep -qxF bash <<<"$got" || fail "'redlock elect sched -- bas' does not offer bash"
[[ -z "$(complete_words redlock elect --value "")" ]] ||
  fail "'redlock elect --value ' offers values"

if ((failures > 0)); then
  echo "$failures check(s) failed: update tools/redlock/completion/redlock.bash with tools/redlock/args.cc"
  exit 1
fi
echo "PASS: the completion offers the $(wc -l <<<"$subs") subcommands and each one's options as redlock --help lists them"
