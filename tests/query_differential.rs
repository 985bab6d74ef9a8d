//! Differential guard for multi-table queries: a small random three-table
//! schema (`a`, `b` → `a`, `c` → `b`), random data and random SELECTs with
//! joins (INNER / LEFT / RIGHT / comma / CROSS / self / three-way / USING),
//! subqueries (IN, NOT IN, EXISTS, NOT EXISTS, scalar; correlated and not),
//! derived tables, CTEs, UNION [ALL], DISTINCT, GROUP BY / HAVING and
//! ORDER BY … LIMIT (recursive CTEs: their own generator and test), run
//! on Tributary (in-process) and on SQLite (`rusqlite`, bundled) as the
//! oracle. Every generated query must run on
//! SQLite (else the generator is wrong); on Tributary an error or a
//! different answer is a failure.
//!
//! Only the common subset of MySQL and SQLite is generated: INT and short
//! lowercase ASCII text (binary and case-insensitive comparison agree), no
//! division, no `||`, no text/number comparison, no LIMIT without an ORDER
//! BY over every output column, only grouped columns and aggregates in a
//! grouped select list (ONLY_FULL_GROUP_BY), unique names for derived
//! columns, no LIMIT in an IN subquery, no comma join mixed with JOIN, and
//! ON clauses that only name tables to their left, no `SELECT *` (MySQL
//! puts a USING column first, SQLite does not). AVG (a DECIMAL with four
//! digits in MySQL) is compared with a small absolute tolerance. RIGHT JOIN
//! (SQLite ≥ 3.39, checked at start) only at the top level between base
//! tables: SQLite 3.50 wrongly refuses some valid queries with a RIGHT JOIN
//! inside or next to a derived table ("ON clause references tables to its
//! right").
//!
//! Seeds: a fixed list (`QUERIES` queries in all), or `QDIFF_SEED=<n>[,<n>…]`
//! (decimal or `0x…`) to run chosen seeds; `QDIFF_QUERIES=<n>` sets the
//! queries per seed. A failure prints the seed, the query number, the SQL,
//! both answers and the data, shrunk to the rows the difference needs:
//!
//! ```text
//! QDIFF_SEED=7 cargo test --test query_differential -- --nocapture
//! ```
//!
//! `QDIFF_TRACE=1` prints every query as it runs; `QDIFF_REPRO=<file>` runs
//! a file of statements (one a line: INSERTs, then queries) on both engines
//! and prints both answers of each query (test `repro_from_file`).

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic fails the test

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::time::Instant;

use tributary::{Config, Database, Session};

mod common;
use common::oracle::{
    check_oracle_null_order, lite_rows, results_agree, show_rows, trib_rows, Cell, Rng, Rows,
};

/// Queries per run (over the default seeds).
const QUERIES: usize = 2000;
/// Seeds run by default (each runs `QUERIES / DEFAULT_SEEDS.len()` queries).
const DEFAULT_SEEDS: &[u64] = &[1, 0x5eed_0a1b, 0xc0ff_ee00, 20_250_101];
/// A fresh data set every this many queries.
const QUERIES_PER_DATASET: usize = 40;
/// Failures printed in full (all are counted).
const MAX_REPORTS: usize = 30;
/// Mismatches whose data is shrunk (removing rows while it still fails).
const MAX_SHRINKS: usize = 12;

/// Numbers equal within a small absolute tolerance (an integer against a
/// float: SUM as DECIMAL, AVG with four decimals in MySQL).
fn close(x: f64, y: f64) -> bool {
    x == y || (x - y).abs() <= 1e-4
}

/// SQL literal for a cell (negative numbers parenthesised).
fn lit(c: &Cell) -> String {
    match c {
        Cell::Null => "NULL".into(),
        Cell::Int(i) if *i < 0 => format!("({i})"),
        Cell::Int(i) => i.to_string(),
        Cell::Float(x) | Cell::Decimal(x, _) => format!("{x:?}"),
        Cell::Text(s) => format!("'{s}'"),
    }
}

// ---------------------------------------------------------------------------
// Schema and data

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Int,
    Text,
}

struct TableDef {
    name: &'static str,
    cols: &'static [(&'static str, Kind)],
}

const TABLES: &[TableDef] = &[
    TableDef {
        name: "a",
        cols: &[
            ("id", Kind::Int),
            ("x", Kind::Int),
            ("y", Kind::Int),
            ("s", Kind::Text),
        ],
    },
    TableDef {
        name: "b",
        cols: &[
            ("id", Kind::Int),
            ("a_id", Kind::Int),
            ("z", Kind::Int),
            ("s", Kind::Text),
        ],
    },
    TableDef {
        name: "c",
        cols: &[("id", Kind::Int), ("b_id", Kind::Int), ("w", Kind::Int)],
    },
];

/// Foreign-key-like links: (child table, child column, parent table,
/// parent column).
const LINKS: &[(&str, &str, &str, &str)] = &[("b", "a_id", "a", "id"), ("c", "b_id", "b", "id")];

/// Text values in the data (lowercase ASCII, no trailing spaces).
const TEXTS: &[&str] = &["", "a", "b", "c", "ab", "ba", "abc"];

fn create_sql(t: &TableDef) -> String {
    let defs: Vec<String> = t
        .cols
        .iter()
        .enumerate()
        .map(|(i, (name, kind))| {
            let ty = match kind {
                Kind::Int => "INT",
                Kind::Text => "VARCHAR(8)",
            };
            if i == 0 {
                format!("{name} {ty} PRIMARY KEY")
            } else {
                format!("{name} {ty}")
            }
        })
        .collect();
    format!("CREATE TABLE {} ({})", t.name, defs.join(", "))
}

/// The rows of `a`, `b`, `c`.
#[derive(Clone)]
struct Data {
    tables: [Rows; 3],
}

impl Data {
    fn generate(rng: &mut Rng) -> Data {
        Data::generate_scaled(rng, 1)
    }

    /// Tables of up to `scale` × 30 rows.
    fn generate_scaled(rng: &mut Rng, scale: usize) -> Data {
        let mut tables: [Rows; 3] = Default::default();
        for (t, def) in TABLES.iter().enumerate() {
            let n = match rng.below(10) {
                0 => 0,
                1..=3 => rng.range(1, 6) as usize,
                _ => rng.range(7, 30) as usize * scale,
            };
            // Distinct ids, dense near 0 so that `a_id` / `b_id` match.
            let mut ids: Vec<i64> = (0..(n as i64 * 2 + 4)).collect();
            for i in (1..ids.len()).rev() {
                ids.swap(i, rng.below(i + 1));
            }
            ids.truncate(n);
            let mut rows = Vec::new();
            for id in ids {
                let mut row = vec![Cell::Int(id)];
                for (_, kind) in &def.cols[1..] {
                    let v = if rng.chance(0.2) {
                        Cell::Null
                    } else if !rows.is_empty() && rng.chance(0.15) {
                        // A duplicate of another row's value.
                        let r: &Vec<Cell> = &rows[rng.below(rows.len())];
                        r[row.len()].clone()
                    } else {
                        match kind {
                            Kind::Int => Cell::Int(rng.range(0, 6)),
                            Kind::Text => Cell::Text(rng.pick(TEXTS).to_string()),
                        }
                    };
                    row.push(v);
                }
                rows.push(row);
            }
            tables[t] = rows;
        }
        Data { tables }
    }

    fn insert_sql(t: usize, rows: &[Vec<Cell>]) -> String {
        let vals: Vec<String> = rows
            .iter()
            .map(|r| {
                let cells: Vec<String> = r.iter().map(lit).collect();
                format!("({})", cells.join(", "))
            })
            .collect();
        format!("INSERT INTO {} VALUES {}", TABLES[t].name, vals.join(", "))
    }

    /// The data as INSERT statements (empty tables left out).
    fn script(&self) -> String {
        let mut out = String::new();
        for (t, rows) in self.tables.iter().enumerate() {
            if rows.is_empty() {
                let _ = writeln!(out, "      -- {} is empty", TABLES[t].name);
            } else {
                let _ = writeln!(out, "      {};", Data::insert_sql(t, rows));
            }
        }
        out
    }
}

// ---------------------------------------------------------------------------
// The two engines

thread_local! {
    /// Statements a Tributary session of this thread's engines runs first
    /// (the spilling variant sets the smallest budgets: decision 027).
    static SESSION_SETUP: std::cell::Cell<&'static [&'static str]> =
        const { std::cell::Cell::new(&[]) };
}

struct Engines {
    _dir: tempfile::TempDir,
    db: Database,
    trib: Session,
    lite: rusqlite::Connection,
}

impl Engines {
    fn open() -> Engines {
        let dir = tempfile::tempdir().expect("tempdir");
        let db = Database::open_with(dir.path(), Config::default()).expect("open tributary");
        let mut trib = db.session();
        let lite = rusqlite::Connection::open_in_memory().expect("sqlite");
        for s in ["CREATE DATABASE qd", "USE qd"]
            .into_iter()
            .chain(SESSION_SETUP.with(std::cell::Cell::get).iter().copied())
        {
            trib.execute(s).unwrap_or_else(|e| panic!("{s}: {e}"));
        }
        let mut e = Engines {
            _dir: dir,
            db,
            trib,
            lite,
        };
        for t in TABLES {
            e.both(&create_sql(t));
        }
        e
    }

    /// A statement both must accept.
    fn both(&mut self, sql: &str) {
        self.trib
            .execute(sql)
            .unwrap_or_else(|e| panic!("Tributary: {sql}: {e}"));
        self.lite
            .execute(sql, [])
            .unwrap_or_else(|e| panic!("SQLite: {sql}: {e}"));
    }

