//! The compiled expression tree and what evaluating it is handed: the
//! types the compiler builds ([`CExpr`], its operators, aggregate and
//! window calls, CAST targets, subquery references), the per-row
//! [`EvalCtx`] with its session [`FunctionHost`], the internal function
//! names the planner inserts, and the tree's structural walks and
//! rewrites.
//!
//! Owns the shape of an expression, nothing of its meaning: it never
//! compiles, evaluates or names the function registry, so that the
//! registry's evaluators (`crate::sql::functions`, which take these types)
//! sit below the compiler and evaluator (`crate::sql::expr`) that call them.

use std::sync::Arc;

use sqlparser::ast;

use super::value::ValueSet;
use crate::collation::Collation;
use crate::error::{code, SqlError, SqlResult};
use crate::types::{ColumnKind, Value};

/// Column names visible to an expression: `(table alias, column name)`.
#[derive(Debug, Clone, Default)]
pub struct Scope {
    pub cols: Vec<(String, String)>,
    /// Positions an unqualified name does not find: the second copy of a
    /// `JOIN … USING` column (MySQL merges the two into one).
    pub hidden: Vec<usize>,
    /// Each column's collation (text columns); positions past its end are
    /// `utf8mb4_bin`.
    pub colls: Vec<Collation>,
}

impl Scope {
    /// The columns of table `t`, each qualified by `alias`.
    pub fn of_table(t: &crate::catalog::TableDef, alias: &str) -> Scope {
        Scope {
            cols: t
                .columns
                .iter()
                .map(|c| (alias.to_string(), c.name.clone()))
                .collect(),
            hidden: Vec::new(),
            colls: t.columns.iter().map(|c| c.collation).collect(),
        }
    }

    /// The collation of column `i`.
    pub fn collation(&self, i: usize) -> Collation {
        self.colls.get(i).copied().unwrap_or_default()
    }

    /// Append `other`'s columns (a join's right side, an outer scope),
    /// keeping each column's collation at its position.
    pub fn extend(&mut self, other: &Scope) {
        if !other.colls.is_empty() || !self.colls.is_empty() {
            self.colls.resize(self.cols.len(), Collation::default());
            self.colls
                .extend((0..other.cols.len()).map(|i| other.collation(i)));
        }
        self.cols.extend(other.cols.iter().cloned());
    }

    /// Resolve a (possibly qualified) column name.
    pub fn resolve(&self, table: Option<&str>, name: &str) -> SqlResult<usize> {
        let mut found = None;
        for (i, (t, c)) in self.cols.iter().enumerate() {
            if c.eq_ignore_ascii_case(name)
                && table.is_none_or(|q| q.eq_ignore_ascii_case(t))
                && (table.is_some() || !self.hidden.contains(&i))
            {
                if found.is_some() {
                    return Err(SqlError::new(
                        code::NON_UNIQ,
                        format!("Column '{name}' in field list is ambiguous"),
                    ));
                }
                found = Some(i);
            }
        }
        found.ok_or_else(|| {
            let full = match table {
                Some(t) => format!("{t}.{name}"),
                None => name.to_string(),
            };
            SqlError::new(
                code::BAD_FIELD,
                format!("Unknown column '{full}' in 'field list'"),
            )
        })
    }
}

/// Binary operators after compilation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    IntDiv,
    Mod,
    Eq,
    NotEq,
    Lt,
    LtEq,
    Gt,
    GtEq,
    NullSafeEq,
    And,
    Or,
    Xor,
}

impl BinOp {
    /// The operator as MySQL writes it in messages and EXPLAIN (`DIV`,
    /// `<=>`, lower-case `and` / `or` / `xor`).
    pub fn sql(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::IntDiv => "DIV",
            BinOp::Mod => "%",
            BinOp::Eq => "=",
            BinOp::NotEq => "<>",
            BinOp::Lt => "<",
            BinOp::LtEq => "<=",
            BinOp::Gt => ">",
            BinOp::GtEq => ">=",
            BinOp::NullSafeEq => "<=>",
            BinOp::And => "and",
            BinOp::Or => "or",
            BinOp::Xor => "xor",
        }
    }
}

