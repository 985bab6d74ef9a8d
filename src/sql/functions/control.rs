//! Evaluators that take their arguments unevaluated: the control-flow
//! functions evaluate only the arguments that decide the answer, as MySQL
//! does (`COALESCE(1, COT(0))` is 1, not error 1690), and the JSON
//! functions need to know which arguments are JSON-typed. Moved here from
//! `CExpr::eval`, unchanged.
//!
//! They evaluate their arguments through `CExpr::eval` (and ask
//! `CExpr::is_json`): methods of the tree type this file names
//! ([`crate::sql::expr::tree`]), implemented by the evaluator in
//! `crate::sql::expr` — the one call back up the levels, which names no
//! file above the registry.

use crate::error::SqlResult;
use crate::sql::expr::tree::{CExpr, EvalCtx};
use crate::types::Value;

/// COALESCE: the first non-NULL argument; the rest are not evaluated.
pub(super) fn coalesce(_name: &str, args: &[CExpr], cx: &EvalCtx<'_>) -> SqlResult<Value> {
    for a in args {
        let v = a.eval(cx)?;
        if !v.is_null() {
            return Ok(v);
        }
    }
    Ok(Value::Null)
}

/// IFNULL(a, b): `b` is evaluated only when `a` is NULL.
pub(super) fn ifnull(name: &str, args: &[CExpr], cx: &EvalCtx<'_>) -> SqlResult<Value> {
    let [a, b] = args else {
        return Err(super::wrong_count(name));
    };
    Ok(match a.eval(cx)? {
        Value::Null => b.eval(cx)?,
        v => v,
    })
}

/// IF(c, a, b): only the chosen branch is evaluated.
pub(super) fn if_(name: &str, args: &[CExpr], cx: &EvalCtx<'_>) -> SqlResult<Value> {
    let [c, a, b] = args else {
        return Err(super::wrong_count(name));
    };
    if c.test(cx)? == Some(true) {
        a.eval(cx)
    } else {
        b.eval(cx)
    }
}

/// The JSON functions: each argument with whether it is JSON-typed (a JSON
/// function's result nests as a document, not as a string).
pub(super) fn json(name: &str, args: &[CExpr], cx: &EvalCtx<'_>) -> SqlResult<Value> {
    let vals = args
        .iter()
        .map(|a| {
            Ok(crate::json::JsonArg {
                value: a.eval(cx)?,
                json: a.is_json(),
            })
        })
        .collect::<SqlResult<Vec<_>>>()?;
    crate::json::call(name, &vals)
}
