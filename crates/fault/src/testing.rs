//! Helpers for tests (in this and other crates) that arm fault points.
//!
//! Owns [`FaultGuard`], which serialises tests using the process-global registry and
//! restores it to "disabled, nothing armed, nobody waiting" on drop, plus small
//! assertions. It must never be needed by production code paths, and never leave the
//! global registry enabled after the guard is gone (even when the test panicked).

use parking_lot::{Mutex, MutexGuard};

use crate::registry::FaultRegistry;

/// Serialises users of the global registry (parking_lot: no poisoning when a test panics).
static GLOBAL_TEST_LOCK: Mutex<()> = Mutex::new(());

/// Exclusive use of [`crate::global()`] for one test.
///
/// `FaultGuard::enable()` waits for other guard holders, clears any leftover points and
/// enables injection; dropping the guard removes every point (releasing all waiters) and
/// disables injection. Hold it for the whole test.
pub struct FaultGuard {
    _lock: MutexGuard<'static, ()>,
}

impl FaultGuard {
    /// Takes the global test lock and enables the global registry with no points.
    pub fn enable() -> FaultGuard {
        let lock = GLOBAL_TEST_LOCK.lock();
        let reg = crate::global();
        reg.disable();
        reg.enable();
        FaultGuard { _lock: lock }
    }

    /// The global registry this guard owns.
    pub fn registry(&self) -> &'static FaultRegistry {
        crate::global()
    }
}

impl Drop for FaultGuard {
    fn drop(&mut self) {
        // `disable` removes all points and wakes all waiters.
        crate::global().disable();
    }
}

/// Panics (listing them) if any point is armed in `reg`.
pub fn assert_no_armed_points(reg: &FaultRegistry) {
    let points = reg.list();
    assert!(
        points.is_empty() && reg.armed_count() == 0,
        "expected no armed fault points, found: {}",
        reg.list_json()
    );
}

/// Number of points armed in the global registry.
pub fn armed_count() -> usize {
    crate::global().armed_count()
}