    fn load(&mut self, data: &Data) {
        for (t, rows) in data.tables.iter().enumerate() {
            self.both(&format!("DELETE FROM {}", TABLES[t].name));
            for chunk in rows.chunks(50) {
                self.both(&Data::insert_sql(t, chunk));
            }
        }
    }

    fn trib_rows(&mut self, sql: &str) -> Result<Rows, String> {
        trib_rows(&mut self.trib, sql)
    }

    fn lite_rows(&self, sql: &str) -> Rows {
        lite_rows(&self.lite, sql)
    }

    /// `None` when Tributary agrees with SQLite, else its answer.
    fn check(&mut self, sql: &str, ordered: bool) -> (Rows, Option<Result<Rows, String>>) {
        let want = self.lite_rows(sql);
        let got = self.trib_rows(sql);
        let ok = matches!(&got, Ok(g) if results_agree(g, &want, ordered, close));
        (want, (!ok).then_some(got))
    }

    /// Remove rows (one at a time, in both engines) while the query still
    /// gives a different answer; returns the smallest data found. The
    /// engines hold that data afterwards.
    fn shrink(&mut self, data: &Data, sql: &str, ordered: bool) -> Data {
        let mut cur = data.clone();
        for (t, def) in TABLES.iter().enumerate() {
            let mut i = 0;
            while i < cur.tables[t].len() {
                let row = cur.tables[t].remove(i);
                let name = def.name;
                self.both(&format!("DELETE FROM {name} WHERE id = {}", lit(&row[0])));
                if self.check(sql, ordered).1.is_some() {
                    continue;
                }
                self.both(&Data::insert_sql(t, std::slice::from_ref(&row)));
                cur.tables[t].insert(i, row);
                i += 1;
            }
        }
        cur
    }
}

/// Whether the oracle has RIGHT JOIN (SQLite ≥ 3.39).
fn sqlite_has_right_join(lite: &rusqlite::Connection) -> bool {
    let v: String = lite
        .query_row("SELECT sqlite_version()", [], |r| r.get(0))
        .unwrap();
    let parts: Vec<u32> = v.split('.').filter_map(|p| p.parse().ok()).collect();
    parts.len() >= 2 && (parts[0], parts[1]) >= (3, 39)
}

// ---------------------------------------------------------------------------
// Query generation

/// An expression and its kind.
#[derive(Clone, Debug)]
struct Expr {
    sql: String,
    kind: Kind,
}

/// A FROM item in scope: its alias, base table (None for a derived table
/// or CTE) and columns.
#[derive(Clone, Debug)]
struct Src {
    alias: String,
    table: Option<&'static str>,
    cols: Vec<(String, Kind)>,
}

impl Src {
    fn col(&self, i: usize) -> Expr {
        Expr {
            sql: format!("{}.{}", self.alias, self.cols[i].0),
            kind: self.cols[i].1,
        }
    }
    fn col_named(&self, name: &str) -> Option<Expr> {
        self.cols
            .iter()
            .position(|(n, _)| n == name)
            .map(|i| self.col(i))
    }
}

fn cols_of(scope: &[Src], kind: Option<Kind>) -> Vec<Expr> {
    scope
        .iter()
        .flat_map(|s| (0..s.cols.len()).map(move |i| s.col(i)))
        .filter(|e| kind.is_none_or(|k| e.kind == k))
        .collect()
}

/// A FROM clause: its SQL, the sources it brings into scope and WHERE
/// conjuncts it needs (a comma join's equalities).
struct From {
    sql: String,
    scope: Vec<Src>,
    conds: Vec<String>,
}

/// A generated SELECT (or UNION): SQL, output kinds, whether it ends in an
/// ORDER BY over every output column.
struct Sel {
    sql: String,
    kinds: Vec<Kind>,
    ordered: bool,
}

/// What the top-level query should stress.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Focus {
    Plain,
    Subquery,
    Scalar,
    Group,
    Derived,
    Cte,
    Union,
}

struct Gen<'a> {
    rng: &'a mut Rng,
    right_join: bool,
    next_id: usize,
    /// Base tables used without an alias somewhere in the query.
    bare: BTreeSet<&'static str>,
    /// CTEs in scope (alias = CTE name).
    ctes: Vec<Src>,
    /// Subquery / derived-table nesting.
    depth: u32,
    focus: Focus,
    tags: BTreeSet<&'static str>,
}

impl<'a> Gen<'a> {
    fn new(rng: &'a mut Rng, right_join: bool) -> Gen<'a> {
        Gen {
            rng,
            right_join,
            next_id: 1,
            bare: BTreeSet::new(),
            ctes: Vec::new(),
            depth: 0,
            focus: Focus::Plain,
            tags: BTreeSet::new(),
        }
    }

    fn fresh(&mut self) -> usize {
        let n = self.next_id;
        self.next_id += 1;
        n
    }

    fn tag(&mut self, t: &'static str) {
        self.tags.insert(t);
    }

    // -- literals and atoms --------------------------------------------------

    fn int_lit(&mut self) -> String {
        let v = if self.rng.chance(0.9) {
            self.rng.range(0, 6)
        } else {
            self.rng.range(-1, 9)
        };
        lit(&Cell::Int(v))
    }

    fn text_lit(&mut self) -> String {
        if self.rng.chance(0.1) {
            "'bb'".into()
        } else {
            format!("'{}'", self.rng.pick(TEXTS))
        }
    }

    fn lit_of(&mut self, k: Kind) -> String {
        match k {
            Kind::Int => self.int_lit(),
            Kind::Text => self.text_lit(),
        }
    }

    fn cmp_op(&mut self) -> &'static str {
        const OPS: [&str; 7] = ["=", "<>", "<", "<=", ">", ">=", "="];
        OPS[self.rng.below(OPS.len())]
    }

    fn pick_col(&mut self, scope: &[Src], kind: Option<Kind>) -> Option<Expr> {
        let cs = cols_of(scope, kind);
        if cs.is_empty() {
            None
        } else {
            Some(cs[self.rng.below(cs.len())].clone())
        }
    }

    /// A column, biased towards integers (more join-like comparisons).
    fn any_col(&mut self, scope: &[Src]) -> Expr {
        let k = if self.rng.chance(0.75) {
            Kind::Int
        } else {
            Kind::Text
        };
        self.pick_col(scope, Some(k))
            .or_else(|| self.pick_col(scope, None))
            .expect("a non-empty scope")
    }

    /// One condition on the scope; `sub` allows subquery predicates.
    fn atom(&mut self, scope: &[Src], sub: bool) -> String {
        let e = self.any_col(scope);
        let p_sub = match self.depth {
            _ if !sub => 0.0,
            0 => 0.15,
            1 => 0.08,
            _ => 0.0,
        };
        let choice = if self.rng.chance(p_sub) {
            9 + self.rng.below(6)
        } else {
            self.rng.below(9)
        };
        match choice {
            0..=2 => {
                let (op, v) = (self.cmp_op(), self.lit_of(e.kind));
                if self.rng.chance(0.2) {
                    format!("{v} {op} {}", e.sql)
                } else {
                    format!("{} {op} {v}", e.sql)
                }
            }
            3 => {
                let f = self.pick_col(scope, Some(e.kind)).unwrap();
                format!("{} {} {}", e.sql, self.cmp_op(), f.sql)
            }
            4 => {
                let not = if self.rng.chance(0.5) { " NOT" } else { "" };
                format!("{} IS{not} NULL", e.sql)
            }
            5 | 6 => {
                let n = self.rng.range(1, 4);
                let mut items: Vec<String> = (0..n).map(|_| self.lit_of(e.kind)).collect();
                if self.rng.chance(0.25) {
                    let at = self.rng.below(items.len() + 1);
                    items.insert(at, "NULL".into());
                }
                let not = if self.rng.chance(0.35) { " NOT" } else { "" };
                format!("{}{not} IN ({})", e.sql, items.join(", "))
            }
            7 => {
                let not = if self.rng.chance(0.25) { " NOT" } else { "" };
                let (lo, hi) = (self.lit_of(e.kind), self.lit_of(e.kind));
                format!("{}{not} BETWEEN {lo} AND {hi}", e.sql)
            }
            8 => {
                let v = self.lit_of(e.kind);
                let w = self.lit_of(e.kind);
                format!("COALESCE({}, {v}) {} {w}", e.sql, self.cmp_op())
            }
            9 | 10 => self.in_subquery(scope, e, false),
            11 => self.in_subquery(scope, e, true),
            12 => self.exists(scope, false),
            13 => self.exists(scope, true),
            _ => {
                let s = self.scalar_subquery(scope, Some(e.kind));
                if self.rng.chance(0.7) {
                    format!("{} {} {}", e.sql, self.cmp_op(), s.sql)
                } else {
                    let v = self.lit_of(s.kind);
                    format!("{} {} {v}", s.sql, self.cmp_op())
                }
            }
        }
    }

    fn pred(&mut self, scope: &[Src], depth: u32, sub: bool) -> String {
        if depth == 0 {
            return self.atom(scope, sub);
        }
        match self.rng.below(7) {
            0..=2 => self.atom(scope, sub),
            3 => format!(
                "({} AND {})",
                self.pred(scope, depth - 1, sub),
                self.pred(scope, depth - 1, sub)
            ),
            4 | 5 => format!(
                "({} OR {})",
                self.pred(scope, depth - 1, sub),
                self.pred(scope, depth - 1, sub)
            ),
            _ => format!("(NOT ({}))", self.pred(scope, depth - 1, sub)),
        }
    }

