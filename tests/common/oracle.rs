//! The SQLite oracle's side of the differential tests: a seedable random
//! generator, engine-neutral result cells, and multiset / list comparison of
//! two results.

use std::cmp::Ordering;
use std::fmt::{self, Write as _};

use rusqlite::types::ValueRef;
use tributary::Value;

// ---------------------------------------------------------------------------
// Random numbers

/// SplitMix64: tiny, seedable, good enough for test generation.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next_u64() % ((hi - lo) as u64 + 1)) as i64
    }
    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        ((self.next_u64() >> 11) as f64 / (1u64 << 53) as f64) < p
    }
    pub fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len())]
    }
}

// ---------------------------------------------------------------------------
// Values and comparison

/// A result cell, engine-neutral.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    Null,
    Int(i64),
    Float(f64),
    /// An exact DECIMAL from Tributary: its value and scale. It matches an
    /// oracle double that rounds to it at that scale (SQLite has no
    /// DECIMAL: its AVG of integers is a double where MySQL's is a DECIMAL
    /// with 4 fractional digits).
    Decimal(f64, u8),
    Text(String),
}

impl fmt::Display for Cell {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Cell::Null => write!(f, "NULL"),
            Cell::Int(i) => write!(f, "{i}"),
            Cell::Float(x) => write!(f, "{x:?}"),
            Cell::Decimal(x, _) => write!(f, "{x:?}"),
            Cell::Text(s) => write!(f, "'{s}'"),
        }
    }
}

impl Cell {
    pub fn num(&self) -> Option<f64> {
        match self {
            Cell::Int(i) => Some(*i as f64),
            Cell::Float(x) | Cell::Decimal(x, _) => Some(*x),
            _ => None,
        }
    }
    pub fn rank(&self) -> u8 {
        match self {
            Cell::Null => 0,
            Cell::Int(_) | Cell::Float(_) | Cell::Decimal(..) => 1,
            Cell::Text(_) => 2,
        }
    }
    /// A total order for sorting multisets (numbers by value).
    pub fn sort_cmp(&self, other: &Cell) -> Ordering {
        match (self, other) {
            (Cell::Int(a), Cell::Int(b)) => a.cmp(b),
            (Cell::Text(a), Cell::Text(b)) => a.cmp(b),
            (a, b) => match (a.num(), b.num()) {
                // `+ 0.0` turns -0.0 into 0.0: equal in SQL.
                (Some(x), Some(y)) => (x + 0.0).total_cmp(&(y + 0.0)),
                _ => a.rank().cmp(&b.rank()),
            },
        }
    }
    /// Equal; numbers (Int and Float alike) when `close` says so.
    pub fn same(&self, other: &Cell, close: fn(f64, f64) -> bool) -> bool {
        match (self, other) {
            (Cell::Null, Cell::Null) => true,
            (Cell::Int(a), Cell::Int(b)) => a == b,
            (Cell::Text(a), Cell::Text(b)) => a == b,
            (Cell::Decimal(x, s), other) | (other, Cell::Decimal(x, s)) => match other.num() {
                // Within half a unit of the decimal's last digit (plus the
                // double's own error).
                Some(y) => {
                    close(*x, y) || (x - y).abs() <= 0.5 * 10f64.powi(-i32::from(*s)) * (1.0 + 1e-9)
                }
                None => false,
            },
            (a, b) => match (a.num(), b.num()) {
                (Some(x), Some(y)) => close(x, y),
                _ => false,
            },
        }
    }
}

/// Equal within a relative tolerance.
pub fn close(x: f64, y: f64) -> bool {
    x == y || (x - y).abs() <= 1e-9 * x.abs().max(y.abs()).max(1e-6)
}

pub fn cell_of(v: &Value) -> Cell {
    match v {
        Value::Null => Cell::Null,
        Value::Bool(b) => Cell::Int(*b as i64),
        Value::Int(i) => Cell::Int(*i),
        Value::Float(x) => Cell::Float(*x),
        // An exact DECIMAL compares as the number it is (SQLite has only
        // doubles; `same` compares numbers within a tolerance).
        Value::Decimal(d) => Cell::Decimal(d.to_f64(), d.scale()),
        Value::Text(s) => Cell::Text(s.clone()),
        other => Cell::Text(format!("<unexpected {other:?}>")),
    }
}

pub fn sqlite_cell(v: ValueRef<'_>) -> Cell {
    match v {
        ValueRef::Null => Cell::Null,
        ValueRef::Integer(i) => Cell::Int(i),
        ValueRef::Real(x) => Cell::Float(x),
        ValueRef::Text(t) => Cell::Text(String::from_utf8_lossy(t).into_owned()),
        ValueRef::Blob(b) => Cell::Text(format!("<blob {b:?}>")),
    }
}

