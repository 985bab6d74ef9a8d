//! Expressions: compiling sqlparser's AST against a row scope into a small
//! tree ([`CExpr`]) and evaluating it per row.
//!
//! Owns the compiler (names, operators, CAST, subqueries, aggregate and
//! window calls, collation resolution once an expression is compiled) and
//! the evaluator (`CExpr::eval` / `test`): three-valued logic, comparisons,
//! LIKE, CASE, CAST and aggregate slots. The pieces below it are its
//! submodules, re-exported here so callers name `expr::…`: the tree's
//! types and walks (`tree`), the value helpers every evaluator shares
//! (`value`), arithmetic (`arith`), collations (`collate`). Which
//! functions exist, their arity and their evaluators are the function
//! registry's ([`crate::sql::functions`], below this file, above `tree`
//! and `value`): a call is checked against it when compiled and
//! dispatched through it when evaluated. Never reads storage: MATCH …
//! AGAINST scores and aggregate results are handed in through
//! [`EvalCtx`]; never names a file above the registry.

use std::borrow::Cow;
use std::cmp::Ordering;
use std::sync::Arc;

use sqlparser::ast::{self as ast, BinaryOperator, Expr, UnaryOperator};

use crate::catalog::schema::parse_vector;
use crate::collation::Collation;
use crate::decimal::Decimal;
use crate::error::{code, SqlError, SqlResult};
use crate::types::{format_float, parse_datetime, Value};
pub(crate) use arith::{arith, vector_arith};
pub use tree::{
    AggCall, AggFunc, BinOp, CExpr, CastTo, EvalCtx, Frame, FrameBound, FunctionHost, MatchSpec,
    NoHost, RangeAt, Scope, SubqueryPlanner, SubqueryRef, WinFunc, Window, FIXED_TEXT, JSON_AGG,
    SHOW_SCALE,
};
pub(crate) use tree::{IS_FALSE, IS_TRUE, LIKE_BINARY};
pub use value::{
    and3, as_f64, key_form, like_match, like_match_ci, or3, sql_cmp, truth, value_key, vector_arg,
    ValueSet, VECTOR_DISTANCE_FNS,
};
pub(crate) use value::{num, num_cmp, overflow, text, text_of, wrong_count};

thread_local! {
    /// Whether `||` compiles as CONCAT on this thread (see [`PipesAsConcat`]).
    static PIPES_AS_CONCAT: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

fn pipes_as_concat() -> bool {
    PIPES_AS_CONCAT.with(std::cell::Cell::get)
}

/// While it lives, `||` compiles as CONCAT on this thread (the statement's
/// sql_mode has PIPES_AS_CONCAT; the statement runner enters it); else it
/// is OR, as MySQL's default mode has it.
pub struct PipesAsConcat(bool);

impl PipesAsConcat {
    pub fn enter(on: bool) -> PipesAsConcat {
        PipesAsConcat(PIPES_AS_CONCAT.with(|c| c.replace(on)))
    }
}

impl Drop for PipesAsConcat {
    fn drop(&mut self) {
        PIPES_AS_CONCAT.with(|c| c.set(self.0));
    }
}

/// The fractional-seconds precision written in `DATETIME(n)` (0 when
/// absent); above 6 is MySQL's 1426.
pub(crate) fn fsp_of(arg: &str, s: &str) -> SqlResult<u8> {
    if arg.trim().is_empty() {
        return Ok(0);
    }
    let n: u32 = arg
        .trim()
        .parse()
        .map_err(|_| SqlError::parse(format!("bad precision in {s}")))?;
    if n > u32::from(crate::types::MAX_DATETIME_FSP) {
        return Err(SqlError::new(
            1426,
            format!("Too-big precision {n} specified for '{s}'. Maximum is 6."),
        ));
    }
    Ok(n as u8)
}

/// The CAST target for a SQL type; types CAST does not produce faithfully
/// are refused (1235), never approximated.
fn cast_target(ty: &ast::DataType) -> SqlResult<CastTo> {
    let t = ty.to_string().to_ascii_lowercase();
    let (base, arg) = match t.split_once('(') {
        Some((b, rest)) => (b.trim(), rest.trim_end_matches(')').trim()),
        None => (t.trim(), ""),
    };
    let nums: Vec<u32> = arg
        .split(',')
        .filter(|x| !x.trim().is_empty())
        .map(|x| x.trim().parse::<u32>())
        .collect::<Result<_, _>>()
        .map_err(|_| SqlError::parse(format!("bad type in CAST: {t}")))?;
    Ok(match base {
        "signed" | "signed integer" | "int" | "integer" | "bigint" => CastTo::Int,
        "unsigned" | "unsigned integer" | "int unsigned" | "bigint unsigned" => CastTo::Unsigned,
        "double" | "real" | "float" | "double precision" => CastTo::Float,
        "decimal" | "numeric" | "dec" => {
            let p = nums.first().copied().unwrap_or(10);
            let sc = nums.get(1).copied().unwrap_or(0);
            check_decimal_type(p, sc, "CAST")?;
            CastTo::Decimal(p as u8, sc as u8)
        }
        "char" | "varchar" | "nchar" | "character" | "text" => CastTo::Text(nums.first().copied()),
        "datetime" | "timestamp" => CastTo::DateTime(fsp_of(arg, &t)?),
        "date" => CastTo::Date,
        "vecf32" | "vecf64" => match nums.first() {
            Some(&d) if d > 0 => CastTo::Vector(d),
            _ => return Err(SqlError::parse(format!("bad type in CAST: {t}"))),
        },
        "binary" => CastTo::Binary(nums.first().copied()),
        _ => return Err(SqlError::unsupported(format!("CAST to {t}"))),
    })
}

/// The operand of `BINARY x` / `CAST(x AS BINARY)`: a binary string,
/// which makes a LIKE compare bytes.
fn binary_operand(e: &Expr) -> Option<&Expr> {
    match e {
        Expr::Cast {
            kind: ast::CastKind::Cast,
            expr,
            data_type: ast::DataType::Binary(None),
            format: None,
        } => Some(expr),
        Expr::Nested(x) => binary_operand(x),
        _ => None,
    }
}

/// Compiler state: the scope plus the aggregates and MATCH predicates
/// collected so far.
pub struct Compiler<'a> {
    pub scope: &'a Scope,
    pub allow_aggs: bool,
    /// Whether a window function may appear here (the select list and
    /// ORDER BY of a block; MySQL refuses it elsewhere with 3593).
    pub allow_windows: bool,
    /// The block's `WINDOW w AS (…)` definitions.
    pub named_windows: &'a [ast::NamedWindowDefinition],
    pub aggs: Vec<AggCall>,
    pub matches: Vec<MatchSpec>,
    /// Names visible from enclosing queries (their rows concatenated).
    pub outer: Option<&'a Scope>,
    /// Positions in `outer` this expression read.
    pub outer_refs: Vec<usize>,
    /// Plans subqueries; without one they are refused.
    pub sub: Option<&'a mut dyn SubqueryPlanner>,
    /// Nesting of [`Compiler::compile`] calls: collations are resolved
    /// when the outermost one ends.
    depth: usize,
}

/// Identifier text, lower-cased unless quoted.
pub fn ident_name(i: &ast::Ident) -> String {
    if i.quote_style.is_some() {
        i.value.clone()
    } else {
        i.value.to_ascii_lowercase()
    }
}

/// The last part of an object name, lower-cased unless quoted.
pub fn object_parts(n: &ast::ObjectName) -> Vec<String> {
    n.0.iter()
        .map(|p| match p {
            ast::ObjectNamePart::Identifier(i) => ident_name(i),
            other => other.to_string(),
        })
        .collect()
}

/// A literal value from the AST.
pub fn literal(v: &ast::Value) -> SqlResult<Value> {
    use ast::Value as V;
    Ok(match v {
        V::Number(s, _) => parse_number(s)?,
        V::SingleQuotedString(s) | V::DoubleQuotedString(s) => Value::Text(s.clone()),
        V::EscapedStringLiteral(s) | V::NationalStringLiteral(s) => Value::Text(s.clone()),
        // X'0AFF' / 0x0AFF: a binary string (a number in arithmetic:
        // see `hex_number`).
        V::HexStringLiteral(h) => Value::Bytes(hex_literal_bytes(h)?),
        V::Boolean(b) => Value::Bool(*b),
        V::Null => Value::Null,
        V::Placeholder(p) => {
            return Err(SqlError::parse(format!(
                "unbound parameter {p}: use a prepared statement"
            )))
        }
        other => return Err(SqlError::unsupported(format!("literal {other}"))),
    })
}

/// The bytes of a hexadecimal literal's digits (`X'0AFF'`, `0xAFF`: an
/// odd count has a leading 0 implied, as MySQL reads `0x…`; `X'…'` with an
/// odd count is a syntax error there).
fn hex_literal_bytes(h: &str) -> SqlResult<Vec<u8>> {
    let bad = || SqlError::parse(format!("bad hexadecimal literal X'{h}'"));
    let padded;
    let h = if h.len() % 2 == 1 {
        padded = format!("0{h}");
        padded.as_str()
    } else {
        h
    };
    (0..h.len())
        .step_by(2)
        .map(|i| {
            h.get(i..i + 2)
                .and_then(|p| u8::from_str_radix(p, 16).ok())
                .ok_or_else(bad)
        })
        .collect()
}

/// A hexadecimal literal as the number it is in a numeric context
/// (`0x41 + 0` is 65, MySQL): its bytes as an unsigned big-endian
/// integer — an INT, or a DECIMAL past BIGINT; `None` for anything else
/// or more than 8 bytes.
fn hex_number(e: &Expr) -> Option<Value> {
    let Expr::Value(v) = e else { return None };
    let ast::Value::HexStringLiteral(h) = &v.value else {
        return None;
    };
    let b = hex_literal_bytes(h).ok()?;
    if b.len() > 8 {
        return None;
    }
    let n = b.iter().fold(0u64, |n, x| (n << 8) | u64::from(*x));
    Some(match i64::try_from(n) {
        Ok(i) => Value::Int(i),
        Err(_) => Value::Decimal(Decimal::parse(&n.to_string())?),
    })
}

/// MySQL's DECIMAL(p, s) limits: 1426 for p > 65, 1425 for s > 30,
/// 1427 for s > p (`what` is the column or `CAST`).
pub fn check_decimal_type(p: u32, s: u32, what: &str) -> SqlResult<()> {
    if p > u32::from(crate::types::MAX_DECIMAL_PRECISION) {
        return Err(SqlError::new(
            1426,
            format!("Too-big precision {p} specified for '{what}'. Maximum is 65."),
        ));
    }
    if s > u32::from(crate::types::MAX_DECIMAL_SCALE) {
        return Err(SqlError::new(
            1425,
            format!("Too big scale {s} specified for column '{what}'. Maximum is 30."),
        ));
    }
    if s > p {
        return Err(SqlError::new(
            1427,
            format!(
                "For float(M,D), double(M,D) or decimal(M,D), M must be >= D (column '{what}')."
            ),
        ));
    }
    Ok(())
}

/// A number literal as MySQL types it: an integer that fits BIGINT is an
/// INT, one with an exponent a DOUBLE, any other (`0.1`, an integer
/// beyond BIGINT) an exact DECIMAL — a DOUBLE past 65 digits.
fn parse_number(s: &str) -> SqlResult<Value> {
    if let Ok(i) = s.parse::<i64>() {
        return Ok(Value::Int(i));
    }
    if !s.contains(['e', 'E']) {
        if let Some(d) = Decimal::parse(s) {
            if d.int_digits() + u32::from(d.scale()) <= crate::decimal::MAX_PRECISION {
                return Ok(Value::Decimal(d));
            }
        }
    }
    s.parse::<f64>()
        .map(Value::Float)
        .map_err(|_| SqlError::parse(format!("bad number literal '{s}'")))
}

fn agg_func(name: &str) -> Option<AggFunc> {
    crate::sql::functions::aggregate(name)
}

/// The expression reading aggregate slot `i`: a JSON aggregate's as
/// JSON, so that it nests as JSON in a JSON function.
fn agg_slot(func: AggFunc, i: usize) -> CExpr {
    match func {
        AggFunc::Stat(f) if f.is_json() => CExpr::Func(JSON_AGG.into(), vec![CExpr::Agg(i)]),
        _ => CExpr::Agg(i),
    }
}

