"""The MySQL oracle in CI: generated expressions and queries (oracle_gen.py)
run on a throwaway MariaDB started here (scripts/mariadbproc.py: its own data
directory, 127.0.0.1, an ephemeral port; never a system server) and on the
session's `tributary serve` (conftest.py), both through PyMySQL; any
difference in value, type class or NULL-ness not covered by the allow-list
(oracle_lib.ALLOW, MariaDB-vs-MySQL 8 only) fails, printing the seed and
the minimal failing expression.

The fixed seed set runs the groups of CI_GROUPS. A group left out names the
Tributary bug that keeps it out; put it back when the bug is fixed (run
`scripts/oracle_run.py --cases 20000` to see what a group finds).
"""

import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts"))

import oracle_gen  # noqa: E402
import oracle_lib  # noqa: E402

# Groups left out of CI, each for a Tributary bug; first those of issue #38
# being fixed now. `scripts/oracle_run.py --groups <CI groups>,<group>` shows
# a group's differences with a shrunk repro each.
DISABLED_IN_CI = {
    "pad_space": "#38 item 6 (collations): 'a' = 'a ' is 0; utf8mb4_bin is PAD SPACE in MySQL 8, "
                 "NO PAD here until keys hold weight strings (docs/COMPATIBILITY.md)",
    "overflow": "oracle finding: `x IS NULL` of an overflowing non-nullable x is 0 in MySQL "
                "(IS NULL is not evaluated), 1690 here; an unused overflowing constant "
                "sub-expression is 1690 in MySQL (folded eagerly), NULL here",
    # Found by this oracle (see the findings list of the oracle's first run);
    # not yet assigned:
    "unsigned": "oracle finding: CAST(-1 AS UNSIGNED) is 1690 (MySQL 18446744073709551615; "
                "BIGINT UNSIGNED values above BIGINT are not held); a negative DOUBLE cast "
                "to UNSIGNED is 1690 (MySQL 0)",
    "result_type": "oracle finding: FLOOR/CEIL of a DECIMAL expression whose digits are not "
                   "known statically (over CAST(double AS SIGNED), a computed string) can be "
                   "typed DECIMAL where MySQL says BIGINT (0-3 per 100,000 cases)",
    "zero_date": "oracle finding: a date with zero parts ('2020-00-10') is NULL in every function "
                 "(MySQL reads its parts: DAY 10, DATE_FORMAT keeps 00); Tributary's dates have "
                 "no zero parts",
    "date_type": "oracle finding: TIME() / CURTIME() results and STR_TO_DATE, DATE_ADD of a text "
                 "argument are sent as strings (MySQL: TIME / DATE / DATETIME); CAST(x AS "
                 "DATETIME[(fsp)]) rounds the fraction half up as MySQL 8 (MariaDB truncates)",
    "time_of_date": "oracle finding: MINUTE('2021-12-31') is 0 (MariaDB 20: MySQL 8's answer "
                    "to be checked)",
    "null_type": "oracle finding: IFNULL(1, ABS(NULL)) & co. are sent with a string column type "
                 "(a NULL literal's type is TEXT)",
}
CI_GROUPS = sorted(set(oracle_gen.GROUPS) - set(DISABLED_IN_CI))
# ORACLE_ENABLE=between_null,decimal puts groups back for a local run (to
# check a fix before deleting its DISABLED_IN_CI entry).
RUN_GROUPS = sorted(set(CI_GROUPS) | set(filter(None, os.environ.get("ORACLE_ENABLE", "").split(","))))

CI_SEEDS = range(1, 101)
EXPRS_PER_SEED = 90
QUERIES_PER_SEED = 10


@pytest.fixture(scope="module")
def mariadb():
    import pymysql

    import mariadbproc

    m = mariadbproc.MariaDB(pymysql).start()
    yield m
    m.stop()


