//! The SQL text the backend sends (besides `sql/schema.sql`).
//!
//! Owns every statement's text, so the reasoning about visibility and
//! locks lives in one place: a key's version visible at snapshot `s` is its
//! head when `head.ts <= s`, else its newest history row with `ts <= s`;
//! `value IS NULL` means absent. Purged tables read as empty.

use std::ops::Bound;
use std::sync::LazyLock;

/// The schema and functions, applied at open under an advisory lock.
pub const SCHEMA: &str = include_str!("../sql/schema.sql");

/// Advisory lock key serialising schema set-up between nodes that start
/// together.
pub const SCHEMA_LOCK: i64 = 0x7472_6962_7574_6172; // "tributar"

pub const CLOCK: &str = "SELECT ts FROM tsr_clock WHERE id = 1";

/// One key at a snapshot: $1 table, $2 key, $3 ts.
pub const GET: &str = "SELECT value FROM (\
      SELECT ts, value FROM tsr_rows WHERE table_id = $1 AND key = $2 AND ts <= $3 \
      UNION ALL \
      (SELECT ts, value FROM tsr_history WHERE table_id = $1 AND key = $2 AND ts <= $3 \
       ORDER BY ts DESC LIMIT 1)) v \
    WHERE NOT EXISTS (SELECT 1 FROM tsr_purged p WHERE p.table_id = $1) \
    ORDER BY ts DESC LIMIT 1";

/// $1 table, $2 key, $3 mode, $4 gate.
pub const LOCK: &str = "SELECT tsr_lock($1, $2, $3, $4)";

/// The same without waiting for another transaction's lock: (value, got).
pub const LOCK_TRY: &str = "SELECT v, got FROM tsr_lock_try($1, $2, $3, $4)";

/// $1 tables, $2 keys, $3 values.
pub const COMMIT: &str = "SELECT tsr_commit($1, $2, $3)";

/// Changes `(from or resume, to]`: $1 table, $2 ts, $3 seq (exclusive
/// position), $4 to, $5 limit. Clamped to the clock in the same statement.
pub const CHANGES: &str = "SELECT ts, seq, kind, key, old, new FROM tsr_changes \
    WHERE table_id = $1 AND (ts, seq) > ($2, $3) \
      AND ts <= LEAST($4, (SELECT ts FROM tsr_clock WHERE id = 1)) \
      AND NOT EXISTS (SELECT 1 FROM tsr_purged p WHERE p.table_id = $1) \
    ORDER BY ts, seq LIMIT $5";

/// A table's GC horizon (0 when never collected): $1 table.
pub const HORIZON: &str =
    "SELECT coalesce((SELECT gc_ts FROM tsr_table_gc WHERE table_id = $1), 0)";

pub const STATS: &str = "SELECT n FROM tsr_table_stats WHERE table_id = $1";

pub const SET_WATERMARK: &str = "INSERT INTO tsr_consumers VALUES ($1, $2, $3) \
    ON CONFLICT (consumer, table_id) DO UPDATE SET low_wm = EXCLUDED.low_wm";
pub const REMOVE_CONSUMER: &str = "DELETE FROM tsr_consumers WHERE consumer = $1";

pub const NEXT_ID: &str = "INSERT INTO tsr_sequences VALUES ($1, 1) \
    ON CONFLICT (name) DO UPDATE SET next = tsr_sequences.next + 1 RETURNING next";

/// The lease as it stands: holder, whether unexpired, whether more than
/// half of `$2` ms is left. $1 name.
pub const LEASE_READ: &str = "SELECT holder, expires_at > clock_timestamp(), \
    expires_at - clock_timestamp() > ($2::bigint / 2) * interval '1 millisecond' \
    FROM tsr_leases WHERE name = $1";
/// Take or renew: $1 name, $2 holder, $3 ttl ms. A row back: taken.
pub const LEASE_TAKE: &str = "INSERT INTO tsr_leases AS l (name, holder, expires_at) \
    VALUES ($1, $2, clock_timestamp() + $3::bigint * interval '1 millisecond') \
    ON CONFLICT (name) DO UPDATE SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at, \
      epoch = l.epoch + (l.holder <> EXCLUDED.holder)::int \
    WHERE l.holder = EXCLUDED.holder OR l.expires_at <= clock_timestamp() \
    RETURNING holder";
pub const LEASE_RELEASE: &str = "DELETE FROM tsr_leases WHERE name = $1 AND holder = $2";

/// Purge under the clock's lock (serialised with commits): $1 table.
pub const PURGE: &str = "INSERT INTO tsr_purged \
    SELECT $1, ts FROM tsr_clock WHERE id = 1 FOR UPDATE ON CONFLICT DO NOTHING";

/// This node's oldest snapshot: $1 node, $2 ts.
pub const HEARTBEAT: &str = "INSERT INTO tsr_cn_snapshots VALUES ($1, $2, clock_timestamp()) \
    ON CONFLICT (cn) DO UPDATE SET min_ts = EXCLUDED.min_ts, beat_at = EXCLUDED.beat_at";
pub const LEAVE: &str = "DELETE FROM tsr_cn_snapshots WHERE cn = $1";

/// A scan at a snapshot, one page: $1 table, $2 lower key, [$3 upper key,]
/// then ts and limit. Text by bound kinds, built once.
pub fn scan(lower: Bound<()>, upper: Bound<()>) -> &'static str {
    static TEXTS: LazyLock<Vec<String>> = LazyLock::new(|| {
        let mut v = Vec::new();
        for lo in [">=", ">"] {
            for hi in [Some("<="), Some("<"), None] {
                v.push(scan_text(lo, hi));
            }
        }
        v
    });
    let lo = match lower {
        Bound::Excluded(()) => 1,
        _ => 0,
    };
    let hi = match upper {
        Bound::Included(()) => 0,
        Bound::Excluded(()) => 1,
        Bound::Unbounded => 2,
    };
    &TEXTS[lo * 3 + hi]
}

fn scan_text(lo: &str, hi: Option<&str>) -> String {
    let (range, ts, limit) = match hi {
        Some(op) => (format!("key {lo} $2 AND key {op} $3"), "$4", "$5"),
        None => (format!("key {lo} $2"), "$3", "$4"),
    };
    format!(
        "SELECT key, value FROM (\
           SELECT DISTINCT ON (key) key, value FROM (\
             SELECT key, ts, value FROM tsr_rows WHERE table_id = $1 AND {range} AND ts <= {ts} \
             UNION ALL \
             SELECT key, ts, value FROM tsr_history WHERE table_id = $1 AND {range} AND ts <= {ts}) u \
           ORDER BY key, ts DESC) v \
         WHERE value IS NOT NULL \
           AND NOT EXISTS (SELECT 1 FROM tsr_purged p WHERE p.table_id = $1) \
         ORDER BY key LIMIT {limit}"
    )
}
