"""The standing adversarial suite (scripts/adversarial.py, issue 39 item 6)
in its bounded form: every probe of the groups below must pass against the
binary under test (a fresh server of its own per run). The full run, with
its table in docs/SECURITY.md, is `python3 scripts/adversarial.py` on a
release build."""

import os
import subprocess
import sys

from conftest import BIN

SCRIPT = os.path.join(os.path.dirname(__file__), "..", "..", "scripts", "adversarial.py")
# A debug build on a shared 2-core machine: KILL must land within 2 s here
# (the release run in docs/SECURITY.md holds it to 100 ms).
KILL_BOUND_MS = "2000"


def run(*args):
    env = dict(os.environ, TRIBUTARY_BIN=BIN)
    r = subprocess.run([sys.executable, SCRIPT, "--bounded", *args],
                       capture_output=True, text=True, env=env, timeout=900)
    assert r.returncode == 0, r.stdout[-6000:] + r.stderr[-3000:]
    assert " 0 failed" in r.stdout, r.stdout[-3000:]


def test_crash_privilege_disk_and_kill_probes_pass():
    # A statement budget large enough that the long shapes are still
    # running when KILL arrives.
    run("--only", "crash,privilege,disk,kill", "--kill-bound-ms", KILL_BOUND_MS,
        "--statement-memory-mb", "2048")


def test_memory_probes_stay_within_the_budget():
    # A small statement budget keeps the memory shapes quick; RSS must stay
    # under 1.5 x it + 64 MB and return to its baseline.
    run("--only", "memory", "--statement-memory-mb", "256", "--statement-seconds", "10")
