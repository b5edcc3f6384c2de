#!/usr/bin/env bash
# What a new `redlock run` process costs, whole: `perf stat -r RUNS` of
# `TOOL run --quiet --masters=$REDLOCK_MASTERS first-call -- true` for each
# TOOL given, the tools alternated over ROUNDS rounds, so that a noisy
# machine weighs on all of them alike (docs/perf-notes/cli-handoff.md, "A
# new process's start-up"). Prints one line per tool per round: CPU
# (task-clock), elapsed, context switches and page faults, each the mean of
# the RUNS runs. Needs linux-perf and masters of your own:
#
#   REDLOCK_MASTERS=redis://127.0.0.1:17401,... \
#     bench/scripts/first-call.sh /tmp/redlock-before build/tools/redlock
set -euo pipefail
: "${REDLOCK_MASTERS:?set REDLOCK_MASTERS to the masters to use}"
ROUNDS=${ROUNDS:-4}
RUNS=${RUNS:-50}
(($# > 0)) || { echo "usage: $0 TOOL [TOOL...]" >&2; exit 2; }
for ((r = 1; r <= ROUNDS; r++)); do
  for tool in "$@"; do
    out=$(perf stat -r "$RUNS" -e task-clock,context-switches,page-faults \
      "$tool" run --quiet --masters="$REDLOCK_MASTERS" first-call -- true \
      2>&1 >/dev/null)
    awk -v r="$r" -v tool="$tool" '
      /task-clock/ { cpu = $1 }
      /context-switches/ { cs = $1 }
      /page-faults/ { pf = $1 }
      /seconds time elapsed/ { el = $1 * 1000 }
      END { printf "round %d %s cpu_ms=%s elapsed_ms=%.3f cs=%s faults=%s\n",
            r, tool, cpu, el, cs, pf }' <<<"$out"
  done
done
