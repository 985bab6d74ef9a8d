//! Index-assisted queries: HNSW for `ORDER BY <distance>(col, literal)
//! LIMIT k`, full-text for `MATCH … AGAINST`, **fresh by default**.
//!
//! Strategy:
//! * The index's in-memory copy reflects the changes up to its view `V`.
//!   Rows changed between `V` and the query's snapshot `S` — the
//!   not-yet-applied tail when `V < S`, or changes the query must not see
//!   yet when `V > S` (at most `fresh_tail_cap` keys) — are excluded from
//!   the index answer and evaluated exactly from the query's snapshot, then
//!   merged. So a query sees every committed write even while the consumer
//!   is stalled, and none from after its snapshot.
//! * A synchronous (non-ASYNC) index first catches this CN's copy up with
//!   its entries up to `S` (publishing staged full-text documents), so its
//!   tail is empty unless another writer moved the copy past `S`.
//! * With WHERE filters the index is over-fetched (`max(20·k, 200)`
//!   candidates), candidates are re-read at the query's snapshot and the
//!   whole WHERE plus the exact distance are re-evaluated by the executor;
//!   a very selective filter can therefore return fewer than k rows.
//! * While a job is still in its initial build, or the tail exceeds the cap,
//!   the query falls back to an exact scan (correct, slower).
//! * MATCH scores are BM25 on one scale whatever answers them: tail rows are
//!   scored by the index against its statistics plus theirs (as they will
//!   score once applied), an exact scan with the table's rows as the corpus.
//! * `SET fast_search = 1` skips the tail (index answer only);
//!   `SET iscp_wait_fresh = 1` waits (bounded by `drop_wait`) for the index
//!   to reach the snapshot instead.
//!
//! Never writes.

use std::collections::{HashMap, HashSet};
use std::ops::Bound;
use std::time::Instant;

use tributary_index::MatchMode;
use tributary_storage::Transaction;

use crate::catalog::codec::decode_row;
use crate::catalog::{IndexDef, IndexKind, TableDef};
use crate::error::{code, SqlError, SqlResult};
use crate::iscp::log::{JobRow, Stage};
use crate::iscp::JobKey;
use crate::sql::expr::{eval_const, vector_arg, CExpr, FunctionHost, MatchSpec};
use crate::sql::{Ctx, Engine, SessionState};
use crate::types::Value;

/// Most hits one full-text search returns; a query matching more rows is
/// answered by exact evaluation.
const FULLTEXT_HIT_CAP: usize = 100_000;

/// A filtered vector search tests at most 1/this of the index's rows
/// (and at least [`FILTER_WALK_MIN`]) before it answers exactly instead.
const FILTER_WALK_SHARE: usize = 8;
const FILTER_WALK_MIN: usize = 1024;

/// The beam of a filtered HNSW walk is at least this many times k.
const FILTERED_BEAM_PER_K: usize = 4;

/// The HNSW beam is at least this many times k (see `fetch_candidates`).
pub const SEARCH_BEAM_PER_K: usize = 20;

/// A chosen index path.
#[derive(Debug, Clone)]
pub enum IndexPath {
    Vector {
        index: IndexDef,
        query: Vec<f32>,
        k: usize,
        overfetch: usize,
        fast: bool,
        wait: bool,
        /// The session's `hnsw_ef_search` (0: the default beam).
        ef_search: usize,
    },
    FullText {
        index: IndexDef,
        slot: usize,
        fast: bool,
    },
}

impl IndexPath {
    /// EXPLAIN line.
    pub fn describe(&self, t: &TableDef) -> String {
        match self {
            IndexPath::Vector { index, k, fast, .. } => format!(
                "Vector Index Search on {} using {} (hnsw, k={k}, {}; exact if fewer than k pass)",
                t.qualified(),
                index.name,
                freshness(index, *fast)
            ),
            IndexPath::FullText { index, fast, .. } => format!(
                "Full-Text Search on {} using {} ({})",
                t.qualified(),
                index.name,
                freshness(index, *fast)
            ),
        }
    }
}

