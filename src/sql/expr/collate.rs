//! Collations in compiled expressions: which collation each comparison,
//! sort and grouping key uses, and the collation-aware operators.
//!
//! `x COLLATE c` compiles to the marker call [`MARK`]`(x, 'c')`, which
//! evaluates to `x` unchanged; after an expression is compiled,
//! [`resolve`] derives every text operand's collation and coercibility
//! (explicit `COLLATE` > column > literal, `crate::collation::Derivation`)
//! and rewrites each comparison whose operands aggregate to a non-binary
//! collation into an internal call (`"collate cmp"`, `"collate in"`, …)
//! evaluated here; comparisons under a binary collation stay as they are
//! (code point order, the evaluator's own). [`sort_key_expr`] wraps an
//! ORDER BY / GROUP BY key so that it sorts and groups by weight string.
//!
//! Never changes a value that is shown: only comparison results and keys.
//! Never names the compiler or the function registry (it sits below both:
//! the registry dispatches the internal calls here, handing in the
//! function an internal call falls back to as a [`Fallback`]).

use std::cmp::Ordering;

use super::tree::{AggCall, AggFunc, BinOp, CExpr, Scope, SubqueryRef};
use super::value::{and3, num_i64, sql_cmp, text_of};
use crate::collation::{Coercibility, Collation, Derivation};
use crate::error::{SqlError, SqlResult};
use crate::types::Value;

/// The marker `x COLLATE c` compiles to: `MARK(x, 'c')` is `x`.
pub const MARK: &str = "collate";

/// Internal call names (with a space: not callable from SQL).
const CMP: &str = "collate cmp";
const IN: &str = "collate in";
const BETWEEN: &str = "collate between";
const LIKE: &str = "collate like";
const KEY: &str = "collate key";
const PREFIX: &str = "collate ";

fn by_id(id: i64) -> Collation {
    Collation::ALL
        .into_iter()
        .find(|c| i64::from(c.id()) == id)
        .unwrap_or_default()
}

fn lit_id(c: Collation) -> CExpr {
    CExpr::Lit(Value::Int(i64::from(c.id())))
}

fn op_code(op: BinOp) -> i64 {
    match op {
        BinOp::Eq => 0,
        BinOp::NotEq => 1,
        BinOp::Lt => 2,
        BinOp::LtEq => 3,
        BinOp::Gt => 4,
        BinOp::GtEq => 5,
        _ => 6,
    }
}

fn is_comparison(op: BinOp) -> bool {
    matches!(
        op,
        BinOp::Eq
            | BinOp::NotEq
            | BinOp::Lt
            | BinOp::LtEq
            | BinOp::Gt
            | BinOp::GtEq
            | BinOp::NullSafeEq
    )
}

/// Functions whose result is text carrying their arguments' aggregated
/// collation (MySQL aggregates the collations of these arguments).
const TEXT_FNS: &[&str] = &[
    "concat",
    "concat_ws",
    "lower",
    "lcase",
    "upper",
    "ucase",
    "substring",
    "substr",
    "mid",
    "left",
    "right",
    "trim both",
    "trim leading",
    "trim trailing",
    "ltrim",
    "rtrim",
    "trim",
    "replace",
    "lpad",
    "rpad",
    "repeat",
    "reverse",
    "coalesce",
    "ifnull",
    "nullif",
    "greatest",
    "least",
];

/// The derivation of a literal or computed value that carries none of
/// its own: the connection collation (utf8mb4_bin).
fn coercible() -> Derivation {
    Derivation::new(Collation::Utf8mb4Bin, Coercibility::Coercible)
}

fn numeric() -> Derivation {
    Derivation::new(Collation::Utf8mb4Bin, Coercibility::Numeric)
}

/// What `resolve` needs besides the expression.
pub struct Env<'a> {
    pub scope: &'a Scope,
    pub outer: Option<&'a Scope>,
    pub aggs: &'a [AggCall],
}

fn aggregate_all(ds: impl IntoIterator<Item = Derivation>, op: &str) -> SqlResult<Derivation> {
    let mut acc: Option<Derivation> = None;
    for d in ds {
        acc = Some(match acc {
            None => d,
            Some(a) => a.aggregate(d, op)?,
        });
    }
    Ok(acc.unwrap_or_else(coercible))
}

