#!/usr/bin/env bash
# The Debian packages, installed and used on a clean Debian 12 root:
#   1. build   a fresh Release build with the packaging settings
#              (cmake/packaging.cmake: shared library, prefix /usr) in
#              build-package/, and `cpack -G DEB`;
#   2. root    a clean bookworm root made here with
#              `debootstrap --variant=minbase` from the Debian mirror (never a
#              pulled image). The fresh root is kept as a tarball in
#              $REDLOCK_PACKAGE_CACHE (default /var/tmp/redlock-package-test)
#              and unpacked anew on every run, so every run starts pristine;
#   3. tool    inside the root (a chroot with /proc, /dev and /dev/pts):
#              `apt-get install ./libredlock<SOVERSION>_*.deb ./redlock_*.deb`
#              (pulls hiredis, libevent, OpenSSL, Abseil from the mirror),
#              `redlock --version`, `man -w redlock`, and the installed tool
#              takes and releases locks on 3 redis-servers this script starts
#              outside the root on loopback (`run`, `acquire`/`release`,
#              checked with redis-cli);
#   4. dev     `apt-get install ./libredlock-dev_*.deb` must pull libabsl-dev;
#              tests/install/consumer built with find_package(redlock) and
#              with pkg-config; the prometheus package and its consumer;
#              README.md's and docs/usage.md's C++ blocks compiled and
#              linked with -Wall -Wextra -Werror (tests/tools/readme_examples.sh).
# Prints each phase's time. Needs root (chroot, mount). Unmounts what it
# mounted, stops the servers it started and removes its temporary directory
# on every exit, also on failure.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=lib.sh
source scripts/lib.sh

if [[ "$(id -u)" -ne 0 ]]; then
  echo "error: package-test.sh needs root (debootstrap, chroot, mount)" >&2
  exit 1
fi
ensure_deps
ensure_packages debootstrap dpkg-dev

src=$REDLOCK_ROOT
build=${REDLOCK_PACKAGE_BUILD_DIR:-$src/build-package}
cache=${REDLOCK_PACKAGE_CACHE:-/var/tmp/redlock-package-test}
mirror=http://deb.debian.org/debian
tarball=$cache/bookworm-minbase.tar

work=$(mktemp -d /var/tmp/redlock-package-test.XXXXXX)
root=$work/root
mounted=() # Mount points we mounted, in order.
phase_started=$SECONDS
phase_name=""

# True while anything is mounted at or below the root.
anything_mounted_in_root() {
  awk -v root="$root" '$2 == root || index($2, root "/") == 1 { found = 1 }
    END { exit !found }' /proc/self/mounts
}

cleanup() {
  local rc=$? i
  set +e
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
    umount "${mounted[$i]}" || umount -l "${mounted[$i]}"
  done
  mounted=()
  stop_masters
  if anything_mounted_in_root; then
    # Never rm -rf across a bind mount of the host's /dev.
    echo "error: still mounted under $root; leaving $work" >&2
  else
    rm -rf --one-file-system "$work"
  fi
  if ((rc != 0)); then
    echo "package-test: FAIL${phase_name:+ (in phase $phase_name)}" >&2
  fi
  exit "$rc"
}

phase() {
  if [[ -n "$phase_name" ]]; then
    echo "== phase $phase_name: $((SECONDS - phase_started))s"
  fi
  phase_name=$1
  phase_started=$SECONDS
  [[ -n "$phase_name" ]] && echo "== phase $phase_name"
  return 0
}

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

in_root() {
  chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
    HOME=/root LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"
}

trap cleanup EXIT
# start_masters sets its own traps, which ours replace (cleanup calls
# stop_masters).
start_masters 3
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
started=$SECONDS

