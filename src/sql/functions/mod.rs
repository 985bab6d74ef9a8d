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
//! ([`crate::sql::select`]), the session's function host
//! ([`crate::sql::host`]) and the planner read it; adding a function is one
//! entry here plus its evaluator.
//!
//! Never plans, never reads storage or the session: session-dependent
//! functions ([`Eval::Host`]) are answered by the [`FunctionHost`] in the
//! evaluation context. Argument coercion is each evaluator's own (as
//! MySQL's `Item_func::val_*`), so the table records no coercion rule.

use std::collections::HashMap;
use std::sync::LazyLock;

use crate::error::{code, SqlError, SqlResult};
use crate::sql::expr::{collate, AggFunc, CExpr, EvalCtx, FunctionHost};
use crate::types::{ColumnKind, Value};

mod control;
mod scalar;
mod table;

pub(crate) use table::FUNCTIONS;

/// Argument count meaning "any number from the minimum up".
pub(crate) const VARIADIC: u8 = u8::MAX;

/// How a call is evaluated.
#[derive(Clone, Copy)]
pub(crate) enum Eval {
    /// From the values of all its arguments.
    Values(fn(&str, &[Value]) -> SqlResult<Value>),
    /// From its unevaluated arguments: the function evaluates only those
    /// that decide the answer (COALESCE, IF, IFNULL) or needs to know
    /// which are JSON-typed (the JSON functions).
    Exprs(fn(&str, &[CExpr], &EvalCtx<'_>) -> SqlResult<Value>),
    /// By the session ([`FunctionHost`]): it reads or changes session or
    /// server state.
    Host,
    /// An aggregate: compiled into a slot the aggregate operator fills.
    Aggregate(AggFunc),
    /// Rewritten by the compiler into another call (`DATE_ADD(d,
    /// INTERVAL …)`): never evaluated under this name.
    Rewritten,
}

/// The result type of a call.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Returns {
    /// Always this type.
    Fixed(ColumnKind),
    /// Derived from the arguments by the typing code
    /// (`select::kind_of_expr`); the text says how, for the docs.
    Rule(&'static str),
}

/// Whether two calls with the same arguments give the same answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Purity {
    /// A function of its arguments (or of the statement's clock, which
    /// `datetime::reads_clock` keeps from being folded).
    Deterministic,
    /// Fixed within a statement but read from the session (`@x`,
    /// `@@var`, LAST_INSERT_ID()): never moved to another place in a plan.
    Session,
    /// May differ between two calls of one statement, or acts (SLEEP,
    /// fault injection): never folded, never moved.
    Volatile,
}

/// The privilege a call needs beyond running the statement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Privilege {
    None,
    /// SUPER (error 1227 otherwise).
    Super,
}

/// The most characters a string result can have, from its arguments'.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TextLen {
    /// Not known from the arguments.
    Unknown,
    /// At most the first argument's (LOWER, TRIM, REVERSE, …).
    OfFirstArg,
    /// At most the arguments' together (CONCAT).
    SumOfArgs,
}

/// Which argument counts an even/odd rule admits on top of min/max.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Parity {
    Any,
    Even,
    Odd,
}

/// The section of `docs/FUNCTIONS.md` a function is listed under.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Category {
    Aggregate,
    ControlFlow,
    Numeric,
    String,
    Regexp,
    DateTime,
    Json,
    Vector,
    Session,
    FaultInjection,
    /// Produced by the compiler only (operators, `@@var`, COLLATE
    /// helpers): a user cannot call it by name.
    Internal,
}

#[cfg(test)]
impl Category {
    fn title(self) -> &'static str {
        match self {
            Category::Aggregate => "Aggregate functions",
            Category::ControlFlow => "Control flow",
            Category::Numeric => "Numeric functions",
            Category::String => "String functions",
            Category::Regexp => "Regular expressions",
            Category::DateTime => "Date and time",
            Category::Json => "JSON",
            Category::Vector => "Vectors",
            Category::Session => "Session and server information",
            Category::FaultInjection => "Fault injection (SUPER only)",
            Category::Internal => "Internal (produced by the compiler, not callable by name)",
        }
    }
}

