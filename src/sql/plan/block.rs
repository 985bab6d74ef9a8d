//! Binding one SELECT into a query block ([`plan_block`]: scan or input
//! → filter → group / aggregate → window → project → sort → limit).
//!
//! A block reads one base table, nothing, a table function's rows, or the
//! output of another plan node ([`crate::sql::plan`]: joins, derived
//! tables, CTEs, UNION). Owns compiling the block's clauses, choosing its
//! access path ([`access`], or for vector / full-text queries an
//! ISCP-maintained index path through [`crate::sql::search`]), MySQL's
//! result types of its expressions (`kind_of_expr`, `decimal_result`, …)
//! and the statement forms it refuses (`reject_*`). The block's types are
//! in [`crate::sql::plan`]; the planner reaches this file through
//! [`BlockBinder`], which it implements. Never reads rows or runs
//! anything: the block is run by [`crate::sql::exec`].

use sqlparser::ast::{self as ast, Expr, Query, SelectItem};

use crate::error::{code, SqlError, SqlResult};
use crate::sql::access::{self, Access};
use crate::sql::expr::{
    collate, eval_const, fold_vector_literals, AggCall, AggFunc, CExpr, Compiler, NoHost, Scope,
    SubqueryPlanner,
};
use crate::sql::host::SessionHost;
use crate::sql::plan::rewrite::union_kind;
use crate::sql::plan::{fold_date_literals, Node, Plan, Source};
use crate::sql::Ctx;
use crate::types::{ColumnKind, DataType, Value};

/// (precision, scale) of an exact operand of kind `k`: a DECIMAL's type,
/// an integer's digits ([`int_precision`]).
fn exact_dims(e: &CExpr, k: ColumnKind, src: &Source, aggs: &[AggCall]) -> Option<(u8, u8)> {
    match k {
        ColumnKind::Decimal { precision, scale } => Some((precision, scale)),
        ColumnKind::Int => Some((int_precision(e, src, aggs), 0)),
        _ => None,
    }
}

/// The digits MySQL counts for an integer expression (its
/// `decimal_precision()`, which decides e.g. whether FLOOR/CEIL of a
/// DECIMAL built from it is BIGINT or DECIMAL): a literal's digits, a
/// column's type (INT 10, BIGINT 19 …), `+`/`-` one more than the wider
/// operand, `*` the sum, a bounded function its width; 19 (BIGINT) when
/// nothing narrower is known. Never below 1, never above 65.
#[recursive::recursive]
fn int_precision(e: &CExpr, src: &Source, aggs: &[AggCall]) -> u8 {
    use crate::sql::expr::BinOp::*;
    let p = match e {
        CExpr::Lit(Value::Int(i)) => i.unsigned_abs().checked_ilog10().map_or(1, |d| d + 1) as u8,
        CExpr::Lit(Value::Bool(_)) => 1,
        CExpr::Col(i) => match src.table.as_ref().and_then(|t| t.columns.get(*i)) {
            Some(c) => match c.ty {
                DataType::Bool => 1,
                DataType::Int => 10,
                DataType::Integer { bits, unsigned } => match (bits, unsigned) {
                    (8, _) => 3,
                    (16, _) => 5,
                    (24, false) => 7,
                    (24, true) => 8,
                    (32, _) => 10,
                    (_, true) => 20,
                    _ => 19,
                },
                _ => 19,
            },
            None => 19,
        },
        CExpr::Neg(x) => int_precision(x, src, aggs),
        CExpr::Bin(op @ (Add | Sub | Mul), a, b) => {
            let (p1, p2) = (int_precision(a, src, aggs), int_precision(b, src, aggs));
            if *op == Mul {
                p1.saturating_add(p2)
            } else {
                p1.max(p2).saturating_add(1)
            }
        }
        CExpr::Bin(IntDiv, a, _) => int_precision(a, src, aggs),
        CExpr::Bin(Mod, a, b) => int_precision(a, src, aggs).max(int_precision(b, src, aggs)),
        CExpr::Bin(..)
        | CExpr::Not(_)
        | CExpr::IsNull(..)
        | CExpr::InList(..)
        | CExpr::Between(..)
        | CExpr::Like(..)
        | CExpr::Exists(..)
        | CExpr::InSub(..)
        | CExpr::InSet(..) => 1,
        CExpr::Func(name, args) => match name.as_str() {
            crate::sql::expr::SHOW_SCALE => {
                args.first().map_or(19, |a| int_precision(a, src, aggs))
            }
            "abs" | "floor" | "ceil" | "ceiling" | "round" | "truncate" => {
                args.first()
                    .map_or(19, |a| match kind_of_expr(a, src, aggs) {
                        // FLOOR/CEIL of a DECIMAL: its integer digits, one more
                        // when it had a fraction (the carry).
                        ColumnKind::Decimal { precision, scale } => {
                            precision.saturating_sub(scale) + u8::from(scale > 0)
                        }
                        _ => int_precision(a, src, aggs),
                    })
            }
            "coalesce" | "ifnull" | "if" | "nullif" | "greatest" | "least" => {
                let values: &[CExpr] = match name.as_str() {
                    "if" => args.get(1..).unwrap_or_default(),
                    "nullif" => args.get(..1).unwrap_or_default(),
                    _ => args,
                };
                values
                    .iter()
                    .filter(|v| !matches!(v, CExpr::Lit(Value::Null)))
                    .map(|v| int_precision(v, src, aggs))
                    .max()
                    .unwrap_or(1)
            }
            "sign" | "is true" | "is false" | "json_valid" | "json_contains"
            | "json_contains_path" | "regexp_like" => 1,
            "month" | "day" | "dayofmonth" | "hour" | "minute" | "second" | "dayofweek"
            | "weekday" | "quarter" | "week" => 2,
            "dayofyear" => 3,
            "year" => 4,
            "microsecond" => 6,
            "to_days" => 7,
            "length" | "char_length" | "octet_length" | "character_length" | "instr" | "locate"
            | "regexp_instr" | "json_length" | "json_depth" | "datediff" | "unix_timestamp" => 10,
            _ => 19,
        },
        // CAST(x AS SIGNED): x's digits (a literal's as written).
        CExpr::Cast(x, _) => match (&**x, kind_of_expr(x, src, aggs)) {
            (_, ColumnKind::Int) => int_precision(x, src, aggs),
            (_, ColumnKind::Decimal { precision, scale }) => {
                precision.saturating_sub(scale) + u8::from(scale > 0)
            }
            (CExpr::Lit(Value::Float(f)), _) if f.abs() < 1e19 => (f.abs().trunc() as u64)
                .checked_ilog10()
                .map_or(1, |d| d + 1)
                as u8,
            (x, ColumnKind::Text) => text_len(x, src).map_or(19, |n| n.clamp(1, 19) as u8),
            _ => 19,
        },
        CExpr::Agg(i) => match aggs.get(*i) {
            Some(AggCall {
                func: AggFunc::Min | AggFunc::Max,
                arg: Some(a),
                ..
            }) => int_precision(a, src, aggs),
            _ => 19,
        },
        CExpr::Case(_, arms, els) => arms
            .iter()
            .map(|(_, r)| r)
            .chain(els.as_deref())
            .filter(|v| !matches!(v, CExpr::Lit(Value::Null)))
            .map(|v| int_precision(v, src, aggs))
            .max()
            .unwrap_or(1),
        _ => 19,
    };
    p.clamp(1, 65)
}

