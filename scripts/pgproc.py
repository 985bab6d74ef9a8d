"""A throwaway PostgreSQL cluster for the benchmarks in this folder: initdb
in a temporary directory, `pg_ctl start` on 127.0.0.1 and an ephemeral port
(TCP loopback, as the MySQL-protocol peers are reached), run as the
`postgres` user when the script runs as root, stopped and deleted by
`stop()`.

Binaries: `debian_bin()` (the Debian package's, installed with apt-get when
missing) or any other PostgreSQL build's `bin` directory (the pgvector
benchmark uses the one in PyPI's `pgserver` wheel)."""

import glob
import os
import pwd
import shutil
import socket
import subprocess
import sys
import tempfile


def debian_bin():
    """The directory of the newest Debian-packaged PostgreSQL's binaries,
    installing the package when there is none."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if not found:
        subprocess.run(["apt-get", "install", "-y", "-q", "postgresql"], check=True)
        found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    return os.path.dirname(found[-1])


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def psycopg_module():
    try:
        import psycopg
    except ImportError:
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "psycopg[binary]"], check=True)
        import psycopg
    return psycopg


class PgCluster:
    """`fsync=False` for read-only benchmarks; keep the default (durable
    commits) wherever write rates are compared. `connect=False` skips the
    psycopg connection (`self.conn`); `psql()` works either way. `settings`
    are extra `-c name=value` server settings."""

    def __init__(self, bin_dir, fsync=True, connect=True, settings=()):
        self.bin = bin_dir
        # Its own temporary directory: the cluster's owner must reach it.
        self.root = tempfile.mkdtemp(prefix="bench-pg-")
        self.dir = os.path.join(self.root, "data")
        os.makedirs(self.dir)
        self.as_pg = []
        if os.geteuid() == 0:
            try:
                pwd.getpwnam("postgres")
            except KeyError:
                subprocess.run(["useradd", "--system", "--no-create-home", "postgres"], check=True)
            self.as_pg = ["runuser", "-u", "postgres", "--"]
            os.chmod(self.root, 0o755)
            shutil.chown(self.root, "postgres")
            shutil.chown(self.dir, "postgres")
        self.port = free_port()
        self.run("initdb", "-D", self.dir, "-A", "trust", "-U", "postgres", "--no-sync")
        self.opts = f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1"
        if not fsync:
            self.opts += " -c fsync=off"
        for setting in settings:
            self.opts += f" -c {setting}"
        self.start()
        self.conn = None
        if connect:
            psycopg = psycopg_module()
            self.conn = psycopg.connect(host="127.0.0.1", port=self.port, user="postgres",
                                        autocommit=True)
        self.version = self.psql("postgres", "SHOW server_version")

    def start(self):
        """Start (or restart after `pause()`) the server; waits until it accepts."""
        self.run("pg_ctl", "-D", self.dir, "-w", "-l", os.path.join(self.dir, "log"),
                 "-o", self.opts, "start")

    def pause(self):
        """Stop the server (fast shutdown) keeping its data; `start()` resumes."""
        self.run("pg_ctl", "-D", self.dir, "-w", "-m", "fast", "stop")

    def url(self, db):
        return f"postgres://postgres@127.0.0.1:{self.port}/{db}"

    def psql(self, db, sql):
        """One SQL command through psql; its unaligned output."""
        out = subprocess.run([*self.as_pg, os.path.join(self.bin, "psql"), "-h", "127.0.0.1",
                              "-p", str(self.port), "-U", "postgres", "-d", db, "-v",
                              "ON_ERROR_STOP=1", "-qAtc", sql],
                             check=True, capture_output=True, text=True)
        return out.stdout.strip()

    def run(self, tool, *args):
        subprocess.run([*self.as_pg, os.path.join(self.bin, tool), *args], check=True,
                       stdout=subprocess.DEVNULL)

    def stop(self):
        if self.conn is not None:
            self.conn.close()
        self.run("pg_ctl", "-D", self.dir, "-w", "-m", "fast", "stop")
        shutil.rmtree(self.root, ignore_errors=True)
