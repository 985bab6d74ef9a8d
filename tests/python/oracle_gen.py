"""Generator of SQL expressions and queries for the MySQL oracle
(tests/python/test_mysql_oracle.py, scripts/oracle_run.py).

Owns: a seeded, deterministic generator of typed expressions (every operand
position may be NULL) and of queries over one small table, each case tagged
with the *feature groups* it uses, so a group can be left out of a run. Never:
talks to a server, decides what a difference is (see oracle_lib.py).

A case is one SELECT-list expression (`Case.sql`) or one whole query
(`Query.sql`). `random.Random(seed)` is the only source of randomness: the
same seed and groups always give the same cases.
"""

import random
from dataclasses import dataclass, field

# ---------------------------------------------------------------------------
# Feature groups. A case carries every group one of its parts belongs to; a
# run leaves out the cases of its disabled groups (the generator does not
# generate them at all, so the other cases of a seed do not change).
GROUPS = {
    "core": "NULL, INT, DOUBLE, clean strings, logic, comparison, control flow",
    "decimal": "DECIMAL literals and columns in arithmetic, `/`, SUM/AVG of exact values",
    "between_null": "BETWEEN / NOT BETWEEN with a NULL bound",
    "str2num": "strings used as numbers: '3x' + 1, '3x' = 3 (longest numeric prefix), '12' + 1 (a "
               "DOUBLE)",
    "invalid_date": "dates not in the calendar ('2020-02-30', '2021-13-01')",
    "zero_date": "dates with zero parts ('0000-00-00', '2020-00-10')",
    "regexp": "REGEXP / RLIKE / REGEXP_* functions",
    "collate": "COLLATE with a case-insensitive collation; mixed-case strings and LIKE over "
               "computed strings (LIKE ignores case in Tributary)",
    "overflow": "BIGINT / DOUBLE results out of range",
    "string_fn": "string functions",
    "math_fn": "numeric functions",
    "date_fn": "date and time functions over valid dates",
    "date_type": "the column type of a temporal result (DATE/TIME/DATETIME)",
    "json_fn": "JSON functions",
    "cast": "CAST / CONVERT",
    "like": "LIKE / NOT LIKE",
    "pad_space": "comparison of strings that differ only in trailing spaces",
    "intdiv": "DIV and % / MOD",
    "table": "queries over the table: WHERE / GROUP BY / aggregates / ORDER BY",
    "mod_op": "the infix operator `a MOD b` (the function MOD(a, b) is in math_fn)",
    "truth_tests": "IS [NOT] TRUE / FALSE / UNKNOWN of any value (0/1/NULL operands of IS TRUE "
                   "and IS FALSE are core)",
    "round": "ROUND of a DOUBLE (half to even) and ROUND/TRUNCATE with NULL digits",
    "result_type": "unary minus of a non-literal, CASE, FLOOR/CEIL of a DOUBLE, OCTET_LENGTH, "
                   "CHARACTER_LENGTH, UNIX_TIMESTAMP(x) (their column type is compared)",
    "time_of_date": "HOUR/MINUTE/SECOND/MICROSECOND/TIME of a date without a time part",
    "double_decimals": "DOUBLE values MySQL types with fixed decimals (PI(), TRUNCATE(x, 2)) "
                       "and printed with them",
    "null_type": "IF / IFNULL / COALESCE / NULLIF at the top of a column (the type of NULL "
                 "operands decides the column type)",
    "log_base": "LOG(b, x) with a base between 0 and 1",
    "null_arg_quirks": "WEEK(d, NULL)",
    "float_text": "a DOUBLE converted to text (CAST(EXP(100) AS CHAR))",
    "unsigned": "CAST(x AS UNSIGNED) and BIGINT UNSIGNED arithmetic",
    "between_mixed": "BETWEEN over a mix of strings and numbers (one comparison type for all three)",
}

INT_LITS = ["0", "1", "-1", "2", "3", "7", "10", "-5", "100", "42", "2147483647", "-2147483648"]
BIG_INT_LITS = ["9223372036854775807", "-9223372036854775808", "4611686018427387904"]
DEC_LITS = ["0.1", "0.2", "0.3", "1.50", "-2.25", "3.0", "12345678.99", "0.001", "99.999", "-0.5"]
DBL_LITS = ["1e0", "0.5e0", "-2.5e0", "1.5e1", "3.14159e0", "1e-3", "2.5e2", "-7.75e0", "1e3"]
BIG_DBL_LITS = ["1e308", "-1.7e308"]
# Strings that MySQL reads as numbers without a warning.
NUMSTR_LITS = ["'12'", "'-3'", "'0'", "'7'", "'100'"]
# Strings that are read as numbers by their longest numeric prefix (warning 1292).
BADNUM_LITS = ["'3x'", "'abc'", "' 12'", "'1e2'", "'1.5'", "'-2.5abc'", "''", "'0x10'"]
STR_LITS = ["''", "'a'", "'abc'", "'hello'", "'hello world'", "'x%y'", "'a_b'", "'banana'",
            "'zz'", "'ab'", "'b'", "'%'", "'l'", "'o'", "'123'", "'é'", "'naïve'"]
MIXED_CASE_LITS = ["'A'", "'ABC'", "'Hello'", "'BANANA'"]
PAD_LITS = ["'a '", "'abc  '", "' a'"]
LIKE_PATTERNS = ["'%'", "'a%'", "'%a%'", "'_b%'", "'h_llo%'", "'%o'", "'abc'", "''", "'%\\_%'",
                 "'x\\%y'", "'_'", "'%l%l%'"]
DATE_LITS = ["'2020-01-31'", "'2021-12-31'", "'1999-02-28'", "'2024-02-29'", "'2000-01-01'",
             "'1970-01-01'", "'2023-07-15'", "'2038-01-19'"]
DATETIME_LITS = ["'2020-01-31 12:34:56'", "'2021-12-31 23:59:59'", "'1999-02-28 00:00:01'",
                 "'2024-02-29 08:00:00'", "'2001-09-09 01:46:40'", "'2023-07-15 18:30:15.250000'"]
