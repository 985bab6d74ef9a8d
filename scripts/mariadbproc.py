"""A throwaway MariaDB server for the benchmarks in this folder:
`mariadb-install-db` into a temporary directory, `mariadbd --no-defaults` on
127.0.0.1 and an ephemeral port (TCP loopback, as the other servers are
reached), run as the `mysql` user when the script runs as root, stopped with
SIGTERM and deleted by `stop()`. Root has no password.

No configuration file is read and nothing is tuned: MariaDB's compiled-in
defaults (innodb_flush_log_at_trx_commit=1, a 128 MiB buffer pool, no binary
log) are what gets measured.

Binaries: the Debian package's (`mariadb-server`, installed with apt-get when
`mariadbd` is missing)."""

import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

START_DEADLINE_S = 60.0
STOP_DEADLINE_S = 60.0


def _find_mariadbd():
    return shutil.which("mariadbd") or next(
        (p for p in ("/usr/sbin/mariadbd", "/usr/bin/mariadbd") if os.path.exists(p)), None)


def mariadbd_binary():
    """The path of `mariadbd`, installing the Debian package when there is none
    (retrying after `apt-get update` when the first install fails)."""
    found = _find_mariadbd()
    if found:
        return found
    cmd = ["apt-get", "install", "-y", "-q", "mariadb-server"]
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    if subprocess.run(cmd, env=env).returncode != 0:
        subprocess.run(["apt-get", "update", "-q"], env=env, check=True)
        subprocess.run(cmd, env=env, check=True)
    found = _find_mariadbd()
    if not found:
        sys.exit("mariadb-server installed but no mariadbd found")
    return found


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class MariaDB:
    """`start()` initializes a fresh data directory and starts the server
    (`self.port`, `self.version` afterwards); `stop()` stops it and deletes
    the directory. `connect(**kw)` returns a PyMySQL connection as root."""

    def __init__(self, pymysql):
        self.pymysql = pymysql
        self.bin = mariadbd_binary()
        self.install_db = shutil.which("mariadb-install-db") or os.path.join(
            os.path.dirname(self.bin).replace("/sbin", "/bin"), "mariadb-install-db")
        self.root = None
        self.proc = None
        self.port = None
        self.version = None

    def start(self):
        # Its own temporary directory: the server's user must reach it.
        self.root = tempfile.mkdtemp(prefix="bench-mariadb-")
        self.dir = os.path.join(self.root, "data")
        self.socket = os.path.join(self.root, "mysql.sock")
        self.log = os.path.join(self.root, "mariadbd.log")
        os.makedirs(self.dir)
        user = pwd.getpwuid(os.geteuid()).pw_name
        if os.geteuid() == 0:
            # mariadbd refuses to run as root without --user; give it the
            # package's unprivileged `mysql` account instead.
            try:
                pwd.getpwnam("mysql")
            except KeyError:
                subprocess.run(["useradd", "--system", "--no-create-home", "mysql"], check=True)
            user = "mysql"
            os.chmod(self.root, 0o755)
            shutil.chown(self.root, "mysql")
            shutil.chown(self.dir, "mysql")
        # A temporary directory of its own: the bootstrap's temporary
        # tables in the shared /tmp were seen to vanish under another
        # server's bootstrap running at the same time.
        tmpdir = os.path.join(self.root, "tmp")
        os.makedirs(tmpdir)
        if os.geteuid() == 0:
            shutil.chown(tmpdir, "mysql")
        with open(self.log, "w") as log:
            subprocess.run(
                [self.install_db, "--no-defaults", f"--datadir={self.dir}", f"--user={user}",
                 "--auth-root-authentication-method=normal", "--skip-test-db",
                 f"--tmpdir={tmpdir}"],
                stdout=log, stderr=subprocess.STDOUT, check=True)
        self.port = free_port()
        self.proc = subprocess.Popen(
            [self.bin, "--no-defaults", f"--datadir={self.dir}", f"--port={self.port}",
             "--bind-address=127.0.0.1", f"--socket={self.socket}", f"--user={user}",
             f"--tmpdir={tmpdir}",
             f"--log-error={self.log}", "--skip-name-resolve"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + START_DEADLINE_S
        while True:
            if self.proc.poll() is not None:
                self._fail(f"mariadbd exited early with code {self.proc.returncode}")
            try:
                conn = self.connect()
                break
            except self.pymysql.err.OperationalError:
                if time.monotonic() > deadline:
                    self._fail("mariadbd did not accept connections in time")
                time.sleep(0.2)
        with conn.cursor() as c:
            c.execute("SELECT VERSION()")
            self.version = c.fetchone()[0]
        conn.close()
        return self

    def connect(self, **kw):
        return self.pymysql.connect(host="127.0.0.1", port=self.port, user="root",
                                    password="", **kw)

    def _fail(self, msg):
        try:
            with open(self.log) as f:
                tail = f.read()[-3000:]
        except OSError:
            tail = ""
        self.stop()
        sys.exit(f"{msg}\n{tail}")

    def stop(self):
        """SIGTERM, wait (bounded), then kill; deletes the directory."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=STOP_DEADLINE_S)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None
        if self.root is not None:
            shutil.rmtree(self.root, ignore_errors=True)
            self.root = None
