"""utf8mb4_0900_ai_ci against an independent UCA: pyuca's Collator_9_0_0.

Random strings from many scripts (fixed seeds) go into a column of that
collation; Tributary's ORDER BY and GROUP BY must give exactly the order
and the equal classes of pyuca's primary (level 1) sort keys. ORDER BY
`s, id` and the classes together determine every `<`/`=` between two of
the strings, so this checks the collation's comparison on all pairs.

`LIKE` is checked the same way on random pairs of short strings without
wildcards: a pair matches exactly when each character matches by MySQL's
`my_uca_charcmp_900` rule (equal, or both on a page of MySQL's weight
table with equal pyuca primaries).

pyuca normalizes to NFD and applies the DUCET's contractions; MySQL's
uca900 does neither, and MySQL keeps at most 8 collation elements per code
point. Inputs where those differ are left out (and counted), each for the
reason given where it is filtered:
- a character that starts a DUCET contraction (MySQL's root table has no
  contractions; pyuca applies them);
- U+FDFA (18 collation elements; MySQL keeps 8);
- U+D7A4..U+D7AF (MySQL decomposes them as Hangul syllables by formula;
  UCA treats them as unassigned);
- U+2CEA2..U+2CEAF (pyuca's own Extension E range is wider than 9.0's);
- a string whose NFD reorders combining marks, or a character Unicode
  decomposes that the DUCET 9.0 does not list (NFD would change what
  MySQL compares).

UCA900_SEEDS="1-50" UCA900_N=4000 runs a longer check locally (the CI run
uses three seeds of 1500 strings).
"""

import os
import random
import unicodedata

import pymysql
import pytest

pyuca = pytest.importorskip("pyuca.collator")

COLLATOR = pyuca.Collator_9_0_0()

RANGES = [
    (0x20, 0x7E),
    (0xA0, 0x24F),
    (0x300, 0x36F),
    (0x370, 0x3FF),
    (0x400, 0x4FF),
    (0x5D0, 0x5EA),
    (0x620, 0x64A),
    (0x900, 0x97F),
    (0xE01, 0xE5B),
    (0x1100, 0x11FF),
    (0x1E00, 0x1EFF),
    (0x2000, 0x206F),
    (0x2150, 0x218B),
    (0x2460, 0x24FF),
    (0x2F00, 0x2FD5),
    (0x3040, 0x30FF),
    (0x3400, 0x4DBF),
    (0x4E00, 0x9FFF),
    (0xAC00, 0xD7FF),
    (0xE000, 0xE0FF),
    (0xF900, 0xFAFF),
    (0xFB00, 0xFB4F),
    (0xFDF0, 0xFDFF),
    (0xFF01, 0xFF9F),
    (0x10000, 0x100FF),
    (0x17000, 0x187EC),
    (0x1D400, 0x1D7FF),
    (0x1F300, 0x1F6FF),
    (0x20000, 0x2A6DF),
    (0x2CE90, 0x2CEBF),
    (0xE0000, 0xE01EF),
    (0x10FFF0, 0x10FFFD),
]


def _ducet():
    """Single code points the DUCET lists, and contraction starts."""
    import pyuca as pkg

    path = os.path.join(os.path.dirname(pkg.__file__), "allkeys-9.0.0.txt")
    listed, starts = set(), set()
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if not line or line.startswith("@"):
                continue
            cps = [int(x, 16) for x in line.split(";", 1)[0].split()]
            if len(cps) == 1:
                listed.add(cps[0])
            else:
                starts.add(cps[0])
    return listed, starts


LISTED, CONTRACTION_STARTS = _ducet()


def usable_char(cp):
    if 0xD800 <= cp <= 0xDFFF or cp in CONTRACTION_STARTS or cp == 0xFDFA:
        return False
    if 0xD7A4 <= cp <= 0xD7AF or 0x2CEA2 <= cp <= 0x2CEAF:
        return False
    c = chr(cp)
    if cp not in LISTED and unicodedata.normalize("NFD", c) != c and not 0xAC00 <= cp <= 0xD7A3:
        return False
    # Every character of its decomposition must be usable too (pyuca sees
    # the decomposition: a contraction start inside it would contract).
    d = unicodedata.normalize("NFD", c)
    return all(ord(x) not in CONTRACTION_STARTS for x in d)


def primary(s):
    key = COLLATOR.sort_key(s)
    return key[: key.index(0)] if 0 in key else key


def generate(seed, n):
    rng = random.Random(seed)
    out, skipped = [], 0
    while len(out) < n:
        k = rng.randint(0, 8)
        s = "".join(
            chr(rng.randint(*rng.choice(RANGES))) for _ in range(k)
        )
        nfd = unicodedata.normalize("NFD", s)
        if not all(usable_char(ord(c)) for c in s) or "".join(
            unicodedata.normalize("NFD", c) for c in s
        ) != nfd:
            skipped += 1
            continue
        out.append(s)
        # Variants that must be equal (case, accents, expansions).
        if rng.random() < 0.3 and len(out) < n:
            out.append(rng.choice([s.upper(), s.lower(), nfd, s.swapcase()]))
    return out, skipped


def seeds():
    spec = os.environ.get("UCA900_SEEDS", "1-3")
    lo, _, hi = spec.partition("-")
    return range(int(lo), int(hi or lo) + 1)


