//! Access-path selection: from a table definition and the WHERE clause,
//! choose how rows are fetched (primary-key point or range, secondary-index
//! range, full scan) and fetch them.
//!
//! The chosen path only narrows the rows read; the caller always re-checks
//! the whole WHERE clause on every fetched row, so a path can never change a
//! result. Never writes.
//!
//! Keys over text of a non-binary collation hold weight strings
//! (`crate::catalog::codec::encode_key_in`), so a bound taken from a
//! comparison is encoded under the key column's collation, and a
//! comparison is a bound only when every row it accepts lies in the range:
//! under the column's own collation (any comparison), or — over a column of
//! a non-binary collation — a binary *equality* (`c = 'A' COLLATE
//! utf8mb4_bin`: the rows equal under the column's collation are a
//! superset, re-checked). A range under another collation, or a
//! non-binary comparison over a binary column, is never a bound.

use std::ops::Bound;

use tributary_storage::Transaction;

use crate::catalog::codec::{encode_key_in, prefix_end};
use crate::catalog::schema::coerce_value;
use crate::catalog::{IndexKind, TableDef};
use crate::collation::Collation;
use crate::error::{SqlError, SqlResult};
use crate::sql::expr::collate::{collated, Collated};
use crate::sql::expr::{eval_const, BinOp, CExpr, FunctionHost};
use crate::types::{DataType, Value};

/// How rows are fetched.
#[derive(Debug, Clone, PartialEq)]
pub enum Access {
    FullScan,
    PkPoint(Vec<Vec<u8>>),
    PkRange(Bound<Vec<u8>>, Bound<Vec<u8>>),
    /// Several primary-key ranges (one per key prefix: a join reading a
    /// table with a composite primary key by its first column).
    PkRanges(Vec<KeyRange>),
    IndexRange {
        index: String,
        storage_id: u64,
        start: Bound<Vec<u8>>,
        end: Bound<Vec<u8>>,
    },
}

/// A range of storage keys.
pub type KeyRange = (Bound<Vec<u8>>, Bound<Vec<u8>>);

impl Access {
    /// One-line description for EXPLAIN.
    pub fn describe(&self, t: &TableDef) -> String {
        match self {
            Access::FullScan => format!("Table Scan on {}", t.qualified()),
            Access::PkPoint(keys) => format!(
                "Point Get on {} using PRIMARY ({} key{})",
                t.qualified(),
                keys.len(),
                if keys.len() == 1 { "" } else { "s" }
            ),
            Access::PkRange(..) => format!("Range Scan on {} using PRIMARY", t.qualified()),
            Access::PkRanges(r) => format!(
                "Range Scan on {} using PRIMARY ({} ranges)",
                t.qualified(),
                r.len()
            ),
            Access::IndexRange { index, .. } => {
                format!("Index Range Scan on {} using {index}", t.qualified())
            }
        }
    }
}

/// A comparison a bound may come from (the flag of IN / BETWEEN: NOT).
enum Shape<'a> {
    Cmp(BinOp, &'a CExpr, &'a CExpr),
    In(&'a CExpr, &'a [CExpr], bool),
    Between(&'a CExpr, &'a CExpr, &'a CExpr, bool),
}

#[derive(Debug, Clone, Default)]
struct ColBounds {
    eq: Option<Value>,
    in_list: Option<Vec<Value>>,
    lo: Option<(Value, bool)>,
    hi: Option<(Value, bool)>,
}

fn flip(op: BinOp) -> BinOp {
    match op {
        BinOp::Lt => BinOp::Gt,
        BinOp::LtEq => BinOp::GtEq,
        BinOp::Gt => BinOp::Lt,
        BinOp::GtEq => BinOp::LtEq,
        o => o,
    }
}

