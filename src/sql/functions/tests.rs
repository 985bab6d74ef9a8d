//! The registry checked against the compiler and the evaluators: every
//! entry compiles and evaluates at its smallest and largest argument
//! count, one argument too few or too many is 1582, and
//! `docs/FUNCTIONS.md` is what the registry declares.

use std::collections::HashSet;

use sqlparser::dialect::MySqlDialect;
use sqlparser::parser::Parser;

use super::docs::reference_doc;
use super::*;
use crate::error::{code, SqlError, SqlResult};
use crate::sql::expr::{CExpr, EvalCtx, FunctionHost};
use crate::sql::expr::{Compiler, Scope};
use crate::types::{ColumnKind, Value};

/// Answers every host function with its name, so a call that reaches the
/// host is told apart from one that fails before.
struct EchoHost;
impl FunctionHost for EchoHost {
    fn call(&self, name: &str, _: &[Value]) -> Option<SqlResult<Value>> {
        Some(Ok(Value::Text(format!("host:{name}"))))
    }
}

fn cx<'a>(host: &'a dyn FunctionHost) -> EvalCtx<'a> {
    EvalCtx {
        row: &[],
        outer: &[],
        aggs: &[],
        matches: &[],
        funcs: host,
    }
}

/// Compile `sql` (an expression) over an empty scope.
fn compile(sql: &str, aggs: bool) -> SqlResult<(CExpr, usize)> {
    let e = Parser::new(&MySqlDialect {})
        .try_with_sql(sql)
        .and_then(|mut p| p.parse_expr())
        .map_err(|e| SqlError::parse(format!("{sql}: {e}")))?;
    let scope = Scope::default();
    let mut c = Compiler::new(&scope, aggs);
    c.allow_windows = aggs;
    let x = c.compile(&e)?;
    Ok((x, c.aggs.len()))
}

/// Functions sqlparser parses by a grammar rule of their own (into
/// `Expr::Trim`, `Expr::Ceil`, …): the compiler reaches their evaluators
/// under an internal name, never through [`check_call`].
const GRAMMAR: &[&str] = &[
    "trim",
    "ceil",
    "floor",
    "substring",
    "substr",
    "current_timestamp",
];

/// A call of `f` by `name` with `n` arguments, as SQL.
fn call_sql(f: &FunctionDef, name: &str, n: usize) -> String {
    let args: Vec<String> = (0..n)
        .map(|i| match (f.name, i) {
            // The unit of TIMESTAMPDIFF / TIMESTAMPADD is a keyword.
            ("timestampdiff" | "timestampadd", 0) => "DAY".into(),
            ("date_add" | "date_sub", 1) => "INTERVAL 1 DAY".into(),
            _ => "1".into(),
        })
        .collect();
    // A window function is called with its OVER clause.
    let over = if matches!(f.eval, Eval::Window(_)) {
        " OVER ()"
    } else {
        ""
    };
    format!("{name}({}){over}", args.join(", "))
}

/// Argument counts to try: the smallest, the largest (two past the
/// smallest for a variadic function), each kept to the parity.
fn counts(f: &FunctionDef) -> Vec<usize> {
    let min = usize::from(f.min_args);
    let max = if f.max_args == VARIADIC {
        min + 2
    } else {
        usize::from(f.max_args)
    };
    let mut c = vec![min, max];
    c.dedup();
    c.retain(|&n| f.takes(n));
    c
}