/// Aggregate functions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AggFunc {
    CountStar,
    Count,
    Sum,
    Min,
    Max,
    Avg,
    /// STD / VARIANCE / BIT_AND and their kin ([`crate::sql::agg_stats`]).
    Stat(crate::sql::agg_stats::StatFunc),
}

/// One aggregate call found in a query.
#[derive(Debug, Clone)]
pub struct AggCall {
    pub func: AggFunc,
    pub arg: Option<CExpr>,
    pub distinct: bool,
    /// The collation MIN/MAX/DISTINCT compare the argument under, when it
    /// is not binary.
    pub collation: Option<Collation>,
    /// `Some` for a window function (`… OVER (…)`): its slot is filled by
    /// the window operator after grouping, never
    /// by the aggregate fold. `func`/`arg` then give its aggregate (and
    /// result type); the ranking functions carry `CountStar` (BIGINT).
    pub window: Option<Box<Window>>,
}

/// A window function's kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WinFunc {
    RowNumber,
    Rank,
    DenseRank,
    PercentRank,
    CumeDist,
    /// NTILE(n): `n` in [`Window::n`].
    Ntile,
    /// LAG / LEAD(x, n, default): `n` in [`Window::n`].
    Lag,
    Lead,
    FirstValue,
    LastValue,
    /// NTH_VALUE(x, n): `n` in [`Window::n`].
    NthValue,
    /// The call's aggregate over the frame.
    Agg,
}

/// A window function call's `OVER (PARTITION BY … ORDER BY …)` with
/// MySQL's default frame: the whole partition without ORDER BY, else
/// `RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW` (peers share it).
/// Its expressions are over the block's post-grouping row (they may read
/// aggregate slots).
#[derive(Debug, Clone)]
pub struct Window {
    pub func: WinFunc,
    pub partition: Vec<CExpr>,
    /// (key, descending).
    pub order: Vec<(CExpr, bool)>,
    /// How EXPLAIN names it (`row_number() OVER (…)`).
    pub text: String,
    /// LAG / LEAD's offset, NTILE's bucket count.
    pub n: u64,
    /// LAG / LEAD's default (over the current row).
    pub default: Option<CExpr>,
    /// An explicit frame (`ROWS` / `RANGE BETWEEN …`); `None`: the
    /// default one. Only aggregates and FIRST / LAST / NTH_VALUE read it.
    pub frame: Option<Frame>,
    /// A RANGE frame's offset bounds (`RANGE BETWEEN 2 PRECEDING AND …`),
    /// start then end: the ORDER BY key value (over the current row) the
    /// bound sits at — `key - 2` (`key + 2` when the key is descending;
    /// DATE_SUB / DATE_ADD of an INTERVAL) — and whether the offset is an
    /// INTERVAL (the key's type is checked against it once the block's
    /// types are known: [`crate::sql::plan::window::check_range_types`]).
    pub range_at: RangeAt,
    /// Rows whose value exceeds this are not passed on (an integer
    /// window function's: ROW_NUMBER / RANK / DENSE_RANK under a filter
    /// of the only block reading it that rejects them,
    /// [`crate::sql::plan::window::push_cut`]); `None`: every row.
    pub cut: Option<i64>,
}

/// [`Window::range_at`]: per frame end, (the bound's key value, whether
/// the offset is an INTERVAL).
pub type RangeAt = [Option<(CExpr, bool)>; 2];

/// An explicit window frame: ROWS with any bounds; RANGE with UNBOUNDED,
/// CURRENT ROW (peers) and offset bounds (whose `u64` is then unused: the
/// bound's value is in [`Window::range_at`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Frame {
    pub rows: bool,
    pub start: FrameBound,
    pub end: FrameBound,
}

/// One end of a [`Frame`], in order from the partition's start.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum FrameBound {
    UnboundedPreceding,
    Preceding(u64),
    CurrentRow,
    Following(u64),
    UnboundedFollowing,
}

/// A full-text predicate found in a query.
#[derive(Debug, Clone, PartialEq)]
pub struct MatchSpec {
    /// Column positions in the scope.
    pub columns: Vec<usize>,
    pub query: String,
    pub boolean: bool,
}