/// How an index path sees recent writes (EXPLAIN).
fn freshness(index: &IndexDef, fast: bool) -> &'static str {
    if !index.is_async {
        "synchronous"
    } else if fast {
        "index only"
    } else {
        "fresh tail merged"
    }
}

fn metric_fn(op_type: &str) -> Option<(&'static str, bool)> {
    match op_type {
        "vector_l2_ops" => Some(("l2_distance", false)),
        "vector_cosine_ops" => Some(("cosine_distance", false)),
        // inner_product is MatrixOne's negated dot product: ascending.
        "vector_ip_ops" => Some(("inner_product", false)),
        _ => None,
    }
}

/// Whether ASYNC job `row` has applied every change of its table up to
/// `ts`: past its initial build, and no change of the table in
/// `(watermark, ts]`. Not `watermark >= ts` alone: a watermark follows its
/// own table's changes, while other commits (other tables, the job rows,
/// bases) move `ts` on, so an idle table's job would never get there.
pub fn applied_up_to(engine: &Engine, row: &JobRow, ts: u64) -> SqlResult<bool> {
    if row.status.stage == Stage::Init {
        return Ok(false);
    }
    Ok(row.watermark >= ts
        || crate::iscp::log::newest_change_ts(
            engine.storage.as_ref(),
            row.key.table_id,
            row.watermark,
            ts,
        )? == row.watermark)
}

/// Choose a vector or full-text index path, if one applies.
#[allow(clippy::too_many_arguments)]
pub fn choose_index_path(
    _engine: &Engine,
    st: &SessionState,
    t: &TableDef,
    order_by: &[(CExpr, bool)],
    limit: Option<usize>,
    matches: &[MatchSpec],
    filter: Option<&CExpr>,
    host: &dyn FunctionHost,
) -> SqlResult<Option<IndexPath>> {
    let fast = st.var_bool("fast_search");
    let wait = st.var_bool("iscp_wait_fresh");
    if let ([(CExpr::Func(name, args), desc)], Some(k)) = (order_by, limit) {
        if let [CExpr::Col(c), q] = args.as_slice() {
            if q.is_constant() {
                for ix in &t.indexes {
                    let IndexKind::Hnsw { op_type, .. } = &ix.kind else {
                        continue;
                    };
                    if ix.columns.first() != Some(c) {
                        continue;
                    }
                    if metric_fn(op_type) != Some((name.as_str(), *desc)) {
                        continue;
                    }
                    let v = eval_const(q, host)?;
                    let Some(qv) = vector_arg(&v, name)? else {
                        return Ok(None);
                    };
                    let dim = t.columns[*c].ty.vector_dim().unwrap_or(0) as usize;
                    if qv.len() != dim {
                        return Err(SqlError::new(
                            code::INCORRECT_VALUE,
                            format!(
                                "{name}: query vector has {} dimensions, column has {dim}",
                                qv.len()
                            ),
                        ));
                    }
                    // A filter is applied after the search: fetch more. If
                    // fewer than k rows still pass, the executor re-runs
                    // the query exactly (`select::run`), so this only
                    // sizes the fast path.
                    let overfetch = if filter.is_some() {
                        k.saturating_mul(20).max(200)
                    } else {
                        k
                    };
                    return Ok(Some(IndexPath::Vector {
                        index: ix.clone(),
                        query: qv.iter().map(|x| *x as f32).collect(),
                        k,
                        overfetch,
                        fast,
                        wait,
                        ef_search: usize::try_from(st.var_u64("hnsw_ef_search"))
                            .unwrap_or(usize::MAX),
                    }));
                }
            }
        }
    }
    if let Some(f) = filter {
        for term in f.conjuncts() {
            let slot = match term {
                CExpr::Match(s) => Some(*s),
                CExpr::Bin(_, a, b) => match (a.as_ref(), b.as_ref()) {
                    (CExpr::Match(s), o) | (o, CExpr::Match(s)) if o.is_constant() => Some(*s),
                    _ => None,
                },
                _ => None,
            };
            let Some(slot) = slot else { continue };
            // The index yields only matching rows (score > 0): usable only
            // when the term is not true for a row that does not match
            // (`MATCH(..) = 0` must see every row).
            let zeros = vec![Value::Float(0.0); matches.len()];
            let at_zero = term.eval(&crate::sql::expr::EvalCtx {
                row: &[],
                outer: &[],
                aggs: &[],
                matches: &zeros,
                funcs: host,
            })?;
            if crate::sql::expr::truth(&at_zero) == Some(true) {
                continue;
            }
            let Some(spec) = matches.get(slot) else {
                continue;
            };
            for ix in &t.indexes {
                if matches!(ix.kind, IndexKind::FullText { .. })
                    && same_cols(&ix.columns, &spec.columns)
                {
                    return Ok(Some(IndexPath::FullText {
                        index: ix.clone(),
                        slot,
                        fast,
                    }));
                }
            }
        }
    }
    Ok(None)
}

