#!/usr/bin/env python3
"""The MySQL oracle's long run: generated expressions and queries against a
throwaway MariaDB (scripts/mariadbproc.py) and a throwaway `tributary serve`
(scripts/serverproc.py), every difference in value, type class or NULL-ness
collected, grouped by class and printed with one minimal repro each, most
frequent first, with the throughput in cases/s.

    python3 scripts/oracle_run.py --cases 100000 --seed-start 1000
    python3 scripts/oracle_run.py --cases 5000 --groups ci      # the CI groups only
    python3 scripts/oracle_run.py --cases 20000 --disable decimal,str2num

Binary: $TRIBUTARY_BIN, else the debug build under $CARGO_TARGET_DIR.
Exit status 1 when a difference not covered by the allow-list was found, 2
when a server lost the connection (its SQL and the seed are printed).
"""

import argparse
import collections
import json
import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "tests", "python"))

import pymysql  # noqa: E402

import mariadbproc  # noqa: E402
import oracle_gen  # noqa: E402
import oracle_lib  # noqa: E402
import serverproc  # noqa: E402

EXPRS_PER_SEED = 90
QUERIES_PER_SEED = 10


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--cases", type=int, default=10000, help="about this many cases in all")
    ap.add_argument("--seed-start", type=int, default=1)
    ap.add_argument("--groups", default="all",
                    help="'all' or 'ci' (the CI set of test_mysql_oracle.py) or a comma list")
    ap.add_argument("--disable", default="", help="comma list of groups to leave out")
    ap.add_argument("--json", help="write every finding to this file")
    ap.add_argument("--show", type=int, default=2, help="repros printed per class")
    ap.add_argument("--warnings", action="store_true",
                    help="also compare the warning codes of expressions (SHOW WARNINGS)")
    args = ap.parse_args()

    if args.groups == "all":
        enabled = set(oracle_gen.GROUPS)
    elif args.groups == "ci":
        sys.path.insert(0, os.path.join(HERE, "..", "tests", "python"))
        from test_mysql_oracle import CI_GROUPS
        enabled = set(CI_GROUPS)
    else:
        enabled = set(args.groups.split(",")) | {"core"}
    enabled -= set(filter(None, args.disable.split(",")))
    unknown = enabled - set(oracle_gen.GROUPS)
    if unknown:
        sys.exit(f"unknown groups: {sorted(unknown)}")

    binary = os.environ.get("TRIBUTARY_BIN") or os.path.join(
        os.environ.get("CARGO_TARGET_DIR", "target"), "debug", "tributary")
    if not os.path.exists(binary):
        sys.exit(f"no Tributary binary at {binary} (set TRIBUTARY_BIN or CARGO_TARGET_DIR)")
    maria = mariadbproc.MariaDB(pymysql).start()
    tmp = tempfile.TemporaryDirectory(prefix="oracle-run-")
    proc = None
    try:
        proc, port = serverproc.start_server(binary, os.path.join(tmp.name, "data"))
        m = oracle_lib.connect(pymysql, "127.0.0.1", maria.port)
        t = oracle_lib.connect(pymysql, "127.0.0.1", port)
        oracle_lib.setup(m, t, "oracle")
        oracle = oracle_lib.Oracle(m, t, warnings=args.warnings)
        per_seed = EXPRS_PER_SEED + (QUERIES_PER_SEED if "table" in enabled else 0)
        seeds = range(args.seed_start, args.seed_start + max(1, args.cases // per_seed))
        print(f"MariaDB {maria.version}; Tributary {binary}; groups {sorted(enabled)}; "
              f"seeds {seeds.start}..{seeds.stop - 1}", flush=True)
        t0 = time.monotonic()
        last = t0
        for seed in seeds:
            try:
                oracle_lib.run_seeds(oracle, [seed], enabled, EXPRS_PER_SEED, QUERIES_PER_SEED)
            except oracle_lib.ServerLost as e:
                print(f"seed {seed}: {e}", flush=True)
                raise SystemExit(2)
            now = time.monotonic()
            if now - last > 30:
                last = now
                print(f"  seed {seed}: {oracle.cases} cases, {oracle.cases / (now - t0):.0f}/s, "
                      f"{len(oracle.findings)} differences", flush=True)
        dt = time.monotonic() - t0
    finally:
        if proc is not None:
            serverproc.stop_server(proc)
        maria.stop()
        tmp.cleanup()

    findings = oracle.findings
    print(f"\n{oracle.cases} cases in {dt:.1f} s ({oracle.cases / dt:.0f} cases/s), "
          f"seeds {seeds.start}..{seeds.stop - 1}: {len(findings)} differences "
          f"({sum(1 for f in findings if f.allowed_by)} allowed)")
    classes = collections.defaultdict(list)
    for f in findings:
        classes[("ALLOWED " + f.allowed_by,) if f.allowed_by else oracle_lib.classify(f)].append(f)
    for key, fs in sorted(classes.items(), key=lambda kv: -len(kv[1])):
        print(f"\n[{len(fs)}] {' / '.join(key)}")
        for f in sorted(fs, key=lambda f: len(f.minimal))[:args.show]:
            print(f"  seed {f.seed}: {f.minimal}")
            print(f"    MariaDB:   {f.mariadb}")
            print(f"    Tributary: {f.tributary}")
    if args.json:
        with open(args.json, "w") as out:
            json.dump([f.__dict__ for f in findings], out, indent=1)
    sys.exit(1 if any(not f.allowed_by for f in findings) else 0)


if __name__ == "__main__":
    main()