BAD_DATE_LITS = ["'2020-02-30'", "'2021-13-01'", "'2021-04-31'", "'abcd'"]
ZERO_DATE_LITS = ["'0000-00-00'", "'2020-00-10'", "'2020-05-00'"]
# Objects with their keys in MySQL 8's stored order (ALLOW["json_key_order"]).
JSON_DOCS = ["'{\"a\": 1, \"b\": [1, 2, 3]}'", "'[1, \"x\", null, true]'", "'{\"a\": {\"c\": \"d\"}}'",
             "'3'", "'\"s\"'", "'[]'", "'{}'", "'{\"a\": [{\"k\": 1}], \"b\": 2.5}'"]
ROOT = "'$'"
TRIM_CHARS = ["'a'", "'x'", "'l'", "' '", "NULL"]
PAD_CHARS = ["'*'", "'ab'", "NULL", "''"]
JSON_PATHS = ["'$.a'", "'$.b'", "'$.b[1]'", "'$[0]'", "'$[1]'", "'$.a.c'", "'$'", "'$.z'",
              "'$.a[0].k'", "'$[3]'"]
UNITS = ["MICROSECOND", "SECOND", "MINUTE", "HOUR", "DAY", "WEEK", "MONTH", "QUARTER", "YEAR"]
DATE_FORMATS = ["'%Y-%m-%d'", "'%d/%m/%Y %H:%i:%s'", "'%W %M %e %Y'", "'%a %b %c %j'",
                "'%y %D %T %p'", "'%U %u %V %v %X %x'", "'%f %h %I %k %l %r %S %w'"]

# The table both servers get (same DDL, same rows).
TABLE_DDL = ("CREATE TABLE t (id INT PRIMARY KEY, i INT, j BIGINT, d DECIMAL(10,2), "
             "f DOUBLE, s VARCHAR(20), dt DATE, ts DATETIME)")
TABLE_ROWS = [
    (1, 1, 10, "1.50", "0.5", "'a'", "'2020-01-31'", "'2020-01-31 12:00:00'"),
    (2, 2, 20, "2.25", "-1.25", "'abc'", "'2021-12-31'", "'2021-12-31 23:59:59'"),
    (3, None, 10, "0.10", "1e10", "'hello'", None, "'1999-02-28 00:00:01'"),
    (4, 2, None, "0.10", None, "'abc'", "'2024-02-29'", None),
    (5, 3, 30, None, "2.5", None, "'2020-01-31'", "'2020-01-31 12:00:00'"),
    (6, -1, -10, "-3.75", "0", "''", "'1970-01-01'", "'1970-01-01 00:00:00'"),
    (7, 2, 20, "2.25", "-1.25", "'b'", "'2000-02-29'", "'2000-02-29 06:07:08'"),
    (8, None, None, None, None, None, None, None),
    (9, 100, 2147483648, "99999.99", "3.14159", "'zz'", "'2038-01-19'", "'2038-01-19 03:14:07'"),
    (10, 0, 0, "0.00", "0e0", "'12'", "'2023-07-15'", "'2023-07-15 18:30:15'"),
    (11, 7, 7, "7.00", "7", "'x%y'", "'2023-07-15'", "'2001-09-09 01:46:40'"),
    (12, 1, 10, "1.50", "0.5", "'a'", "'2020-01-31'", "'2020-01-31 12:00:00'"),
]
TABLE_COLS = {  # column → generator type
    "id": "int", "i": "int", "j": "int", "d": "dec", "f": "dbl", "s": "str",
    "dt": "date", "ts": "date",
}


def table_inserts():
    out = []
    for r in TABLE_ROWS:
        vals = ", ".join("NULL" if v is None else str(v) for v in r)
        out.append(f"INSERT INTO t VALUES ({vals})")
    return out


@dataclass
class Case:
    sql: str
    groups: frozenset = field(default_factory=frozenset)


