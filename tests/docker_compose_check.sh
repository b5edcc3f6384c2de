#!/usr/bin/env bash
# Validates docker-compose.yml without a Docker engine: the file parses
# (`docker-compose config -q`), and it still says what README.md promises:
# five independent redis:7.0 masters, AOF fsync'd on every write, each on
# 127.0.0.1:7001..7005 with its own volume, no replication.
#
#   tests/docker_compose_check.sh path/to/docker-compose.yml
set -euo pipefail

file=${1:?usage: docker_compose_check.sh path/to/docker-compose.yml}

if ! command -v docker-compose >/dev/null 2>&1; then
  echo "FAIL: docker-compose not found on PATH; install the Debian package" \
    "'docker-compose' (scripts/lib.sh ensure_deps does)." >&2
  exit 1
fi

fail() {
  echo "FAIL: $file: $*" >&2
  exit 1
}

docker-compose -f "$file" config -q || fail "docker-compose config -q rejected it"
config="$(docker-compose -f "$file" config)"

services="$(docker-compose -f "$file" config --services | sort | tr '\n' ' ')"
[[ "$services" == "redis-1 redis-2 redis-3 redis-4 redis-5 " ]] ||
  fail "expected services redis-1..redis-5, got: $services"

volumes="$(docker-compose -f "$file" config --volumes | sort -u | wc -l)"
((volumes == 5)) || fail "expected 5 volumes, got $volumes"

count() { grep -cE -- "$1" <<<"$config" || true; }
(($(count '^    image: redis:7\.0$') == 5)) || fail "every service must use image redis:7.0"
for port in 7001 7002 7003 7004 7005; do
  (($(count "^    - 127\.0\.0\.1:${port}:6379(/tcp)?$") == 1)) ||
    fail "port $port must be published on 127.0.0.1 exactly once"
done
(($(count '^    - [0-9]+:6379') == 0)) || fail "a port is published on every interface"
(($(count '^    - 0\.0\.0\.0:') == 0)) || fail "a port is published on 0.0.0.0"
(($(count '^    - --appendfsync$') == 5)) || fail "every master needs --appendfsync"
(($(count '^    - always$') == 5)) || fail "every master needs appendfsync always"
(($(count '^    - --appendonly$') == 5)) || fail "every master needs --appendonly yes"
(($(count -i 'replicaof|slaveof') == 0)) || fail "masters must not replicate"
for i in 1 2 3 4 5; do
  (($(count "^    - redis-${i}-data:/data") == 1)) ||
    fail "redis-$i must keep /data on its own volume redis-$i-data"
done
echo "docker-compose.yml: 5 independent redis:7.0 masters on 127.0.0.1:7001-7005, AOF always, own volumes"
