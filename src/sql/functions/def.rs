//! What a function declaration says: [`FunctionDef`] and the types of its
//! fields, with the `const` builder the table is written with. Data only:
//! nothing here looks a name up or evaluates a call.

use crate::error::SqlResult;
use crate::sql::expr::tree::{AggFunc, CExpr, EvalCtx, WinFunc};
use crate::types::{ColumnKind, Value};

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
    /// By the session ([`crate::sql::expr::FunctionHost`]): it reads or changes session or
    /// server state.
    Host,
    /// An aggregate: compiled into a slot the aggregate operator fills.
    Aggregate(AggFunc),
    /// A window function: only with `OVER (…)`, compiled into a slot the
    /// window operator fills.
    Window(WinFunc),
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
    /// Callable only with `OVER (…)` (aggregates may take one too).
    Window,
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
    /// Whether a binary-string argument makes the (TEXT) result a binary
    /// string (CONCAT, SUBSTRING, LEFT …, as MySQL).
    pub binary_with_binary_arg: bool,
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
        binary_with_binary_arg: false,
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
    pub(crate) const fn binary_with_binary_arg(mut self) -> Self {
        self.binary_with_binary_arg = true;
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
