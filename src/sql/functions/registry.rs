//! Looking the table up: by name (the compiler's check of a call, the
//! typing code, the planner's determinism test, the session's privilege
//! check) and dispatching an evaluated call to its evaluator.

use std::collections::HashMap;
use std::sync::LazyLock;

use super::{Category, Eval, FunctionDef, Privilege, Purity, FUNCTIONS};
use crate::error::{code, SqlError, SqlResult};
use crate::sql::expr::collate;
use crate::sql::expr::tree::{AggFunc, CExpr, EvalCtx, FunctionHost, WinFunc};
use crate::types::{ColumnKind, Value};

/// Every name (and alias) → its declaration. Looked up once per call
/// evaluated (the compiled call keeps its name): foldhash, as the other
/// per-row maps.
type ByName = HashMap<&'static str, &'static FunctionDef, foldhash::fast::RandomState>;
static BY_NAME: LazyLock<ByName> = LazyLock::new(|| {
    let mut m = ByName::with_capacity_and_hasher(FUNCTIONS.len() * 2, Default::default());
    for f in FUNCTIONS {
        for n in std::iter::once(&f.name).chain(f.aliases) {
            let earlier = m.insert(*n, f);
            debug_assert!(earlier.is_none(), "function {n} declared twice");
        }
    }
    m
});

/// The declaration of function `name` (lower case), internal ones
/// included.
pub(crate) fn lookup(name: &str) -> Option<&'static FunctionDef> {
    BY_NAME.get(name).copied()
}

/// The aggregate `name` is, if it is one.
pub(crate) fn aggregate(name: &str) -> Option<AggFunc> {
    match lookup(name)?.eval {
        Eval::Aggregate(a) => Some(a),
        _ => None,
    }
}

/// The window function `name` is, if it is one (the aggregates, which
/// also take `OVER`, are not: see [`aggregate`]).
pub(crate) fn window(name: &str) -> Option<(WinFunc, &'static FunctionDef)> {
    let f = lookup(name)?;
    match f.eval {
        Eval::Window(w) => Some((w, f)),
        _ => None,
    }
}

fn unknown(name: &str) -> SqlError {
    SqlError::new(
        code::UNKNOWN_FUNCTION,
        format!("FUNCTION {name} does not exist"),
    )
}

pub(crate) use crate::sql::expr::value::wrong_count;

/// Check a call the user wrote (`name` lower case): the function exists
/// and is not internal (1305), and takes `nargs` arguments (1582).
pub(crate) fn check_call(name: &str, nargs: usize) -> SqlResult<&'static FunctionDef> {
    let f = lookup(name)
        .filter(|f| f.category != Category::Internal)
        .ok_or_else(|| unknown(name))?;
    if let Eval::Window(_) = f.eval {
        // A keyword of MySQL's grammar that needs its OVER clause.
        return Err(SqlError::parse(format!(
            "{}() needs an OVER clause",
            name.to_ascii_uppercase()
        )));
    }
    if !f.takes(nargs) {
        return Err(wrong_count(name));
    }
    Ok(f)
}

/// The result type of a call to `name` whose type does not depend on its
/// arguments; TEXT for the others (their rules live in the typing code)
/// and for names the registry does not know.
pub(crate) fn result_kind(name: &str) -> ColumnKind {
    lookup(name)
        .and_then(FunctionDef::fixed_kind)
        .unwrap_or(ColumnKind::Text)
}

/// Whether `name` gives a binary string when an argument is one (CONCAT,
/// SUBSTRING, …): its declared type is then BINARY rather than TEXT.
pub(crate) fn binary_if_arg_is(name: &str) -> bool {
    lookup(name).is_some_and(|f| f.binary_with_binary_arg)
}

/// Whether `name`'s result is JSON-typed (nests as a document in
/// JSON_OBJECT / JSON_ARRAY rather than as a string).
pub(crate) fn returns_json(name: &str) -> bool {
    lookup(name).is_some_and(|f| f.json)
}

/// Whether calls to `name` may differ within one statement, or act: never
/// folded to a constant, never moved.
pub(crate) fn is_volatile(name: &str) -> bool {
    lookup(name).is_some_and(|f| f.purity == Purity::Volatile)
}

/// Whether `name` gives the same answer for the same arguments within a
/// statement, wherever in the plan it is evaluated.
pub(crate) fn is_deterministic(name: &str) -> bool {
    lookup(name).is_none_or(|f| f.purity == Purity::Deterministic)
}

/// The privilege a call to `name` needs.
pub(crate) fn privilege(name: &str) -> Privilege {
    lookup(name).map_or(Privilege::None, |f| f.privilege)
}

/// Evaluate the call `name(args)` in `cx`.
pub(crate) fn eval_call(name: &str, args: &[CExpr], cx: &EvalCtx<'_>) -> SqlResult<Value> {
    let values = |args: &[CExpr]| {
        args.iter()
            .map(|a| a.eval(cx))
            .collect::<SqlResult<Vec<_>>>()
    };
    // The COLLATE helpers are a family of names built at compile time
    // (`collate <op>`), dispatched by prefix.
    if collate::is_internal(name) {
        return collate::call(name, &values(args)?, call_values);
    }
    let Some(f) = lookup(name) else {
        return Err(unknown(name));
    };
    match f.eval {
        Eval::Values(eval) => eval(name, &values(args)?),
        Eval::Exprs(eval) => eval(name, args, cx),
        Eval::Host => host_call(cx.funcs, name, &values(args)?),
        Eval::Aggregate(_) | Eval::Window(_) | Eval::Rewritten => Err(SqlError::new(
            code::UNKNOWN_ERROR,
            format!("internal error: {name} evaluated as a scalar call"),
        )),
    }
}

/// Evaluate `name` over argument values: for the callers that hold values
/// already (the COLLATE helpers call the function they stand for). Only
/// [`Eval::Values`] functions can be called this way.
fn call_values(name: &str, args: &[Value]) -> SqlResult<Value> {
    match lookup(name).map(|f| f.eval) {
        Some(Eval::Values(eval)) => eval(name, args),
        Some(_) => Err(SqlError::new(
            code::UNKNOWN_ERROR,
            format!("internal error: {name} called with values"),
        )),
        None => Err(unknown(name)),
    }
}

fn host_call(host: &dyn FunctionHost, name: &str, args: &[Value]) -> SqlResult<Value> {
    host.call(name, args).unwrap_or_else(|| Err(unknown(name)))
}