    /// ` WHERE …` (or nothing): `conds` plus random conjuncts.
    fn where_clause(&mut self, scope: &[Src], mut conds: Vec<String>) -> String {
        let n = match self.rng.below(10) {
            0..=2 => 0,
            3..=7 => 1,
            _ => 2,
        };
        for _ in 0..n {
            let p = self.pred(scope, 2, true);
            conds.push(p);
        }
        if self.depth == 0 && self.focus == Focus::Subquery {
            // At least one subquery predicate.
            let e = self.any_col(scope);
            let p = match self.rng.below(5) {
                0 => self.in_subquery(scope, e, false),
                1 => self.in_subquery(scope, e, true),
                2 => self.exists(scope, false),
                3 => self.exists(scope, true),
                _ => {
                    let s = self.scalar_subquery(scope, Some(e.kind));
                    format!("{} {} {}", e.sql, self.cmp_op(), s.sql)
                }
            };
            conds.push(p);
        }
        if conds.is_empty() {
            String::new()
        } else {
            format!(" WHERE {}", conds.join(" AND "))
        }
    }

    // -- FROM ---------------------------------------------------------------

    /// A base table with an alias (or bare, when not used bare elsewhere).
    fn base(&mut self, t: usize) -> (String, Src) {
        let name = TABLES[t].name;
        let (sql, alias) = if !self.bare.contains(name) && self.rng.chance(0.25) {
            self.bare.insert(name);
            (name.to_string(), name.to_string())
        } else {
            let alias = format!("{name}{}", self.fresh());
            let kw = if self.rng.chance(0.5) { " AS" } else { "" };
            (format!("{name}{kw} {alias}"), alias)
        };
        let src = Src {
            alias,
            table: Some(name),
            cols: TABLES[t]
                .cols
                .iter()
                .map(|(n, k)| (n.to_string(), *k))
                .collect(),
        };
        (sql, src)
    }

    fn cte_ref(&mut self) -> (String, Src) {
        let i = self.rng.below(self.ctes.len());
        let mut src = self.ctes[i].clone();
        let name = src.alias.clone();
        let alias = format!("{name}_{}", self.fresh());
        self.tag("cte");
        src.alias = alias.clone();
        (format!("{name} AS {alias}"), src)
    }

    fn derived(&mut self) -> (String, Src) {
        self.depth += 1;
        let (sel, names) = self.select_or_union(true, None);
        self.depth -= 1;
        let alias = format!("d{}", self.fresh());
        self.tag("derived");
        let src = Src {
            alias: alias.clone(),
            table: None,
            cols: names.into_iter().zip(sel.kinds).collect(),
        };
        (format!("({}) AS {alias}", sel.sql), src)
    }

    /// One FROM item: a base table, a CTE or a derived table.
    fn source(&mut self) -> (String, Src) {
        let top = self.depth == 0;
        if !self.ctes.is_empty() && self.rng.chance(if top { 0.6 } else { 0.25 }) {
            return self.cte_ref();
        }
        let p_derived = match (top, self.focus) {
            (true, Focus::Derived) => 0.6,
            (true, _) => 0.06,
            (false, _) if self.depth < 2 => 0.05,
            _ => 0.0,
        };
        if self.rng.chance(p_derived) {
            return self.derived();
        }
        let t = self.rng.below(TABLES.len());
        self.base(t)
    }

    /// Equal-kind column pair across `left` and `right`, preferring the
    /// foreign-key links.
    fn eq_pair(&mut self, left: &[Src], right: &Src) -> (Expr, Expr) {
        let mut links = Vec::new();
        for l in left {
            for &(ct, cc, pt, pc) in LINKS {
                if l.table == Some(ct) && right.table == Some(pt) {
                    links.push((l.col_named(cc).unwrap(), right.col_named(pc).unwrap()));
                }
                if l.table == Some(pt) && right.table == Some(ct) {
                    links.push((l.col_named(pc).unwrap(), right.col_named(cc).unwrap()));
                }
            }
        }
        if !links.is_empty() && self.rng.chance(0.6) {
            return links[self.rng.below(links.len())].clone();
        }
        let r = std::slice::from_ref(right);
        let kind = if self.rng.chance(0.2)
            && !cols_of(left, Some(Kind::Text)).is_empty()
            && !cols_of(r, Some(Kind::Text)).is_empty()
        {
            Kind::Text
        } else {
            Kind::Int
        };
        let a = self.pick_col(left, Some(kind));
        let b = self.pick_col(r, Some(kind));
        match (a, b) {
            (Some(a), Some(b)) => (a, b),
            // A derived table of text only: compare anything alike.
            _ => {
                let b = self.pick_col(r, None).unwrap();
                match self.pick_col(left, Some(b.kind)) {
                    Some(a) => (a, b),
                    None => (
                        Expr {
                            sql: self.lit_of(b.kind),
                            kind: b.kind,
                        },
                        b,
                    ),
                }
            }
        }
    }

    /// ON condition joining `right` to `left`.
    fn on_cond(&mut self, left: &[Src], right: &Src) -> String {
        let (l, r) = self.eq_pair(left, right);
        // Non-equi joins only at the top (inside a derived table or CTE
        // they make the outer joins large).
        let op = if self.depth == 0 && self.rng.chance(0.1) {
            self.tag("join:non-equi");
            *self.rng.pick(&["<", ">=", "<>"])
        } else {
            "="
        };
        let mut on = if self.rng.chance(0.5) {
            format!("{} {op} {}", l.sql, r.sql)
        } else {
            format!("{} {} {}", r.sql, flip(op), l.sql)
        };
        if self.rng.chance(0.3) {
            let mut all = left.to_vec();
            all.push(right.clone());
            let extra = if self.rng.chance(0.6) {
                self.atom(std::slice::from_ref(right), false)
            } else {
                self.atom(&all, false)
            };
            let _ = write!(on, " AND {extra}");
        }
        on
    }

