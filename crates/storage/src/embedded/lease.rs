//! Named leases with wall-clock expiry, stored durably in redb.
//!
//! Owns the lease record format `(holder, expires_at_ms)` and the
//! take/renew/release rules: a lease is granted when free, expired, or
//! already held by the same holder. Expiry uses [`SystemTime`] so that
//! another process opening the same data after a restart sees it.
//!
//! This module must never grant a lease while another holder's unexpired
//! record stands.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use redb::ReadableTable;

use super::durable::{io, split_u64, Durable, LEASES};
use crate::api::{Result, StorageError};

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

fn encode(holder: &str, expires_ms: u64) -> Vec<u8> {
    let mut out = Vec::with_capacity(8 + holder.len());
    out.extend_from_slice(&expires_ms.to_be_bytes());
    out.extend_from_slice(holder.as_bytes());
    out
}

fn decode(b: &[u8]) -> Result<(String, u64)> {
    let (exp, holder) =
        split_u64(b).ok_or_else(|| StorageError::Corrupt("short lease record".into()))?;
    let holder = std::str::from_utf8(holder)
        .map_err(|e| StorageError::Corrupt(format!("lease holder: {e}")))?;
    Ok((holder.to_string(), exp))
}

/// What a lease request finds.
#[derive(Debug, PartialEq, Eq)]
enum Verdict {
    /// Another holder's record has not expired.
    Refused,
    /// `holder`'s own record has more than half its TTL left.
    Held,
    /// Free, expired, or `holder`'s own and due: write a new record.
    Write,
}

/// The rule of [`try_lease`], on the record `current` at `now`.
fn verdict(current: Option<(String, u64)>, holder: &str, now: u64, ttl_ms: u64) -> Verdict {
    match current {
        Some((who, exp)) if who != holder && exp > now => Verdict::Refused,
        Some((who, exp)) if who == holder && exp.saturating_sub(now) > ttl_ms / 2 => Verdict::Held,
        _ => Verdict::Write,
    }
}

/// The lease record stored under `name` in `t`.
fn current(
    t: &impl ReadableTable<&'static str, &'static [u8]>,
    name: &str,
) -> Result<Option<(String, u64)>> {
    match t.get(name).map_err(io)? {
        Some(g) => Ok(Some(decode(g.value())?)),
        None => Ok(None),
    }
}

/// Take or renew `name` for `holder`. A renewal is written (an fsynced
/// redb commit, which also waits for the applier's transaction) only once
/// less than half of `ttl` is left: the runner renews every tick (100 ms),
/// and writing each time put ~10 flushes a second on the disk that every
/// commit's `fdatasync` shares. Whoever sees another holder's unexpired
/// record answers from a read transaction.
pub(super) fn try_lease(d: &Durable, name: &str, holder: &str, ttl: Duration) -> Result<bool> {
    let ttl_ms = u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX);
    {
        let r = d.db.begin_read().map_err(io)?;
        let t = r.open_table(LEASES).map_err(io)?;
        match verdict(current(&t, name)?, holder, now_ms(), ttl_ms) {
            Verdict::Refused => return Ok(false),
            Verdict::Held => return Ok(true),
            Verdict::Write => {}
        }
    }
    // Decided again in the write transaction: the record may have moved.
    let w = d.begin_write()?;
    let now = now_ms();
    {
        let mut t = w.open_table(LEASES).map_err(io)?;
        if verdict(current(&t, name)?, holder, now, ttl_ms) == Verdict::Refused {
            drop(t);
            w.abort().map_err(io)?;
            return Ok(false);
        }
        let rec = encode(holder, now.saturating_add(ttl_ms));
        t.insert(name, rec.as_slice()).map_err(io)?;
    }
    w.commit().map_err(io)?;
    Ok(true)
}

/// Release `name` if `holder` has it.
pub(super) fn release_lease(d: &Durable, name: &str, holder: &str) -> Result<()> {
    let w = d.begin_write()?;
    {
        let mut t = w.open_table(LEASES).map_err(io)?;
        if current(&t, name)?.is_some_and(|(who, _)| who == holder) {
            t.remove(name).map_err(io)?;
        }
    }
    w.commit().map_err(io)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_round_trip() {
        let (h, e) = decode(&encode("cn-1", 42)).unwrap();
        assert_eq!((h.as_str(), e), ("cn-1", 42));
        assert!(matches!(decode(&[1, 2]), Err(StorageError::Corrupt(_))));
    }

    #[test]
    fn verdicts() {
        let rec = |who: &str, exp| Some((who.to_string(), exp));
        assert_eq!(verdict(None, "a", 100, 10), Verdict::Write);
        assert_eq!(verdict(rec("b", 101), "a", 100, 10), Verdict::Refused);
        assert_eq!(verdict(rec("b", 100), "a", 100, 10), Verdict::Write);
        assert_eq!(verdict(rec("a", 106), "a", 100, 10), Verdict::Held);
        assert_eq!(verdict(rec("a", 105), "a", 100, 10), Verdict::Write);
    }
}
