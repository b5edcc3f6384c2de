#!/usr/bin/env bash
# Mutation testing of the safety-critical lines: applies each mutant listed in
# scripts/mutants.txt (format described at its top) to a scratch copy of the
# tree, rebuilds incrementally, runs the tests named for it, and reports
# whether they caught it. Too slow for CI; run it by hand after changing
# safety-critical code or the tests that guard it.
#
#   scripts/mutants.sh [--only NAME[,NAME...]] [--list] [--jobs N]
#                      [--build-all] [--file MUTANTS] [--keep | --scratch DIR]
#                      [--rev REV]
#
#   --only      run only these mutants (comma-separated names)
#   --list      print the mutants and whether each still applies; build nothing
#   --jobs N    parallel build jobs and ctest -j (default 2)
#   --build-all rebuild every target for each mutant, not only the test
#               binaries its tests run (slower; the default is enough)
#   --file F    another mutants file (default scripts/mutants.txt)
#   --keep      keep the scratch directory (printed) instead of removing it
#   --scratch DIR  use DIR as the scratch directory and keep it: a later run
#               with the same DIR syncs the tree into it and builds only what
#               changed, instead of the full baseline build
#   --rev REV   mutate the tree of commit REV (git archive), not the working
#               tree: for when the working tree is mid-edit and does not build
#
# Per mutant the result is one of:
#   killed    a test failed (or timed out): good
#   SURVIVED  every selected test passed: the tests miss this bug
#   stale     `find` no longer occurs exactly once: the code changed, update
#             the mutant
#   invalid   the mutant does not compile: a bad mutant, fix it
# Exit status: 0 only if every mutant run was killed; 1 if any survived or was
# stale or invalid; 2 for a usage or setup error (including a baseline build
# or test failure, which leaves the mutants unjudgeable).
#
# The scratch copy is taken once, at the start (the working tree, or --rev's
# tree, without build*/ and .git), so edits made meanwhile are not seen. It is
# configured like scripts/lib.sh's build_project (Ninja, RelWithDebInfo),
# without the benchmarks, and built once in full. The mutants file is read from
# the working tree either way.
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=scripts/lib.sh
source "$SCRIPT_DIR/lib.sh"

usage() { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//'; }

MUTANTS_FILE="$SCRIPT_DIR/mutants.txt"
ONLY=""
LIST=0
JOBS=2
BUILD_ALL=0
KEEP=0
SCRATCH_ARG=""
REV=""
while (($# > 0)); do
  case "$1" in
    --only) ONLY="${2:?--only needs NAME[,NAME...]}"; shift 2 ;;
    --only=*) ONLY="${1#--only=}"; shift ;;
    --list) LIST=1; shift ;;
    --jobs | -j) JOBS="${2:?--jobs needs N}"; shift 2 ;;
    --jobs=*) JOBS="${1#--jobs=}"; shift ;;
    --build-all) BUILD_ALL=1; shift ;;
    --file) MUTANTS_FILE="${2:?--file needs a path}"; shift 2 ;;
    --file=*) MUTANTS_FILE="${1#--file=}"; shift ;;
    --keep) KEEP=1; shift ;;
    --rev) REV="${2:?--rev needs a commit}"; shift 2 ;;
    --rev=*) REV="${1#--rev=}"; shift ;;
    --scratch) SCRATCH_ARG="${2:?--scratch needs a directory}"; KEEP=1; shift 2 ;;
    --scratch=*) SCRATCH_ARG="${1#--scratch=}"; KEEP=1; shift ;;
    -h | --help) usage; exit 0 ;;
    *) echo "error: unknown argument: $1 (see --help)" >&2; exit 2 ;;
  esac
done
if ! [[ "$JOBS" =~ ^[1-9][0-9]*$ ]]; then
  echo "error: --jobs wants a positive number, not \"$JOBS\"" >&2
  exit 2
fi
[[ -f "$MUTANTS_FILE" ]] || { echo "error: no such file: $MUTANTS_FILE" >&2; exit 2; }
MUTANTS_FILE="$(cd "$(dirname "$MUTANTS_FILE")" && pwd)/$(basename "$MUTANTS_FILE")"
command -v python3 >/dev/null || { echo "error: python3 is needed" >&2; exit 2; }