/// MySQL's result type of `a op b` (kinds `x`, `y`) when a DECIMAL is
/// involved with another exact operand (`Item_func_*::result_precision`):
/// for `+` and `-` scale max(s1, s2) and one more integer digit than the
/// wider; for `*` scale s1 + s2 and precision p1 + p2; for `%` scale
/// max(s1, s2). At most 65 digits and 30 fractional ones.
fn decimal_result(
    op: crate::sql::expr::BinOp,
    (a, x): (&CExpr, ColumnKind),
    (b, y): (&CExpr, ColumnKind),
    src: &Source,
    aggs: &[AggCall],
) -> Option<ColumnKind> {
    use crate::sql::expr::BinOp::*;
    if !matches!(x, ColumnKind::Decimal { .. }) && !matches!(y, ColumnKind::Decimal { .. }) {
        return None;
    }
    let ((p1, s1), (p2, s2)) = (exact_dims(a, x, src, aggs)?, exact_dims(b, y, src, aggs)?);
    let int = |p: u8, s: u8| p.saturating_sub(s);
    let (precision, scale) = match op {
        Add | Sub => {
            let scale = s1.max(s2);
            (
                int(p1, s1)
                    .max(int(p2, s2))
                    .saturating_add(1)
                    .saturating_add(scale),
                scale,
            )
        }
        Mod => {
            let scale = s1.max(s2);
            (int(p1, s1).max(int(p2, s2)).saturating_add(scale), scale)
        }
        Mul => (p1.saturating_add(p2), s1.saturating_add(s2).min(30)),
        _ => return None,
    };
    Some(ColumnKind::Decimal {
        precision: precision.clamp(1, 65),
        scale,
    })
}

/// The fractional digits MySQL 8 types a DOUBLE expression with, when
/// fixed (`None`: NOT_FIXED_DEC, all digits). A DOUBLE literal, column or
/// math function has none; an exact operand its scale; `+ - *` and the
/// functions returning an argument the widest of theirs (none if one has
/// none); `/` that plus div_precision_increment; PI() 6; ROUND/TRUNCATE
/// of a DOUBLE their constant digits; AVG four more than its argument.
/// Past 30 digits: none.
#[recursive::recursive]
pub(crate) fn double_decimals(e: &CExpr, src: &Source, aggs: &[AggCall]) -> Option<u8> {
    use crate::sql::expr::BinOp::*;
    let widest = |xs: &mut dyn Iterator<Item = &CExpr>| -> Option<u8> {
        let mut best = 0u8;
        for x in xs {
            best = best.max(double_decimals(x, src, aggs)?);
        }
        Some(best)
    };
    let d = match kind_of_expr(e, src, aggs) {
        ColumnKind::Int => return Some(0),
        ColumnKind::Decimal { scale, .. } => return Some(scale),
        ColumnKind::Float => match e {
            CExpr::Neg(x) => double_decimals(x, src, aggs)?,
            CExpr::Bin(Add | Sub | Mul | Mod, a, b) => widest(&mut [&**a, &**b].into_iter())?,
            CExpr::Bin(Div, a, b) => widest(&mut [&**a, &**b].into_iter())?.saturating_add(4),
            CExpr::Func(name, args) => match name.as_str() {
                "round" | "truncate" => match args.get(1) {
                    None => 0,
                    Some(CExpr::Lit(Value::Int(d))) => (*d).clamp(0, 30) as u8,
                    Some(_) => double_decimals(args.first()?, src, aggs)?,
                },
                "abs" => double_decimals(args.first()?, src, aggs)?,
                "floor" | "ceil" | "ceiling" => 0,
                "if" => widest(&mut args.iter().skip(1))?,
                "coalesce" | "ifnull" | "greatest" | "least" | "mod" => widest(&mut args.iter())?,
                "nullif" => double_decimals(args.first()?, src, aggs)?,
                // Fixed digits (PI() 6): as the function registry declares.
                _ => crate::sql::functions::lookup(name)?.decimals?,
            },
            CExpr::Case(_, arms, els) => {
                widest(&mut arms.iter().map(|(_, r)| r).chain(els.as_deref()))?
            }
            CExpr::Agg(i) => match aggs.get(*i) {
                Some(AggCall {
                    func: AggFunc::Avg,
                    arg: Some(a),
                    ..
                }) => double_decimals(a, src, aggs)?.saturating_add(4),
                // STD / VARIANCE: four more too (MySQL's
                // Item_sum_variance: the argument's decimals + 4).
                Some(AggCall {
                    func: AggFunc::Stat(f),
                    arg: Some(a),
                    ..
                }) if !f.is_bitwise() => double_decimals(a, src, aggs)?.saturating_add(4),
                Some(AggCall {
                    func: AggFunc::Sum | AggFunc::Min | AggFunc::Max,
                    arg: Some(a),
                    ..
                }) => double_decimals(a, src, aggs)?,
                _ => return None,
            },
            _ => return None,
        },
        // A NULL literal counts as 0 beside others; strings have none.
        _ if matches!(e, CExpr::Lit(Value::Null)) => 0,
        _ => return None,
    };
    (d <= 30).then_some(d)
}

/// Whether `x` is a constant (not a literal) whose integer value is
/// negative: evaluated once here, warnings muted (the statement reports
/// them when it runs); an error counts as not negative.
fn negative_constant(x: &CExpr) -> bool {
    /// `is_constant`, CASE included.
    #[recursive::recursive]
    fn constant(e: &CExpr) -> bool {
        match e {
            CExpr::Case(base, arms, els) => {
                base.as_deref().is_none_or(constant)
                    && arms.iter().all(|(w, t)| constant(w) && constant(t))
                    && els.as_deref().is_none_or(constant)
            }
            CExpr::Bin(_, a, b) => constant(a) && constant(b),
            CExpr::Not(a) | CExpr::Neg(a) | CExpr::IsNull(a, _) | CExpr::Cast(a, _) => constant(a),
            CExpr::Func(name, args) => {
                CExpr::Func(name.clone(), Vec::new()).is_constant() && args.iter().all(constant)
            }
            other => other.is_constant(),
        }
    }
    if matches!(x, CExpr::Lit(_)) || !constant(x) {
        return false;
    }
    let _mute = crate::warnings::Mute::new();
    matches!(eval_const(x, &NoHost), Ok(Value::Int(v)) if v < 0)
}

