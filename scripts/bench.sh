#!/usr/bin/env bash
# Builds and runs the benchmarks, and regenerates docs/benchmarks.md with
# docs/benchmarks/results.json and docs/benchmarks/latency.svg.
# docs/benchmarks/analysis.md is written by hand; the page links to it.
#
#   ./scripts/bench.sh            # full run (a few minutes), rewrites the docs
#   ./scripts/bench.sh --quick    # smoke run (under a minute), prints the
#                                 # report and leaves the docs alone
#
# REDLOCK_MASTERS=redis://127.0.0.1:7001,... runs against those masters (for
# example the docker-compose deployment) instead of servers the harness
# starts on free loopback ports (the fresh-client block, which SIGSTOPs a
# master, is then skipped). Every server this script or the harness starts
# is stopped again, by PID.
#
# REDLOCK_BENCH_BUILD_DIR=DIR builds and runs the benchmarks from DIR
# (relative to the repository root, or absolute; configured like build/ when
# it has no build file yet) instead of build/.
#
# REDLOCK_BENCH_BASELINE=DIR (a build directory of another commit, holding
# bench/redlock-e2e-bench; for example one of the commit before a change)
# also runs the async and blocking instruction counts with that binary, on
# the same masters and by the same method, and reports both side by side.
#
# Steps: micro benchmarks (Google Benchmark); the end-to-end harness
# (redlock-e2e-bench: latency vs an interleaved floor, the uncontended cycle
# of a semaphore permit and of a reader beside the lock's, whole cycles with
# one slow master, cycles under a joint membership record vs a steady one,
# throughput vs redis-benchmark, contention, hand-off between contender
# processes with waiters polling vs woken on release, a contended semaphore
# (limit 8, 16 processes) and read-write lock (90/10, 8 processes) beside a
# contended lock, a contended lock changing hands (2, 8, 32 threads with a
# client each, beside node-redlock's async workers and a PostgreSQL
# advisory lock under pgbench, against a raw 5-master round trip), client
# CPU, a fresh
# client's first acquisition with a master stopped; TLS against plain TCP on
# the same servers: cycles, connecting, a fresh client with a master
# stopped; leader election's failover and resignation beside etcd's);
# instructions per
# cycle under valgrind --tool=callgrind and system calls per cycle under
# strace, each from two runs of a fixed number of cycles (the difference
# cancels start-up); a gnuplot latency plot.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

QUICK=0
for arg in "$@"; do
  case "$arg" in
    --quick) QUICK=1 ;;
    -h | --help)
      sed -n '2,42p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
      exit 0
      ;;
    *)
      echo "usage: $0 [--quick]" >&2
      exit 2
      ;;
  esac
done

cd "$REDLOCK_ROOT"
ensure_deps

# Tools only the benchmarks need; not part of REDLOCK_DEPS.
ensure_packages gnuplot-nox valgrind strace
# The contended_handover phase's PostgreSQL advisory-lock floor: Debian's
# postgresql-15 ships initdb, pg_ctl, postgres and pgbench (in
# /usr/lib/postgresql/15/bin, where the phase looks first). The phase starts
# a private server of its own on a free loopback port and stops it; without
# these binaries its pg rows say "not run", so a failed install is not an
# error here.
ensure_packages postgresql-15 ||
  echo "warning: could not install postgresql-15; contended_handover runs without its pg advisory lock floor" >&2