@pytest.fixture(scope="module")
def oracle(server, mariadb):
    import pymysql

    m = oracle_lib.connect(pymysql, "127.0.0.1", mariadb.port)
    t = oracle_lib.connect(pymysql, server.host, server.port)
    oracle_lib.setup(m, t, f"oracle{os.getpid()}")
    yield oracle_lib.Oracle(m, t)
    m.close()
    t.close()


def _report(findings):
    lines = []
    for f in findings:
        lines.append(f"seed {f.seed}: {f.kind} ({f.detail}) {f.where}\n"
                     f"  minimal:   SELECT {f.minimal}\n"
                     f"  MariaDB:   {f.mariadb}\n  Tributary: {f.tributary}\n"
                     f"  generated: {f.sql[:300]}")
    return "\n".join(lines)


def test_oracle_ci_seeds(oracle):
    """10,000 cases of the fixed seed set (about 15 s), CI groups only."""
    unknown = set(RUN_GROUPS) - set(oracle_gen.GROUPS)
    assert not unknown, f"ORACLE_ENABLE names unknown groups {sorted(unknown)}"
    oracle_lib.run_seeds(oracle, CI_SEEDS, RUN_GROUPS, EXPRS_PER_SEED, QUERIES_PER_SEED)
    assert oracle.cases >= 9000
    bad = [f for f in oracle.findings if not f.allowed_by]
    assert not bad, (f"{len(bad)} differences from MariaDB (groups {RUN_GROUPS}):\n"
                     + _report(bad[:20]))


def test_oracle_detects_a_difference(oracle):
    """The comparison can fail: a value, a type class and a NULL differ."""
    m, t = oracle_lib.run(oracle.m, "SELECT 1, 2.5e0, NULL"), None
    t = oracle_lib.run(oracle.t, "SELECT 2, 2.5e0, NULL")
    assert oracle_lib.result_diff(m, t)[0] == "value"
    t = oracle_lib.run(oracle.t, "SELECT 1, '2.5', NULL")
    assert oracle_lib.result_diff(m, t)[0] == "type"
    t = oracle_lib.run(oracle.t, "SELECT 1, 2.5e0, 0")
    assert oracle_lib.result_diff(m, t)[0] == "null"
    t = oracle_lib.run(oracle.t, "SELECT 1, 2.5e0, NULL")
    assert oracle_lib.result_diff(m, t) is None


def test_generator_is_deterministic_and_covers_null():
    a = [c.sql for c in oracle_gen.expr_cases(7, 200, oracle_gen.GROUPS)]
    b = [c.sql for c in oracle_gen.expr_cases(7, 200, oracle_gen.GROUPS)]
    assert a == b
    assert sum("NULL" in s for s in a) > 40
    off = [c for c in oracle_gen.expr_cases(7, 500, CI_GROUPS)]
    assert not any(set(c.groups) & set(DISABLED_IN_CI) for c in off)


