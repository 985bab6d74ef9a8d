#!/usr/bin/env python3
"""Writes tests/data/truth_tables.tsv: every three-valued operator of SQL
(AND, OR, XOR, NOT, IS [NOT] TRUE/FALSE/UNKNOWN, BETWEEN, IN, LIKE, CASE,
IF, comparisons, row comparisons) over operands that include NULL, with
the answer of a MariaDB server (the oracle for MySQL semantics) beside each
expression. tests/truth_tables.rs evaluates every line in Tributary and
fails on any difference.

Run against a MariaDB you started (127.0.0.1, root, no password):
    python3 scripts/truth_tables.py --port 3400
Re-run it only to add operators or operands; review the diff.
"""
import argparse
import itertools
import subprocess

SCALARS = ["NULL", "0", "1", "2", "-1", "0.5", "'abc'", "'3x'", "''"]
BOOLS = ["NULL", "0", "1", "2"]


def exprs():
    out = []
    for a in SCALARS:
        out.append(f"NOT {a}")
        for t in ["TRUE", "FALSE", "UNKNOWN"]:
            out.append(f"{a} IS {t}")
            out.append(f"{a} IS NOT {t}")
        out.append(f"{a} IS NULL")
        out.append(f"IF({a}, 'y', 'n')")
        out.append(f"CASE WHEN {a} THEN 'y' ELSE 'n' END")
        out.append(f"CASE {a} WHEN 1 THEN 'one' WHEN NULL THEN 'null' ELSE 'other' END")
    for a, b in itertools.product(BOOLS, repeat=2):
        for op in ["AND", "OR", "XOR"]:
            out.append(f"{a} {op} {b}")
        out.append(f"NOT ({a} AND {b}) <=> (NOT {a} OR NOT {b})")
    for a, b in itertools.product(SCALARS, repeat=2):
        for op in ["=", "<=>", "<>", "<", "<=", ">", ">="]:
            out.append(f"{a} {op} {b}")
    bounds = ["NULL", "1", "3", "5"]
    for x, lo, hi in itertools.product(["NULL", "0", "2", "4", "6"], bounds, bounds):
        out.append(f"{x} BETWEEN {lo} AND {hi}")
        out.append(f"{x} NOT BETWEEN {lo} AND {hi}")
    lists = ["(1, 2)", "(1, NULL)", "(NULL)", "(2, NULL, 3)", "('1', 5)"]
    for x, lst in itertools.product(["NULL", "1", "2", "4", "'2'"], lists):
        out.append(f"{x} IN {lst}")
        out.append(f"{x} NOT IN {lst}")
    for s, p in itertools.product(["NULL", "'abc'", "''", "'ABC'"], ["NULL", "'a%'", "'%'", "'_bc'", "'x%'"]):
        out.append(f"{s} LIKE {p}")
        out.append(f"{s} NOT LIKE {p}")
    rows = ["(1, 2)", "(1, NULL)", "(NULL, 2)", "(2, 1)", "(1, 3)"]
    for a, b in itertools.product(rows, repeat=2):
        for op in ["=", "<>", "<", "<=", ">", ">=", "<=>"]:
            out.append(f"{a} {op} {b}")
        out.append(f"{a} IN ({b}, (5, 5))")
        out.append(f"{a} NOT IN ({b}, (5, 5))")
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=3306)
    ap.add_argument("--out", default="tests/data/truth_tables.tsv")
    args = ap.parse_args()
    es = exprs()
    # Literals compare under the connection's collation: Tributary's
    # (utf8mb4_bin), not MariaDB's default (utf8mb4_general_ci).
    sql = "SET NAMES utf8mb4 COLLATE utf8mb4_bin;\n" + "".join(f"SELECT {e};\n" for e in es)
    res = subprocess.run(
        ["mariadb", "-h127.0.0.1", f"-P{args.port}", "-uroot", "-B", "-N"],
        input=sql, capture_output=True, text=True, check=True)
    answers = res.stdout.splitlines()
    assert len(answers) == len(es), (len(answers), len(es))
    version = subprocess.run(
        ["mariadb", "-h127.0.0.1", f"-P{args.port}", "-uroot", "-B", "-N", "-e", "SELECT VERSION()"],
        capture_output=True, text=True, check=True).stdout.strip()
    with open(args.out, "w") as f:
        f.write(f"# expression\tanswer of MariaDB {version} (scripts/truth_tables.py)\n")
        for e, a in zip(es, answers):
            f.write(f"{e}\t{a}\n")
    print(f"{len(es)} expressions written to {args.out}")


if __name__ == "__main__":
    main()