@pytest.mark.parametrize("seed", seeds())
def test_order_and_classes_match_pyuca(server, dbname, seed):
    n = int(os.environ.get("UCA900_N", "1500"))
    strings, skipped = generate(seed, n)
    assert skipped < 5 * n, f"the filters drop too much ({skipped})"
    conn = pymysql.connect(
        host=server.host, port=server.port, user="root", password="",
        database=dbname, autocommit=True, charset="utf8mb4",
    )
    t = f"u{seed}"
    with conn.cursor() as c:
        c.execute(
            f"CREATE TABLE {t} (id INT PRIMARY KEY, "
            "s VARCHAR(64) COLLATE utf8mb4_0900_ai_ci)"
        )
        rows = list(enumerate(strings))
        for i in range(0, len(rows), 500):
            c.executemany(f"INSERT INTO {t} VALUES (%s, %s)", rows[i : i + 500])
        keys = {i: primary(s) for i, s in rows}

        c.execute(f"SELECT id FROM {t} ORDER BY s, id")
        got = [r[0] for r in c.fetchall()]
        want = sorted(keys, key=lambda i: (keys[i], i))
        if got != want:
            at = next(k for k, (a, b) in enumerate(zip(got, want)) if a != b)
            a, b = got[at], want[at]
            pytest.fail(
                f"seed {seed}: order differs at {at}: Tributary has "
                f"{strings[a]!r} ({[hex(x) for x in keys[a]]}), pyuca "
                f"{strings[b]!r} ({[hex(x) for x in keys[b]]})"
            )

        c.execute(f"SELECT MIN(id), COUNT(*) FROM {t} GROUP BY s ORDER BY MIN(id)")
        got_classes = [tuple(r) for r in c.fetchall()]
        firsts = {}
        for i in sorted(keys):
            firsts.setdefault(keys[i], [i, 0])[1] += 1
        want_classes = sorted(tuple(v) for v in firsts.values())
        assert got_classes == want_classes, f"seed {seed}: GROUP BY classes differ"
        # The variants make equal classes common: the check has teeth.
        assert len(want_classes) < len(strings)
        c.execute(f"DROP TABLE {t}")
    conn.close()


def _pages():
    import pyuca as pkg

    path = os.path.join(os.path.dirname(pkg.__file__), "allkeys-9.0.0.txt")
    pages = set()
    with open(path, encoding="utf-8") as f:
        for line in f:
            cps = line.split("#", 1)[0].split(";", 1)[0].split()
            if len(cps) == 1 and not line.startswith("@"):
                pages.add(int(cps[0], 16) >> 8)
    return pages


def like_eq(a, b, pages):
    """MySQL's my_uca_charcmp_900 at level 1: the same character, or both
    on a page of MySQL's weight table with equal primaries (pyuca's)."""
    if a == b:
        return True
    if ord(a) >> 8 not in pages or ord(b) >> 8 not in pages:
        return False
    return primary(a) == primary(b)


@pytest.mark.parametrize("seed", seeds())
def test_like_matches_character_by_character(server, dbname, seed):
    """`a LIKE b` without wildcards: true exactly when both have as many
    characters and each pair matches by its own weights (so `'ß' LIKE
    'ss'` is false though `'ß' = 'ss'`)."""
    rng = random.Random(seed)
    pages = _pages()
    by_primary = {}
    pool = []
    while len(pool) < 3000:
        cp = rng.randint(*rng.choice(RANGES))
        c = chr(cp)
        if c in "%_\\" or not usable_char(cp) or unicodedata.normalize("NFD", c) != c and cp not in LISTED:
            continue
        pool.append(c)
        by_primary.setdefault(primary(c), []).append(c)
    pairs = []
    for _ in range(int(os.environ.get("UCA900_N", "1500"))):
        a = "".join(rng.choice(pool) for _ in range(rng.randint(1, 3)))
        # Mostly same-weight partners, so matches are common.
        b = "".join(
            rng.choice(by_primary[primary(x)]) if rng.random() < 0.8 else rng.choice(pool)
            for x in a
        )
        if rng.random() < 0.1:
            b = b[:-1]
        pairs.append((a, b))
    conn = pymysql.connect(
        host=server.host, port=server.port, user="root", password="",
        database=dbname, autocommit=True, charset="utf8mb4",
    )
    t = f"l{seed}"
    with conn.cursor() as c:
        c.execute(
            f"CREATE TABLE {t} (id INT PRIMARY KEY, "
            "a VARCHAR(8) COLLATE utf8mb4_0900_ai_ci, b VARCHAR(8) COLLATE utf8mb4_0900_ai_ci)"
        )
        rows = [(i, a, b) for i, (a, b) in enumerate(pairs)]
        c.executemany(f"INSERT INTO {t} VALUES (%s, %s, %s)", rows)
        c.execute(f"SELECT id FROM {t} WHERE a LIKE b ORDER BY id")
        got = {r[0] for r in c.fetchall()}
        want = {
            i for i, a, b in rows
            if len(a) == len(b) and all(like_eq(x, y, pages) for x, y in zip(a, b))
        }
        wrong = sorted(got ^ want)
        assert not wrong, [
            (pairs[i], i in got) for i in wrong[:5]
        ]
        assert len(want) > len(rows) // 4, "too few matches for a check with teeth"
        assert any(a != b for i, a, b in rows if i in want)
        c.execute(f"DROP TABLE {t}")
    conn.close()
