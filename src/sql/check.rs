//! The index consistency checker (`CHECK INDEX idx ON t`): compares one
//! index — HNSW, full-text or B-tree, synchronous or ASYNC — with its table.
//!
//! Owns the definition of "the index equals the table": every live row
//! with a value is in the index (*missing* otherwise), an HNSW row is found
//! by a search for its own vector (*unreachable* otherwise), and nothing
//! else is in the index (*stale*). Rows changed between the index's view
//! and the snapshot (the fresh tail every search evaluates exactly) are
//! counted as *pending* and not judged. Never writes.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use crate::catalog::{IndexDef, IndexKind, TableDef};
use crate::error::{SqlError, SqlResult};
use crate::iscp::live::{to_f32, IndexData};
use crate::iscp::log::Stage;
use crate::sql::search::{all_rows, applied_up_to, job_row, tail_keys};
use crate::sql::Ctx;
use crate::types::{Column, ColumnKind, QueryResult, Value};

/// What the checker found for one index.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CheckReport {
    /// Rows of the table at the snapshot with an indexable value.
    pub rows: usize,
    /// Entries in the index.
    pub indexed: usize,
    pub missing: usize,
    pub unreachable: usize,
    pub stale: usize,
    pub pending: usize,
}

impl CheckReport {
    /// No difference between index and table.
    pub fn ok(&self) -> bool {
        self.missing == 0 && self.unreachable == 0 && self.stale == 0
    }
}

/// How long the checker waits for an ASYNC index to catch up with the
/// snapshot before judging (rows still behind are `pending`).
const CATCH_UP_WAIT: Duration = Duration::from_secs(30);

/// Check index `ix` of `t` (see the module docs).
pub fn check_index(cx: &mut Ctx<'_>, t: &TableDef, ix: &IndexDef) -> SqlResult<CheckReport> {
    if let IndexKind::BTree { unique } = ix.kind {
        return check_btree(cx, t, ix, unique);
    }
    let snapshot = cx.txn.start_ts();
    let row = if ix.is_async {
        wait_for_watermark(cx, t, ix, snapshot)?
    } else {
        job_row(cx, t, ix)?
            .ok_or_else(|| SqlError::internal(format!("index {} has no ISCP job", ix.name)))?
    };
    let live = if row.spec.is_sync_live() {
        cx.engine
            .iscp
            .sync_catch_up(&row.key, &row.spec, snapshot, true)?
    } else {
        cx.engine.iscp.live_for_search(&row)?
    };
    let rows = all_rows(cx.txn, t)?;
    let g = live.read();
    let (lo, hi) = g.view_range();
    let tail = tail_keys(
        cx.engine,
        t.id,
        lo.min(snapshot),
        hi.max(snapshot),
        usize::MAX,
    )?
    .unwrap_or_default();
    let mut rep = CheckReport {
        pending: tail.len(),
        ..Default::default()
    };
    let labels = &g.index.labels;
    // Every row of the snapshot (with or without an indexable value).
    let all_pks: HashSet<&[u8]> = rows.iter().map(|(k, _)| k.as_slice()).collect();
    match &g.index.data {
        IndexData::Hnsw(vx) => {
            rep.indexed = vx.len();
            let col = ix.columns.first().copied().unwrap_or(0);
            let vecs: Vec<(&[u8], Vec<f32>)> = rows
                .iter()
                .filter(|(k, _)| !tail.contains(k))
                .filter_map(|(k, r)| r.get(col).and_then(to_f32).map(|v| (k.as_slice(), v)))
                .collect();
            // The labels of the rows of each distinct vector: one search
            // per vector, asking for all its rows (a search must look past
            // every tie) plus a margin.
            let mut groups: HashMap<Vec<u32>, (&[f32], Vec<u64>)> = HashMap::new();
            for (pk, v) in &vecs {
                rep.rows += 1;
                let Some(&label) = labels.by_pk.get(*pk) else {
                    rep.missing += 1;
                    continue;
                };
                if !vx.contains(label) {
                    rep.missing += 1;
                    continue;
                }
                let bits = v
                    .iter()
                    .map(|x| if *x == 0.0 { 0 } else { x.to_bits() })
                    .collect();
                groups.entry(bits).or_insert((v, Vec::new())).1.push(label);
            }
            for (v, group) in groups.values() {
                let k = (group.len() + 16).min(vx.len().max(1));
                let hits = vx
                    .search_with_ef(v, k, k.max(64))
                    .map_err(|e| SqlError::internal(format!("vector search: {e}")))?;
                let found: HashSet<u64> = hits.iter().map(|(l, _)| *l).collect();
                rep.unreachable += group.iter().filter(|l| !found.contains(l)).count();
            }
            // A live row whose vector is NULL must not be in the graph;
            // beyond that, any surplus vector is one no row owns.
            let with_vec: HashSet<&[u8]> = vecs.iter().map(|(k, _)| *k).collect();
            for (pk, &label) in &labels.by_pk {
                if all_pks.contains(pk.as_slice())
                    && !with_vec.contains(pk.as_slice())
                    && !tail.contains(pk)
                    && vx.contains(label)
                {
                    rep.stale += 1;
                }
            }
            let expected = rep.rows - rep.missing + tail.len();
            rep.stale += vx.len().saturating_sub(expected);
        }
        IndexData::FullText(fx) => {
            rep.indexed = fx.len();
            for (pk, r) in rows.iter().filter(|(k, _)| !tail.contains(k)) {
                let has_text = ix
                    .columns
                    .iter()
                    .any(|&c| !matches!(r.get(c), Some(Value::Null) | None));
                if !has_text {
                    continue;
                }
                rep.rows += 1;
                if !labels.by_pk.contains_key(pk) {
                    rep.missing += 1;
                }
            }
        }
    }
    // An entry for a row the snapshot does not have (a lost delete).
    for pk in labels.by_pk.keys() {
        if !all_pks.contains(pk.as_slice()) && !tail.contains(pk) {
            rep.stale += 1;
        }
    }
    Ok(rep)
}