/// BETWEEN takes one comparison type from its operands' *types*: a number
/// among strings makes them all numbers even in a row where the number is
/// NULL (`' 12' NOT BETWEEN '1.5' AND d` is NULL for a NULL DECIMAL `d`,
/// not a string comparison). The evaluator decides from values, so a
/// string operand beside a numeric one is made a number here (`s + 0`:
/// MySQL's conversion, its warning included).
fn numeric_between(e: CExpr, src: &Source, aggs: &[AggCall]) -> CExpr {
    e.rewrite(&mut |x| match x {
        CExpr::Between(v, lo, hi, neg) => {
            let kinds = [&*v, &*lo, &*hi].map(|o| kind_of_expr(o, src, aggs));
            let numeric = kinds.iter().any(|k| {
                matches!(
                    k,
                    ColumnKind::Int | ColumnKind::Float | ColumnKind::Decimal { .. }
                )
            }) && kinds.iter().all(|k| {
                !matches!(
                    k,
                    ColumnKind::Date | ColumnKind::DateTime(_) | ColumnKind::Vector
                )
            });
            let num = |o: Box<CExpr>, k: ColumnKind| -> Box<CExpr> {
                if numeric && k == ColumnKind::Text && !matches!(*o, CExpr::Lit(Value::Null)) {
                    Box::new(CExpr::Bin(
                        crate::sql::expr::BinOp::Add,
                        o,
                        Box::new(CExpr::Lit(Value::Int(0))),
                    ))
                } else {
                    o
                }
            };
            CExpr::Between(num(v, kinds[0]), num(lo, kinds[1]), num(hi, kinds[2]), neg)
        }
        other => other,
    })
}

/// The most characters a string expression can have, when known (a
/// literal, a VARCHAR column, the functions whose length the registry
/// declares: case and trim functions, REVERSE, CONCAT).
#[recursive::recursive]
fn text_len(e: &CExpr, src: &Source) -> Option<usize> {
    match e {
        CExpr::Lit(Value::Text(t)) => Some(t.chars().count()),
        CExpr::Col(i) => match src.table.as_ref()?.columns.get(*i)?.ty {
            DataType::Varchar(n) => usize::try_from(n).ok(),
            _ => None,
        },
        // As the function registry declares the function's length.
        CExpr::Func(name, args) => match crate::sql::functions::lookup(name)?.text_len {
            crate::sql::functions::TextLen::OfFirstArg => text_len(args.first()?, src),
            crate::sql::functions::TextLen::SumOfArgs => {
                args.iter().map(|a| text_len(a, src)).sum()
            }
            crate::sql::functions::TextLen::Unknown => None,
        },
        _ => None,
    }
}

/// IFNULL / COALESCE of a DECIMAL type wrapped in
/// [`crate::sql::expr::SHOW_SCALE`] so that, as text, they show their
/// type's scale (MySQL 8's `Item_func_numhybrid::val_str`). IF and CASE
/// are left alone: MySQL 8 converts the chosen argument's own text.
/// A DOUBLE with fixed decimals under CAST … AS CHAR or CONCAT goes
/// through [`crate::sql::expr::FIXED_TEXT`] (`Item_real_func::val_str`).
fn show_hybrid_scales(e: CExpr, src: &Source, aggs: &[AggCall]) -> CExpr {
    let fixed = |x: CExpr| -> CExpr {
        if kind_of_expr(&x, src, aggs) != ColumnKind::Float {
            return x;
        }
        match double_decimals(&x, src, aggs) {
            Some(d) => CExpr::Func(
                crate::sql::expr::FIXED_TEXT.into(),
                vec![x, CExpr::Lit(Value::Int(i64::from(d)))],
            ),
            None => x,
        }
    };
    e.rewrite(&mut |x| match x {
        CExpr::Cast(x, crate::sql::expr::CastTo::Text(n)) => {
            CExpr::Cast(Box::new(fixed(*x)), crate::sql::expr::CastTo::Text(n))
        }
        CExpr::Func(name, args) if name == "concat" => {
            CExpr::Func(name, args.into_iter().map(fixed).collect())
        }
        CExpr::Func(name, args) if name == "ifnull" || name == "coalesce" => {
            let f = CExpr::Func(name, args);
            match kind_of_expr(&f, src, aggs) {
                ColumnKind::Decimal { scale, .. } if scale > 0 => CExpr::Func(
                    crate::sql::expr::SHOW_SCALE.into(),
                    vec![f, CExpr::Lit(Value::Int(i64::from(scale)))],
                ),
                _ => f,
            }
        }
        other => other,
    })
}

/// The common type of the values an expression may return (CASE's arms,
/// COALESCE's arguments …): their types combined as UNION combines them,
/// NULL literals aside; TEXT when there is none.
fn common_kind<'e>(
    values: impl Iterator<Item = &'e CExpr>,
    src: &Source,
    aggs: &[AggCall],
) -> ColumnKind {
    values
        .filter(|v| !matches!(v, CExpr::Lit(Value::Null)))
        .map(|v| kind_of_expr(v, src, aggs))
        .reduce(union_kind)
        .unwrap_or(ColumnKind::Text)
}

/// LAG / LEAD's type with a default `d`: both aggregated as COALESCE's
/// arguments are, an integer beside a DECIMAL keeping its digits
/// (`LAG(int_col, 1, 1.5)` is DECIMAL(11,1) in MySQL, not (2,1)).
fn lag_kind(a: &CExpr, d: Option<&CExpr>, src: &Source, aggs: &[AggCall]) -> ColumnKind {
    let common = common_kind([a].into_iter().chain(d), src, aggs);
    let ColumnKind::Decimal { precision, scale } = common else {
        return common;
    };
    let int_digits = [Some(a), d]
        .into_iter()
        .flatten()
        .filter(|x| kind_of_expr(x, src, aggs) == ColumnKind::Int)
        .map(|x| int_precision(x, src, aggs))
        .max()
        .unwrap_or(0);
    ColumnKind::Decimal {
        precision: int_digits
            .max(precision.saturating_sub(scale))
            .saturating_add(scale)
            .min(65),
        scale,
    }
}

