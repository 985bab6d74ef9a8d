//! Joins: a hash join on the equality keys (built on the smaller input
//! of an inner join), a nested loop when there are none or a key column
//! mixes numbers and text, and the right side read by primary key when
//! the left has few keys (an index nested-loop join, batched); inner,
//! left and right outer.
//!
//! Owns the join algorithms: both inputs, the keys, the hash table and the
//! output are charged to the statement's budget while the join runs, and
//! every row pair tried ticks. Never plans (the keys and residual
//! conditions were placed by the planner).

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use crate::error::SqlResult;
use crate::sql::budget::{self, Reservation};
use crate::sql::exec::{all_hold, prepare, record, Exec, Prepared};
use crate::sql::expr::{self, value_key, CExpr, EvalCtx};
use crate::sql::host::SessionHost;
use crate::sql::plan::{lookup_key, lookup_key_limit, Join, JoinKind, Stage, Stat};
use crate::types::Value;

/// The right input of a join read by key: the scan with `key IN (…)`
/// added, when the left side has few keys of the key column's own type
/// (so that the key encoding finds exactly the rows `=` would).
fn right_by_lookup(
    cx: &mut Exec<'_, '_>,
    j: &Join,
    left: &[Vec<Value>],
    outer: &[Value],
) -> SqlResult<Option<Vec<Vec<Value>>>> {
    let Some((ki, p, t)) = lookup_key(j) else {
        return Ok(None);
    };
    let col = t.pk[0];
    // Integer columns hold `Value::Int` (BOOL holds `Value::Bool`, whose
    // key encoding differs): only then does an integer's key find the row.
    let int_key = matches!(
        t.columns[col].ty,
        crate::types::DataType::Int
            | crate::types::DataType::BigInt
            | crate::types::DataType::Integer { .. }
    );
    let text_key = matches!(
        t.columns[col].ty,
        crate::types::DataType::Text | crate::types::DataType::Varchar(_)
    );
    let host = SessionHost::new(cx.session, cx.engine);
    let max_keys = lookup_key_limit(cx.txn.approx_rows(t.id));
    let mut keys = Vec::new();
    // Integers (the common key) deduplicated as integers, no key bytes.
    let mut seen: HashSet<Vec<u8>, foldhash::fast::RandomState> = HashSet::default();
    let mut seen_ints: HashSet<i64, foldhash::fast::RandomState> = HashSet::default();
    for l in left {
        budget::tick()?;
        let v = j.keys[ki].0.eval(&EvalCtx {
            row: l,
            outer,
            aggs: &[],
            matches: &[],
            funcs: &host,
        })?;
        let ok = match &v {
            Value::Null => continue,
            Value::Int(_) => int_key,
            Value::Text(_) => text_key,
            _ => false,
        };
        if !ok {
            return Ok(None);
        }
        let fresh = match &v {
            Value::Int(i) => seen_ints.insert(*i),
            v => seen.insert(value_key(v)),
        };
        if fresh {
            keys.push(v);
            if keys.len() > max_keys {
                return Ok(None);
            }
        }
    }
    // Keys of the column's own type encode exactly as the stored primary
    // keys do (text under the column's collation), so the lookups find
    // the rows `key = value` would — under a non-binary collation a
    // superset of the join's binary equality, which the join re-checks.
    let coll = t.key_collations(&t.pk[..1]);
    let mut starts: Vec<Vec<u8>> = keys
        .iter()
        .map(|v| crate::catalog::codec::encode_key_in(std::slice::from_ref(v), &coll))
        .collect();
    starts.sort();
    starts.dedup();
    let mut keyed = p.keyed_copy();
    keyed.access = if t.pk.len() == 1 {
        crate::sql::access::Access::PkPoint(starts)
    } else {
        // A composite key: one range per value of its first column.
        crate::sql::access::Access::PkRanges(
            starts
                .into_iter()
                .map(|start| {
                    let end = match crate::catalog::codec::prefix_end(&start) {
                        Some(e) => std::ops::Bound::Excluded(e),
                        None => std::ops::Bound::Unbounded,
                    };
                    (std::ops::Bound::Included(start), end)
                })
                .collect(),
        )
    };
    let start = std::time::Instant::now();
    let rows = cx.run_block(&j.right, &keyed, outer)?;
    record(
        &j.right,
        Stage::Node,
        Stat {
            rows: rows.len() as u64,
            batches: rows.len().div_ceil(super::BATCH_ROWS) as u64,
            loops: 1,
            time: start.elapsed(),
            peak_bytes: 0,
        },
    );
    Ok(Some(rows))
}

