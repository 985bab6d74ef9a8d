"""The MySQL oracle's comparison engine (used by tests/python/test_mysql_oracle.py
and scripts/oracle_run.py): runs the cases of oracle_gen.py on MariaDB and on
Tributary through PyMySQL (the same client path for both) and reports every
difference in value, type class or NULL-ness, or an error on one side only.

Owns: the session setup that makes MariaDB answer as MySQL 8 in its default
`sql_mode`, the type classes of the protocol's column types, the comparison
of one value and of a result set (a multiset unless ORDER BY fixes the
order), batching (many expressions per SELECT, the batch re-run one by one on
a difference), shrinking a failing expression, and the ONE allow-list of
known MariaDB-vs-MySQL 8 differences. Never: starts servers (the callers do)
or hides a Tributary bug: a Tributary bug someone is fixing is a *generator
group* disabled in the CI seed set (see test_mysql_oracle.py), not an entry
here.
"""

import json
import math
import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

import oracle_gen

# MySQL 8's default sql_mode; MariaDB 10.11 knows each of these modes.
MYSQL8_SQL_MODE = ("ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,"
                   "ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION")

# Session statements for MariaDB: MySQL 8's sql_mode, the UTC time zone
# Tributary's server runs in, and utf8mb4_bin (Tributary's collation; its
# PAD SPACE attribute is MySQL 8's for utf8mb4_bin too).
MARIADB_SESSION = [
    f"SET SESSION sql_mode = '{MYSQL8_SQL_MODE}'",
    "SET time_zone = '+00:00'",
    "SET NAMES utf8mb4 COLLATE utf8mb4_bin",
]
# MariaDB keeps the warnings of a statement that reads no table (SELECT 1/0)
# until one that does; MySQL 8 clears them at every statement. Run before a
# statement whose warnings are compared.
RESET_WARNINGS = "SELECT 1 FROM t LIMIT 0"
# Part of the allow-list: warnings MariaDB gives where MySQL 8 gives none
# (with --warnings only). 4037/4038: MariaDB's JSON functions warn about
# invalid JSON text even in JSON_VALID('a'), which MySQL 8 answers silently.
MARIADB_ONLY_WARNINGS = {4037, 4038}
MARIADB_DB = "CREATE DATABASE {db} CHARACTER SET utf8mb4 COLLATE utf8mb4_bin"
TRIBUTARY_DB = "CREATE DATABASE {db}"