#[recursive::recursive]
pub(crate) fn kind_of_expr(e: &CExpr, src: &Source, aggs: &[AggCall]) -> ColumnKind {
    match e {
        CExpr::Col(i) => src.kinds.get(*i).copied().unwrap_or(ColumnKind::Text),
        CExpr::Scalar(sp) => sp.kind,
        CExpr::Exists(..) | CExpr::InSub(..) | CExpr::InSet(..) => ColumnKind::Int,
        CExpr::Lit(Value::Int(_)) | CExpr::Lit(Value::Bool(_)) => ColumnKind::Int,
        CExpr::Lit(Value::Float(_)) => ColumnKind::Float,
        CExpr::Lit(Value::Bytes(_)) => ColumnKind::Bytes,
        CExpr::Lit(Value::Decimal(d)) => ColumnKind::Decimal {
            // At least one integer digit, as MySQL counts (0.5 is (2,1)).
            precision: (d.int_digits().max(1) + u32::from(d.scale())).clamp(1, 65) as u8,
            scale: d.scale(),
        },
        // The negation of a number has its type; of anything else (a
        // string) it is a DOUBLE.
        CExpr::Neg(x) => match kind_of_expr(x, src, aggs) {
            // MySQL 8 (Item_func_neg::resolve_type): the negation of a
            // constant integer that is negative is DECIMAL (its negation
            // might not fit a BIGINT), except the literal BIGINT minimum.
            ColumnKind::Int if negative_constant(x) => ColumnKind::Decimal {
                precision: int_precision(x, src, aggs).saturating_add(1).min(65),
                scale: 0,
            },
            k @ (ColumnKind::Int | ColumnKind::Float | ColumnKind::Decimal { .. }) => k,
            _ => ColumnKind::Float,
        },
        CExpr::Match(_) => ColumnKind::Float,
        CExpr::Agg(i) => match aggs.get(*i) {
            Some(AggCall {
                func: AggFunc::Count | AggFunc::CountStar,
                ..
            }) => ColumnKind::Int,
            Some(AggCall {
                func: AggFunc::Stat(f),
                ..
            }) if f.is_bitwise() => ColumnKind::Int,
            Some(AggCall {
                func: AggFunc::Stat(f),
                ..
            }) if f.is_json() => ColumnKind::Text,
            Some(AggCall {
                func: AggFunc::Stat(_),
                ..
            }) => ColumnKind::Float,
            Some(AggCall {
                func: AggFunc::Avg,
                arg: Some(a),
                ..
            }) => match kind_of_expr(a, src, aggs) {
                // MySQL: AVG of a DECIMAL is DECIMAL with 4 more digits,
                // of an integer DECIMAL(p + 4, 4).
                ColumnKind::Decimal { precision, scale } => ColumnKind::Decimal {
                    precision: precision.saturating_add(4).min(65),
                    scale: scale.saturating_add(4).min(30),
                },
                ColumnKind::Int => ColumnKind::Decimal {
                    precision: 23,
                    scale: 4,
                },
                _ => ColumnKind::Float,
            },
            Some(AggCall {
                func: AggFunc::Sum,
                arg: Some(a),
                ..
            }) => match kind_of_expr(a, src, aggs) {
                // MySQL: SUM of DECIMAL(p, s) is DECIMAL(p + 22, s).
                ColumnKind::Decimal { precision, scale } => ColumnKind::Decimal {
                    precision: precision.saturating_add(22).min(65),
                    scale,
                },
                ColumnKind::Int => ColumnKind::Decimal {
                    precision: 65,
                    scale: 0,
                },
                ColumnKind::Date | ColumnKind::DateTime(_) | ColumnKind::Text => ColumnKind::Float,
                k => k,
            },
            // LAG / LEAD with a default: the type of both (MySQL's
            // Item_lead_lag aggregates them as COALESCE does).
            Some(AggCall {
                arg: Some(a),
                window: Some(w),
                ..
            }) if w.default.is_some() => lag_kind(a, w.default.as_ref(), src, aggs),
            Some(AggCall { arg: Some(a), .. }) => kind_of_expr(a, src, aggs),
            _ => ColumnKind::Text,
        },
        CExpr::Func(name, args) if name == "@@" || name == "@@global" => match args.first() {
            Some(CExpr::Lit(Value::Text(v))) if crate::sql::vars::is_integer(v) => ColumnKind::Int,
            _ => ColumnKind::Text,
        },
        // `x COLLATE c` is x; a collation-aware GREATEST/LEAST/NULLIF/
        // REGEXP_SUBSTR/REGEXP_REPLACE has the type of the call it stands
        // for; the other collation-aware operators (comparisons, INSTR,
        // LOCATE, REGEXP_LIKE/INSTR) are integers (expr::collate).
        CExpr::Func(name, args) if collate::is_internal(name) => match name.as_str() {
            collate::MARK => args
                .first()
                .map_or(ColumnKind::Text, |a| kind_of_expr(a, src, aggs)),
            "collate greatest"
            | "collate least"
            | "collate nullif"
            | "collate regexp_substr"
            | "collate regexp_replace" => kind_of_expr(
                &CExpr::Func(
                    name["collate ".len()..].to_string(),
                    args.get(1..).unwrap_or_default().to_vec(),
                ),
                src,
                aggs,
            ),
            "collate key" => ColumnKind::Text,
            _ => ColumnKind::Int,
        },
        CExpr::Func(name, args) => match name.as_str() {
            // FLOOR / CEIL of a double are doubles, of an integer
            // integers; of a DECIMAL (scale 0, one more integer digit when
            // it had a fraction, as the rounding may carry) BIGINT while
            // that has at most 18 digits, else DECIMAL (MySQL 8's
            // Item_func_int_val::resolve_type).
            "floor" | "ceil" | "ceiling" => match args.first() {
                Some(CExpr::Lit(Value::Float(_))) => ColumnKind::Float,
                Some(CExpr::Lit(Value::Int(_) | Value::Bool(_) | Value::Null)) | None => {
                    ColumnKind::Int
                }
                Some(a) => match kind_of_expr(a, src, aggs) {
                    ColumnKind::Float | ColumnKind::Text => ColumnKind::Float,
                    ColumnKind::Decimal { precision, scale } => {
                        let int = precision.saturating_sub(scale) + u8::from(scale > 0);
                        if int >= 19 {
                            ColumnKind::Decimal {
                                precision: int.min(65),
                                scale: 0,
                            }
                        } else {
                            ColumnKind::Int
                        }
                    }
                    _ => ColumnKind::Int,
                },
            },
            "unix_timestamp" if args.is_empty() => ColumnKind::Int,
            // UNIX_TIMESTAMP(x): BIGINT, or DECIMAL with the fractional
            // digits of a literal that has some (MariaDB folds a constant
            // string expression the same way).
            "unix_timestamp" if args.len() == 1 => match &args[0] {
                CExpr::Lit(Value::Text(t)) => {
                    let frac = t
                        .trim()
                        .rsplit_once('.')
                        .filter(|(head, _)| head.contains(':'))
                        .map_or(0, |(_, f)| f.bytes().take_while(u8::is_ascii_digit).count());
                    match frac.min(6) as u8 {
                        0 => ColumnKind::Int,
                        n => ColumnKind::Decimal {
                            precision: 11 + n,
                            scale: n,
                        },
                    }
                }
                _ => ColumnKind::Int,
            },
            // Temporal results are sent with a temporal type (drivers then
            // return date / datetime objects, not strings).
            "from_unixtime" if args.len() == 1 => ColumnKind::DateTime(None),
            // NOW(fsp): exactly fsp digits (whole seconds without one).
            "now" | "current_timestamp" | "sysdate" => match args.first() {
                None => ColumnKind::DateTime(Some(0)),
                Some(CExpr::Lit(Value::Int(n))) if (0..=6).contains(n) => {
                    ColumnKind::DateTime(Some(*n as u8))
                }
                Some(_) => ColumnKind::DateTime(None),
            },
            // MySQL: DATE + a day-or-longer interval is a DATE, DATE or
            // DATETIME + anything else a DATETIME, text stays text.
            "date_add interval" | "date_sub interval" => {
                let unit = match args.get(2) {
                    Some(CExpr::Lit(Value::Text(u))) => u.as_str(),
                    _ => "",
                };
                match args.first().map(|a| kind_of_expr(a, src, aggs)) {
                    Some(ColumnKind::Date)
                        if matches!(unit, "day" | "week" | "month" | "quarter" | "year") =>
                    {
                        ColumnKind::Date
                    }
                    Some(ColumnKind::Date | ColumnKind::DateTime(_)) => ColumnKind::DateTime(None),
                    _ => ColumnKind::Text,
                }
            }
            crate::sql::expr::SHOW_SCALE => args
                .first()
                .map_or(ColumnKind::Text, |a| kind_of_expr(a, src, aggs)),
            // Functions returning one of their arguments: the arguments'
            // common type (NULL literals aside), as UNION combines them.
            "coalesce" | "ifnull" | "if" | "nullif" | "greatest" | "least" => {
                let values: &[CExpr] = match name.as_str() {
                    "if" => args.get(1..).unwrap_or_default(),
                    "nullif" => args.get(..1).unwrap_or_default(),
                    _ => args,
                };
                common_kind(values.iter(), src, aggs)
            }
            // Numeric functions keep their argument's type; ROUND and
            // TRUNCATE of a DECIMAL take the scale their second argument
            // gives (a constant), MOD the wider scale.
            "abs" | "round" | "truncate" | "mod" => {
                let kinds: Vec<ColumnKind> = args
                    .iter()
                    .take(if name == "mod" { 2 } else { 1 })
                    .map(|a| kind_of_expr(a, src, aggs))
                    .collect();
                match kinds.iter().copied().reduce(union_kind) {
                    Some(ColumnKind::Int) => ColumnKind::Int,
                    Some(ColumnKind::Float) => ColumnKind::Float,
                    Some(ColumnKind::Decimal { precision, scale }) => match name.as_str() {
                        "round" | "truncate" => {
                            let d = match args.get(1) {
                                None => Some(0),
                                Some(CExpr::Lit(Value::Int(d))) => Some(*d),
                                _ => None,
                            };
                            match d {
                                Some(d) => {
                                    let to = d.clamp(0, 30) as u8;
                                    let int = precision.saturating_sub(scale);
                                    // Rounding away digits may carry into
                                    // one more integer digit (9.99 → 10.0).
                                    let carry = u8::from(name == "round" && to < scale);
                                    ColumnKind::Decimal {
                                        precision: int
                                            .saturating_add(to)
                                            .saturating_add(carry)
                                            .clamp(1, 65),
                                        scale: to,
                                    }
                                }
                                None => ColumnKind::Decimal { precision, scale },
                            }
                        }
                        "mod" => match (args.first(), args.get(1), kinds.get(1)) {
                            (Some(a), Some(b), Some(&y)) => decimal_result(
                                crate::sql::expr::BinOp::Mod,
                                (a, kinds[0]),
                                (b, y),
                                src,
                                aggs,
                            )
                            .unwrap_or(ColumnKind::Float),
                            _ => ColumnKind::Float,
                        },
                        _ => ColumnKind::Decimal { precision, scale },
                    },
                    // Of a string (or a date): a DOUBLE, as MySQL.
                    Some(ColumnKind::Text | ColumnKind::Date | ColumnKind::DateTime(_)) => {
                        ColumnKind::Float
                    }
                    _ => ColumnKind::Text,
                }
            }
            // String functions of a binary string give one (MySQL).
            n if crate::sql::functions::binary_if_arg_is(n)
                && args
                    .iter()
                    .any(|a| kind_of_expr(a, src, aggs) == ColumnKind::Bytes) =>
            {
                ColumnKind::Bytes
            }
            // The functions whose type does not depend on their
            // arguments: as the function registry declares them.
            _ => crate::sql::functions::result_kind(name),
        },
        CExpr::Bin(op, a, b) => {
            use crate::sql::expr::BinOp::*;
            match op {
                Eq | NotEq | Lt | LtEq | Gt | GtEq | And | Or | Xor | NullSafeEq => ColumnKind::Int,
                IntDiv => ColumnKind::Int,
                Div => match (kind_of_expr(a, src, aggs), kind_of_expr(b, src, aggs)) {
                    // MySQL: exact / exact is DECIMAL with the dividend's
                    // scale + div_precision_increment, precision
                    // p1 + s2 + 4.
                    (
                        x @ (ColumnKind::Int | ColumnKind::Decimal { .. }),
                        y @ (ColumnKind::Int | ColumnKind::Decimal { .. }),
                    ) => {
                        let (p1, s1) = exact_dims(a, x, src, aggs).unwrap_or((65, 0));
                        let (_, s2) = exact_dims(b, y, src, aggs).unwrap_or((65, 0));
                        ColumnKind::Decimal {
                            precision: p1.saturating_add(s2).saturating_add(4).clamp(1, 65),
                            scale: s1.saturating_add(4).min(30),
                        }
                    }
                    (ColumnKind::Vector, _) | (_, ColumnKind::Vector) => ColumnKind::Vector,
                    _ => ColumnKind::Float,
                },
                _ => {
                    let (x, y) = (kind_of_expr(a, src, aggs), kind_of_expr(b, src, aggs));
                    if x == ColumnKind::Vector || y == ColumnKind::Vector {
                        ColumnKind::Vector
                    } else if let Some(k) = decimal_result(*op, (a, x), (b, y), src, aggs) {
                        k
                    } else if x == ColumnKind::Float
                        || y == ColumnKind::Float
                        || x == ColumnKind::Text
                        || y == ColumnKind::Text
                        || matches!(
                            (x, y),
                            (ColumnKind::Decimal { .. }, _) | (_, ColumnKind::Decimal { .. })
                        )
                    {
                        // A string in arithmetic is a DOUBLE.
                        ColumnKind::Float
                    } else {
                        ColumnKind::Int
                    }
                }
            }
        }
        CExpr::Cast(_, to) => {
            use crate::sql::expr::CastTo;
            match to {
                CastTo::Int | CastTo::Unsigned => ColumnKind::Int,
                CastTo::Float => ColumnKind::Float,
                CastTo::Decimal(precision, scale) => ColumnKind::Decimal {
                    precision: *precision,
                    scale: *scale,
                },
                CastTo::Text(_) => ColumnKind::Text,
                CastTo::DateTime(fsp) => ColumnKind::DateTime(Some(*fsp)),
                CastTo::Date => ColumnKind::Date,
                CastTo::Vector(_) => ColumnKind::Vector,
                CastTo::Binary(_) => ColumnKind::Bytes,
            }
        }
        // CASE: its results' common type (NULL literals aside).
        CExpr::Case(_, arms, els) => {
            common_kind(arms.iter().map(|(_, r)| r).chain(els.as_deref()), src, aggs)
        }
        CExpr::Not(_)
        | CExpr::IsNull(..)
        | CExpr::InList(..)
        | CExpr::Between(..)
        | CExpr::Like(..) => ColumnKind::Int,
        _ => ColumnKind::Text,
    }
}

