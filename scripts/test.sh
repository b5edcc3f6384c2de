#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test. The tests start their
# own redis-server processes on free loopback ports; nothing else is needed.
# Arguments go to ctest, e.g. `scripts/test.sh -L unit` or `-R redis_server`.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/lib.sh

ensure_deps
build_project
rc=0
ctest --test-dir build --output-on-failure -j2 --timeout 300 "$@" || rc=$?
exit "$rc"