fn all_names(f: &'static FunctionDef) -> impl Iterator<Item = &'static str> {
    std::iter::once(f.name).chain(f.aliases.iter().copied())
}

#[test]
fn names_are_unique_lower_case_and_documented() {
    let mut seen = HashSet::new();
    for f in FUNCTIONS {
        for n in all_names(f) {
            assert!(seen.insert(n), "{n} declared twice");
            assert_eq!(n, n.to_lowercase(), "{n}: names are lower case");
            assert!(
                std::ptr::eq(lookup(n).unwrap(), f),
                "{n} looks up its entry"
            );
        }
        assert!(f.min_args <= f.max_args, "{}: min above max", f.name);
        assert!(!counts(f).is_empty(), "{}: takes no argument count", f.name);
        assert!(
            !f.doc.is_empty() && !f.doc.contains('\n') && !f.doc.contains('|'),
            "{}: one line of doc, no table bar",
            f.name
        );
        if f.category == Category::FaultInjection {
            assert_eq!(f.privilege, Privilege::Super, "{}", f.name);
            assert_eq!(f.purity, Purity::Volatile, "{}", f.name);
        }
    }
}

/// Every callable entry, by every name, compiles at its smallest and
/// largest argument count and evaluates without an arity, unknown-function
/// or internal error: the registry's arity agrees with the evaluator's own
/// checks, and the dispatch reaches an evaluator.
#[test]
fn every_entry_compiles_and_evaluates_at_min_and_max_arity() {
    let host = EchoHost;
    let mut checked = 0;
    for f in FUNCTIONS
        .iter()
        .filter(|f| f.category != Category::Internal)
    {
        for name in all_names(f).filter(|n| !GRAMMAR.contains(n)) {
            for n in counts(f) {
                let sql = call_sql(f, name, n);
                if let Eval::Window(w) = f.eval {
                    let (x, slots) = compile(&sql, true).unwrap_or_else(|e| panic!("{sql}: {e:?}"));
                    assert!(matches!(x, CExpr::Agg(0)) && slots == 1, "{sql}: {x:?}");
                    assert_eq!(window(name).map(|(w, _)| w), Some(w));
                    // Without its OVER clause: a syntax error, as in MySQL.
                    let bare = sql.trim_end_matches(" OVER ()");
                    let e = compile(bare, true).expect_err(bare);
                    assert_eq!(e.code, code::PARSE, "{bare}: {e:?}");
                    checked += 1;
                    continue;
                }
                if let Eval::Aggregate(a) = f.eval {
                    let (x, slots) = compile(&sql, true).unwrap_or_else(|e| panic!("{sql}: {e:?}"));
                    // A JSON aggregate's slot is read as JSON.
                    let slot = match &x {
                        CExpr::Func(n, args) if n == crate::sql::expr::JSON_AGG => &args[0],
                        x => x,
                    };
                    assert!(matches!(slot, CExpr::Agg(0)) && slots == 1, "{sql}: {x:?}");
                    assert_eq!(aggregate(name), Some(a));
                    checked += 1;
                    continue;
                }
                let (x, _) = compile(&sql, false).unwrap_or_else(|e| panic!("{sql}: {e:?}"));
                let CExpr::Func(compiled, _) = &x else {
                    panic!("{sql} compiled to {x:?}");
                };
                let r = x.eval(&cx(&host));
                if let Err(e) = &r {
                    assert!(
                        ![
                            code::WRONG_PARAMCOUNT,
                            code::UNKNOWN_FUNCTION,
                            code::UNKNOWN_ERROR
                        ]
                        .contains(&e.code),
                        "{sql} (as {compiled}): {e:?}"
                    );
                }
                if matches!(f.eval, Eval::Host) {
                    assert_eq!(r.ok(), Some(Value::Text(format!("host:{name}"))), "{sql}");
                }
                checked += 1;
            }
        }
    }
    assert!(checked > 150, "only {checked} calls checked");
}

/// The internal entries evaluate through the same dispatch, and a user
/// cannot call them by name.
#[test]
fn internal_entries_evaluate_but_are_not_callable() {
    let host = EchoHost;
    for f in FUNCTIONS
        .iter()
        .filter(|f| f.category == Category::Internal)
    {
        for name in all_names(f) {
            assert_eq!(
                check_call(name, usize::from(f.min_args))
                    .err()
                    .map(|e| e.code),
                Some(code::UNKNOWN_FUNCTION),
                "{name}"
            );
            let args = vec![CExpr::Lit(Value::Text("x".into())); usize::from(f.min_args)];
            if let Err(e) = eval_call(name, &args, &cx(&host)) {
                assert!(
                    ![
                        code::WRONG_PARAMCOUNT,
                        code::UNKNOWN_FUNCTION,
                        code::UNKNOWN_ERROR
                    ]
                    .contains(&e.code),
                    "{name}: {e:?}"
                );
            }
        }
    }
}

/// One argument too few or too many is 1582 (SQLSTATE 42000) with MySQL's
/// message, before anything is evaluated.
#[test]
fn wrong_argument_count_is_1582() {
    let mut checked = 0;
    for f in FUNCTIONS
        .iter()
        .filter(|f| f.category != Category::Internal)
    {
        for name in all_names(f).filter(|n| !GRAMMAR.contains(n)) {
            let min = usize::from(f.min_args);
            let mut bad = Vec::new();
            if min > 0 {
                bad.push(min - 1);
            }
            if f.max_args != VARIADIC {
                bad.push(usize::from(f.max_args) + 1);
            }
            if f.parity != Parity::Any {
                bad.push(min + 1);
            }
            for n in bad {
                let sql = call_sql(f, name, n);
                let e = match compile(&sql, true) {
                    Ok(x) => panic!("{sql} compiled: {x:?}"),
                    Err(e) => e,
                };
                if matches!(f.eval, Eval::Window(_)) && f.max_args == 0 {
                    // MySQL's grammar gives the ranking functions no
                    // argument list: a syntax error.
                    assert_eq!(e.code, code::PARSE, "{sql}: {e:?}");
                    continue;
                }
                assert_eq!(e.code, code::WRONG_PARAMCOUNT, "{sql}: {e:?}");
                assert_eq!(e.sqlstate, "42000", "{sql}");
                assert_eq!(
                    e.message,
                    format!("Incorrect parameter count in the call to native function '{name}'"),
                    "{sql}"
                );
                checked += 1;
            }
        }
    }
    assert!(checked > 150, "only {checked} calls checked");
}

#[test]
fn unknown_functions_are_1305_at_compile_time() {
    for sql in ["nosuchfn(1)", "`is true`(1)", "`@@`('x')", "db.abs(1)"] {
        let e = compile(sql, false).expect_err(sql);
        assert_eq!(e.code, code::UNKNOWN_FUNCTION, "{sql}: {e:?}");
    }
}

/// The types the registry declares are the ones the typing code reports,
/// and the dispatch answers with a value of that type.
#[test]
fn fixed_kinds_are_what_the_evaluators_return() {
    let host = EchoHost;
    for (sql, kind) in [
        ("sqrt(4)", ColumnKind::Float),
        ("sign(-3)", ColumnKind::Int),
        ("char_length('abc')", ColumnKind::Int),
        ("upper('abc')", ColumnKind::Text),
    ] {
        let (x, _) = compile(sql, false).unwrap();
        let CExpr::Func(name, _) = &x else {
            panic!("{sql}")
        };
        assert_eq!(result_kind(name), kind, "{sql}");
        let v = x.eval(&cx(&host)).unwrap();
        let got = match v {
            Value::Float(_) => ColumnKind::Float,
            Value::Int(_) => ColumnKind::Int,
            _ => ColumnKind::Text,
        };
        assert_eq!(got, kind, "{sql}");
    }
}

/// `docs/FUNCTIONS.md` is generated from the registry.
#[test]
fn function_docs_are_current() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/FUNCTIONS.md");
    let want = reference_doc();
    if std::env::var_os("UPDATE_FUNCTION_DOCS").is_some() {
        std::fs::write(&path, &want).unwrap();
    }
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        have == want,
        "docs/FUNCTIONS.md is out of date with the function registry: \
         regenerate it with `UPDATE_FUNCTION_DOCS=1 cargo test --lib sql::functions`"
    );
}