/// `@@name`, `@@session.name` (system variable) or `@name` (user
/// variable) as a call the session's [`FunctionHost`] answers.
fn variable_ref(first: &str, second: Option<&str>) -> SqlResult<CExpr> {
    if let Some(rest) = first.strip_prefix("@@") {
        let name = match (rest.to_ascii_lowercase().as_str(), second) {
            ("session" | "local", Some(n)) => n.to_ascii_lowercase(),
            // Server-wide values are fixed by command-line flags (SET
            // GLOBAL is refused): the global value is what a new session
            // starts with.
            ("global", Some(n)) => {
                return Ok(CExpr::Func(
                    "@@global".into(),
                    vec![CExpr::Lit(Value::Text(n.to_ascii_lowercase()))],
                ))
            }
            (n, None) => n.to_string(),
            (_, Some(_)) => return Err(SqlError::parse(format!("bad variable {first}"))),
        };
        return Ok(CExpr::Func(
            "@@".into(),
            vec![CExpr::Lit(Value::Text(name))],
        ));
    }
    let name = first.trim_start_matches('@').to_ascii_lowercase();
    Ok(CExpr::Func("@".into(), vec![CExpr::Lit(Value::Text(name))]))
}

impl<'a> Compiler<'a> {
    /// A compiler over `scope`.
    pub fn new(scope: &'a Scope, allow_aggs: bool) -> Self {
        Compiler {
            scope,
            allow_aggs,
            allow_windows: false,
            named_windows: &[],
            aggs: Vec::new(),
            matches: Vec::new(),
            outer: None,
            outer_refs: Vec::new(),
            sub: None,
            depth: 0,
        }
    }

    /// A column by (optional qualifier and) name: this query's own FROM
    /// first, then the enclosing queries' (a correlated reference).
    fn column(&mut self, table: Option<&str>, name: &str) -> SqlResult<CExpr> {
        match self.scope.resolve(table, name) {
            Ok(i) => Ok(CExpr::Col(i)),
            Err(e) if e.code == code::BAD_FIELD => match self.outer.map(|o| o.resolve(table, name))
            {
                Some(Ok(i)) => {
                    self.outer_refs.push(i);
                    Ok(CExpr::Outer(i))
                }
                Some(Err(o)) if o.code == code::NON_UNIQ => Err(o),
                _ => Err(e),
            },
            Err(e) => Err(e),
        }
    }

    /// Plan a subquery with this query's names (then the enclosing
    /// ones) as its outer scope.
    fn subquery(&mut self, q: &ast::Query) -> SqlResult<Arc<SubqueryRef>> {
        let mut outer = self.scope.clone();
        if let Some(o) = self.outer {
            outer.extend(o);
        }
        let own = self.scope.cols.len();
        let Some(planner) = self.sub.as_deref_mut() else {
            return Err(SqlError::unsupported("a subquery here"));
        };
        let sp = planner.plan_subquery(q, &outer)?;
        for &r in &sp.refs {
            if r >= own {
                self.outer_refs.push(r - own);
            }
        }
        Ok(Arc::new(sp))
    }

    fn one_column(sp: &SubqueryRef) -> SqlResult<()> {
        if sp.width != 1 {
            return Err(SqlError::new(
                code::OPERAND_COLUMNS,
                "Operand should contain 1 column(s)",
            ));
        }
        Ok(())
    }

    /// Compile one expression. A literal cannot recurse and skips the
    /// stack check (see [`CExpr::eval`]).
    pub fn compile(&mut self, e: &Expr) -> SqlResult<CExpr> {
        match e {
            Expr::Value(v) => Ok(CExpr::Lit(literal(&v.value)?)),
            _ => {
                self.depth += 1;
                let r = self.compile_checked(e);
                self.depth -= 1;
                match r {
                    Ok(x) if self.depth == 0 => self.resolve_collations(x),
                    r => r,
                }
            }
        }
    }

    /// Which collation each comparison in `e` uses (`collate::resolve`).
    fn resolve_collations(&self, e: CExpr) -> SqlResult<CExpr> {
        collate::resolve(e, &self.collate_env())
    }

