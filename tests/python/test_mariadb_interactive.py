"""The interactive `mariadb` client (readline mode, auto-rehash on, i.e.
WITHOUT -A) driven through tmux: after `USE d` on a database that has a
table, the client reads table information (SHOW TABLES + COM_FIELD_LIST per
table) for tab completion; a server that does not answer COM_FIELD_LIST
leaves it hanging at "Reading table information ...".

Synchronisation is by polling the pane for the expected text until a
deadline, never by fixed sleeps."""

import os
import re
import shutil
import subprocess
import tempfile
import time
import uuid

import pytest

MARIADB = shutil.which("mariadb") or shutil.which("mysql")
TMUX = shutil.which("tmux")
STEP_DEADLINE_S = 20.0
POLL_S = 0.05


class Pane:
    def __init__(self, socket, target):
        self.socket = socket
        self.target = target

    def tmux(self, *args, check=True):
        return subprocess.run([TMUX, "-S", self.socket, *args], capture_output=True,
                              text=True, timeout=10, check=check)

    def text(self):
        return self.tmux("capture-pane", "-p", "-J", "-S", "-", "-E", "-",
                         "-t", self.target).stdout

    def type_line(self, line):
        # tmux takes an argument ending in ';' as its own command separator,
        # so every ';' is sent as a hex key.
        for i, part in enumerate(line.split(";")):
            if i:
                self.tmux("send-keys", "-t", self.target, "-H", "3b")
            if part:
                self.tmux("send-keys", "-t", self.target, "-l", part)
        self.tmux("send-keys", "-t", self.target, "Enter")

    def wait_for(self, pattern, count=1, what=""):
        """Poll until `pattern` occurs `count` times in the pane (scrollback
        included) or the deadline passes."""
        rx = re.compile(pattern, re.M)
        deadline = time.monotonic() + STEP_DEADLINE_S
        while True:
            screen = self.text()
            if len(rx.findall(screen)) >= count:
                return screen
            if time.monotonic() > deadline:
                pytest.fail(f"no {what or pattern!r} within {STEP_DEADLINE_S}s; screen:\n{screen}")
            time.sleep(POLL_S)


@pytest.fixture
def pane(server):
    if MARIADB is None or TMUX is None:
        pytest.fail("mariadb client and tmux are needed (scripts/test-deps.sh installs them)")
    d = tempfile.mkdtemp(prefix="tributary-tmux-")
    socket = os.path.join(d, "sock")
    session = "m" + uuid.uuid4().hex[:8]
    env = dict(os.environ, TERM="xterm", MYSQL_HISTFILE="/dev/null", HOME=d)
    cmd = f"{MARIADB} --no-defaults -h127.0.0.1 -P{server.port} -uroot --skip-ssl"
    subprocess.run([TMUX, "-S", socket, "-f", "/dev/null", "new-session", "-d", "-s", session,
                    "-x", "160", "-y", "50", cmd], env=env, check=True, timeout=10)
    p = Pane(socket, session)
    try:
        yield p
    finally:
        subprocess.run([TMUX, "-S", socket, "kill-server"], capture_output=True, timeout=10)
        shutil.rmtree(d, ignore_errors=True)


def test_use_database_with_tables_then_query(pane, dbname):
    db = dbname + "_i"
    other = dbname + "_o"
    pane.wait_for(r"^(MariaDB|MySQL) \[\(none\)\]>", what="the first prompt")
    pane.type_line(f"CREATE DATABASE {db};")
    pane.wait_for(r"^Query OK", 1, "CREATE DATABASE's Query OK")
    pane.type_line(f"USE {db};")
    pane.wait_for(r"^Database changed", 1, "the first USE")
    pane.type_line("CREATE TABLE t(id INT PRIMARY KEY);")
    pane.wait_for(r"^Query OK", 2, "CREATE TABLE's Query OK")
    pane.type_line(f"USE {db};")
    pane.wait_for(r"^Database changed", 2, "the second USE")
    pane.type_line("SELECT 41+1;")
    screen = pane.wait_for(r"^\|\s+42 \|$", 1, "the result 42")
    assert "ERROR" not in screen, screen

    # The client skips re-reading table information on USE of the database
    # it believes is current (it asks SELECT DATABASE()); switching from
    # another database forces it: SHOW TABLES, then COM_FIELD_LIST for t.
    pane.type_line(f"CREATE DATABASE {other};")
    pane.wait_for(r"^Query OK", 3, "CREATE DATABASE's Query OK")
    pane.type_line(f"USE {other};")
    pane.wait_for(r"^Database changed", 3, "USE of an empty database")
    pane.type_line(f"USE {db};")
    pane.wait_for(r"^Reading table information", 1, "the client reading table information")
    pane.wait_for(r"^Database changed", 4, "USE finishing (stuck reading table information: COM_FIELD_LIST?)")
    pane.type_line("SELECT 41+1;")
    screen = pane.wait_for(r"^\|\s+42 \|$", 2, "the result 42 after reading table information")
    assert "ERROR" not in screen, screen
    pane.type_line("exit")