/// The collation and coercibility of a compiled expression.
pub fn derive(e: &CExpr, env: &Env<'_>) -> SqlResult<Derivation> {
    Ok(match e {
        CExpr::Lit(Value::Null) => Derivation::new(Collation::Utf8mb4Bin, Coercibility::Ignorable),
        CExpr::Lit(Value::Text(_)) => coercible(),
        CExpr::Lit(_) => numeric(),
        CExpr::Col(i) => Derivation::new(env.scope.collation(*i), Coercibility::Implicit),
        CExpr::Outer(i) => Derivation::new(
            env.outer.map_or(Collation::Utf8mb4Bin, |o| o.collation(*i)),
            Coercibility::Implicit,
        ),
        CExpr::Func(name, args) if name == MARK => match args.as_slice() {
            [_, CExpr::Lit(Value::Text(c))] => {
                Derivation::new(Collation::lookup_for_utf8mb4(c)?, Coercibility::Explicit)
            }
            _ => coercible(),
        },
        CExpr::Func(name, args) if TEXT_FNS.contains(&name.as_str()) => {
            aggregate_all(derive_each(args, env)?, name)?
        }
        CExpr::Func(name, args) if name == "if" => {
            aggregate_all(derive_each(args.get(1..).unwrap_or(&[]), env)?, "if")?
        }
        CExpr::Case(_, arms, els) => {
            let mut ds = Vec::with_capacity(arms.len() + 1);
            for (_, t) in arms {
                ds.push(derive(t, env)?);
            }
            if let Some(x) = els {
                ds.push(derive(x, env)?);
            }
            aggregate_all(ds, "case")?
        }
        CExpr::Agg(i) => match env.aggs.get(*i) {
            Some(AggCall {
                func: AggFunc::Min | AggFunc::Max,
                arg: Some(a),
                ..
            }) => derive(a, env)?,
            _ => numeric(),
        },
        // A scalar subquery's value has its column's collation.
        CExpr::Scalar(sp) => Derivation::new(subquery_collation(sp), Coercibility::Implicit),
        CExpr::Func(..) | CExpr::Cast(..) => coercible(),
        _ => numeric(),
    })
}

/// The collation of a subquery's first column.
fn subquery_collation(sp: &SubqueryRef) -> Collation {
    sp.collation.unwrap_or_default()
}

fn derive_each(args: &[CExpr], env: &Env<'_>) -> SqlResult<Vec<Derivation>> {
    args.iter().map(|a| derive(a, env)).collect()
}

/// The collation an operation over `items` uses, when it is not binary.
fn non_binary(items: &[&CExpr], env: &Env<'_>, op: &str) -> SqlResult<Option<Collation>> {
    let mut ds = Vec::with_capacity(items.len());
    for x in items {
        ds.push(derive(x, env)?);
    }
    let d = aggregate_all(ds, op)?;
    Ok((!d.collation.is_binary()).then_some(d.collation))
}

/// Rewrite every comparison in `e` whose operands aggregate to a
/// non-binary collation into its collation-aware form; 1267 for an
/// illegal mix, 1273 / 1235 for a collation name not implemented.
pub fn resolve(e: CExpr, env: &Env<'_>) -> SqlResult<CExpr> {
    e.try_rewrite(&mut |x| rewrite_one(x, env))
}