# ---------------------------------------------------------------------------
# THE allow-list: known differences between MariaDB 10.11 (the oracle) and
# MySQL 8 (the reference). Each entry is either
#   "skip": never generated (MariaDB cannot answer it as MySQL 8 does), or
#   "match": a regular expression; a difference whose *minimal* expression
#            matches it (and, if given, whose kind is in "kinds" and whose
#            values pass the entry's check: same_json, same_json_elements,
#            mariadb_prefix, mariadb_answer, mariadb_null, tributary_null,
#            tributary_error) is counted as allowed, not as a failure.
# Every entry says why. Known Tributary bugs are NOT listed here.
ALLOW = {
    "vector_functions": {
        "skip": True,
        "reason": "MariaDB 10.11 has no VECTOR type nor L2_DISTANCE & co. (Tributary and MatrixOne "
                  "extensions); they are covered by the Rust tests, not by this oracle",
    },
    "clock_functions": {
        "skip": True,
        "reason": "NOW(), CURDATE(), UNIX_TIMESTAMP() without argument … read the clock: two "
                  "servers never answer at the same instant",
    },
    "version": {
        "skip": True,
        "reason": "VERSION() names the server, it differs by design",
    },
    "json_key_order": {
        "skip": True,
        "reason": "MySQL 8 stores an object's keys sorted (by length, then bytes) and prints them "
                  "so; MariaDB keeps the order of the text. The generator's documents list their "
                  "keys in MySQL's order, so string functions over JSON text agree",
    },
    "json_normal_form": {
        "match": r"JSON_(EXTRACT|SET|INSERT|REPLACE|REMOVE|ARRAY_APPEND|MERGE_PRESERVE|KEYS|"
                 r"OBJECT|ARRAY)\(",
        "kinds": {"value"},
        "same_json": True,
        "reason": "MariaDB keeps the key order and spacing of the JSON text it was given; MySQL 8 "
                  "prints its normalized form (object keys sorted by length, then bytes; one "
                  "space after ':' and ','), as Tributary does. Allowed only when both answers "
                  "parse to the same JSON value",
    },
    "day_past_month_end": {
        "match": r"LAST_DAY\('\d{4}-(04|06|09|11)-31'\)",
        "kinds": {"null"},
        "tributary_null": True,
        "reason": "LAST_DAY('2021-04-31'): MySQL 8 without ALLOW_INVALID_DATES reads a day past "
                  "the month's end as an invalid date (NULL, warning 1292), as Tributary does; "
                  "MariaDB 10.11 answers 2021-04-30",
    },
    "signed_cast_saturates": {
        "match": r"(CAST|CONVERT)\(.*SIGNED",
        "kinds": {"value"},
        "mariadb_answer": "-1",
        "tributary_answer": "9223372036854775807",
        "reason": "a numeric string past BIGINT cast to SIGNED: MySQL 8 reads it with "
                  "my_strtoll10, which saturates at 9223372036854775807 (warning 1292), as "
                  "Tributary does; MariaDB reads it as BIGINT UNSIGNED and wraps to -1",
    },
    "regexp_like": {
        "skip": True,
        "reason": "MariaDB 10.11 has no REGEXP_LIKE (MySQL 8 has); REGEXP / RLIKE are generated",
    },
    "json_remove_root": {
        "skip": True,
        "reason": "JSON_REMOVE(doc, '$') is error 3153 in MySQL 8 (as in Tributary); MariaDB "
                  "answers NULL",
    },
    "json_array_append_missing_path": {
        "match": r"JSON_ARRAY_APPEND\(",
        "kinds": {"null"},
        "mariadb_null": True,
        "reason": "MariaDB's JSON_ARRAY_APPEND answers NULL when a path matches nothing; MySQL 8 "
                  "ignores that path and returns the document (as Tributary does)",
    },
    "replace_null_argument": {
        "match": r"REPLACE\(",
        "kinds": {"null"},
        "tributary_null": True,
        "reason": "MySQL 8's REPLACE() is NULL when any argument is NULL; MariaDB 10.11 returns "
                  "the string unchanged when a NULL replacement is never used",
    },
    "json_extract_path_order": {
        "match": r"JSON_EXTRACT\(",
        "kinds": {"value"},
        "same_json_elements": True,
        "reason": "JSON_EXTRACT with several paths: MySQL 8 lists the matches in the order of the "
                  "paths (JSON_EXTRACT('[10, 20]', '$[1]', '$[0]') is [20, 10], as in Tributary), "
                  "MariaDB in document order. Allowed only when both are arrays of the same "
                  "elements",
    },
    "locate_empty_needle": {
        "match": r"LOCATE\(",
        "kinds": {"value"},
        "mariadb_answer": "0",
        "reason": "LOCATE('', s, pos): MySQL 8 (Item_func_locate::val_int) finds the empty string "
                  "at pos when pos <= CHAR_LENGTH(s) + 1, as Tributary does; MariaDB 10.11 answers "
                  "0 for pos > 1",
    },
    "json_keys_order": {
        "match": r"JSON_KEYS\(",
        "kinds": {"value"},
        "same_json_elements": True,
        "reason": "JSON_KEYS: MySQL 8 stores objects with sorted keys (length, then bytes), so "
                  "JSON_KEYS('{\"b\": 1, \"a\": 2}') is [\"a\", \"b\"] as in Tributary; "
                  "MariaDB keeps the document's order. Allowed only for the same keys",
    },
    "json_quote_of_json": {
        "match": r"JSON_QUOTE\(JSON_",
        "kinds": {"error"},
        "tributary_error": 3064,
        "reason": "JSON_QUOTE of a JSON value is error 3064 in MySQL 8 (as in Tributary); MariaDB "
                  "quotes the text",
    },
    "json_type_collation": {
        "skip": True,
        "reason": "MariaDB's JSON_TYPE answers a utf8mb3_general_ci string (so LOCATE('b', "
                  "JSON_TYPE('{}')) is 2, and CONCAT(JSON_TYPE(…), 7) loses the type name); MySQL "
                  "8's is utf8mb4_bin text. JSON_TYPE is generated only as a whole column",
    },
    "json_aggregate_truncation": {
        "match": r"(MIN|MAX)\(.*JSON_",
        "kinds": {"value"},
        "mariadb_prefix": True,
        "reason": "MariaDB cuts MIN/MAX of a JSON function's result to the function's declared "
                  "length ('[{}, \"x%y' for '[{}, \"x%y\"]'); allowed when MariaDB's answer is a "
                  "prefix of Tributary's",
    },
    "mariadb_crash_nullsafe_json": {
        "skip": True,
        "reason": "MariaDB 10.11.19 loses the connection (crashes) on `SELECT id FROM t WHERE "
                  "CONCAT_WS('0', s) <=> JSON_EXTRACT('3', '$')`: `<=>` is not generated with a "
                  "JSON function on either side",
    },
    "last_day_invalid_in_query": {
        "match": r"LAST_DAY\('\d{4}-(04|06|09|11)-31'\)",
        "verify": "last_day_as_null",
        "reason": "day_past_month_end inside a larger expression or query: allowed only when "
                  "MariaDB, given CAST(NULL AS DATE) for each such LAST_DAY (MySQL 8's value), "
                  "answers exactly as Tributary",
    },
    "decimal_negative_zero": {
        "match": r"[/%]|\bMOD\b",
        "kinds": {"value", "scale"},
        "mariadb_negative_zero": True,
        "reason": "a DECIMAL quotient or remainder that is zero: MariaDB 10.11 keeps its minus "
                  "sign ('-0.0' for (10 * -1) % 0.2, and -0 compares below 0 in IN / BETWEEN); "
                  "MySQL 8's do_div_mod ends with decimal_make_zero, a plain 0, as Tributary. "
                  "Allowed only when MariaDB's answer is Tributary's with a '-' before a zero",
    },
    "decimal_negative_zero_operand": {
        "match": r"[/%]|\bMOD\b",
        "kinds": {"value", "null"},
        "verify": "negative_zero_as_zero",
        "reason": "decimal_negative_zero inside a comparison: allowed only when MariaDB, given 0 "
                  "for each sub-expression it evaluates to -0 (CAST(x AS DECIMAL(65,30)) is "
                  "'-0.000…'), answers exactly as Tributary",
    },
    "decimal_comparison_rounds": {
        "match": r"/|AVG\(",
        "kinds": {"value", "null"},
        "verify": "held_comparison",
        "reason": "MariaDB's =, <>, <, <=, >, >= round each DECIMAL side to its scale before "
                  "comparing (Arg_comparator::compare_decimal, round_self_if_needed), so "
                  "1/3 = 0.3333 is 1; MySQL 8 compares the held values (1/3 = 0.3333 is 0), as "
                  "Tributary (NULLIF too). Allowed only for a top-level comparison A op B (or "
                  "NULLIF(A, B)) whose answer is what MariaDB's exact CAST((A) - (B) AS "
                  "DECIMAL(65,30)) implies",
    },
    "log2_std": {
        "match": r"LOG2\(",
        "kinds": {"value"},
        "close_floats": True,
        "reason": "LOG2: MySQL 8 computes std::log2 (LOG2(10) is 3.321928094887362, "
                  "LOG2(2147483648) exactly 31), as Tributary; MariaDB log(x) / M_LN2 "
                  "(3.3219280948873626, 31.000000000000004). Allowed only when both answers "
                  "are doubles within 1e-15 of each other",
    },
    "log2_std_in_query": {
        "match": r"LOG2\(",
        "kinds": {"rows", "value", "null"},
        "verify": "log2_rounded",
        "reason": "log2_std where a comparison turns the last bit into a different row set: "
                  "allowed only when MariaDB, given ROUND(LOG2(x), 12) for each LOG2(x), "
                  "answers exactly as Tributary",
    },
    "decimal_comparison_rounds_deep": {
        "match": r"/",
        "kinds": {"value", "null", "rows"},
        "verify": "quotients_exact",
        "reason": "decimal_comparison_rounds anywhere (WHERE, NOT IN of one value, which both "
                  "servers read as <>, <=>): allowed only when MariaDB, given "
                  "CAST(q AS DECIMAL(65,30)) for each parenthesized quotient q (its held "
                  "digits, so that its rounding changes nothing), answers exactly as Tributary",
    },
    "if_case_text_of_decimal": {
        "match": r"\b(IF|CASE)\b",
        "kinds": {"value"},
        "same_number": True,
        "reason": "IF / CASE of DECIMALs as text: MySQL 8's Item_func_if::val_str and "
                  "Item_func_case::val_str convert the chosen argument ('0.2' for IF(1, 0.2, "
                  "0.001)), as Tributary; MariaDB pads to the common scale ('0.200'). Allowed "
                  "only when both texts are the same number",
    },
    "json_arrow_and_cast": {
        "skip": True,
        "reason": "MariaDB 10.11 has neither `doc->'$.a'` / `doc->>'$.a'` nor CAST(x AS JSON) "
                  "(MySQL 8 and Tributary have them); JSON_EXTRACT / JSON_UNQUOTE are generated",
    },
}

