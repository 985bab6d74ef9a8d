//! Recursive common table expressions (`WITH RECURSIVE`): the
//! recursive-union plan node and its planning.
//!
//! Owns splitting a recursive CTE's body into its non-recursive query
//! blocks (the seed, which fixes the column types) and its recursive ones,
//! MySQL 8's restrictions on the recursive blocks (3573–3577, 1235), the
//! recursive union's and the working-table leaf's plan types, and the
//! CTE's `LIMIT`. Never runs anything: the iteration is
//! [`crate::sql::exec::recursive`].

use std::sync::{Arc, Mutex};

use sqlparser::ast::{self as ast, SetExpr};

use super::bind::Cte;
use crate::error::{code, SqlError, SqlResult};
use crate::sql::expr::object_parts;
use crate::sql::expr::{CExpr, CastTo};
use crate::sql::plan::{Node, OutCol, Planner, Stats};
use crate::types::{ColumnKind, DataType, Value};

/// ER_CTE_RECURSIVE_REQUIRES_UNION.
const REQUIRES_UNION: u16 = 3573;
/// ER_CTE_RECURSIVE_REQUIRES_NONRECURSIVE_FIRST.
const REQUIRES_NONRECURSIVE_FIRST: u16 = 3574;
/// ER_CTE_RECURSIVE_FORBIDS_AGGREGATION.
const FORBIDS_AGGREGATION: u16 = 3575;
/// ER_CTE_RECURSIVE_FORBIDDEN_JOIN_ORDER.
const FORBIDDEN_JOIN_ORDER: u16 = 3576;
/// ER_CTE_RECURSIVE_REQUIRES_SINGLE_REFERENCE.
const REQUIRES_SINGLE_REFERENCE: u16 = 3577;

/// The rows of the previous round, shared by a [`Recursive`] node (which
/// fills it) and the [`WorkTable`] leaves of its recursive blocks.
type Cell = Arc<Mutex<Arc<Vec<Vec<Value>>>>>;

/// The leaf a recursive block reads its CTE through: the previous round's
/// rows.
#[derive(Clone)]
pub struct WorkTable {
    pub name: String,
    pub columns: Vec<OutCol>,
    pub colls: Vec<Option<crate::collation::Collation>>,
    pub(crate) rows: Cell,
}

impl WorkTable {
    /// The rows of the round being run.
    pub(crate) fn rows(&self) -> SqlResult<Vec<Vec<Value>>> {
        let g = self
            .rows
            .lock()
            .map_err(|_| SqlError::internal("recursive working table poisoned"))?;
        Ok(g.as_ref().clone())
    }
}

/// `seed UNION [ALL] recursive…`, iterated to a fixed point.
pub struct Recursive {
    pub name: String,
    pub all: bool,
    /// The non-recursive query blocks (one node: their set operation).
    pub seed: Node,
    /// The recursive query blocks, each reading `work`.
    pub steps: Vec<Node>,
    pub columns: Vec<OutCol>,
    pub colls: Vec<Option<crate::collation::Collation>>,
    /// The type the seed fixes for each column, where known: the
    /// recursive blocks' values are converted to it (a longer string is
    /// 1406 in strict mode, cut with warning 1265 otherwise).
    pub types: Vec<Option<DataType>>,
    /// `LIMIT count [OFFSET skip]` on the CTE's union (MySQL 8.0.19+):
    /// (skip, count); the rounds stop once `skip + count` rows exist.
    pub limit: Option<(usize, usize)>,
    pub(crate) work: Cell,
}

impl Recursive {
    /// EXPLAIN lines.
    pub fn explain(
        &self,
        pad: &str,
        note: &str,
        depth: usize,
        stats: Option<&Stats>,
        subs: &crate::sql::plan::Subqueries,
        out: &mut Vec<String>,
    ) {
        out.push(format!(
            "{pad}Recursive Union{} ({}){note}",
            if self.all { " All" } else { " (distinct)" },
            self.name
        ));
        self.seed.explain(depth + 1, stats, subs, out);
        for s in &self.steps {
            s.explain(depth + 1, stats, subs, out);
        }
    }
}