/// A hash-join key part: SQL-equal values of one class (numbers, or
/// text) get equal keys; `Other` (datetimes, vectors) never hash-joins.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum HKey {
    Int(i64),
    Float(u64),
    /// A decimal no i64 or f64 holds exactly: its normalized key bytes.
    Decimal(Vec<u8>),
    Text(String),
    Other,
}

impl HKey {
    /// `None` for NULL (which matches nothing).
    fn of(v: &Value) -> Option<HKey> {
        Some(match expr::key_form(v) {
            Value::Null => return None,
            Value::Int(i) => HKey::Int(i),
            Value::Float(f) => HKey::Float(f.to_bits()),
            Value::Decimal(d) => {
                let mut k = Vec::new();
                d.encode_key(&mut k);
                HKey::Decimal(k)
            }
            Value::Text(t) => HKey::Text(t),
            _ => HKey::Other,
        })
    }

    fn class(&self) -> u8 {
        match self {
            HKey::Int(_) | HKey::Float(_) | HKey::Decimal(_) => 0,
            HKey::Text(_) => 1,
            HKey::Other => 2,
        }
    }
}

/// The join keys of every row of one side (`None`: a NULL key part).
fn side_keys(
    exprs: &[&CExpr],
    rows: &[Vec<Value>],
    outer: &[Value],
    host: &SessionHost<'_>,
    mem: &mut Reservation,
) -> SqlResult<Vec<Option<Vec<HKey>>>> {
    let mut out = Vec::with_capacity(rows.len());
    for row in rows {
        budget::tick()?;
        mem.add(32 + exprs.len() * std::mem::size_of::<HKey>())?;
        out.push(row_key(exprs, row, outer, host)?);
    }
    Ok(out)
}

/// The join key of one row (`None`: a NULL key part).
fn row_key(
    exprs: &[&CExpr],
    row: &[Value],
    outer: &[Value],
    host: &SessionHost<'_>,
) -> SqlResult<Option<Vec<HKey>>> {
    let mut k = Vec::with_capacity(exprs.len());
    for e in exprs {
        let part = HKey::of(&*key_value(e, row, outer, host)?);
        match part {
            Some(p) => k.push(p),
            None => return Ok(None),
        }
    }
    Ok(Some(k))
}

/// One join key part of `row`: a column's value as it is (no copy), any
/// other expression evaluated.
fn key_value<'r>(
    e: &CExpr,
    row: &'r [Value],
    outer: &[Value],
    host: &SessionHost<'_>,
) -> SqlResult<Cow<'r, Value>> {
    Ok(match e {
        CExpr::Col(i) => Cow::Borrowed(row.get(*i).unwrap_or(&Value::Null)),
        e => Cow::Owned(e.eval(&EvalCtx {
            row,
            outer,
            aggs: &[],
            matches: &[],
            funcs: host,
        })?),
    })
}