/// One node, its children already rewritten (bottom-up).
fn rewrite_one(e: CExpr, env: &Env<'_>) -> SqlResult<CExpr> {
    Ok(match e {
        CExpr::Func(name, args) if name == MARK => {
            // Check the name now (a bad one is an error even unused).
            if let [_, CExpr::Lit(Value::Text(c))] = args.as_slice() {
                Collation::lookup_for_utf8mb4(c)?;
            }
            CExpr::Func(name, args)
        }
        CExpr::Bin(op, l, r) if is_comparison(op) => match non_binary(&[&l, &r], env, op.sql())? {
            Some(c) => CExpr::Func(
                CMP.into(),
                vec![lit_id(c), CExpr::Lit(Value::Int(op_code(op))), *l, *r],
            ),
            None => CExpr::Bin(op, l, r),
        },
        CExpr::InList(x, items, neg) => {
            let mut all: Vec<&CExpr> = vec![&x];
            all.extend(items.iter());
            match non_binary(&all, env, "in")? {
                Some(c) => {
                    let mut args = vec![lit_id(c), CExpr::Lit(Value::Bool(neg)), *x];
                    args.extend(items);
                    CExpr::Func(IN.into(), args)
                }
                None => CExpr::InList(x, items, neg),
            }
        }
        // `x IN (subquery)` matches by code point (a hashed set): under a
        // case-insensitive collation it is refused, never answered by
        // code point.
        CExpr::InSub(x, sp, neg) => {
            let col = Derivation::new(subquery_collation(&sp), Coercibility::Implicit);
            let d = derive(&x, env)?.aggregate(col, "in")?;
            if !d.collation.is_binary() {
                return Err(SqlError::unsupported(format!(
                    "IN (subquery) compared under collation {}",
                    d.collation
                )));
            }
            CExpr::InSub(x, sp, neg)
        }
        CExpr::Between(x, lo, hi, neg) => match non_binary(&[&x, &lo, &hi], env, "between")? {
            Some(c) => CExpr::Func(
                BETWEEN.into(),
                vec![lit_id(c), CExpr::Lit(Value::Bool(neg)), *x, *lo, *hi],
            ),
            None => CExpr::Between(x, lo, hi, neg),
        },
        CExpr::Like(x, p, neg) => match non_binary(&[&x, &p], env, "like")? {
            Some(c) => CExpr::Func(
                LIKE.into(),
                vec![lit_id(c), CExpr::Lit(Value::Bool(neg)), *x, *p],
            ),
            None => CExpr::Like(x, p, neg),
        },
        CExpr::Case(Some(op), arms, els) => {
            let mut all: Vec<&CExpr> = vec![&op];
            all.extend(arms.iter().map(|(w, _)| w));
            match non_binary(&all, env, "case")? {
                // `CASE x WHEN w …` is `CASE WHEN x = w …` under the
                // collation (x is evaluated once per arm).
                Some(c) => CExpr::Case(
                    None,
                    arms.into_iter()
                        .map(|(w, t)| {
                            let eq = CExpr::Func(
                                CMP.into(),
                                vec![
                                    lit_id(c),
                                    CExpr::Lit(Value::Int(op_code(BinOp::Eq))),
                                    (*op).clone(),
                                    w,
                                ],
                            );
                            (eq, t)
                        })
                        .collect(),
                    els,
                ),
                None => CExpr::Case(Some(op), arms, els),
            }
        }
        CExpr::Func(name, args)
            if matches!(
                name.as_str(),
                "nullif"
                    | "greatest"
                    | "least"
                    | "instr"
                    | "locate"
                    | "regexp_like"
                    | "regexp_instr"
                    | "regexp_substr"
                    | "regexp_replace"
            ) =>
        {
            // Searches compare their subject and pattern (the first two
            // arguments); the others all of theirs.
            let compared = if matches!(name.as_str(), "nullif" | "greatest" | "least") {
                args.len()
            } else {
                2
            };
            let all: Vec<&CExpr> = args.iter().take(compared).collect();
            match non_binary(&all, env, &name)? {
                Some(c) => {
                    let mut a = vec![lit_id(c)];
                    a.extend(args);
                    CExpr::Func(format!("{PREFIX}{name}"), a)
                }
                None => CExpr::Func(name, args),
            }
        }
        other => other,
    })
}

/// The collation an aggregate's argument is compared under (MIN, MAX,
/// COUNT(DISTINCT …)), when it is not binary.
pub fn agg_collation(arg: &CExpr, env: &Env<'_>) -> SqlResult<Option<Collation>> {
    non_binary(&[arg], env, "min")
}

/// `e` as an ORDER BY / GROUP BY key: under a non-binary collation, its
/// weight string (text values only; other values are kept).
pub fn sort_key_expr(e: CExpr, env: &Env<'_>) -> SqlResult<CExpr> {
    Ok(match non_binary(&[&e], env, "order by")? {
        Some(c) => CExpr::Func(KEY.into(), vec![lit_id(c), e]),
        None => e,
    })
}

/// A weight string as a text value whose code point order is the
/// weight's byte order (each byte one character U+0000..U+00FF).
fn key_value(c: Collation, s: &str) -> Value {
    Value::Text(c.sort_key(s).into_iter().map(char::from).collect())
}

/// `a` against `b` under `c`: text by the collation, anything else as
/// the evaluator compares it.
fn cmp_under(c: Collation, a: &Value, b: &Value) -> Option<Ordering> {
    match (a, b) {
        (Value::Text(x), Value::Text(y)) => Some(c.cmp(x, y)),
        _ => sql_cmp(a, b),
    }
}