/// MySQL's rule: `MATCH (cols)` needs a FULLTEXT index on exactly those
/// columns (error 1191 otherwise) — never a silent score of 0.
pub fn require_fulltext_indexes(t: &TableDef, matches: &[MatchSpec]) -> SqlResult<()> {
    for spec in matches {
        let found = t.indexes.iter().any(|ix| {
            matches!(ix.kind, IndexKind::FullText { .. }) && same_cols(&ix.columns, &spec.columns)
        });
        if !found {
            return Err(SqlError::new(
                crate::error::code::FT_MATCHING_KEY_NOT_FOUND,
                "Can't find FULLTEXT index matching the column list",
            ));
        }
    }
    Ok(())
}

fn same_cols(a: &[usize], b: &[usize]) -> bool {
    let (mut x, mut y) = (a.to_vec(), b.to_vec());
    x.sort();
    y.sort();
    x == y
}

pub(crate) fn job_row(cx: &mut Ctx<'_>, t: &TableDef, ix: &IndexDef) -> SqlResult<Option<JobRow>> {
    let Some(key) = JobKey::of(t, ix) else {
        return Ok(None);
    };
    // Read the job row fresh (not at the query snapshot): the index cache
    // reflects the latest durable state.
    cx.engine.iscp.read_job(&key)
}

/// Keys changed in `(after, upto]`, or `None` if more than `cap`.
pub(crate) fn tail_keys(
    engine: &Engine,
    table: u64,
    after: u64,
    upto: u64,
    cap: usize,
) -> SqlResult<Option<HashSet<Vec<u8>>>> {
    let mut keys = HashSet::new();
    if upto <= after {
        return Ok(Some(keys));
    }
    let mut resume = None;
    loop {
        let b = engine.storage.changes(table, after, upto, resume, 4096)?;
        for c in b.changes {
            keys.insert(c.key);
            if keys.len() > cap {
                return Ok(None);
            }
        }
        match b.resume {
            Some(r) => resume = Some(r),
            None => return Ok(Some(keys)),
        }
    }
}

pub(crate) fn all_rows(
    txn: &mut dyn Transaction,
    t: &TableDef,
) -> SqlResult<Vec<(Vec<u8>, Vec<Value>)>> {
    let rows = txn.scan(t.id, Bound::Unbounded, Bound::Unbounded, usize::MAX)?;
    rows.into_iter()
        .map(|(k, v)| {
            decode_row(&v)
                .map(|r| (k, r))
                .map_err(|e| SqlError::internal(e.to_string()))
        })
        .collect()
}

fn get_row(txn: &mut dyn Transaction, t: &TableDef, k: &[u8]) -> SqlResult<Option<Vec<Value>>> {
    match txn.get(t.id, k, false)? {
        None => Ok(None),
        Some(v) => decode_row(&v)
            .map(Some)
            .map_err(|e| SqlError::internal(e.to_string())),
    }
}

fn texts_of(row: &[Value], cols: &[usize]) -> Vec<Option<String>> {
    cols.iter()
        .map(|&c| match row.get(c) {
            Some(Value::Null) | None => None,
            Some(Value::Text(s)) => Some(s.clone()),
            Some(o) => Some(o.to_string()),
        })
        .collect()
}

