//! Error type of the fault-injection framework.
//!
//! Owns [`FaultError`], the one error every public function of this crate returns.
//! It must never carry anything but plain strings (no references into the registry),
//! so callers can propagate it across threads and tasks freely.

use thiserror::Error;

/// Errors of the fault-injection framework.
///
/// `Injected` and `Canceled` are produced at call sites (by the `return` action and by a
/// cancelled `sleep`/`wait`); the other variants come from the control API.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum FaultError {
    /// A `return` action fired: the call site must propagate this error.
    #[error("injected fault at {point}: {message}")]
    Injected {
        /// Armed point key (`name` or `name:target`).
        point: String,
        /// `sarg` of the point, or `injected fault at <point>` when it was empty.
        message: String,
    },
    /// The caller's cancellation token fired while a `sleep` or `wait` action was blocking.
    #[error("fault point {point}: wait canceled by the caller")]
    Canceled {
        /// Armed point key (`name` or `name:target`).
        point: String,
    },
    /// Malformed control input (unknown action, bad frequency, bad argument, ...).
    #[error("invalid fault argument: {0}")]
    InvalidArgument(String),
    /// Fault injection is disabled; enable it first.
    #[error("fault injection is disabled")]
    Disabled,
    /// The named point is constant and cannot be replaced.
    #[error("failed to add fault point {0}; it already exists and is constant")]
    Constant(String),
    /// No point of that name is armed.
    #[error("fault point {0} not found")]
    NotFound(String),
}

impl FaultError {
    /// Shorthand for [`FaultError::InvalidArgument`].
    pub(crate) fn invalid(msg: impl Into<String>) -> Self {
        FaultError::InvalidArgument(msg.into())
    }
}