# ---------------------------------------------------------------------------
# Type classes of the protocol's column types (pymysql.constants.FIELD_TYPE).
_CLASSES = {
    "integer": {1, 2, 3, 8, 9, 13, 16},
    "decimal": {0, 246},
    "approx": {4, 5},
    "temporal": {7, 10, 11, 12, 14},
    "string": {15, 245, 247, 248, 249, 250, 251, 252, 253, 254},
    "null": {6},
}
TYPE_CLASS = {code: name for name, codes in _CLASSES.items() for code in codes}


def type_class(code):
    return TYPE_CLASS.get(code, f"type{code}")


@dataclass
class Result:
    """One statement's answer: an error (code, message) or columns + rows of
    raw text values (None for NULL)."""
    error: tuple = None
    classes: list = None
    rows: list = None


class ServerLost(Exception):
    """A server closed the connection (or died) while answering `sql`."""

    def __init__(self, who, sql, err):
        super().__init__(f"{who} lost the connection on: {sql}\n  ({err})")
        self.who, self.sql = who, sql


def run(conn, sql, who="server"):
    import pymysql
    try:
        with conn.cursor() as c:
            c.execute(sql)
            classes = [type_class(d[1]) for d in (c.description or [])]
            rows = [tuple(_text(v) for v in r) for r in c.fetchall()]
        return Result(classes=classes, rows=rows)
    except pymysql.err.MySQLError as e:
        code = e.args[0] if e.args and isinstance(e.args[0], int) else -1
        msg = e.args[1] if len(e.args) > 1 else str(e)
        if code in (0, 2006, 2013, 2014):
            raise ServerLost(who, sql, e) from e  # not an answer
        return Result(error=(code, msg))