    fn join_kw(&mut self, allow_right: bool) -> &'static str {
        match self.rng.below(10) {
            0..=3 => {
                self.tag("join:inner");
                ["JOIN", "INNER JOIN"][self.rng.below(2)]
            }
            4..=6 => {
                self.tag("join:left");
                ["LEFT JOIN", "LEFT OUTER JOIN"][self.rng.below(2)]
            }
            // SQLite 3.50 refuses some valid queries with a RIGHT JOIN in a
            // derived table or next to one ("ON clause references tables
            // to its right"): RIGHT JOIN only at the top, between base
            // tables.
            7 if allow_right && self.right_join && self.depth == 0 => {
                self.tag("join:right");
                "RIGHT JOIN"
            }
            _ => {
                self.tag("join:inner");
                "JOIN"
            }
        }
    }

    fn gen_from(&mut self) -> From {
        // Inside a derived table or CTE: at most two sources, always with
        // a join condition (keeps the outer joins small).
        let shape = if self.depth == 0 {
            self.rng.below(20)
        } else {
            *self.rng.pick(&[0, 1, 2, 3, 4, 5, 6, 7, 13])
        };
        match shape {
            // One source.
            0..=3 => {
                let (sql, s) = self.source();
                From {
                    sql,
                    scope: vec![s],
                    conds: vec![],
                }
            }
            // Two sources, JOIN … ON.
            4..=9 => {
                let (l, ls) = self.source();
                let (r, rs) = self.source();
                let kw = self.join_kw(ls.table.is_some() && rs.table.is_some());
                let on = self.on_cond(std::slice::from_ref(&ls), &rs);
                From {
                    sql: format!("{l} {kw} {r} ON {on}"),
                    scope: vec![ls, rs],
                    conds: vec![],
                }
            }
            // Comma join, equality in WHERE.
            10 | 11 => {
                self.tag("join:comma");
                let n = if self.rng.chance(0.3) { 3 } else { 2 };
                let mut sqls = Vec::new();
                let mut scope: Vec<Src> = Vec::new();
                let mut conds = Vec::new();
                for _ in 0..n {
                    let (sql, s) = self.source();
                    if !scope.is_empty() && self.rng.chance(0.9) {
                        let (l, r) = self.eq_pair(&scope, &s);
                        conds.push(format!("{} = {}", l.sql, r.sql));
                    }
                    sqls.push(sql);
                    scope.push(s);
                }
                if n == 3 {
                    self.tag("join:3way");
                }
                From {
                    sql: sqls.join(", "),
                    scope,
                    conds,
                }
            }
            // CROSS JOIN.
            12 => {
                self.tag("join:cross");
                let (l, ls) = self.source();
                let (r, rs) = self.source();
                From {
                    sql: format!("{l} CROSS JOIN {r}"),
                    scope: vec![ls, rs],
                    conds: vec![],
                }
            }
            // Self-join.
            13 | 14 => {
                self.tag("join:self");
                let t = self.rng.below(TABLES.len());
                let (l, ls) = self.base(t);
                let (r, rs) = self.base(t);
                let kw = self.join_kw(true);
                let on = self.on_cond(std::slice::from_ref(&ls), &rs);
                From {
                    sql: format!("{l} {kw} {r} ON {on}"),
                    scope: vec![ls, rs],
                    conds: vec![],
                }
            }
            // Three sources, JOIN … ON twice.
            15..=17 => {
                self.tag("join:3way");
                let (a, asrc) = self.source();
                let (b, bsrc) = self.source();
                let (c, csrc) = self.source();
                let bases = [&asrc, &bsrc, &csrc].iter().all(|s| s.table.is_some());
                let k1 = self.join_kw(bases);
                let on1 = self.on_cond(std::slice::from_ref(&asrc), &bsrc);
                let left = vec![asrc, bsrc];
                let k2 = self.join_kw(bases);
                let on2 = self.on_cond(&left, &csrc);
                let mut scope = left;
                scope.push(csrc);
                From {
                    sql: format!("{a} {k1} {b} ON {on1} {k2} {c} ON {on2}"),
                    scope,
                    conds: vec![],
                }
            }
            // JOIN … USING between base tables.
            _ => {
                self.tag("join:using");
                let (t1, t2) = (self.rng.below(TABLES.len()), self.rng.below(TABLES.len()));
                let (l, ls) = self.base(t1);
                let (r, rs) = self.base(t2);
                let common: Vec<String> = ls
                    .cols
                    .iter()
                    .filter(|(n, _)| rs.cols.iter().any(|(m, _)| m == n))
                    .map(|(n, _)| n.clone())
                    .collect();
                let mut using = vec![common[self.rng.below(common.len())].clone()];
                if common.len() > 1 && self.rng.chance(0.2) {
                    let other = common[self.rng.below(common.len())].clone();
                    if !using.contains(&other) {
                        using.push(other);
                    }
                }
                let kw = self.join_kw(false);
                let mut sql = format!("{l} {kw} {r} USING ({})", using.join(", "));
                let mut scope = vec![ls, rs];
                if self.rng.chance(0.3) {
                    // A third table joined with ON.
                    self.tag("join:3way");
                    let (c, csrc) = self.source();
                    let k2 = self.join_kw(false);
                    let on = self.on_cond(&scope, &csrc);
                    let _ = write!(sql, " {k2} {c} ON {on}");
                    scope.push(csrc);
                }
                From {
                    sql,
                    scope,
                    conds: vec![],
                }
            }
        }
    }

    // -- subqueries ----------------------------------------------------------

    /// FROM of a subquery: one base table (or CTE) having a column of
    /// `kind`, sometimes joined to a second.
    fn sub_from(&mut self, kind: Option<Kind>) -> From {
        let (sql, s) = if !self.ctes.is_empty()
            && self.rng.chance(0.2)
            && self
                .ctes
                .iter()
                .any(|c| kind.is_none_or(|k| c.cols.iter().any(|(_, ck)| *ck == k)))
        {
            loop {
                let (sql, s) = self.cte_ref();
                if kind.is_none_or(|k| s.cols.iter().any(|(_, ck)| *ck == k)) {
                    break (sql, s);
                }
            }
        } else {
            let ts: Vec<usize> = (0..TABLES.len())
                .filter(|&t| kind.is_none_or(|k| TABLES[t].cols.iter().any(|(_, ck)| *ck == k)))
                .collect();
            let t = *self.rng.pick(&ts);
            self.base(t)
        };
        if self.rng.chance(0.2) {
            let t = self.rng.below(TABLES.len());
            let (r, rs) = self.base(t);
            let kw = if self.rng.chance(0.7) {
                "JOIN"
            } else {
                "LEFT JOIN"
            };
            let on = self.on_cond(std::slice::from_ref(&s), &rs);
            From {
                sql: format!("{sql} {kw} {r} ON {on}"),
                scope: vec![s, rs],
                conds: vec![],
            }
        } else {
            From {
                sql,
                scope: vec![s],
                conds: vec![],
            }
        }
    }

    /// A correlation `inner = outer` (same kind), preferring links.
    fn correlation(&mut self, inner: &[Src], outer: &[Src]) -> Option<String> {
        if outer.is_empty() {
            return None;
        }
        let mut links = Vec::new();
        for i in inner {
            for o in outer {
                for &(ct, cc, pt, pc) in LINKS {
                    if i.table == Some(ct) && o.table == Some(pt) {
                        links.push((i.col_named(cc).unwrap(), o.col_named(pc).unwrap()));
                    }
                    if i.table == Some(pt) && o.table == Some(ct) {
                        links.push((i.col_named(pc).unwrap(), o.col_named(cc).unwrap()));
                    }
                }
            }
        }
        let (i, o) = if !links.is_empty() && self.rng.chance(0.6) {
            links[self.rng.below(links.len())].clone()
        } else {
            let i = self.pick_col(inner, Some(Kind::Int))?;
            let o = self.pick_col(outer, Some(Kind::Int))?;
            (i, o)
        };
        self.tag("sub:correlated");
        let op = if self.rng.chance(0.85) {
            "="
        } else {
            *self.rng.pick(&["<", ">", "<>"])
        };
        Some(format!("{} {op} {}", i.sql, o.sql))
    }

    /// Random conjuncts for a subquery's WHERE, a correlation with
    /// probability `p_corr`.
    fn sub_where(&mut self, inner: &From, outer: &[Src], p_corr: f64) -> String {
        let mut conds = inner.conds.clone();
        if self.rng.chance(p_corr) {
            if let Some(c) = self.correlation(&inner.scope, outer) {
                conds.push(c);
            }
        }
        for _ in 0..self.rng.below(3) {
            let p = self.pred(&inner.scope, 1, true);
            conds.push(p);
        }
        if conds.is_empty() {
            String::new()
        } else {
            format!(" WHERE {}", conds.join(" AND "))
        }
    }

    /// `e [NOT] IN (SELECT …)` with a one-column subquery of e's kind.
    fn in_subquery(&mut self, outer: &[Src], e: Expr, not: bool) -> String {
        self.tag(if not { "sub:not-in" } else { "sub:in" });
        self.depth += 1;
        let inner = match self.rng.below(10) {
            // A UNION of two one-column selects.
            0 => {
                self.tag("union");
                let mut parts = Vec::new();
                for _ in 0..2 {
                    let f = self.sub_from(Some(e.kind));
                    let c = self.pick_col(&f.scope, Some(e.kind)).unwrap();
                    let wh = self.sub_where(&f, outer, 0.3);
                    parts.push(format!("SELECT {} FROM {}{wh}", c.sql, f.sql));
                }
                let op = if self.rng.chance(0.5) {
                    "UNION"
                } else {
                    "UNION ALL"
                };
                parts.join(&format!(" {op} "))
            }
            // Grouped: an aggregate per group.
            1 | 2 => {
                self.tag("group-by");
                let f = self.sub_from(Some(e.kind));
                let agg = match e.kind {
                    Kind::Int if self.rng.chance(0.4) => "COUNT(*)".to_string(),
                    _ => {
                        let c = self.pick_col(&f.scope, Some(e.kind)).unwrap();
                        format!("{}({})", self.rng.pick(&["MIN", "MAX"]), c.sql)
                    }
                };
                let g = self.pick_col(&f.scope, None).unwrap();
                let wh = self.sub_where(&f, outer, 0.3);
                format!("SELECT {agg} FROM {}{wh} GROUP BY {}", f.sql, g.sql)
            }
            _ => {
                let f = self.sub_from(Some(e.kind));
                let c = self.pick_col(&f.scope, Some(e.kind)).unwrap();
                let d = if self.rng.chance(0.15) {
                    "DISTINCT "
                } else {
                    ""
                };
                let wh = self.sub_where(&f, outer, 0.35);
                format!("SELECT {d}{} FROM {}{wh}", c.sql, f.sql)
            }
        };
        self.depth -= 1;
        let not = if not { "NOT " } else { "" };
        format!("{} {not}IN ({inner})", e.sql)
    }

    fn exists(&mut self, outer: &[Src], not: bool) -> String {
        self.tag(if not { "sub:not-exists" } else { "sub:exists" });
        self.depth += 1;
        let f = self.sub_from(None);
        let wh = self.sub_where(&f, outer, 0.85);
        let item = match self.rng.below(4) {
            0 => "*".to_string(),
            1 => self.pick_col(&f.scope, None).unwrap().sql,
            _ => "1".into(),
        };
        self.depth -= 1;
        let not = if not { "NOT " } else { "" };
        format!("{not}EXISTS (SELECT {item} FROM {}{wh})", f.sql)
    }

    /// A subquery returning at most one row: an aggregate, or a primary-key
    /// lookup.
    fn scalar_subquery(&mut self, outer: &[Src], kind: Option<Kind>) -> Expr {
        self.tag("sub:scalar");
        self.depth += 1;
        let e = if self.rng.chance(0.25) {
            // `(SELECT t.col FROM t WHERE t.id = <outer int or literal>)`.
            let ts: Vec<usize> = (0..TABLES.len())
                .filter(|&t| kind.is_none_or(|k| TABLES[t].cols.iter().any(|(_, ck)| *ck == k)))
                .collect();
            let t = *self.rng.pick(&ts);
            let (sql, s) = self.base(t);
            let c = self.pick_col(std::slice::from_ref(&s), kind).unwrap();
            let key = match self.pick_col(outer, Some(Kind::Int)) {
                Some(o) if self.rng.chance(0.8) => {
                    self.tag("sub:correlated");
                    o.sql
                }
                _ => self.int_lit(),
            };
            let mut wh = format!(" WHERE {}.id = {key}", s.alias);
            if self.rng.chance(0.3) {
                let p = self.atom(std::slice::from_ref(&s), false);
                let _ = write!(wh, " AND {p}");
            }
            Expr {
                sql: format!("(SELECT {} FROM {sql}{wh})", c.sql),
                kind: c.kind,
            }
        } else {
            let f = self.sub_from(kind);
            let (agg, k) = self.aggregate(&f.scope, kind, false);
            let wh = self.sub_where(&f, outer, 0.6);
            Expr {
                sql: format!("(SELECT {agg} FROM {}{wh})", f.sql),
                kind: k,
            }
        };
        self.depth -= 1;
        e
    }

    // -- SELECT --------------------------------------------------------------

    /// An aggregate call over the scope (of `kind` when given).
    fn aggregate(&mut self, scope: &[Src], kind: Option<Kind>, avg: bool) -> (String, Kind) {
        let want_text = kind == Some(Kind::Text);
        if want_text && cols_of(scope, Some(Kind::Text)).is_empty() {
            // No text column to aggregate: a constant.
            return (self.text_lit(), Kind::Text);
        }
        loop {
            let choice = self.rng.below(if avg { 9 } else { 8 });
            let r = match choice {
                0 | 1 if !want_text => Some(("COUNT(*)".to_string(), Kind::Int)),
                2 if !want_text => self.pick_col(scope, None).map(|c| {
                    let d = if self.rng.chance(0.3) {
                        "DISTINCT "
                    } else {
                        ""
                    };
                    (format!("COUNT({d}{})", c.sql), Kind::Int)
                }),
                3 | 4 if !want_text => self.pick_col(scope, Some(Kind::Int)).map(|c| {
                    let d = if self.rng.chance(0.1) {
                        "DISTINCT "
                    } else {
                        ""
                    };
                    (format!("SUM({d}{})", c.sql), Kind::Int)
                }),
                5..=7 => self.pick_col(scope, kind).map(|c| {
                    let f = *self.rng.pick(&["MIN", "MAX"]);
                    (format!("{f}({})", c.sql), c.kind)
                }),
                8 if !want_text => self.pick_col(scope, Some(Kind::Int)).map(|c| {
                    self.tag("avg");
                    (format!("AVG({})", c.sql), Kind::Int)
                }),
                _ => None,
            };
            if let Some(r) = r {
                self.tag("aggregate");
                return r;
            }
        }
    }

    /// A (non-grouped) select item of `kind` when given.
    fn item(&mut self, scope: &[Src], kind: Option<Kind>) -> Expr {
        let kind = kind.unwrap_or_else(|| {
            if self.rng.chance(0.75) {
                Kind::Int
            } else {
                Kind::Text
            }
        });
        let p_scalar = if self.depth == 0 && self.focus == Focus::Scalar {
            0.5
        } else if self.depth < 2 {
            0.07
        } else {
            0.0
        };
        if self.rng.chance(p_scalar) {
            return self.scalar_subquery(scope, Some(kind));
        }
        let Some(c) = self.pick_col(scope, Some(kind)) else {
            return Expr {
                sql: self.lit_of(kind),
                kind,
            };
        };
        match self.rng.below(12) {
            0 if kind == Kind::Int => {
                let d = self.pick_col(scope, Some(Kind::Int)).unwrap();
                let op = *self.rng.pick(&["+", "-", "*"]);
                Expr {
                    sql: format!("({} {op} {})", c.sql, d.sql),
                    kind,
                }
            }
            1 if kind == Kind::Int => Expr {
                sql: format!("({} + {})", c.sql, self.int_lit()),
                kind,
            },
            2 => {
                let d = if self.rng.chance(0.5) {
                    self.pick_col(scope, Some(kind)).unwrap().sql
                } else {
                    self.lit_of(kind)
                };
                Expr {
                    sql: format!("COALESCE({}, {d})", c.sql),
                    kind,
                }
            }
            _ => c,
        }
    }

    fn having(&mut self, scope: &[Src]) -> String {
        self.tag("having");
        let one = |g: &mut Self| -> String {
            match g.rng.below(5) {
                0 | 1 => format!("COUNT(*) {} {}", g.cmp_op(), g.rng.range(0, 3)),
                2 => match g.pick_col(scope, Some(Kind::Int)) {
                    Some(c) => format!("SUM({}) {} {}", c.sql, g.cmp_op(), g.int_lit()),
                    None => "COUNT(*) > 1".into(),
                },
                3 => {
                    let c = g.any_col(scope);
                    let f = *g.rng.pick(&["MIN", "MAX"]);
                    if g.rng.chance(0.2) {
                        format!("{f}({}) IS NULL", c.sql)
                    } else {
                        format!("{f}({}) {} {}", c.sql, g.cmp_op(), g.lit_of(c.kind))
                    }
                }
                _ => {
                    let c = g.any_col(scope);
                    format!("COUNT({}) {} 1", c.sql, g.cmp_op())
                }
            }
        };
        if self.rng.chance(0.25) {
            let (a, b) = (one(self), one(self));
            let op = *self.rng.pick(&["AND", "OR"]);
            format!(" HAVING {a} {op} {b}")
        } else {
            format!(" HAVING {}", one(self))
        }
    }

    /// ` ORDER BY` every output column (by alias, position or expression),
    /// sometimes with LIMIT / OFFSET.
    fn order_limit(&mut self, items: &[Expr], names: Option<&[String]>) -> String {
        self.tag("order-by");
        let keys: Vec<String> = items
            .iter()
            .enumerate()
            .map(|(i, e)| {
                let plain_col = e.sql.contains('.') && !e.sql.contains(['(', ' ']);
                let k = match (names, self.rng.below(3)) {
                    (Some(ns), 0 | 1) => ns[i].clone(),
                    (_, 2) if plain_col => e.sql.clone(),
                    _ => (i + 1).to_string(),
                };
                let dir = *self.rng.pick(&["", " ASC", " DESC"]);
                format!("{k}{dir}")
            })
            .collect();
        // Sort keys in a random order (still all of them).
        let mut keys = keys;
        for i in (1..keys.len()).rev() {
            keys.swap(i, self.rng.below(i + 1));
        }
        let mut out = format!(" ORDER BY {}", keys.join(", "));
        if self.rng.chance(0.7) {
            self.tag("limit");
            let n = self.rng.range(0, 12);
            if self.rng.chance(0.35) {
                let _ = write!(out, " LIMIT {n} OFFSET {}", self.rng.range(0, 6));
            } else {
                let _ = write!(out, " LIMIT {n}");
            }
        }
        out
    }

    /// One SELECT; `named` gives every output an alias; `want` fixes the
    /// output kinds; `order` allows a trailing ORDER BY (… LIMIT).
    fn select(&mut self, named: bool, want: Option<&[Kind]>, order: bool) -> (Sel, Vec<String>) {
        let from = self.gen_from();
        let scope = from.scope.clone();
        let top = self.depth == 0;
        let grouped = self.rng.chance(if top && self.focus == Focus::Group {
            0.8
        } else {
            0.18
        });
        let agg_only = !grouped && self.rng.chance(0.07);
        let mut items: Vec<Expr> = Vec::new();
        let mut group_by = String::new();
        let mut having = String::new();
        let avg = top;
        if grouped {
            self.tag("group-by");
            let mut keys: Vec<Expr> = Vec::new();
            for _ in 0..self.rng.range(1, 2) {
                let c = self.any_col(&scope);
                if !keys.iter().any(|k| k.sql == c.sql) {
                    keys.push(c);
                }
            }
            match want {
                Some(kinds) => {
                    for &k in kinds {
                        let ks: Vec<&Expr> = keys.iter().filter(|e| e.kind == k).collect();
                        if !ks.is_empty() && self.rng.chance(0.5) {
                            items.push(ks[self.rng.below(ks.len())].clone());
                        } else {
                            let (sql, kind) = self.aggregate(&scope, Some(k), false);
                            items.push(Expr { sql, kind });
                        }
                    }
                }
                None => {
                    for k in &keys {
                        if self.rng.chance(0.85) {
                            items.push(k.clone());
                        }
                    }
                    for _ in 0..self.rng.range(1, 2) {
                        let (sql, kind) = self.aggregate(&scope, None, avg);
                        items.push(Expr { sql, kind });
                    }
                }
            }
            let ks: Vec<String> = keys.iter().map(|k| k.sql.clone()).collect();
            group_by = format!(" GROUP BY {}", ks.join(", "));
            if self.rng.chance(0.35) {
                having = self.having(&scope);
            }
        } else if agg_only {
            let kinds: Vec<Option<Kind>> = match want {
                Some(ks) => ks.iter().map(|k| Some(*k)).collect(),
                None => (0..self.rng.range(1, 3)).map(|_| None).collect(),
            };
            for k in kinds {
                let (sql, kind) = self.aggregate(&scope, k, avg && want.is_none());
                items.push(Expr { sql, kind });
            }
        } else {
            let kinds: Vec<Option<Kind>> = match want {
                Some(ks) => ks.iter().map(|k| Some(*k)).collect(),
                None => (0..self.rng.range(1, 4)).map(|_| None).collect(),
            };
            for k in kinds {
                let e = self.item(&scope, k);
                items.push(e);
            }
        }
        let distinct = if !agg_only && self.rng.chance(if grouped { 0.05 } else { 0.18 }) {
            self.tag("distinct");
            "DISTINCT "
        } else {
            ""
        };
        let wh = self.where_clause(&scope, from.conds);
        let names: Vec<String> = if named {
            items.iter().map(|_| format!("o{}", self.fresh())).collect()
        } else {
            Vec::new()
        };
        let list: Vec<String> = items
            .iter()
            .enumerate()
            .map(|(i, e)| {
                if named {
                    format!("{} AS {}", e.sql, names[i])
                } else {
                    e.sql.clone()
                }
            })
            .collect();
        let mut sql = format!(
            "SELECT {distinct}{} FROM {}{wh}{group_by}{having}",
            list.join(", "),
            from.sql
        );
        let ordered = order && self.rng.chance(if top { 0.4 } else { 0.2 });
        if ordered {
            let ns = named.then_some(names.as_slice());
            let ob = self.order_limit(&items, ns);
            sql.push_str(&ob);
        }
        let kinds = items.iter().map(|e| e.kind).collect();
        (
            Sel {
                sql,
                kinds,
                ordered,
            },
            names,
        )
    }

    /// A SELECT or `SELECT … UNION [ALL] SELECT …` (every output named when
    /// `named`), with an optional ORDER BY over all outputs.
    fn select_or_union(&mut self, named: bool, want: Option<&[Kind]>) -> (Sel, Vec<String>) {
        let top = self.depth == 0;
        let union = self.rng.chance(if top && self.focus == Focus::Union {
            0.9
        } else {
            0.1
        });
        if !union {
            return self.select(named, want, true);
        }
        // UNION ALL, UNION, and now and then INTERSECT / EXCEPT (distinct
        // in both engines).
        let op = match self.rng.below(8) {
            0..=2 => "UNION ALL",
            3..=5 => "UNION",
            6 => "INTERSECT",
            _ => "EXCEPT",
        };
        self.tag(match op {
            "UNION ALL" => "union-all",
            "UNION" => "union",
            "INTERSECT" => "intersect",
            _ => "except",
        });
        let (first, names) = self.select(true, want, false);
        let named2 = self.rng.chance(0.3);
        let (second, _) = self.select(named2, Some(&first.kinds), false);
        let mut sql = format!("{} {op} {}", first.sql, second.sql);
        let ordered = self.rng.chance(if top { 0.4 } else { 0.2 });
        if ordered {
            // Items only matter for "is this a plain column": never here.
            let items: Vec<Expr> = first
                .kinds
                .iter()
                .map(|k| Expr {
                    sql: "(x)".into(),
                    kind: *k,
                })
                .collect();
            let ob = self.order_limit(&items, Some(&names));
            sql.push_str(&ob);
        }
        (
            Sel {
                sql,
                kinds: first.kinds,
                ordered,
            },
            names,
        )
    }

    /// The top-level query and whether its order is total.
    fn query(&mut self) -> (String, bool) {
        self.focus = match self.rng.below(20) {
            0..=5 => Focus::Plain,
            6..=8 => Focus::Subquery,
            9 | 10 => Focus::Scalar,
            11..=13 => Focus::Group,
            14 | 15 => Focus::Derived,
            16 | 17 => Focus::Cte,
            _ => Focus::Union,
        };
        let mut with = String::new();
        if self.focus == Focus::Cte {
            let n = if self.rng.chance(0.3) { 2 } else { 1 };
            let mut defs = Vec::new();
            for _ in 0..n {
                let name = format!("q{}", self.fresh());
                self.depth += 1;
                // Columns named by a column list, or by the body's aliases.
                let col_list = self.rng.chance(0.4);
                let (sel, names) = self.select_or_union(!col_list, None);
                self.depth -= 1;
                let names: Vec<String> = if col_list {
                    (0..sel.kinds.len())
                        .map(|i| format!("{name}c{i}"))
                        .collect()
                } else {
                    names
                };
                if col_list {
                    defs.push(format!("{name}({}) AS ({})", names.join(", "), sel.sql));
                } else {
                    defs.push(format!("{name} AS ({})", sel.sql));
                }
                self.ctes.push(Src {
                    alias: name,
                    table: None,
                    cols: names.into_iter().zip(sel.kinds).collect(),
                });
            }
            with = format!("WITH {} ", defs.join(", "));
        }
        let named = self.rng.chance(0.5);
        let (sel, _) = self.select_or_union(named, None);
        (format!("{with}{}", sel.sql), sel.ordered)
    }
}