def test_allow_list_is_narrow():
    """An allow entry covers only its MariaDB quirk, not a wrong value."""
    reordered = ("value", "string", "", '{"b": 1, "a": 2}', '{"a": 2, "b": 1}')
    assert oracle_lib.allowed("JSON_SET('{}', '$.a', 2)", reordered) == "json_normal_form"
    wrong = ("value", "string", "", '{"a": 2}', '{"a": 3}')
    assert oracle_lib.allowed("JSON_SET('{}', '$.a', 2)", wrong) is None
    assert oracle_lib.allowed("CONCAT('a', 'b')", reordered) is None
    same_items = ("value", "string", "", "[1, 2]", "[2, 1]")
    assert oracle_lib.allowed("JSON_EXTRACT('[1, 2]', '$[1]', '$[0]')", same_items)
    assert oracle_lib.allowed("JSON_EXTRACT('[1, 2]', '$[1]', '$[0]')",
                              ("value", "string", "", "[1, 2]", "[2, 2]")) is None
    # Only MariaDB's -1 against MySQL's saturated BIGINT, only Tributary's NULL.
    sat = ("value", "integer", "", "-1", "9223372036854775807")
    assert oracle_lib.allowed("CAST('99999999999999999999' AS SIGNED)", sat)
    assert oracle_lib.allowed("CAST('99999999999999999999' AS SIGNED)",
                              ("value", "integer", "", "-1", "7")) is None
    assert oracle_lib.allowed("LAST_DAY('2021-04-31')", ("null", "Tributary NULL"))
    assert oracle_lib.allowed("LAST_DAY('2021-04-31')", ("null", "MariaDB NULL")) is None
    # MariaDB's -0 decimal: only a minus before Tributary's zero.
    negz = ("scale", "decimal scale", "", "-0.0", "0.0")
    assert oracle_lib.allowed("(10 * -1) % ABS(0.2)", negz) == "decimal_negative_zero"
    assert oracle_lib.allowed("(10 * -1) % ABS(0.2)",
                              ("value", "decimal", "", "-0.1", "0.1")) is None
    # IF's text: the same number only.
    assert oracle_lib.allowed("LEFT(IF(1, 0.2, 0.001), 7)",
                              ("value", "string", "", "0.200", "0.2")) == "if_case_text_of_decimal"
    assert oracle_lib.allowed("LEFT(IF(1, 0.2, 0.001), 7)",
                              ("value", "string", "", "0.200", "0.3")) is None
    # A server check ("verify") is needed, and must pass.
    cmp = ("value", "integer", "", "1", "0")
    assert oracle_lib.allowed("(1 / 3) = 0.3333", cmp) is None
    assert oracle_lib.allowed("(1 / 3) = 0.3333", cmp, lambda c, q: False) is None
    assert oracle_lib.allowed("(1 / 3) = 0.3333", cmp,
                              lambda c, q: c == "held_comparison") == "decimal_comparison_rounds"
    deep = ("value", "integer", "", "0", "1")
    assert oracle_lib.allowed("0 NOT IN (3.0 / 12345678.99)", deep) is None
    assert oracle_lib.allowed("0 NOT IN (3.0 / 12345678.99)", deep,
                              lambda c, q: c == "quotients_exact") == \
        "decimal_comparison_rounds_deep"
    # LOG2: two doubles a last bit apart, not any two values.
    log2 = ("value", "string", "", "3.3219280948873626", "3.321928094887362")
    assert oracle_lib.allowed("CAST(LOG2(10) AS CHAR)", log2) == "log2_std"
    assert oracle_lib.allowed("CAST(LOG2(10) AS CHAR)",
                              ("value", "string", "", "3.32", "3.321928094887362")) is None


def test_split_comparison():
    assert oracle_lib.split_comparison("(1 / 3) = 0.3333") == ("(1 / 3)", "=", "0.3333")
    assert oracle_lib.split_comparison("((1 / 3) <= '<')") == ("(1 / 3)", "<=", "'<'")
    assert oracle_lib.split_comparison("CAST('a' AS SIGNED) = (-0.5 / 3)")[1] == "="
    assert oracle_lib.split_comparison("1 = 2 AND 3 = 3") is None
    assert oracle_lib.split_comparison("NOT 1 = 2") is None
    assert oracle_lib.split_comparison("1 BETWEEN 0 AND 2") is None
    assert oracle_lib.split_comparison("IF(1 = 2, 3, 4)") is None


def test_shrink_candidates_respect_quotes_and_types():
    sql = "COALESCE('a(b', LOG10(MONTH('x)')), CAST(7 AS DECIMAL(5,2)))"
    cands = oracle_lib.candidates(sql)
    assert "MONTH('x)')" in cands and "LOG10(MONTH('x)'))" in cands
    # `AS DECIMAL(5,2)` is a type, never cut out of its CAST.
    assert not any(c.startswith("DECIMAL(") or ("AS DECIMAL" in c and "CAST(" not in c)
                   for c in cands)
    assert all(len(c) < len(sql) for c in cands)
