//! The index consistency checker (`CHECK INDEX idx ON t`): compares one
//! HNSW or full-text index with its table at the statement's snapshot.
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
use crate::iscp::log::STAGE_INIT;
use crate::iscp::search::{all_rows, job_row, tail_keys};
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
    if matches!(ix.kind, IndexKind::BTree { .. }) {
        return Err(SqlError::unsupported(
            "CHECK INDEX on a B-tree index (its entries are written by the row's own transaction)",
        ));
    }
    let snapshot = cx.txn.start_ts();
    let mut row = job_row(cx, t, ix)?
        .ok_or_else(|| SqlError::internal(format!("index {} has no ISCP job", ix.name)))?;
    if !row.spec.is_sync_live() {
        let deadline = Instant::now() + CATCH_UP_WAIT;
        while (row.status.stage == STAGE_INIT || row.watermark < snapshot)
            && Instant::now() < deadline
        {
            cx.engine.iscp.wake();
            std::thread::park_timeout(Duration::from_millis(10));
            row = job_row(cx, t, ix)?.ok_or_else(|| SqlError::internal("index job vanished"))?;
        }
        if row.status.stage == STAGE_INIT {
            return Err(SqlError::new(
                crate::error::code::LOCK_WAIT_TIMEOUT,
                format!("index {} is still building; try again", ix.name),
            ));
        }
    }
    let live = if row.spec.is_sync_live() {
        cx.engine
            .iscp
            .sync_catch_up(&row.key, &row.spec, snapshot, true)?
    } else {
        cx.engine.iscp.live_for_search(&row)?
    };
    let rows = all_rows(cx.txn, t)?;
    let g = live.read();
    let view = g.view_ts();
    let tail = tail_keys(
        cx.engine,
        t.id,
        view.min(snapshot),
        view.max(snapshot),
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
            // Rows per identical vector: a search must look past all ties.
            let mut dup: HashMap<Vec<u32>, usize> = HashMap::new();
            let col = ix.columns.first().copied().unwrap_or(0);
            let vecs: Vec<(&[u8], Vec<f32>)> = rows
                .iter()
                .filter(|(k, _)| !tail.contains(k))
                .filter_map(|(k, r)| r.get(col).and_then(to_f32).map(|v| (k.as_slice(), v)))
                .collect();
            for (_, v) in &vecs {
                *dup.entry(v.iter().map(|x| x.to_bits()).collect())
                    .or_default() += 1;
            }
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
                let ties = dup
                    .get(&v.iter().map(|x| x.to_bits()).collect::<Vec<_>>())
                    .copied()
                    .unwrap_or(1);
                let k = (ties + 16).min(vx.len().max(1));
                let hits = vx
                    .search_with_ef(v, k, k.max(64))
                    .map_err(|e| SqlError::internal(format!("vector search: {e}")))?;
                if !hits.iter().any(|(l, _)| *l == label) {
                    rep.unreachable += 1;
                }
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