    fn collate_env(&self) -> collate::Env<'_> {
        collate::Env {
            scope: self.scope,
            outer: self.outer,
            aggs: &self.aggs,
        }
    }

    /// The collation `e` (compiled by this compiler) compares under, when
    /// it is not binary.
    pub fn collation_of(&self, e: &CExpr) -> SqlResult<Option<Collation>> {
        collate::agg_collation(e, &self.collate_env())
    }

    /// The ORDER BY / GROUP BY key of a compiled expression: under a
    /// non-binary collation it sorts and groups by weight string.
    pub fn sort_key(&self, x: CExpr) -> SqlResult<CExpr> {
        collate::sort_key_expr(x, &self.collate_env())
    }

    /// [`Self::compile`] of an inner node, with room on the stack for it.
    #[recursive::recursive]
    fn compile_checked(&mut self, e: &Expr) -> SqlResult<CExpr> {
        Ok(match e {
            Expr::Identifier(i) if i.quote_style.is_none() && i.value.starts_with('@') => {
                variable_ref(&i.value, None)?
            }
            Expr::CompoundIdentifier(parts)
                if parts.len() == 2
                    && parts[0].quote_style.is_none()
                    && parts[0].value.starts_with("@@") =>
            {
                variable_ref(&parts[0].value, Some(&parts[1].value))?
            }
            Expr::Identifier(i) => self.column(None, &ident_name(i))?,
            Expr::CompoundIdentifier(parts) => {
                let names: Vec<String> = parts.iter().map(ident_name).collect();
                match names.as_slice() {
                    [t, c] => self.column(Some(t), c)?,
                    [_, t, c] => self.column(Some(t), c)?,
                    _ => return Err(SqlError::parse(format!("bad column reference {e}"))),
                }
            }
            Expr::Subquery(q) => {
                let sp = self.subquery(q)?;
                Self::one_column(&sp)?;
                CExpr::Scalar(sp)
            }
            Expr::Exists { subquery, negated } => CExpr::Exists(self.subquery(subquery)?, *negated),

            Expr::Value(v) => CExpr::Lit(literal(&v.value)?),
            Expr::Nested(inner) => self.compile(inner)?,
            // `-9223372036854775808` is one BIGINT literal (the digits alone
            // are not a BIGINT), as MySQL's parser reads it.
            Expr::UnaryOp {
                op: UnaryOperator::Minus,
                expr,
            } if matches!(expr.as_ref(), Expr::Value(v)
                if matches!(&v.value, ast::Value::Number(n, _) if n == "9223372036854775808")) =>
            {
                CExpr::Lit(Value::Int(i64::MIN))
            }
            Expr::UnaryOp { op, expr } => {
                let x = self.compile(expr)?;
                match op {
                    UnaryOperator::Not | UnaryOperator::BangNot => CExpr::Not(Box::new(x)),
                    UnaryOperator::Minus => match x {
                        // `-(-9223372036854775808)`: a constant past BIGINT
                        // is a DECIMAL, as MySQL types it (a column's
                        // smallest BIGINT negated is 1690 when evaluated).
                        CExpr::Lit(Value::Int(i)) => CExpr::Lit(match i.checked_neg() {
                            Some(n) => Value::Int(n),
                            None => Value::Decimal(Decimal::from_i64(i).neg()),
                        }),
                        CExpr::Lit(Value::Float(f)) => CExpr::Lit(Value::Float(-f)),
                        // `-9223372036854775808` is a BIGINT, as in MySQL
                        // (its digits alone are past BIGINT: a DECIMAL).
                        CExpr::Lit(Value::Decimal(d)) => CExpr::Lit(match d.neg() {
                            n if n.scale() == 0 => {
                                n.to_i64_exact().map_or(Value::Decimal(n), Value::Int)
                            }
                            n => Value::Decimal(n),
                        }),
                        x => CExpr::Neg(Box::new(x)),
                    },
                    UnaryOperator::Plus => x,
                    other => return Err(SqlError::unsupported(format!("operator {other}"))),
                }
            }
            Expr::BinaryOp { left, op, right }
                if matches!(op, BinaryOperator::Plus | BinaryOperator::Minus)
                    && (matches!(right.as_ref(), Expr::Interval(_))
                        || matches!(left.as_ref(), Expr::Interval(_))) =>
            {
                // `d + INTERVAL n unit`, `INTERVAL n unit + d`, `d - INTERVAL n unit`.
                let sub = matches!(op, BinaryOperator::Minus);
                match (left.as_ref(), right.as_ref()) {
                    (d, Expr::Interval(iv)) if !matches!(d, Expr::Interval(_)) => {
                        self.interval_call(d, iv, sub)?
                    }
                    (Expr::Interval(iv), d) if !sub && !matches!(d, Expr::Interval(_)) => {
                        self.interval_call(d, iv, false)?
                    }
                    // `INTERVAL … - d` is a syntax error in MySQL too.
                    _ => return Err(SqlError::parse(format!("bad use of INTERVAL in {e}"))),
                }
            }
            Expr::BinaryOp { left, op, right }
                if matches!(op, BinaryOperator::Arrow | BinaryOperator::LongArrow) =>
            {
                // `doc->'$.path'` is JSON_EXTRACT; `->>` also unquotes.
                let extract = CExpr::Func(
                    "json_extract".into(),
                    vec![self.compile(left)?, self.compile(right)?],
                );
                if matches!(op, BinaryOperator::LongArrow) {
                    CExpr::Func("json_unquote".into(), vec![extract])
                } else {
                    extract
                }
            }
            Expr::BinaryOp { left, op, right }
                if matches!(left.as_ref(), Expr::Tuple(_))
                    || matches!(right.as_ref(), Expr::Tuple(_)) =>
            {
                self.row_comparison(left, op, right)?
            }
            // `||`: OR, or CONCAT under sql_mode PIPES_AS_CONCAT.
            Expr::BinaryOp {
                left,
                op: BinaryOperator::StringConcat,
                right,
            } if pipes_as_concat() => CExpr::Func(
                "concat".into(),
                vec![self.compile(left)?, self.compile(right)?],
            ),
            Expr::BinaryOp { left, op, right } => {
                let is_cmp = comparison(op).is_some();
                let op = match (comparison(op), op) {
                    (Some(cmp), _) => cmp,
                    (None, BinaryOperator::Plus) => BinOp::Add,
                    (None, BinaryOperator::Minus) => BinOp::Sub,
                    (None, BinaryOperator::Multiply) => BinOp::Mul,
                    (None, BinaryOperator::Divide) => BinOp::Div,
                    (None, BinaryOperator::MyIntegerDivide | BinaryOperator::DuckIntegerDivide) => {
                        BinOp::IntDiv
                    }
                    (None, BinaryOperator::Modulo) => BinOp::Mod,
                    (None, BinaryOperator::And) => BinOp::And,
                    (None, BinaryOperator::Or | BinaryOperator::StringConcat) => BinOp::Or,
                    (None, BinaryOperator::Xor) => BinOp::Xor,
                    (None, other) => {
                        return Err(SqlError::unsupported(format!("operator {other}")))
                    }
                };
                // A hexadecimal literal is a number in arithmetic, and
                // beside a number literal in a comparison.
                let numeric = match op {
                    BinOp::Add
                    | BinOp::Sub
                    | BinOp::Mul
                    | BinOp::Div
                    | BinOp::IntDiv
                    | BinOp::Mod => true,
                    _ => {
                        is_cmp
                            && [left, right].iter().any(|x| {
                                matches!(x.as_ref(), Expr::Value(v)
                                    if matches!(v.value, ast::Value::Number(..)))
                            })
                    }
                };
                let mut operand = |x: &Expr| -> SqlResult<CExpr> {
                    match hex_number(x).filter(|_| numeric) {
                        Some(n) => Ok(CExpr::Lit(n)),
                        None => self.compile(x),
                    }
                };
                let (mut l, mut r) = (operand(left.as_ref())?, operand(right.as_ref())?);
                // Beside a column, a comparison's hexadecimal literal is
                // a number or bytes as the column's value is.
                if is_cmp {
                    let hex_beside =
                        |hex: &Expr, lit: &CExpr, other: &CExpr| match (hex_number(hex), lit) {
                            (Some(n), CExpr::Lit(Value::Bytes(_)))
                                if matches!(other, CExpr::Col(_)) =>
                            {
                                Some(CExpr::Func(
                                    tree::HEX_OPERAND.into(),
                                    vec![other.clone(), lit.clone(), CExpr::Lit(n)],
                                ))
                            }
                            _ => None,
                        };
                    if let Some(x) = hex_beside(left, &l, &r) {
                        l = x;
                    } else if let Some(x) = hex_beside(right, &r, &l) {
                        r = x;
                    }
                }
                CExpr::Bin(op, Box::new(l), Box::new(r))
            }
            // `_binary 'abc'` is a binary string; a UTF-8 introducer
            // (`_utf8mb4 'abc'`) changes nothing. Other character sets
            // are not offered.
            Expr::Prefixed { prefix, value } => {
                let cs = prefix.value.to_ascii_lowercase();
                let v = self.compile(value)?;
                match (cs.as_str(), v) {
                    ("_binary", CExpr::Lit(Value::Text(s))) => {
                        CExpr::Lit(Value::Bytes(s.into_bytes()))
                    }
                    ("_binary", v @ CExpr::Lit(Value::Bytes(_))) => v,
                    ("_utf8mb4" | "_utf8" | "_utf8mb3", CExpr::Lit(Value::Bytes(b))) => {
                        CExpr::Lit(Value::Text(String::from_utf8(b).map_err(|e| {
                            SqlError::new(
                                1300,
                                format!(
                                    "Invalid utf8mb4 character string: '{}'",
                                    e.as_bytes()
                                        .iter()
                                        .map(|x| format!("{x:02X}"))
                                        .collect::<String>()
                                ),
                            )
                        })?))
                    }
                    ("_utf8mb4" | "_utf8" | "_utf8mb3", v) => v,
                    _ => {
                        return Err(SqlError::unsupported(format!(
                            "character set introducer {cs}"
                        )))
                    }
                }
            }
            Expr::IsNull(x) => CExpr::IsNull(Box::new(self.compile(x)?), false),
            Expr::IsNotNull(x) => CExpr::IsNull(Box::new(self.compile(x)?), true),
            // `x IS [NOT] TRUE / FALSE` test x's truth value (2 and 0.5
            // are TRUE), never NULL; `IS [NOT] UNKNOWN` is `IS [NOT] NULL`.
            Expr::IsTrue(x) => CExpr::Func(IS_TRUE.into(), vec![self.compile(x)?]),
            Expr::IsNotTrue(x) => CExpr::Not(Box::new(CExpr::Func(
                IS_TRUE.into(),
                vec![self.compile(x)?],
            ))),
            Expr::IsFalse(x) => CExpr::Func(IS_FALSE.into(), vec![self.compile(x)?]),
            Expr::IsNotFalse(x) => CExpr::Not(Box::new(CExpr::Func(
                IS_FALSE.into(),
                vec![self.compile(x)?],
            ))),
            Expr::IsUnknown(x) => CExpr::IsNull(Box::new(self.compile(x)?), false),
            Expr::IsNotUnknown(x) => CExpr::IsNull(Box::new(self.compile(x)?), true),
            Expr::In {
                expr,
                target,
                negated,
                ..
            } => match target {
                ast::InTarget::List(list) if matches!(expr.as_ref(), Expr::Tuple(_)) => {
                    // `(a, b) IN ((1, 2), (3, 4))`: an OR of row equalities
                    // (the same three-valued answer as MySQL's).
                    let mut any: Option<CExpr> = None;
                    for item in list {
                        let eq = self.row_comparison(expr, &BinaryOperator::Eq, item)?;
                        any = Some(match any {
                            None => eq,
                            Some(a) => CExpr::Bin(BinOp::Or, Box::new(a), Box::new(eq)),
                        });
                    }
                    let any = any.ok_or_else(|| SqlError::parse("empty IN list"))?;
                    if *negated {
                        CExpr::Not(Box::new(any))
                    } else {
                        any
                    }
                }
                ast::InTarget::List(list) => {
                    let x = self.compile(expr)?;
                    let items = list
                        .iter()
                        .map(|i| {
                            let c = self.compile(i)?;
                            // A hexadecimal item beside a column: a number
                            // or bytes as the column's value is.
                            Ok(match (hex_number(i), &x) {
                                (Some(n), CExpr::Col(_))
                                    if matches!(c, CExpr::Lit(Value::Bytes(_))) =>
                                {
                                    CExpr::Func(
                                        tree::HEX_OPERAND.into(),
                                        vec![x.clone(), c, CExpr::Lit(n)],
                                    )
                                }
                                _ => c,
                            })
                        })
                        .collect::<SqlResult<Vec<_>>>()?;
                    CExpr::InList(Box::new(x), items, *negated)
                }
                ast::InTarget::Subquery(subquery) => {
                    if matches!(expr.as_ref(), Expr::Tuple(_)) {
                        return Err(SqlError::unsupported("row constructors with IN (subquery)"));
                    }
                    let x = self.compile(expr)?;
                    let sp = self.subquery(subquery)?;
                    Self::one_column(&sp)?;
                    CExpr::InSub(Box::new(x), sp, *negated)
                }
                _ => return Err(SqlError::unsupported("this IN target")),
            },
            Expr::Between {
                expr,
                negated,
                low,
                high,
            } => CExpr::Between(
                Box::new(self.compile(expr)?),
                Box::new(self.compile(low)?),
                Box::new(self.compile(high)?),
                *negated,
            ),
            Expr::Like {
                escape_char: Some(_),
                ..
            } => return Err(SqlError::unsupported("LIKE … ESCAPE")),
            Expr::Like { any: true, .. } => return Err(SqlError::unsupported("LIKE ANY")),
            Expr::Like {
                negated,
                expr,
                pattern,
                ..
            } if binary_operand(expr).is_some() || binary_operand(pattern).is_some() => {
                let x = binary_operand(expr).unwrap_or(expr);
                let p = binary_operand(pattern).unwrap_or(pattern);
                if [x, p].iter().any(|e| matches!(e, Expr::Collate { .. })) {
                    // An explicit COLLATE outranks the binary string.
                    return Err(SqlError::unsupported(
                        "LIKE of a binary string and a COLLATE",
                    ));
                }
                let f = CExpr::Func(LIKE_BINARY.into(), vec![self.compile(x)?, self.compile(p)?]);
                if *negated {
                    CExpr::Not(Box::new(f))
                } else {
                    f
                }
            }
            Expr::Like {
                negated,
                expr,
                pattern,
                ..
            } => CExpr::Like(
                Box::new(self.compile(expr)?),
                Box::new(self.compile(pattern)?),
                *negated,
            ),
            Expr::Case {
                operand,
                conditions,
                else_result,
                ..
            } => {
                let op = match operand {
                    Some(o) => Some(Box::new(self.compile(o)?)),
                    None => None,
                };
                let mut arms = Vec::new();
                for w in conditions {
                    arms.push((self.compile(&w.condition)?, self.compile(&w.result)?));
                }
                let els = match else_result {
                    Some(x) => Some(Box::new(self.compile(x)?)),
                    None => None,
                };
                CExpr::Case(op, arms, els)
            }
            Expr::Cast {
                expr,
                data_type,
                format,
                ..
            } => {
                if format.is_some() {
                    return Err(SqlError::unsupported("CAST … FORMAT"));
                }
                // sqlparser reads `BINARY x = y` as BINARY (x = y) (MySQL:
                // (BINARY x) = y): an operator right under BINARY without
                // parentheses is refused rather than answered otherwise.
                if matches!(data_type, ast::DataType::Binary(None))
                    && matches!(
                        expr.as_ref(),
                        Expr::BinaryOp { .. }
                            | Expr::Like { .. }
                            | Expr::ILike { .. }
                            | Expr::RLike { .. }
                            | Expr::SimilarTo { .. }
                            | Expr::Between { .. }
                            | Expr::In { .. }
                            | Expr::IsNull(_)
                            | Expr::IsNotNull(_)
                            | Expr::IsTrue(_)
                            | Expr::IsNotTrue(_)
                            | Expr::IsFalse(_)
                            | Expr::IsNotFalse(_)
                    )
                {
                    return Err(SqlError::unsupported(
                        "BINARY x <operator> y (read as BINARY (x <operator> y)): write (BINARY x) <operator> y",
                    ));
                }
                self.cast(expr, data_type)?
            }
            Expr::Convert {
                is_try: false,
                expr,
                data_type,
                charset,
                styles,
                ..
            } if styles.is_empty() => match (data_type, charset) {
                // CONVERT(x, type) is CAST(x AS type).
                (Some(ty), None) => self.cast(expr, ty)?,
                // Text is UTF-8 throughout: converting to a UTF-8 set
                // changes nothing (a binary string's bytes are taken as
                // UTF-8), to binary gives the bytes; other sets are not
                // offered.
                (None, Some(cs)) => {
                    let cs = cs.to_string().to_ascii_lowercase();
                    match cs.as_str() {
                        "binary" => {
                            CExpr::Cast(Box::new(self.compile(expr)?), CastTo::Binary(None))
                        }
                        "utf8mb4" | "utf8" | "utf8mb3" => {
                            CExpr::Cast(Box::new(self.compile(expr)?), CastTo::Text(None))
                        }
                        _ => return Err(SqlError::unsupported(format!("CONVERT … USING {cs}"))),
                    }
                }
                _ => return Err(SqlError::unsupported(e.to_string())),
            },
            Expr::MatchAgainst {
                columns,
                match_value,
                opt_search_modifier,
            } => {
                let mut cols = Vec::new();
                for c in columns {
                    let parts = object_parts(c);
                    let idx = match parts.as_slice() {
                        [c] => self.scope.resolve(None, c)?,
                        [t, c] => self.scope.resolve(Some(t), c)?,
                        _ => return Err(SqlError::parse("bad MATCH column")),
                    };
                    cols.push(idx);
                }
                let query = match literal(&match_value.value)? {
                    Value::Text(s) => s,
                    other => other.to_string(),
                };
                let boolean = match opt_search_modifier {
                    None | Some(ast::SearchModifier::InNaturalLanguageMode) => false,
                    Some(ast::SearchModifier::InBooleanMode) => true,
                    Some(other) => {
                        return Err(SqlError::unsupported(format!(
                            "MATCH … AGAINST (… {other})"
                        )))
                    }
                };
                if boolean {
                    // A malformed boolean query is an error wherever the
                    // rows come from (index, fresh tail or exact scan).
                    tributary_index::check_boolean(&query).map_err(|e| {
                        SqlError::parse(format!(
                            "You have an error in your full-text boolean query: {e}"
                        ))
                    })?;
                }
                let spec = MatchSpec {
                    columns: cols,
                    query,
                    boolean,
                };
                let slot = match self.matches.iter().position(|m| *m == spec) {
                    Some(i) => i,
                    None => {
                        self.matches.push(spec);
                        self.matches.len() - 1
                    }
                };
                CExpr::Match(slot)
            }
            Expr::Function(f) => self.compile_function(f)?,
            Expr::Substring {
                expr,
                substring_from,
                substring_for,
                ..
            } => {
                let mut args = vec![self.compile(expr)?];
                match (substring_from, substring_for) {
                    (Some(from), len) => {
                        args.push(self.compile(from)?);
                        if let Some(len) = len {
                            args.push(self.compile(len)?);
                        }
                    }
                    // `SUBSTRING(s FOR n)` is `SUBSTRING(s, 1, n)`.
                    (None, Some(len)) => {
                        args.push(CExpr::Lit(Value::Int(1)));
                        args.push(self.compile(len)?);
                    }
                    // Checked here: this call does not pass `compile_function`.
                    (None, None) => return Err(wrong_count("substring")),
                }
                CExpr::Func("substring".into(), args)
            }
            Expr::Trim {
                expr,
                trim_where,
                trim_what,
                trim_characters,
            } => {
                if trim_characters.is_some() {
                    return Err(SqlError::unsupported("TRIM(s, characters)"));
                }
                let s = self.compile(expr)?;
                let what = match trim_what {
                    Some(w) => self.compile(w)?,
                    None => CExpr::Lit(Value::Text(" ".into())),
                };
                // Internal names (with a space: not callable as written).
                let name = match trim_where {
                    Some(ast::TrimWhereField::Leading) => "trim leading",
                    Some(ast::TrimWhereField::Trailing) => "trim trailing",
                    _ => "trim both",
                };
                CExpr::Func(name.into(), vec![s, what])
            }
            Expr::Floor { expr, field } | Expr::Ceil { expr, field } => {
                let name = if matches!(e, Expr::Floor { .. }) {
                    "floor"
                } else {
                    "ceil"
                };
                let mut args = vec![self.compile(expr)?];
                match field {
                    ast::CeilFloorKind::DateTimeField(ast::DateTimeField::NoDateTime) => {}
                    // MySQL's FLOOR/CEIL take one argument: a scale is a
                    // wrong parameter count when evaluated.
                    ast::CeilFloorKind::Scale(v) => args.push(CExpr::Lit(literal(&v.value)?)),
                    ast::CeilFloorKind::DateTimeField(f) => {
                        return Err(SqlError::unsupported(format!("{name}(… TO {f})")))
                    }
                }
                CExpr::Func(name.into(), args)
            }
            // `x COLLATE c`: a marker `collate::resolve` reads (the value
            // is x's own).
            Expr::Collate { expr, collation } => {
                let name = collation.to_string();
                Collation::lookup_for_utf8mb4(&name)?;
                CExpr::Func(
                    collate::MARK.into(),
                    vec![self.compile(expr)?, CExpr::Lit(Value::Text(name))],
                )
            }
            // `x [NOT] REGEXP p` / `RLIKE`: REGEXP_LIKE(x, p) (expr/regexp.rs).
            Expr::RLike {
                negated,
                expr,
                pattern,
                ..
            } => {
                let like = CExpr::Func(
                    "regexp_like".into(),
                    vec![self.compile(expr)?, self.compile(pattern)?],
                );
                if *negated {
                    CExpr::Not(Box::new(like))
                } else {
                    like
                }
            }
            Expr::Position { expr, r#in } => CExpr::Func(
                "locate".into(),
                vec![self.compile(expr)?, self.compile(r#in)?],
            ),
            Expr::Extract {
                field,
                syntax: ast::ExtractSyntax::From,
                expr,
            } => {
                // The single-field units are the functions of the same
                // name (`EXTRACT(MONTH FROM d)` is `MONTH(d)`).
                use ast::DateTimeField as F;
                let name = match field {
                    F::Year => "year",
                    F::Quarter => "quarter",
                    F::Month => "month",
                    F::Week(None) => "week",
                    F::Day => "day",
                    F::Hour => "hour",
                    F::Minute => "minute",
                    F::Second => "second",
                    F::Microsecond => "microsecond",
                    other => return Err(SqlError::unsupported(format!("EXTRACT({other} FROM …)"))),
                };
                crate::sql::functions::check_call(name, 1)?;
                CExpr::Func(name.into(), vec![self.compile(expr)?])
            }
            other => return Err(SqlError::unsupported(format!("expression {other}"))),
        })
    }

    fn compile_function(&mut self, f: &ast::Function) -> SqlResult<CExpr> {
        let name = object_parts(&f.name).join(".");
        if let Some(over) = &f.over {
            return self.compile_window(f, &name, over);
        }
        // Clauses this engine does not evaluate are refused, never skipped.
        if f.filter.is_some() {
            return Err(SqlError::unsupported("FILTER (WHERE …) on a function"));
        }
        if !f.within_group.is_empty() {
            return Err(SqlError::unsupported("WITHIN GROUP"));
        }
        if f.null_treatment.is_some() {
            return Err(SqlError::unsupported("IGNORE/RESPECT NULLS"));
        }
        if !matches!(f.parameters, ast::FunctionArguments::None) {
            return Err(SqlError::unsupported("parametric functions"));
        }
        let mut star = false;
        let mut distinct = false;
        let mut args = Vec::new();
        match &f.args {
            ast::FunctionArguments::None => {}
            ast::FunctionArguments::Subquery(_) => {
                return Err(SqlError::unsupported("subquery as function argument"))
            }
            ast::FunctionArguments::List(l) => {
                distinct = matches!(
                    l.duplicate_treatment,
                    Some(ast::DuplicateTreatment::Distinct)
                );
                if let Some(c) = l.clauses.first() {
                    return Err(SqlError::unsupported(format!("{c} in a call to {name}")));
                }
                for a in &l.args {
                    match a {
                        // By reference: a clone per call would copy the nested
                        // calls again at every level (issue 38: 1,000 deep).
                        ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) => args.push(e),
                        ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Wildcard) => star = true,
                        other => {
                            return Err(SqlError::unsupported(format!("function argument {other}")))
                        }
                    }
                }
            }
        }
        if let Some(func) = agg_func(&name) {
            if distinct && matches!(func, AggFunc::Stat(_)) {
                // MySQL's grammar has no DISTINCT for these.
                return Err(SqlError::parse(format!(
                    "You have an error in your SQL syntax near 'DISTINCT' in {name}()"
                )));
            }
            if !self.allow_aggs {
                return Err(SqlError::new(
                    code::INVALID_GROUP_FUNC,
                    "Invalid use of group function",
                ));
            }
            let (func, arg) = if star {
                if func != AggFunc::Count {
                    return Err(SqlError::parse(format!("{name}(*) is not valid")));
                }
                (AggFunc::CountStar, None)
            } else {
                // Aggregate arguments may not contain aggregates (nor
                // window functions).
                let saved = (self.allow_aggs, self.allow_windows);
                self.allow_aggs = false;
                self.allow_windows = false;
                let c = self.agg_arg(func, &name, &args);
                (self.allow_aggs, self.allow_windows) = saved;
                let (func, arg) = c?;
                (func, Some(arg))
            };
            let collation = match &arg {
                Some(a) if matches!(func, AggFunc::Min | AggFunc::Max) || distinct => {
                    collate::agg_collation(a, &self.collate_env())?
                }
                _ => None,
            };
            self.aggs.push(AggCall {
                func,
                arg,
                distinct,
                collation,
                window: None,
            });
            return Ok(agg_slot(func, self.aggs.len() - 1));
        }
        match name.as_str() {
            "date_add" | "adddate" | "date_sub" | "subdate" => {
                let sub = name == "date_sub" || name == "subdate";
                return match args.as_slice() {
                    [d, Expr::Interval(iv)] => self.interval_call(d, iv, sub),
                    // ADDDATE(d, n) / SUBDATE(d, n): n days.
                    [d, n] if name == "adddate" || name == "subdate" => Ok(CExpr::Func(
                        interval_fn(sub).into(),
                        vec![
                            self.compile(d)?,
                            self.compile(n)?,
                            CExpr::Lit(Value::Text("day".into())),
                        ],
                    )),
                    [_, _] => Err(SqlError::parse(format!(
                        "{} requires an INTERVAL argument",
                        name.to_ascii_uppercase()
                    ))),
                    _ => Err(wrong_count(&name)),
                };
            }
            "timestampdiff" | "timestampadd" => {
                // The unit is a keyword, not a column: `TIMESTAMPDIFF(DAY, a, b)`.
                let mut cargs = Vec::with_capacity(args.len());
                for (i, a) in args.iter().enumerate() {
                    match a {
                        Expr::Identifier(id) if i == 0 && id.quote_style.is_none() => {
                            let lower = id.value.to_ascii_lowercase();
                            // `SQL_TSI_DAY` is MySQL's ODBC spelling of `DAY`.
                            let unit = lower.strip_prefix("sql_tsi_").unwrap_or(&lower).to_string();
                            if datetime::unit_micros(&unit).is_none()
                                && datetime::unit_months(&unit).is_none()
                            {
                                return Err(SqlError::parse(format!(
                                    "unknown unit {} in {}",
                                    id.value,
                                    name.to_ascii_uppercase()
                                )));
                            }
                            cargs.push(CExpr::Lit(Value::Text(unit)));
                        }
                        _ if i == 0 => {
                            return Err(SqlError::parse(format!(
                                "{} needs a unit keyword first",
                                name.to_ascii_uppercase()
                            )))
                        }
                        a => cargs.push(self.compile(a)?),
                    }
                }
                crate::sql::functions::check_call(&name, cargs.len())?;
                return Ok(CExpr::Func(name, cargs));
            }
            _ => {}
        }
        // The registry knows the name and its arity (1305 / 1582 here,
        // before anything is evaluated, as MySQL checks them).
        crate::sql::functions::check_call(&name, args.len())?;
        let cargs = args
            .iter()
            .map(|a| self.compile(a))
            .collect::<SqlResult<Vec<_>>>()?;
        Ok(CExpr::Func(name, cargs))
    }

    /// `f(…) OVER (…)`: the supported subset (the ranking functions,
    /// NTILE, LAG / LEAD, FIRST / LAST_VALUE, COUNT/SUM/AVG/MIN/MAX over
    /// PARTITION BY / ORDER BY with the default frame) becomes an aggregate slot the window operator
    /// fills; everything else is refused (decision 009).
    fn compile_window(
        &mut self,
        f: &ast::Function,
        name: &str,
        over: &ast::WindowType,
    ) -> SqlResult<CExpr> {
        if !self.allow_windows {
            return Err(SqlError::new(
                code::WINDOW_INVALID_USE,
                format!("You cannot use the window function '{name}' in this context.'"),
            ));
        }
        let spec = match over {
            ast::WindowType::WindowSpec(s) => window_spec::resolve_spec(self.named_windows, s)?,
            ast::WindowType::NamedWindow(w) => {
                let s = window_spec::lookup(self.named_windows, w)?;
                window_spec::resolve_spec(self.named_windows, &s)?
            }
        };
        let spec = &spec;
        if f.null_treatment == Some(ast::NullTreatment::IgnoreNulls) {
            return Err(SqlError::unsupported("IGNORE NULLS"));
        }
        // RESPECT NULLS is the default MySQL accepts.
        if f.filter.is_some()
            || !f.within_group.is_empty()
            || !matches!(f.parameters, ast::FunctionArguments::None)
        {
            return Err(SqlError::unsupported(format!(
                "this form of {name}(…) OVER"
            )));
        }
        let func = match crate::sql::functions::window(name) {
            Some((w, _)) => w,
            None if agg_func(name).is_some() => WinFunc::Agg,
            None => {
                return Err(SqlError::unsupported(format!(
                    "window function {}(…) OVER",
                    name.to_ascii_uppercase()
                )))
            }
        };
        let saved = self.allow_windows;
        self.allow_windows = false;
        let r = self.window_call(f, name, func, spec);
        self.allow_windows = saved;
        r
    }

    fn window_call(
        &mut self,
        f: &ast::Function,
        name: &str,
        func: WinFunc,
        spec: &ast::WindowSpec,
    ) -> SqlResult<CExpr> {
        window_spec::check_spec(spec)?;
        let mut partition = Vec::new();
        for e in &spec.partition_by {
            let c = self.compile(e)?;
            let c = self.resolve_collations(c)?;
            partition.push(self.sort_key(c)?);
        }
        let mut order = Vec::new();
        // The keys as compiled, before any collation weight (a RANGE
        // offset is added to the first).
        let mut order_keys = Vec::new();
        for o in &spec.order_by {
            if o.options.nulls_first.is_some() || o.with_fill.is_some() {
                return Err(SqlError::unsupported(
                    "NULLS FIRST/LAST in a window's ORDER BY",
                ));
            }
            let c = self.compile(&o.expr)?;
            let c = self.resolve_collations(c)?;
            order_keys.push(c.clone());
            order.push((
                self.sort_key(c)?,
                matches!(o.options.sort, Some(ast::OrderBySort::Desc)),
            ));
        }
        let (frame, range_at) = match &spec.window_frame {
            Some(fr) => {
                let key = match (&order_keys[..], &spec.order_by[..]) {
                    ([k], [o]) => Some((k.clone(), o)),
                    _ => None,
                };
                let (fr, at) = self.frame(fr, key)?;
                (Some(fr), at)
            }
            None => (None, [None, None]),
        };
        let text = format!("{f}");
        let window = |func, n, default| {
            Some(Box::new(Window {
                func,
                partition,
                order,
                text,
                n,
                default,
                frame,
                range_at,
                cut: None,
            }))
        };
        if matches!(
            func,
            WinFunc::Ntile
                | WinFunc::Lag
                | WinFunc::Lead
                | WinFunc::FirstValue
                | WinFunc::LastValue
                | WinFunc::NthValue
        ) {
            let args: Vec<&Expr> = match &f.args {
                ast::FunctionArguments::List(l)
                    if l.duplicate_treatment.is_none() && l.clauses.is_empty() =>
                {
                    l.args
                        .iter()
                        .map(|a| match a {
                            ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) => Ok(e),
                            _ => Err(wrong_count(name)),
                        })
                        .collect::<SqlResult<_>>()?
                }
                _ => return Err(wrong_count(name)),
            };
            let lag = matches!(func, WinFunc::Lag | WinFunc::Lead);
            let arity_ok =
                crate::sql::functions::window(name).is_some_and(|(_, d)| d.takes(args.len()));
            if !arity_ok {
                return Err(wrong_count(name));
            }
            // NTILE's bucket count and LAG / LEAD's offset: a constant
            // integer (positive / non-negative), as MySQL requires.
            let count_arg = match func {
                WinFunc::Ntile => args.first(),
                WinFunc::NthValue => args.get(1),
                _ if lag => args.get(1),
                _ => None,
            };
            let n = match count_arg {
                None => 1,
                Some(e) => match self.compile(e)? {
                    CExpr::Lit(Value::Int(i)) if i > 0 || (i == 0 && lag) => i as u64,
                    _ => {
                        return Err(SqlError::new(
                            code::WRONG_ARGUMENTS,
                            format!("Incorrect arguments to {name}"),
                        ))
                    }
                },
            };
            // The value argument; NTILE's typing proxy is any integer.
            let arg = match func {
                WinFunc::Ntile => CExpr::Lit(Value::Int(0)),
                _ => {
                    let c = self.compile(args[0])?;
                    self.resolve_collations(c)?
                }
            };
            let default = match args.get(2) {
                Some(e) => {
                    let c = self.compile(e)?;
                    Some(self.resolve_collations(c)?)
                }
                None => None,
            };
            // Typed as its argument (MIN's typing: the argument's own).
            self.aggs.push(AggCall {
                func: AggFunc::Min,
                arg: Some(arg),
                distinct: false,
                collation: None,
                window: window(func, n, default),
            });
            return Ok(CExpr::Agg(self.aggs.len() - 1));
        }
        if func != WinFunc::Agg {
            if !matches!(&f.args, ast::FunctionArguments::List(l) if l.args.is_empty() && l.duplicate_treatment.is_none() && l.clauses.is_empty())
                && !matches!(f.args, ast::FunctionArguments::None)
            {
                return Err(SqlError::parse(format!(
                    "{}() takes no arguments",
                    name.to_ascii_uppercase()
                )));
            }
            // PERCENT_RANK / CUME_DIST are DOUBLE (typed as MAX of a
            // DOUBLE, never evaluated); the ranks BIGINT (COUNT(*)'s).
            let (proxy, arg) = match func {
                WinFunc::PercentRank | WinFunc::CumeDist => {
                    (AggFunc::Max, Some(CExpr::Lit(Value::Float(0.0))))
                }
                _ => (AggFunc::CountStar, None),
            };
            self.aggs.push(AggCall {
                func: proxy,
                arg,
                distinct: false,
                collation: None,
                window: window(func, 1, None),
            });
            return Ok(CExpr::Agg(self.aggs.len() - 1));
        }
        // An aggregate OVER: compiled as the plain aggregate (its checks,
        // argument and typing), then turned into a window slot. Its
        // argument is over the grouped row, so it may read aggregates of
        // a grouped block (`SUM(SUM(x)) OVER ()`).
        let ast::FunctionArguments::List(l) = &f.args else {
            return Err(SqlError::wrong_args(format!(
                "Incorrect parameter count in the call to native function '{name}'"
            )));
        };
        if l.duplicate_treatment == Some(ast::DuplicateTreatment::Distinct) {
            return Err(SqlError::unsupported(format!(
                "<window function>({} DISTINCT ..)",
                name.to_ascii_uppercase()
            )));
        }
        let star = matches!(
            l.args.as_slice(),
            [ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Wildcard)]
        );
        let (func_kind, arg) = if star {
            if name != "count" {
                return Err(SqlError::parse(format!("{name}(*) is not valid")));
            }
            (AggFunc::CountStar, None)
        } else {
            let args = l
                .args
                .iter()
                .map(|a| match a {
                    ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) => Ok(e),
                    _ => Err(wrong_count(name)),
                })
                .collect::<SqlResult<Vec<_>>>()?;
            let Some(af) = agg_func(name) else {
                return Err(SqlError::unsupported(format!("window function {name}")));
            };
            let (af, c) = self.agg_arg(af, name, &args)?;
            (af, Some(c))
        };
        let collation = match &arg {
            Some(a) if matches!(func_kind, AggFunc::Min | AggFunc::Max) => {
                collate::agg_collation(a, &self.collate_env())?
            }
            _ => None,
        };
        self.aggs.push(AggCall {
            func: func_kind,
            arg,
            distinct: false,
            collation,
            window: window(func, 1, None),
        });
        Ok(agg_slot(func_kind, self.aggs.len() - 1))
    }

    /// An aggregate's argument (`args`, as written): one expression, or
    /// JSON_OBJECTAGG's key and value as one; JSON_ARRAYAGG learns
    /// whether its argument is JSON.
    fn agg_arg(
        &mut self,
        func: AggFunc,
        name: &str,
        args: &[&Expr],
    ) -> SqlResult<(AggFunc, CExpr)> {
        use crate::sql::agg_stats::StatFunc;
        match (func, args) {
            (AggFunc::Stat(StatFunc::JsonObject), [k, v]) => {
                let k = self.compile(k)?;
                let k = self.resolve_collations(k)?;
                let v = self.compile(v)?;
                let v = self.resolve_collations(v)?;
                // One value per row: `JSON_ARRAY(k, v)`.
                Ok((func, CExpr::Func("json_array".into(), vec![k, v])))
            }
            (AggFunc::Stat(StatFunc::JsonObject), _) | (_, [] | [_, _, ..]) => {
                Err(wrong_count(name))
            }
            (_, [a]) => {
                let c = self.compile(a)?;
                let c = self.resolve_collations(c)?;
                let func = match func {
                    AggFunc::Stat(StatFunc::JsonArray { .. }) => {
                        AggFunc::Stat(StatFunc::JsonArray { json: c.is_json() })
                    }
                    f => f,
                };
                Ok((func, c))
            }
        }
    }

    /// An explicit frame as MySQL checks it (`Window::check_border_sanity`,
    /// `setup_range_expressions`): a start of UNBOUNDED FOLLOWING is 3584,
    /// an end of UNBOUNDED PRECEDING 3585; a start after the end (CURRENT
    /// ROW to n PRECEDING, n FOLLOWING to CURRENT ROW or m PRECEDING), a
    /// ROWS offset that is not a non-negative integer, or a RANGE offset
    /// that is NULL or negative is 3586; an INTERVAL in a ROWS frame 3596;
    /// a RANGE offset needs exactly one ORDER BY key (`key`: as compiled,
    /// with its clause) (3587, its type is checked later) and a constant
    /// offset (3590). GROUPS is a syntax error in MySQL 8 (1064).
    fn frame(
        &mut self,
        fr: &ast::WindowFrame,
        key: Option<(CExpr, &ast::OrderByExpr)>,
    ) -> SqlResult<(Frame, RangeAt)> {
        let rows = match fr.units {
            ast::WindowFrameUnits::Rows => true,
            ast::WindowFrameUnits::Range => false,
            ast::WindowFrameUnits::Groups => {
                return Err(SqlError::parse(
                    "You have an error in your SQL syntax near 'GROUPS': GROUPS frames are not MySQL 8 syntax",
                ))
            }
        };
        let kind = |b: &ast::WindowFrameBound| match b {
            ast::WindowFrameBound::Preceding(None) => 0,
            ast::WindowFrameBound::Preceding(Some(_)) => 1,
            ast::WindowFrameBound::CurrentRow => 2,
            ast::WindowFrameBound::Following(Some(_)) => 3,
            ast::WindowFrameBound::Following(None) => 4,
        };
        let end_bound = fr
            .end_bound
            .clone()
            .unwrap_or(ast::WindowFrameBound::CurrentRow);
        if kind(&fr.start_bound) == 4 {
            return Err(SqlError::new(
                code::WINDOW_FRAME_START_ILLEGAL,
                "Window '<unnamed window>': frame start cannot be UNBOUNDED FOLLOWING.",
            ));
        }
        if kind(&end_bound) == 0 {
            return Err(SqlError::new(
                code::WINDOW_FRAME_END_ILLEGAL,
                "Window '<unnamed window>': frame end cannot be UNBOUNDED PRECEDING.",
            ));
        }
        let illegal = || {
            SqlError::new(
                code::WINDOW_FRAME_ILLEGAL,
                "Window '<unnamed window>': frame start or end is negative, NULL or of non-integral type",
            )
        };
        if kind(&fr.start_bound) > kind(&end_bound) {
            return Err(illegal());
        }
        let mut range_at: RangeAt = [None, None];
        let mut bound = |c: &mut Self,
                         b: &ast::WindowFrameBound,
                         at: usize|
         -> SqlResult<FrameBound> {
            let (e, preceding) = match b {
                ast::WindowFrameBound::CurrentRow => return Ok(FrameBound::CurrentRow),
                ast::WindowFrameBound::Preceding(None) => {
                    return Ok(FrameBound::UnboundedPreceding)
                }
                ast::WindowFrameBound::Following(None) => {
                    return Ok(FrameBound::UnboundedFollowing)
                }
                ast::WindowFrameBound::Preceding(Some(e)) => (e, true),
                ast::WindowFrameBound::Following(Some(e)) => (e, false),
            };
            let marker = if preceding {
                FrameBound::Preceding(0)
            } else {
                FrameBound::Following(0)
            };
            if rows {
                if matches!(**e, Expr::Interval(_)) {
                    return Err(SqlError::new(
                        code::WINDOW_ROWS_INTERVAL_USE,
                        "Window '<unnamed window>': INTERVAL can only be used with RANGE frames.",
                    ));
                }
                return match c.compile(e)? {
                    CExpr::Lit(Value::Int(i)) if i >= 0 => Ok(if preceding {
                        FrameBound::Preceding(i as u64)
                    } else {
                        FrameBound::Following(i as u64)
                    }),
                    _ => Err(illegal()),
                };
            }
            let Some((k, o)) = &key else {
                return Err(SqlError::new(
                    code::WINDOW_RANGE_FRAME_ORDER_TYPE,
                    "Window '<unnamed window>' with RANGE N PRECEDING/FOLLOWING frame requires exactly one ORDER BY expression, of numeric or temporal type",
                ));
            };
            let desc = matches!(o.options.sort, Some(ast::OrderBySort::Desc));
            // PRECEDING is toward smaller keys ascending, larger descending.
            let minus = preceding != desc;
            let (value, interval) = match &**e {
                Expr::Interval(iv) => (&*iv.value, true),
                other => (other, false),
            };
            let v = c.compile(value)?;
            if !v.is_constant() {
                return Err(SqlError::new(
                    code::WINDOW_RANGE_BOUND_NOT_CONSTANT,
                    "Window '<unnamed window>' has a non-constant frame bound.",
                ));
            }
            let n = eval_const(&v, &NoHost)?;
            let negative = match &n {
                Value::Null => true,
                Value::Int(i) => *i < 0,
                Value::Float(f) => *f < 0.0,
                Value::Decimal(d) => d.to_f64() < 0.0,
                Value::Text(t) => t.trim_start().starts_with('-'),
                _ => false,
            };
            if negative {
                return Err(illegal());
            }
            let target = match &**e {
                Expr::Interval(iv) => {
                    let CExpr::Func(name, mut args) = c.interval_call(value, iv, minus)? else {
                        return Err(SqlError::internal("an INTERVAL call compiles to a call"));
                    };
                    // The key, not the interval's value, is what moves.
                    if let Some(first) = args.first_mut() {
                        *first = k.clone();
                    }
                    CExpr::Func(name, args)
                }
                _ => CExpr::Bin(
                    if minus { BinOp::Sub } else { BinOp::Add },
                    Box::new(k.clone()),
                    Box::new(CExpr::Lit(n)),
                ),
            };
            range_at[at] = Some((target, interval));
            Ok(marker)
        };
        let start = bound(self, &fr.start_bound, 0)?;
        let end = bound(self, &end_bound, 1)?;
        Ok((Frame { rows, start, end }, range_at))
    }

    /// `DATE_ADD(d, INTERVAL n unit)` (or DATE_SUB when `sub`) as the
    /// internal call `"date_add interval"(d, n, unit)`.
    /// `CAST(x AS type)` / `CONVERT(x, type)`; `AS JSON` parses text as a
    /// JSON document (see `crate::json`).
    fn cast(&mut self, x: &Expr, ty: &ast::DataType) -> SqlResult<CExpr> {
        let inner = self.compile(x)?;
        if ty.to_string().eq_ignore_ascii_case("json") {
            return Ok(CExpr::Func("cast_as_json".into(), vec![inner]));
        }
        let to = cast_target(ty)?;
        // A hexadecimal literal cast to a number is the number it spells
        // (`CAST(0x3132 AS UNSIGNED)` is 12594, not 12).
        let numeric = matches!(
            to,
            CastTo::Int | CastTo::Unsigned | CastTo::Float | CastTo::Decimal(..)
        );
        let inner = match hex_number(x).filter(|_| numeric) {
            Some(n) => CExpr::Lit(n),
            None => inner,
        };
        Ok(CExpr::Cast(Box::new(inner), to))
    }

    fn interval_call(&mut self, d: &Expr, iv: &ast::Interval, sub: bool) -> SqlResult<CExpr> {
        let unit = match (&iv.leading_field, &iv.last_field) {
            (Some(f), None)
                if iv.leading_precision.is_none() && iv.fractional_seconds_precision.is_none() =>
            {
                match f {
                    ast::DateTimeField::Microsecond | ast::DateTimeField::Microseconds => {
                        "microsecond"
                    }
                    ast::DateTimeField::Second | ast::DateTimeField::Seconds => "second",
                    ast::DateTimeField::Minute | ast::DateTimeField::Minutes => "minute",
                    ast::DateTimeField::Hour | ast::DateTimeField::Hours => "hour",
                    ast::DateTimeField::Day | ast::DateTimeField::Days => "day",
                    ast::DateTimeField::Week(None) | ast::DateTimeField::Weeks => "week",
                    ast::DateTimeField::Month | ast::DateTimeField::Months => "month",
                    ast::DateTimeField::Quarter => "quarter",
                    ast::DateTimeField::Year | ast::DateTimeField::Years => "year",
                    other => return Err(SqlError::unsupported(format!("INTERVAL unit {other}"))),
                }
            }
            _ => return Err(SqlError::unsupported(format!("INTERVAL {iv}"))),
        };
        Ok(CExpr::Func(
            interval_fn(sub).into(),
            vec![
                self.compile(d)?,
                self.compile(&iv.value)?,
                CExpr::Lit(Value::Text(unit.into())),
            ],
        ))
    }
}

