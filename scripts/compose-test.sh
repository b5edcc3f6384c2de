#!/usr/bin/env bash
# docker-compose.yml for real: five redis:7.0 masters under Docker, the demo
# and the test suite against them, and failures injected through compose
# itself, each checked.
#
#   scripts/compose-test.sh [CTEST_ARGS...]
#
# CTEST_ARGS replace the default `-L redis -j1`: the tests that use masters,
# one at a time (some of them share resource names, e.g. RedlockTest's "job",
# and collide on shared masters when run in parallel).
#
#  1. Installs what is missing (docker.io, docker-compose, redis-server,
#     redis-tools, the build dependencies) and builds the `redlock` tool.
#  2. Uses the Docker daemon `docker info` reaches; if there is none, starts
#     its own dockerd (--bridge=none --iptables=false --ip-forward=false, its
#     own socket, --data-root, --exec-root, --pidfile and containerd namespace
#     under a temporary directory) and stops exactly that one at the end.
#  3. Makes the image redis:7.0 if the daemon has none: `docker import` of a
#     root filesystem holding this machine's redis-server and redis-cli, the
#     libraries `ldd` lists, the loader, /etc/passwd, /etc/group, /data, /tmp.
#     Nothing here pulls, searches or logs in to a registry.
#  4. Brings the masters up with docker-compose.yml + docker-compose.hostnet.yml
#     (each master on the host's network, listening on 127.0.0.1:7001..7005;
#     no bridge, no published ports) as project `redlock-compose-test`,
#     `up -d --no-build` with the image already there, and waits for PONG.
#  5. Runs scripts/demo.sh (REDLOCK_MASTERS) and scripts/test.sh
#     (REDLOCK_TEST_MASTERS; the arguments go to ctest, see above)
#     against them.
#  6. Failure injection through docker-compose, each step checked:
#     pause/unpause of one master; kill + start (AOF keeps a held lock and the
#     restart-guard marker); restart of two masters while `redlock run` holds
#     and extends a lock; stop + rm + volume removal + up (the master comes
#     back empty and clients hold it back as `reborn`); then redis-5 replaced
#     by a sixth master (`docker run` of the same image, 127.0.0.1:7006) with
#     `redlock reconfigure` while a client of the old list and one of the new
#     list take one lock (own key prefix, --max-ttl 3s), their holds checked
#     for overlap.
#  7. The TLS variant: scripts/compose-tls.sh up (throw-away certificates
#     made with openssl under the run's temporary directory, then
#     docker-compose.tls.yml as project `redlock-compose-test-tls`: five
#     masters serving only TLS on 127.0.0.1:7011..7015, client certificates
#     required); the CLI with --tls --cacert --cert --key acquires, shows
#     every master as TLS in `status --json`, releases; without a client
#     certificate it is refused; with redis-tls-3 killed it still acquires
#     on the other 4; then down -v.
#  8. `down -v` of both projects, removes the sixth master's container, stops
#     the daemon it started, and checks nothing is left (nothing on
#     127.0.0.1:7001..7006 or 7011..7015).
#
# Prints PASS/FAIL per step and a final line; exits 0 only if every step
# passed. Takes 50 to 60 seconds on a 2-core machine with everything
# installed and built, plus 12 for the reconfigure step (96 in all on a
# 2-core machine shared with other builds) and 6 for the TLS step; a first
# run adds the package installs and the build.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
source scripts/lib.sh