def _text(v):
    if isinstance(v, (bytes, bytearray)):
        return bytes(v).decode("utf-8", errors="backslashreplace")
    return v


def connect(pymysql, host, port, db=None):
    # conv={}: every value as the server's text (no Python conversions).
    return pymysql.connect(host=host, port=port, user="root", password="", database=db,
                           autocommit=True, charset="utf8mb4", conv={})


# ---------------------------------------------------------------------------
# Comparing values.
def _float(s):
    try:
        return float(s)
    except (TypeError, ValueError):
        return None


def cell_diff(mc, mv, tc, tv):
    """None when MariaDB's (class mc, text mv) and Tributary's (tc, tv)
    agree, else (kind, detail)."""
    if (mv is None) != (tv is None):
        return ("null", "MariaDB NULL" if mv is None else "Tributary NULL")
    if mv is None:
        return None  # both NULL: the type of a NULL is not compared
    if mc != tc and "null" not in (mc, tc):
        return ("type", f"{mc}->{tc}")
    cls = mc if mc != "null" else tc
    if cls == "integer":
        if mv.strip() != tv.strip():
            return ("value", "integer")
        return None
    if cls == "decimal":
        try:
            a, b = Decimal(mv), Decimal(tv)
        except InvalidOperation:
            return ("value", "decimal text") if mv != tv else None
        if a != b:
            return ("value", "decimal")
        if mv != tv:
            return ("scale", "decimal scale")
        return None
    if cls == "approx":
        a, b = _float(mv), _float(tv)
        if a is None or b is None:
            return ("value", "double text") if mv != tv else None
        if a == b or (math.isnan(a) and math.isnan(b)):
            return None
        if math.isinf(a) or math.isinf(b) or not math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-300):
            return ("value", "double")
        return None
    if mv != tv:
        return ("value", cls)
    return None


def result_diff(m, t, ordered=True):
    """None when the two Results agree, else (kind, detail, where)."""
    if m.error and t.error:
        return None  # both refuse (codes may differ: not this oracle's subject)
    if m.error or t.error:
        if m.error:
            return ("error", f"MariaDB error {m.error[0]}", m.error[1][:120])
        return ("error", f"Tributary error {t.error[0]}", t.error[1][:120])
    if len(m.classes) != len(t.classes):
        return ("shape", "column count", f"{len(m.classes)} vs {len(t.classes)}")
    if len(m.rows) != len(t.rows):
        return ("rows", "row count", f"{len(m.rows)} vs {len(t.rows)}")
    mrows, trows = m.rows, t.rows
    if not ordered:
        mrows = sorted(mrows, key=lambda r: _row_key(r, m.classes))
        trows = sorted(trows, key=lambda r: _row_key(r, t.classes))
    for ri, (mr, tr) in enumerate(zip(mrows, trows)):
        for ci, (mv, tv) in enumerate(zip(mr, tr)):
            d = cell_diff(m.classes[ci], mv, t.classes[ci], tv)
            if d:
                return (d[0], d[1], f"row {ri} col {ci}: MariaDB {mv!r} ({m.classes[ci]}), "
                                    f"Tributary {tv!r} ({t.classes[ci]})", mv, tv)
    return None