# The cli_handoff and election phases' etcd rows: etcd and etcdctl 3.4
# (Debian's etcd-server, etcd-client). The phases start a 3-member cluster of
# their own on free loopback ports and stop it. The packages are unpacked into
# a directory of the bench's own (ETCD_BIN, put on PATH below), never
# installed: installing etcd-server on a machine run by systemd would also
# start a system etcd on 127.0.0.1:2379 that nobody here stops. Without the
# binaries their etcd rows say "not run".
ETCD_BIN=""
if ! command -v etcd >/dev/null 2>&1 || ! command -v etcdctl >/dev/null 2>&1; then
  ETCD_UNPACK="$(mktemp -d "${TMPDIR:-/tmp}/redlock-bench-etcd.XXXXXX")"
  if (cd "$ETCD_UNPACK" && _redlock_as_root apt-get update >/dev/null &&
    apt-get download etcd-server etcd-client >/dev/null 2>&1 &&
    for deb in ./*.deb; do dpkg-deb -x "$deb" root; done) &&
    [[ -x "$ETCD_UNPACK/root/usr/bin/etcd" && -x "$ETCD_UNPACK/root/usr/bin/etcdctl" ]]; then
    ETCD_BIN="$ETCD_UNPACK/root/usr/bin"
  else
    echo "warning: could not unpack etcd-server/etcd-client; cli_handoff and election run without their etcd rows" >&2
  fi
fi
if [[ -n "$ETCD_BIN" ]]; then export PATH="$ETCD_BIN:$PATH"; fi

# The commit the binaries are built from, and whether src/ or include/
# differ from it, read as the build starts: others may commit or edit while
# the benchmarks run.
BUILT_COMMIT="$(git -C "$REDLOCK_ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)"
BUILT_DIRTY=""
git -C "$REDLOCK_ROOT" diff --quiet HEAD -- src include 2>/dev/null ||
  BUILT_DIRTY=", with local changes in src/ or include/"

BUILD_DIR="${REDLOCK_BENCH_BUILD_DIR:-build}"
[[ "$BUILD_DIR" == /* ]] || BUILD_DIR="$REDLOCK_ROOT/$BUILD_DIR"
BUILD_DIR="${BUILD_DIR%/}"
if [[ "$BUILD_DIR" == "$REDLOCK_ROOT/build" ]]; then
  # build_project configures build/ only when it has no CMakeCache.txt; a
  # configure that stopped half-way leaves one without a build file.
  if [[ -f build/CMakeCache.txt && ! -f build/build.ninja && ! -f build/Makefile ]]; then
    cmake -S "$REDLOCK_ROOT" -B "$REDLOCK_ROOT/build" >/dev/null
  fi
  build_project --target micro_bench --target redlock-e2e-bench
else
  # Configured as build_project configures build/ (Ninja, RelWithDebInfo).
  build_log="$(mktemp "${TMPDIR:-/tmp}/redlock-bench-build.XXXXXX")"
  if ! { { [[ -f "$BUILD_DIR/build.ninja" || -f "$BUILD_DIR/Makefile" ]] ||
    cmake -S "$REDLOCK_ROOT" -B "$BUILD_DIR" -G Ninja \
      -DCMAKE_BUILD_TYPE=RelWithDebInfo; } &&
    cmake --build "$BUILD_DIR" -j"$(nproc 2>/dev/null || echo 2)" \
      --target micro_bench --target redlock-e2e-bench; } >"$build_log" 2>&1; then
    cat "$build_log" >&2
    rm -f "$build_log"
    echo "error: build in $BUILD_DIR failed" >&2
    exit 1
  fi
  rm -f "$build_log"
  echo "Built micro_bench redlock-e2e-bench in $BUILD_DIR." >&2
fi
BIN="$BUILD_DIR/bench"
BIN_SHOWN="${BIN#"$REDLOCK_ROOT"/}"

BASELINE_DIR="${REDLOCK_BENCH_BASELINE:-}"
BASELINE_COMMIT=""
if [[ -n "$BASELINE_DIR" ]]; then
  [[ "$BASELINE_DIR" == /* ]] || BASELINE_DIR="$REDLOCK_ROOT/$BASELINE_DIR"
  BASELINE_DIR="${BASELINE_DIR%/}"
  if [[ ! -x "$BASELINE_DIR/bench/redlock-e2e-bench" ]]; then
    echo "error: no $BASELINE_DIR/bench/redlock-e2e-bench (REDLOCK_BENCH_BASELINE)" >&2
    exit 1
  fi
  # The commit of the tree the baseline directory is in (its binary is
  # assumed built from it).
  BASELINE_COMMIT="$(git -C "$BASELINE_DIR" rev-parse --short HEAD 2>/dev/null || echo unknown)"
fi

WORK="$(mktemp -d "${TMPDIR:-/tmp}/redlock-bench.XXXXXX")"
cleanup() {
  stop_masters
  rm -rf "$WORK"
  if [[ -n "${ETCD_UNPACK:-}" ]]; then rm -rf "$ETCD_UNPACK"; fi
}
trap cleanup EXIT
trap 'cleanup; exit 130' INT
trap 'cleanup; exit 143' TERM

if ((QUICK)); then
  OUT="$WORK/out"
else
  OUT="$REDLOCK_ROOT/docs/benchmarks"
fi
mkdir -p "$OUT"

declare -A WALL
step() { # step NAME COMMAND...: runs it, records its wall time in WALL[NAME]
  local name=$1 started=$SECONDS
  shift
  echo "== $name" >&2
  "$@"
  WALL[$name]=$((SECONDS - started))
}

# --- Micro benchmarks ----------------------------------------------------------
MICRO_CMD=("$BIN/micro_bench" --benchmark_min_time=0.05)
step micro "${MICRO_CMD[@]}" >"$WORK/micro.txt"

# --- End-to-end harness ----------------------------------------------------------
E2E_CMD=("$BIN/redlock-e2e-bench" --out_json="$OUT/results.json"
  --out_cdf="$OUT/latency")
((QUICK)) && E2E_CMD+=(--quick)
# The cli_handoff phase runs the baseline's redlock tool beside this one, in
# the same rounds, when the baseline build has one.
if [[ -n "$BASELINE_DIR" && -x "$BASELINE_DIR/tools/redlock" ]]; then
  E2E_CMD+=(--cli_handoff_baseline_binary="$BASELINE_DIR/tools/redlock")
fi
# So does the contention_peer phase with the baseline's contender process.
if [[ -n "$BASELINE_DIR" &&
  -x "$BASELINE_DIR/bench/redlock-e2e-handoff-contender" ]]; then
  E2E_CMD+=(--peer_baseline_contender_binary="$BASELINE_DIR/bench/redlock-e2e-handoff-contender")
fi
if [[ -n "${REDLOCK_MASTERS:-}" ]]; then
  E2E_CMD+=(--masters="$REDLOCK_MASTERS")
fi
# node-redlock beside ours (the contention_peer phase, one process per
# contender: contender.js; the contended_handover phase, async workers in
# one process: threads.js; both require common.js): its npm packages, pinned
# in bench/peers/node-redlock/package.json, installed into $WORK when node
# and npm exist; without them both phases report node-redlock "not run".
NODE_PEER_DIR="$WORK/node-redlock"
if command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1; then
  mkdir -p "$NODE_PEER_DIR"
  cp "$REDLOCK_ROOT/bench/peers/node-redlock/package.json" \
    "$REDLOCK_ROOT/bench/peers/node-redlock/contender.js" \
    "$REDLOCK_ROOT/bench/peers/node-redlock/threads.js" \
    "$REDLOCK_ROOT/bench/peers/node-redlock/common.js" "$NODE_PEER_DIR/"
  if (cd "$NODE_PEER_DIR" && npm install --no-audit --no-fund >"$WORK/npm.log" 2>&1); then
    E2E_CMD+=(--node_redlock_dir="$NODE_PEER_DIR")
  else
    echo "warning: npm install of node-redlock failed (see below); contention_peer and contended_handover run without it" >&2
    tail -5 "$WORK/npm.log" >&2
  fi
else
  echo "note: no node/npm: contention_peer and contended_handover run without node-redlock" >&2
fi
# The election phase's etcd row at our lease TTL (etcdctl 3.4's elect has
# no TTL flag): etcd's election recipe in the etcd3 Node client,
# bench/peers/etcd3/election.js with the package pinned beside it, installed
# into $WORK when node and npm exist; without it that row is "not run".
ETCD3_PEER_DIR="$WORK/etcd3"
if command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1; then
  mkdir -p "$ETCD3_PEER_DIR"
  cp "$REDLOCK_ROOT/bench/peers/etcd3/package.json" \
    "$REDLOCK_ROOT/bench/peers/etcd3/election.js" "$ETCD3_PEER_DIR/"
  if (cd "$ETCD3_PEER_DIR" && npm install --no-audit --no-fund >"$WORK/npm-etcd3.log" 2>&1); then
    E2E_CMD+=(--election_etcd3_dir="$ETCD3_PEER_DIR")
  else
    echo "warning: npm install of etcd3 failed (see below); election runs without its etcd3 row" >&2
    tail -5 "$WORK/npm-etcd3.log" >&2
  fi
fi
step e2e "${E2E_CMD[@]}" >"$WORK/e2e.md"

# --- Instructions and system calls per cycle ------------------------------------
# A fixed number of cycles of one configuration, twice (few and many cycles):
# the difference divided by the extra cycles is the cost of one cycle,
# without start-up, connecting and warm-up. valgrind does not follow the
# masters: they run natively, started here (or given).
start_masters 5
# start_masters installs its own traps; ours stop the masters too.
trap cleanup EXIT
trap 'cleanup; exit 130' INT
trap 'cleanup; exit 143' TERM
CG_FEW=100
CG_MANY=400
((QUICK)) && CG_MANY=200
CG_CONFIGS=(floor raw async blocking handover)
declare -A IR IR_BASE SYSCALLS
# callgrind_ir BIN TAG CFG: Ir per cycle of CFG with BIN (profiles
# $WORK/cg.TAG.CFG.N).
callgrind_ir() {
  local bin=$1 tag=$2 cfg=$3 n
  for n in "$CG_FEW" "$CG_MANY"; do
    valgrind --tool=callgrind --callgrind-out-file="$WORK/cg.$tag$cfg.$n" \
      "$bin/redlock-e2e-bench" --masters="$REDLOCK_MASTERS" \
      --callgrind="$cfg" --callgrind_masters=5 --callgrind_cycles="$n" \
      >"$WORK/cg.$tag$cfg.$n.log" 2>&1 || {
      echo "error: callgrind run $tag$cfg/$n failed:" >&2
      tail -n 20 "$WORK/cg.$tag$cfg.$n.log" >&2
      return 1
    }
  done
  local few many
  few=$(sed -n 's/^summary: *//p' "$WORK/cg.$tag$cfg.$CG_FEW")
  many=$(sed -n 's/^summary: *//p' "$WORK/cg.$tag$cfg.$CG_MANY")
  echo $(((many - few) / (CG_MANY - CG_FEW)))
}
callgrind_runs() {
  local cfg
  for cfg in "${CG_CONFIGS[@]}"; do
    IR[$cfg]=$(callgrind_ir "$BIN" "" "$cfg")
  done
  if [[ -n "$BASELINE_DIR" ]]; then
    for cfg in async blocking; do
      IR_BASE[$cfg]=$(callgrind_ir "$BASELINE_DIR/bench" base. "$cfg")
    done
  fi
}
step callgrind callgrind_runs