# The mutants file parser, stale check and applier.
#   mutants_py check FILE ROOT ONLY   validate; one line per selected mutant:
#                                     name TAB file TAB tests TAB status TAB why
#                                     (status "ok" or "stale: <reason>")
#   mutants_py apply FILE ROOT NAME   apply NAME in ROOT (exit 3 if stale)
#   mutants_py targets                read ctest --show-only=json-v1 on stdin;
#                                     print the distinct executables' basenames
read -r -d '' MUTANTS_PY <<'PY' || true
import json, os, re, shutil, sys

KEYS = ("in", "file", "find", "replace", "tests", "why")

def die(msg):
    sys.stderr.write("error: %s\n" % msg)
    sys.exit(2)

def unescape(value, where):
    out, i = [], 0
    while i < len(value):
        c = value[i]
        if c != "\\":
            out.append(c); i += 1; continue
        nxt = value[i + 1] if i + 1 < len(value) else ""
        if nxt == "n": out.append("\n")
        elif nxt == "t": out.append("\t")
        elif nxt == "\\": out.append("\\")
        else: die("%s: unknown escape \\%s (only \\n \\t \\\\)" % (where, nxt))
        i += 2
    return "".join(out)

def parse(path):
    mutants, cur = [], None
    with open(path, encoding="utf-8") as f:
        for lineno, raw in enumerate(f, 1):
            line = raw.rstrip("\n")
            where = "%s:%d" % (path, lineno)
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            m = re.fullmatch(r"\[([A-Za-z0-9_.-]+)\]\s*", line)
            if m:
                cur = {"name": m.group(1), "line": lineno}
                mutants.append(cur)
                continue
            if line.startswith("["):
                die("%s: bad mutant name %r (letters, digits, - _ .)" % (where, line))
            m = re.fullmatch(r"([a-z]+):(.*)", line)
            if not m:
                die("%s: expected [name] or 'key: value', got %r" % (where, line))
            if cur is None:
                die("%s: %r before the first [name]" % (where, line))
            key, value = m.group(1), m.group(2).strip()
            if key not in KEYS:
                die("%s: unknown key %r (known: %s)" % (where, key, ", ".join(KEYS)))
            if key in cur:
                die("%s: %s given twice in [%s]" % (where, key, cur["name"]))
            if key in ("find", "replace"):
                value = unescape(value, where)
            cur[key] = value
    seen = set()
    for mu in mutants:
        where = "%s:%d [%s]" % (path, mu["line"], mu["name"])
        if mu["name"] in seen:
            die("%s: duplicate name" % where)
        seen.add(mu["name"])
        for key in ("find", "replace", "tests"):
            if key not in mu:
                die("%s: missing %s:" % (where, key))
        if "file" not in mu and "in" not in mu:
            die("%s: missing in: (or file:)" % where)
        for key in ("file", "in", "find", "tests"):
            if key in mu and not mu[key]:
                die("%s: empty %s:" % (where, key))
        if "\t" in mu["tests"] or "\t" in mu.get("file", ""):
            die("%s: tab in file: or tests:" % where)
        if mu["find"] == mu["replace"]:
            die("%s: replace: is the same as find:" % where)
        mu.setdefault("why", "")
    if not mutants:
        die("%s: no mutants" % path)
    return mutants

def select(mutants, only):
    if not only:
        return mutants
    names = [n for n in only.split(",") if n]
    by_name = {m["name"]: m for m in mutants}
    unknown = [n for n in names if n not in by_name]
    if unknown:
        die("unknown mutant(s): %s" % ", ".join(unknown))
    return [by_name[n] for n in dict.fromkeys(names)]

# Where a mutant's `in: NAME` is: the definition of a function (its
# signature to its closing brace) or of a constant (its name to the `;`),
# named as written there (`AcquireOp::StartAttempt`, `ScriptVote`,
# `kReleaseScript`), in the .cc and .h files under src/ and include/.
SEARCH_DIRS = ("src", "include")

def code_mask(text):
    """True per character of code (not a comment, string or char literal)."""
    mask = bytearray(b"\1") * len(text)
    i, n = 0, len(text)
    while i < n:
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i)
            j = n if j < 0 else j + 2
        elif text[i] in "\"'":
            if text[i] == '"' and i > 0 and text[i - 1] == "R":
                m = re.match(r'"([^(]*)\(', text[i:])
                end = text.find(")" + m.group(1) + '"', i)
                j = n if end < 0 else end + len(m.group(1)) + 2
            else:
                j = i + 1
                while j < n and text[j] != text[i]:
                    j += 2 if text[j] == "\\" else 1
                j += 1
        else:
            i += 1
            continue
        for k in range(i, min(j, n)):
            mask[k] = 0
        i = j
    return mask