/// Compare under `c`, for callers outside expressions (MIN/MAX).
pub fn value_cmp(c: Option<Collation>, a: &Value, b: &Value) -> Ordering {
    match (c, a, b) {
        (Some(c), Value::Text(x), Value::Text(y)) => c.cmp(x, y),
        _ => a.total_cmp(b),
    }
}

/// A REGEXP function's arguments with the match type `i` put first
/// under a case-insensitive collation (a `c` in the caller's match type
/// still wins, being later), the omitted optional arguments filled with
/// their defaults to reach the match type's place.
fn case_insensitive_regexp(c: Collation, name: &str, args: &[Value]) -> Vec<Value> {
    let mut a = args.to_vec();
    if !c.case_insensitive() {
        return a;
    }
    // Defaults of the arguments before the match type, from the third on.
    let defaults: &[i64] = match name {
        "regexp_instr" => &[1, 1, 0],
        "regexp_substr" => &[1, 1],
        "regexp_replace" => &[1, 0],
        _ => &[],
    };
    let first_default = if name == "regexp_replace" { 3 } else { 2 };
    let mt_at = first_default + defaults.len();
    if a.len() < first_default {
        return a; // a wrong argument count: reported by the call itself
    }
    while a.len() < mt_at {
        let d = defaults[a.len() - first_default];
        a.push(Value::Int(d));
    }
    match a.get(mt_at) {
        None => a.push(Value::Text("i".into())),
        Some(Value::Text(mt)) => a[mt_at] = Value::Text(format!("i{mt}")),
        // NULL stays NULL (the answer is NULL); anything else is
        // reported by the call.
        Some(_) => {}
    }
    a
}

/// INSTR / LOCATE under `c`, as MySQL's `my_instr_mb`: at each character
/// of `hay` from position `start` (1-based), the next `needle.len()`
/// *bytes* are compared with the needle under the collation, without
/// padding — so `'á'` (two bytes) is not found for `'a'` (one), while
/// `'Á'` is found for `'á'`, and under utf8mb4_0900_ai_ci `'ß'` (two
/// bytes) for `'ss'`. 0 when not found.
fn instr_under(c: Collation, hay: &str, needle: &str, start: i64) -> i64 {
    let chars = hay.chars().count() as i64;
    if start < 1 || start - 1 > chars {
        return 0;
    }
    if needle.is_empty() {
        return start;
    }
    for (i, (b, _)) in hay.char_indices().enumerate().skip((start - 1) as usize) {
        let end = b + needle.len();
        if end > hay.len() {
            break;
        }
        let window = if hay.is_char_boundary(end) {
            &hay[b..end]
        } else if c == Collation::Utf8mb4_0900AiCi {
            // MySQL's uca900 scanner stops at the cut character: the
            // window weighs what comes before it.
            let mut e = end;
            while !hay.is_char_boundary(e) {
                e -= 1;
            }
            &hay[b..e]
        } else {
            continue;
        };
        if c.eq_unpadded(window, needle) {
            return i as i64 + 1;
        }
    }
    0
}

/// A comparison [`resolve`] rewrote into its collation-aware form, seen
/// as its parts (for access-path selection: a key range over a column is
/// exact only under the column's own collation).
#[derive(Debug, Clone, Copy)]
pub enum Collated<'a> {
    /// `l op r` under the collation.
    Cmp(Collation, BinOp, &'a CExpr, &'a CExpr),
    /// `x [NOT] IN (items)` (the flag: NOT).
    In(Collation, bool, &'a CExpr, &'a [CExpr]),
    /// `x [NOT] BETWEEN lo AND hi` (the flag: NOT).
    Between(Collation, bool, &'a CExpr, &'a CExpr, &'a CExpr),
}

/// `e` as a collation-aware comparison, when it is one.
pub fn collated(e: &CExpr) -> Option<Collated<'_>> {
    let CExpr::Func(name, args) = e else {
        return None;
    };
    let (CExpr::Lit(Value::Int(id)), rest) = (args.first()?, args.get(1..)?) else {
        return None;
    };
    let c = Collation::ALL
        .into_iter()
        .find(|c| i64::from(c.id()) == *id)?;
    let flag = |v: &CExpr| matches!(v, CExpr::Lit(Value::Bool(true)));
    match (name.as_str(), rest) {
        (CMP, [CExpr::Lit(Value::Int(op)), l, r]) => {
            let op = match op {
                0 => BinOp::Eq,
                1 => BinOp::NotEq,
                2 => BinOp::Lt,
                3 => BinOp::LtEq,
                4 => BinOp::Gt,
                5 => BinOp::GtEq,
                _ => BinOp::NullSafeEq,
            };
            Some(Collated::Cmp(c, op, l, r))
        }
        (IN, [neg, x, items @ ..]) => Some(Collated::In(c, flag(neg), x, items)),
        (BETWEEN, [neg, x, lo, hi]) => Some(Collated::Between(c, flag(neg), x, lo, hi)),
        _ => None,
    }
}

