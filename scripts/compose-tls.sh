#!/usr/bin/env bash
# The TLS variant of the docker-compose masters (docker-compose.tls.yml) in
# one command: makes throw-away certificates with `openssl` if there are none
# yet, then brings the five masters up, each serving only TLS on
# 127.0.0.1:7011..7015 and asking every client for a certificate (mutual TLS,
# redis-server's default).
#
#   ./scripts/compose-tls.sh up       # certificates (if missing) + up -d
#   ./scripts/compose-tls.sh env      # prints the REDLOCK_* variables to use
#   ./scripts/compose-tls.sh down     # down -v (the certificates stay)
#   ./scripts/compose-tls.sh certs    # only the certificates
#
# Certificates go to $REDLOCK_COMPOSE_TLS_DIR (default: .compose-tls/ at the
# repository root, ignored by git; nothing of it is committed): ca.pem (an
# EC P-256 CA made for this directory alone), server.pem/server.key
# (DNS:localhost, IP:127.0.0.1), client.pem/client.key (clientAuth). Remove
# the directory to make new ones. Keys are mode 600; the containers run
# redis-server as root and read them through a read-only bind mount.
#
# The masters are on the host's network (network_mode: host), as
# scripts/compose-test.sh runs them on machines without bridge networking;
# COMPOSE_PROJECT_NAME picks the project (default: redlock-tls). Then:
#
#   eval "$(./scripts/compose-tls.sh env)"
#   build/tools/redlock acquire --ttl 10s job
#
# or with the flags, as redis-cli spells them:
#
#   build/tools/redlock --masters rediss://127.0.0.1:7011,... \
#     --cacert .compose-tls/ca.pem --cert .compose-tls/client.pem \
#     --key .compose-tls/client.key acquire --ttl 10s job
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TLS_DIR="${REDLOCK_COMPOSE_TLS_DIR:-$ROOT/.compose-tls}"
PROJECT="${COMPOSE_PROJECT_NAME:-redlock-tls}"
MASTERS=rediss://127.0.0.1:7011,rediss://127.0.0.1:7012,rediss://127.0.0.1:7013,rediss://127.0.0.1:7014,rediss://127.0.0.1:7015

usage() {
  sed -n '2,31p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
}

# make_certs: the CA, the server's and a client's certificate, each signed
# by the CA, valid 30 days.
make_certs() {
  if [[ -f "$TLS_DIR/ca.pem" && -f "$TLS_DIR/server.pem" && -f "$TLS_DIR/server.key" &&
    -f "$TLS_DIR/client.pem" && -f "$TLS_DIR/client.key" ]]; then
    echo "certificates: reusing $TLS_DIR" >&2
    return 0
  fi
  command -v openssl >/dev/null || {
    echo "error: openssl not found (Debian: apt-get install openssl)" >&2
    return 1
  }
  mkdir -p "$TLS_DIR"
  chmod 700 "$TLS_DIR"
  local work
  work="$(mktemp -d "${TMPDIR:-/tmp}/redlock-compose-tls.XXXXXX")"
  # shellcheck disable=SC2064
  trap "rm -rf '$work'" RETURN
  (
    umask 077
    cd "$work"
    printf '[req]\ndistinguished_name = dn\n[dn]\n' >req.cnf
    printf 'basicConstraints = critical, CA:FALSE\nkeyUsage = critical, digitalSignature\nextendedKeyUsage = serverAuth\nsubjectAltName = DNS:localhost, IP:127.0.0.1\n' >server.ext
    printf 'basicConstraints = critical, CA:FALSE\nkeyUsage = critical, digitalSignature\nextendedKeyUsage = clientAuth\n' >client.ext
    openssl ecparam -name prime256v1 -genkey -noout -out ca.key
    openssl req -config req.cnf -x509 -new -key ca.key -sha256 -days 30 \
      -subj "/CN=redlock compose CA" \
      -addext "basicConstraints = critical, CA:TRUE" \
      -addext "keyUsage = critical, keyCertSign, cRLSign" -out ca.pem
    local who
    for who in server client; do
      openssl ecparam -name prime256v1 -genkey -noout -out "$who.key"
      openssl req -config req.cnf -new -key "$who.key" \
        -subj "/CN=redlock compose $who" -out "$who.csr"
      openssl x509 -req -in "$who.csr" -CA ca.pem -CAkey ca.key \
        -CAcreateserial -sha256 -days 30 -extfile "$who.ext" -out "$who.pem"
    done
    openssl verify -CAfile ca.pem server.pem client.pem >/dev/null
  ) >"$work/openssl.log" 2>&1 || {
    cat "$work/openssl.log" >&2
    echo "error: making the certificates failed" >&2
    return 1
  }
  # The CA's key is not kept: nothing else is ever signed with it.
  local f
  for f in ca.pem server.pem client.pem; do install -m 644 "$work/$f" "$TLS_DIR/$f"; done
  for f in server.key client.key; do install -m 600 "$work/$f" "$TLS_DIR/$f"; done
  echo "certificates: made in $TLS_DIR (CA, server for localhost/127.0.0.1, client)" >&2
}

compose() {
  REDLOCK_COMPOSE_TLS_DIR="$TLS_DIR" timeout 180 docker-compose -p "$PROJECT" \
    -f "$ROOT/docker-compose.tls.yml" "$@"
}

print_env() {
  cat <<EOF
export REDLOCK_MASTERS=$MASTERS
export REDLOCK_TLS_CACERT=$TLS_DIR/ca.pem
export REDLOCK_TLS_CERT=$TLS_DIR/client.pem
export REDLOCK_TLS_KEY=$TLS_DIR/client.key
EOF
}

case "${1:-}" in
  up)
    shift
    make_certs
    compose up -d "$@"
    echo "five TLS masters on 127.0.0.1:7011-7015 (project $PROJECT); use them with:" >&2
    print_env >&2
    ;;
  down)
    shift
    compose down -v "$@"
    ;;
  certs) make_certs ;;
  env) print_env ;;
  -h | --help) usage ;;
  *)
    usage >&2
    exit 2
    ;;
esac