/// One function.
pub(crate) struct FunctionDef {
    /// Lower-case name, as the compiler sees it.
    pub name: &'static str,
    /// Other names of the same function (CEILING for CEIL).
    pub aliases: &'static [&'static str],
    pub min_args: u8,
    /// [`VARIADIC`]: no upper bound.
    pub max_args: u8,
    pub parity: Parity,
    pub returns: Returns,
    /// Of a string result: its length from the arguments'.
    pub text_len: TextLen,
    /// Whether the result is JSON-typed: a JSON function taking it nests
    /// it as a document, not as a string.
    pub json: bool,
    /// Of a DOUBLE result: the fixed fractional digits MySQL types it
    /// with (PI(): 6), when they do not depend on the arguments.
    pub decimals: Option<u8>,
    pub eval: Eval,
    pub privilege: Privilege,
    pub purity: Purity,
    pub category: Category,
    /// One line for `docs/FUNCTIONS.md`.
    #[cfg_attr(not(test), allow(dead_code))] // read by the docs generator (a test)
    pub doc: &'static str,
}

/// A declaration with the common defaults (deterministic, no privilege,
/// no aliases, any parity); the `const fn` methods below adjust it.
pub(crate) const fn def(
    category: Category,
    name: &'static str,
    (min_args, max_args): (u8, u8),
    returns: Returns,
    eval: Eval,
    doc: &'static str,
) -> FunctionDef {
    FunctionDef {
        name,
        aliases: &[],
        min_args,
        max_args,
        parity: Parity::Any,
        returns,
        text_len: TextLen::Unknown,
        json: false,
        decimals: None,
        eval,
        privilege: Privilege::None,
        purity: Purity::Deterministic,
        category,
        doc,
    }
}

impl FunctionDef {
    pub(crate) const fn aliases(mut self, a: &'static [&'static str]) -> Self {
        self.aliases = a;
        self
    }
    pub(crate) const fn parity(mut self, p: Parity) -> Self {
        self.parity = p;
        self
    }
    pub(crate) const fn purity(mut self, p: Purity) -> Self {
        self.purity = p;
        self
    }
    pub(crate) const fn text_len(mut self, t: TextLen) -> Self {
        self.text_len = t;
        self
    }
    pub(crate) const fn json(mut self) -> Self {
        self.json = true;
        self
    }
    pub(crate) const fn decimals(mut self, d: u8) -> Self {
        self.decimals = Some(d);
        self
    }
    pub(crate) const fn super_only(mut self) -> Self {
        self.privilege = Privilege::Super;
        self
    }

    /// Whether `n` arguments are a valid call.
    pub(crate) fn takes(&self, n: usize) -> bool {
        n >= usize::from(self.min_args)
            && (self.max_args == VARIADIC || n <= usize::from(self.max_args))
            && match self.parity {
                Parity::Any => true,
                Parity::Even => n.is_multiple_of(2),
                Parity::Odd => !n.is_multiple_of(2),
            }
    }

    /// The fixed result type, if the function has one.
    pub(crate) fn fixed_kind(&self) -> Option<ColumnKind> {
        match self.returns {
            Returns::Fixed(k) => Some(k),
            Returns::Rule(_) => None,
        }
    }
}

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

fn unknown(name: &str) -> SqlError {
    SqlError::new(
        code::UNKNOWN_FUNCTION,
        format!("FUNCTION {name} does not exist"),
    )
}

/// MySQL's error 1582 for a call to `name` with the wrong number of
/// arguments.
pub(crate) fn wrong_count(name: &str) -> SqlError {
    SqlError::new(
        code::WRONG_PARAMCOUNT,
        format!("Incorrect parameter count in the call to native function '{name}'"),
    )
}

