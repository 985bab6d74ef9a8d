//! The registry of SQL functions: one declaration per function (its names,
//! arity, result type, evaluator, privilege, determinism and a one-line
//! doc) in one static table, [`FUNCTIONS`].
//!
//! Owns: which function names exist, how many arguments each takes
//! (checked when an expression is compiled: error 1582, unknown names
//! 1305), the result type of the functions whose type does not depend on
//! their arguments, the dispatch from a name to its evaluator, the SUPER
//! requirement of the fault-injection functions, whether a call may be
//! folded or moved, and `docs/FUNCTIONS.md` (generated from the table).
//! The compiler ([`crate::sql::expr`]), the typing code
//! ([`crate::sql::plan::block`]), the session's function host
//! ([`crate::sql::host`]) and the planner read it; adding a function is one
//! entry in `table.rs` plus its evaluator.
//!
//! Files: `def.rs` (what a declaration says), `table.rs` (the
//! declarations), `registry.rs` (lookup and dispatch), `scalar.rs` and
//! `control.rs` and `uuid.rs` (evaluators), `docs.rs` (the generated reference).
//!
//! Never plans, never reads storage or the session: session-dependent
//! functions ([`Eval::Host`]) are answered by the
//! [`FunctionHost`](crate::sql::expr::FunctionHost) in the
//! evaluation context. Argument coercion is each evaluator's own (as
//! MySQL's `Item_func::val_*`), so the table records no coercion rule.
//!
//! Sits between the expression code's levels: it names the tree types
//! and value helpers below it (`expr::tree`, `expr::value`, `expr::arith`,
//! `expr::collate`, the date/time and REGEXP families) and never the
//! compiler and evaluator (`crate::sql::expr` itself), which call it
//! (`tests/layering.rs`).

mod control;
mod def;
mod digest;
#[cfg(test)]
mod docs;
mod registry;
mod scalar;
mod table;
mod uuid;

pub(crate) use def::{
    def, Category, Eval, FunctionDef, Parity, Privilege, Purity, Returns, TextLen, VARIADIC,
};
pub(crate) use registry::{
    aggregate, binary_if_arg_is, check_call, eval_call, is_deterministic, is_volatile, lookup,
    privilege, result_kind, returns_json, window, wrong_count,
};
pub(crate) use table::FUNCTIONS;

#[cfg(test)]
mod tests;