/// The comparison with its operands swapped.
fn flip(op: &str) -> &str {
    match op {
        "<" => ">",
        ">" => "<",
        "<=" => ">=",
        ">=" => "<=",
        o => o,
    }
}

// ---------------------------------------------------------------------------
// The run

struct Failure {
    seed: u64,
    query: usize,
    sql: String,
    want: Rows,
    got: Result<Rows, String>,
    data: String,
    shrunk: bool,
}

#[derive(Default)]
struct Stats {
    /// Per tag: (queries, failed).
    tags: BTreeMap<&'static str, (usize, usize)>,
    queries: usize,
    failures: Vec<Failure>,
    errors: BTreeMap<String, (usize, String)>,
    mismatches: usize,
    shrinks: usize,
    /// Hash tables that went to disk (`Created_tmp_disk_tables`).
    disk_tables: u64,
}

fn run_seed(seed: u64, n: usize, right_join: bool, stats: &mut Stats) {
    let mut rng = Rng::new(seed);
    let mut eng = Engines::open();
    check_oracle_null_order(&eng.lite);
    let mut data = Data::generate(&mut rng);
    for q in 0..n {
        if q % QUERIES_PER_DATASET == 0 {
            data = Data::generate(&mut rng);
            eng.load(&data);
        }
        let mut g = Gen::new(&mut rng, right_join);
        let (sql, ordered) = g.query();
        let mut tags = g.tags;
        tags.insert("all");
        stats.queries += 1;
        let t = Instant::now();
        let (want, bad) = eng.check(&sql, ordered);
        if t.elapsed().as_secs_f64() > 1.0 {
            eprintln!(
                "slow query ({:.1} s), seed {seed} #{q}: {sql}",
                t.elapsed().as_secs_f64()
            );
        }
        if std::env::var_os("QDIFF_TRACE").is_some() {
            eprintln!("seed {seed} #{q}: {sql}");
        }
        for t in &tags {
            stats.tags.entry(t).or_default().0 += 1;
        }
        let Some(got) = bad else { continue };
        for t in &tags {
            stats.tags.entry(t).or_default().1 += 1;
        }
        let mut shown = data.clone();
        let mut shrunk = false;
        match &got {
            Err(e) => {
                let entry = stats.errors.entry(e.clone()).or_insert((0, sql.clone()));
                entry.0 += 1;
                if sql.len() < entry.1.len() {
                    entry.1 = sql.clone();
                }
            }
            Ok(_) => {
                stats.mismatches += 1;
                if stats.shrinks < MAX_SHRINKS {
                    stats.shrinks += 1;
                    shown = eng.shrink(&data, &sql, ordered);
                    shrunk = true;
                }
            }
        }
        // The answers on the (possibly shrunk) data.
        let (want, got) = if shrunk {
            let (w, g) = eng.check(&sql, ordered);
            let got = g.unwrap_or_else(|| eng.trib_rows(&sql));
            eng.load(&data);
            (w, got)
        } else {
            (want, got)
        };
        stats.failures.push(Failure {
            seed,
            query: q,
            sql,
            want,
            got,
            data: shown.script(),
            shrunk,
        });
    }
    if let Ok(r) = eng
        .trib
        .execute("SHOW STATUS LIKE 'Created_tmp_disk_tables'")
    {
        if let Some(tributary::Value::Text(n)) = r.rows.first().and_then(|r| r.get(1)) {
            stats.disk_tables += n.parse::<u64>().unwrap_or(0);
        }
    }
    drop(eng.trib);
    eng.db.shutdown();
}