/// A compiled expression.
#[derive(Debug, Clone)]
pub enum CExpr {
    Lit(Value),
    Col(usize),
    Bin(BinOp, Box<CExpr>, Box<CExpr>),
    Not(Box<CExpr>),
    Neg(Box<CExpr>),
    IsNull(Box<CExpr>, bool),
    InList(Box<CExpr>, Vec<CExpr>, bool),
    Between(Box<CExpr>, Box<CExpr>, Box<CExpr>, bool),
    Like(Box<CExpr>, Box<CExpr>, bool),
    Case(Option<Box<CExpr>>, Vec<(CExpr, CExpr)>, Option<Box<CExpr>>),
    Func(String, Vec<CExpr>),
    /// Reference to aggregate slot `i` (evaluated per group).
    Agg(usize),
    /// Reference to MATCH … AGAINST slot `i` (score supplied by the executor).
    Match(usize),
    Cast(Box<CExpr>, CastTo),
    /// A column of the enclosing query's row (a correlated reference):
    /// position in [`EvalCtx::outer`].
    Outer(usize),
    /// A scalar subquery (bound to a literal before evaluation).
    Scalar(Arc<SubqueryRef>),
    /// `[NOT] EXISTS (subquery)` (bound before evaluation).
    Exists(Arc<SubqueryRef>, bool),
    /// `x [NOT] IN (subquery)` (bound to [`CExpr::InSet`] before evaluation).
    InSub(Box<CExpr>, Arc<SubqueryRef>, bool),
    /// `x [NOT] IN` a materialized subquery result.
    InSet(Box<CExpr>, Arc<ValueSet>, bool),
}

/// A subquery inside an expression: its id in the statement's table of
/// planned subqueries (kept by the planner, run by the executor) and what
/// typing the expression needs of it. Expressions never hold a plan.
#[derive(Debug, Clone)]
pub struct SubqueryRef {
    /// Position in the statement's subquery table.
    pub id: usize,
    /// Positions in the outer row it is run with (the enclosing block's
    /// row followed by that block's own outer row) that it reads. Empty:
    /// uncorrelated, run once per statement.
    pub refs: Vec<usize>,
    /// Number of output columns.
    pub width: usize,
    /// The type of its first column (a scalar subquery's type).
    pub kind: ColumnKind,
    /// The non-binary collation of its first column, if any.
    pub collation: Option<Collation>,
}

/// Plans the subqueries met while compiling an expression.
pub trait SubqueryPlanner {
    /// Plan `q`, resolving names it cannot find in its own FROM against
    /// `outer` (which become [`CExpr::Outer`] references), and enter it
    /// in the statement's subquery table.
    fn plan_subquery(&mut self, q: &ast::Query, outer: &Scope) -> SqlResult<SubqueryRef>;
}

/// Target of CAST/CONVERT.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CastTo {
    /// SIGNED \[INTEGER\].
    Int,
    /// UNSIGNED \[INTEGER\] (negative values are refused: 1690).
    Unsigned,
    Float,
    /// DECIMAL(precision, scale).
    Decimal(u8, u8),
    /// CHAR[(n)]: at most n characters when given.
    Text(Option<u32>),
    /// DATETIME\[(fsp)\]: the fraction rounded to fsp digits (0 when absent).
    DateTime(u8),
    Date,
    /// VECF32(n) / VECF64(n).
    Vector(u32),
    /// BINARY[(n)]: the value's bytes (its text's for a non-string); with
    /// n, cut to n bytes or right-padded with 0x00 to n, as MySQL.
    Binary(Option<u32>),
}

/// Per-row evaluation context.
pub struct EvalCtx<'a> {
    pub row: &'a [Value],
    /// The enclosing query's row, for correlated references.
    pub outer: &'a [Value],
    pub aggs: &'a [Value],
    pub matches: &'a [Value],
    pub funcs: &'a dyn FunctionHost,
}