/// Whether `name` is one of this module's internal calls.
pub fn is_internal(name: &str) -> bool {
    name == MARK || name.starts_with(PREFIX)
}

/// The function an internal call stands for, evaluated over values (the
/// registry's `call_values`): what [`call`] falls back to where the
/// collation changes nothing. Passed in, so that this module never names
/// the registry that dispatches to it.
pub type Fallback = fn(&str, &[Value]) -> SqlResult<Value>;

/// Evaluate an internal call (`args` evaluated; the first is the
/// collation id); `call_builtin` evaluates the function it stands for.
pub fn call(name: &str, args: &[Value], call_builtin: Fallback) -> SqlResult<Value> {
    if name == MARK {
        return Ok(args.first().cloned().unwrap_or(Value::Null));
    }
    let bad = || SqlError::parse(format!("internal call {name} malformed"));
    let (Some(Value::Int(id)), rest) = (args.first(), args.get(1..).unwrap_or(&[])) else {
        return Err(bad());
    };
    let c = by_id(*id);
    let flag = |v: &Value| matches!(v, Value::Bool(true));
    let truth = |b: Option<bool>| b.map_or(Value::Null, Value::Bool);
    match name {
        CMP => {
            let [Value::Int(op), a, b] = rest else {
                return Err(bad());
            };
            if *op == 6 {
                // `<=>`: NULL-safe.
                return Ok(Value::Bool(match (a.is_null(), b.is_null()) {
                    (true, true) => true,
                    (false, false) => cmp_under(c, a, b) == Some(Ordering::Equal),
                    _ => false,
                }));
            }
            Ok(truth(cmp_under(c, a, b).map(|o| match op {
                0 => o == Ordering::Equal,
                1 => o != Ordering::Equal,
                2 => o == Ordering::Less,
                3 => o != Ordering::Greater,
                4 => o == Ordering::Greater,
                _ => o != Ordering::Less,
            })))
        }
        IN => {
            let [neg, x, items @ ..] = rest else {
                return Err(bad());
            };
            if x.is_null() {
                return Ok(Value::Null);
            }
            let mut null = false;
            for it in items {
                match cmp_under(c, x, it) {
                    Some(Ordering::Equal) => return Ok(Value::Bool(!flag(neg))),
                    None => null = true,
                    _ => {}
                }
            }
            Ok(if null {
                Value::Null
            } else {
                Value::Bool(flag(neg))
            })
        }
        BETWEEN => {
            let [neg, x, lo, hi] = rest else {
                return Err(bad());
            };
            // Three-valued: x >= lo AND x <= hi.
            let ge = cmp_under(c, x, lo).map(|o| o != Ordering::Less);
            let le = cmp_under(c, x, hi).map(|o| o != Ordering::Greater);
            let within = and3(ge, le);
            Ok(truth(if flag(neg) {
                within.map(|b| !b)
            } else {
                within
            }))
        }
        LIKE => {
            let [neg, x, p] = rest else {
                return Err(bad());
            };
            if x.is_null() || p.is_null() {
                return Ok(Value::Null);
            }
            let (s, pat) = (text_of(x), text_of(p));
            Ok(Value::Bool(c.like(&s, &pat) != flag(neg)))
        }
        KEY => {
            let [x] = rest else {
                return Err(bad());
            };
            Ok(match x {
                Value::Text(s) => key_value(c, s),
                other => other.clone(),
            })
        }
        _ if name.starts_with("collate regexp_") => {
            let base = &name[PREFIX.len()..];
            call_builtin(base, &case_insensitive_regexp(c, base, rest))
        }
        "collate instr" | "collate locate" => {
            let (hay, needle, from) = if name == "collate instr" {
                match rest {
                    [h, n] => (h, n, None),
                    _ => return call_builtin("instr", rest),
                }
            } else {
                match rest {
                    [n, h] => (h, n, None),
                    [n, h, p] => (h, n, Some(p)),
                    _ => return call_builtin("locate", rest),
                }
            };
            if hay.is_null() || needle.is_null() || from.is_some_and(Value::is_null) {
                return Ok(Value::Null);
            }
            let start = match from {
                None => 1,
                Some(p) => match num_i64(p) {
                    Some(p) => p,
                    None => return Ok(Value::Null),
                },
            };
            Ok(Value::Int(instr_under(
                c,
                &text_of(hay),
                &text_of(needle),
                start,
            )))
        }
        _ => {
            let base = &name[PREFIX.len()..];
            let all_text = rest.iter().all(|v| matches!(v, Value::Text(_)));
            if !all_text || rest.is_empty() {
                // Not a string comparison (or NULL): as without collation.
                return call_builtin(base, rest);
            }
            match base {
                "nullif" => {
                    let [a, b] = rest else {
                        return call_builtin(base, rest);
                    };
                    Ok(if cmp_under(c, a, b) == Some(Ordering::Equal) {
                        Value::Null
                    } else {
                        a.clone()
                    })
                }
                "greatest" | "least" if rest.len() >= 2 => {
                    let want = if base == "greatest" {
                        Ordering::Greater
                    } else {
                        Ordering::Less
                    };
                    // Of equal strings the first is kept.
                    let mut best = &rest[0];
                    for v in &rest[1..] {
                        if cmp_under(c, v, best) == Some(want) {
                            best = v;
                        }
                    }
                    Ok(best.clone())
                }
                _ => call_builtin(base, rest),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instr_compares_byte_windows_as_mysql() {
        let ci = Collation::Utf8mb4GeneralCi;
        assert_eq!(instr_under(ci, "xAbc", "aB", 1), 2);
        // 'á' is two bytes, 'a' one: MySQL finds nothing.
        assert_eq!(instr_under(ci, "xábc", "aB", 1), 0);
        assert_eq!(instr_under(ci, "xábc", "ÁB", 1), 2);
        assert_eq!(instr_under(ci, "abcb", "B", 3), 4);
        assert_eq!(instr_under(ci, "abc", "", 2), 2);
        assert_eq!(instr_under(ci, "abc", "a", 5), 0);
        assert_eq!(instr_under(ci, "😀x", "😁X", 1), 1);
        assert_eq!(instr_under(Collation::Utf8mb4Bin, "xAbc", "ab", 1), 0);
        let ai = Collation::Utf8mb4_0900AiCi;
        // Two-byte windows: 'ß' (2 bytes) weighs 'ss'; 'á' is 'A'.
        assert_eq!(instr_under(ai, "straße", "SS", 1), 5);
        assert_eq!(instr_under(ai, "xábc", "ÁB", 1), 2);
        assert_eq!(instr_under(ai, "xábc", "aB", 1), 0);
        // NO PAD: a trailing space in the needle counts.
        assert_eq!(instr_under(ai, "ab", "b ", 1), 0);
        // A window cut inside '€' weighs the characters before the cut.
        assert_eq!(instr_under(ai, "a€", "a\u{AD}", 1), 1);
        assert_eq!(instr_under(ci, "a€", "a\u{AD}", 1), 0);
    }

    #[test]
    fn regexp_match_type_gets_i_first() {
        let ci = Collation::Utf8mb4GeneralCi;
        let t = |s: &str| Value::Text(s.into());
        assert_eq!(
            case_insensitive_regexp(ci, "regexp_like", &[t("A"), t("a")]),
            vec![t("A"), t("a"), t("i")]
        );
        assert_eq!(
            case_insensitive_regexp(ci, "regexp_like", &[t("A"), t("a"), t("c")]),
            vec![t("A"), t("a"), t("ic")]
        );
        assert_eq!(
            case_insensitive_regexp(ci, "regexp_replace", &[t("A"), t("a"), t("-")]),
            vec![t("A"), t("a"), t("-"), Value::Int(1), Value::Int(0), t("i")]
        );
        assert_eq!(
            case_insensitive_regexp(ci, "regexp_instr", &[t("A"), t("a"), Value::Int(2)]),
            vec![
                t("A"),
                t("a"),
                Value::Int(2),
                Value::Int(1),
                Value::Int(0),
                t("i")
            ]
        );
        assert_eq!(
            case_insensitive_regexp(ci, "regexp_like", &[t("A"), t("a"), Value::Null]),
            vec![t("A"), t("a"), Value::Null]
        );
    }
}