/// Refuse (error 1235, naming the clause) every query-level part this
/// engine does not implement, so that nothing is silently ignored: a
/// clause the parser accepted but the executor would skip must never
/// change an answer.
pub fn reject_query(q: &Query) -> SqlResult<()> {
    let no = |what: &str| Err(SqlError::unsupported(what));
    if q.fetch.is_some() {
        return no("FETCH FIRST");
    }
    if q.for_clause.is_some() {
        return no("FOR XML/JSON/BROWSE");
    }
    if q.settings.is_some() {
        return no("SETTINGS");
    }
    if q.format_clause.is_some() {
        return no("FORMAT");
    }
    if !q.pipe_operators.is_empty() {
        return no("pipe operators");
    }
    if let Some(ast::LimitClause::LimitOffset { limit_by, .. }) = &q.limit_clause {
        if !limit_by.is_empty() {
            return no("LIMIT BY");
        }
    }
    if let Some(ob) = &q.order_by {
        if ob.interpolate.is_some() {
            return no("INTERPOLATE");
        }
        if let ast::OrderByKind::Expressions(list) = &ob.kind {
            if list
                .iter()
                .any(|o| o.with_fill.is_some() || o.options.nulls_first.is_some())
            {
                return no("NULLS FIRST/LAST or WITH FILL in ORDER BY");
            }
        }
    }
    for l in &q.locks {
        if l.of.is_some() {
            return no("FOR UPDATE OF");
        }
    }
    Ok(())
}