/// The comparison operators (`=`, `<>`, `<`, `<=`, `>`, `>=`, `<=>`).
fn comparison(op: &BinaryOperator) -> Option<BinOp> {
    Some(match op {
        BinaryOperator::Eq => BinOp::Eq,
        BinaryOperator::NotEq => BinOp::NotEq,
        BinaryOperator::Lt => BinOp::Lt,
        BinaryOperator::LtEq => BinOp::LtEq,
        BinaryOperator::Gt => BinOp::Gt,
        BinaryOperator::GtEq => BinOp::GtEq,
        BinaryOperator::Spaceship => BinOp::NullSafeEq,
        _ => return None,
    })
}

impl Compiler<'_> {
    /// A comparison of two row constructors, `(a, b) op (c, d)`, as MySQL
    /// defines it: `=` / `<=>` all pairs equal, `<>` some pair differs,
    /// `<` `<=` `>` `>=` lexicographically (the first pair that is not
    /// equal decides; a NULL before it makes the answer NULL). Rows of
    /// different widths, or a row beside a scalar, are error 1241.
    fn row_comparison(
        &mut self,
        left: &Expr,
        op: &BinaryOperator,
        right: &Expr,
    ) -> SqlResult<CExpr> {
        fn items(e: &Expr) -> &[Expr] {
            match e {
                Expr::Tuple(items) => items,
                Expr::Nested(inner) => items(inner),
                other => std::slice::from_ref(other),
            }
        }
        let (l, r) = (items(left), items(right));
        if l.len() != r.len() {
            return Err(SqlError::new(
                code::OPERAND_COLUMNS,
                format!("Operand should contain {} column(s)", l.len()),
            ));
        }
        let op = comparison(op).ok_or_else(|| {
            SqlError::new(
                code::OPERAND_COLUMNS,
                format!("Operand should contain 1 column(s) (row {op} row)"),
            )
        })?;
        let mut pairs = Vec::with_capacity(l.len());
        for (a, b) in l.iter().zip(r) {
            if matches!(a, Expr::Tuple(_)) || matches!(b, Expr::Tuple(_)) {
                return Err(SqlError::unsupported("nested row constructors"));
            }
            pairs.push((self.compile(a)?, self.compile(b)?));
        }
        let bin = |o: BinOp, a: CExpr, b: CExpr| CExpr::Bin(o, Box::new(a), Box::new(b));
        let fold = |o: BinOp, terms: Vec<CExpr>| terms.into_iter().reduce(|a, b| bin(o, a, b));
        let out = match op {
            BinOp::Eq | BinOp::NullSafeEq => fold(
                BinOp::And,
                pairs.into_iter().map(|(a, b)| bin(op, a, b)).collect(),
            ),
            BinOp::NotEq => fold(
                BinOp::Or,
                pairs
                    .into_iter()
                    .map(|(a, b)| bin(BinOp::NotEq, a, b))
                    .collect(),
            ),
            _ => {
                // a1 < b1 OR (a1 = b1 AND (a2 < b2 OR (a2 = b2 AND … an <= bn)))
                let strict = match op {
                    BinOp::Lt | BinOp::LtEq => BinOp::Lt,
                    _ => BinOp::Gt,
                };
                let mut acc: Option<CExpr> = None;
                for (a, b) in pairs.into_iter().rev() {
                    acc = Some(match acc {
                        None => bin(op, a, b),
                        Some(rest) => bin(
                            BinOp::Or,
                            bin(strict, a.clone(), b.clone()),
                            bin(BinOp::And, bin(BinOp::Eq, a, b), rest),
                        ),
                    });
                }
                acc
            }
        };
        out.ok_or_else(|| SqlError::parse("empty row constructor"))
    }
}

