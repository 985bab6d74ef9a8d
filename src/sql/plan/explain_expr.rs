//! EXPLAIN's expression printer: a compiled expression ([`CExpr`]) as
//! MySQL 8's `EXPLAIN FORMAT=TREE` prints conditions and sort keys —
//! `(t.a > 1)`, `((t.a = 1) and (t.b < 'x'))`, `count(0)`, `exists(select
//! #2)` — with the names of the scope the expression is over.
//!
//! Owns only the text. Never evaluates an expression, never fails: an
//! expression nested deeper than [`MAX_DEPTH`] prints `…` below that
//! depth (the depth guard), a position outside its scope `<column N>`.

use crate::sql::agg_stats::StatFunc;
use crate::sql::expr::{AggCall, AggFunc, CExpr, CastTo, MatchSpec};
use crate::types::Value;

/// Deepest expression level printed; below it `…` stands for the rest.
pub const MAX_DEPTH: usize = 128;

/// What an expression's positions name: its row's columns as
/// `(table alias, column)`, the enclosing query's row (correlated
/// references), the block's aggregate calls and MATCH specs.
#[derive(Default, Clone, Copy)]
pub struct Names<'a> {
    pub cols: &'a [(String, String)],
    pub outer: &'a [(String, String)],
    pub aggs: &'a [AggCall],
    pub matches: &'a [MatchSpec],
}

/// `(alias, column)` as MySQL prints it: `alias.column`, or `column` alone
/// when it has no alias.
pub fn column_name((alias, name): &(String, String)) -> String {
    if alias.is_empty() {
        name.clone()
    } else {
        format!("{alias}.{name}")
    }
}

/// A literal as SQL text: strings and datetimes quoted (a quote doubled).
pub fn literal(v: &Value) -> String {
    match v {
        Value::Null => "NULL".into(),
        Value::Bool(b) => if *b { "true" } else { "false" }.into(),
        Value::Text(s) => format!("'{}'", s.replace('\'', "''")),
        Value::Bytes(b) => {
            let mut s = String::with_capacity(2 + 2 * b.len());
            s.push_str("0x");
            for x in b {
                s.push_str(&format!("{x:02x}"));
            }
            s
        }
        Value::DateTime(_) | Value::Vector(_) => {
            format!("'{}'", v.to_string().replace('\'', "''"))
        }
        other => other.to_string(),
    }
}

/// `e` as MySQL's tree format prints it.
pub fn show(e: &CExpr, names: &Names<'_>) -> String {
    let mut out = String::new();
    write(e, names, 0, &mut out);
    out
}

/// An aggregate call as MySQL names it (`count(0)` for `COUNT(*)`).
pub fn agg_call(a: &AggCall, names: &Names<'_>) -> String {
    let mut s = String::new();
    agg_into(a, names, 0, &mut s);
    s
}

fn agg_into(a: &AggCall, names: &Names<'_>, depth: usize, out: &mut String) {
    if let Some(w) = &a.window {
        out.push_str(&w.text);
        return;
    }
    let name = match a.func {
        AggFunc::CountStar => {
            out.push_str("count(0)");
            return;
        }
        AggFunc::Count => "count",
        AggFunc::Sum => "sum",
        AggFunc::Min => "min",
        AggFunc::Max => "max",
        AggFunc::Avg => "avg",
        AggFunc::Stat(f) => match f {
            StatFunc::StdPop => "std",
            StatFunc::StdSamp => "stddev_samp",
            StatFunc::VarPop => "variance",
            StatFunc::VarSamp => "var_samp",
            StatFunc::BitAnd => "bit_and",
            StatFunc::BitOr => "bit_or",
            StatFunc::BitXor => "bit_xor",
            StatFunc::JsonArray { .. } => "json_arrayagg",
            StatFunc::JsonObject => "json_objectagg",
        },
    };
    out.push_str(name);
    out.push('(');
    if a.distinct {
        out.push_str("distinct ");
    }
    match &a.arg {
        Some(x) => write(x, names, depth + 1, out),
        None => out.push('0'),
    }
    out.push(')');
}

fn list(es: &[CExpr], names: &Names<'_>, depth: usize, out: &mut String) {
    for (i, x) in es.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write(x, names, depth + 1, out);
    }
}

