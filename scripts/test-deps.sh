#!/usr/bin/env bash
# Installs what the client tests need, idempotently; a no-op (well under a
# second) once everything is there. Called by scripts/test-all.sh.
#
#   * Debian packages: chromium + chromium-driver (the status page's
#     browser test), postgresql (the PostgreSQL backend's tests start
#     their own throwaway clusters from its binaries; the package's own
#     system cluster is not created), mariadb-client (mariadb, mysqldump),
#     mariadb-server (the MySQL oracle test starts its own server from its
#     binaries; the package's system service is not used), libmariadb-dev +
#     pkg-config + build-essential (to build mysqlclient), tmux (interactive client test),
#     python3-venv, nodejs + npm, golang + golang-github-go-sql-driver-mysql-dev
#     (tests/go) — installed with apt-get only when missing
#     and only as root; otherwise it names them and fails.
#   * A Python virtualenv at $TRIBUTARY_VENV (default $CARGO_TARGET_DIR/venv)
#     with tests/python/requirements.txt (the drivers, and the frameworks
#     Django 5.2 + SQLAlchemy 2 + Alembic), re-installed only when that file
#     changes.
#   * Node's mysql2 in tests/node/node_modules (npm ci from package-lock.json),
#     re-installed only when the lock file changes.
#
# Prints the venv's python on the last line of stdout; all else goes to stderr.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-/var/tmp/tributary-target}"
VENV="${TRIBUTARY_VENV:-$CARGO_TARGET_DIR/venv}"
PY="${PYTHON:-python3}"

log() { echo "test-deps: $*" >&2; }

# ---- Debian packages ------------------------------------------------------
missing=()
have() { command -v "$1" >/dev/null 2>&1; }
have mariadb   || missing+=(mariadb-client)
# The MySQL oracle (tests/python/test_mysql_oracle.py) starts its own
# throwaway MariaDB server from the package's binaries.
{ have mariadbd || [ -x /usr/sbin/mariadbd ]; } || missing+=(mariadb-server)
have mariadb-install-db || missing+=(mariadb-server)
have mysqldump || missing+=(mariadb-client)
have tmux      || missing+=(tmux)
compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null || missing+=(postgresql)
# The status page's browser test: headless Chromium driven by Selenium.
have chromium     || missing+=(chromium)
have chromedriver || missing+=(chromium-driver)
have pkg-config || missing+=(pkg-config)
have cc && [ -f /usr/include/stdio.h ] || missing+=(build-essential)
# Go's database/sql test (tests/go): the compiler and the driver's source.
have go        || missing+=(golang)
[ -d /usr/share/gocode/src/github.com/go-sql-driver/mysql ] || missing+=(golang-github-go-sql-driver-mysql-dev)
have node      || missing+=(nodejs)
have npm       || missing+=(npm)
have "$PY"     || missing+=(python3 python3-venv python3-dev)
# mysqlclient's build finds the client library through pkg-config.
if ! { have pkg-config && pkg-config --exists libmariadb; }; then
  missing+=(libmariadb-dev)
fi
# A venv needs the venv module and ensurepip (Debian splits them off), and
# building mysqlclient needs Python.h.
if have "$PY"; then
  "$PY" -c 'import venv, ensurepip' >/dev/null 2>&1 || missing+=(python3-venv)
  inc="$("$PY" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')"
  [ -f "$inc/Python.h" ] || missing+=(python3-dev)
fi
if [ "${#missing[@]}" -gt 0 ]; then
  # de-duplicate, keep order
  pkgs=$(printf '%s\n' "${missing[@]}" | awk '!seen[$0]++' | paste -sd' ')
  if [ "$(id -u)" -eq 0 ] && have apt-get; then
    log "apt-get install $pkgs"
    apt-get update -qq >&2
    # Tests start their own clusters: no system-wide one on port 5432 (as
    # the postgres Docker image does it: postgresql-common first, then its
    # createcluster.conf edited, then the server package).
    case " $pkgs " in *" postgresql "*)
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql-common >/dev/null
      sed -ri 's/^#?(create_main_cluster) .*$/\1 = false/' /etc/postgresql-common/createcluster.conf ;;
    esac
    # shellcheck disable=SC2086
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $pkgs >/dev/null
  else
    log "missing system packages: $pkgs"
    log "install them first (as root): apt-get install $pkgs"
    exit 1
  fi
fi

# ---- Python virtualenv -----------------------------------------------------
req=tests/python/requirements.txt
want="$( { "$PY" -c 'import sys; print(sys.version)'; cat "$req"; } | sha256sum | cut -d' ' -f1)"
stamp="$VENV/.tributary-requirements"
if [ ! -x "$VENV/bin/python" ] || ! "$VENV/bin/python" -c '' 2>/dev/null \
   || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  log "creating $VENV and installing $req"
  rm -rf "$VENV"
  mkdir -p "$(dirname "$VENV")"
  "$PY" -m venv "$VENV"
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check -r "$req" >&2
  echo "$want" > "$stamp"
fi

# ---- Node: mysql2 ----------------------------------------------------------
lock=tests/node/package-lock.json
nstamp=tests/node/node_modules/.tributary-lock
nwant="$(sha256sum "$lock" | cut -d' ' -f1)"
if [ "$(cat "$nstamp" 2>/dev/null)" != "$nwant" ]; then
  log "npm ci in tests/node"
  (cd tests/node && npm ci --no-audit --no-fund --loglevel=error >&2)
  echo "$nwant" > "$nstamp"
fi

echo "$VENV/bin/python"