/// The full-text index on `spec`'s columns: its columns in index order (a
/// row's fields are given to tantivy in this order) and its analyzer; the
/// MATCH's own columns and the default analyzer if there is none.
fn fulltext_layout<'a>(
    t: &'a TableDef,
    spec: &'a MatchSpec,
) -> (&'a [usize], tributary_index::Parser) {
    fulltext_index(t, spec)
        .and_then(|ix| match &ix.kind {
            IndexKind::FullText { parser } => tributary_index::Parser::from_name(parser)
                .ok()
                .map(|p| (ix.columns.as_slice(), p)),
            _ => None,
        })
        .unwrap_or((&spec.columns, tributary_index::Parser::Default))
}

/// The full-text index on exactly `spec`'s columns (in any order).
fn fulltext_index<'a>(t: &'a TableDef, spec: &MatchSpec) -> Option<&'a IndexDef> {
    t.indexes.iter().find(|ix| {
        matches!(ix.kind, IndexKind::FullText { .. }) && same_cols(&ix.columns, &spec.columns)
    })
}

/// Each row's texts of columns `cols` (a MATCH's, in its index's order:
/// [`fulltext_layout`]); see [`as_docs`].
fn match_texts<'r>(
    cols: &[usize],
    rows: impl Iterator<Item = &'r [Value]>,
) -> Vec<Vec<Option<String>>> {
    rows.map(|r| texts_of(r, cols)).collect()
}

/// [`match_texts`] as full-text documents keyed by their position.
fn as_docs(texts: &[Vec<Option<String>>]) -> Vec<(u64, Vec<Option<&str>>)> {
    texts
        .iter()
        .enumerate()
        .map(|(i, f)| (i as u64, f.iter().map(|x| x.as_deref()).collect()))
        .collect()
}

fn match_mode(spec: &MatchSpec) -> MatchMode {
    if spec.boolean {
        MatchMode::Boolean
    } else {
        MatchMode::Natural
    }
}

fn fulltext_error(e: tributary_index::IndexError) -> SqlError {
    SqlError::new(code::WRONG_ARGUMENTS, format!("full-text query: {e}"))
}

/// BM25 scores of the rows (`(row, values)` pairs, scored by position) for
/// one MATCH: against the statistics of `index` (a full-text index's view)
/// plus these rows when given, else with these rows as the whole corpus.
/// Rows that do not match are absent. Every MATCH score is computed here or
/// by the index itself, so all of one statement's scores share one scale.
fn score_rows<'r>(
    t: &TableDef,
    spec: &MatchSpec,
    rows: impl Iterator<Item = &'r [Value]>,
    index: Option<&tributary_index::FullTextIndex>,
) -> SqlResult<HashMap<usize, f64>> {
    let (cols, parser) = fulltext_layout(t, spec);
    let texts = match_texts(cols, rows);
    let docs = as_docs(&texts);
    let mode = match_mode(spec);
    let scored = match index {
        Some(fx) => fx
            .search_with_extra(&spec.query, mode, 0, &docs)
            .map(|h| h.extra),
        None => tributary_index::score_documents(parser, cols.len(), &docs, &spec.query, mode),
    }
    .map_err(fulltext_error)?;
    Ok(scored
        .into_iter()
        .map(|(i, s)| (i as usize, f64::from(s)))
        .collect())
}

/// Exact MATCH scores of every row (no usable full-text index): one map
/// per MATCH slot, key → BM25 score with the table's rows at the
/// statement's snapshot as the corpus; rows absent from a map do not match.
pub fn exact_match_scores(
    txn: &mut dyn Transaction,
    t: &TableDef,
    matches: &[MatchSpec],
) -> SqlResult<Vec<HashMap<Vec<u8>, f64>>> {
    // The statement's own snapshot (its transaction's writes included).
    let rows = all_rows(txn, t)?;
    let mut out = Vec::new();
    for spec in matches {
        let scores = score_rows(t, spec, rows.iter().map(|(_, r)| r.as_slice()), None)?;
        out.push(
            scores
                .into_iter()
                .filter_map(|(i, s)| rows.get(i).map(|(k, _)| (k.clone(), s)))
                .collect(),
        );
    }
    Ok(out)
}