/// Internal (not callable as written) names of interval arithmetic.
fn interval_fn(sub: bool) -> &'static str {
    if sub {
        "date_sub interval"
    } else {
        "date_add interval"
    }
}

/// Whether comparison `op` (`=`, `<>`, `<`, `<=`, `>`, `>=`) holds for
/// operands that compare as `o`.
fn cmp_holds(op: BinOp, o: Ordering) -> bool {
    match op {
        BinOp::Eq => o == Ordering::Equal,
        BinOp::NotEq => o != Ordering::Equal,
        BinOp::Lt => o == Ordering::Less,
        BinOp::LtEq => o != Ordering::Greater,
        BinOp::Gt => o == Ordering::Greater,
        _ => o != Ordering::Less,
    }
}

/// Parse a vector literal given as text (`'[1,2,3]'`) once, at plan time,
/// where a distance function reads it: otherwise every row's evaluation
/// parses the same 128 numbers again (measured: 12 % of a top-10 vector
/// query's server time). A literal that does not parse is left as text, so
/// the function reports the error as before.
pub fn fold_vector_literals(e: CExpr) -> CExpr {
    e.rewrite(&mut |x| match x {
        CExpr::Func(name, args) if VECTOR_DISTANCE_FNS.contains(&name.as_str()) => {
            let args = args
                .into_iter()
                .map(|a| match a {
                    CExpr::Lit(Value::Text(s)) => match parse_vector(&s) {
                        Ok(v) => CExpr::Lit(Value::Vector(v)),
                        Err(_) => CExpr::Lit(Value::Text(s)),
                    },
                    other => other,
                })
                .collect();
            CExpr::Func(name, args)
        }
        other => other,
    })
}