/// Every function the registry sends to the session host is one the
/// session answers (a host entry it did not know would be 1305 only when
/// a statement ran it), and the fault-injection functions are refused
/// without the SUPER the registry declares for them.
#[test]
fn the_session_answers_every_host_entry() {
    let dir = tempfile::tempdir().unwrap();
    let db = crate::Database::open(dir.path()).unwrap();
    let mut root = db.session();
    root.execute("CREATE USER plain").unwrap();
    let mut plain = db.session();
    plain.set_user("plain", false);
    let mut checked = 0;
    for f in FUNCTIONS
        .iter()
        .filter(|f| matches!(f.eval, Eval::Host) && f.category != Category::Internal)
    {
        for name in all_names(f) {
            let n = usize::from(f.min_args);
            // SLEEP(0), not SLEEP(1).
            let sql = format!(
                "SELECT {}",
                call_sql(f, name, n).replace("sleep(1)", "sleep(0)")
            );
            if f.privilege == Privilege::Super {
                let e = plain.execute(&sql).expect_err(&sql);
                assert_eq!(e.code, code::SPECIFIC_ACCESS_DENIED, "{sql}: {e:?}");
                checked += 1;
                continue;
            }
            if let Err(e) = root.execute(&sql) {
                assert!(
                    ![
                        code::WRONG_PARAMCOUNT,
                        code::UNKNOWN_FUNCTION,
                        code::UNKNOWN_ERROR
                    ]
                    .contains(&e.code),
                    "{sql}: {e:?}"
                );
            }
            checked += 1;
        }
    }
    assert!(checked >= 14, "only {checked} host calls checked");
}

/// The declared purity reaches constant folding: a volatile call (NOW,
/// SLEEP) is never a constant, a deterministic one of constants is; a
/// session-state call is folded within a statement but never moved.
#[test]
fn purity_reaches_folding() {
    for (sql, constant) in [
        ("now()", false),
        ("sleep(0)", false),
        ("abs(-1)", true),
        ("concat('a', upper('b'))", true),
        ("last_insert_id()", true),
    ] {
        let (x, _) = compile(sql, false).unwrap();
        assert_eq!(x.is_constant(), constant, "{sql}");
    }
    assert!(!is_deterministic("last_insert_id") && !is_deterministic("now"));
    assert!(is_deterministic("abs") && is_deterministic("curdate"));
}