def _row_key(row, classes):
    key = []
    for v, c in zip(row, classes):
        if v is None:
            key.append((0, 0.0, ""))
        elif c in ("integer", "decimal", "approx") and _float(v) is not None:
            f = _float(v)
            key.append((1, float(f"{f:.9g}") if math.isfinite(f) else f, ""))
        else:
            key.append((2, 0.0, v))
    return tuple(key)


def allowed(expr_sql, diff, verify=None):
    """The allow-list entry name that covers this difference, or None.
    `diff` is result_diff's answer; a value difference carries the two
    values of the first differing cell. `verify(name, sql)` runs an
    entry's "verify" check against the servers (no check: not allowed)."""
    kind = diff[0]
    mv, tv = (diff[3], diff[4]) if len(diff) > 4 else (None, None)
    for name, e in ALLOW.items():
        if "match" not in e or not re.search(e["match"], expr_sql):
            continue
        if "kinds" in e and kind not in e["kinds"]:
            continue
        if e.get("mariadb_negative_zero") and not _negative_zero(mv, tv):
            continue
        if e.get("same_number") and not _same_number(mv, tv):
            continue
        if e.get("close_floats") and not _close_floats(mv, tv):
            continue
        if "verify" in e and (verify is None or not verify(e["verify"], expr_sql)):
            continue
        if e.get("same_json") and (mv is None or tv is None or not _same_json(mv, tv)):
            continue
        if e.get("same_json_elements") and (mv is None or tv is None
                                            or not _same_json_elements(mv, tv)):
            continue
        if e.get("mariadb_prefix") and (mv is None or tv is None or not tv.startswith(mv)):
            continue
        if "mariadb_answer" in e and mv != e["mariadb_answer"]:
            continue
        if "tributary_answer" in e and tv != e["tributary_answer"]:
            continue
        if "tributary_error" in e and diff[1] != f"Tributary error {e['tributary_error']}":
            continue
        if e.get("mariadb_null") and diff[1] != "MariaDB NULL":
            continue
        if e.get("tributary_null") and diff[1] != "Tributary NULL":
            continue
        return name
    return None


def _negative_zero(mv, tv):
    """MariaDB's text is Tributary's with a minus sign before a zero."""
    if mv is None or tv is None or mv != "-" + tv:
        return False
    try:
        return Decimal(tv) == 0
    except InvalidOperation:
        return False


def _same_number(mv, tv):
    try:
        return mv is not None and tv is not None and Decimal(mv) == Decimal(tv)
    except InvalidOperation:
        return False


def _close_floats(mv, tv):
    a, b = _float(mv), _float(tv)
    return a is not None and b is not None and a != b and math.isclose(a, b, rel_tol=1e-15)


NEG_ZERO_30 = "-0." + "0" * 30
_CMP_OPS = ("<=>", "<=", ">=", "<>", "!=", "=", "<", ">")


def split_comparison(sql):
    """(A, op, B) when `sql` (outer parentheses aside) is one comparison
    A op B at its top level, else None."""
    s = sql.strip()
    while s.startswith("(") and (0, len(s)) in spans(s):
        s = s[1:-1].strip()
    depth, found = 0, None
    for i, ch in _code(s):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif depth == 0 and ch in "<>=!":
            if found is not None:
                if i < found[0] + len(found[1]):
                    continue
                return None  # two comparisons at the top level
            op = next(o for o in _CMP_OPS + ("!",) if s.startswith(o, i))
            if op == "!":
                return None
            found = (i, op)
    if found is None:
        return None
    i, op = found
    a, b = s[:i].strip(), s[i + len(op):].strip()
    if not a or not b or re.search(r"\b(AND|OR|XOR|NOT|BETWEEN|IN|LIKE|IS|REGEXP)\b",
                                   _flat(a) + " " + _flat(b), re.I):
        return None
    return a, op, b


def _flat(s):
    """`s` with quoted text and parenthesized groups blanked."""
    depth, out = 0, []
    code = dict(_code(s))
    for i in range(len(s)):
        ch = code.get(i)
        if ch == "(":
            depth += 1
        if ch is None or depth > 0:
            out.append(" ")
        else:
            out.append(ch)
        if ch == ")":
            depth -= 1
    return "".join(out)