fn cast(v: Value, to: CastTo) -> SqlResult<Value> {
    if v.is_null() {
        return Ok(v);
    }
    Ok(match to {
        CastTo::Int | CastTo::Unsigned => {
            let i = match &v {
                // MySQL rounds a DECIMAL half away from zero.
                Value::Decimal(d) => d.to_i64_round().ok_or_else(|| overflow("CAST"))?,
                // MySQL rounds an approximate value half to even (rint()).
                // Past BIGINT it saturates with warning 1292, as MySQL's
                // double-to-integer conversion does (CAST(1e300 AS SIGNED)).
                Value::Float(f) => {
                    let r = f.round_ties_even();
                    if (-9.223_372_036_854_776e18..9.223_372_036_854_776e18).contains(&r) {
                        r as i64
                    } else {
                        crate::warnings::note_later(
                            code::TRUNCATED_WRONG_VALUE,
                            format!("Truncated incorrect INTEGER value: '{}'", format_float(*f)),
                        );
                        if r > 0.0 {
                            i64::MAX
                        } else {
                            i64::MIN
                        }
                    }
                }
                // A string is read up to its first non-digit (as MySQL does).
                Value::Text(s) => leading_int(s),
                other => match num(other) {
                    Some(Value::Int(i)) => i,
                    Some(Value::Float(f)) => f.round() as i64,
                    _ => return Ok(Value::Null),
                },
            };
            if to == CastTo::Unsigned && i < 0 {
                return Err(SqlError::new(
                    1690,
                    "BIGINT UNSIGNED value is out of range in 'CAST'",
                ));
            }
            Value::Int(i)
        }
        CastTo::Float => as_f64(&v).map(Value::Float).unwrap_or(Value::Null),
        CastTo::Decimal(p, sc) => {
            let v = match v {
                Value::Text(s) => Value::Text(decimal_prefix(&s)?),
                other => other,
            };
            let negative = as_f64(&v).is_some_and(|f| f < 0.0);
            match crate::catalog::schema::coerce_value(
                &crate::types::DataType::Decimal(p, sc),
                v,
                "CAST",
            ) {
                // MySQL clips an out-of-range CAST to the type's largest
                // value, with warning 1264.
                Err(e) if e.code == 1264 => {
                    crate::warnings::note(
                        1264,
                        format!(
                            "Out of range value for column 'cast as decimal({p},{sc})' at row 1"
                        ),
                    )?;
                    let nines = "9".repeat(usize::from(p));
                    let (i, f) = nines.split_at(usize::from(p - sc));
                    let max =
                        Decimal::parse(&format!("{}.{f}", if i.is_empty() { "0" } else { i }))
                            .unwrap_or_else(|| Decimal::from_i64(0))
                            .rescale(sc);
                    Value::Decimal(if negative { max.neg() } else { max })
                }
                other => other?,
            }
        }
        CastTo::Text(n) => {
            let mut t = match &v {
                Value::Float(f) => format_float(*f),
                Value::Bytes(b) => utf8_or_question_marks(b),
                other => text(other),
            };
            if let Some(n) = n {
                if let Some((i, _)) = t.char_indices().nth(n as usize) {
                    t.truncate(i);
                }
            }
            Value::Text(t)
        }
        CastTo::DateTime(_) | CastTo::Date => {
            let us = match &v {
                Value::DateTime(us) => Some(*us),
                other => {
                    let t = text(other);
                    let us = parse_datetime(&t);
                    if us.is_none() {
                        crate::warnings::note_later(
                            code::TRUNCATED_WRONG_VALUE,
                            format!("Incorrect datetime value: '{t}'"),
                        );
                    }
                    us
                }
            };
            match us {
                None => Value::Null,
                Some(us) if to == CastTo::Date => {
                    Value::DateTime(us.div_euclid(86_400_000_000) * 86_400_000_000)
                }
                Some(us) => match to {
                    CastTo::DateTime(fsp) => Value::DateTime(crate::types::round_fsp(us, fsp)),
                    _ => Value::DateTime(us),
                },
            }
        }
        CastTo::Vector(dim) => {
            crate::catalog::schema::coerce_value(&crate::types::DataType::VecF64(dim), v, "CAST")?
        }
        CastTo::Binary(n) => {
            let mut b = match v {
                Value::Bytes(b) => b,
                Value::Float(f) => format_float(f).into_bytes(),
                other => text(&other).into_bytes(),
            };
            if let Some(n) = n.map(|n| n as usize) {
                if b.len() > n {
                    crate::warnings::note_later(
                        code::TRUNCATED_WRONG_VALUE,
                        format!(
                            "Truncated incorrect BINARY({n}) value: '{}'",
                            String::from_utf8_lossy(&b)
                        ),
                    );
                }
                b.resize(n, 0);
            }
            Value::Bytes(b)
        }
    })
}

/// A binary string read as utf8mb4 text (CAST … AS CHAR, CONVERT … USING
/// utf8mb4): each byte that does not start a valid UTF-8 character is
/// `?`, with MySQL's warning 1300 naming the bytes from the first one.
fn utf8_or_question_marks(b: &[u8]) -> String {
    let mut out = String::with_capacity(b.len());
    let mut rest = b;
    let mut warned = false;
    loop {
        match std::str::from_utf8(rest) {
            Ok(s) => {
                out.push_str(s);
                return out;
            }
            Err(e) => {
                let (good, bad) = rest.split_at(e.valid_up_to());
                out.push_str(std::str::from_utf8(good).unwrap_or_default());
                if !warned {
                    warned = true;
                    crate::warnings::note_later(
                        1300,
                        format!(
                            "Invalid utf8mb4 character string: '{}'",
                            bad.iter().map(|x| format!("{x:02X}")).collect::<String>()
                        ),
                    );
                }
                out.push('?');
                rest = &bad[e.error_len().unwrap_or(bad.len()).max(1).min(bad.len())..];
            }
        }
    }
}

/// The number a string starts with, for CAST AS DECIMAL: the whole
/// (trimmed) string when it is a number, else its longest numeric prefix
/// (`'1.5abc'` → `1.5`, `'x'` → `0`) with MySQL's warning 1292.
fn decimal_prefix(s: &str) -> SqlResult<String> {
    let (prefix, whole) = crate::types::numeric_prefix(s);
    if whole {
        return Ok(prefix.to_string());
    }
    crate::warnings::note(
        code::TRUNCATED_WRONG_VALUE,
        format!("Truncated incorrect DECIMAL value: '{s}'"),
    )?;
    Ok(if prefix.is_empty() {
        "0".into()
    } else {
        prefix.to_string()
    })
}

/// The integer a string starts with (`'12abc'` → 12, `'1.9'` → 1, `'x'` → 0).
fn leading_int(s: &str) -> i64 {
    let t = s.trim_start();
    let (neg, digits) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let end = digits.bytes().take_while(u8::is_ascii_digit).count();
    let mut v: i64 = 0;
    let mut saturated = false;
    for b in digits[..end].bytes() {
        let next = v
            .checked_mul(10)
            .and_then(|x| x.checked_add(i64::from(b - b'0')));
        saturated |= next.is_none();
        v = next.unwrap_or(i64::MAX);
    }
    if end == 0 || saturated || !digits[end..].trim().is_empty() {
        crate::warnings::note_later(
            code::TRUNCATED_WRONG_VALUE,
            format!("Truncated incorrect INTEGER value: '{s}'"),
        );
    }
    if neg {
        -v
    } else {
        v
    }
}

