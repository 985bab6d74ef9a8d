//! The memory a transaction's write set may hold (decision 032).
//!
//! Owns [`WriteAccount`]: a transaction's estimate of the bytes its
//! buffered writes and row locks hold, checked against its own limit
//! ([`WriteLimit::bytes`]) and charged, in [`CHARGE_STEP`] steps, to a
//! shared [`MemoryBudget`] (the SQL layer's global memory budget). A write
//! that would pass either is refused with [`StorageError::TxnTooLarge`]
//! before it is recorded (MySQL's ER_TRANS_CACHE_FULL, 1197); whatever the
//! account charged is given back when the transaction shrinks
//! (`rollback_to`) or ends, drop included.
//!
//! Sizes are estimates ([`write_bytes`], [`lock_bytes`]): the key and value
//! bytes plus a fixed per-entry overhead for the containers that hold them,
//! allocator slack aside. This module never allocates rows and never
//! decides what a backend keeps; the backend tells it what it added and
//! what it holds after a rollback.

use std::sync::Arc;

use crate::api::{Result, StorageError};

/// A budget shared by many holders of memory (the node's global memory
/// budget): charged by a transaction as its write set grows.
pub trait MemoryBudget: Send + Sync + std::fmt::Debug {
    /// Charge `n` bytes; `false` (and nothing charged) when that would pass
    /// the budget.
    fn try_charge(&self, n: u64) -> bool;
    /// Give back `n` bytes charged before.
    fn release(&self, n: u64);
    /// The setting that bounds the budget, for the error message.
    fn setting(&self) -> &str;
}

/// How much a transaction's write set may hold.
#[derive(Debug, Clone)]
pub struct WriteLimit {
    /// Bytes of the transaction's own write set (`u64::MAX`: no own limit).
    pub bytes: u64,
    /// The setting `bytes` comes from, named in the error.
    pub setting: String,
    /// The shared budget the write set is charged to as well, if any.
    pub global: Option<Arc<dyn MemoryBudget>>,
}

impl Default for WriteLimit {
    /// No limit of its own, no shared budget (storage-level callers and
    /// tests; the SQL layer always sets one).
    fn default() -> Self {
        WriteLimit {
            bytes: u64::MAX,
            setting: "tributary_transaction_memory_limit".into(),
            global: None,
        }
    }
}

/// Bytes charged to the shared budget at a time, ahead of use (so a
/// transaction touches the shared counter once per step, not per row).
pub const CHARGE_STEP: u64 = 1 << 20;

/// Per-entry overhead of a buffered write beyond its key and value bytes:
/// two vector headers (48), the write's position (8), the entry's share
/// of the tree's nodes (~60 at the fill sequential keys leave) and the
/// allocator's rounding of two allocations (~40).
pub const WRITE_OVERHEAD: u64 = 160;

/// Per-entry overhead of a row lock beyond its key bytes (held twice: the
/// transaction's map and the lock table): a 41-byte and a 73-byte hash
/// slot at the load a doubling table has (~1.6 slots an entry, ~180), the
/// allocator's rounding of two key copies and the tables' control bytes
/// (~76). Calibrated in decision 032 against a 1M-row load.
pub const LOCK_OVERHEAD: u64 = 256;

/// Estimated bytes of one buffered write of `key_len` and `value_len`.
pub fn write_bytes(key_len: usize, value_len: usize) -> u64 {
    (key_len as u64)
        .saturating_add(value_len as u64)
        .saturating_add(WRITE_OVERHEAD)
}

/// Estimated bytes of one row lock on a key of `key_len` bytes.
pub fn lock_bytes(key_len: usize) -> u64 {
    (key_len as u64)
        .saturating_mul(2)
        .saturating_add(LOCK_OVERHEAD)
}

/// A transaction's write-set account (see the module doc).
#[derive(Debug, Default)]
pub struct WriteAccount {
    limit: WriteLimit,
    /// Estimated bytes held now.
    bytes: u64,
    /// Bytes charged to `limit.global` (a multiple of [`CHARGE_STEP`], at
    /// least `bytes` when a global budget is set).
    charged: u64,
}

impl WriteAccount {
    /// An empty account under `limit`.
    pub fn new(limit: WriteLimit) -> Self {
        WriteAccount {
            limit,
            bytes: 0,
            charged: 0,
        }
    }

    /// Estimated bytes held now.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Bytes charged to the shared budget now.
    pub fn charged(&self) -> u64 {
        self.charged
    }

    fn too_large(setting: &str) -> StorageError {
        StorageError::TxnTooLarge {
            setting: setting.to_string(),
        }
    }