/// Refuse the parts of one SELECT block this engine does not implement.
pub fn reject_select(sel: &ast::Select) -> SqlResult<()> {
    let no = |what: &str| Err(SqlError::unsupported(what));
    if matches!(sel.distinct, Some(ast::Distinct::On(_))) {
        return no("DISTINCT ON");
    }
    if sel.top.is_some() {
        return no("TOP");
    }
    if sel.exclude.is_some() {
        return no("EXCLUDE");
    }
    if sel.into.is_some() {
        return no("SELECT … INTO");
    }
    if !sel.lateral_views.is_empty() {
        return no("LATERAL VIEW");
    }
    if sel.prewhere.is_some() {
        return no("PREWHERE");
    }
    if !sel.connect_by.is_empty() {
        return no("CONNECT BY");
    }
    if !sel.cluster_by.is_empty() || !sel.distribute_by.is_empty() || !sel.sort_by.is_empty() {
        return no("CLUSTER/DISTRIBUTE/SORT BY");
    }
    if sel.qualify.is_some() {
        return no("QUALIFY");
    }
    if sel.value_table_mode.is_some() {
        return no("SELECT AS STRUCT/VALUE");
    }
    if let Some(m) = &sel.select_modifiers {
        if m.sql_calc_found_rows {
            return no("SQL_CALC_FOUND_ROWS");
        }
    }
    match &sel.group_by {
        ast::GroupByExpr::Expressions(_, mods) if !mods.is_empty() => {
            return no("GROUP BY … WITH ROLLUP/CUBE/TOTALS")
        }
        _ => {}
    }
    Ok(())
}

/// Refuse table references with options this engine does not implement.
pub fn reject_table_factor(f: &ast::TableFactor) -> SqlResult<()> {
    let no = |what: &str| Err(SqlError::unsupported(what));
    if let ast::TableFactor::Table {
        alias,
        args,
        with_hints,
        version,
        partitions,
        with_ordinality,
        json_path,
        sample,
        ..
    } = f
    {
        if alias.as_ref().is_some_and(|a| !a.columns.is_empty()) {
            return no("column aliases on a table");
        }
        if args.is_some() {
            if let ast::TableFactor::Table { name, .. } = f {
                if crate::sql::expr::object_parts(name)
                    .last()
                    .is_some_and(|n| n.eq_ignore_ascii_case("generate_series"))
                {
                    return Ok(());
                }
            }
            return no("table functions");
        }
        if !with_hints.is_empty() {
            return no("table hints");
        }
        if version.is_some() {
            return no("time travel (AS OF)");
        }
        if !partitions.is_empty() {
            return no("PARTITION selection");
        }
        if *with_ordinality || json_path.is_some() || sample.is_some() {
            return no("this table reference");
        }
    }
    Ok(())
}

/// What binding a block needs of the statement's planner (the planner,
/// which calls [`plan_block`], implements it; this file does not name it).
pub trait BlockBinder<'a>: SubqueryPlanner {
    /// The statement's context.
    fn ctx(&mut self) -> &mut Ctx<'a>;
    /// Record outer references met while compiling the block's
    /// expressions (when it is a subquery).
    fn note_refs(&mut self, refs: &[usize]);
}