impl CExpr {
    /// [`CExpr::eval`] without copying what the row or the expression
    /// already holds: a column or a literal is borrowed (a text compared
    /// or matched per row is not cloned for it).
    pub fn eval_ref<'a>(&'a self, cx: &EvalCtx<'a>) -> SqlResult<Cow<'a, Value>> {
        Ok(match self {
            CExpr::Lit(v) => Cow::Borrowed(v),
            CExpr::Col(i) => cx
                .row
                .get(*i)
                .map_or(Cow::Owned(Value::Null), Cow::Borrowed),
            CExpr::Outer(i) => cx
                .outer
                .get(*i)
                .map_or(Cow::Owned(Value::Null), Cow::Borrowed),
            other => Cow::Owned(other.eval(cx)?),
        })
    }

    /// A column or literal operand, borrowed (`None` for anything else).
    fn operand<'a>(&'a self, cx: &EvalCtx<'a>) -> Option<&'a Value> {
        match self {
            CExpr::Lit(v) => Some(v),
            CExpr::Col(i) => cx.row.get(*i),
            CExpr::Outer(i) => cx.outer.get(*i),
            _ => None,
        }
    }

    /// `truth(&self.eval(cx)?)`, the value of a filter (`None` = NULL),
    /// without building values for the common shapes: a comparison of a
    /// column with a literal or another column, and AND / OR / NOT of
    /// those. Everything else is evaluated by [`CExpr::eval`]. The one
    /// definition of SQL's three-valued AND / OR / NOT (with their short
    /// circuits): `eval` asks it for those.
    #[recursive::recursive]
    pub fn test(&self, cx: &EvalCtx<'_>) -> SqlResult<Option<bool>> {
        match self {
            CExpr::Bin(
                op @ (BinOp::Eq | BinOp::NotEq | BinOp::Lt | BinOp::LtEq | BinOp::Gt | BinOp::GtEq),
                a,
                b,
            ) => {
                if let (Some(l), Some(r)) = (a.operand(cx), b.operand(cx)) {
                    return Ok(sql_cmp(l, r).map(|o| cmp_holds(*op, o)));
                }
            }
            CExpr::Bin(BinOp::And, a, b) => {
                let l = a.test(cx)?;
                if l == Some(false) {
                    return Ok(Some(false));
                }
                return Ok(and3(l, b.test(cx)?));
            }
            CExpr::Bin(BinOp::Or, a, b) => {
                let l = a.test(cx)?;
                if l == Some(true) {
                    return Ok(Some(true));
                }
                return Ok(or3(l, b.test(cx)?));
            }
            CExpr::Not(x) => return Ok(x.test(cx)?.map(|b| !b)),
            _ => {}
        }
        Ok(truth(&self.eval(cx)?))
    }

    /// Evaluate against a row. A leaf (a literal, a column) cannot recurse
    /// and skips the stack check: most values of an INSERT are literals,
    /// and the check was ~3 % of a 100-row INSERT's statement thread.
    pub fn eval(&self, cx: &EvalCtx<'_>) -> SqlResult<Value> {
        match self {
            CExpr::Lit(v) => Ok(v.clone()),
            CExpr::Col(i) => Ok(cx.row.get(*i).cloned().unwrap_or(Value::Null)),
            _ => self.eval_checked(cx),
        }
    }

    /// [`Self::eval`] of an inner node, with room on the stack for it.
    #[recursive::recursive]
    fn eval_checked(&self, cx: &EvalCtx<'_>) -> SqlResult<Value> {
        Ok(match self {
            CExpr::Lit(v) => v.clone(),
            CExpr::Col(i) => cx.row.get(*i).cloned().unwrap_or(Value::Null),
            CExpr::Outer(i) => cx.outer.get(*i).cloned().unwrap_or(Value::Null),
            CExpr::InSet(x, set, negated) => match set.contains(&*x.eval_ref(cx)?) {
                None => Value::Null,
                Some(b) => Value::Bool(b != *negated),
            },
            CExpr::Scalar(_) | CExpr::Exists(..) | CExpr::InSub(..) => {
                return Err(SqlError::new(
                    code::UNKNOWN_ERROR,
                    "internal error: subquery evaluated before it was run",
                ))
            }
            CExpr::Agg(i) => cx.aggs.get(*i).cloned().unwrap_or(Value::Null),
            CExpr::Match(i) => cx.matches.get(*i).cloned().unwrap_or(Value::Float(0.0)),
            // SQL's three-valued NOT / AND / OR live in `test`.
            CExpr::Not(_) | CExpr::Bin(BinOp::And | BinOp::Or, ..) => {
                self.test(cx)?.map_or(Value::Null, Value::Bool)
            }
            CExpr::Neg(x) => match num(&x.eval(cx)?) {
                Some(Value::Int(i)) => Value::Int(i.checked_neg().ok_or_else(|| overflow("-"))?),
                Some(Value::Decimal(d)) => Value::Decimal(d.neg()),
                Some(Value::Float(f)) => Value::Float(-f),
                _ => Value::Null,
            },
            CExpr::IsNull(x, negated) => Value::Bool(x.eval_ref(cx)?.is_null() != *negated),
            CExpr::Bin(op, a, b) => {
                let l = a.eval_ref(cx)?;
                // A NULL left operand decides every operator but <=>: the
                // right one is not evaluated, as in MySQL (`NULL < 1/0`
                // raises no warning, `NULL + <overflow>` no error).
                if l.is_null() && *op != BinOp::NullSafeEq {
                    return Ok(Value::Null);
                }
                let r = b.eval_ref(cx)?;
                let (l, r) = (l.as_ref(), r.as_ref());
                match op {
                    BinOp::Xor => match (truth(l), truth(r)) {
                        (Some(x), Some(y)) => Value::Bool(x != y),
                        _ => Value::Null,
                    },
                    BinOp::NullSafeEq => Value::Bool(match (l.is_null(), r.is_null()) {
                        (true, true) => true,
                        (false, false) => sql_cmp(l, r) == Some(Ordering::Equal),
                        _ => false,
                    }),
                    BinOp::Eq
                    | BinOp::NotEq
                    | BinOp::Lt
                    | BinOp::LtEq
                    | BinOp::Gt
                    | BinOp::GtEq => match sql_cmp(l, r) {
                        None => Value::Null,
                        Some(o) => Value::Bool(cmp_holds(*op, o)),
                    },
                    _ if matches!(l, Value::Vector(_)) || matches!(r, Value::Vector(_)) => {
                        vector_arith(*op, l.clone(), r.clone())?
                    }
                    _ => arith(*op, l, r)?,
                }
            }
            CExpr::InList(x, items, negated) => {
                let v = x.eval_ref(cx)?;
                if v.is_null() {
                    return Ok(Value::Null);
                }
                let mut saw_null = false;
                for it in items {
                    let w = it.eval_ref(cx)?;
                    match sql_cmp(&v, &w) {
                        Some(Ordering::Equal) => return Ok(Value::Bool(!negated)),
                        None => saw_null = true,
                        _ => {}
                    }
                }
                if saw_null {
                    Value::Null
                } else {
                    Value::Bool(*negated)
                }
            }
            CExpr::Between(x, lo, hi, negated) => {
                let v = x.eval_ref(cx)?;
                let (l, h) = (lo.eval_ref(cx)?, hi.eval_ref(cx)?);
                // `x BETWEEN lo AND hi` is `x >= lo AND x <= hi` under
                // three-valued logic: one false bound decides even when the
                // other is NULL (`1 BETWEEN 2 AND NULL` is 0, `5 NOT BETWEEN
                // NULL AND 3` is 1).
                // One comparison type for all three (MySQL): a number among
                // strings makes them all numbers ('100' BETWEEN 1 AND '12'
                // is 0).
                let numeric = [&*v, &*l, &*h].iter().any(|x| {
                    matches!(
                        x,
                        Value::Int(_) | Value::Float(_) | Value::Bool(_) | Value::Decimal(_)
                    )
                }) && [&*v, &*l, &*h]
                    .iter()
                    .all(|x| !matches!(x, Value::DateTime(_) | Value::Vector(_)));
                let cmp = |a: &Value, b: &Value| {
                    if numeric && (matches!(a, Value::Text(_)) || matches!(b, Value::Text(_))) {
                        match (num(a), num(b)) {
                            (Some(x), Some(y)) => Some(num_cmp(&x, &y)),
                            _ => None,
                        }
                    } else {
                        sql_cmp(a, b)
                    }
                };
                let ge = cmp(&v, &l).map(|o| o != Ordering::Less);
                let le = cmp(&v, &h).map(|o| o != Ordering::Greater);
                match and3(ge, le) {
                    Some(inside) => Value::Bool(inside != *negated),
                    None => Value::Null,
                }
            }
            CExpr::Like(x, p, negated) => {
                let (v, pat) = (x.eval_ref(cx)?, p.eval_ref(cx)?);
                if v.is_null() || pat.is_null() {
                    Value::Null
                } else {
                    Value::Bool(like_match(&text_of(&v), &text_of(&pat)) != *negated)
                }
            }
            CExpr::Case(op, arms, els) => {
                let base = match op {
                    Some(o) => Some(o.eval(cx)?),
                    None => None,
                };
                for (cond, res) in arms {
                    let c = cond.eval(cx)?;
                    let hit = match &base {
                        Some(b) => sql_cmp(b, &c) == Some(Ordering::Equal),
                        None => truth(&c) == Some(true),
                    };
                    if hit {
                        return res.eval(cx);
                    }
                }
                match els {
                    Some(e) => e.eval(cx)?,
                    None => Value::Null,
                }
            }
            CExpr::Cast(x, to) => cast(x.eval(cx)?, *to)?,
            // Dispatched through the function registry.
            CExpr::Func(name, args) => crate::sql::functions::eval_call(name, args, cx)?,
        })
    }

    /// Whether the value is JSON-typed (a JSON function's result), so a
    /// JSON function takes it as a document rather than as a string.
    /// (A JSON column is not recognised here: its text is taken as a
    /// string when nested into JSON_OBJECT / JSON_ARRAY.)
    pub fn is_json(&self) -> bool {
        matches!(self, CExpr::Func(n, _) if crate::sql::functions::returns_json(n))
    }

    /// Whether the expression reads no column, aggregate or MATCH slot
    /// (so it can be folded to a constant once).
    #[recursive::recursive]
    pub fn is_constant(&self) -> bool {
        match self {
            CExpr::Lit(_) => true,
            CExpr::Col(_)
            | CExpr::Agg(_)
            | CExpr::Match(_)
            | CExpr::Outer(_)
            | CExpr::Scalar(_)
            | CExpr::Exists(..)
            | CExpr::InSub(..)
            | CExpr::InSet(..) => false,
            CExpr::Bin(_, a, b) => a.is_constant() && b.is_constant(),
            CExpr::Not(a) | CExpr::Neg(a) | CExpr::IsNull(a, _) | CExpr::Cast(a, _) => {
                a.is_constant()
            }
            CExpr::InList(a, items, _) => a.is_constant() && items.iter().all(|i| i.is_constant()),
            CExpr::Between(a, b, c, _) => a.is_constant() && b.is_constant() && c.is_constant(),
            CExpr::Like(a, b, _) => a.is_constant() && b.is_constant(),
            CExpr::Case(..) => false,
            CExpr::Func(name, args) => {
                !varies_per_call(name)
                    && !datetime::reads_clock(name, args.len())
                    && args.iter().all(|a| a.is_constant())
            }
        }
    }
}

/// Evaluate a constant expression.
pub fn eval_const(e: &CExpr, funcs: &dyn FunctionHost) -> SqlResult<Value> {
    e.eval(&EvalCtx {
        row: &[],
        outer: &[],
        aggs: &[],
        matches: &[],
        funcs,
    })
}

/// Functions whose value may differ between two calls in one statement,
/// or that act (sleep, fault injection): never folded to a constant, never
/// moved to another place in a plan.
pub fn varies_per_call(name: &str) -> bool {
    crate::sql::functions::is_volatile(name)
}

pub(crate) mod arith;
pub mod collate;
pub(crate) mod datetime;
pub(crate) mod regexp;
pub(crate) mod tree;
pub(crate) mod value;
pub(crate) mod window_spec;

#[cfg(test)]
mod tests {
    use super::value::vector_fn;
    use super::*;

