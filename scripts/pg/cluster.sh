#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for tests, benchmarks and local multi-instance trials (never for production data:
# fsync is off). Used by .ci/run and by hand:
#
#   scripts/pg/cluster.sh start [DIR]   initdb + start (DIR default /tmp/secbox-pg); prints the URL
#   scripts/pg/cluster.sh url [DIR]     prints the URL of a running cluster
#   scripts/pg/cluster.sh stop [DIR]    stops it and deletes DIR
#
# The cluster listens on 127.0.0.1 (a free port) and on a unix socket in DIR/sock, trusts local connections, and is
# initialised with the C locale and UTF-8: text sorts and compares by bytes and lower()/ILIKE fold ASCII only, exactly
# as SQLite does, so both backends order and match names alike. initdb and postgres refuse to run as root: as root the
# cluster runs as the `postgres` user (Debian's package creates it). Binaries: PG_BIN, else the newest
# /usr/lib/postgresql/*/bin, else the PATH.
set -euo pipefail

cmd="${1:-}"
DIR="${2:-${SECBOX_PG_DIR:-/tmp/secbox-pg}}"

pg_bin() {
  if [ -n "${PG_BIN:-}" ]; then echo "$PG_BIN"; return; fi
  local d
  d="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)"
  if [ -n "$d" ]; then echo "$d"; return; fi
  dirname "$(command -v pg_ctl)"
}

as_owner() {
  if [ "$(id -u)" -eq 0 ]; then
    if command -v runuser >/dev/null 2>&1; then runuser -u postgres -- "$@"; else setpriv --reuid=postgres --regid=postgres --init-groups "$@"; fi
  else
    "$@"
  fi
}

url() {
  [ -f "$DIR/port" ] || { echo "no cluster in $DIR (run: $0 start $DIR)" >&2; exit 1; }
  echo "postgres://postgres@127.0.0.1:$(cat "$DIR/port")/postgres"
}

case "$cmd" in
  start)
    BIN="$(pg_bin)"
    if [ -f "$DIR/port" ] && as_owner "$BIN/pg_ctl" -D "$DIR/data" status >/dev/null 2>&1; then url; exit 0; fi
    rm -rf "$DIR"
    mkdir -p "$DIR/sock"
    [ "$(id -u)" -eq 0 ] && chown -R postgres: "$DIR"
    as_owner "$BIN/initdb" -D "$DIR/data" -U postgres --auth=trust --locale=C --encoding=UTF8 >"$DIR/initdb.log" 2>&1 ||
      { cat "$DIR/initdb.log" >&2; exit 1; }
    # A free port: ask the kernel for one (bun is on the PATH wherever this project runs).
    PORT="${SECBOX_PG_PORT:-$(bun -e 'const s = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } }); console.log(s.port); s.stop(true)')}"
    cat >>"$DIR/data/postgresql.conf" <<CONF
listen_addresses = '127.0.0.1'
port = $PORT
unix_socket_directories = '$DIR/sock'
max_connections = 400
shared_buffers = 64MB
fsync = off
synchronous_commit = off
full_page_writes = off
max_locks_per_transaction = 256
log_min_messages = warning
log_min_error_statement = panic
CONF
    as_owner "$BIN/pg_ctl" -D "$DIR/data" -l "$DIR/postgres.log" -w -t 60 start >/dev/null ||
      { cat "$DIR/postgres.log" >&2; exit 1; }
    echo "$PORT" >"$DIR/port"
    url
    ;;
  url)
    url
    ;;
  stop)
    BIN="$(pg_bin)"
    if [ -d "$DIR/data" ]; then as_owner "$BIN/pg_ctl" -D "$DIR/data" -m immediate -w stop >/dev/null 2>&1 || true; fi
    rm -rf "$DIR"
    ;;
  *)
    echo "usage: $0 start|url|stop [DIR]" >&2
    exit 2
    ;;
esac