    /// Whether `n` more bytes fit; charges the shared budget as needed.
    /// On `Err` nothing is added (the caller records nothing).
    pub fn add(&mut self, n: u64) -> Result<()> {
        let want = self.bytes.saturating_add(n);
        if want > self.limit.bytes {
            return Err(Self::too_large(&self.limit.setting));
        }
        if let Some(g) = &self.limit.global {
            if want > self.charged {
                let step = (want - self.charged).div_ceil(CHARGE_STEP) * CHARGE_STEP;
                if !g.try_charge(step) {
                    return Err(Self::too_large(g.setting()));
                }
                self.charged += step;
            }
        }
        self.bytes = want;
        Ok(())
    }

    /// The write set now holds `bytes` (after a rollback to a savepoint):
    /// what the shared budget was charged beyond the next step is given
    /// back.
    pub fn set(&mut self, bytes: u64) {
        self.bytes = bytes;
        if let Some(g) = &self.limit.global {
            let keep = bytes.div_ceil(CHARGE_STEP) * CHARGE_STEP;
            if self.charged > keep {
                g.release(self.charged - keep);
                self.charged = keep;
            }
        }
    }

    /// The transaction ended: give everything back.
    pub fn clear(&mut self) {
        self.bytes = 0;
        if let Some(g) = &self.limit.global {
            if self.charged > 0 {
                g.release(self.charged);
            }
        }
        self.charged = 0;
    }
}

impl Drop for WriteAccount {
    fn drop(&mut self) {
        self.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU64, Ordering};

    #[derive(Debug)]
    struct Budget {
        limit: u64,
        used: AtomicU64,
    }

    impl MemoryBudget for Budget {
        fn try_charge(&self, n: u64) -> bool {
            let now = self.used.fetch_add(n, Ordering::AcqRel) + n;
            if now > self.limit {
                self.used.fetch_sub(n, Ordering::AcqRel);
                return false;
            }
            true
        }
        fn release(&self, n: u64) {
            self.used.fetch_sub(n, Ordering::AcqRel);
        }
        fn setting(&self) -> &str {
            "--global"
        }
    }

    fn budget(limit: u64) -> Arc<Budget> {
        Arc::new(Budget {
            limit,
            used: AtomicU64::new(0),
        })
    }

    #[test]
    fn the_own_limit_refuses_without_adding() {
        let mut a = WriteAccount::new(WriteLimit {
            bytes: 1000,
            setting: "own".into(),
            global: None,
        });
        a.add(600).unwrap();
        let e = a.add(401).unwrap_err();
        assert_eq!(
            e,
            StorageError::TxnTooLarge {
                setting: "own".into()
            }
        );
        assert_eq!(a.bytes(), 600);
        a.add(400).unwrap();
        assert_eq!(a.bytes(), 1000);
        a.set(100);
        a.add(900).unwrap();
    }

    #[test]
    fn the_global_budget_is_charged_in_steps_and_given_back() {
        let g = budget(3 * CHARGE_STEP);
        let limit = WriteLimit {
            bytes: u64::MAX,
            setting: "own".into(),
            global: Some(g.clone()),
        };
        let mut a = WriteAccount::new(limit.clone());
        a.add(10).unwrap();
        assert_eq!(g.used.load(Ordering::Acquire), CHARGE_STEP);
        a.add(CHARGE_STEP).unwrap();
        assert_eq!(g.used.load(Ordering::Acquire), 2 * CHARGE_STEP);
        // A second account finds one step left.
        let mut b = WriteAccount::new(limit);
        b.add(CHARGE_STEP).unwrap();
        let e = b.add(1).unwrap_err();
        assert_eq!(
            e,
            StorageError::TxnTooLarge {
                setting: "--global".into()
            }
        );
        assert_eq!(b.bytes(), CHARGE_STEP);
        // Shrinking gives back whole steps beyond what is held.
        a.set(5);
        assert_eq!(a.charged(), CHARGE_STEP);
        assert_eq!(g.used.load(Ordering::Acquire), 2 * CHARGE_STEP);
        b.add(1).unwrap();
        drop(b);
        a.clear();
        assert_eq!(g.used.load(Ordering::Acquire), 0);
        drop(a);
        assert_eq!(g.used.load(Ordering::Acquire), 0);
    }

    #[test]
    fn estimates_grow_with_the_bytes() {
        assert_eq!(write_bytes(0, 0), WRITE_OVERHEAD);
        assert_eq!(write_bytes(8, 100), 108 + WRITE_OVERHEAD);
        assert_eq!(lock_bytes(8), 16 + LOCK_OVERHEAD);
        assert_eq!(write_bytes(usize::MAX, usize::MAX), u64::MAX);
    }
}