fn seeds() -> Vec<u64> {
    common::oracle::seeds_from_env("QDIFF_SEED", DEFAULT_SEEDS)
}

fn queries_per_seed() -> usize {
    common::oracle::count_from_env("QDIFF_QUERIES", QUERIES / DEFAULT_SEEDS.len())
}

#[test]
fn multi_table_queries_match_sqlite() {
    let t0 = Instant::now();
    let right_join = {
        let lite = rusqlite::Connection::open_in_memory().unwrap();
        sqlite_has_right_join(&lite)
    };
    let mut stats = Stats::default();
    let per_seed = queries_per_seed();
    for seed in seeds() {
        run_seed(seed, per_seed, right_join, &mut stats);
    }

    let mut summary = String::new();
    let _ = writeln!(
        summary,
        "query differential: {} queries in {:.1} s (RIGHT JOIN {}), {} failed: \
         {} mismatches, {} errors",
        stats.queries,
        t0.elapsed().as_secs_f64(),
        if right_join { "on" } else { "off" },
        stats.failures.len(),
        stats.mismatches,
        stats.failures.len() - stats.mismatches,
    );
    let _ = writeln!(
        summary,
        "  {:<18} {:>7} {:>7}",
        "construct", "queries", "failed"
    );
    for (t, (n, f)) in &stats.tags {
        let _ = writeln!(summary, "  {t:<18} {n:>7} {f:>7}");
    }
    eprint!("{summary}");
    if stats.failures.is_empty() {
        return;
    }

    let mut report = String::new();
    if !stats.errors.is_empty() {
        let _ = writeln!(report, "\nTributary errors (count, shortest query):");
        let mut errs: Vec<_> = stats.errors.iter().collect();
        errs.sort_by_key(|e| std::cmp::Reverse(e.1 .0));
        for (e, (n, sql)) in errs {
            let _ = writeln!(report, "  {n:>5} × {e}\n          {sql}");
        }
    }
    // Mismatches first, shortest queries first within each group.
    let mut fails: Vec<&Failure> = stats.failures.iter().collect();
    fails.sort_by_key(|f| (f.got.is_err(), !f.shrunk, f.sql.len()));
    let _ = writeln!(
        report,
        "\nThe first {} of {} failures (rerun one seed with QDIFF_SEED=<seed>):",
        MAX_REPORTS.min(fails.len()),
        fails.len()
    );
    for f in fails.iter().take(MAX_REPORTS) {
        let _ = writeln!(
            report,
            "\n  seed {} query #{}:\n    {}\n    data{}:\n{}    SQLite:\n{}    Tributary:",
            f.seed,
            f.query,
            f.sql,
            if f.shrunk { " (shrunk)" } else { "" },
            f.data,
            show_rows(&f.want, 40, "      "),
        );
        match &f.got {
            Ok(rows) => report.push_str(&show_rows(rows, 40, "      ")),
            Err(e) => {
                let _ = writeln!(report, "      {e}");
            }
        }
    }
    eprintln!("{report}");
    panic!(
        "{} of {} queries failed on Tributary (see above)",
        stats.failures.len(),
        stats.queries
    );
}