def close_of(text, mask, i, opening, closing):
    depth = 0
    for k in range(i, len(text)):
        if not mask[k]:
            continue
        if text[k] == opening:
            depth += 1
        elif text[k] == closing:
            depth -= 1
            if depth == 0:
                return k
    return -1

def definitions(text, name):
    """(start, end) of each definition of `name` in text."""
    mask = code_mask(text)
    out = []
    pattern = r"(?<![\w:~.>])" + re.escape(name) + r"\s*(\(|\[\]\s*=|=)"
    for m in re.finditer(pattern, text):
        if not mask[m.start()]:
            continue
        if m.group(1) != "(":
            end = m.end()
            while end < len(text) and not (mask[end] and text[end] == ";"):
                end += 1
            out.append((m.start(), end + 1))
            continue
        close = close_of(text, mask, m.end() - 1, "(", ")")
        if close < 0:
            continue
        k = close + 1
        rest = text[k:k + 400]
        q = re.match(r"(\s|const\b|override\b|final\b|noexcept\b|->\s*[\w:<>, ]+)*", rest)
        k += q.end()
        # A constructor's initializers (not a ternary's ':'): the name
        # starts a declaration.
        before = text[:m.start()].rstrip()
        starts = not before or before[-1] in ";{}:" or re.search(
            r"\b(explicit|inline|constexpr)$", before)
        if k < len(text) and text[k] == ":" and text[k:k + 2] != "::" and starts:
            while k < len(text) and not (mask[k] and text[k] == "{" and
                                         re.search(r"[)}]\s*$", text[:k])):
                if mask[k] and text[k] in "({":
                    k = close_of(text, mask, k, text[k], ")" if text[k] == "(" else "}")
                k += 1
        if k >= len(text) or text[k] != "{":
            continue
        end = close_of(text, mask, k, "{", "}")
        if end > 0:
            out.append((m.start(), end + 1))
    return out

def locate(mu, root):
    """(relative path, text, start, end) of mu's target, or a stale reason."""
    if "in" not in mu:
        path = os.path.join(root, mu["file"])
        try:
            with open(path, encoding="utf-8", newline="") as f:
                text = f.read()
        except OSError as e:
            return "stale: cannot read %s (%s)" % (mu["file"], e.strerror)
        return mu["file"], text, 0, len(text)
    found = []
    for top in SEARCH_DIRS:
        for d, _, files in os.walk(os.path.join(root, top)):
            for f in sorted(files):
                if not f.endswith((".cc", ".h")):
                    continue
                path = os.path.join(d, f)
                with open(path, encoding="utf-8", newline="") as fh:
                    text = fh.read()
                if mu["in"] not in text:
                    continue
                for a, b in definitions(text, mu["in"]):
                    if mu["find"] in text[a:b]:
                        found.append((os.path.relpath(path, root), text, a, b))
    if len(found) != 1:
        return "stale: %d definitions of %s hold find" % (len(found), mu["in"])
    return found[0]

def status(mu, root):
    where = locate(mu, root)
    if isinstance(where, str):
        return None, where
    rel, text, a, b = where
    n = text[a:b].count(mu["find"])
    if n != 1:
        return None, "stale: find occurs %d times in %s" % (
            n, mu.get("in") or rel)
    return where, "ok"

cmd = sys.argv[1]
if cmd == "check":
    _, _, path, root, only = sys.argv
    for mu in select(parse(path), only):
        where, st = status(mu, root)
        rel = where[0] if where else mu.get("file", "?")
        print("\t".join([mu["name"], rel, mu["tests"], st,
                         mu["why"].replace("\t", " ")]))
elif cmd == "apply":
    _, _, path, root, name = sys.argv
    mu = select(parse(path), name)[0]
    where, st = status(mu, root)
    if where is None:
        print(st)
        sys.exit(3)
    rel, text, a, b = where
    at = a + text[a:b].index(mu["find"])
    with open(os.path.join(root, rel), "w", encoding="utf-8",
              newline="") as f:
        f.write(text[:at] + mu["replace"] + text[at + len(mu["find"]):])
elif cmd == "targets":
    data = json.load(sys.stdin)
    names = []
    for t in data.get("tests", []):
        command = t.get("command") or []
        if command:
            names.append(os.path.basename(command[0]))
    print("\n".join(dict.fromkeys(names)))
