#!/usr/bin/env bash
# Explores simulated histories (tests/sim, docs/safety-under-faults.md
# "Simulation") on every core: one redlock-sim process per core, each taking
# every Pth seed from --seed on, until --seconds have passed. Prints
# histories per second, operations, faults and violations, added up; a
# failing seed prints its replay command, its shrunk plan and history, and
# writes history.json and timeline.svg under build/simulate/.
#
#   scripts/simulate.sh                         # 60s, config safe, seed 1
#   scripts/simulate.sh --seconds 1800 --seed 1000000
#   scripts/simulate.sh --config guarded --seconds 300 -- --masters=3 --faults=20
#
# Arguments after -- go to every redlock-sim process. Exit status: 0 if no
# violation was found, 1 otherwise.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/lib.sh

seconds=60
seed=1
config=safe
procs="$(nproc 2>/dev/null || echo 2)"
extra=()
while (($# > 0)); do
  case "$1" in
    --seconds) seconds="${2:?--seconds needs a number}"; shift ;;
    --seed) seed="${2:?--seed needs a number}"; shift ;;
    --config) config="${2:?--config needs a name}"; shift ;;
    --procs) procs="${2:?--procs needs a number}"; shift ;;
    --) shift; extra=("$@"); break ;;
    *) echo "usage: $0 [--seconds N] [--seed S] [--config NAME] [--procs P] [-- redlock-sim flags]" >&2
       exit 2 ;;
  esac
  shift
done

build_project --target redlock-sim >&2
sim="$REDLOCK_ROOT/build/tests/redlock-sim"
out="$REDLOCK_ROOT/build/simulate/$config"
mkdir -p "$out"
logs=()
pids=()
started=$SECONDS
for ((i = 0; i < procs; i++)); do
  log="$out/proc-$i.log"
  logs+=("$log")
  "$sim" --config="$config" --seed="$seed" --offset="$i" --stride="$procs" \
    --seconds="$seconds" --out="$out" "${extra[@]}" >"$log" 2>&1 &
  pids+=($!)
done
status=0
for pid in "${pids[@]}"; do wait "$pid" || status=1; done
wall=$((SECONDS - started))

# Every failing seed's report, then the totals.
for log in "${logs[@]}"; do grep -v '^TOTAL ' "$log" || true; done
awk -v procs="$procs" -v wall="$wall" -v config="$config" '
  /^TOTAL / {
    for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] += kv[2] + 0
      if (kv[1] == "failing_seeds" && kv[2] != "-") seeds = seeds (seeds ? "," : "") kv[2]
      if (kv[1] == "seconds" && kv[2] + 0 > longest) longest = kv[2] + 0 }
    n++ }
  END {
    if (n != procs) { printf "simulate: only %d of %d processes reported\n", n, procs; exit 1 }
    secs = longest > 0 ? longest : wall
    printf "config %s: %d histories in %.1fs on %d processes: %.0f histories/s (%.0f per minute)\n",
      config, v["histories"], secs, procs, v["histories"] / secs, 60 * v["histories"] / secs
    printf "operations %d, faults injected %d, events %d\n", v["operations"], v["faults"], v["events"]
    printf "violations %d%s\n", v["violations"], seeds ? " (failing seeds " seeds ")" : ""
  }' "${logs[@]}" || status=1
exit "$status"