/// Collect per-column constant bounds from the WHERE conjuncts.
fn column_bounds(t: &TableDef, filter: Option<&CExpr>, host: &dyn FunctionHost) -> Vec<ColBounds> {
    let mut b = vec![ColBounds::default(); t.columns.len()];
    let Some(f) = filter else { return b };
    for term in f.conjuncts() {
        let coerce = |col: usize, e: &CExpr| -> Option<Value> {
            if !e.is_constant() {
                return None;
            }
            let v = eval_const(e, host).ok()?;
            if v.is_null() {
                return None;
            }
            let c = t.columns.get(col)?;
            // A text column compared with a number compares as numbers
            // ('05' = 5): no key range can express that.
            if matches!(c.ty, DataType::Varchar(_) | DataType::Text) && !matches!(v, Value::Text(_))
            {
                return None;
            }
            let k = coerce_value(&c.ty, v.clone(), &c.name).ok()?;
            // A bound is usable only if coercion kept the value: `id > 606.5`
            // must not become `id > 607`.
            (crate::sql::expr::sql_cmp(&v, &k) == Some(std::cmp::Ordering::Equal)).then_some(k)
        };
        // The comparison's parts and the collation it compares under
        // (`None`: the evaluator's own, code point order).
        let (shape, under) = match (term, collated(term)) {
            (_, Some(Collated::Cmp(c, op, l, r))) => (Shape::Cmp(op, l, r), Some(c)),
            (_, Some(Collated::In(c, neg, x, items))) => (Shape::In(x, items, neg), Some(c)),
            (_, Some(Collated::Between(c, neg, x, lo, hi))) => {
                (Shape::Between(x, lo, hi, neg), Some(c))
            }
            (CExpr::Bin(op, l, r), None) => (Shape::Cmp(*op, l, r), None),
            (CExpr::InList(x, items, neg), None) => (Shape::In(x, items, *neg), None),
            (CExpr::Between(x, lo, hi, neg), None) => (Shape::Between(x, lo, hi, *neg), None),
            _ => continue,
        };
        // Whether the key range of the comparison holds every row it
        // accepts (see the module doc).
        let usable = |col: usize, equality: bool| -> bool {
            let key = t.columns.get(col).map(|c| c.collation).unwrap_or_default();
            match under {
                Some(c) => c == key,
                None => key.is_binary() || equality,
            }
        };
        match shape {
            Shape::Cmp(op, l, r) => {
                let (col, other, op) = match (l, r) {
                    (CExpr::Col(c), o) if o.is_constant() => (*c, o, op),
                    (o, CExpr::Col(c)) if o.is_constant() => (*c, o, flip(op)),
                    _ => continue,
                };
                if !usable(col, op == BinOp::Eq) {
                    continue;
                }
                let Some(v) = coerce(col, other) else {
                    continue;
                };
                let Some(cb) = b.get_mut(col) else { continue };
                match op {
                    BinOp::Eq => cb.eq = Some(v),
                    BinOp::Gt => cb.lo = Some((v, false)),
                    BinOp::GtEq => cb.lo = Some((v, true)),
                    BinOp::Lt => cb.hi = Some((v, false)),
                    BinOp::LtEq => cb.hi = Some((v, true)),
                    _ => {}
                }
            }
            Shape::Between(CExpr::Col(col), lo, hi, false) if usable(*col, false) => {
                if let (Some(l), Some(h)) = (coerce(*col, lo), coerce(*col, hi)) {
                    if let Some(cb) = b.get_mut(*col) {
                        cb.lo = Some((l, true));
                        cb.hi = Some((h, true));
                    }
                }
            }
            Shape::In(CExpr::Col(col), items, false) if usable(*col, true) => {
                let vals: Option<Vec<Value>> = items.iter().map(|i| coerce(*col, i)).collect();
                if let (Some(vals), Some(cb)) = (vals, b.get_mut(*col)) {
                    cb.in_list = Some(vals);
                }
            }
            _ => {}
        }
    }
    b
}

/// The key range of `cb`'s bounds on the first part of a key whose
/// collation is `coll`.
fn range_on_first(cb: &ColBounds, coll: Collation) -> Option<KeyRange> {
    let encode = |v: &Value| encode_key_in(std::slice::from_ref(v), &[coll]);
    if let Some(v) = &cb.eq {
        let k = encode(v);
        let end = prefix_end(&k)
            .map(Bound::Excluded)
            .unwrap_or(Bound::Unbounded);
        return Some((Bound::Included(k), end));
    }
    if cb.lo.is_none() && cb.hi.is_none() {
        return None;
    }
    let start = match &cb.lo {
        None => {
            // Skip NULLs (encoded as 0x00): start just above them.
            Bound::Excluded(vec![0x00, 0xFF])
        }
        Some((v, incl)) => {
            let k = encode(v);
            if *incl {
                Bound::Included(k)
            } else {
                prefix_end(&k)
                    .map(Bound::Included)
                    .unwrap_or(Bound::Unbounded)
            }
        }
    };
    let end = match &cb.hi {
        None => Bound::Unbounded,
        Some((v, incl)) => {
            let k = encode(v);
            if *incl {
                prefix_end(&k)
                    .map(Bound::Excluded)
                    .unwrap_or(Bound::Unbounded)
            } else {
                Bound::Excluded(k)
            }
        }
    };
    Some((start, end))
}

/// The collation column `col` of `t` keys by.
fn key_collation(t: &TableDef, col: usize) -> Collation {
    t.columns.get(col).map(|c| c.collation).unwrap_or_default()
}