/// The same random queries (one seed) with every sort and hash table at
/// its smallest budget: GROUP BY, DISTINCT, UNION and hash joins go
/// through their spill files (hundreds of tables per seed) and still
/// answer what SQLite answers (decision 027).
#[test]
fn multi_table_queries_match_sqlite_while_spilling() {
    SESSION_SETUP.with(|s| s.set(&["SET sort_buffer_size = 32768", "SET tmp_table_size = 1024"]));
    let right_join = {
        let lite = rusqlite::Connection::open_in_memory().unwrap();
        sqlite_has_right_join(&lite)
    };
    let mut stats = Stats::default();
    let seed = seeds()[0];
    run_seed(seed, queries_per_seed(), right_join, &mut stats);
    eprintln!(
        "query differential while spilling: {} queries, {} hash tables spilled, {} failed",
        stats.queries,
        stats.disk_tables,
        stats.failures.len()
    );
    assert!(stats.disk_tables > 0, "nothing spilled");
    if let Some(f) = stats.failures.first() {
        panic!(
            "{} of {} queries failed while spilling (rerun with QDIFF_SEED={seed}); first: {}\n{:?}",
            stats.failures.len(),
            stats.queries,
            f.sql,
            f.got
        );
    }
}

/// Recursive CTEs per seed (`QDIFF_SEED` chooses the seeds here too).
const RECURSIVE_QUERIES: usize = 150;

/// A random recursive CTE over the data: a walk of the graph one table's
/// two integer columns make (`src → dst`), with UNION DISTINCT (ends on
/// cycles by itself) or a depth bound (UNION ALL or DISTINCT), or a
/// counter joined back to a table; read whole, aggregated or joined.
fn recursive_query(rng: &mut Rng) -> String {
    let t = &TABLES[rng.below(TABLES.len())];
    let ints: Vec<&str> = t
        .cols
        .iter()
        .filter(|(_, k)| *k == Kind::Int)
        .map(|(n, _)| *n)
        .collect();
    let (src, dst) = (*rng.pick(&ints), *rng.pick(&ints));
    let name = t.name;
    let k = rng.range(0, 6);
    let seed_from_table = rng.chance(0.6);
    let seed_v = if seed_from_table {
        format!(
            "SELECT {dst} FROM {name} WHERE {} {} {k}",
            rng.pick(&ints),
            rng.pick(&["=", "<", ">=", "<>"])
        )
    } else {
        format!("SELECT {k}")
    };
    let join = |rng: &mut Rng, cols: &str, extra: &str| match rng.below(3) {
        0 => format!("SELECT {cols} FROM r JOIN {name} e ON e.{src} = r.v{extra}"),
        1 => format!("SELECT {cols} FROM {name} e JOIN r ON r.v = e.{src}{extra}"),
        _ => format!(
            "SELECT {cols} FROM r, {name} e WHERE e.{src} = r.v{}",
            extra.replacen(" WHERE", " AND", 1)
        ),
    };
    let (cte, cols) = match rng.below(3) {
        0 => {
            let step = join(rng, &format!("e.{dst}"), "");
            (format!("r (v) AS ({seed_v} UNION {step})"), vec!["v"])
        }
        1 => {
            let all = rng.chance(0.5);
            let depth = if all {
                rng.range(1, 2)
            } else {
                rng.range(1, 5)
            };
            let seed = seed_v.replacen(&format!("SELECT {dst} "), &format!("SELECT {dst}, 0 "), 1);
            let seed = if seed_from_table {
                seed
            } else {
                format!("SELECT {k}, 0")
            };
            let step = join(
                rng,
                &format!("e.{dst}, r.d + 1"),
                &format!(" WHERE r.d < {depth}"),
            );
            let op = if all { "UNION ALL" } else { "UNION" };
            (format!("r (v, d) AS ({seed} {op} {step})"), vec!["v", "d"])
        }
        _ => {
            let lim = rng.range(0, 12);
            let step = rng.range(1, 3);
            (
                format!("r (v) AS (SELECT {k} UNION ALL SELECT v + {step} FROM r WHERE v < {lim})"),
                vec!["v"],
            )
        }
    };
    let outer = match rng.below(4) {
        0 => format!("SELECT {} FROM r", cols.join(", ")),
        1 => "SELECT COUNT(*), MIN(v), MAX(v), COUNT(DISTINCT v) FROM r".to_string(),
        2 => format!("SELECT r.v, t.id FROM r JOIN {name} t ON t.{src} = r.v"),
        _ => format!("SELECT DISTINCT {} FROM r", cols.join(", ")),
    };
    format!("WITH RECURSIVE {cte} {outer}")
}

