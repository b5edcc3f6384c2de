# shellcheck shell=bash
# Helpers sourced by the other scripts; not meant to be run on its own.
#
#   source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
#   ensure_deps                  # install missing Debian packages (quiet if none)
#   build_project [ARGS...]      # configure build/ once, then build; ARGS go to
#                                # `cmake --build` (e.g. --target nightly_job)
#   start_masters 5              # REDLOCK_MASTERS, MASTER_URIS, MASTER_PORTS,
#                                # MASTER_PIDS; stopped again on exit
#   stop_masters                 # stop exactly the servers start_masters started
#
# start_masters installs traps on EXIT, INT and TERM that call stop_masters. A
# script that needs its own trap must set it after start_masters and call
# stop_masters from it.

REDLOCK_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

REDLOCK_DEPS=(
  build-essential cmake ninja-build pkg-config
  libhiredis-dev libevent-dev libssl-dev openssl libabsl-dev nlohmann-json3-dev
  libcli11-dev
  googletest libgtest-dev libgmock-dev libbenchmark-dev prometheus-cpp-dev
  redis-server redis-tools docker-compose
  groff-base man-db
  postgresql-15 libpq-dev
)

# Runs a command as root: directly if we are root, else through sudo.
_redlock_as_root() {
  if [[ "$(id -u)" -eq 0 ]]; then
    "$@"
  elif command -v sudo >/dev/null 2>&1; then
    sudo "$@"
  else
    echo "error: need root (or sudo) to run: $*" >&2
    return 1
  fi
}

# Installs whichever of REDLOCK_DEPS is missing. Prints nothing when all of
# them are installed.
ensure_deps() {
  ensure_packages "${REDLOCK_DEPS[@]}"
}