/// A WHERE clause as a predicate on a table row, for a filtered vector
/// search: `needed` says which columns to decode for `keep`.
pub struct RowFilter<'a> {
    pub needed: Option<&'a [bool]>,
    pub keep: &'a mut dyn FnMut(&[Value]) -> SqlResult<bool>,
}

/// The state a filtered vector search's predicate carries across usearch's
/// callbacks (which are `Fn`): the transaction that reads each candidate
/// row, the filter, and the first error, which ends the query.
struct FilterState<'a, 'f> {
    txn: &'a mut dyn Transaction,
    filter: RowFilter<'f>,
    error: Option<SqlError>,
    visits: usize,
    /// Rows the walk may test before it gives up (every later candidate
    /// is rejected unread, which ends the walk after one cheap pass over
    /// the graph) and the query is answered exactly instead: a filter
    /// that rejects nearly everything costs a walk as much as a scan.
    budget: usize,
}

impl FilterState<'_, '_> {
    /// Whether the row under `pk` exists at the snapshot and passes.
    fn accepts(&mut self, t: &TableDef, pk: &[u8]) -> bool {
        if self.error.is_some() || self.visits >= self.budget {
            return false;
        }
        self.visits += 1;
        let r = (|| -> SqlResult<bool> {
            // A filter may reject most of the graph: stay killable.
            if self.visits.is_multiple_of(1024) {
                self.txn.check_interrupt()?;
            }
            match self.txn.get(t.id, pk, false)? {
                None => Ok(false),
                Some(v) => {
                    let row = crate::catalog::codec::decode_row_masked(&v, self.filter.needed)
                        .map_err(|e| SqlError::internal(e.to_string()))?;
                    (self.filter.keep)(&row)
                }
            }
        })();
        r.unwrap_or_else(|e| {
            self.error = Some(e);
            false
        })
    }
}