#[test]
fn recursive_ctes_match_sqlite() {
    let mut failures = Vec::new();
    let mut n = 0;
    for seed in seeds() {
        let mut rng = Rng::new(seed ^ 0x7265_6375_7273_6976);
        let mut eng = Engines::open();
        let mut data = Data::generate(&mut rng);
        for q in 0..RECURSIVE_QUERIES {
            if q % QUERIES_PER_DATASET == 0 {
                data = Data::generate(&mut rng);
                eng.load(&data);
            }
            let sql = recursive_query(&mut rng);
            n += 1;
            if let (want, Some(got)) = eng.check(&sql, false) {
                failures.push(format!(
                    "seed {seed} #{q}: {sql}\n  data:\n{}  SQLite:\n{}  Tributary: {got:?}",
                    data.script(),
                    show_rows(&want, 40, "    ")
                ));
            }
        }
        drop(eng.trib);
        eng.db.shutdown();
    }
    eprintln!(
        "recursive CTE differential: {n} queries, {} failed",
        failures.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// `QDIFF_REPRO=<file>`: run the file's statements (one a line; `--`
/// comments skipped) on both engines over the empty schema and print both
/// answers of each query; fails when one differs. A tool, run on demand:
/// `QDIFF_REPRO=f.sql cargo test --test query_differential -- --ignored`.
#[test]
#[ignore = "a reproduction tool: needs QDIFF_REPRO=<file>"]
fn repro_from_file() {
    let path = std::env::var_os("QDIFF_REPRO").expect("set QDIFF_REPRO=<file>");
    let text = std::fs::read_to_string(&path).expect("QDIFF_REPRO file");
    let mut eng = Engines::open();
    let mut differ = 0;
    for line in text.lines().map(str::trim) {
        let sql = line.trim_end_matches(';');
        if sql.is_empty() || sql.starts_with("--") {
            continue;
        }
        let upper = sql.to_ascii_uppercase();
        if !(upper.starts_with("SELECT") || upper.starts_with("WITH")) {
            eng.both(sql);
            continue;
        }
        let ordered = upper.contains("ORDER BY");
        let (want, bad) = eng.check(sql, ordered);
        let verdict = if bad.is_some() { "DIFFERENT" } else { "same" };
        eprintln!(
            "{sql}\n  SQLite:\n{}  Tributary ({verdict}):",
            show_rows(&want, 40, "      ")
        );
        differ += usize::from(bad.is_some());
        match bad {
            None => eprint!("{}", show_rows(&want, 40, "      ")),
            Some(Ok(rows)) => eprint!("{}", show_rows(&rows, 40, "      ")),
            Some(Err(e)) => eprintln!("      {e}"),
        }
    }
    assert_eq!(differ, 0, "{differ} queries differ");
}

// ---------------------------------------------------------------------------
// Window functions (issue 41 item 2): the supported subset against SQLite's
// window functions — ROW_NUMBER / RANK / DENSE_RANK / PERCENT_RANK /
// CUME_DIST / NTILE / LAG / LEAD / FIRST_VALUE / LAST_VALUE / NTH_VALUE,
// explicit ROWS / RANGE frames (RANGE offsets over one numeric key
// included), and COUNT / SUM /
// AVG / MIN / MAX OVER (PARTITION BY … ORDER BY …) with the default frame, over a
// table, a join, a grouped block (windows over aggregates) and under a
// derived table (top-N per group). ROW_NUMBER and the positional
// functions always order by a unique key last, so that its answer is determined; both engines sort NULL first
// ascending, last descending.

/// One window call over columns `cols` of `(name, kind)` (`id` unique).
fn window_call(rng: &mut Rng, cols: &[(&str, Kind)], id: &str) -> String {
    let keys: Vec<&str> = cols.iter().map(|c| c.0).collect();
    let ints: Vec<&str> = cols
        .iter()
        .filter(|c| c.1 == Kind::Int)
        .map(|c| c.0)
        .collect();
    let mut partition = Vec::new();
    for _ in 0..rng.below(3) {
        partition.push(rng.pick(&keys).to_string());
    }
    let mut order = Vec::new();
    for _ in 0..rng.below(3) {
        let dir = *rng.pick(&["", " ASC", " DESC"]);
        order.push(format!("{}{dir}", rng.pick(&keys)));
    }
    let func = match rng.below(15) {
        0 => {
            // Determined only with a unique key last.
            order.push(format!("{id}{}", rng.pick(&["", " DESC"])));
            "ROW_NUMBER()".to_string()
        }
        9..=13 => {
            // Positional functions: determined only with a unique key last.
            order.push(format!("{id}{}", rng.pick(&["", " DESC"])));
            let (c, k) = *rng.pick(cols);
            let default = match k {
                Kind::Int => rng.range(-1, 3).to_string(),
                Kind::Text => format!("'{}'", rng.pick(TEXTS)),
            };
            match rng.below(5) {
                0 => format!("LAG({c})"),
                // A default has its argument's type (else 1235): not over
                // SUM (a DECIMAL).
                1 if c.contains('(') => format!("LEAD({c}, {})", rng.range(0, 3)),
                1 => format!("LEAD({c}, {}, {default})", rng.range(0, 3)),
                2 => format!("FIRST_VALUE({c})"),
                3 if rng.chance(0.5) => format!("NTH_VALUE({c}, {})", rng.range(1, 3)),
                3 => format!("LAST_VALUE({c})"),
                _ => format!("NTILE({})", rng.range(1, 5)),
            }
        }
        14 => rng.pick(&["PERCENT_RANK()", "CUME_DIST()"]).to_string(),
        1 => "RANK()".to_string(),
        2 => "DENSE_RANK()".to_string(),
        3 => "COUNT(*)".to_string(),
        4 => format!("COUNT({})", rng.pick(&keys)),
        5 => format!("SUM({})", rng.pick(&ints)),
        6 => format!("AVG({})", rng.pick(&ints)),
        7 => format!("MIN({})", rng.pick(&keys)),
        _ => format!("MAX({})", rng.pick(&keys)),
    };
    // An explicit frame for the functions that read one: ROWS (then the
    // order ends with the unique key, so that the frame is determined) or
    // RANGE with UNBOUNDED / CURRENT ROW bounds.
    let framing = [
        "COUNT",
        "SUM",
        "AVG",
        "MIN",
        "MAX",
        "FIRST_VALUE",
        "LAST_VALUE",
        "NTH_VALUE",
    ]
    .iter()
    .any(|f| func.starts_with(&format!("{f}(")));
    let mut frame = String::new();
    // RANGE with offsets needs exactly one numeric ORDER BY key.
    let numeric_key = match order.as_slice() {
        [o] => cols
            .iter()
            .any(|c| c.1 == Kind::Int && o.split(' ').next() == Some(c.0)),
        _ => false,
    };
    let offsets = [
        "UNBOUNDED PRECEDING",
        "2 PRECEDING",
        "1 PRECEDING",
        "CURRENT ROW",
        "1 FOLLOWING",
        "2 FOLLOWING",
        "UNBOUNDED FOLLOWING",
    ];
    if framing && numeric_key && rng.chance(0.4) {
        // RANGE offsets: peers and NULL keys as MySQL 8 and SQLite have
        // them (a NULL key's frame is the NULLs).
        let s = rng.below(offsets.len() - 1);
        let e = rng.range(s.max(1) as i64, offsets.len() as i64 - 1) as usize;
        frame = format!(" RANGE BETWEEN {} AND {}", offsets[s], offsets[e]);
    } else if framing && rng.chance(0.4) {
        let bounds: &[&str] = if rng.chance(0.6) {
            if !order.last().is_some_and(|o| o.starts_with(id)) {
                order.push(id.to_string());
            }
            &offsets
        } else {
            &["UNBOUNDED PRECEDING", "CURRENT ROW", "UNBOUNDED FOLLOWING"]
        };
        let units = if bounds.len() > 3 { "ROWS" } else { "RANGE" };
        let s = rng.below(bounds.len() - 1);
        let e = rng.range(s.max(1) as i64, bounds.len() as i64 - 1) as usize;
        frame = format!(" {units} BETWEEN {} AND {}", bounds[s], bounds[e]);
    }
    let mut spec = Vec::new();
    if !partition.is_empty() {
        spec.push(format!("PARTITION BY {}", partition.join(", ")));
    }
    if !order.is_empty() {
        spec.push(format!("ORDER BY {}", order.join(", ")));
    }
    format!("{func} OVER ({}{frame})", spec.join(" "))
}

/// A random query with window functions; the answer's row order is not
/// compared.
fn window_query(rng: &mut Rng) -> String {
    let a: &[(&str, Kind)] = &[
        ("id", Kind::Int),
        ("x", Kind::Int),
        ("y", Kind::Int),
        ("s", Kind::Text),
    ];
    let joined: &[(&str, Kind)] = &[
        ("a.id", Kind::Int),
        ("a.x", Kind::Int),
        ("b.z", Kind::Int),
        ("b.s", Kind::Text),
    ];
    let calls = |rng: &mut Rng, cols: &[(&str, Kind)], id: &str| -> Vec<String> {
        (0..rng.range(1, 3))
            .map(|i| format!("{} AS w{i}", window_call(rng, cols, id)))
            .collect()
    };
    match rng.below(5) {
        0 | 1 => {
            let w = calls(rng, a, "id");
            let filter = if rng.chance(0.4) {
                format!(
                    " WHERE x {} {}",
                    rng.pick(&["<", ">", "<>"]),
                    rng.range(0, 6)
                )
            } else {
                String::new()
            };
            format!("SELECT id, x, s, {} FROM a{filter}", w.join(", "))
        }
        2 => {
            let w = calls(rng, joined, "b.id");
            format!(
                "SELECT a.id, b.id, {} FROM a JOIN b ON b.a_id = a.id",
                w.join(", ")
            )
        }
        3 => {
            // Windows over a grouped block's aggregates.
            let g = *rng.pick(&["x", "y", "s"]);
            let grouped: &[(&str, Kind)] = &[
                (g, if g == "s" { Kind::Text } else { Kind::Int }),
                ("COUNT(*)", Kind::Int),
                ("SUM(y)", Kind::Int),
            ];
            let w = calls(rng, grouped, g);
            format!(
                "SELECT {g}, COUNT(*), SUM(y), {} FROM a GROUP BY {g}",
                w.join(", ")
            )
        }
        _ => {
            // Top-N per group: the window under a derived table, filtered.
            let p = *rng.pick(&["x", "s", "y"]);
            let o = *rng.pick(&["y", "x DESC", "s"]);
            let f = *rng.pick(&["ROW_NUMBER", "RANK", "DENSE_RANK"]);
            let tail = if f == "ROW_NUMBER" { ", id" } else { "" };
            format!(
                "SELECT id, r FROM (SELECT id, {f}() OVER (PARTITION BY {p} ORDER BY {o}{tail}) AS r FROM a) q WHERE r <= {}",
                rng.range(1, 3)
            )
        }
    }
}

#[test]
fn window_queries_match_sqlite() {
    window_differential("window differential", 1);
}

/// The same window queries with `sort_buffer_size` at its smallest: the
/// window operator's units go through its spilling sort, a window call
/// and a partition at a time (decision 027), and still answer what
/// SQLite answers.
#[test]
fn window_queries_match_sqlite_while_spilling() {
    SESSION_SETUP.with(|s| s.set(&["SET sort_buffer_size = 32768"]));
    // Tables of thousands of rows: more than the 512 KiB of units the
    // window holds in memory then (16 × the sort buffer).
    let files = window_differential("window differential while spilling", 100);
    assert!(files > 0, "no window spilled");
}

/// Runs the window queries of every seed against both engines; panics
/// on a difference; returns the temporary files Tributary created.
fn window_differential(what: &str, scale: usize) -> u64 {
    let mut e = Engines::open();
    let mut failures = Vec::new();
    let mut queries = 0;
    for seed in seeds() {
        let mut rng = Rng::new(seed ^ 0x0077_1d0f);
        let mut data = Data::generate_scaled(&mut rng, scale);
        e.load(&data);
        for q in 0..queries_per_seed() / 2 / scale.min(16) {
            if q % QUERIES_PER_DATASET == QUERIES_PER_DATASET - 1 {
                data = Data::generate_scaled(&mut rng, scale);
                e.load(&data);
            }
            let sql = window_query(&mut rng);
            queries += 1;
            if let (want, Some(got)) = e.check(&sql, false) {
                failures.push((seed, q, sql, data.script(), want, got));
            }
        }
    }
    let files = match e.trib.execute("SHOW STATUS LIKE 'Created_tmp_files'") {
        Ok(r) => match r.rows.first().and_then(|r| r.get(1)) {
            Some(tributary::Value::Text(n)) => n.parse::<u64>().unwrap_or(0),
            _ => 0,
        },
        Err(_) => 0,
    };
    eprintln!(
        "{what}: {queries} queries, {} failed, {files} temporary files",
        failures.len()
    );
    for (seed, q, sql, data, want, got) in failures.iter().take(10) {
        eprintln!(
            "\n  seed {seed} query #{q}:\n    {sql}\n    data:\n{data}    SQLite:\n{}    Tributary:\n{}",
            show_rows(want, 40, "      "),
            match got {
                Ok(rows) => show_rows(rows, 40, "      "),
                Err(err) => format!("      {err}\n"),
            }
        );
    }
    assert!(
        failures.is_empty(),
        "{} of {queries} window queries differ",
        failures.len()
    );
    files
}
