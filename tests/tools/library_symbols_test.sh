#!/usr/bin/env bash
# What users link holds no unsafe rule: the rules the simulation puts back
# to show what they break (tests/sim/unsafe_rules.h) and the unsafe
# semaphore script live outside the library. Fails naming each one found in
# LIBRARY (a static archive or shared object): by symbol (nm -C) and, for
# the script, by its Lua text (which a string constant would carry).
# Usage: library_symbols_test.sh LIBRARY. Exit 77 (skipped) without nm.
set -u
lib="${1:?usage: library_symbols_test.sh LIBRARY}"
command -v nm >/dev/null || { echo "skipped: nm not found" >&2; exit 77; }
[[ -r "$lib" ]] || { echo "error: cannot read $lib" >&2; exit 2; }

symbols="$(nm -C "$lib" 2>/dev/null)" || { echo "error: nm failed on $lib" >&2; exit 2; }
[[ -n "$symbols" ]] || { echo "error: nm found no symbol in $lib" >&2; exit 2; }

# Names of the unsafe rules and of the switches that once turned them on.
names=(
  UnsafeRules
  SemaphoreCountersAcquire
  legacy_grant_rule
  trust_marked_restarts
  set_ignore_membership_for_testing
  set_trust_unknown_records_for_testing
  semaphore_majority_of_counters
)
# The majority-of-counters script's deciding line.
lua='if #free >= tonumber(ARGV[4]) then'

found=0
for name in "${names[@]}"; do
  if hits="$(grep -F -- "$name" <<<"$symbols")"; then
    echo "unsafe rule in $lib: $name" >&2
    head -n 3 <<<"$hits" | sed 's/^/  /' >&2
    found=1
  fi
done
if grep -aqF -- "$lua" "$lib"; then
  echo "unsafe script in $lib: the majority-of-counters Lua ($lua)" >&2
  found=1
fi
if ((found)); then exit 1; fi
echo "no unsafe rule in $lib ($(wc -l <<<"$symbols") symbol lines checked)"