/// Candidate rows (with MATCH scores per slot) for an index path.
/// `hit_needed` says which columns of an index hit the query reads (the
/// others are not decoded; with none, and fresh search, a hit's row is not
/// even read: the index view plus the tail say it exists at the snapshot).
/// With `filter`, a vector search returns only rows that pass it (the
/// graph walk skips the others), so a filter costs a wider walk, not
/// missing neighbours.
pub fn fetch_candidates(
    cx: &mut Ctx<'_>,
    t: &TableDef,
    ip: &IndexPath,
    matches: &[MatchSpec],
    hit_needed: Option<&[bool]>,
    top: Option<usize>,
    filter: Option<RowFilter<'_>>,
) -> SqlResult<Vec<(Vec<Value>, Vec<Value>)>> {
    let snapshot = cx.txn.start_ts();
    let (ix, fast, wait) = match ip {
        IndexPath::Vector {
            index, fast, wait, ..
        } => (index, *fast, *wait),
        IndexPath::FullText { index, fast, .. } => (index, *fast, false),
    };
    let mut row = job_row(cx, t, ix)?;
    // A synchronous index is always current: nothing to wait for.
    if wait && !row.as_ref().is_some_and(|r| r.spec.is_sync_live()) {
        let deadline = Instant::now() + cx.engine.config.drop_wait;
        while let Some(r) = &row {
            if applied_up_to(cx.engine, r, snapshot)? || Instant::now() >= deadline {
                break;
            }
            cx.txn.check_interrupt()?;
            cx.engine.iscp.wake();
            std::thread::park_timeout(crate::iscp::JOB_POLL);
            row = job_row(cx, t, ix)?;
        }
    }
    let exact = |cx: &mut Ctx<'_>| -> SqlResult<Vec<(Vec<Value>, Vec<Value>)>> {
        let rows = all_rows(cx.txn, t)?;
        let scores = if matches.is_empty() {
            Vec::new()
        } else {
            exact_match_scores(cx.txn, t, matches)?
        };
        Ok(rows
            .into_iter()
            .filter(|(k, _)| scores.is_empty() || scores.iter().any(|m| m.contains_key(k)))
            .map(|(k, r)| {
                let m = scores
                    .iter()
                    .map(|s| {
                        s.get(&k)
                            .map(|x| Value::Float(*x))
                            .unwrap_or(Value::Float(0.0))
                    })
                    .collect();
                (r, m)
            })
            .collect())
    };
    let Some(row) = row else { return exact(cx) };
    let Some(live) = live_for_query(cx, &row)? else {
        return exact(cx);
    };
    let g = live.read();
    let (lo, hi) = g.view_range();
    // The tail: keys changed between the index view and the snapshot, in
    // either direction — not yet applied (view < snapshot), or applied
    // after the query's snapshot (view > snapshot: the index may hold a
    // newer value than the query may see). Both are evaluated exactly.
    let tail = if fast {
        HashSet::new()
    } else {
        match tail_keys(
            cx.engine,
            t.id,
            lo.min(snapshot),
            hi.max(snapshot),
            cx.engine.config.fresh_tail_cap,
        )? {
            Some(k) => k,
            None => {
                drop(g);
                return exact(cx);
            }
        }
    };
    // MATCH slots the index does not answer are scored on the row
    // (`other_scores`), so their columns must be read.
    let index_slot = match ip {
        IndexPath::FullText { slot, .. } => Some(*slot),
        IndexPath::Vector { .. } => None,
    };
    let need: Option<Vec<bool>> = hit_needed.map(|n| {
        let mut n = n.to_vec();
        for (i, m) in matches.iter().enumerate() {
            if Some(i) != index_slot {
                for &c in &m.columns {
                    if let Some(x) = n.get_mut(c) {
                        *x = true;
                    }
                }
            }
        }
        n
    });
    // An index hit outside the tail exists at the snapshot with the
    // indexed values (fresh search only: `fast_search` has no tail, so its
    // hits are read to drop rows deleted since the index view). When the
    // query reads nothing of it but its primary key, the key says all.
    // (With nothing needed at all — `COUNT(*)` — not even the key is
    // decoded.)
    // A key holding a weight string (text under a non-binary collation)
    // does not hold the text: the row is read.
    let key_only = !fast
        && t.pk_decodable()
        && need
            .as_ref()
            .is_some_and(|n| n.iter().enumerate().all(|(i, &x)| !x || t.pk.contains(&i)));
    let decode_key = key_only && need.as_ref().is_some_and(|n| n.contains(&true));
    let key_types: Vec<&crate::types::DataType> = t.pk.iter().map(|&c| &t.columns[c].ty).collect();
    let width = t.columns.len();
    let hit_row = |cx: &mut Ctx<'_>, pk: &[u8]| -> SqlResult<Option<Vec<Value>>> {
        let corrupt = |e: crate::catalog::codec::CodecError| SqlError::internal(e.to_string());
        if key_only {
            let mut row = vec![Value::Null; width];
            if decode_key {
                let vals = crate::catalog::codec::decode_key(pk, &key_types).map_err(corrupt)?;
                for (&c, v) in t.pk.iter().zip(vals) {
                    row[c] = v;
                }
            }
            return Ok(Some(row));
        }
        match cx.txn.get(t.id, pk, false)? {
            None => Ok(None),
            Some(v) => crate::catalog::codec::decode_row_masked(&v, need.as_deref())
                .map(Some)
                .map_err(corrupt),
        }
    };
    let mut out = Vec::new();
    match (ip, &g.index.data) {
        (
            IndexPath::Vector {
                query,
                overfetch,
                k,
                ef_search,
                ..
            },
            crate::iscp::live::IndexData::Hnsw(vx),
        ) => {
            let want = overfetch + tail.len();
            // A beam of at least SEARCH_BEAM_PER_K·k: HNSW recall on hard
            // (uniform, high-dimensional) data needs a wider beam than the
            // index's EF_SEARCH; candidates are re-ranked exactly anyway.
            // Both bounded by the index size: a huge LIMIT must never
            // reach the library as a capacity request.
            let size = vx.len().max(1);
            let want = want.min(size);
            // `SET hnsw_ef_search = n` replaces the default beam (recall
            // for speed); the index's own EF_SEARCH stays the floor.
            let beam = if *ef_search > 0 {
                *ef_search
            } else {
                k.saturating_mul(SEARCH_BEAM_PER_K)
            };
            let ef = want.max(beam).min(size.max(64));
            let labels = &g.index.labels.by_label;
            let mut searched = vx.try_search_with_ef(query, want, ef);
            // A WHERE filter: the over-fetched neighbours usually hold k
            // passing rows. When they do not (a selective filter), walk the
            // graph again keeping only passing rows, with a beam of
            // FILTERED_BEAM_PER_K·k passing rows (it reads about beam /
            // selectivity rows), instead of scanning the table.
            if let (Some(filter), Ok(Some(hits))) = (filter, &searched) {
                let state = std::cell::RefCell::new(FilterState {
                    txn: &mut *cx.txn,
                    filter,
                    error: None,
                    visits: 0,
                    budget: usize::MAX,
                });
                let keep = |label: u64| {
                    labels
                        .get(&label)
                        .is_some_and(|pk| !tail.contains(pk) && state.borrow_mut().accepts(t, pk))
                };
                let passing = hits.iter().filter(|(label, _)| keep(*label)).count();
                if passing < *k {
                    {
                        let mut st = state.borrow_mut();
                        st.visits = 0;
                        st.budget = (size / FILTER_WALK_SHARE).max(FILTER_WALK_MIN);
                    }
                    let beam = if *ef_search > 0 {
                        *ef_search
                    } else {
                        k.saturating_mul(FILTERED_BEAM_PER_K)
                    };
                    searched = vx.try_search_filtered(query, *k, beam.min(size.max(64)), &keep);
                }
                let FilterState {
                    error,
                    visits,
                    budget,
                    ..
                } = state.into_inner();
                if let Some(e) = error {
                    return Err(e);
                }
                if visits >= budget {
                    drop(g);
                    return exact(cx);
                }
            }
            let Some(hits) =
                searched.map_err(|e| SqlError::internal(format!("vector search: {e}")))?
            else {
                // Every search slot stayed busy: evaluate exactly rather
                // than queue longer.
                drop(g);
                return exact(cx);
            };
            let pks: Vec<Vec<u8>> = hits
                .iter()
                .filter_map(|(label, _)| labels.get(label).cloned())
                .filter(|pk| !tail.contains(pk))
                .collect();
            drop(g);
            for pk in &pks {
                if let Some(r) = hit_row(cx, pk)? {
                    out.push((r, Vec::new()));
                }
            }
            for pk in &tail {
                if let Some(r) = get_row(cx.txn, t, pk)? {
                    out.push((r, Vec::new()));
                }
            }
        }
        (IndexPath::FullText { slot, .. }, crate::iscp::live::IndexData::FullText(fx)) => {
            let Some(spec) = matches.get(*slot) else {
                return Err(SqlError::internal("MATCH slot out of range"));
            };
            // With ORDER BY this score DESC LIMIT k and nothing else to
            // filter, the best k hits outside the tail are all that can be
            // returned: ask the collector for k + |tail|.
            let cap = top.map_or(FULLTEXT_HIT_CAP, |k| {
                k.saturating_add(tail.len()).min(FULLTEXT_HIT_CAP)
            });
            // The tail's rows at the snapshot are scored with the index's
            // hits, against one set of statistics (the view's plus theirs).
            let mut tail_rows = Vec::new();
            for pk in &tail {
                if let Some(r) = get_row(cx.txn, t, pk)? {
                    tail_rows.push(r);
                }
            }
            let (cols, _) = fulltext_layout(t, spec);
            let texts = match_texts(cols, tail_rows.iter().map(|r| r.as_slice()));
            let extra = as_docs(&texts);
            let found = fx
                .search_with_extra(&spec.query, match_mode(spec), cap, &extra)
                .map_err(fulltext_error)?;
            if found.hits.len() >= FULLTEXT_HIT_CAP {
                // More matches than one search returns: never truncate an
                // answer, evaluate exactly instead.
                drop(g);
                return exact(cx);
            }
            let scored: Vec<(Vec<u8>, f64)> = found
                .hits
                .iter()
                .filter_map(|(label, s)| {
                    g.index
                        .labels
                        .by_label
                        .get(label)
                        .map(|pk| (pk.clone(), f64::from(*s)))
                })
                .filter(|(pk, _)| !tail.contains(pk))
                .collect();
            drop(g);
            let slots = matches.len();
            let with_score = |r: Vec<Value>, s: f64| {
                let mut m = vec![Value::Float(0.0); slots];
                m[*slot] = Value::Float(s);
                (r, m)
            };
            for (pk, s) in scored {
                if let Some(r) = hit_row(cx, &pk)? {
                    out.push(with_score(r, s));
                }
            }
            let mut tail_rows: Vec<Option<Vec<Value>>> = tail_rows.into_iter().map(Some).collect();
            for (i, s) in found.extra {
                if let Some(r) = usize::try_from(i)
                    .ok()
                    .and_then(|i| tail_rows.get_mut(i)?.take())
                {
                    out.push(with_score(r, f64::from(s)));
                }
            }
        }
        _ => {
            drop(g);
            return exact(cx);
        }
    }
    other_scores(cx, t, matches, index_slot, &mut out)?;
    Ok(out)
}

