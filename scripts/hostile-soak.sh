#!/usr/bin/env bash
# The minute-long memory soak of issue 23 item 4 (not part of CI): two
# `redlock run --ttl 60s R -- sleep ...` side by side, each on its own three
# masters, one of them with its third master behind redlock-rogue-server,
# which sends an endless bulk string ("$1000000000\r\n" then 'x' at 8 MiB/s)
# on every lock connection once it has been idle 300ms. After SOAK_SECONDS
# (default 60) prints both processes' resident memory (VmRSS) and the
# difference; the tool facing the rogue should stay within a few MB of the
# healthy one.
#
#   scripts/hostile-soak.sh            # builds what it needs in build/
#   SOAK_SECONDS=20 scripts/hostile-soak.sh
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

seconds="${SOAK_SECONDS:-60}"
build_project --target redlock_cli redlock-rogue-server
cli="$REDLOCK_ROOT/build/tools/redlock"
rogue_bin="$REDLOCK_ROOT/build/tests/redlock-rogue-server"

unset REDLOCK_MASTERS
start_masters 6
work="$(mktemp -d "${TMPDIR:-/tmp}/redlock-soak.XXXXXX")"
pids=()
cleanup() {
  local pid
  for pid in "${pids[@]}"; do
    kill "$pid" 2>/dev/null || true
  done
  for pid in "${pids[@]}"; do
    wait "$pid" 2>/dev/null || true
  done
  rm -rf "$work"
  stop_masters
}
trap cleanup EXIT
trap 'cleanup; exit 130' INT
trap 'cleanup; exit 143' TERM

"$rogue_bin" "${MASTER_PORTS[5]}" 300 $((8 << 20)) >"$work/rogue.port" 2>"$work/rogue.err" &
rogue_pid=$!
pids+=("$rogue_pid")
for ((i = 0; i < 100; i++)); do
  [[ -s "$work/rogue.port" ]] && break
  sleep 0.05
done
rogue_port="$(cat "$work/rogue.port")"
[[ -n "$rogue_port" ]] || { echo "error: the rogue server did not start" >&2; exit 1; }

healthy="${MASTER_URIS[0]},${MASTER_URIS[1]},${MASTER_URIS[2]}"
hostile="${MASTER_URIS[3]},${MASTER_URIS[4]},redis://127.0.0.1:$rogue_port"
sleep_for=$((seconds + 30))

REDLOCK_MASTERS="$healthy" "$cli" --request-timeout=500ms run --ttl=60s soak \
  -- sleep "$sleep_for" >"$work/healthy.out" 2>"$work/healthy.err" &
healthy_pid=$!
pids+=("$healthy_pid")
REDLOCK_MASTERS="$hostile" "$cli" --request-timeout=500ms run --ttl=60s soak \
  -- sleep "$sleep_for" >"$work/hostile.out" 2>"$work/hostile.err" &
hostile_pid=$!
pids+=("$hostile_pid")

rss_kb() { sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$1/status" 2>/dev/null; }

echo "soaking for ${seconds}s: healthy pid $healthy_pid, facing the rogue pid $hostile_pid"
peak_healthy=0
peak_hostile=0
for ((t = 1; t <= seconds; t++)); do
  sleep 1
  for who in healthy hostile; do
    pid_var="${who}_pid"
    if ! kill -0 "${!pid_var}" 2>/dev/null; then
      wait "${!pid_var}" && rc=0 || rc=$?
      echo "error: the $who tool exited early (exit $rc); stderr:" >&2
      cat "$work/$who.err" >&2
      exit 1
    fi
  done
  h="$(rss_kb "$healthy_pid")"
  r="$(rss_kb "$hostile_pid")"
  ((h > peak_healthy)) && peak_healthy=$h
  ((r > peak_hostile)) && peak_hostile=$r
  if ((t % 10 == 0)); then
    echo "t=${t}s  healthy ${h} kB  facing the rogue ${r} kB"
  fi
done

h="$(rss_kb "$healthy_pid")"
r="$(rss_kb "$hostile_pid")"
echo "after ${seconds}s: healthy VmRSS ${h} kB (peak ${peak_healthy}), facing the rogue ${r} kB (peak ${peak_hostile}), difference $((r - h)) kB"
kill -TERM "$rogue_pid" 2>/dev/null || true
wait "$rogue_pid" 2>/dev/null || true
cat "$work/rogue.err"