def _same_json_elements(a, b):
    try:
        x, y = json.loads(a), json.loads(b)
    except ValueError:
        return False
    if not isinstance(x, list) or not isinstance(y, list):
        return False
    key = lambda v: json.dumps(v, sort_keys=True)  # noqa: E731
    return sorted(map(key, x)) == sorted(map(key, y))


def _same_json(a, b):
    try:
        return json.loads(a) == json.loads(b)
    except ValueError:
        return False


# ---------------------------------------------------------------------------
@dataclass
class Finding:
    seed: int
    sql: str          # the case as generated
    minimal: str      # after shrinking
    kind: str
    detail: str
    where: str
    mariadb: str
    tributary: str
    allowed_by: str = None


def _answer(r):
    if r.error:
        return f"error {r.error[0]}: {r.error[1][:100]}"
    if len(r.rows) == 1 and len(r.rows[0]) == 1:
        return f"{r.rows[0][0]!r} ({r.classes[0]})"
    return f"{r.rows[:4]!r} {r.classes}"


class Oracle:
    """Both connections (already on the test database), the statistics of a
    run and its findings."""

    def __init__(self, mconn, tconn, batch=40, shrink_budget=80, warnings=False):
        self.m = mconn
        self.t = tconn
        # Also compare the warning codes of expressions (SHOW WARNINGS after
        # each statement; not in CI yet: see scripts/oracle_run.py --warnings).
        self.warnings = warnings
        self.batch = batch
        self.shrink_budget = shrink_budget
        self.cases = 0
        self.findings = []

    def both(self, sql):
        return run(self.m, sql, "MariaDB"), run(self.t, sql, "Tributary")

    def one(self, expr_sql):
        m, t = self.both(f"SELECT {expr_sql}")
        return m, t, result_diff(m, t)

    def check_exprs(self, seed, cases):
        """Run expression cases in batches; a batch with a difference is re-run
        one expression at a time."""
        for i in range(0, len(cases), self.batch):
            chunk = cases[i:i + self.batch]
            self.cases += len(chunk)
            if self.warnings:
                self.both(RESET_WARNINGS)
            m, t = self.both("SELECT " + ", ".join(c.sql for c in chunk))
            d = result_diff(m, t)
            if d is None and self.warnings and not m.error and self._warning_diff():
                for c in chunk:
                    self.both(RESET_WARNINGS)
                    m1, t1, d1 = self.one(c.sql)
                    if d1 is None and not m1.error:
                        w = self._warning_diff()
                        if w:
                            self.findings.append(Finding(
                                seed, c.sql, c.sql, "warnings", f"MariaDB {w[0]} / Tributary {w[1]}",
                                "SHOW WARNINGS", f"{_answer(m1)} warnings {w[0]} {w[2]!r}",
                                f"{_answer(t1)} warnings {w[1]} {w[3]!r}"))
                continue
            if d is None:
                continue
            for c in chunk:
                m1, t1, d = self.one(c.sql)
                if d:
                    self._record(seed, c.sql, m1, t1, d, shrink=True)

    def _warning_diff(self):
        """The warnings (sorted codes, then the first message) of the last
        statement on each side when their codes differ, else None."""
        codes, first = [], []
        for conn, who in ((self.m, "MariaDB"), (self.t, "Tributary")):
            rows = run(conn, "SHOW WARNINGS", who).rows or []
            codes.append(sorted(int(r[1]) for r in rows if str(r[1]).isdigit()
                                and not (who == "MariaDB" and int(r[1]) in MARIADB_ONLY_WARNINGS)))
            first.append(rows[0][2][:80] if rows else "")
        if codes[0] == codes[1]:
            return None
        return (codes[0], codes[1], first[0], first[1])

    def check_query(self, seed, case, ordered):
        self.cases += 1
        m, t = self.both(case.sql)
        d = result_diff(m, t, ordered)
        if d:
            self._record(seed, case.sql, m, t, d, shrink=False)

    def _record(self, seed, sql, m, t, d, shrink):
        minimal, mm, tm, dm = sql, m, t, d
        if shrink:
            minimal, mm, tm, dm = self.shrink(sql, m, t, d)
        f = Finding(seed, sql, minimal, dm[0], dm[1], dm[2], _answer(mm), _answer(tm))
        f.allowed_by = allowed(minimal, dm,
                               lambda check, q: self.verify(check, q, tm, expression=shrink))
        self.findings.append(f)

    def verify(self, check, sql, t, expression):
        """An allow entry's server check: whether MariaDB, given `sql`
        rewritten as MySQL 8 evaluates the part MariaDB gets wrong, answers
        exactly Tributary's `t`."""
        prefix = "SELECT " if expression else ""
        if check == "last_day_as_null":
            alt = re.sub(r"LAST_DAY\('\d{4}-(04|06|09|11)-31'\)", "CAST(NULL AS DATE)", sql)
        elif check == "quotients_exact":
            alt = sql
            for s, e in sorted(spans(sql), key=lambda p: p[0] - p[1]):
                part = sql[s:e]
                if part.startswith("(") and head(part) == "/" and part in alt:
                    # Parenthesized again: `x IN (a / b)` stays a list.
                    alt = alt.replace(part, f"(CAST({part} AS DECIMAL(65,30)))")
            if alt == sql:
                return False
        elif check == "log2_rounded":
            alt = sql
            for s, e in sorted(spans(sql), key=lambda p: p[0] - p[1]):
                if re.match(r"LOG2\(", sql[s:e]):
                    alt = alt.replace(sql[s:e], f"ROUND({sql[s:e]}, 12)", 1)
            if alt == sql:
                return False
        elif check == "negative_zero_as_zero":
            alt = sql
            for s, e in sorted(spans(sql), key=lambda p: p[1] - p[0]):
                part = sql[s:e]
                if not re.search(r"[/%]|\bMOD\b", part) or part not in alt:
                    continue
                r = run(self.m, f"SELECT CAST({part} AS DECIMAL(65,30))", "MariaDB")
                if not r.error and r.rows and r.rows[0][0] == NEG_ZERO_30:
                    alt = alt.replace(part, "0")
            if alt == sql:
                return False
        elif check == "held_comparison":
            if not expression or t.error or len(t.rows) != 1 or len(t.rows[0]) != 1:
                return False
            sql = sql.strip()
            parts = split_comparison(sql)
            if head(sql) == "NULLIF" and len(_args(sql, 0, len(sql))) == 2:
                x, y = _args(sql, 0, len(sql))
                parts = (x, "nullif", y)
            if parts is None or parts[1] == "<=>":
                return False
            a, op, b = parts
            r = run(self.m, f"SELECT CAST(({a}) - ({b}) AS DECIMAL(65,30))", "MariaDB")
            if r.error or len(r.rows) != 1:
                return False
            diff = r.rows[0][0]
            if diff is None:
                return t.rows[0][0] is None
            sign = (Decimal(diff) > 0) - (Decimal(diff) < 0)
            if op == "nullif":
                # MySQL 8: NULL when the held values are equal, else A.
                if sign == 0:
                    return t.rows[0][0] is None
                return result_diff(run(self.m, f"SELECT {a}", "MariaDB"), t) is None
            holds = {"=": sign == 0, "<>": sign != 0, "!=": sign != 0, "<": sign < 0,
                     "<=": sign <= 0, ">": sign > 0, ">=": sign >= 0}[op]
            return t.rows[0][0] == ("1" if holds else "0")
        else:
            return False
        m2 = run(self.m, prefix + alt, "MariaDB")
        return result_diff(m2, t, ordered=False) is None

    def shrink(self, sql, m, t, d):
        """Greedy: replace a sub-expression by one of its own sub-expressions
        (or take a sub-expression alone) while a difference of the same kind
        and detail remains; shortest candidates first, at most
        `shrink_budget` tries. (The result may show a different bug of the
        same kind: the generated case is printed beside it.)"""
        best = (sql, m, t, d)
        budget = self.shrink_budget
        improved = True
        while improved and budget > 0:
            improved = False
            for cand in candidates(best[0]):
                if budget <= 0:
                    break
                budget -= 1
                m1, t1, d1 = self.one(cand)
                if d1 and d1[:2] == d[:2]:
                    best = (cand, m1, t1, d1)
                    improved = True
                    break
        return best