class Gen:
    """Typed expression generator. `expr(ty)` returns (sql, groups) for
    ty in int | dec | dbl | num | str | date | bool | json."""

    MAX_DEPTH = 4

    def __init__(self, seed, enabled, columns=False):
        self.r = random.Random(seed)
        self.enabled = set(enabled)
        self.columns = columns
        self.groups = set()
        self.top = False
        self.at_top = False
        self.in_date_arg = False

    # -- helpers ------------------------------------------------------------
    def on(self, g):
        return g in self.enabled

    def pick(self, xs):
        return self.r.choice(xs)

    def use(self, *gs):
        self.groups.update(gs)

    def null_or(self, f, p=0.12):
        if self.r.random() < p:
            return "NULL"
        return f()

    def case(self, ty=None, depth=None):
        """One expression case of a random type."""
        self.groups = {"core"}
        ty = ty or self.pick(["int", "int", "dec", "dbl", "num", "str", "str", "date", "bool",
                              "bool", "bool", "json"])
        if ty == "json" and not self.on("json_fn"):
            ty = "str"
        if ty == "dec" and not self.on("decimal"):
            ty = "int"
        sql = self.column(ty, depth if depth is not None else self.r.randint(0, self.MAX_DEPTH))
        return Case(sql, frozenset(self.groups))

    # -- leaves -------------------------------------------------------------
    def leaf(self, ty):
        r = self.r
        if r.random() < 0.12:
            return "NULL"
        if self.columns and r.random() < 0.5:
            cols = [c for c, t in TABLE_COLS.items() if t == ty or (ty == "num" and t in
                    ("int", "dbl") + (("dec",) if self.on("decimal") else ()))]
            if ty == "str" and r.random() < 0.3:
                cols = ["s"]
            if ty == "date" and not self.temporal_ok():
                cols = []
            if cols:
                c = self.pick(cols)
                if c == "d":
                    self.use("decimal")
                return c
        if ty == "int":
            if self.on("overflow") and r.random() < 0.05:
                self.use("overflow")
                return self.pick(BIG_INT_LITS)
            return self.pick(INT_LITS)
        if ty == "dec":
            self.use("decimal")
            return self.pick(DEC_LITS)
        if ty == "dbl":
            if self.on("overflow") and r.random() < 0.05:
                self.use("overflow")
                return self.pick(BIG_DBL_LITS)
            return self.pick(DBL_LITS)
        if ty == "num":
            k = r.random()
            if k < 0.4:
                return self.leaf("int")
            if k < 0.6 and self.on("decimal"):
                return self.leaf("dec")
            if k < (0.85 if not self.on("str2num") else 0.7):
                return self.leaf("dbl")
            if self.on("str2num") and r.random() < 0.7:
                self.use("str2num")
                return self.pick(BADNUM_LITS)
            return self.pick(NUMSTR_LITS)
        if ty == "str":
            k = r.random()
            if k < 0.1 and self.on("pad_space"):
                self.use("pad_space")
                return self.pick(PAD_LITS)
            if k < 0.2 and self.on("collate"):
                self.use("collate")
                return self.pick(MIXED_CASE_LITS)
            if k < 0.3:
                return self.pick(NUMSTR_LITS)
            return self.pick(STR_LITS)
        if ty == "date":
            return self.date_lit()
        if ty == "bool":
            return self.pick(["TRUE", "FALSE", "0", "1", "NULL"])
        if ty == "json":
            return self.pick(JSON_DOCS)
        raise ValueError(ty)

    def date_lit(self):
        if self.on("zero_date") and self.r.random() < 0.05:
            self.use("zero_date")
            return self.pick(ZERO_DATE_LITS)
        if self.on("invalid_date") and self.r.random() < 0.25:
            self.use("invalid_date")
            return self.pick(BAD_DATE_LITS)
        return self.pick(DATE_LITS + DATETIME_LITS)

    # -- expressions --------------------------------------------------------
    def expr(self, ty, depth):
        """An expression of type `ty`; `self.top` says it is the outermost
        one of a column (whose protocol type is compared)."""
        top, self.top = self.top, False
        saved = self.in_date_arg
        if ty != "date":
            self.in_date_arg = False
        try:
            if depth <= 0 or self.r.random() < 0.2:
                return self.leaf(ty)
            self.at_top = top
            f = getattr(self, "e_" + ty)
            return f(depth - 1)
        finally:
            self.in_date_arg = saved

    def dsub(self, d):
        """The argument of a date function: temporal values may appear
        here even with date_type off (a date function reads them as dates)."""
        saved, self.in_date_arg = self.in_date_arg, True
        try:
            return self.sub("date", d)
        finally:
            self.in_date_arg = saved

    def temporal_ok(self):
        if self.on("date_type"):
            self.use("date_type")
            return True
        return self.in_date_arg

    def top_ok(self, group):
        """Whether a production of `group` may be used here: always when
        nested, at the top of a column only with the group on (null_type);
        other groups: anywhere only with the group on."""
        if group == "null_type" and not self.at_top:
            return True
        if self.on(group):
            self.use(group)
            return True
        return False

    def column(self, ty, depth):
        self.top = True
        return self.expr(ty, depth)

    def sub(self, ty, depth):
        return self.expr(ty, depth)

    def e_num(self, d):
        self.top = self.at_top
        return self.expr(self.pick(["int", "dbl"] + (["dec"] if self.on("decimal") else [])), d + 1)

    def e_int(self, d):
        r = self.r
        top = self.at_top
        opts = ["arith", "control", "strlen"]
        if self.top_ok("result_type"):
            opts.append("neg")
        if self.on("intdiv"):
            opts.append("intdiv")
        if self.on("math_fn"):
            opts += ["mathi", "mathi"]
        if self.on("date_fn"):
            opts += ["datei", "datei"]
        if self.on("json_fn"):
            opts.append("jsoni")
        if self.on("cast"):
            opts.append("cast")
        k = self.pick(opts)
        if k == "arith":
            op = self.pick(["+", "-", "*"])
            return f"({self.sub('int', d)} {op} {self.sub('int', d)})"
        if k == "neg":
            return f"-({self.sub('int', d)})"
        if k == "intdiv":
            self.use("intdiv")
            op = self.pick(["DIV", "%"] + (["MOD"] if self.on("mod_op") else []))
            if op == "MOD":
                self.use("mod_op")
            if op == "DIV" and not self.on("overflow"):
                # Beyond 2^53 DIV loses digits (found by this oracle): small operands.
                pool = INT_LITS[:10] + ["NULL"] + (["i"] if self.columns else [])
                return f"({self.pick(pool)} DIV {self.pick(pool)})"
            return f"({self.sub('int', d)} {op} {self.sub('int', d)})"
        if k == "control":
            self.at_top = top
            return self.control("int", d)
        if k == "strlen":
            self.use("string_fn")
            self.at_top = top
            fn = self.pick(["LENGTH", "CHAR_LENGTH"]
                           + (["OCTET_LENGTH", "CHARACTER_LENGTH"] if self.top_ok("result_type") else []))
            if r.random() < 0.3:
                return f"{self.pick(['INSTR', 'LOCATE'])}({self.sub('str', d)}, {self.sub('str', d)})"
            if r.random() < 0.2:
                return f"POSITION({self.leaf('str')} IN {self.leaf('str')})"
            if r.random() < 0.2:
                # A needle that is never '': ALLOW["locate_empty_needle"].
                needle = self.pick([x for x in STR_LITS if x != "''"])
                return f"LOCATE({needle}, {self.sub('str', d)}, {self.sub('int', d)})"
            return f"{fn}({self.sub('str', d)})"
        if k == "mathi":
            self.use("math_fn")
            fn = self.pick(["ABS", "SIGN", "CEIL", "CEILING", "FLOOR"]
                           + (["ROUND"] if self.on("round") else []))
            if fn == "ROUND":
                self.use("round")
            if fn == "SIGN":
                return f"SIGN({self.sub(self.pick(['int', 'dbl']), d)})"
            # Of an integer (or a DECIMAL): an integer; of a DOUBLE it is a DOUBLE.
            arg = self.sub(self.pick(['int', 'dec']) if self.on('decimal') else 'int', d)
            if arg == "NULL" and not self.on("null_type"):
                arg = self.literal("int")  # CEIL(NULL) is a DOUBLE
            return f"{fn}({arg})"
        if k == "datei":
            self.use("date_fn")
            fn = self.pick(["YEAR", "MONTH", "DAY", "DAYOFMONTH", "HOUR", "MINUTE", "SECOND",
                            "MICROSECOND", "DAYOFWEEK", "DAYOFYEAR", "WEEKDAY", "WEEK", "QUARTER",
                            "TO_DAYS", "DATEDIFF", "TIMESTAMPDIFF"]
                           + (["UNIX_TIMESTAMP"] if self.top_ok("result_type") else []))
            if fn in ("HOUR", "MINUTE", "SECOND", "MICROSECOND"):
                return f"{fn}({self.time_arg(d)})"
            if fn == "DATEDIFF":
                return f"DATEDIFF({self.dsub(d)}, {self.dsub(d)})"
            if fn == "TIMESTAMPDIFF":
                unit = self.pick(UNITS)
                return f"TIMESTAMPDIFF({unit}, {self.dsub(d)}, {self.dsub(d)})"
            if fn == "WEEK" and r.random() < 0.5:
                mode = str(r.randint(0, 7))
                if self.on("null_arg_quirks") and r.random() < 0.15:
                    self.use("null_arg_quirks")
                    mode = "NULL"
                return f"WEEK({self.dsub(d)}, {mode})"
            if fn == "UNIX_TIMESTAMP":
                # Dates only (a DATETIME with fractions answers a DECIMAL).
                return f"UNIX_TIMESTAMP({self.pick(DATE_LITS + DATETIME_LITS[:5])})"
            return f"{fn}({self.dsub(d)})"
        if k == "jsoni":
            self.use("json_fn")
            fn = self.pick(["JSON_LENGTH", "JSON_DEPTH", "JSON_VALID", "JSON_CONTAINS",
                            "JSON_CONTAINS_PATH"])
            if fn == "JSON_LENGTH" and r.random() < 0.5:
                return f"JSON_LENGTH({self.sub('json', d)}, {self.pick(JSON_PATHS)})"
            if fn == "JSON_CONTAINS":
                return f"JSON_CONTAINS({self.sub('json', d)}, {self.pick(JSON_DOCS)})"
            if fn == "JSON_CONTAINS_PATH":
                return (f"JSON_CONTAINS_PATH({self.sub('json', d)}, {self.pick(['one', 'all'])!r}, "
                        f"{self.pick(JSON_PATHS)}, {self.pick(JSON_PATHS)})")
            if fn == "JSON_VALID":
                return f"JSON_VALID({self.pick(JSON_DOCS + STR_LITS)})"
            return f"{fn}({self.sub('json', d)})"
        if k == "cast":
            self.use("cast")
            src = self.pick(["int", "dbl", "str"] + (["dec"] if self.on("decimal") else []))
            arg = self.sub(src, d)
            if src == "str":
                arg = self.pick(NUMSTR_LITS) if not self.on("str2num") else arg
                if self.on("str2num"):
                    self.use("str2num")
            if src in ("dbl", "dec"):
                # A DOUBLE is rounded half to even (rint), a DECIMAL half up.
                if self.on("round"):
                    self.use("round")
                else:
                    arg = self.sub("int", d)
            if r.random() < 0.2 and self.on("unsigned"):
                self.use("unsigned")
                return f"CAST({arg} AS UNSIGNED)"
            if r.random() < 0.3:
                return f"CONVERT({arg}, SIGNED)"
            return f"CAST({arg} AS {self.pick(['SIGNED', 'SIGNED INTEGER'])})"
        raise AssertionError(k)

    def e_dec(self, d):
        self.use("decimal")
        top = self.at_top
        k = self.pick(["arith", "arith", "div", "control", "round", "cast", "neg"])
        if k == "neg" and not self.top_ok("result_type"):
            k = "arith"
        if k == "arith":
            op = self.pick(["+", "-", "*"])
            a, b = self.pick([("dec", "dec"), ("dec", "int"), ("int", "dec")])
            return f"({self.sub(a, d)} {op} {self.sub(b, d)})"
        if k == "div":
            a, b = self.pick([("dec", "dec"), ("int", "int"), ("dec", "int"), ("int", "dec")])
            return f"({self.sub(a, d)} / {self.sub(b, d)})"
        if k == "neg":
            return f"-({self.sub('dec', d)})"
        if k == "control":
            self.at_top = top
            return self.control("dec", d)
        if k == "round":
            self.use("math_fn")
            fn = self.pick(["ROUND", "TRUNCATE", "ABS"])
            if fn == "ABS":
                return f"ABS({self.sub('dec', d)})"
            return f"{fn}({self.sub('dec', d)}, {self.digits()})"
        if k == "cast":
            self.use("cast")
            p = self.r.randint(1, 20)
            s = self.r.randint(0, min(p, 6))
            return f"CAST({self.sub(self.pick(['int', 'dec', 'dbl']), d)} AS DECIMAL({p},{s}))"
        raise AssertionError(k)

    def e_dbl(self, d):
        r = self.r
        top = self.at_top
        opts = ["arith", "control"]
        if self.top_ok("result_type"):
            opts.append("neg")
        if self.on("math_fn"):
            opts += ["math", "math", "math2"]
        if self.on("cast"):
            opts.append("cast")
        k = self.pick(opts)
        if k == "arith":
            op = self.pick(["+", "-", "*", "/"])
            if self.on("str2num") and r.random() < 0.25:
                # A string in arithmetic is read as a DOUBLE ('12' + 1 is 13e0).
                self.use("str2num")
                lit = self.pick(NUMSTR_LITS + BADNUM_LITS)
                return f"({lit} {op} {self.sub('int', d)})"
            a, b = self.pick([("dbl", "dbl"), ("dbl", "int"), ("int", "dbl")]
                             + ([("dbl", "dec")] if self.on("decimal") else []))
            return f"({self.sub(a, d)} {op} {self.sub(b, d)})"
        if k == "neg":
            return f"-({self.sub('dbl', d)})"
        if k == "control":
            self.at_top = top
            return self.control("dbl", d)
        if k == "math":
            self.use("math_fn")
            fn = self.pick(["SQRT", "EXP", "SIN", "COS", "TAN", "ASIN", "ACOS", "ATAN",
                            "LN", "LOG2", "LOG10", "LOG", "DEGREES", "RADIANS", "ABS"]
                           + (["COT"] if self.on("overflow") else [])
                           + (["FLOOR", "CEIL"] if self.top_ok("result_type") else [])
                           + (["ROUND"] if self.on("round") else []))
            if fn == "ROUND":
                self.use("round")
            if fn == "COT":
                self.use("overflow")  # COT(0) is 1690
            arg = self.sub(self.pick(["dbl", "int"]), d)
            if fn in ("FLOOR", "CEIL", "ABS", "ROUND"):
                # Of an integer these are integers.
                arg = self.sub("dbl", d)
            if fn == "EXP":
                arg = self.pick(INT_LITS[:10] + DBL_LITS[:8] + ["NULL"])
            return f"{fn}({arg})"
        if k == "math2":
            self.use("math_fn")
            fn = self.pick(["POW", "POWER", "ATAN2", "ATAN", "LOG", "ROUND", "TRUNCATE", "MOD",
                            "PI", "GREATEST", "LEAST"])
            if fn == "ROUND" and not self.on("round"):
                fn = "TRUNCATE"
            if fn == "TRUNCATE" and not self.on("double_decimals"):
                fn = "ATAN2"
            if fn == "PI":
                if not self.top_ok("double_decimals"):
                    return "(PI() * 1e0)"
                return "PI()"
            if fn in ("POW", "POWER"):
                # A negative base to a fractional power is 1690 (overflow group).
                # POW(0, -1) is 1690 too.
                exps = ["2", "3", "0", "2e0"] + (["0.5e0", "-1"] if self.on("overflow") else [])
                return f"{fn}({self.sub('dbl', d)}, {self.null_or(lambda: self.pick(exps))})"
            if fn in ("ROUND", "TRUNCATE"):
                if fn == "ROUND":
                    self.use("round")
                if not self.top_ok("double_decimals"):
                    return f"{fn}({self.sub('dbl', d)}, 0)"
                return f"{fn}({self.sub('dbl', d)}, {self.digits()})"
            if fn in ("GREATEST", "LEAST"):
                n = r.randint(2, 4)
                return f"{fn}({', '.join(self.sub('dbl', d) for _ in range(n))})"
            if fn == "MOD":
                self.use("intdiv")
            if fn == "LOG":
                if self.on("log_base") and r.random() < 0.5:
                    self.use("log_base")
                    return f"LOG({self.pick(['0.5e0', '1e-3'])}, {self.sub('dbl', d)})"
                return f"LOG({self.pick(['2', '10', '2.5e0', '1.5e1', 'NULL'])}, {self.sub('dbl', d)})"
            return f"{fn}({self.sub('dbl', d)}, {self.sub(self.pick(['dbl', 'int']), d)})"
        if k == "cast":
            self.use("cast")
            return f"CAST({self.sub(self.pick(['int', 'dbl']), d)} AS DOUBLE)"
        raise AssertionError(k)

    def e_str(self, d):
        r = self.r
        top = self.at_top
        opts = ["control", "control"]
        if self.on("string_fn"):
            opts += ["fn"] * 6
        if self.on("date_fn"):
            opts += ["datestr"]
        if self.on("json_fn"):
            opts += ["jsonstr"]
        if self.on("cast"):
            opts.append("cast")
        k = self.pick(opts)
        if k == "control":
            self.at_top = top
            return self.control("str", d)
        if k == "fn":
            self.use("string_fn")
            fn = self.pick(["LOWER", "UPPER", "LCASE", "UCASE", "CONCAT", "CONCAT_WS", "SUBSTRING",
                            "SUBSTR", "MID", "LEFT", "RIGHT", "LPAD", "RPAD", "LTRIM", "RTRIM", "TRIM",
                            "REPLACE", "REVERSE", "REPEAT", "SUBSTRING_FROM", "TRIM_FROM"]
                           + (["SPACE"] if self.on("pad_space") else []))
            s = lambda: self.sub("str", d)  # noqa: E731
            n = lambda: self.null_or(lambda: str(r.randint(-3, 8)))  # noqa: E731
            if fn in ("LOWER", "UPPER", "LCASE", "UCASE", "REVERSE", "LTRIM", "RTRIM", "TRIM"):
                return f"{fn}({s()})"
            if fn == "CONCAT":
                return f"CONCAT({', '.join(self.sub(self.pick(['str', 'str', 'int']), d) for _ in range(r.randint(1, 4)))})"
            if fn == "CONCAT_WS":
                return f"CONCAT_WS({', '.join(s() for _ in range(r.randint(2, 4)))})"
            if fn in ("SUBSTRING", "SUBSTR", "MID"):
                if r.random() < 0.5:
                    return f"{fn}({s()}, {n()})"
                return f"{fn}({s()}, {n()}, {n()})"
            if fn == "SUBSTRING_FROM":
                if r.random() < 0.5:
                    return f"SUBSTRING({s()} FROM {n()})"
                return f"SUBSTRING({s()} FROM {n()} FOR {n()})"
            if fn == "TRIM_FROM":
                where = self.pick(["LEADING", "TRAILING", "BOTH"])
                rem = self.pick(TRIM_CHARS)
                return f"TRIM({where} {rem} FROM {s()})"
            if fn in ("LEFT", "RIGHT"):
                return f"{fn}({s()}, {n()})"
            if fn in ("LPAD", "RPAD"):
                return f"{fn}({s()}, {n()}, {self.pick(PAD_CHARS)})"
            if fn == "REPLACE":
                # A replacement that is never NULL: ALLOW["replace_null_argument"].
                return f"REPLACE({s()}, {s()}, {self.pick(STR_LITS)})"
            if fn == "REPEAT":
                return f"REPEAT({s()}, {n()})"
            if fn == "SPACE":
                self.use("pad_space")  # trailing spaces
                return f"SPACE({n()})"
        if k == "datestr":
            self.use("date_fn")
            fn = self.pick(["MONTHNAME", "DAYNAME", "DATE_FORMAT", "DATE_FORMAT", "FROM_UNIXTIME",
                            "TIME"])
            if fn == "TIME":
                # TIME is a string here, never an argument of a date
                # function (a TIME read as a date is today's date: the clock).
                if not self.top_ok("date_type"):
                    return f"CAST(TIME({self.time_arg(d)}) AS CHAR)"
                return f"TIME({self.time_arg(d)})"
            if fn == "DATE_FORMAT":
                return f"DATE_FORMAT({self.dsub(d)}, {self.pick(DATE_FORMATS)})"
            if fn == "FROM_UNIXTIME":
                return (f"FROM_UNIXTIME({self.null_or(lambda: str(r.randint(0, 2_000_000_000)))}, "
                        f"{self.pick(DATE_FORMATS)})")
            return f"{fn}({self.dsub(d)})"
        if k == "jsonstr":
            self.use("json_fn")
            fn = self.pick(["JSON_TYPE", "JSON_UNQUOTE", "JSON_QUOTE", "JSON_EXTRACT",
                            "JSON_KEYS", "JSON_OBJECT", "JSON_ARRAY", "JSON_SET", "JSON_INSERT",
                            "JSON_REPLACE", "JSON_REMOVE", "JSON_ARRAY_APPEND",
                            "JSON_MERGE_PRESERVE", "ARROW"])
            if fn == "JSON_TYPE" and not top:
                # Compared or converted, MariaDB's JSON_TYPE is case-insensitive
                # text (ALLOW["json_type_collation"]): only at the top of a column.
                fn = "JSON_UNQUOTE"
            return self.json_call(fn, d)
        if k == "cast":
            self.use("cast")
            src = self.pick(["int", "dbl", "str", "date"] + (["dec"] if self.on("decimal") else []))
            if src == "dec":
                self.use("decimal")
            if src == "dbl":
                if not self.on("float_text"):
                    src = "int"
                else:
                    self.use("float_text")
            if r.random() < 0.5:
                return f"CAST({self.sub(src, d)} AS CHAR)"
            return f"CAST({self.sub(src, d)} AS CHAR({r.randint(0, 5)}))"
        raise AssertionError(k)

    def json_call(self, fn, d):
        j = lambda: self.sub("json", d)  # noqa: E731
        p = lambda: self.pick(JSON_PATHS)  # noqa: E731
        v = lambda: self.pick(INT_LITS[:6] + STR_LITS[:6] + ["NULL"])  # noqa: E731
        if fn == "JSON_TYPE":
            return f"JSON_TYPE({j()})"
        if fn == "JSON_UNQUOTE":
            return f"JSON_UNQUOTE({self.pick(JSON_DOCS + ['NULL'])})"
        if fn == "JSON_QUOTE":
            return f"JSON_QUOTE({self.sub('str', d)})"
        if fn == "JSON_EXTRACT":
            return f"JSON_EXTRACT({j()}, {', '.join(p() for _ in range(self.r.randint(1, 2)))})"
        if fn == "ARROW":
            # `->` needs a column on the left in MySQL; JSON_UNQUOTE(JSON_EXTRACT()).
            return f"JSON_UNQUOTE(JSON_EXTRACT({j()}, {p()}))"
        if fn == "JSON_KEYS":
            return f"JSON_KEYS({j()})"
        if fn == "JSON_OBJECT":
            n = self.r.randint(0, 2)
            keys = ["'k1'", "'k2'"][:n]
            return f"JSON_OBJECT({', '.join(k + ', ' + v() for k in keys)})"
        if fn == "JSON_ARRAY":
            return f"JSON_ARRAY({', '.join(v() for _ in range(self.r.randint(0, 3)))})"
        if fn == "JSON_ARRAY_APPEND":
            # The root only: ALLOW["json_array_append_missing_path"].
            return f"JSON_ARRAY_APPEND({j()}, {ROOT}, {v()})"
        if fn in ("JSON_SET", "JSON_INSERT", "JSON_REPLACE"):
            return f"{fn}({j()}, {p()}, {v()})"
        if fn == "JSON_REMOVE":
            # Not '$' (see oracle_lib.ALLOW["json_remove_root"]).
            return f"JSON_REMOVE({j()}, {self.pick([x for x in JSON_PATHS if x != ROOT])})"
        if fn == "JSON_MERGE_PRESERVE":
            return f"JSON_MERGE_PRESERVE({j()}, {j()})"
        raise AssertionError(fn)

    def e_json(self, d):
        self.use("json_fn")
        fn = self.pick(["JSON_EXTRACT", "JSON_OBJECT", "JSON_ARRAY", "JSON_SET", "JSON_REMOVE",
                        "JSON_MERGE_PRESERVE", "JSON_ARRAY_APPEND"])
        return self.json_call(fn, d)

    def e_date(self, d):
        """A temporal value. Functions whose MySQL result type is DATE /
        DATETIME are the `date_type` group (their column type is compared)."""
        r = self.r
        top = self.at_top
        opts = ["control"]
        if self.temporal_ok():
            if self.on("date_fn"):
                opts += ["interval", "interval", "fn"]
            if self.on("cast") and self.on("date_type"):
                opts.append("cast")
        k = self.pick(opts)
        if k == "control":
            self.at_top = top
            return self.control("date", d)
        if k == "interval":
            self.use("date_fn")
            unit = self.pick(UNITS)
            n = self.null_or(lambda: str(r.randint(-40, 40)))
            form = r.randint(0, 4)
            if form == 0:
                return f"DATE_ADD({self.dsub(d)}, INTERVAL {n} {unit})"
            if form == 1:
                return f"DATE_SUB({self.dsub(d)}, INTERVAL {n} {unit})"
            if form == 2:
                return f"({self.dsub(d)} + INTERVAL {n} {unit})"
            if form == 3:
                return f"{self.pick(['ADDDATE', 'SUBDATE'])}({self.dsub(d)}, {n})"
            return f"TIMESTAMPADD({unit}, {n}, {self.dsub(d)})"
        if k == "fn":
            self.use("date_fn")
            fn = self.pick(["DATE", "LAST_DAY", "STR_TO_DATE", "FROM_UNIXTIME"])
            if fn == "STR_TO_DATE":
                a = self.pick([("'31/01/2020'", "'%d/%m/%Y'"), ("'2021-12-31 10:11:12'", "'%Y-%m-%d %H:%i:%s'"),
                               ("'Jan 5 2020'", "'%b %e %Y'"), ("'20200115'", "'%Y%m%d'")])
                return f"STR_TO_DATE({a[0]}, {a[1]})"
            if fn == "FROM_UNIXTIME":
                return f"FROM_UNIXTIME({self.null_or(lambda: str(r.randint(0, 2_000_000_000)))})"
            return f"{fn}({self.dsub(d)})"
        if k == "cast":
            self.use("cast")
            return f"CAST({self.dsub(d)} AS {self.pick(['DATE', 'DATETIME'])})"
        raise AssertionError(k)

    def time_arg(self, d):
        """The argument of a time-of-day function: a DATETIME literal, or
        anything temporal with the time_of_date group on."""
        if self.on("time_of_date") and self.r.random() < 0.5:
            self.use("time_of_date")
            return self.dsub(d)
        return self.null_or(lambda: self.pick(DATETIME_LITS))

    def digits(self):
        """The digits argument of ROUND / TRUNCATE."""
        if self.on("round") and self.r.random() < 0.15:
            self.use("round")
            return "NULL"
        return str(self.r.randint(-2, 4))

    def control(self, ty, d):
        r = self.r
        if not self.top_ok("null_type"):
            # At the top of a column without null_type: a plain leaf.
            return self.leaf(ty)
        opts = ["if", "ifnull", "coalesce", "nullif"]
        if self.top_ok("result_type"):
            opts += ["case", "case_op"]
        k = self.pick(opts)
        s = lambda: self.branch(ty, d)  # noqa: E731
        if k == "if":
            return f"IF({self.sub('bool', d)}, {s()}, {s()})"
        if k == "ifnull":
            return f"IFNULL({s()}, {s()})"
        if k == "coalesce":
            return f"COALESCE({', '.join(s() for _ in range(r.randint(1, 4)))})"
        if k == "nullif":
            return f"NULLIF({s()}, {s()})"
        if k == "case":
            arms = " ".join(f"WHEN {self.sub('bool', d)} THEN {s()}" for _ in range(r.randint(1, 3)))
            els = f" ELSE {s()}" if r.random() < 0.6 else ""
            return f"CASE {arms}{els} END"
        if k == "case_op":
            t = self.pick(["int", "str"])
            arms = " ".join(f"WHEN {self.sub(t, d)} THEN {s()}" for _ in range(r.randint(1, 3)))
            els = f" ELSE {s()}" if r.random() < 0.6 else ""
            return f"CASE {self.sub(t, d)} {arms}{els} END"
        raise AssertionError(k)

    def branch(self, ty, d):
        """A value a control-flow function may return: NULL itself, or an
        expression without a NULL inside unless null_type is on (the type of
        `3 * NULL` is DOUBLE in MySQL and it decides the column's type)."""
        for _ in range(6):
            x = self.sub(ty, d)
            if x == "NULL" or "NULL" not in x:
                return x
            if self.on("null_type"):
                self.use("null_type")
                return x
        return self.literal(ty)

    def cmp_type(self):
        opts = ["int", "int", "dbl", "str", "num"]
        if self.on("decimal"):
            opts += ["dec", "dec"]
        if self.on("date_fn"):
            opts.append("date")
        return self.pick(opts)

    def e_bool(self, d):
        r = self.r
        top = self.at_top
        opts = ["cmp", "cmp", "cmp", "logic", "logic", "not", "is", "isnull", "in", "between",
                "control"]
        if self.on("like"):
            opts.append("like")
        if self.on("regexp"):
            opts.append("regexp")
        if self.on("collate"):
            opts.append("collate")
        k = self.pick(opts)
        if k == "cmp":
            t = self.cmp_type()
            op = self.pick(["=", "<>", "!=", "<", "<=", ">", ">=", "<=>"])
            a, b = self.sub(t, d), self.sub(t, d)
            if op == "<=>" and "JSON_" in a + b:
                op = "="  # ALLOW["mariadb_crash_nullsafe_json"]
            return f"({a} {op} {b})"
        if k == "logic":
            op = self.pick(["AND", "OR", "XOR"])
            return f"({self.sub('bool', d)} {op} {self.sub('bool', d)})"
        if k == "not":
            return f"NOT ({self.sub('bool', d)})"
        if k == "is":
            if self.on("truth_tests"):
                self.use("truth_tests")
                what = self.pick(["TRUE", "FALSE", "UNKNOWN"])
                neg = self.pick(["", "NOT "])
                return f"({self.sub(self.pick(['bool', 'bool', 'int']), d)} IS {neg}{what})"
            # IS TRUE / IS FALSE of a value that is 0, 1 or NULL.
            return f"({self.pick(['TRUE', 'FALSE', '0', '1', 'NULL'])} IS {self.pick(['TRUE', 'FALSE'])})"
        if k == "isnull":
            return f"({self.sub(self.pick(['int', 'str', 'dbl']), d)} IS {self.pick(['', 'NOT '])}NULL)"
        if k == "in":
            t = self.cmp_type()
            items = ", ".join(self.sub(t, d) for _ in range(r.randint(1, 4)))
            return f"({self.sub(t, d)} {self.pick(['IN', 'NOT IN'])} ({items}))"
        if k == "between":
            t = self.cmp_type()
            if t == "num":
                if self.on("between_mixed"):
                    self.use("between_mixed")
                else:
                    t = "int"
            x = self.sub(t, d)
            lo = self.sub(t, d)
            hi = self.sub(t, d)
            if self.on("between_null"):
                self.use("between_null")
            else:
                # Bounds that can never be NULL: plain literals.
                lo, hi = self.literal(t), self.literal(t)
            return f"({x} {self.pick(['BETWEEN', 'NOT BETWEEN'])} {lo} AND {hi})"
        if k == "like":
            self.use("like")
            if not self.on("collate"):
                # LIKE is case-insensitive in Tributary under utf8mb4_bin (the
                # collate group): lower-case subjects and patterns only.
                subj, pat = self.leaf("str"), self.pick(LIKE_PATTERNS + ["NULL"])
            else:
                self.use("collate")
                subj = self.sub("str", d)
                pat = self.pick(LIKE_PATTERNS + ["NULL"]) if r.random() < 0.8 else self.sub("str", d)
            return f"({subj} {self.pick(['LIKE', 'NOT LIKE'])} {pat})"
        if k == "regexp":
            self.use("regexp")
            pat = self.pick(["'^a'", "'b+'", "'l{2}'", "'^$'", "'[0-9]'", "'o$'", "NULL"])
            # REGEXP_LIKE: see oracle_lib.ALLOW["regexp_like"].
            fn = self.pick(["REGEXP", "NOT REGEXP", "RLIKE"])
            if fn == "REGEXP_LIKE":
                return f"REGEXP_LIKE({self.sub('str', d)}, {pat})"
            return f"({self.sub('str', d)} {fn} {pat})"
        if k == "collate":
            self.use("collate")
            return (f"({self.sub('str', d)} COLLATE utf8mb4_general_ci "
                    f"{self.pick(['=', '<', '<>'])} {self.sub('str', d)})")
        if k == "control":
            self.at_top = top
            return self.control("bool", d)
        raise AssertionError(k)

    def literal(self, t):
        """A literal of type `t` that is never NULL (no column either)."""
        pools = {"int": INT_LITS, "dec": DEC_LITS, "dbl": DBL_LITS, "str": STR_LITS,
                 "num": INT_LITS + DBL_LITS + NUMSTR_LITS, "date": DATE_LITS + DATETIME_LITS,
                 "bool": ["TRUE", "FALSE", "0", "1"], "json": JSON_DOCS}
        return self.pick(pools[t])

    # -- queries over the table ---------------------------------------------
    def query(self):
        """A query over `t`; returns (Case, ordered) where `ordered` says the
        ORDER BY fixes the row order."""
        self.groups = {"core", "table"}
        self.columns = True
        r = self.r
        kind = self.pick(["select", "select", "agg", "agg", "group"])
        where = ""
        if r.random() < 0.7:
            where = f" WHERE {self.expr('bool', r.randint(1, 3))}"
        if kind == "select":
            exprs = [self.column(self.pick(["int", "str", "bool", "dbl", "date"]
                                         + (["dec"] if self.on("decimal") else [])),
                               r.randint(0, 3)) for _ in range(r.randint(1, 3))]
            ordered = r.random() < 0.5
            order = " ORDER BY id" if ordered else ""
            if r.random() < 0.3:
                order += f" LIMIT {r.randint(0, 5)}" if ordered else ""
            sql = f"SELECT id, {', '.join(exprs)} FROM t{where}{order}"
        elif kind == "agg":
            aggs = [self.agg() for _ in range(r.randint(1, 4))]
            sql = f"SELECT {', '.join(aggs)} FROM t{where}"
            ordered = True
        else:
            g = self.pick(["i", "j", "s", "f"] + (["d"] if self.on("decimal") else [])
                          + (["dt"] if self.on("date_type") else []))
            if g == "d":
                self.use("decimal")
            if g == "dt":
                self.use("date_type")
            aggs = [self.agg() for _ in range(r.randint(1, 3))]
            ordered = r.random() < 0.5
            having = ""
            if r.random() < 0.2:
                having = f" HAVING COUNT(*) {self.pick(['>', '>=', '='])} {r.randint(0, 2)}"
            order = f" ORDER BY {g}" if ordered else ""
            sql = f"SELECT {g}, {', '.join(aggs)} FROM t{where} GROUP BY {g}{having}{order}"
        self.columns = False
        return Case(sql, frozenset(self.groups)), ordered

    def agg(self):
        r = self.r
        fn = self.pick(["COUNT(*)", "COUNT", "SUM", "MIN", "MAX", "AVG", "COUNT_DISTINCT"])
        if fn == "COUNT(*)":
            return fn
        t = self.pick(["int", "dbl", "str", "date"] + (["dec"] if self.on("decimal") else []))
        if fn in ("SUM", "AVG"):
            t = self.pick(["int", "dbl"] + (["dec"] if self.on("decimal") else []))
            if t == "int" or t == "dec":
                # SUM/AVG of exact values are DECIMAL in MySQL.
                if self.on("decimal"):
                    self.use("decimal")
                else:
                    t = "dbl"
        arg = self.column(t, r.randint(0, 2)) if fn in ("MIN", "MAX") else self.expr(t, r.randint(0, 2))
        if t == "date" and fn in ("MIN", "MAX") and self.on("date_type"):
            self.use("date_type")
        if fn == "COUNT_DISTINCT":
            return f"COUNT(DISTINCT {arg})"
        if fn == "SUM" and r.random() < 0.2:
            return f"SUM(DISTINCT {arg})"
        return f"{fn}({arg})"


def expr_cases(seed, n, enabled):
    """`n` expression cases of one seed."""
    g = Gen(seed, enabled)
    return [g.case() for _ in range(n)]


def query_cases(seed, n, enabled):
    g = Gen(seed * 7919 + 1, enabled)
    return [g.query() for _ in range(n)]
