//! Differential guard: random single-table schemas, data and queries run on
//! Tributary (in-process) and on SQLite (`rusqlite`, bundled) as the oracle;
//! any difference in the answers fails the test. A second part checks
//! vector search (`ORDER BY l2_distance / cosine_distance … LIMIT k`, with
//! and without WHERE, with no index, a synchronous and an ASYNC HNSW index)
//! and vector arithmetic against brute force computed here.
//!
//! Only constructs whose MySQL semantics SQLite shares are generated: no `/`
//! (MySQL's is decimal division, SQLite's integer), no `%` on non-integers
//! (SQLite casts to INTEGER), no string/number comparisons, lowercase ASCII
//! letters and digits only in strings (MySQL's default collation is
//! case-insensitive and PAD SPACE, SQLite's BINARY is neither; LIKE is
//! case-insensitive in both), numbers small enough that no integer
//! expression overflows, DOUBLE data in multiples of 1/4 so sums are exact.
//! NULL sorts first ascending and last descending in MySQL and SQLite alike
//! (checked at start-up).
//!
//! Seeds: a fixed list (CI), or `TRIBUTARY_DIFF_SEED=<n>[,<n>…]`;
//! `TRIBUTARY_DIFF_QUERIES=<n>` sets the number of queries per seed. A
//! mismatch prints the seed, the query and both answers; rerun the one seed
//! with `TRIBUTARY_DIFF_SEED=<seed> cargo test --test differential`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic fails the test

mod common;

use std::cmp::Ordering;
use std::fmt::Write as _;
use std::time::{Duration, Instant};

use tributary::testing::{JobState, Stage};
use tributary::{Database, Session, Value};

use common::oracle::{
    check_oracle_null_order, close, lite_rows, results_agree, show_rows, trib_rows, Cell, Rng, Rows,
};
use common::{cfg, job, wait_until};

/// Seeds run in CI.
const CI_SEEDS: &[u64] = &[1, 0x5eed_0002, 0xdead_beef, 20_240_611];
/// Relational queries per seed in CI (× seeds ≥ 2,000).
const CI_QUERIES_PER_SEED: usize = 1_000;
/// Vector queries per (seed, phase, metric).
const VECTOR_QUERIES: usize = 20;
/// Most mismatches reported before giving up on a seed.
const MAX_REPORTS: usize = 25;

// ---------------------------------------------------------------------------
// The two engines

struct Engines {
    _dir: tempfile::TempDir,
    db: Database,
    trib: Session,
    lite: rusqlite::Connection,
}

impl Engines {
    fn open() -> Engines {
        let dir = tempfile::tempdir().expect("tempdir");
        let db = Database::open_with(dir.path(), cfg()).expect("open tributary");
        let mut trib = db.session();
        for s in ["CREATE DATABASE d", "USE d"] {
            trib.execute(s).unwrap_or_else(|e| panic!("{s}: {e}"));
        }
        let lite = rusqlite::Connection::open_in_memory().expect("sqlite");
        Engines {
            _dir: dir,
            db,
            trib,
            lite,
        }
    }

    fn trib_rows(&mut self, sql: &str) -> Result<Rows, String> {
        trib_rows(&mut self.trib, sql)
    }

    fn lite_rows(&self, sql: &str) -> Rows {
        lite_rows(&self.lite, sql)
    }

    /// Execute a statement on both; the number of affected rows of each.
    fn both(&mut self, sql: &str) -> (Result<u64, String>, usize) {
        let t = self
            .trib
            .execute(sql)
            .map(|r| r.affected_rows)
            .map_err(|e| format!("ERROR {e}"));
        let l = self
            .lite
            .execute(sql, [])
            .unwrap_or_else(|e| panic!("SQLite refused a generated statement: {sql}: {e}"));
        (t, l)
    }

    fn trib_exec(&mut self, sql: &str) {
        self.trib
            .execute(sql)
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
}

// ---------------------------------------------------------------------------
// Schema and data

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ty {
    Int,
    BigInt,
    Double,
    Varchar(u32),
}

impl Ty {
    fn sql(self) -> String {
        match self {
            Ty::Int => "INT".into(),
            Ty::BigInt => "BIGINT".into(),
            Ty::Double => "DOUBLE".into(),
            Ty::Varchar(n) => format!("VARCHAR({n})"),
        }
    }
    fn is_num(self) -> bool {
        !matches!(self, Ty::Varchar(_))
    }
    fn is_int(self) -> bool {
        matches!(self, Ty::Int | Ty::BigInt)
    }
}

#[derive(Debug, Clone)]
struct Col {
    name: String,
    ty: Ty,
    nullable: bool,
}

/// The relational table: column 0 is `id BIGINT PRIMARY KEY`.
struct Table {
    cols: Vec<Col>,
    /// Current contents (re-read from the oracle after writes).
    rows: Rows,
    next_id: i64,
}

const ALPHABET: &[u8] = b"abcd01";

fn gen_text(rng: &mut Rng, max: u32) -> String {
    let len = rng.range(0, i64::from(max.min(5))) as usize;
    (0..len)
        .map(|_| {
            // Mostly letters: more duplicates and LIKE hits.
            let i = if rng.chance(0.85) {
                rng.below(4)
            } else {
                rng.below(ALPHABET.len())
            };
            ALPHABET[i] as char
        })
        .collect()
}

fn gen_value(rng: &mut Rng, ty: Ty) -> Cell {
    match ty {
        Ty::Int => Cell::Int(if rng.chance(0.85) {
            rng.range(-20, 20)
        } else {
            rng.range(-100_000, 100_000)
        }),
        Ty::BigInt => Cell::Int(if rng.chance(0.8) {
            rng.range(-50, 50)
        } else {
            rng.range(-3_000_000_000, 3_000_000_000)
        }),
        Ty::Double => Cell::Float(if rng.chance(0.03) {
            // Negative zero: equal to 0 in every comparison.
            -0.0
        } else if rng.chance(0.8) {
            rng.range(-80, 80) as f64 * 0.25
        } else {
            rng.range(-2_000_000, 2_000_000) as f64 * 0.5
        }),
        Ty::Varchar(n) => Cell::Text(gen_text(rng, n)),
    }
}

/// SQL literal for a cell: negative numbers parenthesised (so no `--`
/// comment can form), floats always with a decimal point.
fn lit(c: &Cell) -> String {
    match c {
        Cell::Null => "NULL".into(),
        Cell::Int(i) if *i < 0 => format!("({i})"),
        Cell::Int(i) => i.to_string(),
        Cell::Float(x) | Cell::Decimal(x, _) => {
            let s = if x.fract() == 0.0 {
                format!("{x:.1}")
            } else {
                format!("{x}")
            };
            if x.is_sign_negative() {
                format!("({s})")
            } else {
                s
            }
        }
        Cell::Text(s) => format!("'{s}'"),
    }
}

impl Table {
    fn generate(rng: &mut Rng) -> Table {
        let mut cols = vec![Col {
            name: "id".into(),
            ty: Ty::BigInt,
            nullable: false,
        }];
        let mut types = vec![
            Ty::Int,
            Ty::BigInt,
            Ty::Double,
            Ty::Varchar(*rng.pick(&[4, 8, 16])),
        ];
        for _ in 0..rng.below(3) {
            let n = *rng.pick(&[3, 6, 12]);
            types.push(*rng.pick(&[Ty::Int, Ty::BigInt, Ty::Double, Ty::Varchar(n)]));
        }
        // Shuffle the column order.
        for i in (1..types.len()).rev() {
            types.swap(i, rng.below(i + 1));
        }
        for (i, ty) in types.into_iter().enumerate() {
            cols.push(Col {
                name: format!("c{i}"),
                ty,
                nullable: rng.chance(0.65),
            });
        }
        Table {
            cols,
            rows: Vec::new(),
            next_id: 0,
        }
    }