fn write(e: &CExpr, names: &Names<'_>, depth: usize, out: &mut String) {
    if depth >= MAX_DEPTH {
        out.push('…');
        return;
    }
    let d = depth + 1;
    match e {
        CExpr::Lit(v) => out.push_str(&literal(v)),
        CExpr::Col(i) => match names.cols.get(*i) {
            Some(c) => out.push_str(&column_name(c)),
            None => out.push_str(&format!("<column {i}>")),
        },
        CExpr::Outer(i) => match names.outer.get(*i) {
            Some(c) => out.push_str(&column_name(c)),
            None => out.push_str(&format!("<outer column {i}>")),
        },
        CExpr::Bin(op, a, b) => {
            out.push('(');
            write(a, names, d, out);
            out.push(' ');
            out.push_str(op.sql());
            out.push(' ');
            write(b, names, d, out);
            out.push(')');
        }
        CExpr::Not(x) => {
            out.push_str("(not(");
            write(x, names, d, out);
            out.push_str("))");
        }
        CExpr::Neg(x) => {
            out.push_str("-(");
            write(x, names, d, out);
            out.push(')');
        }
        CExpr::IsNull(x, not) => {
            out.push('(');
            write(x, names, d, out);
            out.push_str(if *not { " is not null)" } else { " is null)" });
        }
        CExpr::InList(x, items, not) => {
            out.push('(');
            write(x, names, d, out);
            out.push_str(if *not { " not in (" } else { " in (" });
            list(items, names, d, out);
            out.push_str("))");
        }
        CExpr::Between(x, lo, hi, not) => {
            out.push('(');
            write(x, names, d, out);
            out.push_str(if *not { " not between " } else { " between " });
            write(lo, names, d, out);
            out.push_str(" and ");
            write(hi, names, d, out);
            out.push(')');
        }
        CExpr::Like(x, p, not) => {
            out.push('(');
            write(x, names, d, out);
            out.push_str(if *not { " not like " } else { " like " });
            write(p, names, d, out);
            out.push(')');
        }
        CExpr::Case(base, arms, default) => {
            out.push_str("(case");
            if let Some(b) = base {
                out.push(' ');
                write(b, names, d, out);
            }
            for (w, t) in arms {
                out.push_str(" when ");
                write(w, names, d, out);
                out.push_str(" then ");
                write(t, names, d, out);
            }
            if let Some(x) = default {
                out.push_str(" else ");
                write(x, names, d, out);
            }
            out.push_str(" end)");
        }
        CExpr::Func(name, args) => {
            out.push_str(&name.to_ascii_lowercase());
            out.push('(');
            list(args, names, d, out);
            out.push(')');
        }
        CExpr::Agg(i) => match names.aggs.get(*i) {
            Some(a) => agg_into(a, names, d, out),
            None => out.push_str(&format!("<aggregate {i}>")),
        },
        CExpr::Match(i) => match names.matches.get(*i) {
            Some(m) => {
                out.push_str("(match ");
                for (k, c) in m.columns.iter().enumerate() {
                    if k > 0 {
                        out.push(',');
                    }
                    write(&CExpr::Col(*c), names, d, out);
                }
                out.push_str(" against (");
                out.push_str(&literal(&Value::Text(m.query.clone())));
                if m.boolean {
                    out.push_str(" in boolean mode");
                }
                out.push_str("))");
            }
            None => out.push_str(&format!("<match {i}>")),
        },
        CExpr::Cast(x, to) => {
            out.push_str("cast(");
            write(x, names, d, out);
            out.push_str(" as ");
            out.push_str(&match to {
                CastTo::Int => "signed".to_string(),
                CastTo::Unsigned => "unsigned".to_string(),
                CastTo::Float => "double".to_string(),
                CastTo::Decimal(p, s) => format!("decimal({p},{s})"),
                CastTo::Text(Some(n)) => format!("char({n})"),
                CastTo::Text(None) => "char".to_string(),
                CastTo::DateTime(0) => "datetime".to_string(),
                CastTo::DateTime(n) => format!("datetime({n})"),
                CastTo::Date => "date".to_string(),
                CastTo::Vector(n) => format!("vecf32({n})"),
                CastTo::Binary(Some(n)) => format!("binary({n})"),
                CastTo::Binary(None) => "binary".to_string(),
            });
            out.push(')');
        }
        CExpr::Scalar(sp) => out.push_str(&format!("(select #{})", select_number(sp.id))),
        CExpr::Exists(sp, not) => {
            let s = format!("exists(select #{})", select_number(sp.id));
            out.push_str(&if *not { format!("(not({s}))") } else { s });
        }
        CExpr::InSub(x, sp, not) => {
            out.push('(');
            write(x, names, d, out);
            out.push_str(if *not {
                " not in (select #"
            } else {
                " in (select #"
            });
            out.push_str(&format!("{}))", select_number(sp.id)));
        }
        CExpr::InSet(x, _, not) => {
            out.push('(');
            write(x, names, d, out);
            out.push_str(if *not {
                " not in (<materialized subquery>))"
            } else {
                " in (<materialized subquery>))"
            });
        }
    }
}