/// Choose the access path for `filter` on `t`.
pub fn choose(t: &TableDef, filter: Option<&CExpr>, host: &dyn FunctionHost) -> Access {
    let bounds = column_bounds(t, filter, host);
    if !t.pk.is_empty() {
        // Full primary-key equality (or IN on a single-column key).
        if t.pk.iter().all(|&c| bounds[c].eq.is_some()) {
            let vals: Vec<Value> = t.pk.iter().filter_map(|&c| bounds[c].eq.clone()).collect();
            return Access::PkPoint(vec![t.pk_key(&vals)]);
        }
        if t.pk.len() == 1 {
            if let Some(list) = &bounds[t.pk[0]].in_list {
                let coll = t.key_collations(&t.pk[..1]);
                let mut keys: Vec<Vec<u8>> = list
                    .iter()
                    .map(|v| encode_key_in(std::slice::from_ref(v), &coll))
                    .collect();
                keys.sort();
                keys.dedup();
                return Access::PkPoint(keys);
            }
        }
        if let Some((s, e)) = range_on_first(&bounds[t.pk[0]], key_collation(t, t.pk[0])) {
            return Access::PkRange(s, e);
        }
    }
    // Secondary (synchronous B-tree) index on its first column: prefer
    // equality over ranges.
    let mut best: Option<(bool, Access)> = None;
    for ix in &t.indexes {
        if ix.is_async || !matches!(ix.kind, IndexKind::BTree { .. }) {
            continue;
        }
        let Some(&first) = ix.columns.first() else {
            continue;
        };
        let cb = &bounds[first];
        if let Some((s, e)) = range_on_first(cb, key_collation(t, first)) {
            let is_eq = cb.eq.is_some();
            let a = Access::IndexRange {
                index: ix.name.clone(),
                storage_id: ix.storage_id,
                start: s,
                end: e,
            };
            if best.as_ref().is_none_or(|(beq, _)| is_eq && !beq) {
                best = Some((is_eq, a));
            }
        }
    }
    best.map(|(_, a)| a).unwrap_or(Access::FullScan)
}

/// Rows a snapshot scan visits before it lets go of the table and resumes
/// after the last key: commits are never held up by a whole scan.
const SCAN_CHUNK: usize = 1024;

/// Fetch `(key, row)` pairs for an access path (plain snapshot reads, or
/// locking current reads when `lock`), decoding only the `needed` columns
/// (the rest read as NULL) and keeping only the rows `keep` accepts. A snapshot scan
/// decodes each row into one buffer straight from the store and tests it
/// there, so a row that is filtered out is never copied. `keep` sees the
/// row with only the `needed` columns decoded; it must not read storage.
/// The scan stops once `max` rows are kept (the first ones in key order;
/// in a locking scan, later rows are then neither read nor locked).
/// `shape` says what a kept row is made into (its columns, its key).
#[allow(clippy::too_many_arguments)]
pub fn fetch_where(
    txn: &mut dyn Transaction,
    t: &TableDef,
    access: &Access,
    lock: bool,
    needed: Option<&[bool]>,
    max: usize,
    keep: &mut dyn FnMut(&[Value]) -> SqlResult<bool>,
    shape: Kept<'_>,
) -> SqlResult<Vec<(Vec<u8>, Vec<Value>)>> {
    let mut out = Vec::new();
    if max == 0 {
        return Ok(out);
    }
    let corrupt = |e: crate::catalog::codec::CodecError| {
        SqlError::internal(format!("{}: {e}", t.qualified()))
    };
    let one = |k: Vec<u8>,
               v: &[u8],
               keep: &mut dyn FnMut(&[Value]) -> SqlResult<bool>,
               out: &mut Vec<(Vec<u8>, Vec<Value>)>|
     -> SqlResult<()> {
        crate::sql::budget::tick()?;
        let mut row = crate::catalog::codec::decode_row_masked(v, needed).map_err(corrupt)?;
        if keep(&row)? {
            let k = if shape.keys { k } else { Vec::new() };
            out.push((k, shape.row(&mut row)));
        }
        Ok(())
    };
    match access {
        Access::PkPoint(keys) => {
            for k in keys {
                if let Some(v) = txn.get(t.id, k, lock)? {
                    one(k.clone(), &v, keep, &mut out)?;
                    if out.len() >= max {
                        break;
                    }
                }
            }
        }
        Access::FullScan | Access::PkRange(..) | Access::PkRanges(..) => {
            let ranges = match access {
                Access::PkRange(s, e) => vec![(s.clone(), e.clone())],
                Access::PkRanges(r) => r.clone(),
                _ => vec![(Bound::Unbounded, Bound::Unbounded)],
            };
            for (s, e) in ranges {
                if out.len() >= max {
                    break;
                }
                if lock {
                    for (k, _) in txn.scan(t.id, s, e, usize::MAX)? {
                        // Current read under the row lock.
                        if let Some(v) = txn.get(t.id, &k, true)? {
                            one(k, &v, keep, &mut out)?;
                            if out.len() >= max {
                                break;
                            }
                        }
                    }
                    continue;
                }
                let mut buf: Vec<Value> = Vec::new();
                let mut start = s;
                loop {
                    let mut failed: Option<SqlError> = None;
                    let mut seen = 0usize;
                    let mut last: Option<Vec<u8>> = None;
                    txn.scan_visit(t.id, as_ref(&start), as_ref(&e), &mut |k, v| {
                        seen += 1;
                        let step = crate::sql::budget::tick()
                            .and_then(|()| {
                                crate::catalog::codec::decode_row_into(v, needed, &mut buf)
                                    .map_err(corrupt)
                            })
                            .and_then(|()| keep(&buf));
                        match step {
                            Ok(true) => {
                                let k = if shape.keys { k.to_vec() } else { Vec::new() };
                                out.push((k, shape.row(&mut buf)));
                                if out.len() >= max {
                                    return false;
                                }
                            }
                            Ok(false) => {}
                            Err(err) => {
                                failed = Some(err);
                                return false;
                            }
                        }
                        if seen >= SCAN_CHUNK {
                            last = Some(k.to_vec());
                            return false;
                        }
                        true
                    })?;
                    if let Some(err) = failed {
                        return Err(err);
                    }
                    match last {
                        Some(k) => start = Bound::Excluded(k),
                        None => break,
                    }
                }
            }
        }
        Access::IndexRange {
            storage_id,
            start,
            end,
            ..
        } => {
            let entries = txn.scan(*storage_id, start.clone(), end.clone(), usize::MAX)?;
            for (_, pk) in entries {
                if let Some(v) = txn.get(t.id, &pk, lock)? {
                    one(pk, &v, keep, &mut out)?;
                    if out.len() >= max {
                        break;
                    }
                }
            }
        }
    }
    Ok(out)
}