    fn create_sql(&self, name: &str) -> String {
        let defs: Vec<String> = self
            .cols
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let mut d = format!("{} {}", c.name, c.ty.sql());
                if i == 0 {
                    d.push_str(" PRIMARY KEY");
                } else if !c.nullable {
                    d.push_str(" NOT NULL");
                }
                d
            })
            .collect();
        format!("CREATE TABLE {name} ({})", defs.join(", "))
    }

    /// A new row with a fresh id; values often copied from existing rows.
    fn new_row(&mut self, rng: &mut Rng) -> Vec<Cell> {
        self.next_id += rng.range(1, 4);
        let id = if rng.chance(0.5) {
            -self.next_id
        } else {
            self.next_id
        };
        let mut row = vec![Cell::Int(id)];
        for c in &self.cols[1..] {
            let v = if c.nullable && rng.chance(0.15) {
                Cell::Null
            } else if !self.rows.is_empty() && rng.chance(0.3) {
                let r = rng.below(self.rows.len());
                match &self.rows[r][row.len()] {
                    Cell::Null => gen_value(rng, c.ty),
                    v => v.clone(),
                }
            } else {
                gen_value(rng, c.ty)
            };
            row.push(v);
        }
        row
    }

    fn insert_sql(rows: &[Vec<Cell>]) -> String {
        let vals: Vec<String> = rows
            .iter()
            .map(|r| {
                let cells: Vec<String> = r.iter().map(lit).collect();
                format!("({})", cells.join(", "))
            })
            .collect();
        format!("INSERT INTO t VALUES {}", vals.join(", "))
    }

    /// Largest absolute value of numeric column `c` (for overflow bounds).
    fn bound(&self, c: usize) -> f64 {
        self.rows
            .iter()
            .filter_map(|r| r[c].num())
            .fold(1.0, |m, x| m.max(x.abs()))
    }

    fn cols_where(&self, f: impl Fn(&Col) -> bool) -> Vec<usize> {
        (0..self.cols.len()).filter(|&i| f(&self.cols[i])).collect()
    }
}

// ---------------------------------------------------------------------------
// Query generation

/// A numeric expression: SQL text, whether integer-valued, and a bound on
/// its absolute value.
struct Num {
    sql: String,
    int: bool,
    bound: f64,
}

/// Largest magnitude an expression may reach: far from i64 overflow.
const MAX_BOUND: f64 = 1e15;

struct Gen<'a> {
    rng: &'a mut Rng,
    t: &'a Table,
}