# --- 1. build ---------------------------------------------------------------
phase build
log=$work/build.log
if ! {
  cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DBUILD_SHARED_LIBS=ON -DCMAKE_INSTALL_PREFIX=/usr \
    -DREDLOCK_BUILD_TESTS=OFF -DREDLOCK_BUILD_BENCHMARKS=OFF &&
    cmake --build "$build" -j"$(nproc)" &&
    rm -f "$build"/*.deb &&
    (cd "$build" && cpack -G DEB)
} >"$log" 2>&1; then
  cat "$log" >&2
  fail "build or cpack failed"
fi
grep -i "warning" "$log" | grep -iv "^ *-- " >&2 || true
project_version=$(sed -n 's/^#define REDLOCK_VERSION_STRING "\(.*\)"$/\1/p' \
  "$src/include/redlock/version.h")
soversion=$(sed -n 's/^set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME "libredlock\(.*\)")$/\1/p' \
  "$build/CPackConfig.cmake")
[[ -n "$soversion" ]] || fail "no runtime package name in CPackConfig.cmake"
debs=("$build"/*.deb)
for want in "libredlock${soversion}_" libredlock-dev_ redlock_ \
  libredlock-prometheus-dev_; do
  compgen -G "$build/${want}*.deb" >/dev/null || fail "no ${want}*.deb"
done
for deb in "${debs[@]}"; do
  echo "-- $(basename "$deb"): $(dpkg-deb -f "$deb" Depends)"
done
# Each package holds what it is for.
contains() {
  dpkg-deb -c "$build/$1"*.deb | awk '{ print $6 }' | grep -qx "$2" ||
    fail "$1*.deb has no $2"
}
contains "libredlock${soversion}_" \
  "./usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH)/libredlock.so.$project_version"
contains redlock_ ./usr/bin/redlock
contains libredlock-dev_ ./usr/include/redlock/redlock.h
contains libredlock-dev_ ./usr/include/redlock/version.h
contains libredlock-prometheus-dev_ ./usr/include/redlock/prometheus.h
# The SONAME in the library is the one the package is named for.
lib=$(dpkg-deb -c "$build/libredlock${soversion}_"*.deb |
  awk '$1 ~ /^-/ { print $NF }' | grep 'libredlock\.so\.')
dpkg-deb -x "$build/libredlock${soversion}_"*.deb "$work/runtime"
soname=$(objdump -p "$work/runtime/$lib" | awk '$1 == "SONAME" { print $2 }')
[[ "$soname" == "libredlock.so.$soversion" ]] ||
  fail "SONAME $soname, package libredlock$soversion"

# --- 2. root ----------------------------------------------------------------
phase root
mkdir -p "$cache"
if [[ ! -f "$tarball" ]]; then
  echo "-- debootstrap --variant=minbase bookworm from $mirror"
  fresh=$work/fresh
  debootstrap --variant=minbase bookworm "$fresh" "$mirror" \
    >"$work/debootstrap.log" 2>&1 ||
    { tail -n 30 "$work/debootstrap.log" >&2; fail "debootstrap failed"; }
  tar -C "$fresh" --numeric-owner -cf "$tarball.tmp.$$" .
  mv "$tarball.tmp.$$" "$tarball"
  rm -rf --one-file-system "$fresh"
else
  echo "-- unpacking the pristine root $tarball"
fi
mkdir "$root"
tar -C "$root" --numeric-owner -xf "$tarball"
cp /etc/apt/apt.conf.d/99artifact-registry "$root/etc/apt/apt.conf.d/" \
  2>/dev/null || true
cp /etc/resolv.conf "$root/etc/resolv.conf"
# No service starts inside the root.
printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
chmod +x "$root/usr/sbin/policy-rc.d"

mount -t proc proc "$root/proc"
mounted+=("$root/proc")
mount --bind /dev "$root/dev"
mounted+=("$root/dev")
mount --make-private "$root/dev"
mount -t devpts -o newinstance,ptmxmode=0666 devpts "$root/dev/pts"
mounted+=("$root/dev/pts")

mkdir "$root/debs"
cp "${debs[@]}" "$root/debs/"
in_root apt-get update -qq >"$work/apt-update.log" 2>&1 ||
  { cat "$work/apt-update.log" >&2; fail "apt-get update in the root"; }

# --- 3. tool ----------------------------------------------------------------
phase tool
for cmd in redlock cmake g++ pkg-config; do
  if in_root sh -c "command -v $cmd" >/dev/null; then
    fail "the fresh root already has $cmd"
  fi
done
# man-db for `man -w`; the tool and its library from the .debs, their
# dependencies from the mirror.
in_root sh -c 'cd /debs && apt-get install -y -q --no-install-recommends \
    man-db ./libredlock'"$soversion"'_*.deb ./redlock_*.deb' \
  >"$work/apt-tool.log" 2>&1 ||
  { tail -n 40 "$work/apt-tool.log" >&2; fail "apt-get install of the tool"; }
echo "-- pulled from the mirror: $(sed -n 's/^Setting up \([^: ]*\).*/\1/p' \
  "$work/apt-tool.log" | sort | tr '\n' ' ')"

version_out=$(in_root redlock --version) || fail "redlock --version exited $?"
echo "$version_out" | sed 's/^/   /'
[[ "$(head -n1 <<<"$version_out")" == \
  "redlock $project_version (library $project_version)" ]] ||
  fail "redlock --version: first line"
grep -q '^hiredis [0-9.]* (built with)$' <<<"$version_out" ||
  fail "redlock --version: no hiredis line"
grep -q '^libevent [0-9]' <<<"$version_out" ||
  fail "redlock --version: no libevent line"
grep -q '^OpenSSL [0-9]' <<<"$version_out" ||
  fail "redlock --version: no OpenSSL line"
[[ "$(in_root redlock -V)" == "$version_out" ]] || fail "redlock -V differs"

if [[ -f "$src/docs/man/redlock.1" ]]; then
  man_path=$(in_root man -w redlock) || fail "man -w redlock: no man page"
  echo "-- man -w redlock: $man_path"
else
  # The man page is not in this tree yet; nothing to check.
  echo "-- man -w redlock: skipped (docs/man/redlock.1 not in the tree)"
fi

# A lock taken and released on the real masters by the installed tool.
in_root redlock --quiet --masters "$REDLOCK_MASTERS" run --ttl 5s package-test-run \
  -- true || fail "redlock run exited $?"
acquired=$(in_root redlock --quiet --masters "$REDLOCK_MASTERS" acquire --ttl 30s \
  package-test) || fail "redlock acquire exited $?"
key=$(sed -n 's/^key=//p' <<<"$acquired")
token=$(sed -n 's/^token=//p' <<<"$acquired")
[[ -n "$key" && -n "$token" ]] || fail "redlock acquire printed: $acquired"
holders() {
  local port n=0
  for port in "${MASTER_PORTS[@]}"; do
    [[ "$(redis-cli -h 127.0.0.1 -p "$port" get "$key")" == "$1" ]] &&
      n=$((n + 1))
  done
  echo "$n"
}
held=$(holders "$token")
((held >= 2)) || fail "after acquire, $held of 3 masters hold the token"
in_root redlock --quiet --masters "$REDLOCK_MASTERS" release package-test "$token" \
  >/dev/null || fail "redlock release exited $?"
left=$(holders "$token")
((left == 0)) || fail "after release, $left masters still hold the token"
echo "-- run, acquire ($held of 3 held $key), release (0 left): ok"

# --- 4. dev -----------------------------------------------------------------
phase dev
in_root dpkg -s libabsl-dev >/dev/null 2>&1 &&
  fail "libabsl-dev is installed before libredlock-dev"
in_root sh -c 'cd /debs && apt-get install -y -q --no-install-recommends \
    build-essential cmake pkg-config ./libredlock-dev_*.deb' \
  >"$work/apt-dev.log" 2>&1 ||
  { tail -n 40 "$work/apt-dev.log" >&2; fail "apt-get install of the -dev"; }
in_root dpkg -s libabsl-dev >/dev/null 2>&1 ||
  fail "libredlock-dev did not pull libabsl-dev"

cp -r "$src/tests/install/consumer" "$root/consumer"
in_root sh -c 'cmake -S /consumer -B /consumer/build >/dev/null &&
  cmake --build /consumer/build >/dev/null && /consumer/build/consumer' ||
  fail "find_package(redlock) consumer"
in_root sh -c 'g++ -std=c++17 -Wall -Wextra -Werror /consumer/main.cc \
    -o /consumer/consumer_pc $(pkg-config --cflags --libs redlock) &&
  /consumer/consumer_pc' || fail "pkg-config consumer"

in_root sh -c 'cd /debs && apt-get install -y -q --no-install-recommends \
    ./libredlock-prometheus-dev_*.deb' >"$work/apt-prometheus.log" 2>&1 ||
  { tail -n 40 "$work/apt-prometheus.log" >&2;
    fail "apt-get install of libredlock-prometheus-dev"; }
cp -r "$src/tests/install/prometheus_consumer" "$root/prometheus_consumer"
in_root sh -c 'cmake -S /prometheus_consumer -B /prometheus_consumer/build \
    >/dev/null && cmake --build /prometheus_consumer/build >/dev/null &&
  /prometheus_consumer/build/prometheus_consumer' ||
  fail "find_package(redlock COMPONENTS prometheus) consumer"

"$src/tests/tools/readme_examples.sh" "$src/README.md" \
  "$src/tests/tools/readme_examples/prelude.h" "$root/readme_examples"
in_root sh -c 'cmake -S /readme_examples -B /readme_examples/build \
    >/dev/null && cmake --build /readme_examples/build' \
  >"$work/readme.log" 2>&1 ||
  { cat "$work/readme.log" >&2; fail "the C++ examples of README.md and docs/usage.md"; }
echo "-- the C++ blocks of README.md and docs/usage.md compiled with -Wall -Wextra -Werror: ok"

phase ""
echo "package-test: PASS ($((SECONDS - started))s)"