/// Compile a SELECT block (or, with `sel` = `None`, the ORDER BY / LIMIT
/// over a UNION) plus ORDER BY / LIMIT into a plan over `source`.
pub fn plan_block<'a>(
    pl: &mut dyn BlockBinder<'a>,
    q: &Query,
    sel: Option<&ast::Select>,
    mut source: Source,
    outer: Option<&Scope>,
) -> SqlResult<Plan> {
    let has_group = sel.is_some_and(
        |sel| !matches!(&sel.group_by, ast::GroupByExpr::Expressions(v, _) if v.is_empty()),
    );
    let scope = source.scope.clone();
    let mut comp = Compiler::new(&scope, true);
    comp.outer = outer;
    comp.sub = Some(pl);
    comp.allow_windows = true;
    if let Some(sel) = sel {
        crate::sql::expr::window_spec::check_named(&sel.named_window)?;
        comp.named_windows = &sel.named_window;
    }

    // Projection.
    let mut projection = Vec::new();
    let items: &[SelectItem] = match sel {
        Some(sel) => &sel.projection,
        None => &[],
    };
    if sel.is_none() {
        for &i in &source.star {
            projection.push((source.scope.cols[i].1.clone(), CExpr::Col(i)));
        }
    }
    for item in items {
        match item {
            SelectItem::Wildcard(_) => {
                if source.scope.cols.is_empty() {
                    return Err(SqlError::new(code::NO_TABLES_USED, "No tables used"));
                }
                for &i in &source.star {
                    projection.push((source.scope.cols[i].1.clone(), CExpr::Col(i)));
                }
            }
            SelectItem::QualifiedWildcard(kind, _) => {
                let q = match kind {
                    ast::SelectItemQualifiedWildcardKind::ObjectName(n) => {
                        crate::sql::expr::object_parts(n)
                            .last()
                            .cloned()
                            .unwrap_or_default()
                    }
                    _ => return Err(SqlError::unsupported("this qualified wildcard")),
                };
                let before = projection.len();
                for (i, (t, c)) in source.scope.cols.iter().enumerate() {
                    if t.eq_ignore_ascii_case(&q) {
                        projection.push((c.clone(), CExpr::Col(i)));
                    }
                }
                if projection.len() == before {
                    return Err(SqlError::new(
                        code::BAD_TABLE,
                        format!("Unknown table '{q}'"),
                    ));
                }
            }
            SelectItem::UnnamedExpr(e) => {
                let name = match e {
                    Expr::Identifier(i) => i.value.clone(),
                    Expr::CompoundIdentifier(p)
                        if !p.first().is_some_and(|i| i.value.starts_with("@@")) =>
                    {
                        p.last().map(|i| i.value.clone()).unwrap_or_default()
                    }
                    other => other.to_string(),
                };
                projection.push((name, comp.compile(e)?));
            }
            SelectItem::ExprWithAlias { expr, alias } => {
                projection.push((alias.value.clone(), comp.compile(expr)?));
            }
            other => return Err(SqlError::unsupported(format!("select item {other}"))),
        }
    }
    // Window functions only in the select list and ORDER BY.
    comp.allow_windows = false;
    // WHERE may not contain aggregates.
    let filter = match sel.and_then(|s| s.selection.as_ref()) {
        Some(w) => {
            let saved = comp.allow_aggs;
            comp.allow_aggs = false;
            let f = comp.compile(w).map_err(|e| e.in_clause("where clause"));
            comp.allow_aggs = saved;
            Some(f?)
        }
        None => None,
    };
    let group_by = match sel.map(|s| &s.group_by) {
        None => Vec::new(),
        Some(ast::GroupByExpr::Expressions(v, _)) => {
            let mut out = Vec::new();
            for e in v {
                let g = resolve_alias_or_pos(e, &projection, "group statement")?.map_or_else(
                    || comp.compile(e).map_err(|e| e.in_clause("group statement")),
                    Ok,
                )?;
                // Under a non-binary collation, grouped by weight string.
                out.push(comp.sort_key(g)?);
            }
            out
        }
        Some(ast::GroupByExpr::All(_)) => return Err(SqlError::unsupported("GROUP BY ALL")),
    };
    let having = match sel.and_then(|s| s.having.as_ref()) {
        Some(h) => Some(compile_having(&mut comp, h, &projection)?),
        None => None,
    };
    let mut order_by = Vec::new();
    comp.allow_windows = true;
    if let Some(ob) = &q.order_by {
        let ast::OrderByKind::Expressions(list) = &ob.kind else {
            return Err(SqlError::unsupported("ORDER BY ALL"));
        };
        for o in list {
            let desc = matches!(o.options.sort, Some(ast::OrderBySort::Desc));
            let e = match resolve_alias_or_pos(&o.expr, &projection, "order clause")? {
                Some(e) => e,
                None => comp
                    .compile(&o.expr)
                    .map_err(|e| e.in_clause("order clause"))?,
            };
            order_by.push((comp.sort_key(e)?, desc));
        }
    }
    let aggs = std::mem::take(&mut comp.aggs);
    super::window::check_placement(
        &aggs,
        &projection,
        filter.iter().chain(&group_by).chain(&having),
    )?;
    super::window::check_range_types(&aggs, &mut |e| kind_of_expr(e, &source, &aggs))?;
    let matches = std::mem::take(&mut comp.matches);
    let refs = std::mem::take(&mut comp.outer_refs);
    let out_colls = projection
        .iter()
        .map(|(_, e)| comp.collation_of(e))
        .collect::<SqlResult<Vec<_>>>()?;
    drop(comp);
    pl.note_refs(&refs);
    let cx = pl.ctx();
    let host = SessionHost::new(cx.session, cx.engine);
    let (limit, offset) = match &q.limit_clause {
        None => (None, 0),
        Some(ast::LimitClause::LimitOffset { limit, offset, .. }) => {
            let l = match limit {
                Some(e) => Some(const_usize(e, &host, "LIMIT")?),
                None => None,
            };
            let o = match offset {
                Some(o) => const_usize(&o.value, &host, "OFFSET")?,
                None => 0,
            };
            (l, o)
        }
        Some(ast::LimitClause::OffsetCommaLimit { offset, limit }) => (
            Some(const_usize(limit, &host, "LIMIT")?),
            const_usize(offset, &host, "OFFSET")?,
        ),
    };
    let mut match_tables = Vec::new();
    match (&source.table, &source.input) {
        (Some(t), _) => crate::sql::search::require_fulltext_indexes(t, &matches)?,
        (None, Some(node)) => {
            // MATCH over a join: each one's columns must all come from one
            // base table with a primary key (its scores are looked up by
            // that key in the joined row).
            for spec in &matches {
                let leaf = spec
                    .columns
                    .first()
                    .and_then(|&c| crate::sql::plan::rewrite::base_table_at(node, c));
                let Some((t, off, width)) = leaf else {
                    return Err(SqlError::unsupported(
                        "MATCH … AGAINST over a derived table (use it inside the derived table)",
                    ));
                };
                if spec.columns.iter().any(|&c| c < off || c >= off + width) {
                    return Err(SqlError::new(
                        code::FT_MATCHING_KEY_NOT_FOUND,
                        "Can't find FULLTEXT index matching the column list",
                    ));
                }
                if t.has_hidden_pk() {
                    return Err(SqlError::unsupported(
                        "MATCH … AGAINST in a join on a table without a primary key",
                    ));
                }
                let local = crate::sql::expr::MatchSpec {
                    columns: spec.columns.iter().map(|c| c - off).collect(),
                    query: spec.query.clone(),
                    boolean: spec.boolean,
                };
                crate::sql::search::require_fulltext_indexes(&t, std::slice::from_ref(&local))?;
                match_tables.push((t, off, local));
            }
        }
        (None, None) if !matches.is_empty() => {
            return Err(SqlError::unsupported("MATCH … AGAINST without a table"))
        }
        _ => {}
    }
    let aggregate = has_group || aggs.iter().any(|a| a.window.is_none());
    let windowed = aggs.iter().any(|a| a.window.is_some());
    let mut aggs = aggs;
    for w in aggs.iter_mut().filter_map(|a| a.window.as_deref_mut()) {
        for e in w
            .partition
            .iter_mut()
            .chain(w.order.iter_mut().map(|(e, _)| e))
        {
            *e = fold_vector_literals(std::mem::replace(e, CExpr::Lit(Value::Null)));
        }
    }
    // User variables are constants for the statement: fold them so that
    // result types follow their values and key ranges can use them.
    let uv = &cx.session.user_vars;
    let filter = filter
        .map(|f| fold_vector_literals(fold_date_literals(fold_user_vars(f, uv), &source.kinds)))
        .map(|f| numeric_between(f, &source, &aggs));
    let order_by: Vec<(CExpr, bool)> = order_by
        .into_iter()
        .map(|(e, d)| (fold_vector_literals(e), d))
        .collect();
    let projection: Vec<(String, CExpr, ColumnKind)> = projection
        .into_iter()
        .map(|(n, e)| {
            let e = fold_vector_literals(fold_user_vars(e, uv));
            let e = numeric_between(show_hybrid_scales(e, &source, &aggs), &source, &aggs);
            let k = kind_of_expr(&e, &source, &aggs);
            (n, e, k)
        })
        .collect();
    // Push WHERE conjuncts into the joins / scans the block reads, and
    // the equalities they imply between integer columns.
    let implied = filter.as_ref().map_or_else(Vec::new, |f| {
        crate::sql::plan::rewrite::implied_equalities(f, &source.kinds)
    });
    let mut filter = filter;
    if let (Some(node), Some(f)) = (source.input.as_deref_mut(), &filter) {
        // A conjunct placed where it is checked exactly (see
        // `rewrite::placed_exactly`) is not re-checked by the block: the
        // joined rows then need not carry the columns only it reads.
        let mut kept: Vec<CExpr> = Vec::new();
        for c in f.conjuncts() {
            let placed = crate::sql::plan::rewrite::push_where(node, c, &host);
            let exact = placed
                && matches.is_empty()
                && crate::sql::plan::rewrite::placed_exactly(c, &source.kinds);
            if !exact {
                kept.push(c.clone());
            }
            // An upper bound on a derived table's last ranking window cuts
            // it (the conjunct stays in the WHERE).
            if let Node::Block(p) = node {
                if p.limit.is_none() && p.offset == 0 && !p.distinct {
                    super::window::push_cut(&p.projection, &mut p.aggs, c);
                }
            }
        }
        for c in &implied {
            crate::sql::plan::rewrite::push_where(node, c, &host);
        }
        filter = kept
            .into_iter()
            .reduce(|a, b| CExpr::Bin(crate::sql::expr::BinOp::And, Box::new(a), Box::new(b)));
    }
    let access = match &source.table {
        Some(t) => access::choose(t, filter.as_ref(), &host),
        None => Access::FullScan,
    };
    // Under an aggregate, ORDER BY / LIMIT order groups, not rows: only a
    // MATCH filter (which the index answers row for row) may use an index.
    // So too under a window function that reads every row first.
    let (index_order, index_limit) =
        if aggregate || (windowed && !super::window::prefix_safe(&aggs, &order_by)) {
            (&[][..], None)
        } else {
            (&order_by[..], limit.map(|l| l + offset))
        };
    let index_path = match &source.table {
        Some(t) => crate::sql::search::choose_index_path(
            cx.engine,
            cx.session,
            t,
            index_order,
            index_limit,
            &matches,
            filter.as_ref(),
            &host,
        )?,
        None => None,
    };
    let match_path = match (&source.table, &index_path) {
        (Some(t), Some(crate::sql::search::IndexPath::Vector { .. })) if !matches.is_empty() => {
            crate::sql::search::choose_index_path(
                cx.engine,
                cx.session,
                t,
                &[],
                None,
                &matches,
                filter.as_ref(),
                &host,
            )?
        }
        _ => None,
    };
    let plan = Plan {
        source,
        filter,
        access,
        index_path,
        match_path,
        projection,
        aggs,
        matches,
        match_tables,
        group_by,
        having,
        order_by,
        limit,
        offset,
        aggregate,
        distinct: sel.is_some_and(|s| matches!(s.distinct, Some(ast::Distinct::Distinct))),
        for_update: !q.locks.is_empty(),
        needed: None,
        hit_needed: None,
        out_colls,
        pruned: false,
    }
    .with_needed_columns();
    // The join tree it reads narrowed to the columns read above.
    Ok(super::prune::narrow_block(plan))
}

