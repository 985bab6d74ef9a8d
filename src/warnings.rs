//! Warnings raised while a statement evaluates expressions (MySQL's
//! "Truncated incorrect DOUBLE value", "Division by 0", "Incorrect datetime
//! value"): one sink per statement thread, opened by the statement runner
//! and drained into the statement's result (`SHOW WARNINGS`).
//!
//! Owns the one rule that turns such a warning into an error: while a
//! statement writes rows under a strict `sql_mode` (MySQL's
//! `STRICT_TRANS_TABLES`), [`note`] answers the warning as an error, which
//! the caller propagates with `?` — the statement then fails and writes
//! nothing, as MySQL's does. Never decides *what* is a warning: the
//! evaluator does.
//!
//! A thread with no open sink (a parallel scan worker, a unit test)
//! discards warnings and never escalates them.

use std::cell::RefCell;

use crate::error::{SqlError, SqlResult};
use crate::types::Warning;

/// MySQL's `max_error_count` default: warnings kept per statement (the
/// rest are counted by MySQL and dropped; here dropped).
pub const MAX_WARNINGS: usize = 1024;

/// ER_DIVISION_BY_ZERO: escalated only under `ERROR_FOR_DIVISION_BY_ZERO`.
const DIVISION_BY_ZERO: u16 = crate::error::code::DIVISION_BY_ZERO;

#[derive(Default)]
struct Sink {
    warnings: Vec<Warning>,
    /// Depth of nested [`Strict`] guards: escalate while > 0.
    strict: u32,
    /// Whether division by zero (1365) escalates too (MySQL's
    /// `ERROR_FOR_DIVISION_BY_ZERO`, set by the outermost guard).
    division_by_zero: bool,
    /// The first warning escalated under a [`Strict`] guard: the statement
    /// fails with it even where the evaluator could not propagate it at
    /// once (a comparison inside a sort).
    escalated: Option<SqlError>,
}

