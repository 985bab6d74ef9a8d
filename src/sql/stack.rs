//! The stack guard: every recursive descent after parsing that can nest
//! as deep as a statement says — planning a query block (subqueries,
//! derived tables, CTE and view bodies, set-operation operands) and
//! running a plan node (blocks, joins, set operations, subquery plans) —
//! goes through [`descend`], so a shape nobody thought of is covered by
//! construction as long as its recursion passes a guarded function.
//!
//! Owns: the per-thread count of guarded frames and the rule that each one
//! starts with at least [`RED_ZONE`] of stack — in place when the thread
//! has it, else on a fresh [`SEGMENT`] mapped for the call (touched only as
//! used) — and error 1436 past [`MAX_FRAMES`] (MySQL's "thread stack
//! overrun"). The statement-level bounds (nesting from the tokens:
//! `parse::check_depth`; 63 query blocks: 1473; JSON 100 levels: 3157)
//! stay where they are; this guard is what keeps the process alive when a
//! bound is larger than the frames between two checks can take.
//!
//! Never: decides what a statement may do; it only bounds stack.

use std::cell::Cell;

use crate::error::{SqlError, SqlResult};

/// Stack a guarded frame may use before the next guarded frame (debug
/// builds' planner frames between two query blocks take ~30 KiB).
pub const RED_ZONE: usize = 256 << 10;

/// A stack segment mapped when a guarded frame finds less than
/// [`RED_ZONE`] left.
pub const SEGMENT: usize = 2 << 20;

/// Guarded frames one thread may nest (1436 beyond): far above what the
/// statement bounds allow (2,000 set operators, 63 query blocks) and far
/// below what memory allows (each frame needs at most its red zone).
pub const MAX_FRAMES: usize = 8_192;

thread_local! {
    static DEPTH: Cell<usize> = const { Cell::new(0) };
}

/// Run `f` — one level of a recursive descent — with at least
/// [`RED_ZONE`] of stack, counting it; 1436 past [`MAX_FRAMES`].
pub fn descend<R>(f: impl FnOnce() -> SqlResult<R>) -> SqlResult<R> {
    let d = DEPTH.with(Cell::get);
    if d >= MAX_FRAMES {
        return Err(SqlError::new(
            1436,
            format!("Thread stack overrun: the statement nests more than {MAX_FRAMES} plan levels"),
        ));
    }
    struct Restore(usize);
    impl Drop for Restore {
        fn drop(&mut self) {
            DEPTH.with(|c| c.set(self.0));
        }
    }
    DEPTH.with(|c| c.set(d + 1));
    let _restore = Restore(d);
    stacker::maybe_grow(RED_ZONE, SEGMENT, f)
}

/// Guarded frames open on this thread (for the tests below).
#[cfg(test)]
fn depth() -> usize {
    DEPTH.with(Cell::get)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn down(n: usize) -> SqlResult<usize> {
        descend(|| {
            // A frame that eats stack, as a debug planner frame does.
            let pad = std::hint::black_box([0u8; 16 << 10]);
            if n == 0 {
                Ok(depth() + usize::from(pad[0]))
            } else {
                down(n - 1)
            }
        })
    }

    /// 5,000 frames of 16 KiB (80 MiB of stack) on a 256 KiB thread:
    /// answered; past the frame bound 1436; the count is restored after
    /// both.
    #[test]
    fn deep_descent_grows_the_stack_and_is_bounded() {
        let out = std::thread::Builder::new()
            .stack_size(256 << 10)
            .spawn(|| {
                let ok = down(5_000);
                let after_ok = depth();
                let too_deep = down(MAX_FRAMES + 10).map_err(|e| e.code);
                (ok, after_ok, too_deep, depth())
            })
            .unwrap()
            .join()
            .expect("the thread overflowed its stack");
        assert_eq!(out.0.map_err(|e| e.code), Ok(5_001));
        assert_eq!(out.1, 0);
        assert_eq!(out.2, Err(1436));
        assert_eq!(out.3, 0);
    }
}