    /// `test` (the filter shortcut) agrees with `truth(eval)` on every
    /// comparison, AND / OR / NOT of two levels over operands of every type
    /// (NULL, numbers, -0.0, numeric and other text, datetime, out-of-range
    /// column).
    /// NOT / AND / OR follow SQL's three-valued logic, through `test` and
    /// through `eval` (which asks `test` for them).
    #[test]
    fn not_and_or_are_three_valued() {
        let lit = |t: Option<bool>| CExpr::Lit(t.map_or(Value::Null, Value::Bool));
        let cx = EvalCtx {
            row: &[],
            outer: &[],
            aggs: &[],
            matches: &[],
            funcs: &NoHost,
        };
        let vals = [Some(true), Some(false), None];
        for x in vals {
            let not = CExpr::Not(Box::new(lit(x)));
            assert_eq!(not.test(&cx).unwrap(), x.map(|b| !b));
            assert_eq!(truth(&not.eval(&cx).unwrap()), x.map(|b| !b));
            for y in vals {
                let and = match (x, y) {
                    (Some(false), _) | (_, Some(false)) => Some(false),
                    (Some(true), Some(true)) => Some(true),
                    _ => None,
                };
                let or = match (x, y) {
                    (Some(true), _) | (_, Some(true)) => Some(true),
                    (Some(false), Some(false)) => Some(false),
                    _ => None,
                };
                for (op, want) in [(BinOp::And, and), (BinOp::Or, or)] {
                    let e = CExpr::Bin(op, Box::new(lit(x)), Box::new(lit(y)));
                    assert_eq!(e.test(&cx).unwrap(), want, "{e:?}");
                    let v = e.eval(&cx).unwrap();
                    assert_eq!(v, want.map_or(Value::Null, Value::Bool), "{e:?}");
                }
            }
        }
    }

    #[test]
    fn filter_test_agrees_with_eval() {
        let row = vec![
            Value::Null,
            Value::Int(7),
            Value::Float(-0.0),
            Value::Text("7".into()),
            Value::Text("abc".into()),
            Value::DateTime(0),
            Value::Bool(true),
        ];
        let mut leaves: Vec<CExpr> = (0..=row.len()).map(CExpr::Col).collect();
        leaves.extend(
            [
                Value::Int(0),
                Value::Int(7),
                Value::Float(7.5),
                Value::Text("1970-01-01 00:00:00".into()),
                Value::Null,
            ]
            .into_iter()
            .map(CExpr::Lit),
        );
        leaves.push(CExpr::Neg(Box::new(CExpr::Col(1))));
        let ops = [
            BinOp::Eq,
            BinOp::NotEq,
            BinOp::Lt,
            BinOp::LtEq,
            BinOp::Gt,
            BinOp::GtEq,
        ];
        let mut cmps = Vec::new();
        for a in &leaves {
            for b in &leaves {
                for op in ops {
                    cmps.push(CExpr::Bin(op, Box::new(a.clone()), Box::new(b.clone())));
                }
            }
        }
        let cx = EvalCtx {
            row: &row,
            outer: &[],
            aggs: &[],
            matches: &[],
            funcs: &NoHost,
        };
        let check = |e: &CExpr| {
            assert_eq!(
                e.test(&cx).expect("test"),
                truth(&e.eval(&cx).expect("eval")),
                "{e:?}"
            );
        };
        for c in &cmps {
            check(c);
        }
        let few: Vec<&CExpr> = cmps.iter().step_by(37).collect();
        for a in &few {
            for b in &few {
                for op in [BinOp::And, BinOp::Or] {
                    let e = CExpr::Bin(op, Box::new((*a).clone()), Box::new((*b).clone()));
                    check(&e);
                    check(&CExpr::Not(Box::new(e)));
                }
            }
        }
    }

    #[test]
    fn like_and_vectors() {
        assert!(!like_match("Hello", "h%o"));
        assert!(like_match("Hello", "H%o"));
        assert!(like_match_ci("Hello", "h%o"));
        assert!(like_match("a_c", "a\\_c"));
        assert!(!like_match("abc", "a\\_c"));
        assert!(like_match("abc", "_b_"));
        assert!((vector_fn("l2_distance", &[0.0, 0.0], &[3.0, 4.0]).unwrap() - 5.0).abs() < 1e-9);
        assert!(
            (vector_fn("cosine_distance", &[1.0, 0.0], &[0.0, 1.0]).unwrap() - 1.0).abs() < 1e-9
        );
        assert_eq!(
            vector_fn("inner_product", &[1.0, 2.0], &[3.0, 4.0]).unwrap(),
            -11.0
        );
        assert!(vector_fn("l2_distance", &[1.0], &[1.0, 2.0]).is_err());
    }

    /// The matcher against a plain recursive definition of LIKE on every
    /// short string and pattern over a small alphabet (with an upper-case
    /// and a non-ASCII letter), and a pattern that is exponential for the
    /// recursive definition on a long string.
    #[test]
    fn like_matches_the_recursive_definition() {
        fn reference(s: &str, pat: &str, ci: bool) -> bool {
            let fold = |x: &str| if ci { x.to_lowercase() } else { x.to_string() };
            let s: Vec<char> = fold(s).chars().collect();
            let p: Vec<char> = fold(pat).chars().collect();
            fn go(s: &[char], p: &[char]) -> bool {
                match p.first() {
                    None => s.is_empty(),
                    Some('%') => (0..=s.len()).any(|i| go(&s[i..], &p[1..])),
                    Some('_') => !s.is_empty() && go(&s[1..], &p[1..]),
                    Some('\\') if p.len() > 1 => s.first() == p.get(1) && go(&s[1..], &p[2..]),
                    Some(c) => s.first() == Some(c) && go(&s[1..], &p[1..]),
                }
            }
            go(&s, &p)
        }
        fn all(alphabet: &[char], max: usize) -> Vec<String> {
            let mut out = vec![String::new()];
            let mut last = vec![String::new()];
            for _ in 0..max {
                last = last
                    .iter()
                    .flat_map(|w| alphabet.iter().map(move |c| format!("{w}{c}")))
                    .collect();
                out.extend(last.iter().cloned());
            }
            out
        }
        let strings = all(&['a', 'B', '%', '_', 'é'], 4);
        let patterns = all(&['a', 'b', '%', '_', '\\', 'É'], 4);
        let mut checked = 0;
        for s in &strings {
            for p in &patterns {
                assert_eq!(like_match(s, p), reference(s, p, false), "{s:?} LIKE {p:?}");
                assert_eq!(
                    like_match_ci(s, p),
                    reference(s, p, true),
                    "{s:?} LIKE {p:?}"
                );
                checked += 1;
            }
        }
        assert!(checked > 500_000);
        let long = "a".repeat(20_000);
        let started = std::time::Instant::now();
        assert!(!like_match(&long, "%a%a%a%a%a%a%a%a%b"));
        assert!(like_match(&long, "%a%a%a%a%a%a%a%a%"));
        // Generous: linear-ish work is microseconds; the recursion is years.
        assert!(started.elapsed() < std::time::Duration::from_secs(20));
    }

    #[test]
    fn three_valued_logic() {
        let t = CExpr::Lit(Value::Bool(true));
        let n = CExpr::Lit(Value::Null);
        let f = CExpr::Lit(Value::Bool(false));
        let and = CExpr::Bin(BinOp::And, Box::new(n.clone()), Box::new(f.clone()));
        assert_eq!(eval_const(&and, &NoHost).unwrap(), Value::Bool(false));
        let or = CExpr::Bin(BinOp::Or, Box::new(n.clone()), Box::new(t));
        assert_eq!(eval_const(&or, &NoHost).unwrap(), Value::Bool(true));
        let eq = CExpr::Bin(BinOp::Eq, Box::new(n), Box::new(f));
        assert_eq!(eval_const(&eq, &NoHost).unwrap(), Value::Null);
    }

    fn dec(s: &str) -> Value {
        Value::Decimal(Decimal::parse(s).expect("decimal"))
    }

    #[test]
    fn decimal_arithmetic_follows_mysql_types() {
        let ar = |op, a: &Value, b: &Value| arith(op, a, b).map(|v| v.to_string());
        assert_eq!(ar(BinOp::Add, &dec("0.1"), &dec("0.2")).unwrap(), "0.3");
        assert_eq!(
            ar(BinOp::Div, &Value::Int(1), &Value::Int(3)).unwrap(),
            "0.3333"
        );
        assert_eq!(
            ar(BinOp::Div, &dec("1.0"), &Value::Int(3)).unwrap(),
            "0.33333"
        );
        assert_eq!(ar(BinOp::Mul, &dec("1.10"), &dec("1.5")).unwrap(), "1.650");
        assert_eq!(
            ar(BinOp::IntDiv, &dec("-7.5"), &Value::Int(2)).unwrap(),
            "-3"
        );
        assert_eq!(
            ar(BinOp::Mod, &dec("-7.5"), &Value::Int(2)).unwrap(),
            "-1.5"
        );
        // DOUBLE or string beside a decimal: DOUBLE.
        assert!(matches!(
            arith(BinOp::Add, &dec("0.1"), &Value::Float(0.2)),
            Ok(Value::Float(_))
        ));
        assert!(matches!(
            arith(BinOp::Add, &dec("1.5"), &Value::Text("1".into())),
            Ok(Value::Float(f)) if f == 2.5
        ));
        let e = arith(BinOp::Mul, &Value::Float(1e308), &Value::Int(10)).unwrap_err();
        assert_eq!(e.code, 1690);
        assert_eq!(e.message, "DOUBLE value is out of range in '(1e308 * 10)'");
        let nines = dec(&"9".repeat(65));
        let e = arith(BinOp::Add, &nines, &Value::Int(1)).unwrap_err();
        assert_eq!(e.code, 1690);
        assert!(e.message.starts_with("DECIMAL value is out of range"));
        // 66 digits needed: fractional digits give way, integers fit.
        let wide = arith(
            BinOp::Add,
            &dec(&format!("{}.5", "9".repeat(64))),
            &dec("0.25"),
        );
        assert_eq!(
            wide.map(|v| v.to_string()).unwrap(),
            format!("{}.8", "9".repeat(64))
        );
        assert_eq!(
            arith(BinOp::Div, &dec("1.5"), &Value::Int(0)).unwrap(),
            Value::Null
        );
        assert_eq!(sql_cmp(&dec("1.00"), &Value::Int(1)), Some(Ordering::Equal));
        assert_eq!(sql_cmp(&dec("0.10"), &dec("0.1")), Some(Ordering::Equal));
        assert_eq!(
            sql_cmp(&dec("0.3"), &Value::Float(0.3)),
            Some(Ordering::Equal)
        );
        // A quotient compares with every held digit (MySQL 8's
        // compare_decimal); it orders as it shows.
        let third = arith(BinOp::Div, &Value::Int(1), &Value::Int(3)).unwrap();
        assert_eq!(sql_cmp(&third, &dec("0.3333")), Some(Ordering::Greater));
        assert_eq!(sql_cmp(&third, &dec("0.333333333")), Some(Ordering::Equal));
        let tiny = arith(BinOp::Div, &Value::Int(-5), &Value::Int(2147483647)).unwrap();
        assert_eq!(sql_cmp(&tiny, &Value::Int(0)), Some(Ordering::Less));
        assert_eq!(third.total_cmp(&dec("0.3333")), Ordering::Equal);
    }

    #[test]
    fn equal_numbers_share_one_key() {
        assert_eq!(value_key(&Value::Int(1)), value_key(&dec("1.00")));
        assert_eq!(value_key(&dec("1.0")), value_key(&dec("1.000")));
        assert_eq!(value_key(&Value::Float(1.5)), value_key(&dec("1.50")));
        assert_eq!(value_key(&dec("0.10")), value_key(&dec("0.1")));
        assert_ne!(value_key(&dec("0.1")), value_key(&dec("0.11")));
        // Property: for decimals of mixed scale and integers, keys are
        // equal exactly when the values are.
        let vals: Vec<Value> = (-30i64..30)
            .flat_map(|i| {
                let d = Decimal::from_i64(i);
                [
                    Value::Int(i),
                    Value::Decimal(d.rescale((i.unsigned_abs() % 4) as u8)),
                    Value::Decimal(
                        d.div_to(&Decimal::from_i64(7), (i.unsigned_abs() % 5) as u8)
                            .expect("nonzero"),
                    ),
                ]
            })
            .collect();
        for a in &vals {
            for b in &vals {
                let same = sql_cmp(a, b) == Some(Ordering::Equal);
                assert_eq!(value_key(a) == value_key(b), same, "{a:?} vs {b:?}");
            }
        }
    }

    #[test]
    fn negative_zero_equals_zero() {
        let (nz, z) = (Value::Float(-0.0), Value::Float(0.0));
        assert_eq!(sql_cmp(&nz, &z), Some(Ordering::Equal));
        assert_eq!(sql_cmp(&Value::Int(0), &nz), Some(Ordering::Equal));
        assert_eq!(
            sql_cmp(&nz, &Value::Text("0".into())),
            Some(Ordering::Equal)
        );
        assert_eq!(sql_cmp(&nz, &Value::Float(0.25)), Some(Ordering::Less));
        assert_eq!(sql_cmp(&Value::Int(-1), &nz), Some(Ordering::Less));
    }
}
