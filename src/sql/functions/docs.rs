//! `docs/FUNCTIONS.md`, generated from the table (the unit test
//! `function_docs_are_current` compares and, with `UPDATE_FUNCTION_DOCS=1`,
//! rewrites it).

use super::{Category, FunctionDef, Parity, Purity, Returns, TextLen, FUNCTIONS, VARIADIC};
use crate::types::ColumnKind;

impl Category {
    fn title(self) -> &'static str {
        match self {
            Category::Aggregate => "Aggregate functions",
            Category::Window => "Window functions (with OVER only; every aggregate takes OVER too)",
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

/// `docs/FUNCTIONS.md` as the registry declares it.
pub(super) fn reference_doc() -> String {
    use std::fmt::Write as _;
    let mut out = String::from(
        "# SQL functions\n\n\
         Generated from the function registry (`src/sql/functions/table.rs`) — do not edit.\n\
         Regenerate with `UPDATE_FUNCTION_DOCS=1 cargo test --lib sql::functions`.\n\n\
         A call with an argument count outside *Arguments* is error 1582; an unknown\n\
         name is error 1305. *Deterministic*: `yes` — the same arguments give the same\n\
         answer anywhere in a statement's plan (the clock functions are never folded to a\n\
         constant, though); `session` — read from session state the statement may change\n\
         (`@x`, `@@x`, LAST_INSERT_ID()), so never moved within a plan; `no` — may differ\n\
         between two calls, or acts: never folded, never moved.\n",
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

fn kind_name(k: ColumnKind) -> &'static str {
    match k {
        ColumnKind::Int => "BIGINT",
        ColumnKind::Float => "DOUBLE",
        ColumnKind::Text => "VARCHAR",
        ColumnKind::DateTime(_) => "DATETIME",
        ColumnKind::Date => "DATE",
        ColumnKind::Decimal { .. } => "DECIMAL",
        ColumnKind::Vector => "VECTOR",
        ColumnKind::Bytes => "VARBINARY",
        #[allow(unreachable_patterns)]
        _ => "?",
    }
}