def _code(sql, start=0, end=None):
    """(index, character) of sql[start:end] outside quoted text (the quotes
    themselves and a backslash's next character skipped)."""
    end = len(sql) if end is None else end
    q, i = None, start
    while i < end:
        ch = sql[i]
        if q:
            if ch == "\\":
                i += 2
                continue
            if ch == q:
                q = None
        elif ch in "'\"":
            q = ch
        else:
            yield i, ch
        i += 1


def spans(sql):
    """(start, end) of every balanced sub-expression that is a parenthesized
    group or a function call NAME(...), ignoring quoted text."""
    out, stack = [], []
    for i, ch in _code(sql):
        if ch == "(":
            j = i
            while j > 0 and (sql[j - 1].isalnum() or sql[j - 1] == "_"):
                j -= 1
            # `AS DECIMAL(5,2)` / `AS CHAR(3)` is a type, not an expression.
            stack.append(None if re.search(r"\bAS\s+$", sql[:j], re.I) and j < i else j)
        elif ch == ")" and stack:
            j = stack.pop()
            if j is not None:
                out.append((j, i + 1))
    return out


def _args(sql, s, e):
    """Top-level comma-separated arguments of the call/group sql[s:e]."""
    start = sql.index("(", s) + 1
    depth, parts = 0, []
    for i, ch in _code(sql, start, e - 1):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(sql[start:i].strip())
            start = i + 1
    parts.append(sql[start:e - 1].strip())
    return parts