thread_local! {
    static SINK: RefCell<Option<Sink>> = const { RefCell::new(None) };
    static MUTED: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

/// While it lives, warnings on this thread are dropped and never
/// escalated: the planner evaluating a constant only to learn its type
/// (the statement reports that evaluation's warnings when it runs).
pub struct Mute(());

impl Mute {
    pub fn new() -> Mute {
        MUTED.with(|m| m.set(m.get() + 1));
        Mute(())
    }
}

impl Default for Mute {
    fn default() -> Mute {
        Mute::new()
    }
}

impl Drop for Mute {
    fn drop(&mut self) {
        MUTED.with(|m| m.set(m.get().saturating_sub(1)));
    }
}

/// Report warning `code` with `message` to the running statement. Under a
/// [`Strict`] guard (a write in strict mode) it is answered as an error
/// with the same code instead.
pub fn note(code: u16, message: impl Into<String>) -> SqlResult<()> {
    if MUTED.with(|m| m.get()) > 0 {
        return Ok(());
    }
    SINK.with(|s| {
        let mut s = s.borrow_mut();
        let Some(sink) = s.as_mut() else {
            return Ok(());
        };
        let message = message.into();
        if sink.strict > 0 && (code != DIVISION_BY_ZERO || sink.division_by_zero) {
            let e = SqlError::new(code, message);
            sink.escalated.get_or_insert_with(|| e.clone());
            return Err(e);
        }
        if sink.warnings.len() < MAX_WARNINGS {
            sink.warnings.push(Warning { code, message });
        }
        Ok(())
    })
}

/// [`note`] where the caller cannot return an error (a comparison, a
/// truth value): under a [`Strict`] guard the escalated error is kept and
/// [`Strict::finish`] fails the statement with it.
pub fn note_later(code: u16, message: impl Into<String>) {
    let _ = note(code, message);
}

/// The sink of one statement on this thread: open while the guard lives;
/// [`Collect::finish`] takes what was reported. A nested `Collect` (an
/// EXECUTE's inner statement) keeps the outer sink and takes nothing.
pub struct Collect {
    owner: bool,
}

impl Collect {
    /// Open this thread's sink (if none is open).
    pub fn open() -> Collect {
        SINK.with(|s| {
            let mut s = s.borrow_mut();
            if s.is_some() {
                Collect { owner: false }
            } else {
                *s = Some(Sink::default());
                Collect { owner: true }
            }
        })
    }

    /// The warnings reported since [`Collect::open`]; closes the sink.
    /// Empty for a nested guard (the outer one collects them).
    pub fn finish(mut self) -> Vec<Warning> {
        self.take()
    }

    fn take(&mut self) -> Vec<Warning> {
        if !self.owner {
            return Vec::new();
        }
        self.owner = false;
        SINK.with(|s| {
            s.borrow_mut()
                .take()
                .map(|s| s.warnings)
                .unwrap_or_default()
        })
    }
}

impl Drop for Collect {
    fn drop(&mut self) {
        self.take();
    }
}

/// While it lives, warnings on this thread are errors (rows being written
/// under a strict `sql_mode`). Nests. [`Strict::finish`] tells whether a
/// warning was escalated while it lived (the statement must then fail:
/// its writes are rolled back to the statement's savepoint).
pub struct Strict {
    armed: bool,
}

impl Strict {
    /// Escalate warnings when `on` (the session's mode is strict and the
    /// statement is not `INSERT IGNORE`); division by zero only when
    /// `division_by_zero` too (`ERROR_FOR_DIVISION_BY_ZERO`).
    pub fn enter(on: bool, division_by_zero: bool) -> Strict {
        let armed = on
            && SINK.with(|s| match s.borrow_mut().as_mut() {
                Some(sink) => {
                    if sink.strict == 0 {
                        sink.division_by_zero = division_by_zero;
                    }
                    sink.strict += 1;
                    true
                }
                None => false,
            });
        Strict { armed }
    }

    /// `Err` with the first warning escalated since [`Strict::enter`]
    /// (by the outermost guard; an inner one leaves it to the outer).
    pub fn finish(self) -> SqlResult<()> {
        if !self.armed {
            return Ok(());
        }
        SINK.with(|s| match s.borrow_mut().as_mut() {
            Some(sink) if sink.strict == 1 => sink.escalated.take().map_or(Ok(()), Err),
            _ => Ok(()),
        })
    }
}

impl Drop for Strict {
    fn drop(&mut self) {
        if self.armed {
            SINK.with(|s| {
                if let Some(sink) = s.borrow_mut().as_mut() {
                    debug_assert!(sink.strict > 0, "unbalanced strict guard");
                    sink.strict = sink.strict.saturating_sub(1);
                    if sink.strict == 0 {
                        sink.escalated = None;
                    }
                }
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warnings_are_collected_per_statement_and_escalated_under_strict() {
        // No sink: dropped, never an error.
        assert!(note(1292, "x").is_ok());
        let c = Collect::open();
        note(1292, "a").unwrap();
        {
            let inner = Collect::open();
            note(1365, "b").unwrap();
            assert!(inner.finish().is_empty(), "a nested guard takes nothing");
        }
        {
            let s = Strict::enter(true, true);
            let e = note(1292, "c").unwrap_err();
            assert_eq!(e.code, 1292);
            note_later(1366, "f");
            assert_eq!(s.finish().unwrap_err().message, "c", "the first escalation");
        }
        {
            let s = Strict::enter(true, true);
            note_later(1366, "g");
            assert_eq!(s.finish().unwrap_err().code, 1366);
            let s = Strict::enter(true, false);
            note(1365, "division by zero stays a warning").unwrap();
            s.finish().unwrap();
            let s = Strict::enter(false, true);
            note(1292, "h").unwrap();
            s.finish().unwrap();
        }
        note(1366, "e").unwrap();
        let got: Vec<u16> = c.finish().iter().map(|w| w.code).collect();
        assert_eq!(got, vec![1292, 1365, 1365, 1292, 1366]);
        // Closed again.
        assert!(note(1292, "x").is_ok());
        let c = Collect::open();
        assert!(c.finish().is_empty());
    }
}