ST_FEW=200
ST_MANY=1200
((QUICK)) && ST_MANY=600
strace_runs() {
  local cfg n
  for cfg in "${CG_CONFIGS[@]}"; do
    for n in "$ST_FEW" "$ST_MANY"; do
      strace -f -c -o "$WORK/st.$cfg.$n" "$BIN/redlock-e2e-bench" \
        --masters="$REDLOCK_MASTERS" --callgrind="$cfg" \
        --callgrind_masters=5 --callgrind_cycles="$n" >/dev/null 2>&1
    done
    # "syscall=calls" per line, per-cycle difference of the two runs.
    SYSCALLS[$cfg]=$(awk -v few="$ST_FEW" -v many="$ST_MANY" '
      FNR == 1 { file++ }
      $1 ~ /^[0-9.]+$/ && $NF != "total" {
        c[$NF, file] = $4; names[$NF] = 1
      }
      END {
        total = 0
        for (n in names) {
          d = (c[n, 2] - c[n, 1]) / (many - few)
          total += d
          if (d >= 0.5) out = out sprintf("%s %.1f, ", n, d)
        }
        printf "%.1f|%s", total, substr(out, 1, length(out) - 2)
      }' "$WORK/st.$cfg.$ST_FEW" "$WORK/st.$cfg.$ST_MANY")
  done
}
step strace strace_runs
stop_masters

# Per-cycle inclusive instructions of the library's own functions (src/) and
# of the hiredis and libevent entry points they lead to, from the difference
# of the two profiles.
top_functions() {
  local cfg=$1 few many
  few="$WORK/cg.$cfg.$CG_FEW"
  many="$WORK/cg.$cfg.$CG_MANY"
  awk -v cycles=$((CG_MANY - CG_FEW)) '
    FNR == 1 { file++ }
    /^ *[0-9,]+ +\(/ && $0 !~ /PROGRAM TOTALS/ {
      ir = $1; gsub(",", "", ir)
      fn = $0; sub(/^ *[0-9,]+ +\( *[0-9.]+%\) +/, "", fn)
      v[fn, file] = ir; names[fn] = 1
    }
    END {
      for (fn in names) {
        d = (v[fn, 2] - v[fn, 1]) / cycles
        lib = fn ~ /(redisAsyncCommandArgv|redisFormatSdsCommandArgv|redisProcessCallbacks|redisAsyncHandleWrite|event_base_loop) \[/
        if ((fn ~ /(^|\/)src\// || lib) && d >= 500) {
          name = fn
          sub(/ \[.*$/, "", name)
          gsub(/std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >/, "std::string", name)
          gsub(/absl::debian3::/, "absl::", name)
          gsub(/redlock::internal::/, "", name)
          sub(/^.*\/src\//, "src/", name)
          sub(/^\?\?\?:/, "", name)
          if (lib) name = name " (" (fn ~ /libevent/ ? "libevent" : "hiredis") ")"
          if (length(name) > 110) name = substr(name, 1, 107) "..."
          printf "%d\t%s\n", d, name
        }
      }
    }' <(callgrind_annotate --inclusive=yes --auto=no --threshold=100 "$few") \
    <(callgrind_annotate --inclusive=yes --auto=no --threshold=100 "$many") |
    sort -rn | awk -F'\t' '!seen[$2]++ && ++shown <= 30'
  # (Not `| head -n 30`: once the list passes a pipe buffer, awk's last write
  # can meet a head that already exited, and SIGPIPE ends the script.)
}
top_functions async >"$WORK/top_async.tsv"

# --- Plot ----------------------------------------------------------------------
plot() {
  gnuplot <<EOF
set terminal svg size 1000,430 dynamic font "sans,11" background "white" noenhanced
set output "$OUT/latency.svg"
set multiplot layout 1,2
set logscale xy
set xtics ("p0" 1, "p50" 2, "p90" 10, "p99" 100, "p99.9" 1000)
set xlabel "percentile"
set ylabel "latency (µs)"
set grid xtics ytics mytics
set key top left font ",9"
set style data linespoints
set pointsize 0.4
set linetype 1 lc rgb "#000000" lw 2
set linetype 2 lc rgb "#1b9e77" lw 1.5
set linetype 3 lc rgb "#7570b3" lw 1.5
set linetype 4 lc rgb "#e7298a" lw 1.5
set linetype 5 lc rgb "#d95f02" lw 1.5
set linetype 6 lc rgb "#66a61e" lw 1.5
set linetype 7 lc rgb "#a6761d" lw 1.5
set linetype 8 lc rgb "#666666" lw 1.5
set key opaque box
stats "$OUT/latency-cycle.tsv" using 1 nooutput
n = STATS_blocks
set title "Lock cycle (acquire + release), sequential"
plot for [i=0:n-1] "$OUT/latency-cycle.tsv" index i using (1/(1-\$2)):1 title columnheader(1)
stats "$OUT/latency-fault.tsv" using 1 nooutput
m = STATS_blocks
set title "N=5, one master +20ms each way (async, release awaited)"
plot for [i=0:m-1] "$OUT/latency-fault.tsv" index i using (1/(1-\$2)):1 title columnheader(1)
unset multiplot
EOF
}
step plot plot

# --- Report ----------------------------------------------------------------------
ir_row() { # ir_row CFG LABEL MASTERS
  local cfg=$1 label=$2 n=$3 floor=${IR[floor]}
  local ratio_floor ratio_n
  ratio_floor=$(awk -v a="${IR[$cfg]}" -v b="$floor" 'BEGIN { printf "%.2f×", a / b }')
  ratio_n=$(awk -v a="${IR[$cfg]}" -v b="$floor" -v n="$n" 'BEGIN { printf "%.2f×", a / (n * b) }')
  local sc=${SYSCALLS[$cfg]}
  echo "| $label | ${IR[$cfg]} | $ratio_floor | $ratio_n | ${sc%%|*} | ${sc#*|} |"
}

# With REDLOCK_BENCH_BASELINE: the same Ir per cycle from the baseline
# binary, same masters, same method.
baseline_section() {
  [[ -n "$BASELINE_DIR" ]] || return 0
  local cfg
  cat <<EOF

Against a baseline build (\`REDLOCK_BENCH_BASELINE\`, commit
\`${BASELINE_COMMIT}\`): the same runs with its \`redlock-e2e-bench\`, on
the same masters. A cycle takes several times as long under valgrind as
natively, so work a client does per second of wall time rather than per
cycle weighs more per cycle here than in a native run: a membership client
reads every master's marker again (one GET; parsed and judged again only if
it changed) once its last read is a second old, and these figures include
whichever of those re-reads fell in the extra cycles of the longer run.
Callgrind's count of one build also moves by about 1% between runs (paths
that depend on when replies arrive), so a ratio within ±1% is no
difference.

| configuration | Ir per cycle, this build | Ir per cycle, \`${BASELINE_COMMIT}\` | this ÷ baseline |
|---|--:|--:|--:|
EOF
  for cfg in async blocking; do
    awk -v cfg="$cfg" -v a="${IR[$cfg]}" -v b="${IR_BASE[$cfg]}" \
      'BEGIN { printf "| %s N=5 | %d | %d | %.4f× |\n", cfg, a, b, a / b }'
  done
  echo
}

report() {
  local e2e_cmd_shown="${E2E_CMD[*]}"
  e2e_cmd_shown="${e2e_cmd_shown//$REDLOCK_ROOT\//}"
  e2e_cmd_shown="${e2e_cmd_shown//$WORK\//\$TMP\/}"
  cat <<EOF
# Benchmarks

Generated by \`./scripts/bench.sh\` on $(date -u '+%Y-%m-%d %H:%M UTC') (commit
\`${BUILT_COMMIT}\`${BUILT_DIRTY}).
Every table below is rewritten by that script. All figures:
[\`benchmarks/results.json\`](benchmarks/results.json). What they show, where
the targets stand and what bounds them, written by hand from the run it
names: [benchmarks/analysis.md](benchmarks/analysis.md).

## How to read these numbers

This machine is shared and noisy: loopback round trips flip between about
30 µs and 150 µs for seconds at a time, and medians move 1.5–5× between
runs. So no figure here is compared with another run. Each configuration
runs in blocks, and right before each of its blocks the **floor** runs a
block of the same size: one blocking hiredis connection to one master doing
\`SET key token NX PX ttl\` and the \`EVALSHA\` compare-and-delete, a fresh
getrandom() token each time — one lock cycle with no quorum. The headline of
a configuration is its ratio to its own floor blocks; the per-round spread of
that ratio shows how much the noise moved it. The client, every master and
redis-benchmark share the machine's cores.

Commands and wall times of this run:

| step | command | wall time |
|---|---|--:|
| micro benchmarks | \`${BIN_SHOWN}/micro_bench --benchmark_min_time=0.05\` | ${WALL[micro]} s |
| end-to-end harness | \`${e2e_cmd_shown}\` | ${WALL[e2e]} s |
| instructions per cycle | \`valgrind --tool=callgrind ${BIN_SHOWN}/redlock-e2e-bench --masters=… --callgrind=CONFIG --callgrind_masters=5 --callgrind_cycles=N\` for N = ${CG_FEW} and ${CG_MANY} | ${WALL[callgrind]} s |
| system calls per cycle | \`strace -f -c ${BIN_SHOWN}/redlock-e2e-bench --masters=… --callgrind=CONFIG --callgrind_masters=5 --callgrind_cycles=N\` for N = ${ST_FEW} and ${ST_MANY} | ${WALL[strace]} s |
| plot | gnuplot | ${WALL[plot]} s |

## End to end

![Latency distributions](benchmarks/latency.svg)

$(cat "$WORK/e2e.md")

## Instructions and system calls per cycle (N=5)

Deterministic where wall-clock times are not: user-space instructions
(callgrind \`Ir\`) and system calls of one acquire + release cycle, each the
difference between a run of ${CG_MANY} (strace: ${ST_MANY}) and a run of
${CG_FEW} (${ST_FEW}) cycles divided by the extra cycles, against 5 masters
started for it. Kernel work (system calls, wake-ups) is not in \`Ir\`; the
system call counts show it.

| configuration | Ir per cycle | ÷ floor | ÷ (N × floor) | system calls per cycle | of which |
|---|--:|--:|--:|--:|---|
$(ir_row floor "floor (1 master)" 1)
$(ir_row raw "raw fan-out N=5" 5)
$(ir_row async "async N=5" 5)
$(ir_row blocking "blocking N=5" 5)
$(ir_row handover "blocking N=5, calls handed to the loop thread (before)" 5)
$(baseline_section)

The library's own functions, async N=5, inclusive instructions per cycle
(a function's callees included, so the rows overlap):

| Ir per cycle | function |
|--:|---|
$(awk -F'\t' '{ printf "| %d | `%s` |\n", $1, $2 }' "$WORK/top_async.tsv")

## Micro benchmarks

\`micro_bench --benchmark_min_time=0.05\`: the pure pieces on the data path,
CPU time per operation on this machine (compare them with each other).

\`\`\`
$(grep -v '^\*\*\*WARNING' "$WORK/micro.txt")
\`\`\`
EOF
}

if ((QUICK)); then
  report
else
  report >"$REDLOCK_ROOT/docs/benchmarks.md"
  echo "Wrote docs/benchmarks.md, docs/benchmarks/results.json, docs/benchmarks/latency.svg" >&2
fi