def candidates(sql):
    """Smaller variants of `sql`, shortest first: each sub-expression alone,
    each sub-expression replaced by one of its sub-expressions, each
    argument replaced by NULL or a simple literal."""
    out = set()
    sp = spans(sql)
    for s, e in sp:
        out.add(sql[s:e])
        for s2, e2 in sp:
            if s <= s2 and e2 <= e and (s2, e2) != (s, e):
                out.add(sql[:s] + sql[s2:e2] + sql[e:])
        # operands / arguments of this span (not CAST's `x AS type`)
        if re.match(r"(CAST|CONVERT)\(", sql[s:e], re.I):
            continue
        for a in _args(sql, s, e):
            if a and a != sql:
                out.add(a)
    out.discard(sql)
    return sorted((c for c in out if len(c) < len(sql) and c.strip()), key=len)


def setup(m, t, db):
    """Create database `db` and the table of oracle_gen on both servers
    (connections without a current database); returns connections on `db`
    with MariaDB's session made MySQL 8-like."""
    for conn, ddl in ((m, MARIADB_DB), (t, TRIBUTARY_DB)):
        r = run(conn, ddl.format(db=db))
        assert r.error is None, r.error
    for conn in (m, t):
        conn.select_db(db)
    for stmt in MARIADB_SESSION:
        r = run(m, stmt)
        assert r.error is None, (stmt, r.error)
    for stmt in [oracle_gen.TABLE_DDL] + oracle_gen.table_inserts():
        for conn, who in ((m, "MariaDB"), (t, "Tributary")):
            r = run(conn, stmt)
            assert r.error is None, (who, stmt, r.error)


def run_seeds(oracle, seeds, enabled, exprs_per_seed, queries_per_seed):
    """Every case of these seeds through `oracle`."""
    for seed in seeds:
        oracle.check_exprs(seed, oracle_gen.expr_cases(seed, exprs_per_seed, enabled))
        if "table" in enabled:
            for case, ordered in oracle_gen.query_cases(seed, queries_per_seed, enabled):
                oracle.check_query(seed, case, ordered)


def classify(f):
    """The class of a finding: its kind and detail, and the outermost
    function or operator of its minimal expression."""
    return (f.kind, f.detail, head(f.minimal))


_OPS = re.compile(r"\b(NOT BETWEEN|BETWEEN|NOT IN|IN|NOT LIKE|LIKE|IS NOT|IS|XOR|AND|OR|DIV|MOD|"
                  r"REGEXP|RLIKE|COLLATE|INTERVAL)\b|<=>|<>|!=|<=|>=|[-+*/%=<>]")


def head(sql):
    """A short name for the outermost operation of an expression."""
    s = sql.strip()
    m = re.match(r"([A-Za-z_][A-Za-z_0-9]*)\(", s)
    sp = spans(s)
    if m and sp and sp[-1] == (0, len(s)):
        return m.group(1).upper()
    if s.startswith("SELECT"):
        return "query"
    # strip one level of parentheses and look for a top-level operator
    if s.startswith("(") and s.endswith(")") and (0, len(s)) in sp:
        s = s[1:-1]
    depth, q, top = 0, None, []
    for i, ch in enumerate(s):
        if q:
            if ch == q:
                q = None
            continue
        if ch in "'\"":
            q = ch
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif depth == 0:
            top.append(i)
    top = set(top)
    flat = "".join(s[i] if i in top else " " for i in range(len(s)))
    m = _OPS.search(flat)
    if m:
        return m.group(0).strip()
    if s.upper().startswith("CASE"):
        return "CASE"
    return "literal"