/// Functions whose effect lies outside expression evaluation (fault
/// injection control, session info). The session implements it.
pub trait FunctionHost {
    /// Evaluate a host function; `None` if `name` is not one.
    fn call(&self, name: &str, args: &[Value]) -> Option<SqlResult<Value>>;
}

/// A host with no functions.
pub struct NoHost;
impl FunctionHost for NoHost {
    fn call(&self, _: &str, _: &[Value]) -> Option<SqlResult<Value>> {
        None
    }
}

/// Internal (not callable as written: a name with a space) functions of
/// `x IS TRUE` and `x IS FALSE`.
pub(crate) const IS_TRUE: &str = "is true";
pub(crate) const IS_FALSE: &str = "is false";

/// Internal function `show scale(x, s)`: x, a DECIMAL (or an integer made
/// one) showing at least `s` fractional digits, its held digits kept. The
/// planner wraps IFNULL / COALESCE of a DECIMAL type in it: MySQL 8 (an
/// `Item_func_numhybrid`) converts their value to text at the type's
/// scale (`CAST(IFNULL(0.1, 99.999) AS CHAR)` is `0.100`).
pub const SHOW_SCALE: &str = "show scale";

/// Internal function `json aggregate(x)`: x, a JSON_ARRAYAGG /
/// JSON_OBJECTAGG slot's JSON text, as is — typed JSON (so it nests as
/// JSON in a JSON function) without being parsed again (a DECIMAL member
/// keeps its digits).
pub const JSON_AGG: &str = "json aggregate";

/// Internal function `fixed text(x, d)`: the DOUBLE x as text with `d`
/// fractional digits, as MySQL converts a DOUBLE it types with fixed
/// decimals (`CAST(PI() AS CHAR)` is `3.141593`). The planner puts it
/// under CAST … AS CHAR and CONCAT.
pub const FIXED_TEXT: &str = "fixed text";

/// Internal function `like binary(x, p)`: `x LIKE p` where either side is
/// a binary string (`x LIKE BINARY p`, `CAST(x AS BINARY) LIKE p`, what
/// Django's `contains` / `startswith` / `endswith` send): the operands'
/// bytes matched, `_` one byte, no collation.
pub const LIKE_BINARY: &str = "like binary";
/// `"hex operand"(x, bytes, number)`: a hexadecimal literal compared with
/// column `x` — its number when x's value is a number, else its bytes
/// (MySQL: `int_col = 0x41` compares with 65, `text_col = 0x41` with 'A').
pub const HEX_OPERAND: &str = "hex operand";

impl CExpr {
    /// Visit this expression and its sub-expressions (not the inside of
    /// subqueries), parents first.
    #[recursive::recursive]
    pub fn walk(&self, f: &mut dyn FnMut(&CExpr)) {
        f(self);
        match self {
            CExpr::Lit(_)
            | CExpr::Col(_)
            | CExpr::Agg(_)
            | CExpr::Match(_)
            | CExpr::Outer(_)
            | CExpr::Scalar(_)
            | CExpr::Exists(..) => {}
            CExpr::Bin(_, a, b) | CExpr::Like(a, b, _) => {
                a.walk(f);
                b.walk(f);
            }
            CExpr::Not(a)
            | CExpr::Neg(a)
            | CExpr::IsNull(a, _)
            | CExpr::Cast(a, _)
            | CExpr::InSub(a, ..)
            | CExpr::InSet(a, ..) => a.walk(f),
            CExpr::InList(a, items, _) => {
                a.walk(f);
                items.iter().for_each(|i| i.walk(f));
            }
            CExpr::Between(a, b, c, _) => {
                a.walk(f);
                b.walk(f);
                c.walk(f);
            }
            CExpr::Case(op, arms, els) => {
                if let Some(o) = op {
                    o.walk(f);
                }
                for (w, t) in arms {
                    w.walk(f);
                    t.walk(f);
                }
                if let Some(e) = els {
                    e.walk(f);
                }
            }
            CExpr::Func(_, args) => args.iter().for_each(|a| a.walk(f)),
        }
    }