elif cmd == "sync":
    # Makes DST a copy of ROOT without ROOT's build*/ and .git. A file whose
    # content is already the same is left alone (its mtime too); any other is
    # written afresh, with a new mtime, so that an incremental build of DST is
    # right even after a mutant was built there and restored.
    _, _, root, dst = sys.argv
    root = os.path.abspath(root)
    wanted = set()
    for d, dirs, files in os.walk(root):
        rel = os.path.relpath(d, root)
        if rel == ".":
            dirs[:] = [x for x in dirs if not (x.startswith("build") or x == ".git")]
            files = [x for x in files if not x.startswith("build")]
        os.makedirs(os.path.join(dst, rel), exist_ok=True)
        wanted.add(os.path.normpath(rel))
        for name in files + [x for x in dirs if os.path.islink(os.path.join(d, x))]:
            src, out = os.path.join(d, name), os.path.join(dst, rel, name)
            wanted.add(os.path.normpath(os.path.join(rel, name)))
            if os.path.islink(src):
                if not (os.path.islink(out) and os.readlink(out) == os.readlink(src)):
                    if os.path.lexists(out): os.remove(out)
                    os.symlink(os.readlink(src), out)
                continue
            with open(src, "rb") as f:
                data = f.read()
            if os.path.isfile(out) and not os.path.islink(out):
                with open(out, "rb") as f:
                    if f.read() == data:
                        continue
            if os.path.lexists(out) and not os.path.isfile(out):
                shutil.rmtree(out)
            with open(out, "wb") as f:
                f.write(data)
            shutil.copymode(src, out)
    for d, dirs, files in os.walk(dst, topdown=False):
        for name in files + dirs:
            path = os.path.join(d, name)
            if os.path.normpath(os.path.relpath(path, dst)) not in wanted:
                if os.path.isdir(path) and not os.path.islink(path):
                    shutil.rmtree(path)
                else:
                    os.remove(path)
else:
    die("unknown command " + cmd)
PY
mutants_py() { python3 -c "$MUTANTS_PY" "$@"; }

# ---------------------------------------------------------------------------
# --list: what would run, and whether it still applies to the working tree.
CHECK="$(mutants_py check "$MUTANTS_FILE" "$REDLOCK_ROOT" "$ONLY")" || exit 2
if ((LIST)); then
  stale=0
  while IFS=$'\t' read -r name file tests st why; do
    printf '%-30s %-24s %s\n' "$name" "$file" "$st"
    printf '%-30s tests: %s\n' "" "$tests"
    [[ -n "$why" ]] && printf '%-30s why:   %s\n' "" "$why"
    [[ "$st" == ok ]] || stale=$((stale + 1))
  done <<<"$CHECK"
  count=$(wc -l <<<"$CHECK")
  echo "$count mutants, $stale stale."
  ((stale == 0))
  exit
fi

NAMES=() FILES=() TESTS=()
while IFS=$'\t' read -r name file tests _st _why; do
  NAMES+=("$name") FILES+=("$file") TESTS+=("$tests")