impl Gen<'_> {
    fn col_name(&self, c: usize) -> String {
        self.t.cols[c].name.clone()
    }

    /// A value from column `c` (often an existing one), never NULL.
    fn value_for(&mut self, c: usize) -> Cell {
        let ty = self.t.cols[c].ty;
        if self.rng.chance(0.6) && !self.t.rows.is_empty() {
            for _ in 0..4 {
                let r = self.rng.below(self.t.rows.len());
                let v = self.t.rows[r][c].clone();
                if v != Cell::Null {
                    return self.perturb(v, ty);
                }
            }
        }
        if c == 0 {
            return Cell::Int(self.rng.range(-self.t.next_id - 3, self.t.next_id + 3));
        }
        gen_value(self.rng, ty)
    }

    /// Sometimes move a number off the grid (a fractional literal against
    /// an integer column, a neighbour value) to probe range boundaries.
    fn perturb(&mut self, v: Cell, ty: Ty) -> Cell {
        match v {
            Cell::Int(i) if ty.is_int() && self.rng.chance(0.2) => {
                let d = *self.rng.pick(&[-0.75, -0.5, -0.25, 0.25, 0.5, 0.75]);
                Cell::Float(i as f64 + d)
            }
            Cell::Int(i) if self.rng.chance(0.15) => Cell::Int(i + self.rng.range(-1, 1)),
            Cell::Float(x) if self.rng.chance(0.15) => {
                Cell::Float(x + *self.rng.pick(&[-0.125, 0.125, 1.0, -1.0]))
            }
            v => v,
        }
    }

    fn num_literal(&mut self) -> Num {
        let c = if self.rng.chance(0.7) {
            Cell::Int(self.rng.range(-10, 10))
        } else {
            Cell::Float(self.rng.range(-40, 40) as f64 * 0.25)
        };
        Num {
            int: matches!(c, Cell::Int(_)),
            bound: c.num().unwrap().abs().max(1.0),
            sql: lit(&c),
        }
    }

    fn num_col(&mut self) -> Num {
        let cs = self.t.cols_where(|c| c.ty.is_num());
        let c = *self.rng.pick(&cs);
        Num {
            sql: self.col_name(c),
            int: self.t.cols[c].ty.is_int(),
            bound: self.t.bound(c),
        }
    }

    fn num_expr(&mut self, depth: u32) -> Num {
        for _ in 0..8 {
            let choice = if depth == 0 {
                self.rng.below(3)
            } else {
                self.rng.below(12)
            };
            let e = match choice {
                0 | 1 => self.num_col(),
                2 => self.num_literal(),
                3..=5 => {
                    let (a, b) = (self.num_expr(depth - 1), self.num_expr(depth - 1));
                    let op = *self.rng.pick(&["+", "-", "*"]);
                    let bound = if op == "*" {
                        a.bound * b.bound
                    } else {
                        a.bound + b.bound
                    };
                    Num {
                        sql: format!("({} {op} {})", a.sql, b.sql),
                        int: a.int && b.int,
                        bound,
                    }
                }
                6 => {
                    let a = self.num_expr(depth - 1);
                    Num {
                        sql: format!("(-{})", a.sql),
                        ..a
                    }
                }
                8 => {
                    let cond = self.atom();
                    let (a, b) = (self.num_expr(depth - 1), self.num_expr(depth - 1));
                    if self.rng.chance(0.3) {
                        Num {
                            sql: format!("(CASE WHEN {cond} THEN {} END)", a.sql),
                            ..a
                        }
                    } else {
                        Num {
                            sql: format!("(CASE WHEN {cond} THEN {} ELSE {} END)", a.sql, b.sql),
                            int: a.int && b.int,
                            bound: a.bound.max(b.bound),
                        }
                    }
                }
                9 => {
                    let a = self.num_expr(depth - 1);
                    Num {
                        sql: format!("ABS({})", a.sql),
                        ..a
                    }
                }
                10 => {
                    let (a, b) = (self.num_expr(depth - 1), self.num_expr(depth - 1));
                    let f = *self.rng.pick(&["COALESCE", "IFNULL"]);
                    Num {
                        sql: format!("{f}({}, {})", a.sql, b.sql),
                        int: a.int && b.int,
                        bound: a.bound.max(b.bound),
                    }
                }
                11 => {
                    let ss = self.t.cols_where(|c| !c.ty.is_num());
                    let c = *self.rng.pick(&ss);
                    Num {
                        sql: format!("LENGTH({})", self.col_name(c)),
                        int: true,
                        bound: 16.0,
                    }
                }
                _ => {
                    // Integer remainder (sign of the dividend in both).
                    let a = self.num_expr(depth - 1);
                    if !a.int {
                        continue;
                    }
                    let m = if self.rng.chance(0.8) {
                        let m = *self.rng.pick(&[-7i64, -3, 2, 3, 5, 10]);
                        lit(&Cell::Int(m))
                    } else {
                        let ints = self.t.cols_where(|c| c.ty.is_int());
                        let c = *self.rng.pick(&ints);
                        self.col_name(c)
                    };
                    Num {
                        sql: format!("({} % {m})", a.sql),
                        int: true,
                        bound: a.bound,
                    }
                }
            };
            if e.bound <= MAX_BOUND {
                return e;
            }
        }
        self.num_col()
    }

    /// A numeric expression that reads at least one column (a constant
    /// select item or sort key could be taken for a column position).
    fn num_expr_with_col(&mut self, depth: u32) -> Num {
        loop {
            let e = self.num_expr(depth);
            if e.sql.contains(['c', 'i']) {
                return e;
            }
        }
    }

    fn cmp_op(&mut self) -> &'static str {
        const OPS: [&str; 6] = ["=", "<>", "<", "<=", ">", ">="];
        OPS[self.rng.below(OPS.len())]
    }

    fn any_col(&mut self) -> usize {
        self.rng.below(self.t.cols.len())
    }

    /// A LIKE pattern with `%` and `_`, usually derived from a stored value.
    fn like_pattern(&mut self, c: usize) -> String {
        let base = match self.value_for(c) {
            Cell::Text(s) => s,
            Cell::Int(i) => i.to_string(),
            _ => gen_text(self.rng, 4),
        };
        let mut p = String::new();
        for ch in base.chars() {
            match self.rng.below(10) {
                0 => p.push('_'),
                1 => p.push('%'),
                2 => {} // drop it
                _ => p.push(ch),
            }
        }
        match self.rng.below(4) {
            0 => p.insert(0, '%'),
            1 => p.push('%'),
            2 => {
                p.insert(0, '%');
                p.push('%');
            }
            _ => {}
        }
        format!("'{p}'")
    }

    /// A simple, index-friendly term on one column: `col op literal`,
    /// BETWEEN or IN.
    fn column_term(&mut self, c: usize) -> String {
        let name = self.col_name(c);
        match self.rng.below(6) {
            0..=2 => {
                let op = self.cmp_op();
                let v = lit(&self.value_for(c));
                if self.rng.chance(0.2) {
                    format!("{v} {op} {name}")
                } else {
                    format!("{name} {op} {v}")
                }
            }
            3 => {
                let (a, b) = (self.value_for(c), self.value_for(c));
                let (lo, hi) = if a.sort_cmp(&b) == Ordering::Greater && self.rng.chance(0.8) {
                    (b, a)
                } else {
                    (a, b)
                };
                format!("{name} BETWEEN {} AND {}", lit(&lo), lit(&hi))
            }
            4 => {
                let n = self.rng.range(1, 5);
                let items: Vec<String> = (0..n).map(|_| lit(&self.value_for(c))).collect();
                format!("{name} IN ({})", items.join(", "))
            }
            _ => {
                let (op1, op2) = (*self.rng.pick(&[">", ">="]), *self.rng.pick(&["<", "<="]));
                let (a, b) = (lit(&self.value_for(c)), lit(&self.value_for(c)));
                format!("{name} {op1} {a} AND {name} {op2} {b}")
            }
        }
    }

    fn atom(&mut self) -> String {
        match self.rng.below(15) {
            0..=2 => {
                let c = self.any_col();
                self.column_term(c)
            }
            3 | 4 => {
                let (a, b) = (self.num_expr(2), self.num_expr(1));
                let op = self.cmp_op();
                format!("{} {op} {}", a.sql, b.sql)
            }
            5 => {
                let ss = self.t.cols_where(|c| !c.ty.is_num());
                let (x, y) = (*self.rng.pick(&ss), *self.rng.pick(&ss));
                let (a, b) = (self.col_name(x), self.col_name(y));
                let op = self.cmp_op();
                format!("{a} {op} {b}")
            }
            6 => {
                let not = if self.rng.chance(0.5) { " NOT" } else { "" };
                if self.rng.chance(0.7) {
                    let c = self.any_col();
                    format!("{} IS{not} NULL", self.col_name(c))
                } else {
                    let e = self.num_expr(2);
                    format!("{} IS{not} NULL", e.sql)
                }
            }
            7 | 8 => {
                let c = self.any_col();
                let n = self.rng.range(1, 5);
                let mut items: Vec<String> = (0..n).map(|_| lit(&self.value_for(c))).collect();
                if self.rng.chance(0.3) {
                    let at = self.rng.below(items.len() + 1);
                    items.insert(at, "NULL".into());
                }
                let not = if self.rng.chance(0.4) { " NOT" } else { "" };
                format!("{}{not} IN ({})", self.col_name(c), items.join(", "))
            }
            9 => {
                let not = if self.rng.chance(0.3) { " NOT" } else { "" };
                if self.rng.chance(0.5) {
                    let c = self.any_col();
                    let (a, b) = (lit(&self.value_for(c)), lit(&self.value_for(c)));
                    format!("{}{not} BETWEEN {a} AND {b}", self.col_name(c))
                } else {
                    let e = self.num_expr(2);
                    let (a, b) = (self.num_literal(), self.num_literal());
                    format!("{}{not} BETWEEN {} AND {}", e.sql, a.sql, b.sql)
                }
            }
            10 | 11 => {
                // LIKE on strings (and now and then on integers, which
                // both engines convert to the same text).
                let cs = if self.rng.chance(0.85) {
                    self.t.cols_where(|c| !c.ty.is_num())
                } else {
                    self.t.cols_where(|c| c.ty.is_int())
                };
                let c = *self.rng.pick(&cs);
                let not = if self.rng.chance(0.3) { " NOT" } else { "" };
                let p = self.like_pattern(c);
                format!("{}{not} LIKE {p}", self.col_name(c))
            }
            12 => {
                // A number as a condition (true when non-zero).
                let e = self.num_expr(1);
                if self.rng.chance(0.5) {
                    e.sql
                } else {
                    format!("(NOT {})", e.sql)
                }
            }
            _ => {
                // Primary-key point and range predicates.
                self.column_term(0)
            }
        }
    }

    fn pred(&mut self, depth: u32) -> String {
        if depth == 0 {
            return self.atom();
        }
        match self.rng.below(6) {
            0 | 1 => self.atom(),
            2 => format!("({} AND {})", self.pred(depth - 1), self.pred(depth - 1)),
            3 => format!("({} OR {})", self.pred(depth - 1), self.pred(depth - 1)),
            4 => format!("(NOT {})", self.pred(depth - 1)),
            _ => format!(
                "(({} AND {}) OR {})",
                self.pred(depth - 1),
                self.atom(),
                self.atom()
            ),
        }
    }

    /// A WHERE clause (possibly empty); often a conjunction led by a simple
    /// column term so that the PK / secondary-index paths are chosen.
    fn where_clause(&mut self) -> String {
        match self.rng.below(10) {
            0 => String::new(),
            1..=3 => {
                let c = self.any_col();
                let lead = self.column_term(c);
                format!(" WHERE {lead} AND {}", self.pred(1))
            }
            4 => {
                let c = self.any_col();
                format!(" WHERE {}", self.column_term(c))
            }
            _ => format!(" WHERE {}", self.pred(2)),
        }
    }

    /// A select item that is a column or a numeric expression.
    fn select_item(&mut self) -> String {
        if self.rng.chance(0.7) {
            let c = self.any_col();
            self.col_name(c)
        } else {
            self.num_expr_with_col(2).sql
        }
    }

    fn agg_call(&mut self) -> String {
        match self.rng.below(9) {
            0 => "COUNT(*)".into(),
            1 => {
                let c = self.any_col();
                let d = if self.rng.chance(0.3) {
                    "DISTINCT "
                } else {
                    ""
                };
                format!("COUNT({d}{})", self.col_name(c))
            }
            2 | 3 => {
                let d = if self.rng.chance(0.15) {
                    "DISTINCT "
                } else {
                    ""
                };
                format!("SUM({d}{})", self.num_expr(1).sql)
            }
            4 => format!("AVG({})", self.num_expr(1).sql),
            5 | 6 => {
                let c = self.any_col();
                format!("MIN({})", self.col_name(c))
            }
            7 => {
                let c = self.any_col();
                format!("MAX({})", self.col_name(c))
            }
            _ => format!(
                "{}({})",
                self.rng.pick(&["MIN", "MAX"]),
                self.num_expr(1).sql
            ),
        }
    }

    fn having(&mut self) -> String {
        let one = |g: &mut Self| -> String {
            match g.rng.below(4) {
                0 => format!("COUNT(*) {} {}", g.cmp_op(), g.rng.range(0, 4)),
                1 => {
                    let cs = g.t.cols_where(|c| c.ty.is_num());
                    let c = *g.rng.pick(&cs);
                    let v = lit(&g.value_for(c));
                    format!("SUM({}) {} {v}", g.col_name(c), g.cmp_op())
                }
                2 => {
                    let c = g.any_col();
                    let v = lit(&g.value_for(c));
                    let f = *g.rng.pick(&["MIN", "MAX"]);
                    format!("{f}({}) {} {v}", g.col_name(c), g.cmp_op())
                }
                _ => {
                    let c = g.any_col();
                    format!("COUNT({}) > 1", g.col_name(c))
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

    fn limit(&mut self) -> String {
        let n = self.rng.range(0, 25);
        if self.rng.chance(0.4) {
            format!(" LIMIT {n} OFFSET {}", self.rng.range(0, 15))
        } else {
            format!(" LIMIT {n}")
        }
    }

    fn dir(&mut self) -> &'static str {
        const DIRS: [&str; 3] = ["", " ASC", " DESC"];
        DIRS[self.rng.below(DIRS.len())]
    }

    /// One query and whether its ORDER BY is total (compare as a list).
    fn query(&mut self) -> (String, bool) {
        let wh = self.where_clause();
        match self.rng.below(20) {
            // Plain filter, compared as a multiset.
            0..=4 => {
                let n = self.rng.range(1, 4);
                let mut items: Vec<String> = (0..n).map(|_| self.select_item()).collect();
                if self.rng.chance(0.5) {
                    items.insert(0, "id".into());
                }
                if self.rng.chance(0.1) {
                    items = vec!["*".into()];
                }
                (format!("SELECT {} FROM t{wh}", items.join(", ")), false)
            }
            // ORDER BY … , id (total) with LIMIT / OFFSET.
            5..=9 => {
                let n = self.rng.range(0, 3);
                let mut items: Vec<String> = (0..self.rng.range(1, 3))
                    .map(|_| self.select_item())
                    .collect();
                items.insert(0, "id".into());
                // An expression item with an alias the ORDER BY may use.
                let alias = self.rng.chance(0.2).then(|| {
                    let e = self.num_expr_with_col(2).sql;
                    items.push(format!("{e} AS e0"));
                });
                let mut keys: Vec<String> = (0..n)
                    .map(|_| {
                        let k = match self.rng.below(10) {
                            // By position.
                            0 | 1 => self.rng.range(1, items.len() as i64).to_string(),
                            2 if alias.is_some() => "e0".into(),
                            _ => self.select_item(),
                        };
                        format!("{k}{}", self.dir())
                    })
                    .collect();
                keys.push(format!("id{}", self.dir()));
                let lim = if self.rng.chance(0.8) {
                    self.limit()
                } else {
                    String::new()
                };
                (
                    format!(
                        "SELECT {} FROM t{wh} ORDER BY {}{lim}",
                        items.join(", "),
                        keys.join(", ")
                    ),
                    true,
                )
            }
            // Aggregates, no GROUP BY.
            10 | 11 => {
                let n = self.rng.range(1, 4);
                let aggs: Vec<String> = (0..n).map(|_| self.agg_call()).collect();
                (format!("SELECT {} FROM t{wh}", aggs.join(", ")), false)
            }
            // GROUP BY columns (or an integer expression) [HAVING] [ORDER BY].
            12..=15 => {
                let mut keys: Vec<String> = Vec::new();
                if self.rng.chance(0.15) {
                    let ints = self.t.cols_where(|c| c.ty.is_int() && c.name != "id");
                    let c = *self.rng.pick(&ints);
                    keys.push(format!("({} % 3)", self.col_name(c)));
                } else {
                    for _ in 0..self.rng.range(1, 2) {
                        let c = 1 + self.rng.below(self.t.cols.len() - 1);
                        let name = self.col_name(c);
                        if !keys.contains(&name) {
                            keys.push(name);
                        }
                    }
                }
                let n = self.rng.range(1, 3);
                let aggs: Vec<String> = (0..n).map(|_| self.agg_call()).collect();
                let hv = if self.rng.chance(0.4) {
                    self.having()
                } else {
                    String::new()
                };
                let mut sql = format!(
                    "SELECT {}, {} FROM t{wh} GROUP BY {}{hv}",
                    keys.join(", "),
                    aggs.join(", "),
                    keys.join(", ")
                );
                let ordered = self.rng.chance(0.3);
                if ordered {
                    let mut ks: Vec<String> =
                        keys.iter().map(|k| format!("{k}{}", self.dir())).collect();
                    if self.rng.chance(0.3) {
                        // An aggregate first; the group keys keep it total.
                        let a = self.agg_call();
                        ks.insert(0, format!("{a}{}", self.dir()));
                    }
                    let _ = write!(sql, " ORDER BY {}", ks.join(", "));
                    if self.rng.chance(0.7) {
                        sql.push_str(&self.limit());
                    }
                }
                (sql, ordered)
            }
            // DISTINCT, as a set or ordered by every selected item.
            _ => {
                let n = self.rng.range(1, 2);
                let mut items: Vec<String> = Vec::new();
                for _ in 0..n {
                    let it = if self.rng.chance(0.8) {
                        let c = 1 + self.rng.below(self.t.cols.len() - 1);
                        self.col_name(c)
                    } else {
                        self.num_expr_with_col(1).sql
                    };
                    if !items.contains(&it) {
                        items.push(it);
                    }
                }
                let mut sql = format!("SELECT DISTINCT {} FROM t{wh}", items.join(", "));
                let ordered = self.rng.chance(0.4);
                if ordered {
                    let ks: Vec<String> =
                        items.iter().map(|k| format!("{k}{}", self.dir())).collect();
                    let _ = write!(sql, " ORDER BY {}", ks.join(", "));
                    if self.rng.chance(0.7) {
                        sql.push_str(&self.limit());
                    }
                }
                (sql, ordered)
            }
        }
    }
}

// ---------------------------------------------------------------------------
// The relational run

struct Report {
    seed: u64,
    /// The table's CREATE statement, printed with the first mismatch.
    schema: String,
    failures: Vec<String>,
    /// Every mismatch, also those past [`MAX_REPORTS`].
    mismatches: usize,
    queries: usize,
}

impl Report {
    fn mismatch(&mut self, what: &str, sql: &str, got: &Result<Rows, String>, want: &Rows) {
        self.mismatches += 1;
        if self.failures.len() >= MAX_REPORTS {
            return;
        }
        let got = match got {
            Ok(r) => format!("{} rows\n{}", r.len(), show_rows(r, 60, "    ")),
            Err(e) => format!("{e}\n"),
        };
        if self.failures.is_empty() {
            self.failures
                .push(format!("seed {}: {}\n", self.seed, self.schema));
        }
        self.failures.push(format!(
            "seed {} ({what}): {sql}\n  tributary: {got}  sqlite: {} rows\n{}",
            self.seed,
            want.len(),
            show_rows(want, 60, "    ")
        ));
    }
}

/// Run one query on both engines and record a difference.
fn check_query(e: &mut Engines, rep: &mut Report, what: &str, sql: &str, ordered: bool) {
    rep.queries += 1;
    let want = e.lite_rows(sql);
    let got = e.trib_rows(sql);
    let ok = match &got {
        Ok(g) => results_agree(g, &want, ordered, close),
        Err(_) => false,
    };
    if !ok {
        rep.mismatch(what, sql, &got, &want);
    }
}

/// Re-read the table from the oracle (after writes) and compare it whole.
fn sync_table(e: &mut Engines, t: &mut Table, rep: &mut Report) {
    let sql = "SELECT * FROM t ORDER BY id";
    check_query(e, rep, "table contents", sql, true);
    t.rows = e.lite_rows(sql);
}

/// Random INSERT / UPDATE / DELETE run on both engines.
fn mutate(e: &mut Engines, t: &mut Table, rng: &mut Rng, rep: &mut Report, n: usize) {
    for _ in 0..n {
        let sql = match rng.below(6) {
            0 => {
                let k = rng.range(1, 6) as usize;
                let rows: Vec<Vec<Cell>> = (0..k).map(|_| t.new_row(rng)).collect();
                t.rows.extend(rows.iter().cloned());
                Table::insert_sql(&rows)
            }
            1 => {
                let wh = {
                    let mut g = Gen {
                        rng: &mut *rng,
                        t: &*t,
                    };
                    let c = g.any_col();
                    g.column_term(c)
                };
                format!("DELETE FROM t WHERE {wh}")
            }
            2 | 3 => {
                let c = 1 + rng.below(t.cols.len() - 1);
                let col = t.cols[c].clone();
                let val = if col.nullable && rng.chance(0.2) {
                    "NULL".to_string()
                } else {
                    lit(&gen_value(rng, col.ty))
                };
                let wh = {
                    let mut g = Gen {
                        rng: &mut *rng,
                        t: &*t,
                    };
                    let k = g.any_col();
                    g.column_term(k)
                };
                format!("UPDATE t SET {} = {val} WHERE {wh}", col.name)
            }
            4 => {
                let ints = t.cols_where(|c| c.ty == Ty::Int);
                let c = t.cols[*rng.pick(&ints)].name.clone();
                let wh = Gen {
                    rng: &mut *rng,
                    t: &*t,
                }
                .pred(1);
                format!("UPDATE t SET {c} = {c} + 1 WHERE {wh}")
            }
            _ => {
                // Move a row to a fresh primary key.
                if t.rows.is_empty() {
                    continue;
                }
                let old = t.rows[rng.below(t.rows.len())][0].clone();
                t.next_id += 1;
                format!(
                    "UPDATE t SET id = {} WHERE id = {}",
                    lit(&Cell::Int(-t.next_id)),
                    lit(&old)
                )
            }
        };
        rep.queries += 1;
        let (got, want) = e.both(&sql);
        let agree = match &got {
            Ok(n) => !sql.starts_with("DELETE") || *n == want as u64,
            Err(_) => false,
        };
        rep.mismatches += usize::from(!agree);
        if !agree && rep.failures.len() < MAX_REPORTS {
            rep.failures.push(format!(
                "seed {} (write): {sql}\n  tributary: {got:?}\n  sqlite: Ok({want})\n",
                rep.seed
            ));
        }
        // Keep the generator's view current (values drive literals).
        t.rows = e.lite_rows("SELECT * FROM t ORDER BY id");
    }
}

fn relational_seed(seed: u64, queries: usize) -> Report {
    let mut rng = Rng::new(seed);
    let mut e = Engines::open();
    check_oracle_null_order(&e.lite);
    let mut t = Table::generate(&mut rng);
    let create = t.create_sql("t");
    e.trib_exec(&create);
    e.lite.execute(&create, []).expect("sqlite create");
    let n = rng.range(150, 350) as usize;
    let mut batch = Vec::new();
    for i in 0..n {
        let row = t.new_row(&mut rng);
        t.rows.push(row.clone());
        batch.push(row);
        if batch.len() == 50 || i + 1 == n {
            let sql = Table::insert_sql(&batch);
            e.trib_exec(&sql);
            e.lite.execute(&sql, []).expect("sqlite insert");
            batch.clear();
        }
    }
    let mut rep = Report {
        seed,
        schema: create,
        failures: Vec::new(),
        mismatches: 0,
        queries: 0,
    };
    sync_table(&mut e, &mut t, &mut rep);

    // Phase 1: no secondary index (primary-key paths and full scans);
    // phase 2: secondary B-tree indexes built over the existing rows;
    // phase 3: after random writes maintained those indexes.
    let phases = [
        queries * 2 / 5,
        queries * 3 / 10,
        queries - queries * 7 / 10,
    ];
    for (phase, &count) in phases.iter().enumerate() {
        if phase == 1 {
            let int_col = *rng.pick(&t.cols_where(|c| c.ty.is_int() && c.name != "id"));
            let str_col = *rng.pick(&t.cols_where(|c| !c.ty.is_num()));
            let dbl_col = *rng.pick(&t.cols_where(|c| c.ty == Ty::Double));
            let any_col = 1 + rng.below(t.cols.len() - 1);
            for (name, cols) in [
                ("ix_i", vec![int_col]),
                ("ix_s", vec![str_col]),
                ("ix_d", vec![dbl_col, any_col]),
            ] {
                let names: Vec<&str> = cols.iter().map(|&c| t.cols[c].name.as_str()).collect();
                let sql = format!("CREATE INDEX {name} ON t ({})", names.join(", "));
                e.trib_exec(&sql);
                e.lite.execute(&sql, []).expect("sqlite index");
            }
        }
        if phase == 2 {
            mutate(&mut e, &mut t, &mut rng, &mut rep, 25);
            sync_table(&mut e, &mut t, &mut rep);
        }
        let what = format!("phase {}", phase + 1);
        for i in 0..count {
            // In phase 3, now and then a transaction: writes, queries that
            // must see them (through every access path), then COMMIT or
            // ROLLBACK.
            if phase == 2 && i % 60 == 30 {
                let commit = rng.chance(0.5);
                e.both("BEGIN").0.expect("BEGIN");
                mutate(&mut e, &mut t, &mut rng, &mut rep, 4);
                for _ in 0..8 {
                    let (sql, ordered) = Gen {
                        rng: &mut rng,
                        t: &t,
                    }
                    .query();
                    check_query(&mut e, &mut rep, "in a transaction", &sql, ordered);
                }
                let end = if commit { "COMMIT" } else { "ROLLBACK" };
                e.both(end).0.expect(end);
                sync_table(&mut e, &mut t, &mut rep);
            }
            let (sql, ordered) = Gen {
                rng: &mut rng,
                t: &t,
            }
            .query();
            check_query(&mut e, &mut rep, &what, &sql, ordered);
        }
    }
    drop(e.trib);
    e.db.shutdown();
    rep
}

// ---------------------------------------------------------------------------
// Vector search and arithmetic against brute force

const DIM: usize = 4;

/// A filter of the vector queries, evaluated here as well.
#[derive(Debug, Clone)]
enum VFilter {
    None,
    GEq(i64),
    GLt(i64),
    GIn(Vec<i64>),
    GNull,
    GNe(i64),
    IdGt(i64),
    IdBetween(i64, i64),
    IdEq(i64),
    GEqAndIdLt(i64, i64),
    GLtOrIdGt(i64, i64),
}

impl VFilter {
    fn sql(&self) -> String {
        let w = match self {
            VFilter::None => return String::new(),
            VFilter::GEq(x) => format!("g = {x}"),
            VFilter::GLt(x) => format!("g < {x}"),
            VFilter::GIn(xs) => {
                let s: Vec<String> = xs.iter().map(|x| x.to_string()).collect();
                format!("g IN ({})", s.join(", "))
            }
            VFilter::GNull => "g IS NULL".into(),
            VFilter::GNe(x) => format!("g <> {x}"),
            VFilter::IdGt(x) => format!("id > {x}"),
            VFilter::IdBetween(a, b) => format!("id BETWEEN {a} AND {b}"),
            VFilter::IdEq(x) => format!("id = {x}"),
            VFilter::GEqAndIdLt(x, y) => format!("g = {x} AND id < {y}"),
            VFilter::GLtOrIdGt(x, y) => format!("(g < {x} OR id > {y})"),
        };
        format!(" WHERE {w}")
    }
    fn passes(&self, id: i64, g: Option<i64>) -> bool {
        let gv = |f: &dyn Fn(i64) -> bool| g.is_some_and(f);
        match self {
            VFilter::None => true,
            VFilter::GEq(x) => gv(&|g| g == *x),
            VFilter::GLt(x) => gv(&|g| g < *x),
            VFilter::GIn(xs) => gv(&|g| xs.contains(&g)),
            VFilter::GNull => g.is_none(),
            VFilter::GNe(x) => gv(&|g| g != *x),
            VFilter::IdGt(x) => id > *x,
            VFilter::IdBetween(a, b) => (*a..=*b).contains(&id),
            VFilter::IdEq(x) => id == *x,
            VFilter::GEqAndIdLt(x, y) => gv(&|g| g == *x) && id < *y,
            VFilter::GLtOrIdGt(x, y) => gv(&|g| g < *x) || id > *y,
        }
    }
}

struct VRow {
    id: i64,
    g: Option<i64>,
    v: Option<[f64; DIM]>,
}

fn vlit(v: &[f64]) -> String {
    let parts: Vec<String> = v.iter().map(|x| format!("{x}")).collect();
    format!("[{}]", parts.join(","))
}

fn distance(metric: &str, a: &[f64; DIM], b: &[f64; DIM]) -> f64 {
    match metric {
        "l2_distance" => a
            .iter()
            .zip(b)
            .map(|(x, y)| (x - y) * (x - y))
            .sum::<f64>()
            .sqrt(),
        _ => {
            let dot: f64 = a.iter().zip(b).map(|(x, y)| x * y).sum();
            let na = a.iter().map(|x| x * x).sum::<f64>().sqrt();
            let nb = b.iter().map(|x| x * x).sum::<f64>().sqrt();
            if na == 0.0 || nb == 0.0 {
                1.0
            } else {
                1.0 - dot / (na * nb)
            }
        }
    }
}

struct VecTable {
    rows: Vec<VRow>,
    next_id: i64,
}

impl VecTable {
    fn random_vec(rng: &mut Rng) -> [f64; DIM] {
        let mut v = [0.0; DIM];
        for x in &mut v {
            *x = rng.range(-3, 3) as f64;
        }
        v
    }

    fn new_row(&mut self, rng: &mut Rng) -> VRow {
        self.next_id += rng.range(1, 3);
        let g = if rng.chance(0.15) {
            None
        } else {
            Some(rng.range(0, 9))
        };
        let v = if rng.chance(0.1) {
            None
        } else if rng.chance(0.03) {
            // The zero vector (cosine distance 1 to everything).
            Some([0.0; DIM])
        } else if !self.rows.is_empty() && rng.chance(0.15) {
            // A duplicate vector.
            let r = rng.below(self.rows.len());
            self.rows[r].v.or_else(|| Some(Self::random_vec(rng)))
        } else {
            Some(Self::random_vec(rng))
        };
        VRow {
            id: self.next_id,
            g,
            v,
        }
    }

    fn row_sql(r: &VRow) -> String {
        format!(
            "({}, {}, {})",
            r.id,
            r.g.map_or("NULL".into(), |g| g.to_string()),
            r.v.map_or("NULL".into(), |v| format!("'{}'", vlit(&v)))
        )
    }

    fn filter(&self, rng: &mut Rng) -> VFilter {
        let g = rng.range(0, 9);
        let id = rng.range(0, self.next_id);
        match rng.below(14) {
            0..=4 => VFilter::None,
            5 => VFilter::GEq(g),
            6 => VFilter::GLt(g),
            7 => VFilter::GIn(vec![g, rng.range(0, 9), rng.range(0, 12)]),
            8 => VFilter::GNull,
            9 => VFilter::GNe(g),
            10 => VFilter::IdGt(id),
            11 => VFilter::IdBetween(id, id + rng.range(0, 60)),
            12 => {
                if rng.chance(0.5) {
                    VFilter::IdEq(id)
                } else {
                    VFilter::GEqAndIdLt(g, id)
                }
            }
            _ => VFilter::GLtOrIdGt(rng.range(0, 3), self.next_id - rng.range(0, 40)),
        }
    }
}

/// One k-NN query checked against brute force; `None` when it agrees.
fn check_knn(
    s: &mut Session,
    vt: &VecTable,
    metric: &str,
    q: &[f64; DIM],
    f: &VFilter,
    k: usize,
    with_dist: bool,
) -> Option<String> {
    let proj = if with_dist {
        format!("id, {metric}(v, '{}')", vlit(q))
    } else {
        "id".into()
    };
    let sql = format!(
        "SELECT {proj} FROM tv{} ORDER BY {metric}(v, '{}') LIMIT {k}",
        f.sql(),
        vlit(q)
    );
    let rows = match s.execute(&sql) {
        Ok(r) => r.rows,
        Err(e) => return Some(format!("{sql}\n  tributary: ERROR {e}")),
    };
    // Brute force: distances of the rows passing the filter, NULL (no
    // vector) after every real distance, as the executor orders them.
    let mut truth: Vec<Option<f64>> = vt
        .rows
        .iter()
        .filter(|r| f.passes(r.id, r.g))
        .map(|r| r.v.map(|v| distance(metric, &v, q)))
        .collect();
    let passing = truth.len();
    truth.sort_by(|a, b| match (a, b) {
        (Some(x), Some(y)) => x.total_cmp(y),
        (None, None) => Ordering::Equal,
        (None, _) => Ordering::Greater,
        (_, None) => Ordering::Less,
    });
    truth.truncate(k);
    let mut problems = Vec::new();
    if rows.len() != k.min(passing) {
        problems.push(format!(
            "returned {} rows, want min(k={k}, {passing} passing the filter) = {}",
            rows.len(),
            k.min(passing)
        ));
    }
    let mut got: Vec<Option<f64>> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for row in &rows {
        let Some(Value::Int(id)) = row.first() else {
            problems.push(format!("bad id cell {row:?}"));
            continue;
        };
        if !seen.insert(*id) {
            problems.push(format!("id {id} returned twice"));
        }
        let Some(r) = vt.rows.iter().find(|r| r.id == *id) else {
            problems.push(format!("id {id} is not in the table"));
            continue;
        };
        if !f.passes(r.id, r.g) {
            problems.push(format!("id {id} (g = {:?}) fails the filter", r.g));
        }
        let d = r.v.map(|v| distance(metric, &v, q));
        if with_dist {
            let claimed = match row.get(1) {
                Some(Value::Float(x)) => Some(*x),
                Some(Value::Null) => None,
                other => {
                    problems.push(format!("id {id}: distance cell {other:?}"));
                    None
                }
            };
            let agree = match (claimed, d) {
                (Some(a), Some(b)) => close(a, b),
                (None, None) => true,
                _ => false,
            };
            if !agree {
                problems.push(format!("id {id}: claimed distance {claimed:?}, true {d:?}"));
            }
        }
        got.push(d);
    }
    // Ascending order, NULL last.
    for w in got.windows(2) {
        let out_of_order = match (w[0], w[1]) {
            (Some(a), Some(b)) => a > b && !close(a, b),
            (None, Some(_)) => true,
            _ => false,
        };
        if out_of_order {
            problems.push(format!("distances out of order: {w:?}"));
            break;
        }
    }
    let mut sorted = got.clone();
    sorted.sort_by(|a, b| match (a, b) {
        (Some(x), Some(y)) => x.total_cmp(y),
        (None, None) => Ordering::Equal,
        (None, _) => Ordering::Greater,
        (_, None) => Ordering::Less,
    });
    let same = sorted.len() == truth.len()
        && sorted.iter().zip(&truth).all(|(a, b)| match (a, b) {
            (Some(x), Some(y)) => close(*x, *y),
            (None, None) => true,
            _ => false,
        });
    if !same {
        let fmt = |v: &[Option<f64>]| -> String {
            let s: Vec<String> = v
                .iter()
                .map(|d| d.map_or("NULL".into(), |x| format!("{x:.6}")))
                .collect();
            s.join(", ")
        };
        problems.push(format!(
            "distances [{}], want the {} smallest [{}]",
            fmt(&got),
            truth.len(),
            fmt(&truth)
        ));
    }
    if problems.is_empty() {
        None
    } else {
        Some(format!("{sql}\n  {}", problems.join("\n  ")))
    }
}

/// Whether index `name`'s job is live, incremental and caught up.
fn caught_up(db: &Database, name: &str) -> bool {
    let j = job(db, name);
    let latest = db.engine().storage.latest_ts();
    let newest = tributary::testing::newest_change_ts(
        db.engine().storage.as_ref(),
        j.key.table_id,
        j.watermark,
        latest,
    )
    .unwrap();
    j.state == JobState::Completed && j.status.stage == Stage::Incremental && newest == j.watermark
}

fn vector_seed(seed: u64) -> Report {
    let mut rng = Rng::new(seed ^ 0x7665_6374_6f72);
    let mut rep = Report {
        seed,
        schema: "CREATE TABLE tv (id BIGINT PRIMARY KEY, g INT, v VECF32(4))".into(),
        failures: Vec::new(),
        mismatches: 0,
        queries: 0,
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let db = Database::open_with(dir.path(), cfg()).expect("open");
    let mut s = db.session();
    for sql in [
        "CREATE DATABASE d",
        "USE d",
        "CREATE TABLE tv (id BIGINT PRIMARY KEY, g INT, v VECF32(4))",
    ] {
        s.execute(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
    let mut vt = VecTable {
        rows: Vec::new(),
        next_id: 0,
    };
    let n = rng.range(200, 300);
    let mut batch = Vec::new();
    for i in 0..n {
        let r = vt.new_row(&mut rng);
        batch.push(VecTable::row_sql(&r));
        vt.rows.push(r);
        if batch.len() == 50 || i + 1 == n {
            let sql = format!("INSERT INTO tv VALUES {}", batch.join(", "));
            s.execute(&sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
            batch.clear();
        }
    }

    let fail = |rep: &mut Report, what: &str, msg: String| {
        rep.mismatches += 1;
        if rep.failures.len() < MAX_REPORTS {
            rep.failures.push(format!("seed {seed} ({what}): {msg}"));
        }
    };

    // Vector arithmetic, element-wise (MatrixOne semantics).
    rep.queries += 1;
    let sql = "SELECT id, v + v, v - v, v * 2 FROM tv";
    match s.execute(sql) {
        Err(e) => fail(&mut rep, "vector arithmetic", format!("{sql}: ERROR {e}")),
        Ok(r) => {
            let mut bad = Vec::new();
            for row in &r.rows {
                let Value::Int(id) = row[0] else { continue };
                let Some(src) = vt.rows.iter().find(|x| x.id == id) else {
                    bad.push(format!("unknown id {id}"));
                    continue;
                };
                let want: [Option<Vec<f64>>; 3] = match src.v {
                    None => [None, None, None],
                    Some(v) => [
                        Some(v.iter().map(|x| x + x).collect()),
                        Some(vec![0.0; DIM]),
                        Some(v.iter().map(|x| x * 2.0).collect()),
                    ],
                };
                for (i, w) in want.iter().enumerate() {
                    let agree = match (w, &row[i + 1]) {
                        (None, Value::Null) => true,
                        (Some(w), Value::Vector(x)) => x == w,
                        _ => false,
                    };
                    if !agree && bad.len() < 5 {
                        bad.push(format!(
                            "id {id} v {:?}: column {} = {:?}, want {w:?}",
                            src.v,
                            i + 2,
                            row[i + 1]
                        ));
                    }
                }
            }
            if r.rows.len() != vt.rows.len() {
                bad.push(format!("{} rows, want {}", r.rows.len(), vt.rows.len()));
            }
            if !bad.is_empty() {
                fail(
                    &mut rep,
                    "vector arithmetic",
                    format!("{sql}\n  {}", bad.join("\n  ")),
                );
            }
        }
    }

    let metrics = [
        ("l2_distance", "vector_l2_ops"),
        ("cosine_distance", "vector_cosine_ops"),
    ];
    let run_queries =
        |s: &mut Session, vt: &VecTable, rng: &mut Rng, rep: &mut Report, phase: &str| {
            for (metric, _) in metrics {
                for _ in 0..VECTOR_QUERIES {
                    let q = if rng.chance(0.05) {
                        [0.0; DIM]
                    } else if rng.chance(0.3) {
                        // Exactly a stored vector (ties with its duplicates).
                        let r = &vt.rows[rng.below(vt.rows.len())];
                        r.v.unwrap_or_else(|| VecTable::random_vec(rng))
                    } else {
                        VecTable::random_vec(rng)
                    };
                    let f = vt.filter(rng);
                    let k = *rng.pick(&[1usize, 2, 5, 10, 25]);
                    let with_dist = rng.chance(0.5);
                    rep.queries += 1;
                    if let Some(msg) = check_knn(s, vt, metric, &q, &f, k, with_dist) {
                        fail(rep, &format!("vector, {phase}"), msg);
                    }
                }
            }
        };

    // 1. No index: exact evaluation.
    run_queries(&mut s, &vt, &mut rng, &mut rep, "no index");

    // 2. Synchronous HNSW indexes, then writes they must reflect at once.
    for (metric, ops) in metrics {
        let sql = format!("CREATE INDEX hs_{metric} USING HNSW ON tv(v) OP_TYPE '{ops}'");
        s.execute(&sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
    run_queries(&mut s, &vt, &mut rng, &mut rep, "synchronous HNSW");
    vector_writes(&mut s, &mut vt, &mut rng);
    run_queries(
        &mut s,
        &vt,
        &mut rng,
        &mut rep,
        "synchronous HNSW after writes",
    );
    for (metric, _) in metrics {
        let sql = format!("DROP INDEX hs_{metric} ON tv");
        s.execute(&sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    }

    // 3. ASYNC HNSW indexes: right after CREATE (initial build or fresh
    //    tail), caught up, and with not-yet-applied writes.
    for (metric, ops) in metrics {
        let sql = format!("CREATE INDEX ha_{metric} USING HNSW ON tv(v) OP_TYPE '{ops}' ASYNC");
        s.execute(&sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
    run_queries(&mut s, &vt, &mut rng, &mut rep, "ASYNC HNSW, just created");
    let names: Vec<String> = metrics.iter().map(|(m, _)| format!("ha_{m}")).collect();
    wait_until(
        "ASYNC HNSW indexes caught up",
        Duration::from_secs(30),
        || names.iter().all(|n| caught_up(&db, n)),
    );
    run_queries(&mut s, &vt, &mut rng, &mut rep, "ASYNC HNSW, caught up");
    vector_writes(&mut s, &mut vt, &mut rng);
    run_queries(&mut s, &vt, &mut rng, &mut rep, "ASYNC HNSW, fresh tail");
    wait_until(
        "ASYNC HNSW indexes caught up",
        Duration::from_secs(30),
        || names.iter().all(|n| caught_up(&db, n)),
    );
    run_queries(
        &mut s,
        &vt,
        &mut rng,
        &mut rep,
        "ASYNC HNSW, caught up again",
    );

    drop(s);
    db.shutdown();
    rep
}

/// Inserts, vector updates (to a duplicate, a new vector or NULL) and
/// deletes, applied to the table and to the test's copy.
fn vector_writes(s: &mut Session, vt: &mut VecTable, rng: &mut Rng) {
    for _ in 0..20 {
        let sql = match rng.below(3) {
            0 => {
                let r = vt.new_row(rng);
                let sql = format!("INSERT INTO tv VALUES {}", VecTable::row_sql(&r));
                vt.rows.push(r);
                sql
            }
            1 => {
                let i = rng.below(vt.rows.len());
                let v = if rng.chance(0.15) {
                    None
                } else if rng.chance(0.3) {
                    vt.rows[rng.below(vt.rows.len())].v
                } else {
                    Some(VecTable::random_vec(rng))
                };
                vt.rows[i].v = v;
                format!(
                    "UPDATE tv SET v = {} WHERE id = {}",
                    v.map_or("NULL".into(), |v| format!("'{}'", vlit(&v))),
                    vt.rows[i].id
                )
            }
            _ => {
                let i = rng.below(vt.rows.len());
                let r = vt.rows.swap_remove(i);
                format!("DELETE FROM tv WHERE id = {}", r.id)
            }
        };
        s.execute(&sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
}

// ---------------------------------------------------------------------------
// Entry point

fn seeds() -> Vec<u64> {
    common::oracle::seeds_from_env("TRIBUTARY_DIFF_SEED", CI_SEEDS)
}

fn queries_per_seed() -> usize {
    common::oracle::count_from_env("TRIBUTARY_DIFF_QUERIES", CI_QUERIES_PER_SEED)
}

fn finish(kind: &str, reports: Vec<Report>, t0: Instant) {
    let total: usize = reports.iter().map(|r| r.queries).sum();
    let mismatches: usize = reports.iter().map(|r| r.mismatches).sum();
    let failures: Vec<String> = reports.into_iter().flat_map(|r| r.failures).collect();
    eprintln!(
        "differential ({kind}): {total} statements in {:.1} s, {mismatches} mismatches",
        t0.elapsed().as_secs_f64(),
    );
    assert!(
        mismatches == 0,
        "{mismatches} {kind} mismatch(es) between Tributary and the oracle, the first \
         {MAX_REPORTS} of each seed below (rerun one seed with TRIBUTARY_DIFF_SEED=<seed>):\n\n{}",
        failures.join("\n")
    );
}

#[test]
fn relational_queries_match_sqlite() {
    let t0 = Instant::now();
    let per_seed = queries_per_seed();
    let reports: Vec<Report> = seeds()
        .into_iter()
        .map(|seed| relational_seed(seed, per_seed))
        .collect();
    finish("relational", reports, t0);
}

#[test]
fn vector_search_matches_brute_force() {
    let t0 = Instant::now();
    let reports: Vec<Report> = seeds().into_iter().map(vector_seed).collect();
    finish("vector", reports, t0);
}
