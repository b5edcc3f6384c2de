#!/usr/bin/env bash
# The nightly-job demo. A service runs as three replicas, and its nightly job
# (recalculating ratings) must run exactly once. Five independent Redis
# masters hold the lock.
#
#   Scene 1: three replicas race for the job; one runs it, two skip it, and
#            no lock key is left afterwards.
#   Scene 2: a replica that wins only 2 of 5 masters fails, and gives back
#            what it won.
#   Scene 3: the same race from cron and shell: three `redlock run` processes
#            (the command-line tool); one runs the job, two exit with the
#            conflict code 75.
#
# Starts its own masters on free loopback ports and stops exactly those at
# the end; with REDLOCK_MASTERS set (five URIs) it uses those instead. Its
# masters run as docs/failure-behaviour.md recommends, AOF with appendfsync
# always, so that what it shows is the recommended deployment and no warning
# about persistence interrupts the story; each write then waits for an
# fsync, so REDLOCK_DEMO_REQUEST_TIMEOUT (how long each master may take to
# answer, for the replicas and the tool alike) defaults to 300ms, not the
# library's 50ms.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/lib.sh

readonly RESOURCE=recalc-ratings
readonly KEY="redlock:$RESOURCE"
# REDLOCK_DEMO_BUILD_DIR: binaries already built there (the demo's test);
# nothing is installed or built.
readonly BUILD_DIR=${REDLOCK_DEMO_BUILD_DIR:-build}
readonly WORKER=$BUILD_DIR/examples/nightly_job
readonly CLI=$BUILD_DIR/tools/redlock
readonly REQUEST_TIMEOUT=${REDLOCK_DEMO_REQUEST_TIMEOUT:-300ms}

if [[ -z "${REDLOCK_DEMO_BUILD_DIR:-}" ]]; then
  ensure_deps
  build_project --target nightly_job redlock_cli
fi
start_masters 5 --durable