/// What [`fetch_where`] makes of a row it keeps.
#[derive(Clone, Copy, Default)]
pub struct Kept<'a> {
    /// Only these columns of the row, in this order (a pruned scan's
    /// output: [`crate::sql::plan::Plan::scan_columns`]); `None`: the
    /// whole row.
    pub columns: Option<&'a [usize]>,
    /// Whether the row's primary-key bytes are wanted (else an empty key:
    /// no allocation per row).
    pub keys: bool,
}

impl Kept<'_> {
    /// The kept row, moved out of the decode buffer `buf` (which keeps its
    /// allocation when only some columns are taken: the next row decodes
    /// into it without a new one).
    pub(crate) fn row(&self, buf: &mut Vec<Value>) -> Vec<Value> {
        match self.columns {
            None => std::mem::take(buf),
            Some(cols) => cols
                .iter()
                .map(|&c| {
                    buf.get_mut(c)
                        .map_or(Value::Null, |v| std::mem::replace(v, Value::Null))
                })
                .collect(),
        }
    }
}

/// Whether `access` yields at most `cap` rows at the transaction's
/// snapshot (keys counted, rows not read; a full scan never qualifies).
pub fn yields_at_most(
    txn: &mut dyn Transaction,
    t: &TableDef,
    access: &Access,
    cap: usize,
) -> SqlResult<bool> {
    let ranges: Vec<(u64, KeyRange)> = match access {
        Access::FullScan => return Ok(false),
        Access::PkPoint(keys) => return Ok(keys.len() <= cap),
        Access::PkRange(s, e) => vec![(t.id, (s.clone(), e.clone()))],
        Access::PkRanges(r) => r.iter().map(|r| (t.id, r.clone())).collect(),
        Access::IndexRange {
            storage_id,
            start,
            end,
            ..
        } => vec![(*storage_id, (start.clone(), end.clone()))],
    };
    let mut n = 0usize;
    for (id, (s, e)) in ranges {
        txn.scan_visit(id, as_ref(&s), as_ref(&e), &mut |_, _| {
            n += 1;
            n <= cap
        })?;
        if n > cap {
            return Ok(false);
        }
    }
    Ok(true)
}

fn as_ref(b: &Bound<Vec<u8>>) -> Bound<&[u8]> {
    match b {
        Bound::Included(k) => Bound::Included(k),
        Bound::Excluded(k) => Bound::Excluded(k),
        Bound::Unbounded => Bound::Unbounded,
    }
}

pub use crate::catalog::codec::btree_entry_key;
