//! GC over PostgreSQL: which versions and change-log entries nobody needs.
//!
//! Owns the horizon rule — per table, the lowest of: every live node's
//! oldest open snapshot (`tsr_cn_snapshots`, nodes whose heartbeat is older
//! than `dead_after` do not count), every consumer's low watermark on the
//! table, and the clock — and the deletes, in bounded batches. A table's
//! horizon is raised in `tsr_table_gc` **before** anything at or below it
//! is deleted, and readers check it after reading, so a read that overlaps
//! a GC sees `ChangesGone`, never missing rows.
//!
//! It must never delete a version visible at the horizon (the newest with
//! `ts <= horizon` stays), a tombstone whose key still has history, or a
//! head another transaction has locked.

use std::sync::Arc;

use deadpool_postgres::Object;
use tributary_storage::{GcStats, Result};

use crate::error;
use crate::storage::Inner;

/// Rows per delete statement.
const BATCH: i64 = 10_000;
/// Delete statements per table and pass.
const ROUNDS: usize = 20;

const LIVE_MIN: &str = "SELECT least((SELECT ts FROM tsr_clock WHERE id = 1), \
    (SELECT min(min_ts) FROM tsr_cn_snapshots \
     WHERE beat_at > clock_timestamp() - $1::bigint * interval '1 millisecond'))";
const CONSUMER_MIN: &str = "SELECT min(low_wm) FROM tsr_consumers WHERE table_id = $1";
const RAISE: &str = "INSERT INTO tsr_table_gc VALUES ($1, $2) ON CONFLICT (table_id) \
    DO UPDATE SET gc_ts = greatest(tsr_table_gc.gc_ts, EXCLUDED.gc_ts)";
const HISTORY: &str = "DELETE FROM tsr_history WHERE ctid IN (\
    SELECT h.ctid FROM tsr_history h WHERE h.table_id = $1 AND h.ts < $2 AND (\
      EXISTS (SELECT 1 FROM tsr_history n WHERE n.table_id = h.table_id AND n.key = h.key \
              AND n.ts > h.ts AND n.ts <= $2) \
      OR EXISTS (SELECT 1 FROM tsr_rows r WHERE r.table_id = h.table_id AND r.key = h.key \
              AND r.ts > h.ts AND r.ts <= $2)) \
    LIMIT $3)";
const TOMBSTONES: &str = "DELETE FROM tsr_rows WHERE (table_id, key) IN (\
    SELECT r.table_id, r.key FROM tsr_rows r WHERE r.table_id = $1 AND r.key IN (\
      SELECT c.key FROM tsr_changes c WHERE c.table_id = $1 AND c.ts <= $2 AND c.kind = 2 \
      ORDER BY c.ts LIMIT $3) \
    AND r.value IS NULL AND r.ts <= $2 \
    AND NOT EXISTS (SELECT 1 FROM tsr_history h WHERE h.table_id = r.table_id AND h.key = r.key) \
    FOR UPDATE SKIP LOCKED)";
const CHANGES: &str = "DELETE FROM tsr_changes WHERE ctid IN (\
    SELECT ctid FROM tsr_changes WHERE table_id = $1 AND ts <= $2 ORDER BY ts LIMIT $3)";
const PURGED: &str = "SELECT table_id FROM tsr_purged";
const PURGE_ROWS: &str = "DELETE FROM tsr_rows WHERE ctid IN (\
    SELECT ctid FROM tsr_rows WHERE table_id = $1 LIMIT $2)";
const PURGE_HISTORY: &str = "DELETE FROM tsr_history WHERE ctid IN (\
    SELECT ctid FROM tsr_history WHERE table_id = $1 LIMIT $2)";
const PURGE_CHANGES: &str = "DELETE FROM tsr_changes WHERE ctid IN (\
    SELECT ctid FROM tsr_changes WHERE table_id = $1 LIMIT $2)";
const FORGET_NODES: &str = "DELETE FROM tsr_cn_snapshots \
    WHERE beat_at < clock_timestamp() - 10 * $1::bigint * interval '1 millisecond'";

/// Distinct table ids of `table` by a loose index scan (one probe per id).
fn distinct_tables(table: &str) -> String {
    format!(
        "WITH RECURSIVE t(id) AS (SELECT min(table_id) FROM {table} UNION ALL \
         SELECT (SELECT min(table_id) FROM {table} WHERE table_id > t.id) FROM t \
         WHERE t.id IS NOT NULL) SELECT id FROM t WHERE id IS NOT NULL"
    )
}

/// One GC pass, after refreshing this node's own heartbeat (so its own
/// published snapshot is not what holds the horizon back).
pub(crate) fn run(inner: &Arc<Inner>) -> Result<GcStats> {
    let i = inner.clone();
    let dead_ms = i64::try_from(inner.opts.dead_after.as_millis()).unwrap_or(i64::MAX);
    inner.bridge.call(async move {
        crate::storage::beat_async(&i).await?;
        let c = i.pool.get().await.map_err(error::pool)?;
        pass(&c, dead_ms).await.map_err(error::map)
    })?
}

async fn ids(c: &Object, text: &str) -> Result<Vec<i64>, tokio_postgres::Error> {
    Ok(c.query(text, &[]).await?.iter().map(|r| r.get(0)).collect())
}

/// Run `text` ($1 table, [$2 horizon,] last $ the batch) until it deletes
/// less than a batch or the rounds run out; rows deleted.
async fn batches(
    c: &Object,
    text: &str,
    table: i64,
    horizon: Option<i64>,
) -> Result<u64, tokio_postgres::Error> {
    let st = c.prepare_cached(text).await?;
    let mut total = 0;
    for _ in 0..ROUNDS {
        let n = match horizon {
            Some(h) => c.execute(&st, &[&table, &h, &BATCH]).await?,
            None => c.execute(&st, &[&table, &BATCH]).await?,
        };
        total += n;
        if n < BATCH as u64 {
            break;
        }
    }
    Ok(total)
}

async fn pass(c: &Object, dead_ms: i64) -> Result<GcStats, tokio_postgres::Error> {
    let mut stats = GcStats::default();
    let purged: Vec<i64> = ids(c, PURGED).await?;
    for t in &purged {
        for text in [PURGE_ROWS, PURGE_HISTORY, PURGE_CHANGES] {
            stats.purged_entries += batches(c, text, *t, None).await?;
        }
    }
    let global: i64 = c.query_one(LIVE_MIN, &[&dead_ms]).await?.get(0);
    let mut tables: Vec<i64> = ids(c, &distinct_tables("tsr_history")).await?;
    tables.extend(ids(c, &distinct_tables("tsr_changes")).await?);
    tables.sort_unstable();
    tables.dedup();
    let consumer_min = c.prepare_cached(CONSUMER_MIN).await?;
    let raise = c.prepare_cached(RAISE).await?;
    for t in tables {
        if purged.contains(&t) {
            continue;
        }
        let wm: Option<i64> = c.query_one(&consumer_min, &[&t]).await?.get(0);
        let h = wm.map_or(global, |w| w.min(global));
        if h <= 0 {
            continue;
        }
        c.execute(&raise, &[&t, &h]).await?;
        stats.versions_removed += batches(c, HISTORY, t, Some(h)).await?;
        stats.versions_removed += batches(c, TOMBSTONES, t, Some(h)).await?;
        stats.changes_removed += batches(c, CHANGES, t, Some(h)).await?;
    }
    c.execute(FORGET_NODES, &[&dead_ms]).await?;
    Ok(stats)
}
