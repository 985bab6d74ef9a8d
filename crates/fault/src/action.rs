//! The closed set of fault actions and their (case-insensitive) names.
//!
//! Owns parsing/printing of action names and the per-action argument rules that are
//! checked when a point is armed. It must never execute an action: execution lives in
//! the registry, which alone knows the point, the waiters and the caller's token.

use std::fmt;
use std::str::FromStr;

use crate::error::FaultError;

/// What a fired point does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Action {
    /// Log the hit and hand `(iarg, sarg)` back to the caller.
    Echo,
    /// Sleep `iarg` seconds (cancellable by the caller's token; ends early on removal).
    Sleep,
    /// Block until the point is removed, notified, or the caller's token is cancelled.
    Wait,
    /// Return the number of waiters on the point named by `sarg`.
    GetWaiters,
    /// Wake one waiter of the point named by `sarg`.
    Notify,
    /// Wake every waiter of the point named by `sarg`.
    NotifyAll,
    /// Make the call site fail with [`FaultError::Injected`].
    Return,
    /// Panic with `sarg`.
    Panic,
    /// `std::process::abort()` (crash tests).
    Abort,
    /// Return the hit count of the point named by `sarg` (own count when empty).
    GetCount,
}

impl Action {
    /// Every action, in documentation order.
    pub const ALL: [Action; 10] = [
        Action::Echo,
        Action::Sleep,
        Action::Wait,
        Action::GetWaiters,
        Action::Notify,
        Action::NotifyAll,
        Action::Return,
        Action::Panic,
        Action::Abort,
        Action::GetCount,
    ];

    /// Lower-case canonical name.
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Echo => "echo",
            Action::Sleep => "sleep",
            Action::Wait => "wait",
            Action::GetWaiters => "getwaiters",
            Action::Notify => "notify",
            Action::NotifyAll => "notifyall",
            Action::Return => "return",
            Action::Panic => "panic",
            Action::Abort => "abort",
            Action::GetCount => "getcount",
        }
    }

    /// Checks the arguments a point with this action is armed with.
    pub(crate) fn validate_args(self, iarg: i64, sarg: &str) -> Result<(), FaultError> {
        match self {
            Action::Sleep if iarg < 0 => Err(FaultError::invalid(format!(
                "sleep needs a non-negative number of seconds, got {iarg}"
            ))),
            Action::GetWaiters | Action::Notify | Action::NotifyAll if sarg.trim().is_empty() => {
                Err(FaultError::invalid(format!(
                    "{} needs the name of the point to act on in sarg",
                    self.as_str()
                )))
            }
            _ => Ok(()),
        }
    }
}

impl FromStr for Action {
    type Err = FaultError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let wanted = s.trim();
        Action::ALL
            .iter()
            .copied()
            .find(|a| a.as_str().eq_ignore_ascii_case(wanted))
            .ok_or_else(|| {
                FaultError::invalid(format!(
                    "unknown fault action {wanted:?} (expected one of: {})",
                    Action::ALL.map(Action::as_str).join(", ")
                ))
            })
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_case_insensitively() {
        for a in Action::ALL {
            assert_eq!(a.as_str().parse::<Action>().unwrap(), a);
            assert_eq!(a.as_str().to_uppercase().parse::<Action>().unwrap(), a);
        }
        assert_eq!(" NotifyAll ".parse::<Action>().unwrap(), Action::NotifyAll);
        assert!(matches!(
            "explode".parse::<Action>(),
            Err(FaultError::InvalidArgument(_))
        ));
    }

    #[test]
    fn argument_rules() {
        assert!(Action::Sleep.validate_args(-1, "").is_err());
        assert!(Action::Sleep.validate_args(0, "").is_ok());
        assert!(Action::Notify.validate_args(0, "").is_err());
        assert!(Action::GetWaiters.validate_args(0, " ").is_err());
        assert!(Action::GetCount.validate_args(0, "").is_ok());
    }
}