/// Score, on each candidate row, the MATCH slots its index path did not
/// (a second MATCH in the WHERE, or MATCH beside a vector search) against
/// the statistics of their own full-text index plus these rows, as the
/// tail is (the rows themselves while that index is in its initial build):
/// a row the index found must not lose them.
fn other_scores(
    cx: &mut Ctx<'_>,
    t: &TableDef,
    matches: &[MatchSpec],
    index_slot: Option<usize>,
    out: &mut [(Vec<Value>, Vec<Value>)],
) -> SqlResult<()> {
    for (_, scores) in out.iter_mut() {
        scores.resize(matches.len(), Value::Float(0.0));
    }
    for (i, spec) in matches.iter().enumerate() {
        if Some(i) == index_slot || out.is_empty() {
            continue;
        }
        let live = live_fulltext(cx, t, spec)?;
        let g = live.as_ref().map(|h| h.read());
        let fx = match g.as_deref().map(|e| &e.index.data) {
            Some(crate::iscp::live::IndexData::FullText(fx)) => Some(fx),
            _ => None,
        };
        let scores = score_rows(t, spec, out.iter().map(|(r, _)| r.as_slice()), fx)?;
        drop(g);
        for (j, (_, m)) in out.iter_mut().enumerate() {
            m[i] = Value::Float(scores.get(&j).copied().unwrap_or(0.0));
        }
    }
    Ok(())
}

/// The loaded full-text index answering `spec`, if one is past its
/// initial build.
fn live_fulltext(
    cx: &mut Ctx<'_>,
    t: &TableDef,
    spec: &MatchSpec,
) -> SqlResult<Option<crate::iscp::LiveHandle>> {
    let Some(ix) = fulltext_index(t, spec) else {
        return Ok(None);
    };
    match job_row(cx, t, ix)? {
        Some(row) => live_for_query(cx, &row),
        None => Ok(None),
    }
}

/// This CN's memory of job `row`'s index for a statement at its snapshot:
/// a synchronous index first catches up with every entry committed up to
/// the snapshot; an asynchronous one is `None` while in its initial build
/// (the statement evaluates exactly).
fn live_for_query(cx: &mut Ctx<'_>, row: &JobRow) -> SqlResult<Option<crate::iscp::LiveHandle>> {
    if row.spec.is_sync_live() {
        let snapshot = cx.txn.start_ts();
        return cx
            .engine
            .iscp
            .sync_catch_up(&row.key, &row.spec, snapshot, true)
            .map(Some);
    }
    if row.status.stage == Stage::Init {
        return Ok(None);
    }
    cx.engine.iscp.live_for_search(row).map(Some)
}