/// Check a call the user wrote (`name` lower case): the function exists
/// and is not internal (1305), and takes `nargs` arguments (1582).
pub(crate) fn check_call(name: &str, nargs: usize) -> SqlResult<&'static FunctionDef> {
    let f = lookup(name)
        .filter(|f| f.category != Category::Internal)
        .ok_or_else(|| unknown(name))?;
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
        return collate::call(name, &values(args)?);
    }
    let Some(f) = lookup(name) else {
        return Err(unknown(name));
    };
    match f.eval {
        Eval::Values(eval) => eval(name, &values(args)?),
        Eval::Exprs(eval) => eval(name, args, cx),
        Eval::Host => host_call(cx.funcs, name, &values(args)?),
        Eval::Aggregate(_) | Eval::Rewritten => Err(SqlError::new(
            code::UNKNOWN_ERROR,
            format!("internal error: {name} evaluated as a scalar call"),
        )),
    }
}

/// Evaluate `name` over argument values: for the callers that hold values
/// already (the COLLATE helpers call the function they stand for). Only
/// [`Eval::Values`] functions can be called this way.
pub(crate) fn call_values(name: &str, args: &[Value]) -> SqlResult<Value> {
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

/// `docs/FUNCTIONS.md` as the registry declares it.
#[cfg(test)]
fn reference_doc() -> String {
    use std::fmt::Write as _;
    let mut out = String::from(
        "# SQL functions\n\n\
         Generated from the function registry (`src/sql/functions/table.rs`) — do not edit.\n\
         Regenerate with `UPDATE_FUNCTION_DOCS=1 cargo test --lib sql::functions`.\n\n\
         A call with an argument count outside *Arguments* is error 1582; an unknown\n\
         name is error 1305. *Deterministic*: `yes`, `session` (fixed within a statement,\n\
         read from the session), `no` (may differ between calls, or acts).\n",
    );
    let mut sorted: Vec<&FunctionDef> = FUNCTIONS.iter().collect();
    sorted.sort_by_key(|f| (f.category, f.name));
    let mut current = None;
    for f in sorted {
        if current != Some(f.category) {
            current = Some(f.category);
            let _ = write!(
                out,
                "\n## {}\n\n| Function | Arguments | Returns | Deterministic | Description |\n|---|---|---|---|---|\n",
                f.category.title()
            );
        }
        let mut names = format!("`{}`", f.name.to_uppercase());
        for a in f.aliases {
            let _ = write!(names, ", `{}`", a.to_uppercase());
        }
        let args = match (f.min_args, f.max_args) {
            (a, b) if a == b => a.to_string(),
            (a, VARIADIC) => format!("{a} or more"),
            (a, b) => format!("{a} to {b}"),
        };
        let args = match f.parity {
            Parity::Any => args,
            Parity::Even => format!("{args}, even"),
            Parity::Odd => format!("{args}, odd"),
        };
        let mut returns = match f.returns {
            Returns::Fixed(k) => kind_name(k).to_string(),
            Returns::Rule(r) => r.to_string(),
        };
        match f.text_len {
            TextLen::Unknown => {}
            TextLen::OfFirstArg => returns.push_str(", as long as its first argument"),
            TextLen::SumOfArgs => returns.push_str(", as long as its arguments together"),
        }
        if f.json {
            returns.push_str(" (a JSON document)");
        }
        if let Some(d) = f.decimals {
            let _ = write!(returns, ", {d} decimals");
        }
        let det = match f.purity {
            Purity::Deterministic => "yes",
            Purity::Session => "session",
            Purity::Volatile => "no",
        };
        let _ = writeln!(out, "| {names} | {args} | {returns} | {det} | {} |", f.doc);
    }
    out
}

#[cfg(test)]
fn kind_name(k: ColumnKind) -> &'static str {
    match k {
        ColumnKind::Int => "BIGINT",
        ColumnKind::Float => "DOUBLE",
        ColumnKind::Text => "VARCHAR",
        ColumnKind::DateTime => "DATETIME",
        ColumnKind::Date => "DATE",
        ColumnKind::Decimal { .. } => "DECIMAL",
        ColumnKind::Vector => "VECTOR",
        #[allow(unreachable_patterns)]
        _ => "?",
    }
}

#[cfg(test)]
mod tests;
