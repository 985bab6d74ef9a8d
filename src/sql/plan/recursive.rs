//! Recursive common table expressions (`WITH RECURSIVE`): the rules of
//! their planning.
//!
//! Owns splitting a recursive CTE's body into its non-recursive query
//! blocks (the seed, which fixes the column types) and its recursive ones,
//! MySQL 8's restrictions on the recursive blocks (3573–3577, 1235) and
//! the seed's column types. The planner ([`crate::sql::plan::bind`])
//! applies them; the node types are [`crate::sql::plan::Recursive`] and
//! [`crate::sql::plan::WorkTable`]. Never runs anything: the iteration
//! is [`crate::sql::exec::recursive`].

use sqlparser::ast::{self as ast, SetExpr};

use crate::error::{code, SqlError, SqlResult};
use crate::sql::expr::object_parts;
use crate::sql::expr::{CExpr, CastTo};
use crate::sql::plan::Node;
use crate::types::{ColumnKind, DataType, Value};

/// ER_CTE_RECURSIVE_REQUIRES_UNION.
pub(super) const REQUIRES_UNION: u16 = 3573;
/// ER_CTE_RECURSIVE_REQUIRES_NONRECURSIVE_FIRST.
pub(super) const REQUIRES_NONRECURSIVE_FIRST: u16 = 3574;
/// ER_CTE_RECURSIVE_FORBIDS_AGGREGATION.
pub(super) const FORBIDS_AGGREGATION: u16 = 3575;
/// ER_CTE_RECURSIVE_FORBIDDEN_JOIN_ORDER.
pub(super) const FORBIDDEN_JOIN_ORDER: u16 = 3576;
/// ER_CTE_RECURSIVE_REQUIRES_SINGLE_REFERENCE.
pub(super) const REQUIRES_SINGLE_REFERENCE: u16 = 3577;

/// Whether a query block (or a set operation) names the table `name`
/// (unqualified) anywhere: FROM, joins, derived tables, subqueries.
pub(super) fn references<V: ast::Visit>(node: &V, name: &str) -> usize {
    let mut n = 0;
    let _ = ast::visit_relations(node, |r| {
        if matches!(object_parts(r).as_slice(), [t] if t == name) {
            n += 1;
        }
        std::ops::ControlFlow::<()>::Continue(())
    });
    n
}

/// Whether a CTE's query reads the CTE itself (so is recursive).
pub fn is_recursive(q: &ast::Query, name: &str) -> bool {
    references(q, name) > 0
}

pub(super) fn err(code: u16, msg: String) -> SqlError {
    SqlError::new(code, msg)
}

/// Whether a FROM item is the CTE itself.
fn is_cte(f: &ast::TableFactor, name: &str) -> bool {
    matches!(f, ast::TableFactor::Table { name: n, args: None, .. }
        if matches!(object_parts(n).as_slice(), [t] if t == name))
}

/// References to the CTE directly in a FROM clause (not in derived tables
/// or subqueries); 3576 when one is the inner side of an outer join.
fn from_references(from: &[ast::TableWithJoins], name: &str) -> SqlResult<usize> {
    fn factor(f: &ast::TableFactor, name: &str) -> SqlResult<usize> {
        match f {
            ast::TableFactor::NestedJoin {
                table_with_joins, ..
            } => from_references(std::slice::from_ref(table_with_joins), name),
            f => Ok(usize::from(is_cte(f, name))),
        }
    }
    let forbidden = || {
        err(
            FORBIDDEN_JOIN_ORDER,
            format!(
                "In recursive query block of Recursive Common Table Expression '{name}', the recursive table must neither be in the right argument of a LEFT JOIN, nor be forced to be non-first with join order hints"
            ),
        )
    };
    let mut n = 0;
    for twj in from {
        let mut left = factor(&twj.relation, name)?;
        for j in &twj.joins {
            use ast::JoinOperator as J;
            let right = factor(&j.relation, name)?;
            match &j.join_operator {
                J::Left(_) | J::LeftOuter(_) if right > 0 => return Err(forbidden()),
                J::Right(_) | J::RightOuter(_) if left > 0 => return Err(forbidden()),
                J::StraightJoin(_) if right > 0 => return Err(forbidden()),
                _ => {}
            }
            left += right;
        }
        n += left;
    }
    Ok(n)
}

/// Check one recursive query block against MySQL 8's restrictions.
pub(super) fn check_step(block: &SetExpr, name: &str) -> SqlResult<()> {
    let order_limit = || {
        SqlError::new(
            code::NOT_SUPPORTED,
            "This version of Tributary doesn't yet support 'ORDER BY / LIMIT / SELECT DISTINCT in recursive query block of Common Table Expression'",
        )
    };
    let sel = match block {
        SetExpr::Select(s) => s,
        SetExpr::Query(q) => {
            if q.with.is_some() {
                return Err(SqlError::unsupported("WITH inside a recursive query block"));
            }
            if q.order_by.is_some() || q.limit_clause.is_some() {
                return Err(order_limit());
            }
            match q.body.as_ref() {
                SetExpr::Select(s) => s,
                other => return check_step(other, name),
            }
        }
        _ => return Err(SqlError::unsupported("this form of recursive query block")),
    };
    let total = references(sel.as_ref(), name);
    let direct = from_references(&sel.from, name)?;
    if total != 1 || direct != 1 {
        return Err(err(
            REQUIRES_SINGLE_REFERENCE,
            format!(
                "In recursive query block of Recursive Common Table Expression '{name}', the recursive table must be referenced only once, and not in any subquery"
            ),
        ));
    }
    let grouped = !matches!(&sel.group_by, ast::GroupByExpr::Expressions(e, m) if e.is_empty() && m.is_empty())
        || sel.having.is_some();
    let mut windowed = false;
    let _ = ast::visit_expressions(sel.as_ref(), |e| {
        if let ast::Expr::Function(f) = e {
            if f.over.is_some() {
                windowed = true;
            }
        }
        std::ops::ControlFlow::<()>::Continue(())
    });
    if grouped || windowed {
        return Err(aggregation(name));
    }
    if sel.distinct.is_some() {
        return Err(order_limit());
    }
    Ok(())
}