readonly PROJECT=redlock-compose-test
readonly COMPOSE_FILES=(-f docker-compose.yml -f docker-compose.hostnet.yml)
readonly PORTS=(7001 7002 7003 7004 7005)
readonly MASTERS=redis://127.0.0.1:7001,redis://127.0.0.1:7002,redis://127.0.0.1:7003,redis://127.0.0.1:7004,redis://127.0.0.1:7005
readonly IMAGE=redis:7.0
readonly MARKER_KEY='redlock:__deployment__'
# redis-6, the master step 6e brings in for redis-5 (docker run, not compose).
readonly NEW_PORT=7006
readonly NEW_MASTERS=redis://127.0.0.1:7001,redis://127.0.0.1:7002,redis://127.0.0.1:7003,redis://127.0.0.1:7004,redis://127.0.0.1:$NEW_PORT
readonly CLI=build/tools/redlock
# How long each compose master may take to answer, for every client this
# script runs (the CLI, the demo). The masters fsync every write (appendfsync
# always), and on a disk shared with builds and the daemon one fsync has
# taken 100ms on four of them at once (the fifth had just restarted) in the
# middle of a step, and 360-420ms
# while a large file was being written: the library's 50ms default then
# fails every master together. 300ms leaves the swap step's 2s TTL its
# keep-alive (margin 2 x 300ms, extensions every 667ms). Reconfigure runs
# ask for 1s (step 6e).
readonly REQUEST_TIMEOUT=300ms
# The TLS variant (step 7): docker-compose.tls.yml through scripts/compose-tls.sh.
readonly TLS_PROJECT=redlock-compose-test-tls
readonly TLS_PORTS=(7011 7012 7013 7014 7015)
# redis:// with --tls: the CLI's --tls makes every redis:// master TLS.
readonly TLS_MASTERS=redis://127.0.0.1:7011,redis://127.0.0.1:7012,redis://127.0.0.1:7013,redis://127.0.0.1:7014,redis://127.0.0.1:7015
CTEST_ARGS=("$@")
((${#CTEST_ARGS[@]} > 0)) || CTEST_ARGS=(-L redis -j1)

STARTED=$SECONDS
WORK_DIR="$(mktemp -d "${TMPDIR:-/tmp}/redlock-compose-test.XXXXXX")"
RUN_TAG="ct$$"       # resource names of this run
DOCKER=(docker)      # /usr/bin/docker (docker.io) once installed
DOCKERD_PID=""       # set only for a daemon this script started
DOCKERD_DIR=""
COMPOSE_UP=0         # 1 once `up` was attempted: teardown runs `down -v`
TLS_UP=0             # the same for the TLS project (step 7)
TLS_DIR=""           # its certificates, under WORK_DIR
TORN_DOWN=0
RESULTS=()
FAILED=0
SWAP_CONTAINER=""    # redis-6's name, once step 6e ran `docker run`
SWAP_PIDS=()         # step 6e's background clients still to stop
SWAP_ALL_PIDS=()     # every one it started

# --- reporting ---------------------------------------------------------------

STEP=""
STEP_FAILS=0
STEP_STARTED=0
begin() {
  STEP=$1
  STEP_FAILS=0
  STEP_STARTED=$SECONDS
  printf '\n== %s\n' "$STEP"
  if [[ -n "${2:-}" ]]; then printf '%s\n' "$2" | fold -s -w 74 | sed 's/^/   expect: /'; fi
}
note() { echo "   $*"; }
ok() { echo "   ok: $*"; }
bad() {
  echo "   NOT OK: $*"
  STEP_FAILS=$((STEP_FAILS + 1))
}
# expect DESCRIPTION COMMAND...: runs COMMAND, ok if it succeeds.
expect() {
  local what=$1
  shift
  if "$@"; then ok "$what"; else bad "$what"; fi
}
# end_step: PASS or FAIL for the current step; returns 1 on FAIL.
end_step() {
  local took=$((SECONDS - STEP_STARTED))
  if ((STEP_FAILS == 0)); then
    echo "PASS: $STEP (${took}s)"
    RESULTS+=("PASS  $STEP (${took}s)")
    return 0
  fi
  ((COMPOSE_UP && !TORN_DOWN)) && show_fsync_latency
  echo "FAIL: $STEP (${took}s, $STEP_FAILS check(s) failed)"
  RESULTS+=("FAIL  $STEP (${took}s)")
  FAILED=$((FAILED + 1))
  return 1
}
# show_log FILE [N]: the last N lines of a log, indented.
show_log() { tail -n "${2:-30}" "$1" 2>/dev/null | sed 's/^/   | /'; }
# settle_disk: writes back what the build and the daemon left dirty (before
# the demo, the suite and the fault steps), so that the masters' fsyncs
# (appendfsync always: every write waits for one) do not queue behind the
# gigabytes .ci/run's sanitizer builds leave just before this script.
# REQUEST_TIMEOUT covers the stalls left; the masters' latency monitor
# (aof-fsync-always, shown by show_fsync_latency when a step fails) tells
# a slow disk apart from a fault of the client.
settle_disk() {
  local started=$SECONDS
  timeout 300 sync || note "sync did not finish within 300s"
  note "sync before this step: $((SECONDS - started))s"
}
# show_fsync_latency: the slowest fsync each compose master saw (Redis's
# latency monitor, event aof-fsync-always, threshold 25ms set at compose up;
# a master restarted since has it off again, and says so rather than "none").
show_fsync_latency() {
  local port line
  for port in "${PORTS[@]}"; do
    if ! pong "$port"; then
      note "127.0.0.1:$port LATENCY LATEST: no answer to PING"
      continue
    fi
    if [[ "$(rcli "$port" CONFIG GET latency-monitor-threshold | sed -n 2p)" != 25 ]]; then
      note "127.0.0.1:$port LATENCY LATEST: monitor off (restarted since compose up); fsync latency unknown"
      continue
    fi
    line="$(rcli "$port" LATENCY LATEST | paste -sd ' ')"
    note "127.0.0.1:$port LATENCY LATEST (event, when, latest ms, max ms): ${line:-none over 25ms}"
  done
}

# --- helpers -----------------------------------------------------------------

dc() { timeout 120 docker-compose -p "$PROJECT" "${COMPOSE_FILES[@]}" "$@"; }
# redis-cli on 127.0.0.1:PORT, bounded (a paused master never answers).
rcli() {
  local port=$1
  shift
  timeout 3 redis-cli -h 127.0.0.1 -p "$port" "$@" 2>/dev/null | tr -d '\r'
}
pong() { [[ "$(rcli "$1" PING)" == PONG ]]; }
# wait_pong PORT SECONDS
wait_pong() {
  local deadline=$((SECONDS + $2))
  while ((SECONDS < deadline)); do
    pong "$1" && return 0
    sleep 0.2
  done
  return 1
}
run_id() { rcli "$1" INFO server | sed -n 's/^run_id://p'; }
# The redlock tool on these masters, bounded.
rl() { REDLOCK_MASTERS=$MASTERS timeout 30 "$CLI" --request-timeout "$REQUEST_TIMEOUT" "$@"; }
# field NAME < key=value lines
field() { sed -n "s/^$1=//p"; }
# status_json RESOURCE INDEX EXPR: a field of master INDEX (0-based) in
# `redlock status --json`, as Python prints it (None, True, 'trusted').
status_field() {
  rl status --json "$1" 2>/dev/null | python3 -c '
import json, sys
m = json.load(sys.stdin)["masters"][int(sys.argv[1])]
print(m.get(sys.argv[2]))' "$2" "$3" 2>/dev/null
}
container_state() {
  local id
  id="$(dc ps -q "$1" 2>/dev/null)"
  [[ -n "$id" ]] || { echo missing; return; }
  "${DOCKER[@]}" inspect -f '{{.State.Status}} {{.State.ExitCode}}' "$id" 2>/dev/null
}
# on_masters KEY VALUE PORT...: how many of PORT hold KEY = VALUE.
holders() {
  local key=$1 value=$2 n=0 port
  shift 2
  for port in "$@"; do
    [[ "$(rcli "$port" GET "$key")" == "$value" ]] && n=$((n + 1))
  done
  echo "$n"
}
both_pong() { wait_pong "$1" 30 && wait_pong "$2" 30; }
# docker-compose.yml + docker-compose.hostnet.yml: every master on the host's
# network, no port published.
hostnet_config_ok() {
  local cfg
  cfg="$(docker-compose "${COMPOSE_FILES[@]}" config)" || return 1
  [[ "$(grep -c '^    network_mode: host$' <<<"$cfg")" == 5 ]] && ! grep -q '^    ports:' <<<"$cfg"
}
# A port on 127.0.0.1 someone listens on.
port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
# The TLS variant (step 7): scripts/compose-tls.sh with this run's project and
# certificate directory; tls_compose runs docker-compose on its file.
tls_script() { REDLOCK_COMPOSE_TLS_DIR=$TLS_DIR COMPOSE_PROJECT_NAME=$TLS_PROJECT timeout 180 ./scripts/compose-tls.sh "$@"; }
tls_compose() { REDLOCK_COMPOSE_TLS_DIR=${TLS_DIR:-$WORK_DIR/tls} timeout 120 docker-compose -p "$TLS_PROJECT" -f docker-compose.tls.yml "$@"; }
# redis-cli over TLS on 127.0.0.1:PORT with the client certificate, bounded.
trcli() {
  local port=$1
  shift
  timeout 3 redis-cli --tls --cacert "$TLS_DIR/ca.pem" --cert "$TLS_DIR/client.pem" \
    --key "$TLS_DIR/client.key" -h 127.0.0.1 -p "$port" "$@" 2>/dev/null | tr -d '\r'
}
wait_tls_pong() {
  local deadline=$((SECONDS + $2))
  while ((SECONDS < deadline)); do
    [[ "$(trcli "$1" PING)" == PONG ]] && return 0
    sleep 0.2
  done
  return 1
}
# The CLI on the TLS masters: redis:// URIs with --tls and the files.
rlt() {
  REDLOCK_MASTERS=$TLS_MASTERS timeout 30 "$CLI" --request-timeout "$REQUEST_TIMEOUT" \
    --tls --cacert "$TLS_DIR/ca.pem" \
    --cert "$TLS_DIR/client.pem" --key "$TLS_DIR/client.key" "$@"
}

# --- the daemon --------------------------------------------------------------

# True while PID is the dockerd this script started.
our_dockerd_alive() {
  [[ -n "$DOCKERD_PID" ]] || return 1
  [[ "$(cat "/proc/$DOCKERD_PID/comm" 2>/dev/null)" == dockerd ]] || return 1
  { tr '\0' ' ' <"/proc/$DOCKERD_PID/cmdline"; } 2>/dev/null | grep -qF -- "$DOCKERD_DIR/"
}

start_dockerd() {
  DOCKERD_DIR="$(mktemp -d "${TMPDIR:-/tmp}/redlock-dockerd.XXXXXX")"
  mkdir -p "$DOCKERD_DIR/root" "$DOCKERD_DIR/exec"
  echo '{}' >"$DOCKERD_DIR/daemon.json" # not /etc/docker/daemon.json
  local launcher=()
  if command -v setpriv >/dev/null 2>&1 && setpriv --pdeathsig TERM true 2>/dev/null; then
    launcher=(setpriv --pdeathsig TERM --) # dies with this script, even on SIGKILL
  fi
  # setsid: its own session, so a Ctrl-C meant for us does not reach it (the
  # trap below stops it). Not a process group leader, so setsid does not fork
  # and $! is dockerd's PID (checked below).
  "${launcher[@]}" setsid dockerd \
    --host "unix://$DOCKERD_DIR/docker.sock" \
    --data-root "$DOCKERD_DIR/root" --exec-root "$DOCKERD_DIR/exec" \
    --pidfile "$DOCKERD_DIR/dockerd.pid" --config-file "$DOCKERD_DIR/daemon.json" \
    --containerd-namespace "$PROJECT" --containerd-plugins-namespace "$PROJECT-plugins" \
    --bridge=none --iptables=false --ip-forward=false --ip-masq=false \
    </dev/null >"$DOCKERD_DIR/dockerd.log" 2>&1 &
  DOCKERD_PID=$!
  export DOCKER_HOST="unix://$DOCKERD_DIR/docker.sock"
  unset DOCKER_CONTEXT
  local deadline=$((SECONDS + 60))
  while ((SECONDS < deadline)); do
    if timeout 5 "${DOCKER[@]}" info >/dev/null 2>&1; then
      our_dockerd_alive || { bad "the daemon that answers is not the dockerd started as PID $DOCKERD_PID"; return 1; }
      return 0
    fi
    if ! kill -0 "$DOCKERD_PID" 2>/dev/null; then
      bad "dockerd exited during start-up; its log:"
      show_log "$DOCKERD_DIR/dockerd.log" 20
      return 1
    fi
    sleep 0.5
  done
  bad "dockerd did not answer \`docker info\` within 60s; its log:"
  show_log "$DOCKERD_DIR/dockerd.log" 20
  return 1
}

# Stops the dockerd this script started (SIGTERM, SIGKILL after 30s), the
# containerd it ran, undoes its mounts and removes its directory.
stop_dockerd() {
  [[ -n "$DOCKERD_DIR" ]] || return 0
  local containerd_pid="" i
  containerd_pid="$(cat "$DOCKERD_DIR/exec/containerd/containerd.pid" 2>/dev/null || true)"
  if our_dockerd_alive; then
    kill -TERM "$DOCKERD_PID" 2>/dev/null
    for ((i = 0; i < 150; i++)); do
      our_dockerd_alive || break
      sleep 0.2
    done
    if our_dockerd_alive; then
      note "dockerd $DOCKERD_PID did not stop within 30s; SIGKILL"
      kill -KILL "$DOCKERD_PID" 2>/dev/null
    fi
  fi
  wait "$DOCKERD_PID" 2>/dev/null
  # Its containerd (only if it still is the one it started, from our directory).
  if [[ -n "$containerd_pid" ]] &&
    { tr '\0' ' ' <"/proc/$containerd_pid/cmdline"; } 2>/dev/null | grep -qF -- "$DOCKERD_DIR/"; then
    kill -TERM "$containerd_pid" 2>/dev/null
    for ((i = 0; i < 50; i++)); do kill -0 "$containerd_pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$containerd_pid" 2>/dev/null
  fi
  # dockerd bind-mounts its data root and leaves exec/netns/default mounted.
  local mnt
  while read -r mnt; do
    umount "$mnt" 2>/dev/null || umount -l "$mnt" 2>/dev/null
  done < <(awk -v d="$DOCKERD_DIR/" 'index($2, d) == 1 {print $2}' /proc/mounts | sort -r)
  if awk -v d="$DOCKERD_DIR/" 'index($2, d) == 1 {found = 1} END {exit !found}' /proc/mounts; then
    note "mounts left under $DOCKERD_DIR; not removing it"
  else
    rm -rf --one-file-system "$DOCKERD_DIR"
  fi
  unset DOCKER_HOST
}

# --- teardown ----------------------------------------------------------------

# Stops step 6e's background clients: the stop file, then up to 15s for each to
# end its attempt (each is bounded by 10s), then SIGTERM by PID.
swap_stop_clients() {
  local pid i
  touch "$WORK_DIR/swap.stop" 2>/dev/null
  for pid in "${SWAP_PIDS[@]}"; do
    for ((i = 0; i < 150; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -TERM "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
  done
  SWAP_PIDS=()
}
# Step 6e's clients and its container (redis-6), whatever state the step
# is in; teardown calls it too.
swap_cleanup() {
  swap_stop_clients
  if [[ -n "$SWAP_CONTAINER" ]]; then
    timeout 60 "${DOCKER[@]}" rm -f -v "$SWAP_CONTAINER" >/dev/null 2>&1
  fi
}

teardown() {
  ((TORN_DOWN)) && return 0
  TORN_DOWN=1
  local was_ours=0
  [[ -n "$DOCKERD_PID" ]] && was_ours=1
  swap_cleanup # an interrupted step 6e
  begin "teardown: down -v$( ((was_ours)) && echo ', stop the dockerd this script started')" \
    "no container or volume of project $PROJECT (or $TLS_PROJECT) left, nothing on 127.0.0.1:7001-$NEW_PORT or 7011-7015$( ((was_ours)) && echo ", dockerd $DOCKERD_PID and its containerd gone")"
  if ((COMPOSE_UP)); then
    # Unpause first: a paused container cannot be stopped.
    dc unpause >/dev/null 2>&1
    if dc down -v --remove-orphans -t 5 >"$WORK_DIR/down.log" 2>&1; then
      ok "docker-compose down -v"
    else
      bad "docker-compose down -v failed:"
      show_log "$WORK_DIR/down.log" 10
    fi
    local left
    left="$("${DOCKER[@]}" ps -aq --filter "label=com.docker.compose.project=$PROJECT" 2>/dev/null)"
    expect "no container of $PROJECT left" test -z "$left"
    left="$("${DOCKER[@]}" volume ls -q --filter "label=com.docker.compose.project=$PROJECT" 2>/dev/null)"
    expect "no volume of $PROJECT left" test -z "$left"
  fi
  if ((TLS_UP)); then
    if tls_compose down -v --remove-orphans -t 5 >"$WORK_DIR/down-tls.log" 2>&1; then
      ok "TLS variant: down -v"
    else
      bad "TLS variant: down -v failed:"
      show_log "$WORK_DIR/down-tls.log" 10
    fi
    local left_tls
    left_tls="$("${DOCKER[@]}" ps -aq --filter "label=com.docker.compose.project=$TLS_PROJECT" 2>/dev/null)$("${DOCKER[@]}" volume ls -q --filter "label=com.docker.compose.project=$TLS_PROJECT" 2>/dev/null)"
    expect "no container or volume of $TLS_PROJECT left" test -z "$left_tls"
  fi
  if [[ -n "$SWAP_CONTAINER" ]]; then
    expect "no container $SWAP_CONTAINER (redis-6) left" bash -c "! ${DOCKER[*]} inspect '$SWAP_CONTAINER' >/dev/null 2>&1"
  fi
  if ((was_ours)); then
    local pid=$DOCKERD_PID dir=$DOCKERD_DIR containerd_pid
    containerd_pid="$(cat "$dir/exec/containerd/containerd.pid" 2>/dev/null || echo none)"
    stop_dockerd
    expect "dockerd $pid has exited" bash -c "! kill -0 $pid 2>/dev/null"
    expect "its containerd ($containerd_pid) has exited" bash -c "! kill -0 $containerd_pid 2>/dev/null"
    expect "its directory $dir is removed" test ! -e "$dir"
  fi
  local port busy=()
  for port in "${PORTS[@]}" "$NEW_PORT" "${TLS_PORTS[@]}"; do port_in_use "$port" && busy+=("$port"); done
  expect "nothing listens on 127.0.0.1:7001-$NEW_PORT or 7011-7015${busy[*]:+ (busy: ${busy[*]})}" test "${#busy[@]}" -eq 0
  end_step
  rm -rf "$WORK_DIR"
}

FINISHED=0
finish() {
  ((FINISHED)) && return 0
  FINISHED=1
  teardown
  echo
  echo "== summary"
  printf '   %s\n' "${RESULTS[@]}"
  if ((FAILED == 0)); then
    echo "compose-test: PASS (${#RESULTS[@]} steps, $((SECONDS - STARTED))s)"
    exit 0
  fi
  echo "compose-test: FAIL ($FAILED of ${#RESULTS[@]} steps failed, $((SECONDS - STARTED))s)"
  exit 1
}
# A set-up step failed: nothing after it can run.
abort() { finish; }
on_signal() {
  echo "interrupted"
  FAILED=$((FAILED + 1))
  finish
}
trap finish EXIT
trap on_signal INT TERM

# --- 1. packages and the tool ------------------------------------------------

begin "install and build" "docker.io, docker-compose, redis-server, redis-tools and the build dependencies installed; build/tools/redlock built"
if ensure_deps >"$WORK_DIR/deps.log" 2>&1 &&
  ensure_packages docker.io docker-compose redis-server redis-tools >>"$WORK_DIR/deps.log" 2>&1; then
  ok "packages present"
else
  bad "installing packages failed:"
  show_log "$WORK_DIR/deps.log"
fi
[[ -x /usr/bin/docker ]] && DOCKER=(/usr/bin/docker) # the client of the same package as dockerd
if out="$(build_project --target redlock_cli 2>&1)"; then ok "$out"; else
  bad "building redlock_cli failed:"
  echo "$out" | tail -n 30 | sed 's/^/   | /'
fi
end_step || abort

# --- 2. the daemon -------------------------------------------------------------

begin "docker daemon" "\`docker info\` answers: an existing daemon, or one started here with --bridge=none --iptables=false under a temporary directory"
if timeout 10 "${DOCKER[@]}" info >/dev/null 2>&1; then
  ok "using the running daemon (${DOCKER_HOST:-default socket}); it will be left running"
else
  if command -v pgrep >/dev/null 2>&1 && pgrep -x dockerd >/dev/null 2>&1; then
    note "a dockerd runs but \`docker info\` does not reach it; starting one of our own beside it"
  fi
  if start_dockerd; then
    ok "started dockerd, PID $DOCKERD_PID, socket $DOCKER_HOST, data under $DOCKERD_DIR"
  fi
fi
end_step || abort

# --- 3. the image ----------------------------------------------------------------

# The root filesystem of a minimal redis image: this machine's binaries and
# what they load.
make_image() {
  local rootfs="$WORK_DIR/rootfs" bin real lib
  mkdir -p "$rootfs"/{usr/bin,etc,data,tmp}
  chmod 1777 "$rootfs/tmp"
  for bin in redis-server redis-cli; do
    real="$(readlink -f "/usr/bin/$bin")" || return 1
    # Copied as the name it is started by: redis-server is a symlink to
    # redis-check-rdb on Debian, and the binary picks its mode by argv[0].
    cp "$real" "$rootfs/usr/bin/$bin" || return 1
    note "/usr/bin/$bin <- $real"
    while read -r lib; do
      [[ -n "$lib" ]] || continue
      mkdir -p "$rootfs$(dirname "$lib")"
      cp -L "$lib" "$rootfs$lib" || return 1
    done < <(ldd "$real" | awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// {print $1}')
  done
  printf 'root:x:0:0:root:/root:/usr/sbin/nologin\nredis:x:999:999:redis:/data:/usr/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n' >"$rootfs/etc/passwd"
  printf 'root:x:0:\nredis:x:999:\nnogroup:x:65534:\n' >"$rootfs/etc/group"
  note "$(find "$rootfs" -type f | wc -l) files, $(du -sh "$rootfs" | cut -f1)"
  tar -C "$rootfs" --numeric-owner -cf - . |
    timeout 120 "${DOCKER[@]}" import \
      --change 'WORKDIR /data' \
      --change 'VOLUME /data' \
      --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
      --change 'EXPOSE 6379' \
      --change 'CMD ["redis-server"]' \
      --change 'LABEL org.redlock.origin=scripts/compose-test.sh' \
      --message "redis-server and redis-cli from $(dpkg-query -W -f='${Package} ${Version}' redis-server 2>/dev/null)" \
      - "$IMAGE" >/dev/null
}

begin "image $IMAGE" "present locally (reused), or made with \`docker import\` from this machine's redis-server; never pulled"
if "${DOCKER[@]}" image inspect "$IMAGE" >/dev/null 2>&1; then
  ok "$IMAGE exists ($("${DOCKER[@]}" image inspect -f '{{.Id}}' "$IMAGE" | cut -c1-19), made by: $("${DOCKER[@]}" image inspect -f '{{index .Config.Labels "org.redlock.origin"}}' "$IMAGE" 2>/dev/null || echo '?')); reusing it"
elif make_image; then
  ok "imported $IMAGE: $("${DOCKER[@]}" image inspect -f '{{.Id}}' "$IMAGE" | cut -c1-19)"
else
  bad "making $IMAGE failed"
fi
if "${DOCKER[@]}" run --rm --network none --entrypoint redis-server "$IMAGE" --version >"$WORK_DIR/version" 2>&1; then
  ok "it runs: $(cut -c1-60 "$WORK_DIR/version")"
else
  bad "redis-server does not run in $IMAGE:"
  show_log "$WORK_DIR/version" 5
fi
end_step || abort

# --- 4. the masters ----------------------------------------------------------

begin "compose up (docker-compose.yml + docker-compose.hostnet.yml)" "5 masters on 127.0.0.1:7001-7005, host network, no ports published, AOF always, all PONG within 60s, nothing pulled"
expect "merged config: 5 services on network_mode host, no ports" hostnet_config_ok
# Leftovers of an interrupted run on a daemon that outlived it.
dc down -v --remove-orphans -t 5 >/dev/null 2>&1
busy=()
for port in "${PORTS[@]}"; do port_in_use "$port" && busy+=("$port"); done
if ((${#busy[@]} > 0)); then
  bad "something already listens on 127.0.0.1:${busy[*]}; not starting the masters there"
  end_step
  abort
fi
COMPOSE_UP=1
if dc up -d --no-build >"$WORK_DIR/up.log" 2>&1; then ok "up -d --no-build"; else
  bad "up -d --no-build failed:"
  show_log "$WORK_DIR/up.log" 20
fi
expect "nothing was pulled" bash -c "! grep -qi pull '$WORK_DIR/up.log'"
for i in 1 2 3 4 5; do
  port=${PORTS[$((i - 1))]}
  if wait_pong "$port" 60; then
    ok "redis-$i answers on 127.0.0.1:$port: dir $(rcli "$port" CONFIG GET dir | sed -n 2p), appendonly $(rcli "$port" CONFIG GET appendonly | sed -n 2p), appendfsync $(rcli "$port" CONFIG GET appendfsync | sed -n 2p)"
    [[ "$(rcli "$port" CONFIG GET appendfsync | sed -n 2p)" == always &&
      "$(rcli "$port" CONFIG GET dir | sed -n 2p)" == /data ]] ||
      bad "redis-$i is not the compose master (expected dir /data, appendfsync always)"
  else
    bad "redis-$i does not answer PING on 127.0.0.1:$port within 60s"
    dc logs --tail 10 "redis-$i" 2>&1 | sed 's/^/   | /'
  fi
done
for port in "${PORTS[@]}"; do
  rcli "$port" CONFIG SET latency-monitor-threshold 25 >/dev/null 2>&1 ||
    note "127.0.0.1:$port: CONFIG SET latency-monitor-threshold failed (diagnostics only)"
done
id="$(dc ps -q redis-1)"
expect "no published ports (host network)" test "$("${DOCKER[@]}" inspect -f '{{.HostConfig.NetworkMode}} {{len .HostConfig.PortBindings}}' "$id" 2>/dev/null)" == "host 0"
end_step || abort

# --- 5. the demo and the suite -----------------------------------------------

begin "demo on the compose masters" "REDLOCK_MASTERS=... scripts/demo.sh exits 0 with no PROBLEM line"
settle_disk
rc=0
env -u REDLOCK_TEST_MASTERS REDLOCK_MASTERS="$MASTERS" REDLOCK_DEMO_REQUEST_TIMEOUT="$REQUEST_TIMEOUT" timeout 300 ./scripts/demo.sh >"$WORK_DIR/demo.log" 2>&1 || rc=$?
if ((rc == 0)) && ! grep -q '^PROBLEM' "$WORK_DIR/demo.log"; then
  ok "demo passed: $(grep -c '^Check:' "$WORK_DIR/demo.log") checks, e.g. \"$(grep -m1 '^Check:' "$WORK_DIR/demo.log")\""
else
  bad "demo exited $rc:"
  show_log "$WORK_DIR/demo.log" 40
fi
end_step

begin "test suite on the compose masters (ctest ${CTEST_ARGS[*]})" "REDLOCK_TEST_MASTERS=... scripts/test.sh ${CTEST_ARGS[*]} exits 0; tests that must control a master skip"
settle_disk
rc=0
env -u REDLOCK_MASTERS REDLOCK_TEST_MASTERS="$MASTERS" timeout 900 ./scripts/test.sh "${CTEST_ARGS[@]}" >"$WORK_DIR/test.log" 2>&1 || rc=$?
summary="$(grep -E 'tests passed|tests failed' "$WORK_DIR/test.log" | tail -n 1)"
if ((rc == 0)) && [[ -n "$summary" ]]; then
  ok "$summary; $(grep -c '\*\*\*Skipped' "$WORK_DIR/test.log") of them skipped (they must control a master)"
  ok "$(grep -m1 'Total Test time' "$WORK_DIR/test.log" | sed 's/^ *//')"
elif ((rc == 0)); then
  bad "scripts/test.sh ran no test"
  show_log "$WORK_DIR/test.log" 10
else
  bad "scripts/test.sh exited $rc: $summary"
  grep -A30 'The following tests FAILED' "$WORK_DIR/test.log" | sed 's/^/   | /'
  ((rc == 124)) && note "(timed out after 900s)"
  grep -q 'The following tests FAILED' "$WORK_DIR/test.log" || show_log "$WORK_DIR/test.log" 30
fi
end_step

# --- 6. failure injection through compose ------------------------------------

# 6a. A frozen master.
res="$RUN_TAG-pause"
begin "pause/unpause redis-2 (a frozen master)" "paused redis-2 gets no PING answer; \`redlock status\` shows it unreachable and exits 0; \`redlock acquire\` succeeds with the other 4 holding the key; release works; after unpause redis-2 answers PONG"
settle_disk
dc pause redis-2 >"$WORK_DIR/step.log" 2>&1 || { bad "docker-compose pause redis-2 failed"; show_log "$WORK_DIR/step.log" 5; }
expect "container redis-2 is paused" test "$(container_state redis-2)" == "paused 0"
expect "PING on 7002 gets no answer within 3s" bash -c "! timeout 3 redis-cli -p 7002 PING >/dev/null 2>&1"
rc=0
status="$(rl status "$res" 2>&1)" || rc=$?
expect "redlock status exits 0 (a quorum reachable; it exited $rc)" test "$rc" -eq 0
expect "redlock status shows 127.0.0.1:7002 down" test "$(awk '$1 == "127.0.0.1:7002" {for (i = 2; i <= NF; ++i) if ($i == "down") print $i}' <<<"$status")" == down
note "$(grep -E '^127\.0\.0\.1:7002 ' <<<"$status" | tr -s ' ' | cut -c1-110)"
rc=0
out="$(rl acquire --ttl 5s "$res" 2>"$WORK_DIR/err")" || rc=$?
token="$(field token <<<"$out")"
expect "redlock acquire exits 0 with redis-2 frozen (exit $rc)" test "$rc" -eq 0
n="$(holders "redlock:$res" "${token:-none}" 7001 7003 7004 7005)"
expect "the other 4 masters hold the token ($n of 4)" test "$n" -eq 4
rc=0
out="$(rl release "$res" "${token:-none}" 2>>"$WORK_DIR/err")" || rc=$?
expect "redlock release exits 0: $(field released <<<"$out") released, $(field failed <<<"$out") failed" test "$rc" -eq 0
dc unpause redis-2 >"$WORK_DIR/step.log" 2>&1 || { bad "docker-compose unpause redis-2 failed"; show_log "$WORK_DIR/step.log" 5; }
expect "after unpause redis-2 answers PONG" wait_pong 7002 10
expect "container redis-2 is running" test "$(container_state redis-2)" == "running 0"
end_step

# 6b. A crash with the AOF.
res="$RUN_TAG-kill"
begin "kill + start redis-3 (crash, AOF always)" "a lock held before the SIGKILL is still on redis-3 after start (GET = token); its marker is still trusted and \`redlock status\` shows MARKER trusted; an acquisition needing all 5 masters (--quorum unanimous) succeeds, so the restart guard does not hold redis-3 back"
rc=0
out="$(rl acquire --ttl 60s "$res" 2>"$WORK_DIR/err")" || rc=$?
token="$(field token <<<"$out")"
expect "acquired $res before the crash (exit $rc)" test "$rc" -eq 0
expect "redis-3 holds the token before the crash" test "$(rcli 7003 GET "redlock:$res")" == "${token:-none}"
before="$(run_id 7003)"
dc kill redis-3 >"$WORK_DIR/step.log" 2>&1 || { bad "docker-compose kill redis-3 failed"; show_log "$WORK_DIR/step.log" 5; }
expect "redis-3 exited with 137 (SIGKILL): $(container_state redis-3)" test "$(container_state redis-3)" == "exited 137"
expect "redis-3 does not answer" bash -c "! redis-cli -p 7003 PING >/dev/null 2>&1"
dc start redis-3 >"$WORK_DIR/step.log" 2>&1 || { bad "docker-compose start redis-3 failed"; show_log "$WORK_DIR/step.log" 5; }
expect "redis-3 answers PONG after start" wait_pong 7003 30
after="$(run_id 7003)"
expect "it is a new process (run_id ${before:0:8} -> ${after:0:8}, uptime $(rcli 7003 INFO server | sed -n 's/^uptime_in_seconds://p')s)" test -n "$after" -a "$after" != "$before"
expect "the lock survived on redis-3 (GET = token, PTTL $(rcli 7003 PTTL "redlock:$res")ms)" test "$(rcli 7003 GET "redlock:$res")" == "${token:-none}"
marker="$(rcli 7003 GET "$MARKER_KEY")"
expect "the marker on redis-3 is still trusted ($MARKER_KEY = ${marker:0:40})" test "${marker%%:*}" == trusted
expect "redlock status: MARKER of redis-3 is trusted ($(status_field "$res" 2 marker))" test "$(status_field "$res" 2 marker | cut -d: -f1)" == trusted
expect "redlock status: the lock is held by a quorum" test "$(rl status --json "$res" 2>/dev/null | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["held"], d["holders"])' 2>/dev/null)" == "True 5"
rc=0
out="$(rl acquire --quorum unanimous --ttl 5s "$res-all" 2>>"$WORK_DIR/err")" || rc=$?
expect "redlock acquire --quorum unanimous succeeds: redis-3's grant counts (exit $rc)" test "$rc" -eq 0
rl release --quorum unanimous "$res-all" "$(field token <<<"$out")" >/dev/null 2>&1
rc=0
out="$(rl release "$res" "${token:-none}" 2>>"$WORK_DIR/err")" || rc=$?
expect "released the crash-surviving lock on $(field released <<<"$out") of 5 (exit $rc)" test "$rc" -eq 0 -a "$(field released <<<"$out")" == 5
((STEP_FAILS == 0)) || show_log "$WORK_DIR/err" 10
end_step

# 6c. A minority restarts while a lock is held and extended. Runs before the
# data-loss step: with one master reborn (held back for max_ttl), two more
# restarting would leave 2 of 5, below the quorum, which is the restart
# guard's cost rather than what this step shows.
res="$RUN_TAG-run"
begin "restart redis-4 and redis-5 while \`redlock run --ttl 6s $res -- sleep 15\` holds the lock" "docker-compose restart of the two (new run_ids), then a stop of both for 3s (longer than the 2s between extensions, so the run extends with only redis-1..3 answering) and a start: the lock stays on redis-1..3 with its TTL renewed, the run exits 0 (a failed extension would make it 76) and leaves no key"
REDLOCK_MASTERS=$MASTERS timeout 60 "$CLI" run --request-timeout "$REQUEST_TIMEOUT" --ttl 6s "$res" -- sleep 15 >"$WORK_DIR/run.log" 2>&1 &
run_pid=$!
for ((i = 0; i < 50; i++)); do
  [[ -n "$(rcli 7001 GET "redlock:$res")" ]] && break
  sleep 0.1
done
token="$(rcli 7001 GET "redlock:$res")"
expect "the run holds $res (token ${token:0:8} on $(holders "redlock:$res" "${token:-none}" "${PORTS[@]}") of 5)" test -n "$token"
id4="$(run_id 7004)"
id5="$(run_id 7005)"
sleep 2
t0=$SECONDS
dc restart -t 10 redis-4 redis-5 >"$WORK_DIR/step.log" 2>&1 || { bad "docker-compose restart failed"; show_log "$WORK_DIR/step.log" 5; }
expect "redis-4 and redis-5 answer again after docker-compose restart ($((SECONDS - t0))s)" both_pong 7004 7005
expect "both restarted (new run_ids)" test -n "$(run_id 7004)" -a "$(run_id 7004)" != "$id4" -a -n "$(run_id 7005)" -a "$(run_id 7005)" != "$id5"
dc stop -t 10 redis-4 redis-5 >"$WORK_DIR/step.log" 2>&1 || { bad "docker-compose stop failed"; show_log "$WORK_DIR/step.log" 5; }
expect "redis-4 and redis-5 are stopped" bash -c "! redis-cli -p 7004 PING >/dev/null 2>&1 && ! redis-cli -p 7005 PING >/dev/null 2>&1"
sleep 3
pttl="$(rcli 7001 PTTL "redlock:$res")"
# Unextended, 3s after the stop at most 3000ms would be left of the 6s TTL;
# an extension in the last 2s leaves at least 4000ms.
expect "extended while they were down: PTTL on redis-1 is ${pttl}ms after 3s (> 3500ms)" test "${pttl:-0}" -gt 3500
dc start redis-4 redis-5 >"$WORK_DIR/step.log" 2>&1 || { bad "docker-compose start failed"; show_log "$WORK_DIR/step.log" 5; }
expect "redis-4 and redis-5 answer again after start" both_pong 7004 7005
expect "the lock is still held by its token on redis-1..3" test "$(holders "redlock:$res" "${token:-none}" 7001 7002 7003)" -eq 3
rc=0
wait "$run_pid" || rc=$?
expect "redlock run exited 0 (exit $rc)" test "$rc" -eq 0
((rc == 0)) || show_log "$WORK_DIR/run.log" 10
expect "no key left for $res" test "$(holders "redlock:$res" "" "${PORTS[@]}")" -eq 5
end_step

# 6d. A crash that loses the data.
res="$RUN_TAG-reborn"
begin "stop + rm + volume rm + up redis-4 (a crash that loses the data)" "redis-4 comes back empty (no marker) and is held back: \`redlock acquire\` still succeeds with the other 4, an acquisition needing all 5 fails naming the restart guard, and that client, which had to hear redis-4, marked it reborn: the marker on redis-4 reads reborn:..., \`redlock status\` shows MARKER reborn (the first client may be done before it hears redis-4, and then writes nothing to it: docs/design.md)"
expect "redis-4 is marked trusted before ($(rcli 7004 GET "$MARKER_KEY" | cut -c1-40))" test "$(rcli 7004 GET "$MARKER_KEY" | cut -d: -f1)" == trusted
volume="${PROJECT}_redis-4-data"
{ dc stop -t 5 redis-4 && dc rm -f redis-4; } >"$WORK_DIR/step.log" 2>&1 || { bad "docker-compose stop/rm redis-4 failed"; show_log "$WORK_DIR/step.log" 5; }
if "${DOCKER[@]}" volume rm "$volume" >>"$WORK_DIR/step.log" 2>&1; then ok "removed volume $volume"; else
  bad "docker volume rm $volume failed"
  show_log "$WORK_DIR/step.log" 5
fi
expect "volume $volume is gone" bash -c "! ${DOCKER[*]} volume inspect '$volume' >/dev/null 2>&1"
dc up -d --no-build redis-4 >"$WORK_DIR/step.log" 2>&1 || { bad "docker-compose up redis-4 failed"; show_log "$WORK_DIR/step.log" 5; }
expect "redis-4 answers PONG after up" wait_pong 7004 30
expect "redis-4 is empty: no marker, DBSIZE $(rcli 7004 DBSIZE)" test -z "$(rcli 7004 GET "$MARKER_KEY")" -a "$(rcli 7004 DBSIZE)" == 0
rc=0
out="$(rl acquire --ttl 10s "$res" 2>"$WORK_DIR/err")" || rc=$?
token="$(field token <<<"$out")"
expect "redlock acquire succeeds with the other 4 (exit $rc)" test "$rc" -eq 0
expect "the lock is on redis-1,2,3,5 ($(holders "redlock:$res" "${token:-none}" 7001 7002 7003 7005) of 4)" test "$(holders "redlock:$res" "${token:-none}" 7001 7002 7003 7005)" -eq 4
rc=0
rl acquire --quorum unanimous --ttl 5s "$res-all" >"$WORK_DIR/all.out" 2>"$WORK_DIR/all.err" || rc=$?
expect "redlock acquire --quorum unanimous fails: redis-4's grant does not count (exit $rc)" test "$rc" -ne 0
reason="$(grep -m1 -o 'restart guard[^;)]*' "$WORK_DIR/all.err" | cut -c1-100)"
expect "the refusal names the restart guard (${reason:-no reason found})" test -n "$reason"
marker="$(rcli 7004 GET "$MARKER_KEY")"
expect "the marker on redis-4 now reads reborn ($MARKER_KEY = ${marker:0:40})" test "${marker%%:*}" == reborn
expect "redlock status: MARKER of redis-4 is reborn ($(status_field "$res" 3 marker))" test "$(status_field "$res" 3 marker | cut -d: -f1)" == reborn
rc=0
out="$(rl release "$res" "${token:-none}" 2>>"$WORK_DIR/err")" || rc=$?
expect "redlock release exits 0 ($(field released <<<"$out") released)" test "$rc" -eq 0
((STEP_FAILS == 0)) || { show_log "$WORK_DIR/err" 10; show_log "$WORK_DIR/all.err" 10; }
end_step

# 6e. One master replaced by a new one while clients of both lists take a
# lock. Its own key prefix and a 3s max_ttl make it a new deployment (the
# default prefix's carries the 1h max_ttl of the steps above), so the wait
# before finishing is 3s*1.01 + 2s + 1s. The new master is a container of the
# same image and flags as redis-5, started with `docker run` (not a compose
# service: the compose files and their check stay five masters) and removed
# by swap_cleanup, also from teardown if the step was interrupted.
readonly SWAP_PREFIX="$RUN_TAG-swap:"
readonly SWAP_MARKER="${SWAP_PREFIX}__deployment__"
readonly SWAP_PORTS=(7001 7002 7003 7004 7005 "$NEW_PORT")

# sw LIST SUBCOMMAND ARGS...: the tool on LIST with this step's prefix and
# max_ttl, bounded.
sw() {
  local list=$1 cmd=$2
  shift 2
  REDLOCK_MASTERS=$list timeout 30 "$CLI" "$cmd" --request-timeout "$REQUEST_TIMEOUT" \
    --key-prefix "$SWAP_PREFIX" --max-ttl 3s "$@"
}
now_ns() { date +%s%N; }
# swap_client LIST NAME: until $WORK_DIR/swap.stop exists (at most 90s),
# takes $res on LIST with `redlock run`, the command appending
# "NAME START_NS END_NS" of its hold to $WORK_DIR/holds; one line
# "START_NS END_NS EXIT MESSAGE" per attempt to $WORK_DIR/NAME.attempts.
swap_client() {
  local list=$1 name=$2 rc t0 deadline=$((SECONDS + 90))
  while [[ ! -e "$WORK_DIR/swap.stop" ]] && ((SECONDS < deadline)); do
    t0="$(now_ns)"
    rc=0
    REDLOCK_MASTERS=$list timeout 10 "$CLI" run -v --request-timeout "$REQUEST_TIMEOUT" \
      --key-prefix "$SWAP_PREFIX" --max-ttl 3s \
      --ttl 2s --wait 500ms "$res" -- \
      sh -c 's=$(date +%s%N); sleep 0.05; e=$(date +%s%N); echo "$1 $s $e" >>"$2"' \
      sh "$name" "$WORK_DIR/holds" >/dev/null 2>"$WORK_DIR/$name.err" || rc=$?
    echo "$t0 $(now_ns) $rc $(head -c 3000 "$WORK_DIR/$name.err" | tr '\n' ' ')" >>"$WORK_DIR/$name.attempts"
    ((rc == 0)) || sleep 0.1
  done
}
# overlaps FILE: checks the "NAME START END" lines of FILE; prints one line
# per pair of holds that overlap and a summary; exits 0 only if every line
# parses, every hold ends after it starts and no two overlap.
overlaps() {
  python3 - "$1" <<'PY'
import sys
holds, bad = [], 0
for n, line in enumerate(open(sys.argv[1]), 1):
    f = line.split()
    if len(f) != 3 or not (f[1].isdigit() and f[2].isdigit()) or int(f[2]) < int(f[1]):
        print(f"line {n} is not NAME START END: {line.strip()!r}")
        bad += 1
        continue
    holds.append((int(f[1]), int(f[2]), f[0]))
holds.sort()
latest = None  # the hold seen so far that ends last
for h in holds:
    if latest is not None and h[0] < latest[1]:
        print(f"overlap: {latest[2]} held {latest[0]}..{latest[1]}, {h[2]} from {h[0]} "
              f"({(min(latest[1], h[1]) - h[0]) / 1e6:.1f}ms together)")
        bad += 1
    if latest is None or h[1] > latest[1]:
        latest = h
print(f"{len(holds)} holds, {bad} problem(s)")
sys.exit(1 if bad else 0)
PY
}
# holds_of NAME [FROM_NS [TO_NS]]: how many holds of NAME started in
# [FROM_NS, TO_NS).
holds_of() {
  local n=0 who start end
  while read -r who start end; do
    [[ "$who" == "$1" && "$start" =~ ^[0-9]+$ ]] || continue
    ((start >= ${2:-0} && start < ${3:-9000000000000000000})) && n=$((n + 1))
  done <"$WORK_DIR/holds"
  echo "$n"
}
# markers PORT...: the step's marker on each, one line each.
swap_markers() {
  local port
  for port in "$@"; do echo "$port $(rcli "$port" GET "$SWAP_MARKER")"; done
}
# marker_field PORT NAME: a field of the membership record on PORT.
marker_field() { rcli "$1" GET "$SWAP_MARKER" | tr ';' '\n' | sed -n "s/^$2=//p"; }
# Starts redis-6: the image and persistence flags of the compose masters, on
# the host's network like them, on 127.0.0.1:$NEW_PORT.
swap_start_master() {
  SWAP_CONTAINER="$PROJECT-redis-6-$$"
  timeout 60 "${DOCKER[@]}" run -d --name "$SWAP_CONTAINER" --label "org.redlock.compose-test=$$" \
    --network host "$IMAGE" redis-server --appendonly yes --appendfsync always --save "" \
    --bind 127.0.0.1 --port "$NEW_PORT"
}
# The step until its last check; returns early when what follows cannot run.
swap_run() {
  local rc out token before after t_begin t_finish port n
  local old_members=127.0.0.1:7001,127.0.0.1:7002,127.0.0.1:7003,127.0.0.1:7004,127.0.0.1:7005
  local new_members=127.0.0.1:7001,127.0.0.1:7002,127.0.0.1:7003,127.0.0.1:7004,127.0.0.1:$NEW_PORT
  : >"$WORK_DIR/holds"
  rm -f "$WORK_DIR/swap.stop" "$WORK_DIR"/{old,new}.attempts
  if port_in_use "$NEW_PORT"; then
    bad "something already listens on 127.0.0.1:$NEW_PORT; not starting redis-6 there"
    return
  fi
  if swap_start_master >"$WORK_DIR/step.log" 2>&1; then
    ok "started redis-6: docker run --network host $IMAGE redis-server --appendonly yes --appendfsync always --save '' --bind 127.0.0.1 --port $NEW_PORT"
  else
    bad "docker run of redis-6 failed:"
    show_log "$WORK_DIR/step.log" 5
    return
  fi
  if ! wait_pong "$NEW_PORT" 30; then
    bad "redis-6 does not answer PING on 127.0.0.1:$NEW_PORT within 30s"
    return
  fi
  expect "redis-6 answers, empty (DBSIZE $(rcli "$NEW_PORT" DBSIZE)), appendfsync $(rcli "$NEW_PORT" CONFIG GET appendfsync | sed -n 2p)" \
    test "$(rcli "$NEW_PORT" DBSIZE)" == 0 -a "$(rcli "$NEW_PORT" CONFIG GET appendfsync | sed -n 2p)" == always

  # Bootstrap on the old list.
  rc=0
  out="$(sw "$MASTERS" acquire --ttl 2s "$res" 2>"$WORK_DIR/err")" || rc=$?
  token="$(field token <<<"$out")"
  sw "$MASTERS" release "$res" "${token:-none}" >/dev/null 2>>"$WORK_DIR/err" || rc=$?
  expect "bootstrapped on the old list: acquire + release (exit $rc)" test "$rc" -eq 0
  expect "redis-1..5 record epoch 1 steady redis-1..5 ($(marker_field 7001 epoch) / $(marker_field 7001 members))" \
    test "$(swap_markers 7001 7002 7003 7004 7005 | grep -c ";epoch=1;members=$old_members;next=;")" -eq 5
  if ((STEP_FAILS > 0)); then show_log "$WORK_DIR/err" 10; return; fi

  # The clients.
  swap_client "$MASTERS" old &
  SWAP_PIDS+=($!)
  swap_client "$NEW_MASTERS" new &
  SWAP_PIDS+=($!)
  SWAP_ALL_PIDS=("${SWAP_PIDS[@]}")
  sleep 1.5
  note "clients running (old list PID ${SWAP_PIDS[0]}, new list PID ${SWAP_PIDS[1]}): $(holds_of old) hold(s) of the old-list client, $(holds_of new) of the new-list one (its last attempt: exit $(tail -n 1 "$WORK_DIR/new.attempts" 2>/dev/null | cut -d' ' -f3), $(tail -n 1 "$WORK_DIR/new.attempts" 2>/dev/null | grep -o 'membership: [^;]*' | head -n 1 | cut -c1-90)...)"

  # --dry-run writes nothing. Every reconfigure run gets --request-timeout
  # 1s (after sw's REQUEST_TIMEOUT; the last one given counts): it writes
  # records on six servers, each fsync'd, and a write that lands after the
  # timeout is reported as not written (exit 69) although it is there.
  before="$(swap_markers "${SWAP_PORTS[@]}")"
  rc=0
  sw "$MASTERS" reconfigure --request-timeout 1s --to "$NEW_MASTERS" --dry-run >"$WORK_DIR/dry.out" 2>&1 || rc=$?
  after="$(swap_markers "${SWAP_PORTS[@]}")"
  expect "reconfigure --dry-run exits 0 and plans the begin ($(grep -m1 '^step:' "$WORK_DIR/dry.out" | cut -c1-60)...; exit $rc)" \
    test "$rc" -eq 0 -a "$(grep -c '^step: begin: epoch 2 joint' "$WORK_DIR/dry.out")" -eq 1
  expect "--dry-run wrote nothing: the marker on each of the 6 servers is as before" test "$before" == "$after"
  ((STEP_FAILS == 0)) || show_log "$WORK_DIR/dry.out" 12

  # begin.
  t_begin="$(now_ns)"
  rc=0
  sw "$MASTERS" reconfigure --request-timeout 1s --to "$NEW_MASTERS" >"$WORK_DIR/begin.out" 2>&1 || rc=$?
  n="$(swap_markers "${SWAP_PORTS[@]}" | grep -c ";epoch=2;members=$old_members;next=$new_members;")"
  expect "begin exits 0 (exit $rc); all 6 servers record epoch 2 joint old -> new ($n of 6)" test "$rc" -eq 0 -a "$n" -eq 6
  ((STEP_FAILS == 0)) || { show_log "$WORK_DIR/begin.out" 12; return; }

  # finish before the wait is over, then with --wait.
  before="$(swap_markers "${SWAP_PORTS[@]}")"
  rc=0
  sw "$MASTERS" reconfigure --request-timeout 1s --to "$NEW_MASTERS" >"$WORK_DIR/early.out" 2>&1 || rc=$?
  after="$(swap_markers "${SWAP_PORTS[@]}")"
  expect "finish right after begin exits 75, the wait not over ($(grep -o 'the wait is not over ([^)]*)' "$WORK_DIR/early.out"); exit $rc)" test "$rc" -eq 75
  expect "and writes nothing: every marker as before" test "$before" == "$after"
  rc=0
  sw "$MASTERS" reconfigure --request-timeout 1s --to "$NEW_MASTERS" --wait >"$WORK_DIR/finish.out" 2>&1 || rc=$?
  t_finish="$(now_ns)"
  n="$(swap_markers "${SWAP_PORTS[@]}" | grep -c ";epoch=3;members=$new_members;next=;")"
  expect "finish --wait exits 0 after $(((t_finish - t_begin) / 1000000))ms from begin: $(grep -m1 '^finished:' "$WORK_DIR/finish.out" | cut -c1-50)... (exit $rc)" \
    test "$rc" -eq 0 -a "$(grep -c '^finished: epoch 3 steady' "$WORK_DIR/finish.out")" -eq 1
  expect "all 6 servers record epoch 3 steady new ($n of 6; redis-5 keeps one naming the members without it)" test "$n" -eq 6
  ((STEP_FAILS == 0)) || show_log "$WORK_DIR/finish.out" 15

  # The clients go on for 2s under the new record, then stop.
  sleep 2
  swap_stop_clients

  # What they recorded.
  if out="$(overlaps "$WORK_DIR/holds")"; then ok "no two holds overlap: $(tail -n 1 <<<"$out")"; else
    bad "holds overlap or are unreadable: $(tail -n 1 <<<"$out")"
    head -n 10 <<<"$out" | sed 's/^/   | /'
  fi
  expect "the old-list client held $res before finish ($(holds_of old 0 "$t_finish") hold(s), $(holds_of old "$t_begin" "$t_finish") of them during the change)" \
    test "$(holds_of old "$t_begin" "$t_finish")" -gt 0
  expect "the new-list client held it during the change ($(holds_of new "$t_begin" "$t_finish") hold(s)) and after finish ($(holds_of new "$t_finish") hold(s))" \
    test "$(holds_of new "$t_begin" "$t_finish")" -gt 0 -a "$(holds_of new "$t_finish")" -gt 0
  # A fresh old-list process is refused once it has heard from redis-5,
  # whose record names it a non-member: the list check judges the names
  # heard so far (src/algorithm/membership.h CheckList), and redis-1..4 are members of
  # both lists. If a quorum of its grants comes from redis-1..4 before
  # redis-5 answers, it gets the lock: those grants count over the new
  # members, so it still excludes the new-list client (the overlap check
  # above), and redis-5's vote is never one of them.
  local after_n refused granted counted
  after_n="$(awk -v t="$t_finish" '$1 > t' "$WORK_DIR/old.attempts" 2>/dev/null | wc -l)"
  refused="$(awk -v t="$t_finish" '$1 > t && $3 != 0 && /membership: /' "$WORK_DIR/old.attempts" 2>/dev/null | wc -l)"
  granted="$(awk -v t="$t_finish" '$1 > t && $3 == 0' "$WORK_DIR/old.attempts" 2>/dev/null | wc -l)"
  counted="$(awk -v t="$t_finish" '$1 > t && $3 == 0 && /127\.0\.0\.1:7005 granted/' "$WORK_DIR/old.attempts" 2>/dev/null | wc -l)"
  expect "after finish the old-list client is refused naming membership: $refused of its $after_n attempts" \
    test "$after_n" -gt 0 -a "$refused" -gt 0
  ((granted == 0)) || note "$granted of them got the lock before redis-5 answered, on grants of redis-1..4"
  expect "no lock of the old-list client after finish counts redis-5's vote ($counted of $granted do)" test "$counted" -eq 0
  # And one more old-list acquisition (up to 5 tries, -v: its votes).
  local try
  for ((try = 1; try <= 5; try++)); do
    rc=0
    out="$(sw "$MASTERS" acquire -v --ttl 2s "$res" 2>"$WORK_DIR/err")" || rc=$?
    ((rc != 0)) && break
    grep -q '127\.0\.0\.1:7005 granted' "$WORK_DIR/err" && bad "redis-5's grant counted for the old list: $(grep -m1 votes "$WORK_DIR/err" | cut -c1-200)"
    sw "$MASTERS" release "$res" "$(field token <<<"$out")" >/dev/null 2>&1
  done
  expect "redlock acquire on the old list is refused (exit $rc, try $((try > 5 ? 5 : try))): $(grep -m1 -o 'membership: [^;]*' "$WORK_DIR/err" | head -n 1 | cut -c1-90)" \
    test "$rc" -ne 0 -a "$(grep -c 'membership: ' "$WORK_DIR/err")" -gt 0
  rc=0
  out="$(sw "$NEW_MASTERS" acquire --ttl 2s "$res" 2>"$WORK_DIR/err")" || rc=$?
  token="$(field token <<<"$out")"
  expect "redlock acquire on the new list succeeds (exit $rc)" test "$rc" -eq 0
  rc=0
  sw "$NEW_MASTERS" release "$res" "${token:-none}" >/dev/null 2>>"$WORK_DIR/err" || rc=$?
  expect "and its release (exit $rc)" test "$rc" -eq 0
  out="$(sw "$NEW_MASTERS" status --json "$res" 2>/dev/null | python3 -c '
import json, sys
want = sys.argv[1].split(",")
d = json.load(sys.stdin)
ok = [m["master"] for m in d["masters"]
      if (m.get("membership") or {}).get("epoch") == 3 and m["membership"].get("members") == want
      and not m["membership"].get("next") and m["membership"].get("member") == m["member"]]
print(len(ok), d["masters"][4]["member"], d["masters"][4].get("membership", {}).get("epoch"))' "$new_members" 2>&1)"
  expect "redlock status on the new list: epoch 3 steady new members on every master, redis-6 the member $(cut -d' ' -f2 <<<"$out") (${out%% *} of 5)" \
    test "$out" == "5 127.0.0.1:$NEW_PORT 3"
  ((STEP_FAILS == 0)) || { show_log "$WORK_DIR/err" 10; tail -n 3 "$WORK_DIR/old.attempts" "$WORK_DIR/new.attempts" 2>/dev/null | cut -c1-200 | sed 's/^/   | /'; }
}

res="$RUN_TAG-swap"
begin "replace redis-5 with a new master while clients of both lists take $res" "prefix $SWAP_PREFIX, --max-ttl 3s on every command (a new deployment). redis-6 (docker run, the same image and flags) on 127.0.0.1:$NEW_PORT; bootstrap on redis-1..5; one client on the old list, one on the new (redis-1..4, redis-6), looping on \`redlock run\`, each hold recording its start and end; --dry-run writes nothing; begin writes epoch 2 joint; finish without --wait exits 75 and writes nothing; finish --wait writes epoch 3 steady. Then no two holds overlap, both clients held during the change, the old list is refused naming membership, the new list locks, \`redlock status\` shows epoch 3 with redis-6 a member; clients and container gone"
swap_run
swap_cleanup
for pid in "${SWAP_ALL_PIDS[@]}"; do
  expect "client $pid has exited" bash -c "! kill -0 $pid 2>/dev/null"
done
if [[ -n "$SWAP_CONTAINER" ]]; then
  expect "container $SWAP_CONTAINER is removed" bash -c "! ${DOCKER[*]} inspect '$SWAP_CONTAINER' >/dev/null 2>&1"
fi
expect "nothing listens on 127.0.0.1:$NEW_PORT" bash -c "! (exec 3<>/dev/tcp/127.0.0.1/$NEW_PORT) 2>/dev/null"
end_step

# --- 7. the TLS variant (docker-compose.tls.yml) -------------------------------

res="$RUN_TAG-tls"
begin "TLS variant: scripts/compose-tls.sh up, the CLI over TLS, redis-tls-3 killed" "certificates made by the script; 5 masters serving only TLS on 127.0.0.1:7011-7015 (no plain TCP), client certificates required; \`redlock --tls --cacert --cert --key\` acquires $res on a quorum of the 5 (at least 3), \`status --json\` says transport tls and TLSv1.x on every master, release frees it on at least 3; without --cert/--key the acquisition fails naming the client certificate; with redis-tls-3 killed it acquires on at least 3 of the other 4 and releases; redis-tls-3 starts again"
TLS_DIR="$WORK_DIR/tls"
busy=()
for port in "${TLS_PORTS[@]}"; do port_in_use "$port" && busy+=("$port"); done
if ((${#busy[@]} > 0)); then
  bad "something already listens on 127.0.0.1:${busy[*]}; not starting the TLS masters there"
else
  TLS_UP=1
  if tls_script up --no-build >"$WORK_DIR/up-tls.log" 2>&1; then ok "scripts/compose-tls.sh up --no-build"; else
    bad "scripts/compose-tls.sh up failed:"
    show_log "$WORK_DIR/up-tls.log" 20
  fi
  expect "it made the certificates (no CA key kept): $(cd "$TLS_DIR" 2>/dev/null && echo *)" \
    test -f "$TLS_DIR/ca.pem" -a -f "$TLS_DIR/server.key" -a -f "$TLS_DIR/client.key" -a ! -e "$TLS_DIR/ca.key"
  expect "nothing was pulled" bash -c "! grep -qi pull '$WORK_DIR/up-tls.log'"
  for i in 1 2 3 4 5; do
    port=${TLS_PORTS[$((i - 1))]}
    expect "redis-tls-$i answers PING over TLS on 127.0.0.1:$port" wait_tls_pong "$port" 60
  done
  expect "no plain TCP: a plain PING on 7011 gets no PONG" bash -c "[[ \"\$(timeout 3 redis-cli -p 7011 PING 2>/dev/null)\" != PONG ]]"
  rc=0
  out="$(rlt acquire --ttl 20s "$res" 2>"$WORK_DIR/err")" || rc=$?
  token="$(field token <<<"$out")"
  expect "redlock --tls --cacert --cert --key acquire exits 0 (exit $rc)" test "$rc" -eq 0
  n=0
  for port in "${TLS_PORTS[@]}"; do [[ "$(trcli "$port" GET "redlock:$res")" == "${token:-none}" ]] && n=$((n + 1)); done
  # Won at quorum: a master whose TLS handshake was still under way when the
  # tool exited may not have the key (the library does not wait for it).
  expect "a quorum of the 5 TLS masters holds the token ($n of 5)" test "$n" -ge 3
  out="$(rlt status --json "$res" 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
ms = d["masters"]
print(sum(m.get("transport") == "tls" and str(m.get("tls", "")).startswith("TLSv1.") for m in ms), ms[0].get("tls"))' 2>&1)"
  expect "redlock status --json: transport tls on ${out%% *} of 5 masters (${out#* })" test "${out%% *}" == 5
  rc=0
  out="$(rlt release "$res" "${token:-none}" 2>>"$WORK_DIR/err")" || rc=$?
  expect "redlock release exits 0: released, $(field released <<<"$out") of 5 masters confirmed (exit $rc)" test "$rc" -eq 0 -a "$(field released <<<"$out")" -ge 3
  rc=0
  REDLOCK_MASTERS=$TLS_MASTERS timeout 30 "$CLI" --request-timeout "$REQUEST_TIMEOUT" \
    --tls --cacert "$TLS_DIR/ca.pem" acquire --ttl 5s "$res-nocert" >/dev/null 2>"$WORK_DIR/err-nocert" || rc=$?
  expect "without --cert/--key: acquire fails (exit $rc) naming the client certificate ($(grep -m1 -io 'client certificate[^;]*' "$WORK_DIR/err-nocert" | cut -c1-60))" \
    bash -c "[[ $rc -ne 0 ]] && grep -qi 'client certificate' '$WORK_DIR/err-nocert'"
  tls_compose kill redis-tls-3 >"$WORK_DIR/step.log" 2>&1 || { bad "docker-compose kill redis-tls-3 failed"; show_log "$WORK_DIR/step.log" 5; }
  expect "redis-tls-3 does not answer" bash -c "! timeout 3 redis-cli --tls --cacert '$TLS_DIR/ca.pem' --cert '$TLS_DIR/client.pem' --key '$TLS_DIR/client.key' -p 7013 PING >/dev/null 2>&1"
  rc=0
  out="$(rlt acquire --ttl 20s "$res-killed" 2>"$WORK_DIR/err")" || rc=$?
  token="$(field token <<<"$out")"
  expect "with redis-tls-3 killed, acquire exits 0 (exit $rc)" test "$rc" -eq 0
  n=0
  for port in 7011 7012 7014 7015; do [[ "$(trcli "$port" GET "redlock:$res-killed")" == "${token:-none}" ]] && n=$((n + 1)); done
  expect "a quorum of the other 4 holds the token ($n of 4)" test "$n" -ge 3
  out="$(rlt status --json "$res-killed" 2>/dev/null | python3 -c '
import json, sys
m = json.load(sys.stdin)["masters"][2]
print(m["master"], "reachable" if m.get("reachable", not m.get("error")) else "down", (m.get("error") or "")[:60])' 2>&1)"
  note "status of the killed master: $out"
  rc=0
  out="$(rlt release "$res-killed" "${token:-none}" 2>>"$WORK_DIR/err")" || rc=$?
  expect "release exits 0: released, $(field released <<<"$out") of 5 masters confirmed (exit $rc)" test "$rc" -eq 0 -a "$(field released <<<"$out")" -ge 3
  tls_compose start redis-tls-3 >"$WORK_DIR/step.log" 2>&1 || { bad "docker-compose start redis-tls-3 failed"; show_log "$WORK_DIR/step.log" 5; }
  expect "redis-tls-3 answers over TLS again after start" wait_tls_pong 7013 30
  ((STEP_FAILS == 0)) || show_log "$WORK_DIR/err" 10
fi
end_step

# --- 8. teardown and summary (the EXIT trap) ------------------------------------
exit 0