/// HAVING may name select-list aliases (MySQL extension), also inside
/// larger expressions: `HAVING c > 1` where `c` is `COUNT(*) AS c`.
fn compile_having(
    comp: &mut Compiler<'_>,
    h: &Expr,
    projection: &[(String, CExpr)],
) -> SqlResult<CExpr> {
    if let Some(e) = resolve_alias_or_pos(h, projection, "having clause")? {
        return Ok(e);
    }
    match comp.compile(h) {
        Ok(e) => Ok(e),
        Err(err) if err.code == code::BAD_FIELD => {
            // Substitute aliases for identifiers the FROM clause lacks.
            let mut h2 = h.clone();
            let mut missing = false;
            let _ = ast::visit_expressions_mut(&mut h2, |x| {
                if let Expr::Identifier(i) = x {
                    if comp.scope.resolve(None, &i.value).is_err() {
                        if let Some(pos) = projection
                            .iter()
                            .position(|(n, _)| n.eq_ignore_ascii_case(&i.value))
                        {
                            *x = Expr::Identifier(ast::Ident::new(format!("__alias_{pos}")));
                        } else {
                            missing = true;
                        }
                    }
                }
                std::ops::ControlFlow::<()>::Continue(())
            });
            if missing {
                return Err(SqlError::new(
                    code::BAD_FIELD,
                    err.message.replace("'field list'", "'having clause'"),
                ));
            }
            let mut alias_scope = comp.scope.clone();
            let base = alias_scope.cols.len();
            for (i, _) in projection.iter().enumerate() {
                alias_scope
                    .cols
                    .push((String::new(), format!("__alias_{i}")));
            }
            let mut c2 = Compiler::new(&alias_scope, true);
            c2.aggs = std::mem::take(&mut comp.aggs);
            c2.matches = std::mem::take(&mut comp.matches);
            let r = c2.compile(&h2);
            comp.aggs = std::mem::take(&mut c2.aggs);
            comp.matches = std::mem::take(&mut c2.matches);
            let e = r?;
            Ok(e.map_cols_expr(&mut |i| {
                if i >= base {
                    projection[i - base].1.clone()
                } else {
                    CExpr::Col(i)
                }
            }))
        }
        Err(e) => Err(e),
    }
}

fn const_usize(e: &Expr, host: &SessionHost<'_>, what: &str) -> SqlResult<usize> {
    let scope = Scope::default();
    let mut c = Compiler::new(&scope, false);
    let v = eval_const(&c.compile(e)?, host)?;
    match v {
        Value::Int(i) if i >= 0 => Ok(i as usize),
        other => Err(SqlError::parse(format!(
            "{what} must be a non-negative integer, got {other}"
        ))),
    }
}

/// `ORDER BY 2` / `ORDER BY alias` refer to select items.
fn resolve_alias_or_pos(
    e: &Expr,
    projection: &[(String, CExpr)],
    clause: &str,
) -> SqlResult<Option<CExpr>> {
    match e {
        Expr::Value(v) => {
            if let ast::Value::Number(n, _) = &v.value {
                let i: usize = n
                    .parse()
                    .map_err(|_| SqlError::parse(format!("bad position {n}")))?;
                return projection
                    .get(i.wrapping_sub(1))
                    .map(|(_, e)| Some(e.clone()))
                    .ok_or_else(|| {
                        SqlError::new(
                            code::BAD_FIELD,
                            format!("Unknown column '{i}' in '{clause}'"),
                        )
                    });
            }
            Ok(None)
        }
        Expr::Identifier(i) => Ok(projection
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(&i.value))
            .map(|(_, e)| e.clone())),
        _ => Ok(None),
    }
}

/// Replace `@name` (user variable) calls by their current values.
#[recursive::recursive]
fn fold_user_vars(e: CExpr, vars: &crate::sql::vars::UserVars) -> CExpr {
    let f = |x: Box<CExpr>| Box::new(fold_user_vars(*x, vars));
    match e {
        CExpr::Func(name, args) if name == "@" => match args.as_slice() {
            [CExpr::Lit(Value::Text(n))] => CExpr::Lit(vars.get(n).cloned().unwrap_or(Value::Null)),
            _ => CExpr::Func(name, args),
        },
        CExpr::Func(name, args) => CExpr::Func(
            name,
            args.into_iter().map(|a| fold_user_vars(a, vars)).collect(),
        ),
        CExpr::Bin(op, a, b) => CExpr::Bin(op, f(a), f(b)),
        CExpr::Not(a) => CExpr::Not(f(a)),
        CExpr::Neg(a) => CExpr::Neg(f(a)),
        CExpr::IsNull(a, n) => CExpr::IsNull(f(a), n),
        CExpr::Cast(a, t) => CExpr::Cast(f(a), t),
        CExpr::InList(a, items, n) => CExpr::InList(
            f(a),
            items.into_iter().map(|i| fold_user_vars(i, vars)).collect(),
            n,
        ),
        CExpr::Between(a, b, c, n) => CExpr::Between(f(a), f(b), f(c), n),
        CExpr::Like(a, b, n) => CExpr::Like(f(a), f(b), n),
        CExpr::Case(op, arms, els) => CExpr::Case(
            op.map(f),
            arms.into_iter()
                .map(|(w, t)| (fold_user_vars(w, vars), fold_user_vars(t, vars)))
                .collect(),
            els.map(f),
        ),
        other => other,
    }
}