pub type Rows = Vec<Vec<Cell>>;

pub fn rows_cmp(a: &[Cell], b: &[Cell]) -> Ordering {
    for (x, y) in a.iter().zip(b) {
        match x.sort_cmp(y) {
            Ordering::Equal => continue,
            o => return o,
        }
    }
    a.len().cmp(&b.len())
}

/// Whether two results agree (as lists when `ordered`, else as multisets),
/// numbers compared by `close`.
pub fn results_agree(got: &Rows, want: &Rows, ordered: bool, close: fn(f64, f64) -> bool) -> bool {
    if got.len() != want.len() {
        return false;
    }
    let (mut g, mut w) = (got.clone(), want.clone());
    if !ordered {
        g.sort_by(|a, b| rows_cmp(a, b));
        w.sort_by(|a, b| rows_cmp(a, b));
    }
    g.iter()
        .zip(&w)
        .all(|(x, y)| x.len() == y.len() && x.iter().zip(y).all(|(p, q)| p.same(q, close)))
}

/// At most `max` rows, one a line, indented by `indent`.
pub fn show_rows(rows: &Rows, max: usize, indent: &str) -> String {
    let mut out = String::new();
    for (i, r) in rows.iter().enumerate() {
        if i == max {
            let _ = writeln!(out, "{indent}… {} more rows", rows.len() - max);
            break;
        }
        let cells: Vec<String> = r.iter().map(|c| c.to_string()).collect();
        let _ = writeln!(out, "{indent}({})", cells.join(", "));
    }
    if rows.is_empty() {
        let _ = writeln!(out, "{indent}(no rows)");
    }
    out
}

/// Seeds from `var` (`1,2,0x1f`), else `default`.
pub fn seeds_from_env(var: &str, default: &[u64]) -> Vec<u64> {
    match std::env::var(var) {
        Ok(s) if !s.trim().is_empty() => s
            .split(',')
            .map(|x| {
                let x = x.trim();
                let parsed = match x.strip_prefix("0x") {
                    Some(h) => u64::from_str_radix(h, 16),
                    None => x.parse(),
                };
                parsed.unwrap_or_else(|_| panic!("{var}: bad seed {x:?}"))
            })
            .collect(),
        _ => default.to_vec(),
    }
}

/// A count from `var`, else `default`.
pub fn count_from_env(var: &str, default: usize) -> usize {
    std::env::var(var)
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(default)
}

/// A statement's rows from Tributary as cells, or its error as text.
pub fn trib_rows(trib: &mut tributary::Session, sql: &str) -> Result<Rows, String> {
    match trib.execute(sql) {
        Ok(r) => Ok(r
            .rows
            .iter()
            .map(|row| row.iter().map(cell_of).collect())
            .collect()),
        Err(e) => Err(format!("ERROR {e}")),
    }
}

/// A generated query's rows from SQLite: a query SQLite refuses or fails
/// on is a bug of the generator, so it panics with the query.
pub fn lite_rows(lite: &rusqlite::Connection, sql: &str) -> Rows {
    let mut st = lite
        .prepare(sql)
        .unwrap_or_else(|e| panic!("SQLite refused a generated query: {sql}: {e}"));
    let n = st.column_count();
    let mut rows = st
        .query([])
        .unwrap_or_else(|e| panic!("SQLite failed on a generated query: {sql}: {e}"));
    let mut out = Vec::new();
    while let Some(r) = rows
        .next()
        .unwrap_or_else(|e| panic!("SQLite failed on a generated query: {sql}: {e}"))
    {
        out.push(
            (0..n)
                .map(|i| sqlite_cell(r.get_ref(i).expect("cell")))
                .collect(),
        );
    }
    out
}

/// The oracle's NULL ordering is MySQL's (first ASC, last DESC).
pub fn check_oracle_null_order(lite: &rusqlite::Connection) {
    let order = |dir: &str| -> Vec<Option<i64>> {
        let sql = format!("SELECT x FROM (SELECT 1 AS x UNION ALL SELECT NULL) ORDER BY x {dir}");
        let mut st = lite.prepare(&sql).unwrap();
        st.query_map([], |r| r.get::<_, Option<i64>>(0))
            .unwrap()
            .map(|x| x.unwrap())
            .collect()
    };
    assert_eq!(order("ASC"), vec![None, Some(1)]);
    assert_eq!(order("DESC"), vec![Some(1), None]);
}