/// Wait (bounded) until an ASYNC job's watermark reaches `ts`; returns the
/// job row last read.
fn wait_for_watermark(
    cx: &mut Ctx<'_>,
    t: &TableDef,
    ix: &IndexDef,
    ts: u64,
) -> SqlResult<crate::iscp::JobRow> {
    let mut row = job_row(cx, t, ix)?
        .ok_or_else(|| SqlError::internal(format!("index {} has no ISCP job", ix.name)))?;
    let deadline = Instant::now() + CATCH_UP_WAIT;
    while !applied_up_to(cx.engine, &row, ts)? && Instant::now() < deadline {
        cx.engine.iscp.wake();
        std::thread::park_timeout(crate::iscp::JOB_POLL);
        row = job_row(cx, t, ix)?.ok_or_else(|| SqlError::internal("index job vanished"))?;
    }
    if row.status.stage == Stage::Init {
        return Err(SqlError::new(
            crate::error::code::LOCK_WAIT_TIMEOUT,
            format!("index {} is still building; try again", ix.name),
        ));
    }
    Ok(row)
}

/// A B-tree index: its entry table against the rows. A synchronous index
/// is compared at the statement's snapshot (its entries are written by the
/// rows' own transactions); an ASYNC one at a fresh snapshot taken after
/// its watermark caught up, rows changed after that watermark pending.
fn check_btree(
    cx: &mut Ctx<'_>,
    t: &TableDef,
    ix: &IndexDef,
    unique: bool,
) -> SqlResult<CheckReport> {
    let mut own = None;
    let mut tail = HashSet::new();
    let unique = if ix.is_async {
        let row = wait_for_watermark(cx, t, ix, cx.txn.start_ts())?;
        let txn = cx.engine.storage.begin(Default::default())?;
        let snap = txn.start_ts();
        tail = tail_keys(cx.engine, t.id, row.watermark.min(snap), snap, usize::MAX)?
            .unwrap_or_default();
        own = Some(txn);
        // ISCP writes every entry with the primary key appended.
        false
    } else {
        unique
    };
    let r = {
        let txn: &mut dyn tributary_storage::Transaction = match own.as_mut() {
            Some(t) => t.as_mut(),
            None => &mut *cx.txn,
        };
        compare_btree(txn, t, ix, unique, &tail)
    };
    if let Some(t) = own {
        t.rollback();
    }
    r
}

fn compare_btree(
    txn: &mut dyn tributary_storage::Transaction,
    t: &TableDef,
    ix: &IndexDef,
    unique: bool,
    tail: &HashSet<Vec<u8>>,
) -> SqlResult<CheckReport> {
    use std::ops::Bound;
    let rows = all_rows(txn, t)?;
    let colls = t.key_collations(&ix.columns);
    let entries: HashMap<Vec<u8>, Vec<u8>> = txn
        .scan(
            ix.storage_id,
            Bound::Unbounded,
            Bound::Unbounded,
            usize::MAX,
        )?
        .into_iter()
        .collect();
    let mut rep = CheckReport {
        indexed: entries.len(),
        pending: tail.len(),
        ..Default::default()
    };
    let mut expected = HashSet::new();
    for (pk, r) in &rows {
        if tail.contains(pk) {
            continue;
        }
        rep.rows += 1;
        let vals: Vec<Value> = ix
            .columns
            .iter()
            .map(|&c| r.get(c).cloned().unwrap_or(Value::Null))
            .collect();
        let key = crate::catalog::codec::btree_entry_key(&vals, &colls, pk, unique);
        if entries.get(&key) != Some(pk) {
            rep.missing += 1;
        }
        expected.insert(key);
    }
    for (k, pk) in &entries {
        if !expected.contains(k) && !tail.contains(pk) {
            rep.stale += 1;
        }
    }
    Ok(rep)
}

/// `CHECK INDEX` as a result set (one row).
pub fn report_result(t: &TableDef, ix: &IndexDef, rep: &CheckReport) -> QueryResult {
    let cols = [
        "Table",
        "Index",
        "Rows",
        "Indexed",
        "Missing",
        "Unreachable",
        "Stale",
        "Pending",
        "Status",
    ];
    let n = |v: usize| Value::Int(v as i64);
    QueryResult {
        columns: cols
            .iter()
            .enumerate()
            .map(|(i, c)| Column {
                name: (*c).into(),
                kind: if (2..8).contains(&i) {
                    ColumnKind::Int
                } else {
                    ColumnKind::Text
                },
            })
            .collect(),
        rows: vec![vec![
            Value::Text(t.qualified()),
            Value::Text(ix.name.clone()),
            n(rep.rows),
            n(rep.indexed),
            n(rep.missing),
            n(rep.unreachable),
            n(rep.stale),
            n(rep.pending),
            Value::Text(if rep.ok() { "OK" } else { "MISMATCH" }.into()),
        ]],
        ..Default::default()
    }
}