# ensure_packages PKG...: installs whichever of the Debian packages is
# missing (apt-get update first). Prints nothing when all are installed.
ensure_packages() {
  if ! command -v dpkg-query >/dev/null 2>&1; then
    echo "warning: no dpkg-query (not Debian?); not checking for: $*" >&2
    return 0
  fi
  local pkg missing=()
  for pkg in "$@"; do
    if [[ "$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null)" != "install ok installed" ]]; then
      missing+=("$pkg")
    fi
  done
  ((${#missing[@]} == 0)) && return 0
  echo "Installing missing packages: ${missing[*]}" >&2
  _redlock_as_root apt-get update
  _redlock_as_root env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y --no-install-recommends "${missing[@]}"
}

# Configures build/ (Ninja, RelWithDebInfo) unless it already is, then builds.
# Arguments go to `cmake --build`. Prints one line on success and the whole
# log on failure.
build_project() {
  local build_dir="$REDLOCK_ROOT/build" log started rc=0
  log="$(mktemp "${TMPDIR:-/tmp}/redlock-build.XXXXXX")"
  started=$SECONDS
  if [[ ! -f "$build_dir/CMakeCache.txt" ]]; then
    cmake -S "$REDLOCK_ROOT" -B "$build_dir" -G Ninja \
      -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$log" 2>&1 || rc=$?
  fi
  if ((rc == 0)); then
    cmake --build "$build_dir" -j"$(nproc 2>/dev/null || echo 2)" "$@" \
      >>"$log" 2>&1 || rc=$?
  fi
  if ((rc != 0)); then
    cat "$log" >&2
    rm -f "$log"
    echo "error: build failed (exit $rc)" >&2
    return "$rc"
  fi
  rm -f "$log"
  local what="everything" arg next=0 targets=()
  for arg in "$@"; do
    ((next)) && targets+=("$arg")
    next=0
    [[ "$arg" == --target || "$arg" == -t ]] && next=1
  done
  ((${#targets[@]} > 0)) && what="${targets[*]}"
  echo "Built $what in $build_dir ($((SECONDS - started))s)."
}

# Prints a TCP port on 127.0.0.1 that nobody listens on right now.
_redlock_free_port() {
  if command -v python3 >/dev/null 2>&1; then
    python3 -c 'import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])
s.close()'
    return
  fi
  local port tries
  for ((tries = 0; tries < 100; tries++)); do
    port=$((20000 + RANDOM % 40001))
    # A refused connection means nobody listens there.
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      echo "$port"
      return 0
    fi
  done
  echo "error: found no free port" >&2
  return 1
}

# True while PID is a live (not zombie) child of this shell.
_redlock_child_alive() {
  local stat rest state ppid
  stat="$(cat "/proc/$1/stat" 2>/dev/null)" || return 1
  rest="${stat##*) }" # "STATE PPID ..."
  read -r state ppid _ <<<"$rest"
  [[ "$state" != Z && "$ppid" == "$$" ]]
}

# True while PID is a live child of this shell that is redis-server, or is
# still on its way to exec it (bash, setpriv): never signal anything else.
_redlock_is_our_master() {
  local comm
  _redlock_child_alive "$1" || return 1
  comm="$(cat "/proc/$1/comm" 2>/dev/null)" || return 1
  [[ "$comm" == redis-server || "$comm" == setpriv || "$comm" == bash ]]
}

MASTER_URIS=()
MASTER_PORTS=()
MASTER_PIDS=()
MASTER_DIRS=()
MASTERS_EXTERNAL=0

# start_masters N [--durable]: N independent redis-server processes on free
# loopback ports, each in its own temporary directory, without persistence
# (with --durable: AOF, appendfsync always). Exports
# REDLOCK_MASTERS (comma-separated redis://127.0.0.1:PORT) and sets
# MASTER_URIS, MASTER_PORTS and MASTER_PIDS (arrays, in the same order).
# If REDLOCK_MASTERS is already set, uses those masters and starts nothing
# (MASTERS_EXTERNAL=1, MASTER_PIDS empty).
start_masters() {
  local n=${1:?usage: start_masters N [--durable]}
  # --durable: AOF with appendfsync always, as docs/failure-behaviour.md
  # recommends; otherwise no persistence at all.
  local persistence=(--save "" --appendonly no)
  [[ "${2:-}" == --durable ]] && persistence=(--save "" --appendonly yes --appendfsync always)
  if [[ -n "${REDLOCK_MASTERS:-}" ]]; then
    MASTERS_EXTERNAL=1
    IFS=',' read -r -a MASTER_URIS <<<"$REDLOCK_MASTERS"
    local uri hostport
    MASTER_PORTS=()
    for uri in "${MASTER_URIS[@]}"; do
      hostport="${uri#*://}"
      hostport="${hostport##*@}"
      hostport="${hostport%%/*}"
      MASTER_PORTS+=("${hostport##*:}")
    done
    export REDLOCK_MASTERS
    return 0
  fi
  if ! command -v redis-server >/dev/null || ! command -v redis-cli >/dev/null; then
    echo "error: redis-server and redis-cli are needed (Debian: redis-server redis-tools)" >&2
    return 1
  fi
  trap 'stop_masters' EXIT
  trap 'stop_masters; exit 130' INT
  trap 'stop_masters; exit 143' TERM

  # Dies with this shell even if it is SIGKILLed, where setpriv can arrange it.
  local launcher=()
  if command -v setpriv >/dev/null 2>&1 && setpriv --pdeathsig KILL true 2>/dev/null; then
    launcher=(setpriv --pdeathsig KILL --)
  fi

  local i attempt port dir pid ready deadline
  for ((i = 0; i < n; i++)); do
    dir="$(mktemp -d "${TMPDIR:-/tmp}/redlock-master.XXXXXX")"
    MASTER_DIRS+=("$dir")
    ready=0
    for ((attempt = 0; attempt < 5 && !ready; attempt++)); do
      port="$(_redlock_free_port)" || return 1
      "${launcher[@]}" redis-server "${persistence[@]}" --daemonize no \
        --bind 127.0.0.1 --port "$port" --dir "$dir" \
        </dev/null >>"$dir/redis.log" 2>&1 &
      pid=$!
      MASTER_PIDS+=("$pid")
      deadline=$((SECONDS + 5))
      while ((SECONDS < deadline)); do
        if ! _redlock_child_alive "$pid"; then
          break # It exited: most likely someone took the port first.
        fi
        # Answers, and is ours (not another server that took the port).
        if [[ "$(redis-cli -h 127.0.0.1 -p "$port" info server 2>/dev/null |
          tr -d '\r' | sed -n 's/^process_id://p')" == "$pid" ]]; then
          ready=1
          break
        fi
        sleep 0.02
      done
      if ((!ready)); then
        kill -KILL "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
        unset 'MASTER_PIDS[-1]'
      fi
    done
    if ((!ready)); then
      echo "error: redis-server did not start; its log:" >&2
      tail -n 20 "$dir/redis.log" >&2 || true
      return 1
    fi
    MASTER_PORTS+=("$port")
    MASTER_URIS+=("redis://127.0.0.1:$port")
  done
  REDLOCK_MASTERS="$(IFS=','; echo "${MASTER_URIS[*]}")"
  export REDLOCK_MASTERS
}

# Stops exactly the servers start_masters started (SIGCONT in case one is
# stopped, SIGTERM, then SIGKILL after a second) and removes their
# directories. Safe to call more than once.
stop_masters() {
  local pid tries alive
  for pid in "${MASTER_PIDS[@]}"; do
    if _redlock_is_our_master "$pid"; then
      kill -CONT "$pid" 2>/dev/null || true
      kill -TERM "$pid" 2>/dev/null || true
    fi
  done
  for ((tries = 0; tries < 50; tries++)); do
    alive=0
    for pid in "${MASTER_PIDS[@]}"; do
      _redlock_is_our_master "$pid" && alive=1
    done
    ((alive)) || break
    sleep 0.02
  done
  for pid in "${MASTER_PIDS[@]}"; do
    if _redlock_is_our_master "$pid"; then
      kill -KILL "$pid" 2>/dev/null || true
    fi
    wait "$pid" 2>/dev/null || true
  done
  if ((${#MASTER_DIRS[@]} > 0)); then
    rm -rf "${MASTER_DIRS[@]}"
  fi
  MASTER_PIDS=()
  MASTER_DIRS=()
}