/// Whether a query block (or a set operation) names the table `name`
/// (unqualified) anywhere: FROM, joins, derived tables, subqueries.
fn references<V: ast::Visit>(node: &V, name: &str) -> usize {
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

fn err(code: u16, msg: String) -> SqlError {
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
fn check_step(block: &SetExpr, name: &str) -> SqlResult<()> {
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

fn aggregation(name: &str) -> SqlError {
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
fn flatten(body: &SetExpr) -> Vec<(&SetExpr, Option<bool>, &SetExpr)> {
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

impl Planner<'_, '_> {
    /// Plan a reference to the recursive CTE `cte` (whose query reads
    /// itself); `visible` are the CTEs its query may read besides itself.
    pub(super) fn plan_recursive(&mut self, cte: &Cte, visible: Vec<Cte>) -> SqlResult<Node> {
        let name = cte.name.clone();
        let q = &cte.query;
        if q.with.is_some() {
            return Err(SqlError::unsupported(
                "WITH inside a recursive common table expression",
            ));
        }
        if q.order_by.is_some() || !q.locks.is_empty() {
            return Err(SqlError::unsupported(
                "ORDER BY over UNION in recursive Common Table Expression",
            ));
        }
        let limit = self.cte_limit(q)?;
        let chain = flatten(&q.body);
        let recursive: Vec<bool> = chain
            .iter()
            .map(|(b, _, _)| references(*b, &name) > 0)
            .collect();
        if chain.len() < 2 {
            return Err(err(
                REQUIRES_UNION,
                format!("Recursive Common Table Expression '{name}' should contain a UNION"),
            ));
        }
        let first = recursive.iter().position(|&r| r).unwrap_or(0);
        if first == 0 || recursive[first..].iter().any(|&r| !r) {
            return Err(err(
                REQUIRES_NONRECURSIVE_FIRST,
                format!(
                    "Recursive Common Table Expression '{name}' should have one or more non-recursive query blocks followed by one or more recursive ones"
                ),
            ));
        }
        let quantifiers: Vec<bool> = chain[first..].iter().filter_map(|(_, q, _)| *q).collect();
        let all = quantifiers.iter().all(|&a| a);
        if !all && quantifiers.iter().any(|&a| a) {
            return Err(SqlError::unsupported(
                "UNION ALL and UNION DISTINCT mixed between recursive query blocks",
            ));
        }
        for (b, _, _) in &chain[first..] {
            check_step(b, &name)?;
        }
        // The seed: the non-recursive blocks, which see the earlier CTEs.
        let saved = std::mem::replace(&mut self.ctes, visible.clone());
        let seed = self.plan_set(chain[first - 1].2, None);
        self.ctes = saved;
        let seed = seed?;
        let seed_cols = seed.columns();
        if !cte.columns.is_empty() && cte.columns.len() != seed_cols.len() {
            return Err(SqlError::new(
                1353,
                "In definition of view, derived table or common table expression, SELECT list and column names list have different column counts",
            ));
        }
        let columns: Vec<OutCol> = seed_cols
            .iter()
            .enumerate()
            .map(|(i, c)| OutCol {
                name: cte
                    .columns
                    .get(i)
                    .cloned()
                    .unwrap_or_else(|| c.name.clone()),
                kind: c.kind,
            })
            .collect();
        let colls = super::out_collations(&seed);
        let cell: Cell = Arc::new(Mutex::new(Arc::new(Vec::new())));
        let work = WorkTable {
            name: name.clone(),
            columns: columns.clone(),
            colls: colls.clone(),
            rows: cell.clone(),
        };
        // The recursive blocks see the earlier CTEs and this one, as its
        // working table.
        let mut with_self = visible;
        with_self.push(Cte {
            work: Some(work),
            ..cte.clone()
        });
        let saved = std::mem::replace(&mut self.ctes, with_self);
        let mut steps = Vec::new();
        let mut failed = None;
        for (b, _, _) in &chain[first..] {
            match self.plan_step(b) {
                Ok(n) => steps.push(n),
                Err(e) => {
                    failed = Some(e);
                    break;
                }
            }
        }
        self.ctes = saved;
        if let Some(e) = failed {
            return Err(e);
        }
        for s in &steps {
            if s.width() != columns.len() {
                return Err(SqlError::new(
                    code::WRONG_NUMBER_OF_COLUMNS_IN_SELECT,
                    "The used SELECT statements have a different number of columns",
                ));
            }
            if matches!(s, Node::Block(p) if p.aggregate) {
                return Err(aggregation(&name));
            }
        }
        let types = seed_types(&seed);
        Ok(Node::Recursive(Box::new(Recursive {
            name,
            all,
            limit,
            types,
            seed,
            steps,
            columns,
            colls,
            work: cell,
        })))
    }

    /// The CTE's `LIMIT [OFFSET]`: constant non-negative integers.
    fn cte_limit(&mut self, q: &ast::Query) -> SqlResult<Option<(usize, usize)>> {
        let host = crate::sql::host::SessionHost::new(self.cx.session, self.cx.engine);
        let num = |e: &ast::Expr, what: &str| -> SqlResult<usize> {
            let scope = crate::sql::expr::Scope::default();
            let c = crate::sql::expr::Compiler::new(&scope, false).compile(e)?;
            match crate::sql::expr::eval_const(&c, &host)? {
                Value::Int(i) if i >= 0 => {
                    usize::try_from(i).map_err(|_| SqlError::parse(format!("{what} out of range")))
                }
                other => Err(SqlError::parse(format!(
                    "{what} must be a non-negative integer, got {other}"
                ))),
            }
        };
        Ok(match &q.limit_clause {
            None => None,
            Some(ast::LimitClause::LimitOffset {
                limit,
                offset,
                limit_by,
            }) => {
                if !limit_by.is_empty() {
                    return Err(SqlError::unsupported("LIMIT BY"));
                }
                let skip = match offset {
                    Some(o) => num(&o.value, "OFFSET")?,
                    None => 0,
                };
                match limit {
                    Some(l) => Some((skip, num(l, "LIMIT")?)),
                    None if skip == 0 => None,
                    None => Some((skip, usize::MAX)),
                }
            }
            Some(ast::LimitClause::OffsetCommaLimit { offset, limit }) => {
                Some((num(offset, "OFFSET")?, num(limit, "LIMIT")?))
            }
        })
    }

    fn plan_step(&mut self, b: &SetExpr) -> SqlResult<Node> {
        match b {
            SetExpr::Select(sel) => self.plan_set_block(sel, None),
            SetExpr::Query(q) => self.plan_query(q, None),
            _ => Err(SqlError::unsupported("this form of recursive query block")),
        }
    }
}

/// The type each seed column fixes, where it is known: numbers by their
/// kind; a string's length from a literal, `CAST(… AS CHAR(n))` or a
/// VARCHAR(n) column of the table the seed reads (other strings, dates
/// and vectors: `None`, values kept as produced).
fn seed_types(seed: &Node) -> Vec<Option<DataType>> {
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

/// The leaf node of a recursive block's reference to its CTE.
pub(super) fn work_node(cte: &Cte) -> Option<Node> {
    cte.work.clone().map(|w| Node::WorkTable(Box::new(w)))
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