if ((${#MASTER_URIS[@]} != 5)); then
  echo "error: this demo is written for 5 masters; REDLOCK_MASTERS has ${#MASTER_URIS[@]}" >&2
  exit 1
fi

WORK_DIR="$(mktemp -d "${TMPDIR:-/tmp}/redlock-demo.XXXXXX")"
FOREIGN_ON=() # Masters (0-based) where scene 2 wrote someone-else's lock.
DEMO_OK=1

# redis-cli on master I (0-based), bounded so that a stopped master cannot
# hang the demo.
cli() {
  local i=$1
  shift
  timeout 5 redis-cli -u "${MASTER_URIS[$i]}" --no-auth-warning "$@"
}

cleanup() {
  local i
  for i in "${FOREIGN_ON[@]}"; do
    cli "$i" DEL "$KEY" >/dev/null 2>&1 || true
  done
  FOREIGN_ON=()
  rm -rf "$WORK_DIR"
  stop_masters # SIGCONTs a master left stopped, then stops it.
}
trap cleanup EXIT
trap 'cleanup; exit 130' INT
trap 'cleanup; exit 143' TERM

# "127.0.0.1:PORT" of master I, without user, password or db.
addr() {
  local hostport="${MASTER_URIS[$1]#*://}"
  hostport="${hostport##*@}"
  echo "${hostport%%/*}"
}

heading() { printf '\n== %s ==\n\n' "$*"; }
say() { printf '%s\n' "$*" | fold -s -w 78; }
fail() {
  echo "PROBLEM: $*"
  DEMO_OK=0
}

heading "The cast"
say "Five independent Redis masters, no replication between them. A replica holds the lock when a majority, 3 of 5, grants it."
for i in 0 1 2 3 4; do
  if ((MASTERS_EXTERNAL)); then
    echo "  master $((i + 1))  $(addr "$i")"
  else
    echo "  master $((i + 1))  $(addr "$i")  (pid ${MASTER_PIDS[$i]})"
  fi
done
for i in 0 1 2 3 4; do
  if [[ "$(cli "$i" EXISTS "$KEY")" != 0 ]]; then
    echo "error: master $((i + 1)) already has $KEY; is another run in progress?" >&2
    exit 1
  fi
done

# ---------------------------------------------------------------------------
heading "Scene 1: three replicas race for the nightly job"
say "replica-1, replica-2 and replica-3 start at the same moment. Each tries to lock $RESOURCE for 10s, retrying for up to 1s so that a split vote cannot leave the job undone; whoever gets it runs the 2s job."
echo
pids=()
for i in 1 2 3; do
  "$WORKER" --name="replica-$i" --resource="$RESOURCE" --ttl=10s --work=2s \
    --wait=1s --request_timeout="$REQUEST_TIMEOUT" >"$WORK_DIR/replica-$i.out" 2>&1 &
  pids+=("$!")
done
for i in 1 2 3; do
  rc=0
  wait "${pids[$((i - 1))]}" || rc=$?
  cat "$WORK_DIR/replica-$i.out"
  if ((rc != 0)); then
    echo "[replica-$i] (exited with status $rc)"
  fi
done
echo

winners="$(cat "$WORK_DIR"/replica-*.out | grep -cF '] acquired ' || true)"
left=()
for i in 0 1 2 3 4; do
  if [[ "$(cli "$i" EXISTS "$KEY")" != 0 ]]; then left+=("$((i + 1))"); fi
done
if ((winners == 1 && ${#left[@]} == 0)); then
  say "Check: exactly one replica ran the job, and no master has a $KEY key left."
else
  ((winners == 1)) || fail "$winners replicas ran the job, not 1"
  ((${#left[@]} == 0)) || fail "$KEY is still on master(s) ${left[*]}"
fi

# ---------------------------------------------------------------------------
heading "Scene 2: a failed acquisition cleans up after itself"
if ((MASTERS_EXTERNAL)); then
  # Masters we did not start are not ours to freeze: someone else holds the
  # lock on master 3 too.
  foreign=(0 1 2)
  say "Masters 1, 2 and 3 already hold $RESOURCE for \"someone-else\". replica-4 can win only masters 4 and 5: 2 of 5, short of the quorum of 3, so it must give back what it won."
else
  foreign=(0 1)
  say "Masters 1 and 2 already hold $RESOURCE for \"someone-else\", and master 3 is frozen (SIGSTOP). replica-4 can win only masters 4 and 5: 2 of 5, short of the quorum of 3, so it must give back what it won."
fi
for i in "${foreign[@]}"; do
  FOREIGN_ON+=("$i")
  cli "$i" SET "$KEY" someone-else PX 30000 >/dev/null
done
if ((!MASTERS_EXTERNAL)); then kill -STOP "${MASTER_PIDS[2]}"; fi
echo

rc=0
"$WORKER" --name=replica-4 --resource="$RESOURCE" --ttl=10s --work=0s \
  --request_timeout="$REQUEST_TIMEOUT" \
  >"$WORK_DIR/replica-4.out" 2>&1 || rc=$?
cat "$WORK_DIR/replica-4.out"
# 0: lost to the other owner (kAborted); 2: too few masters answered.
if ((rc != 0 && rc != 2)); then echo "[replica-4] (exited with status $rc)"; fi
if grep -qF '] acquired ' "$WORK_DIR/replica-4.out"; then
  fail "replica-4 got the lock although only 2 masters could grant it"
fi
echo

if ((!MASTERS_EXTERNAL)); then
  # Let master 3 work through what queued up while it was frozen: replica-4's
  # late SET and, behind it on the same connection, its release.
  kill -CONT "${MASTER_PIDS[2]}"
  sleep 0.3
  say "Master 3 is woken (SIGCONT). What each master now holds under $KEY:"
else
  say "What each master now holds under $KEY:"
fi
for i in 0 1 2 3 4; do
  value="$(cli "$i" GET "$KEY")"
  is_foreign=0
  for f in "${foreign[@]}"; do
    if ((f == i)); then is_foreign=1; fi
  done
  shown="${value:-(nothing)}"
  echo "  master $((i + 1))  $(addr "$i")  $shown"
  if ((is_foreign)) && [[ "$value" != someone-else ]]; then
    fail "master $((i + 1)) lost someone-else's lock"
  elif ((!is_foreign)) && [[ -n "$value" ]]; then
    fail "replica-4 left its key on master $((i + 1)) (expires in $(cli "$i" PTTL "$KEY")ms)"
  fi
done
if ((DEMO_OK)); then
  echo
  say "Check: replica-4 left no key behind; only someone-else's locks remain, untouched."
fi
for i in "${FOREIGN_ON[@]}"; do cli "$i" DEL "$KEY" >/dev/null; done
FOREIGN_ON=()

# ---------------------------------------------------------------------------
heading "Scene 3: the same race from cron, with the redlock tool"
say "Operators write it as a crontab line instead of C++. Three copies of"
say "  redlock run --ttl 10s --wait 500ms recalc-ratings -- sh -c '...'"
say "start at once; the tool extends the lock while the job runs and"
say "releases it when the job exits."
echo
export REDLOCK_MASTERS
pids=()
for i in 1 2 3; do
  "$CLI" run --ttl 10s --wait 500ms --request-timeout "$REQUEST_TIMEOUT" "$RESOURCE" -- \
    sh -c "echo \"[cron-$i] running the job (2s), token \${REDLOCK_TOKEN%????????????????????????}…\"; sleep 2" \
    >"$WORK_DIR/cli-$i.out" 2>&1 &
  pids+=($!)
done
ran=0
for i in 1 2 3; do
  code=0
  wait "${pids[$((i - 1))]}" || code=$?
  if ((code == 0)); then
    ran=$((ran + 1))
    cat "$WORK_DIR/cli-$i.out"
    echo "[cron-$i] exit 0: it ran the job"
  elif ((code == 75)); then
    echo "[cron-$i] exit 75: $(tail -n 1 "$WORK_DIR/cli-$i.out")"
  else
    cat "$WORK_DIR/cli-$i.out"
    fail "cron-$i exited with $code"
  fi
done
echo
left=0
for i in 0 1 2 3 4; do
  [[ -n "$(cli "$i" GET "$KEY")" ]] && left=$((left + 1))
done
if ((ran == 1 && left == 0)); then
  say "Check: exactly one cron copy ran the job, and the lock is gone from every master."
else
  fail "$ran copies ran the job; the key is left on $left masters"
fi

# ---------------------------------------------------------------------------
echo
if ((DEMO_OK)); then
  say "Done. Stopping the masters this demo started."
else
  say "Done, with the problems marked PROBLEM above. Stopping the masters this demo started."
  exit 1
fi
