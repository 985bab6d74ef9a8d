"""Small helpers shared by the benchmark scripts in this folder (no
third-party imports, so any script may load it before its own `ensure`)."""

import time


def lit(v):
    """A vector as Tributary's text literal, 5 decimals per element."""
    return "[" + ",".join(f"{x:.5f}" for x in v) + "]"


def timed(fn):
    """(seconds, result) of calling `fn`."""
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out