done <<<"$CHECK"
N=${#NAMES[@]}

ensure_deps
for tool in ninja cmake ctest setsid; do
  command -v "$tool" >/dev/null || { echo "error: $tool is needed" >&2; exit 2; }
done

# ---------------------------------------------------------------------------
# Scratch tree, and cleanup of it and of whatever we are running.
STARTED=$SECONDS
if [[ -n "$SCRATCH_ARG" ]]; then
  mkdir -p "$SCRATCH_ARG"
  SCRATCH="$(cd "$SCRATCH_ARG" && pwd)"
  case "$SCRATCH" in
    "$REDLOCK_ROOT" | "$REDLOCK_ROOT"/*)
      echo "error: --scratch must be outside the repository" >&2
      exit 2
      ;;
  esac
else
  SCRATCH="$(mktemp -d "${TMPDIR:-/tmp}/redlock-mutants.XXXXXX")"
fi
SRC="$SCRATCH/src"
BUILD="$SCRATCH/build"
LOGS="$SCRATCH/logs"
CHILD=""
MUTATED=""  # The scratch file a mutant is applied to right now.

cleanup() {
  if [[ -n "$CHILD" ]]; then
    # Our child runs in its own session (setsid): end its whole group, which
    # holds the test binaries and the redis-servers they started.
    kill -TERM -- "-$CHILD" 2>/dev/null || true
    sleep 1
    kill -KILL -- "-$CHILD" 2>/dev/null || true
    wait "$CHILD" 2>/dev/null || true
    CHILD=""
  fi
  if [[ -n "$MUTATED" ]]; then
    cp "$SCRATCH/original" "$SRC/$MUTATED" 2>/dev/null || true
  fi
  if ((KEEP)); then
    echo "Scratch tree kept: $SCRATCH" >&2
  else
    rm -rf "$SCRATCH"
  fi
}
trap cleanup EXIT
trap 'echo; echo "interrupted" >&2; exit 130' INT
trap 'exit 143' TERM

# run LOG CMD...: runs CMD in its own session with output to LOG, so that an
# interrupt can end it and everything it started. Returns CMD's status.
run() {
  local log="$1" rc=0
  shift
  setsid "$@" </dev/null >"$log" 2>&1 &
  CHILD=$!
  wait "$CHILD" || rc=$?
  CHILD=""
  return "$rc"
}

# The first error of a compiler log, shortened to one line.
first_error() {
  { grep -m1 -E 'error:|Error ' "$1" || tail -n1 "$1"; } | cut -c1-200
}

# The tests a ctest log reports as failed (comma-separated, shortened).
failed_tests() {
  sed -n 's/^[[:space:]]*[0-9]* - \(.*\) (\(.*\))$/\1 (\2)/p' "$1" | head -n 3 |
    paste -sd, - | sed 's/,/, /g' | cut -c1-200
}

CTEST_ARGS=(--test-dir "$BUILD" -j"$JOBS" --timeout 120 --no-tests=error)

rm -rf "$LOGS"
mkdir -p "$LOGS"
echo "Copying the tree to $SRC ..."
if [[ -n "$REV" ]]; then
  echo "  (the tree of $REV: $(git -C "$REDLOCK_ROOT" log -1 --format='%h %s' "$REV" | cut -c1-70))"
  rm -rf "$SCRATCH/rev"
  mkdir -p "$SCRATCH/rev"
  git -C "$REDLOCK_ROOT" archive --format=tar "$REV" | tar -x -C "$SCRATCH/rev"
  mutants_py sync "$SCRATCH/rev" "$SRC"
  rm -rf "$SCRATCH/rev"
else
  mutants_py sync "$REDLOCK_ROOT" "$SRC"
fi

echo "Baseline: configuring and building everything (Ninja, RelWithDebInfo) ..."
echo "  (a full build takes about 6 minutes on 2 busy cores; see --scratch)"
t0=$SECONDS
if [[ ! -f "$BUILD/CMakeCache.txt" ]] &&
  ! run "$LOGS/configure.log" cmake -S "$SRC" -B "$BUILD" -G Ninja \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DREDLOCK_BUILD_BENCHMARKS=OFF; then
  tail -n 30 "$LOGS/configure.log" >&2
  echo "error: configuring the scratch tree failed" >&2
  exit 2
fi
if ! run "$LOGS/baseline-build.log" cmake --build "$BUILD" -j"$JOBS"; then
  grep -E -m 20 -B2 -A8 'error:|FAILED' "$LOGS/baseline-build.log" >&2 ||
    tail -n 40 "$LOGS/baseline-build.log" >&2
  echo "error: the unmutated tree does not build; no mutant can be judged" >&2
  exit 2
fi
BUILD_SECONDS=$((SECONDS - t0))
echo "  built in ${BUILD_SECONDS}s"

# Every mutant's regex must name some tests, and which binaries they run.
TARGETS=()
UNION_NAMES=""  # Every selected test's name, one a line.
for ((i = 0; i < N; i++)); do
  json="$(ctest --test-dir "$BUILD" -N -R "${TESTS[i]}" --show-only=json-v1)" || {
    echo "error: [${NAMES[i]}] ctest rejects tests: ${TESTS[i]}" >&2
    exit 2
  }
  exes="$(mutants_py targets <<<"$json")"
  if [[ -z "$exes" ]]; then
    echo "error: [${NAMES[i]}] tests: ${TESTS[i]} matches no test" \
      "(see ctest --test-dir build -N)" >&2
    exit 2
  fi
  count=$(python3 -c 'import json,sys; print(len(json.load(sys.stdin)["tests"]))' <<<"$json")
  # Build only those binaries if each is a target of the build (it is for
  # gtest binaries); else everything.
  needed=""
  if ((!BUILD_ALL)); then
    for exe in $exes; do
      if ninja -C "$BUILD" -t query "$exe" >/dev/null 2>&1; then
        needed+="$exe "
      else
        needed=""
        break
      fi
    done
  fi
  TARGETS[i]="$needed"
  echo "  [${NAMES[i]}] $count tests in: $(paste -sd" " - <<<"$exes")"
  UNION_NAMES+="$(python3 -c 'import json,sys
for t in json.load(sys.stdin)["tests"]: print(t["name"])' <<<"$json")"$'\n'
done
# ctest's regex engine refuses long alternations ("Too many parentheses"), so
# the baseline names its tests by number (ctest -I 0,0,0,N,M,...). The names
# go through a file: for the whole list they outgrow one argument (128 KiB).
printf '%s' "$UNION_NAMES" >"$LOGS/union-names.txt"
UNION_NUMBERS="$(ctest --test-dir "$BUILD" -N | python3 -c '
import re, sys
with open(sys.argv[1]) as f:
    wanted = set(l for l in f.read().splitlines() if l)
numbers = []
for line in sys.stdin:
    m = re.match(r"\s*Test\s+#(\d+): (\S+)", line)
    if m and m.group(2) in wanted:
        numbers.append(m.group(1))
print(",".join(numbers))' "$LOGS/union-names.txt")"

echo "Baseline: running every selected mutant's tests unmutated ..."
t0=$SECONDS
if ! run "$LOGS/baseline-tests.log" ctest "${CTEST_ARGS[@]}" \
  -I "0,0,0,$UNION_NUMBERS" \
  --output-on-failure; then
  grep -E -A30 '\*\*\*Failed|\*\*\*Timeout|Exception' "$LOGS/baseline-tests.log" |
    head -n 60 >&2 || true
  tail -n 15 "$LOGS/baseline-tests.log" >&2
  echo "error: tests fail on the unmutated tree; no mutant can be judged" >&2
  exit 2
fi
TEST_SECONDS=$((SECONDS - t0))
echo "  $(grep -m1 -E 'tests passed' "$LOGS/baseline-tests.log") in ${TEST_SECONDS}s"

# ---------------------------------------------------------------------------
# The mutants, one after the other.
KILLED=0 SURVIVED=0 BAD=0
RESULTS=()
for ((i = 0; i < N; i++)); do
  name="${NAMES[i]}" file="${FILES[i]}"
  log="$LOGS/$name"
  echo "[$((i + 1))/$N] $name: $file, tests ${TESTS[i]}"
  t0=$SECONDS
  rm -f "$SCRATCH/original"
  cp "$SRC/$file" "$SCRATCH/original" 2>/dev/null || true
  MUTATED="$file"
  if ! msg="$(mutants_py apply "$MUTANTS_FILE" "$SRC" "$name")"; then
    result="stale" detail="$msg"
    BAD=$((BAD + 1))
  else
    build=(cmake --build "$BUILD" -j"$JOBS")
    if [[ -n "${TARGETS[i]}" ]]; then
      read -r -a target_list <<<"${TARGETS[i]}"
      build+=(--target "${target_list[@]}")
    fi
    tb=$SECONDS
    if ! run "$log.build.log" "${build[@]}"; then
      result="invalid" detail="does not compile: $(first_error "$log.build.log")"
      BAD=$((BAD + 1))
    else
      tb=$((SECONDS - tb))
      tt=$SECONDS
      if run "$log.test.log" ctest "${CTEST_ARGS[@]}" -R "${TESTS[i]}" \
        --stop-on-failure; then
        result="SURVIVED"
        detail="$(grep -m1 -E 'tests passed' "$log.test.log")"
        SURVIVED=$((SURVIVED + 1))
      else
        result="killed"
        detail="by $(failed_tests "$log.test.log")"
        [[ "$detail" == "by " ]] && detail="ctest: $(tail -n1 "$log.test.log")"
        KILLED=$((KILLED + 1))
      fi
      detail+="; build ${tb}s, tests $((SECONDS - tt))s"
    fi
    # Back to the original text (with a new mtime, so it is rebuilt).
    cp "$SCRATCH/original" "$SRC/$file"
  fi
  MUTATED=""
  line="$(printf '%-30s %-8s %4ds  %s' "$name" "$result" $((SECONDS - t0)) "$detail")"
  echo "  $line"
  RESULTS+=("$line")
done

echo
echo "Mutants ($MUTANTS_FILE):"
printf '  %s\n' "${RESULTS[@]}"
echo "$KILLED killed, $SURVIVED survived, $BAD stale/invalid" \
  "(baseline: build ${BUILD_SECONDS}s, tests ${TEST_SECONDS}s;" \
  "total $((SECONDS - STARTED))s)"
((SURVIVED == 0 && BAD == 0))