/// The `#n` EXPLAIN numbers subquery `id` by: the statement's own query
/// is select #1, its subqueries follow in the order they were planned.
pub fn select_number(id: usize) -> usize {
    id.saturating_add(2)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::expr::BinOp;

    fn cols() -> Vec<(String, String)> {
        vec![
            ("t".into(), "a".into()),
            ("t".into(), "b".into()),
            (String::new(), "c".into()),
        ]
    }

    fn bin(op: BinOp, a: CExpr, b: CExpr) -> CExpr {
        CExpr::Bin(op, Box::new(a), Box::new(b))
    }

    #[test]
    fn conditions_print_as_mysql_tree_does() {
        let c = cols();
        let n = Names {
            cols: &c,
            ..Names::default()
        };
        let e = bin(
            BinOp::And,
            bin(BinOp::Gt, CExpr::Col(0), CExpr::Lit(Value::Int(1))),
            bin(
                BinOp::NotEq,
                CExpr::Col(1),
                CExpr::Lit(Value::Text("it's".into())),
            ),
        );
        assert_eq!(show(&e, &n), "((t.a > 1) and (t.b <> 'it''s'))");
        let e = CExpr::InList(
            Box::new(CExpr::Col(2)),
            vec![CExpr::Lit(Value::Int(1)), CExpr::Lit(Value::Null)],
            true,
        );
        assert_eq!(show(&e, &n), "(c not in (1,NULL))");
        let e = CExpr::IsNull(Box::new(CExpr::Col(7)), false);
        assert_eq!(show(&e, &n), "(<column 7> is null)");
        let e = CExpr::Func("LOWER".into(), vec![CExpr::Col(1)]);
        assert_eq!(show(&e, &n), "lower(t.b)");
    }

    #[test]
    fn aggregates_print_as_mysql_names_them() {
        let c = cols();
        let aggs = vec![
            AggCall {
                func: AggFunc::CountStar,
                arg: None,
                distinct: false,
                collation: None,
                window: None,
            },
            AggCall {
                func: AggFunc::Sum,
                arg: Some(CExpr::Col(0)),
                distinct: true,
                collation: None,
                window: None,
            },
        ];
        let n = Names {
            cols: &c,
            aggs: &aggs,
            ..Names::default()
        };
        let e = bin(BinOp::Gt, CExpr::Agg(0), CExpr::Agg(1));
        assert_eq!(show(&e, &n), "(count(0) > sum(distinct t.a))");
    }

    #[test]
    fn deep_expressions_are_cut_not_overflowed() {
        let mut e = CExpr::Col(0);
        for _ in 0..10_000 {
            e = CExpr::Neg(Box::new(e));
        }
        let c = cols();
        let s = show(
            &e,
            &Names {
                cols: &c,
                ..Names::default()
            },
        );
        assert!(s.contains('…'), "{}", &s[..40]);
        assert_eq!(s.matches("-(").count(), MAX_DEPTH);
        // Dropping a 10,000-deep Box chain recursively is the test's own
        // risk, not the printer's: unwind it iteratively.
        while let CExpr::Neg(inner) = e {
            e = *inner;
        }
    }
}