pub(super) fn aggregation(name: &str) -> SqlError {
    err(
        FORBIDS_AGGREGATION,
        format!(
            "Recursive Common Table Expression '{name}' can contain neither aggregation nor window functions in recursive query block"
        ),
    )
}

/// The operands of a chain of UNIONs, left to right, each with the
/// quantifier of the UNION before it (`None` for the first), and the
/// subtree that ends at each operand.
pub(super) fn flatten(body: &SetExpr) -> Vec<(&SetExpr, Option<bool>, &SetExpr)> {
    let mut rev = Vec::new();
    let mut at = body;
    loop {
        match at {
            SetExpr::SetOperation {
                op: ast::SetOperator::Union,
                set_quantifier,
                left,
                right,
            } => {
                let all = matches!(set_quantifier, ast::SetQuantifier::All);
                rev.push((right.as_ref(), Some(all), at));
                at = left;
            }
            other => {
                rev.push((other, None, other));
                break;
            }
        }
    }
    rev.reverse();
    rev
}

/// The type each seed column fixes, where it is known: numbers by their
/// kind; a string's length from a literal, `CAST(… AS CHAR(n))` or a
/// VARCHAR(n) column of the table the seed reads (other strings, dates
/// and vectors: `None`, values kept as produced).
pub(super) fn seed_types(seed: &Node) -> Vec<Option<DataType>> {
    let by_kind = |k: ColumnKind| match k {
        ColumnKind::Int => Some(DataType::BigInt),
        ColumnKind::Float => Some(DataType::Double),
        ColumnKind::Decimal { precision, scale } => Some(DataType::Decimal(precision, scale)),
        _ => None,
    };
    match seed {
        Node::Block(p) => p
            .projection
            .iter()
            .map(|(_, e, k)| match k {
                ColumnKind::Text => {
                    let len = match e {
                        CExpr::Lit(Value::Text(s)) => u32::try_from(s.chars().count()).ok(),
                        CExpr::Cast(_, CastTo::Text(n)) => *n,
                        CExpr::Col(i) if p.source.input.is_none() => p
                            .source
                            .table
                            .as_ref()
                            .and_then(|t| t.columns.get(*i))
                            .and_then(|c| match c.ty {
                                DataType::Varchar(n) => Some(n),
                                _ => None,
                            }),
                        _ => None,
                    };
                    len.map(DataType::Varchar)
                }
                k => by_kind(*k),
            })
            .collect(),
        other => other.columns().iter().map(|c| by_kind(c.kind)).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_query(sql: &str) -> ast::Query {
        let dialect = sqlparser::dialect::MySqlDialect {};
        let stmts = sqlparser::parser::Parser::parse_sql(&dialect, sql).unwrap_or_default();
        match stmts.into_iter().next() {
            Some(ast::Statement::Query(q)) => *q,
            _ => panic!("not a query: {sql}"),
        }
    }

    #[test]
    fn flatten_splits_a_union_chain_left_to_right() {
        let q = parse_query("SELECT 1 UNION SELECT 2 UNION ALL SELECT 3");
        let c = flatten(&q.body);
        let qs: Vec<Option<bool>> = c.iter().map(|(_, q, _)| *q).collect();
        assert_eq!(qs, vec![None, Some(false), Some(true)]);
        assert_eq!(c[2].0.to_string(), "SELECT 3");
    }

    #[test]
    fn references_count_subqueries_and_joins() {
        let q =
            parse_query("SELECT * FROM c JOIN t ON t.a = c.a WHERE EXISTS (SELECT 1 FROM c AS d)");
        assert_eq!(references(&q, "c"), 2);
        assert_eq!(references(&q, "t"), 1);
        assert_eq!(references(&q, "x"), 0);
    }

    #[test]
    fn an_outer_join_inner_side_is_refused() {
        let q = parse_query("SELECT * FROM t LEFT JOIN c ON t.a = c.a");
        let SetExpr::Select(s) = q.body.as_ref() else {
            panic!("select")
        };
        assert_eq!(
            from_references(&s.from, "c").map_err(|e| e.code),
            Err(FORBIDDEN_JOIN_ORDER)
        );
        let q = parse_query("SELECT * FROM c LEFT JOIN t ON t.a = c.a");
        let SetExpr::Select(s) = q.body.as_ref() else {
            panic!("select")
        };
        assert_eq!(from_references(&s.from, "c").map_err(|e| e.code), Ok(1));
    }
}
