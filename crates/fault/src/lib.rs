//! `tributary-fault`: named fault points with cancellation-aware WAIT/SLEEP and a
//! MatrixOne-compatible control API (`pkg/util/fault` semantics).
//!
//! This crate owns the fault-injection framework only; it must never depend on the
//! rest of Tributary, and a call site must never pay more than one relaxed atomic load
//! when no point is armed.
//!
//! # Call sites
//! ```
//! # async fn f(cancel: tokio_util::sync::CancellationToken) -> Result<(), tributary_fault::FaultError> {
//! use tributary_fault::points;
//! // Stall (or fail) here when a test armed the point, for this index only if targeted.
//! tributary_fault::hit(points::ISCP_LONG_BEFORE_SEND, Some("idx01"), &cancel).await?;
//! # Ok(()) }
//! ```
//! Sync code uses [`hit_blocking`]. `Ok(None)` means nothing fired; `Ok(Some(hit))`
//! carries an `echo`/`getcount`/... result; `Err(FaultError::Injected{..})` must be
//! propagated; `Err(FaultError::Canceled{..})` means the caller's token fired while an
//! action was stalling it.
//!
//! # Control
//! [`FaultRegistry`] (`global()` for the process, `FaultRegistry::new()` in tests):
//! `enable`/`disable`/`add`/`remove`/`trigger`/`list`/`handle_fault_inject`/
//! `load_env_spec`. See `docs/FAULTS.md` for actions, frequency windows, targeting and
//! the WAIT/REMOVE race this design rules out.

mod action;
mod env;
mod error;
mod freq;
pub mod points;
mod registry;
pub mod testing;
mod waiter;

pub use action::Action;
pub use env::{parse_env_spec, EnvPoint, ENV_VAR, SEED_ENV_VAR};
pub use error::FaultError;
pub use freq::{Freq, SplitMix64};
pub use registry::{DispatchHook, FaultHit, FaultRegistry, PointInfo, CANCEL_POLL_SLICE};
pub use testing::{armed_count, assert_no_armed_points, FaultGuard};
pub use tokio_util::sync::CancellationToken;

static GLOBAL: FaultRegistry = FaultRegistry::new();

/// The process-global registry (what SQL, HTTP and the env var control).
#[inline]
pub fn global() -> &'static FaultRegistry {
    &GLOBAL
}

/// [`FaultRegistry::hit`] on the global registry.
#[inline]
pub async fn hit(
    name: &str,
    target: Option<&str>,
    cancel: &CancellationToken,
) -> Result<Option<FaultHit>, FaultError> {
    GLOBAL.hit(name, target, cancel).await
}

/// [`FaultRegistry::hit_blocking`] on the global registry.
#[inline]
pub fn hit_blocking(
    name: &str,
    target: Option<&str>,
    cancel: Option<&CancellationToken>,
) -> Result<Option<FaultHit>, FaultError> {
    GLOBAL.hit_blocking(name, target, cancel)
}

/// [`FaultRegistry::load_from_env`] on the global registry (called by the binary at
/// start-up).
pub fn load_from_env() -> Result<usize, FaultError> {
    GLOBAL.load_from_env()
}
