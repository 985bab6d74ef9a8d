#!/usr/bin/env bash
# A throwaway PostgreSQL for a Tributary cluster by hand (README, "A cluster
# on PostgreSQL"): initdb in DIR (trust auth, listening on 127.0.0.1 only),
# started on PORT with the settings Tributary's backend wants
# (deadlock_timeout 100 ms: MySQL reports deadlocks at once), and a database
# named `tributary`. Uses Debian's `postgresql` package (installed with
# apt-get when missing, as root). As root, the server runs as `postgres`.
#
#   bash scripts/pg-cluster.sh start DIR PORT   # prints the storage URL
#   bash scripts/pg-cluster.sh stop DIR
set -euo pipefail
cmd="${1:-}"; dir="${2:-}"; port="${3:-5433}"
[ -n "$cmd" ] && [ -n "$dir" ] || { echo "usage: $0 start DIR [PORT] | stop DIR" >&2; exit 2; }
bin="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)"
if [ -z "$bin" ]; then
  [ "$(id -u)" -eq 0 ] || { echo "install PostgreSQL first: apt-get install postgresql" >&2; exit 1; }
  apt-get update -qq
  # No system-wide cluster: postgresql-common first, its createcluster.conf
  # edited, then the server.
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql-common >/dev/null
  sed -ri 's/^#?(create_main_cluster) .*$/\1 = false/' /etc/postgresql-common/createcluster.conf
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
  bin="$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)"
fi
as=()
if [ "$(id -u)" -eq 0 ]; then as=(runuser -u postgres --); fi
dir="$(realpath -m "$dir")"
case "$cmd" in
  start)
    if [ ! -f "$dir/PG_VERSION" ]; then
      mkdir -p "$dir"
      [ "$(id -u)" -eq 0 ] && chown postgres "$dir"
      "${as[@]}" "$bin/initdb" -D "$dir" -A trust -U postgres -E UTF8 >/dev/null
    fi
    "${as[@]}" "$bin/pg_ctl" -D "$dir" status >/dev/null 2>&1 || \
    "${as[@]}" "$bin/pg_ctl" -D "$dir" -w -l "$dir/log" \
      -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c deadlock_timeout=100ms -c max_connections=300" \
      start >/dev/null
    "${as[@]}" "$bin/psql" -h 127.0.0.1 -p "$port" -U postgres -d postgres -qAt \
      -c "SELECT 1 FROM pg_database WHERE datname = 'tributary'" | grep -q 1 \
      || "${as[@]}" "$bin/psql" -h 127.0.0.1 -p "$port" -U postgres -d postgres -q \
           -c "CREATE DATABASE tributary"
    echo "postgres://postgres@127.0.0.1:$port/tributary"
    ;;
  stop)
    "${as[@]}" "$bin/pg_ctl" -D "$dir" -w -m fast stop >/dev/null
    ;;
  *) echo "usage: $0 start DIR [PORT] | stop DIR" >&2; exit 2 ;;
esac