/// `l ++ r` if the residual conditions hold on it. The row is built in
/// `spare`'s allocation, which keeps a rejected row's for the next pair:
/// each value is copied once per output row.
fn joined(
    cx: &mut Exec<'_, '_>,
    residual: &[Prepared<'_>],
    outer: &[Value],
    host: &SessionHost<'_>,
    (l, r): (&[Value], &[Value]),
    spare: &mut Vec<Value>,
) -> SqlResult<Option<Vec<Value>>> {
    let mut row = std::mem::take(spare);
    row.clear();
    row.reserve(l.len() + r.len());
    row.extend_from_slice(l);
    row.extend_from_slice(r);
    if !all_hold(cx, residual, outer, host, &row)? {
        *spare = row;
        return Ok(None);
    }
    Ok(Some(row))
}

/// What a join under a running recursive CTE keeps between its rounds
/// when one input is a scan the CTE keeps (the same rows every round):
/// that input's rows and its hash table on the join keys, built once; each
/// round then reads only the other input (the working table, typically a
/// few rows) and probes it.
struct Kept {
    /// Whether the kept input is the left one.
    left: bool,
    rows: Vec<Vec<Value>>,
    /// Join key → positions in `rows`; `None` when the kept input's keys
    /// do not hash (a key part mixing numbers and text, or of another
    /// class): the join then runs as usual every round.
    table: Option<HashMap<Vec<HKey>, Vec<usize>, foldhash::fast::RandomState>>,
    /// Per key part, the class of the kept input's non-NULL keys (`None`:
    /// it has none).
    classes: Vec<Option<u8>>,
    /// The charge of all the above, until the CTE ends.
    _mem: Reservation,
}

/// An inner join (or a left join whose right input is kept) under a
/// running recursive CTE, one of whose inputs is a scan the CTE keeps:
/// the hash table on that input is built in the first round and kept
/// ([`Kept`]); `None` when the join is not such a join, or a key of the
/// other input has another class than the kept input's (SQL equality is
/// then no key equality): the caller joins as usual.
fn kept_join(
    cx: &mut Exec<'_, '_>,
    j: &Join,
    outer: &[Value],
) -> SqlResult<Option<Vec<Vec<Value>>>> {
    use crate::sql::exec::recursive;
    if j.keys.is_empty() {
        return Ok(None);
    }
    let kept_left = match (
        recursive::is_kept_scan(&j.left),
        recursive::is_kept_scan(&j.right),
        j.kind,
    ) {
        (true, false, JoinKind::Inner) => true,
        (false, true, JoinKind::Inner | JoinKind::Left) => false,
        _ => return Ok(None),
    };
    let host = SessionHost::new(cx.session, cx.engine);
    let side = |left: bool| -> Vec<&CExpr> {
        j.keys
            .iter()
            .map(|(l, r)| if left { l } else { r })
            .collect()
    };
    let kept = match recursive::join_state::<Kept>(j) {
        None => return Ok(None),
        Some(Some(k)) => k,
        Some(None) => {
            let mut mem = Reservation::new();
            let rows = cx.run(if kept_left { &j.left } else { &j.right }, outer)?;
            mem.add_rows(&rows)?;
            let keys = side_keys(&side(kept_left), &rows, outer, &host, &mut mem)?;
            let mut classes: Vec<Option<u8>> = vec![None; j.keys.len()];
            let mut hashable = true;
            for k in keys.iter().flatten() {
                for (c, part) in classes.iter_mut().zip(k) {
                    hashable &= part.class() != 2 && c.is_none_or(|c| c == part.class());
                    *c = Some(part.class());
                }
            }
            let table = if hashable {
                let mut table: HashMap<Vec<HKey>, Vec<usize>, foldhash::fast::RandomState> =
                    HashMap::with_capacity_and_hasher(rows.len(), Default::default());
                for (i, k) in keys.into_iter().enumerate() {
                    if let Some(k) = k {
                        budget::tick()?;
                        mem.add(48)?;
                        table.entry(k).or_default().push(i);
                    }
                }
                Some(table)
            } else {
                None
            };
            if table.is_some() {
                recursive::release_scan(if kept_left { &j.left } else { &j.right });
            }
            let k = std::rc::Rc::new(Kept {
                left: kept_left,
                rows,
                table,
                classes,
                _mem: mem,
            });
            recursive::keep_join_state(j, k.clone());
            k
        }
    };
    let Some(table) = &kept.table else {
        return Ok(None);
    };
    debug_assert_eq!(kept.left, kept_left, "a join's kept side");
    let mut mem = Reservation::new();
    let other = budget::Grave(cx.run(if kept_left { &j.right } else { &j.left }, outer)?);
    mem.add_rows(&other)?;
    let keys = side_keys(&side(!kept_left), &other, outer, &host, &mut mem)?;
    let same_class = keys.iter().flatten().all(|k| {
        k.iter()
            .zip(&kept.classes)
            .all(|(p, c)| p.class() != 2 && c.is_none_or(|c| c == p.class()))
    });
    if !same_class {
        return Ok(None);
    }
    let residual: Vec<Prepared<'_>> = j
        .residual
        .iter()
        .map(|c| prepare(cx, c, j.left_width + j.right_width, outer))
        .collect::<SqlResult<_>>()?;
    let mut out_mem = Reservation::new();
    let mut out: budget::Grave<Vec<Vec<Value>>> = Default::default();
    let mut spare = Vec::new();
    for (oi, k) in keys.iter().enumerate() {
        budget::tick()?;
        let mut matched = false;
        let hits = k.as_deref().and_then(|k| table.get(k));
        for &ki in hits.into_iter().flatten() {
            budget::tick()?;
            let pair = if kept_left {
                (kept.rows[ki].as_slice(), other[oi].as_slice())
            } else {
                (other[oi].as_slice(), kept.rows[ki].as_slice())
            };
            if let Some(row) = joined(cx, &residual, outer, &host, pair, &mut spare)? {
                out_mem.add_row(&row)?;
                out.push(row);
                matched = true;
            }
        }
        if !matched && j.kind == JoinKind::Left {
            let mut row = other[oi].clone();
            row.resize(j.left_width + j.right_width, Value::Null);
            out_mem.add_row(&row)?;
            out.push(row);
        }
    }
    Ok(Some(out.take()))
}

/// Execute a join: a hash join on its keys (built on the smaller input of
/// an inner join), or a nested loop when there are none or a key column
/// mixes numbers and text (whose SQL equality is not key equality); under
/// a running recursive CTE, with a hash table kept between rounds when one
/// input is the same every round ([`kept_join`]).
///
/// Both inputs, the keys, the hash table and the output are charged to the
/// statement's memory budget while the join runs; every row pair tried is
/// a [`budget::tick`].
pub(super) fn join(cx: &mut Exec<'_, '_>, j: &Join, outer: &[Value]) -> SqlResult<Vec<Vec<Value>>> {
    if let Some(rows) = super::recursive_join::join(cx, j, outer)? {
        return Ok(rows);
    }
    if let Some(rows) = kept_join(cx, j, outer)? {
        return Ok(rows);
    }
    let mut mem = Reservation::new();
    // Inputs and output in graves: a killed join answers before it frees.
    let mut left = budget::Grave(cx.run(&j.left, outer)?);
    mem.add_rows(&left)?;
    let mut right = budget::Grave(if left.is_empty() && j.kind != JoinKind::Right {
        Vec::new()
    } else {
        match right_by_lookup(cx, j, &left, outer)? {
            Some(rows) => rows,
            None => cx.run(&j.right, outer)?,
        }
    });
    mem.add_rows(&right)?;
    // The output's charge (kept apart: `emit` holds it).
    let mut out_mem = Reservation::new();
    let host = SessionHost::new(cx.session, cx.engine);
    let residual: Vec<Prepared<'_>> = j
        .residual
        .iter()
        .map(|c| prepare(cx, c, j.left_width + j.right_width, outer))
        .collect::<SqlResult<_>>()?;
    let mut out: budget::Grave<Vec<Vec<Value>>> = Default::default();
    let mut left_matched = vec![false; left.len()];
    let mut right_matched = vec![false; right.len()];
    let mut spare = Vec::new();
    // Emit left[li] ++ right[ri] if the residual condition holds. A KILL
    // (or the deadline) stops a long join between two checks.
    let mut emit = |cx: &mut Exec<'_, '_>, li: usize, ri: usize| -> SqlResult<()> {
        budget::tick()?;
        let pair = (left[li].as_slice(), right[ri].as_slice());
        let Some(row) = joined(cx, &residual, outer, &host, pair, &mut spare)? else {
            return Ok(());
        };
        out_mem.add_row(&row)?;
        out.push(row);
        left_matched[li] = true;
        right_matched[ri] = true;
        Ok(())
    };
    if j.keys.is_empty() {
        for li in 0..left.len() {
            for ri in 0..right.len() {
                emit(cx, li, ri)?;
            }
        }
    } else {
        let lexprs: Vec<&CExpr> = j.keys.iter().map(|(l, _)| l).collect();
        let rexprs: Vec<&CExpr> = j.keys.iter().map(|(_, r)| r).collect();
        // Build on the smaller side of an inner join; an outer join builds
        // on the side whose unmatched rows it does not emit.
        let build_left = j.kind == JoinKind::Inner && left.len() < right.len();
        // A build side past `tmp_table_size`: a grace hash join through
        // partition files (decision 027).
        let spill = {
            let build_rows = if build_left { &left } else { &right };
            let build_bytes = crate::sql::spill::current().map(|_| {
                let rows = build_rows.iter().map(|r| budget::row_size(r) as u64 + 48);
                rows.sum::<u64>()
            });
            build_bytes.and_then(crate::sql::spill::hash::join_spill)
        };
        // Keys of integers on both sides (the common case: key columns):
        // hashed as integers, each row's matches chained by position
        // (decision 031).
        let ints = match spill {
            Some(_) => None,
            None => match int_keys(&lexprs, &left, outer, &host, &mut mem)? {
                Some(lk) => int_keys(&rexprs, &right, outer, &host, &mut mem)?.map(|rk| (lk, rk)),
                None => None,
            },
        };
        if let Some((lk, rk)) = ints {
            let (build, probe) = if build_left { (&lk, &rk) } else { (&rk, &lk) };
            let table = IntTable::new(build, &mut mem)?;
            for (pi, k) in probe.iter().enumerate() {
                budget::tick()?;
                let Some(k) = k else { continue };
                let mut at = table.first(k);
                while let Some(bi) = at {
                    let (li, ri) = if build_left { (bi, pi) } else { (pi, bi) };
                    emit(cx, li, ri)?;
                    at = table.next(bi);
                }
            }
            return finish_outer(
                j,
                &left,
                &right,
                &left_matched,
                &right_matched,
                out,
                out_mem,
            );
        }
        let lk = side_keys(&lexprs, &left, outer, &host, &mut mem)?;
        let rk = side_keys(&rexprs, &right, outer, &host, &mut mem)?;
        let hashable = (0..j.keys.len()).all(|i| {
            let mut classes = HashSet::new();
            for k in lk.iter().chain(rk.iter()).flatten() {
                classes.insert(k[i].class());
            }
            classes.len() <= 1 && !classes.contains(&2)
        });
        if hashable {
            if let Some((settings, limit)) = spill {
                drop((lk, rk, mem));
                let (left, right) = (left.take(), right.take());
                let mut key = |is_left: bool, row: &[Value]| {
                    row_key(if is_left { &lexprs } else { &rexprs }, row, outer, &host)
                };
                let mut emit = |l: Option<&[Value]>, r: Option<&[Value]>| {
                    grace_emit(cx, j, &residual, outer, &host, l, r, &mut out, &mut out_mem)
                };
                crate::sql::spill::hash::grace_join(
                    &settings,
                    limit,
                    left,
                    right,
                    &mut crate::sql::spill::hash::JoinSides {
                        build_left,
                        left_outer: j.kind == JoinKind::Left,
                        right_outer: j.kind == JoinKind::Right,
                        key: &mut key,
                        emit: &mut emit,
                    },
                )?;
                return Ok(out.take());
            }
            let (build, probe) = if build_left { (&lk, &rk) } else { (&rk, &lk) };
            let mut table: HashMap<&[HKey], Vec<usize>, foldhash::fast::RandomState> =
                HashMap::with_capacity_and_hasher(build.len(), Default::default());
            for (i, k) in build.iter().enumerate() {
                if let Some(k) = k {
                    budget::tick()?;
                    mem.add(48)?;
                    table.entry(k.as_slice()).or_default().push(i);
                }
            }
            for (pi, k) in probe.iter().enumerate() {
                budget::tick()?;
                let Some(k) = k else { continue };
                if let Some(hits) = table.get(k.as_slice()) {
                    for &bi in hits {
                        let (li, ri) = if build_left { (bi, pi) } else { (pi, bi) };
                        emit(cx, li, ri)?;
                    }
                }
            }
        } else {
            let keyvals = |side: &[&CExpr], row: &[Value]| -> SqlResult<Vec<Value>> {
                side.iter()
                    .map(|e| {
                        e.eval(&EvalCtx {
                            row,
                            outer,
                            aggs: &[],
                            matches: &[],
                            funcs: &host,
                        })
                    })
                    .collect()
            };
            let lv: Vec<Vec<Value>> = left
                .iter()
                .map(|r| keyvals(&lexprs, r))
                .collect::<SqlResult<_>>()?;
            mem.add_rows(&lv)?;
            let rv: Vec<Vec<Value>> = right
                .iter()
                .map(|r| keyvals(&rexprs, r))
                .collect::<SqlResult<_>>()?;
            mem.add_rows(&rv)?;
            for (li, lvals) in lv.iter().enumerate() {
                for (ri, rvals) in rv.iter().enumerate() {
                    budget::tick()?;
                    let eq = lvals
                        .iter()
                        .zip(rvals)
                        .all(|(x, y)| expr::sql_cmp(x, y) == Some(std::cmp::Ordering::Equal));
                    if eq {
                        emit(cx, li, ri)?;
                    }
                }
            }
        }
    }
    finish_outer(
        j,
        &left,
        &right,
        &left_matched,
        &right_matched,
        out,
        out_mem,
    )
}

/// A join's output with an outer join's unmatched rows added, padded
/// with NULLs.
fn finish_outer(
    j: &Join,
    left: &[Vec<Value>],
    right: &[Vec<Value>],
    left_matched: &[bool],
    right_matched: &[bool],
    mut out: budget::Grave<Vec<Vec<Value>>>,
    mut out_mem: Reservation,
) -> SqlResult<Vec<Vec<Value>>> {
    let width = j.left_width + j.right_width;
    if j.kind == JoinKind::Left {
        for (li, l) in left.iter().enumerate() {
            if !left_matched[li] {
                let mut r = l.clone();
                r.resize(width, Value::Null);
                out_mem.add_row(&r)?;
                out.push(r);
            }
        }
    }
    if j.kind == JoinKind::Right {
        for (ri, r) in right.iter().enumerate() {
            if !right_matched[ri] {
                let mut row = vec![Value::Null; j.left_width];
                row.extend_from_slice(r);
                out_mem.add_row(&row)?;
                out.push(row);
            }
        }
    }
    Ok(out.take())
}

/// One side's join keys as integers (at most [`INT_KEY_PARTS`] parts,
/// the unused ones 0; `None` for a row with a NULL part), or `None` when a
/// key value is not an integer nor a number equal to one: SQL equality of
/// such keys is then integer equality (a DECIMAL or DOUBLE equal to an
/// integer has that integer's key form, [`expr::key_form`]).
fn int_keys(
    exprs: &[&CExpr],
    rows: &[Vec<Value>],
    outer: &[Value],
    host: &SessionHost<'_>,
    mem: &mut Reservation,
) -> SqlResult<Option<Vec<Option<IntKey>>>> {
    // Positions are u32s in the table ([`IntTable`]).
    if exprs.is_empty() || exprs.len() > INT_KEY_PARTS || rows.len() >= NO_ROW as usize {
        return Ok(None);
    }
    mem.add(rows.len() * std::mem::size_of::<Option<IntKey>>())?;
    let mut out = Vec::with_capacity(rows.len());
    for row in rows {
        budget::tick()?;
        let mut k: IntKey = [0; INT_KEY_PARTS];
        let mut null = false;
        for (p, e) in exprs.iter().enumerate() {
            let v = key_value(e, row, outer, host)?;
            let v = &*v;
            k[p] = match v {
                Value::Null => {
                    null = true;
                    break;
                }
                Value::Int(i) => *i,
                Value::Bool(b) => i64::from(*b),
                Value::Float(_) | Value::Decimal(_) => match expr::key_form(v) {
                    Value::Int(i) => i,
                    _ => return Ok(None),
                },
                _ => return Ok(None),
            };
        }
        out.push((!null).then_some(k));
    }
    Ok(Some(out))
}

/// A hash table over the build side's integer keys ([`int_keys`]): each
/// key's first row, and for each row the next row of its key, in build
/// order (no list per key).
struct IntTable {
    first: HashMap<IntKey, u32, foldhash::fast::RandomState>,
    next: Vec<u32>,
}

/// No next row.
const NO_ROW: u32 = u32::MAX;

/// Key parts an integer key holds ([`int_keys`]).
const INT_KEY_PARTS: usize = 4;

/// An integer join key, its unused parts 0.
type IntKey = [i64; INT_KEY_PARTS];

impl IntTable {
    fn new(keys: &[Option<IntKey>], mem: &mut Reservation) -> SqlResult<IntTable> {
        mem.add(keys.len() * (std::mem::size_of::<u32>() + 40))?;
        let mut first: HashMap<IntKey, u32, foldhash::fast::RandomState> =
            HashMap::with_capacity_and_hasher(keys.len(), Default::default());
        let mut next = vec![NO_ROW; keys.len()];
        // From the last row back, so that each key's chain runs in build
        // order (the order the rows are emitted in).
        for (i, k) in keys.iter().enumerate().rev() {
            let Some(k) = k else { continue };
            budget::tick()?;
            let i = i as u32;
            match first.entry(*k) {
                std::collections::hash_map::Entry::Occupied(mut e) => {
                    next[i as usize] = *e.get();
                    *e.get_mut() = i;
                }
                std::collections::hash_map::Entry::Vacant(e) => {
                    e.insert(i);
                }
            }
        }
        Ok(IntTable { first, next })
    }

    #[inline]
    fn first(&self, k: &IntKey) -> Option<usize> {
        self.first.get(k).map(|&i| i as usize)
    }

    #[inline]
    fn next(&self, i: usize) -> Option<usize> {
        match self.next[i] {
            NO_ROW => None,
            n => Some(n as usize),
        }
    }
}

/// A grace hash join's output (decision 027): `l ++ r` if the residual
/// condition holds (whether it did), or an outer side's unmatched row
/// padded with NULLs.
#[allow(clippy::too_many_arguments)]
fn grace_emit(
    cx: &mut Exec<'_, '_>,
    j: &Join,
    residual: &[Prepared<'_>],
    outer: &[Value],
    host: &SessionHost<'_>,
    l: Option<&[Value]>,
    r: Option<&[Value]>,
    out: &mut Vec<Vec<Value>>,
    out_mem: &mut Reservation,
) -> SqlResult<bool> {
    budget::tick()?;
    let width = j.left_width + j.right_width;
    let mut row = Vec::with_capacity(width);
    match l {
        Some(l) => row.extend_from_slice(l),
        None => row.resize(j.left_width, Value::Null),
    }
    match r {
        Some(r) => row.extend_from_slice(r),
        None => row.resize(width, Value::Null),
    }
    if l.is_some() && r.is_some() && !all_hold(cx, residual, outer, host, &row)? {
        return Ok(false);
    }
    out_mem.add_row(&row)?;
    out.push(row);
    Ok(true)
}