    /// Rebuild bottom-up: children first, then `f` on the node.
    #[recursive::recursive]
    pub fn try_rewrite(self, f: &mut dyn FnMut(CExpr) -> SqlResult<CExpr>) -> SqlResult<CExpr> {
        fn b(
            mut x: Box<CExpr>,
            f: &mut dyn FnMut(CExpr) -> SqlResult<CExpr>,
        ) -> SqlResult<Box<CExpr>> {
            // Rewrite in place: the box's allocation is reused.
            let v = std::mem::replace(&mut *x, CExpr::Lit(Value::Null));
            *x = v.try_rewrite(f)?;
            Ok(x)
        }
        let node = match self {
            CExpr::Bin(op, a, c) => {
                let a = b(a, f)?;
                CExpr::Bin(op, a, b(c, f)?)
            }
            CExpr::Like(a, c, n) => {
                let a = b(a, f)?;
                CExpr::Like(a, b(c, f)?, n)
            }
            CExpr::Not(a) => CExpr::Not(b(a, f)?),
            CExpr::Neg(a) => CExpr::Neg(b(a, f)?),
            CExpr::IsNull(a, n) => CExpr::IsNull(b(a, f)?, n),
            CExpr::Cast(a, t) => CExpr::Cast(b(a, f)?, t),
            CExpr::InSub(a, sp, n) => CExpr::InSub(b(a, f)?, sp, n),
            CExpr::InSet(a, set, n) => CExpr::InSet(b(a, f)?, set, n),
            CExpr::InList(a, items, n) => {
                let a = b(a, f)?;
                let items = items
                    .into_iter()
                    .map(|i| i.try_rewrite(f))
                    .collect::<SqlResult<Vec<_>>>()?;
                CExpr::InList(a, items, n)
            }
            CExpr::Between(a, lo, hi, n) => {
                let a = b(a, f)?;
                let lo = b(lo, f)?;
                CExpr::Between(a, lo, b(hi, f)?, n)
            }
            CExpr::Case(op, arms, els) => {
                let op = match op {
                    Some(o) => Some(b(o, f)?),
                    None => None,
                };
                let mut out = Vec::with_capacity(arms.len());
                for (w, t) in arms {
                    out.push((w.try_rewrite(f)?, t.try_rewrite(f)?));
                }
                let els = match els {
                    Some(e) => Some(b(e, f)?),
                    None => None,
                };
                CExpr::Case(op, out, els)
            }
            CExpr::Func(name, args) => CExpr::Func(
                name,
                args.into_iter()
                    .map(|a| a.try_rewrite(f))
                    .collect::<SqlResult<Vec<_>>>()?,
            ),
            leaf => leaf,
        };
        f(node)
    }

    /// [`try_rewrite`](Self::try_rewrite) with a step that cannot fail.
    pub fn rewrite(self, f: &mut dyn FnMut(CExpr) -> CExpr) -> CExpr {
        match self.try_rewrite(&mut |x| Ok(f(x))) {
            Ok(e) => e,
            Err(_) => unreachable!("the rewrite step never fails"),
        }
    }

    /// Replace every own-row column reference `Col(i)` by `f(i)`.
    pub fn map_cols_expr(self, f: &mut dyn FnMut(usize) -> CExpr) -> CExpr {
        self.rewrite(&mut |x| match x {
            CExpr::Col(i) => f(i),
            other => other,
        })
    }

    /// Replace every correlated reference `Outer(i)` by the literal `f(i)`.
    pub fn map_outer(self, f: &dyn Fn(usize) -> Value) -> CExpr {
        self.rewrite(&mut |x| match x {
            CExpr::Outer(i) => CExpr::Lit(f(i)),
            other => other,
        })
    }

    /// Renumber own-row column references.
    pub fn map_cols(self, f: &mut dyn FnMut(usize) -> usize) -> CExpr {
        self.map_cols_expr(&mut |i| CExpr::Col(f(i)))
    }

    /// Split a conjunction into its terms.
    #[recursive::recursive]
    pub fn conjuncts(&self) -> Vec<&CExpr> {
        match self {
            CExpr::Bin(BinOp::And, a, b) => {
                let mut v = a.conjuncts();
                v.extend(b.conjuncts());
                v
            }
            other => vec![other],
        }
    }
}
