#!/usr/bin/env bash
# Validates the compose files without a Docker engine: they parse
# (`docker-compose config -q`), and they still say what README.md promises.
#
#   tests/docker_compose_check.sh path/to/docker-compose.yml
#
# Checks two combinations, both five independent redis:7.0 masters (no
# replication), AOF fsync'd on every write, each with its own volume:
#   - what `docker compose up -d` reads: docker-compose.yml with
#     docker-compose.override.yml beside it (if there is one): ports published
#     on 127.0.0.1:7001..7005 only;
#   - docker-compose.yml with docker-compose.hostnet.yml beside it (if there
#     is one), as scripts/compose-test.sh runs it: every master on the host's
#     network, no port published, listening on 127.0.0.1:700N itself.
set -euo pipefail

file=${1:?usage: docker_compose_check.sh path/to/docker-compose.yml}
dir="$(dirname "$file")"

if ! command -v docker-compose >/dev/null 2>&1; then
  echo "FAIL: docker-compose not found on PATH; install the Debian package" \
    "'docker-compose' (scripts/lib.sh ensure_deps does)." >&2
  exit 1
fi

label=""
fail() {
  echo "FAIL: $label: $*" >&2
  exit 1
}

# check_masters FILE...: what both combinations share. Sets `config`.
check_masters() {
  local files=() f
  for f in "$@"; do files+=(-f "$f"); done
  label="$*"
  docker-compose "${files[@]}" config -q || fail "docker-compose config -q rejected it"
  config="$(docker-compose "${files[@]}" config)"

  local services volumes
  services="$(docker-compose "${files[@]}" config --services | sort | tr '\n' ' ')"
  [[ "$services" == "redis-1 redis-2 redis-3 redis-4 redis-5 " ]] ||
    fail "expected services redis-1..redis-5, got: $services"

  volumes="$(docker-compose "${files[@]}" config --volumes | sort -u | wc -l)"
  ((volumes == 5)) || fail "expected 5 volumes, got $volumes"

  (($(count '^    image: redis:7\.0$') == 5)) || fail "every service must use image redis:7.0"
  (($(count '^    - [0-9]+:6379') == 0)) || fail "a port is published on every interface"
  (($(count '^    - 0\.0\.0\.0:') == 0)) || fail "a port is published on 0.0.0.0"
  (($(count '^    - --appendfsync$') == 5)) || fail "every master needs --appendfsync"
  (($(count '^    - always$') == 5)) || fail "every master needs appendfsync always"
  (($(count '^    - --appendonly$') == 5)) || fail "every master needs --appendonly yes"
  (($(count -i 'replicaof|slaveof') == 0)) || fail "masters must not replicate"
  local i
  for i in 1 2 3 4 5; do
    (($(count "^    - redis-${i}-data:/data") == 1)) ||
      fail "redis-$i must keep /data on its own volume redis-$i-data"
  done
}

count() { grep -cE -- "$1" <<<"$config" || true; }
# The lines of service NAME in `config`.
service() { awk -v s="  $1:" '$0 == s {on = 1; next} /^  [^ ]/ {on = 0} on' <<<"$config"; }

# What `docker compose up -d` reads.
default_files=("$file")
[[ -f "$dir/docker-compose.override.yml" ]] && default_files+=("$dir/docker-compose.override.yml")
check_masters "${default_files[@]}"
for port in 7001 7002 7003 7004 7005; do
  (($(count "^    - 127\.0\.0\.1:${port}:6379(/tcp)?$") == 1)) ||
    fail "port $port must be published on 127.0.0.1 exactly once"
done
(($(count '^    network_mode: host$') == 0)) || fail "no master may be on the host's network"
echo "${default_files[*]}: 5 independent redis:7.0 masters on 127.0.0.1:7001-7005, AOF always, own volumes"

# The host-network variant.
hostnet="$dir/docker-compose.hostnet.yml"
if [[ -f "$hostnet" ]]; then
  check_masters "$file" "$hostnet"
  (($(count '^    ports:') == 0)) || fail "a master on the host's network cannot publish ports"
  for i in 1 2 3 4 5; do
    block="$(service "redis-$i")"
    grep -qx '    network_mode: host' <<<"$block" || fail "redis-$i must use network_mode: host"
    tr '\n' ' ' <<<"$block" | grep -qE -- "- --bind +- 127\.0\.0\.1 " ||
      fail "redis-$i must listen on 127.0.0.1 only (--bind 127.0.0.1)"
    tr '\n' ' ' <<<"$block" | grep -qE -- "- --port +- '?700$i'? " ||
      fail "redis-$i must listen on port 700$i (--port 700$i)"
    tr '\n' ' ' <<<"$block" | grep -qE -- "- redis-cli +- -p +- '?700$i'? +- ping " ||
      fail "redis-$i's healthcheck must ask port 700$i"
  done
  echo "$file + $hostnet: the same masters on the host's network, each on 127.0.0.1:700N, no ports published"
fi

# The TLS variant (docker-compose.tls.yml, used on its own; scripts/compose-tls.sh
# makes its certificates and sets REDLOCK_COMPOSE_TLS_DIR).
tls="$dir/docker-compose.tls.yml"
if [[ -f "$tls" ]]; then
  label="$tls"
  export REDLOCK_COMPOSE_TLS_DIR=/nonexistent/compose-tls-certs
  docker-compose -f "$tls" config -q || fail "docker-compose config -q rejected it"
  config="$(docker-compose -f "$tls" config)"
  services="$(docker-compose -f "$tls" config --services | sort | tr '\n' ' ')"
  [[ "$services" == "redis-tls-1 redis-tls-2 redis-tls-3 redis-tls-4 redis-tls-5 " ]] ||
    fail "expected services redis-tls-1..redis-tls-5, got: $services"
  (($(count '^    image: redis:7\.0$') == 5)) || fail "every service must use image redis:7.0"
  (($(count '^    ports:') == 0)) || fail "a master on the host's network cannot publish ports"
  (($(count -i 'replicaof|slaveof') == 0)) || fail "masters must not replicate"
  for i in 1 2 3 4 5; do
    block="$(service "redis-tls-$i")"
    flat="$(tr '\n' ' ' <<<"$block")"
    grep -qx '    network_mode: host' <<<"$block" || fail "redis-tls-$i must use network_mode: host"
    grep -qE -- "- --bind +- 127\.0\.0\.1 " <<<"$flat" || fail "redis-tls-$i must listen on 127.0.0.1 only"
    grep -qE -- "- --port +- '?0'? " <<<"$flat" || fail "redis-tls-$i must serve no plain TCP (--port 0)"
    grep -qE -- "- --tls-port +- '?701$i'? " <<<"$flat" || fail "redis-tls-$i must serve TLS on 701$i"
    grep -qE -- "- --tls-auth-clients +- '?\"?yes\"?'? " <<<"$flat" || fail "redis-tls-$i must require client certificates"
    grep -qE -- "- --appendfsync +- always " <<<"$flat" || fail "redis-tls-$i needs appendfsync always"
    grep -qE -- "/nonexistent/compose-tls-certs:/tls:ro" <<<"$flat" || fail "redis-tls-$i must mount the certificates read-only at /tls"
    grep -qE -- "redis-tls-${i}-data:/data" <<<"$flat" || fail "redis-tls-$i must keep /data on its own volume"
    grep -qE -- "- -p +- '?701$i'? +- ping " <<<"$flat" || fail "redis-tls-$i's healthcheck must ask port 701$i"
  done
  echo "$tls: 5 independent redis:7.0 masters serving only TLS on 127.0.0.1:7011-7015, client certificates required, AOF always, own volumes"
fi
