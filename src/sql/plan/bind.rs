//! Query planning: the SQL AST of a query → a tree of plan nodes.
//!
//! Owns name binding across query blocks (FROM items, joins, derived
//! tables, common table expressions, set operations, subqueries and their
//! correlation with enclosing queries) and the rewrite rules that run while
//! binding: predicate push-down into join inputs (a pushed conjunct also
//! picks the input's access path: primary-key point/range or a secondary
//! index range) and the choice between a hash join and a nested-loop join.
//! Never reads table rows, runs anything (execution depends on the plan,
//! never the reverse) or writes.
//!
//! The leaf of every tree is a query block ([`Plan`]) over a base
//! table, which keeps today's access paths and the ISCP-maintained vector
//! and full-text index paths; blocks may also read the output of another
//! node (a join, a derived table, a CTE or a UNION).

use sqlparser::ast::{self as ast, Query, SetExpr};

use super::block;
use super::recursive::{
    aggregation, check_step, err, flatten, references, seed_types, REQUIRES_NONRECURSIVE_FIRST,
    REQUIRES_UNION,
};
use super::rewrite::{place_on_condition, union_kind};
use super::{Join, JoinKind, Node, SetOp, SubPlan, Union};
use super::{OutCol, Plan, Recursive, Source, WorkTable};
use crate::catalog::{self, TableDef};
use crate::error::{code, SqlError, SqlResult};
use crate::sql::expr::{ident_name, object_parts, CExpr, Compiler, Scope, SubqueryRef};
use crate::sql::host::SessionHost;
use crate::sql::Ctx;
use crate::types::ColumnKind;
use crate::types::Value;
use std::sync::{Arc, Mutex};

/// A common table expression in scope.
#[derive(Clone)]
pub(super) struct Cte {
    pub(super) name: String,
    pub(super) query: Query,
    pub(super) columns: Vec<String>,
    /// Declared under `WITH RECURSIVE` (it may read itself).
    pub(super) recursive: bool,
    /// Set while its own recursive blocks are planned: a reference reads
    /// the previous round's rows.
    pub(super) work: Option<super::WorkTable>,
}

/// Binds queries to plans for one statement.
pub struct Planner<'c, 'a> {
    pub cx: &'c mut Ctx<'a>,
    pub(super) ctes: Vec<Cte>,
    /// Outer references collected for the subqueries being planned
    /// (innermost last).
    refs: Vec<Vec<usize>>,
    /// Nesting depth of query blocks, bounded like MySQL's.
    depth: usize,
    /// Views being expanded (to refuse a view that reads itself).
    views: Vec<String>,
    /// The statement's planned subqueries (expressions name them by id).
    subqueries: super::Subqueries,
}

/// Deepest nesting of queries (subqueries, derived tables, CTE uses).
const MAX_QUERY_DEPTH: usize = 63;

/// Most tables one FROM clause may join (MySQL's bound; 1116 beyond). A
/// join is planned and run as a tree as deep as its tables.
const MAX_JOIN_TABLES: usize = 61;

/// The tables a FROM clause joins (a parenthesised join counts its own).
fn join_tables(from: &[ast::TableWithJoins]) -> usize {
    fn factor(f: &ast::TableFactor) -> usize {
        match f {
            ast::TableFactor::NestedJoin {
                table_with_joins, ..
            } => join_tables(std::slice::from_ref(table_with_joins)),
            _ => 1,
        }
    }
    from.iter()
        .map(|t| factor(&t.relation) + t.joins.iter().map(|j| factor(&j.relation)).sum::<usize>())
        .sum()
}

impl<'c, 'a> Planner<'c, 'a> {
    /// A planner for one statement.
    pub fn new(cx: &'c mut Ctx<'a>) -> Self {
        Planner {
            cx,
            ctes: Vec::new(),
            refs: Vec::new(),
            depth: 0,
            views: Vec::new(),
            subqueries: Default::default(),
        }
    }

    /// The subqueries planned so far, which the plans' expressions name by
    /// id: what the executor runs them from.
    pub fn into_subqueries(self) -> super::Subqueries {
        self.subqueries
    }

    /// A planner for a view's body at CREATE VIEW: counted one query block
    /// deep, the SELECT that will read the view, so that a view that can
    /// be created can be read (1473 at creation otherwise).
    pub fn for_view_body(cx: &'c mut Ctx<'a>) -> Self {
        let mut p = Self::new(cx);
        p.depth = 1;
        p
    }

    /// Record outer references met while compiling expressions of the
    /// subquery being planned.
    pub fn note_refs(&mut self, refs: &[usize]) {
        if let Some(top) = self.refs.last_mut() {
            top.extend_from_slice(refs);
        }
    }

    /// Plan a whole query (a SELECT statement, a subquery or a derived
    /// table). `outer` is the scope of enclosing queries for correlated
    /// references.
    pub fn plan_query(&mut self, q: &Query, outer: Option<&Scope>) -> SqlResult<Node> {
        crate::sql::stack::descend(|| self.plan_query_guarded(q, outer))
    }

    /// A recursive CTE reference counts as one query block deep, as any
    /// CTE reference.
    fn plan_recursive_guarded(&mut self, cte: &Cte, visible: Vec<Cte>) -> SqlResult<Node> {
        self.one_level_deeper(|p| p.plan_recursive(cte, visible))
    }

    fn plan_query_guarded(&mut self, q: &Query, outer: Option<&Scope>) -> SqlResult<Node> {
        self.one_level_deeper(|p| p.plan_query_inner(q, outer))
    }

    /// Plan one query block deeper: 1473 past [`MAX_QUERY_DEPTH`]; the CTEs
    /// the block declares go out of scope with it.
    fn one_level_deeper(
        &mut self,
        plan: impl FnOnce(&mut Self) -> SqlResult<Node>,
    ) -> SqlResult<Node> {
        self.depth += 1;
        if self.depth > MAX_QUERY_DEPTH {
            self.depth -= 1;
            return Err(SqlError::new(
                1473,
                format!("Too high level of nesting for select (more than {MAX_QUERY_DEPTH})"),
            ));
        }
        let saved = self.ctes.len();
        let r = plan(self);
        self.ctes.truncate(saved);
        self.depth -= 1;
        r
    }

    fn plan_query_inner(&mut self, q: &Query, outer: Option<&Scope>) -> SqlResult<Node> {
        block::reject_query(q)?;
        if let Some(with) = &q.with {
            for cte in &with.cte_tables {
                if cte.materialized.is_some() || cte.from.is_some() {
                    return Err(SqlError::unsupported(
                        "this form of common table expression",
                    ));
                }
                let name = ident_name(&cte.alias.name);
                if self.ctes[..].iter().rev().any(|c| c.name == name)
                    && with
                        .cte_tables
                        .iter()
                        .filter(|c| ident_name(&c.alias.name) == name)
                        .count()
                        > 1
                {
                    return Err(SqlError::new(
                        code::NONUNIQ_TABLE,
                        format!("Not unique table/alias: '{name}'"),
                    ));
                }
                self.ctes.push(Cte {
                    name,
                    query: (*cte.query).clone(),
                    columns: cte
                        .alias
                        .columns
                        .iter()
                        .map(|c| ident_name(&c.name))
                        .collect(),
                    recursive: with.recursive,
                    work: None,
                });
            }
        }
        let has_tail = q.order_by.is_some() || q.limit_clause.is_some() || !q.locks.is_empty();
        match q.body.as_ref() {
            SetExpr::Select(sel) => {
                block::reject_select(sel)?;
                let source = self.plan_from(
                    &sel.from,
                    sel.selection.as_ref(),
                    outer,
                    !q.locks.is_empty(),
                )?;
                let plan = block::plan_block(self, q, Some(sel), source, outer)?;
                Ok(Node::Block(Box::new(plan)))
            }
            SetExpr::Query(inner) if !has_tail => self.plan_query(inner, outer),
            body @ (SetExpr::Query(_) | SetExpr::SetOperation { .. }) => {
                if !q.locks.is_empty() {
                    return Err(SqlError::unsupported("FOR UPDATE with UNION"));
                }
                let node = self.plan_set(body, outer)?;
                if !has_tail {
                    return Ok(node);
                }
                let source = source_of_node(node, "");
                let plan = block::plan_block(self, q, None, source, outer)?;
                Ok(Node::Block(Box::new(plan)))
            }
            SetExpr::Values(_) => Err(SqlError::unsupported("VALUES as a query")),
            _ => Err(SqlError::unsupported("this query form")),
        }
    }

    /// One SELECT of a set operation. Out of line: `plan_set` recurses once
    /// per operator of a long chain (tests/depth.rs), so its frame must not
    /// hold a block's plan.
    #[inline(never)]
    pub(super) fn plan_set_block(
        &mut self,
        sel: &ast::Select,
        outer: Option<&Scope>,
    ) -> SqlResult<Node> {
        block::reject_select(sel)?;
        let source = self.plan_from(&sel.from, sel.selection.as_ref(), outer, false)?;
        let empty = Query {
            with: None,
            body: Box::new(SetExpr::Select(Box::new(sel.clone()))),
            order_by: None,
            limit_clause: None,
            fetch: None,
            locks: Vec::new(),
            for_clause: None,
            settings: None,
            format_clause: None,
            pipe_operators: Vec::new(),
        };
        let plan = block::plan_block(self, &empty, Some(sel), source, outer)?;
        Ok(Node::Block(Box::new(plan)))
    }

    pub(super) fn plan_set(&mut self, body: &SetExpr, outer: Option<&Scope>) -> SqlResult<Node> {
        match body {
            SetExpr::Select(sel) => self.plan_set_block(sel, outer),
            SetExpr::Query(q) => self.plan_query(q, outer),
            SetExpr::SetOperation {
                op,
                set_quantifier,
                left,
                right,
            } => {
                let op = match op {
                    ast::SetOperator::Union => SetOp::Union,
                    ast::SetOperator::Intersect => SetOp::Intersect,
                    ast::SetOperator::Except => SetOp::Except,
                    other => return Err(SqlError::unsupported(format!("{other}"))),
                };
                let all = match set_quantifier {
                    ast::SetQuantifier::All if op == SetOp::Union => true,
                    ast::SetQuantifier::None | ast::SetQuantifier::Distinct => false,
                    other => {
                        return Err(SqlError::unsupported(format!(
                            "{} {other}",
                            format!("{op:?}").to_uppercase()
                        )))
                    }
                };
                // A chain of set operators nests one level per operator:
                // each operand goes through the stack guard.
                let l = crate::sql::stack::descend(|| self.plan_set(left, outer))?;
                let r = crate::sql::stack::descend(|| self.plan_set(right, outer))?;
                let (lc, rc) = (l.columns(), r.columns());
                if lc.len() != rc.len() {
                    return Err(SqlError::new(
                        code::WRONG_NUMBER_OF_COLUMNS_IN_SELECT,
                        "The used SELECT statements have a different number of columns",
                    ));
                }
                let columns = lc
                    .iter()
                    .zip(&rc)
                    .map(|(a, b)| (a.name.clone(), union_kind(a.kind, b.kind)))
                    .collect();
                Ok(Node::Union(Box::new(Union {
                    op,
                    left: l,
                    right: r,
                    all,
                    columns,
                })))
            }
            SetExpr::Values(_) => Err(SqlError::unsupported("VALUES as a query")),
            _ => Err(SqlError::unsupported("this query form")),
        }
    }

    /// Resolve a FROM clause: nothing, one base table (the block reads it
    /// directly), or a tree of joins / derived tables the block reads.
    fn plan_from(
        &mut self,
        from: &[ast::TableWithJoins],
        selection: Option<&ast::Expr>,
        outer: Option<&Scope>,
        for_update: bool,
    ) -> SqlResult<Source> {
        if join_tables(from) > MAX_JOIN_TABLES {
            return Err(SqlError::new(
                1116,
                format!("Too many tables; MySQL can only use {MAX_JOIN_TABLES} tables in a join"),
            ));
        }
        match from {
            [] => return Ok(Source::none()),
            // `FROM DUAL` (unquoted, alone): no table, as MySQL.
            [twj] if twj.joins.is_empty() && is_dual(&twj.relation) => return Ok(Source::none()),
            [twj] if twj.joins.is_empty() => {
                if let ast::TableFactor::Table {
                    name,
                    alias,
                    args: None,
                    ..
                } = &twj.relation
                {
                    block::reject_table_factor(&twj.relation)?;
                    let (db, tname) = self.table_name(name)?;
                    if db.is_none() && self.cte(&tname).is_some() {
                        // A CTE reference: planned below like a derived table.
                    } else {
                        let t = self.base_table(db, &tname)?;
                        if t.view.is_some() {
                            return self.plan_from_rel(&twj.relation, outer, for_update);
                        }
                        let alias = alias
                            .as_ref()
                            .map(|a| ident_name(&a.name))
                            .unwrap_or_else(|| tname.clone());
                        return Ok(Source::table(t, alias));
                    }
                }
            }
            _ => {}
        }
        let mut rels = Vec::with_capacity(from.len());
        for twj in from {
            let mut rel = self.plan_factor(&twj.relation, outer, for_update)?;
            for j in &twj.joins {
                let right = self.plan_factor(&j.relation, outer, for_update)?;
                rel = self.join(rel, right, &j.join_operator, outer)?;
            }
            rels.push(rel);
        }
        // Comma-separated items are inner joins: join them in the order the
        // cost model prefers; `*` still lists the columns in FROM order.
        let sizes: Vec<RelSize> = rels
            .iter()
            .map(|r| {
                let ints = r
                    .node
                    .columns()
                    .iter()
                    .map(|c| c.kind == ColumnKind::Int)
                    .collect();
                match &r.node {
                    Node::Block(p) if p.is_plain_scan() => match &p.source.table {
                        Some(t) => RelSize {
                            rows: self.cx.txn.approx_rows(t.id) as f64,
                            pk: (t.pk.len() == 1).then(|| t.pk[0]),
                            ints,
                        },
                        None => RelSize {
                            rows: UNKNOWN_ROWS,
                            pk: None,
                            ints,
                        },
                    },
                    _ => RelSize {
                        rows: UNKNOWN_ROWS,
                        pk: None,
                        ints,
                    },
                }
            })
            .collect();
        let order = join_order(&rels, selection, &sizes);
        let widths: Vec<usize> = rels.iter().map(|r| r.scope.cols.len()).collect();
        let mut offset = vec![0; rels.len()];
        let mut at = 0;
        for &i in &order {
            offset[i] = at;
            at += widths[i];
        }
        let mut star_pos = Vec::new();
        for (i, r) in rels.iter().enumerate() {
            star_pos.extend(r.star.iter().map(|&c| offset[i] + c));
        }
        let mut slots: Vec<Option<Rel>> = rels.into_iter().map(Some).collect();
        let mut acc: Option<Rel> = None;
        for &i in &order {
            let Some(rel) = slots[i].take() else {
                continue;
            };
            acc = Some(match acc {
                None => rel,
                Some(l) => self.join(
                    l,
                    rel,
                    &ast::JoinOperator::CrossJoin(ast::JoinConstraint::None),
                    outer,
                )?,
            });
        }
        let Some(mut rel) = acc else {
            return Ok(Source::none());
        };
        rel.star = star_pos;
        Ok(rel.into_source())
    }

    /// A FROM clause of one relation that is not a base table.
    fn plan_from_rel(
        &mut self,
        f: &ast::TableFactor,
        outer: Option<&Scope>,
        for_update: bool,
    ) -> SqlResult<Source> {
        Ok(self.plan_factor(f, outer, for_update)?.into_source())
    }

    /// A view, planned as a derived table in its own database.
    fn view(&mut self, t: &TableDef, alias: &str) -> SqlResult<Rel> {
        let Some(v) = &t.view else {
            return Err(SqlError::internal("not a view"));
        };
        let (stmt, depth) = crate::sql::parse::parse_measured(&v.query)?;
        crate::sql::parse::with_stack_for(depth, || self.view_planned(t, alias, stmt))
    }

    fn view_planned(
        &mut self,
        t: &TableDef,
        alias: &str,
        stmt: crate::sql::parse::Stmt,
    ) -> SqlResult<Rel> {
        let Some(v) = &t.view else {
            return Err(SqlError::internal("not a view"));
        };
        let crate::sql::parse::Stmt::Ast(a) = stmt else {
            return Err(SqlError::internal(format!(
                "view {} is not a query",
                t.qualified()
            )));
        };
        let ast::Statement::Query(q) = a.into_statement() else {
            return Err(SqlError::internal(format!(
                "view {} is not a query",
                t.qualified()
            )));
        };
        if self.views.iter().any(|x| x == &t.qualified()) {
            return Err(SqlError::new(
                1462,
                format!("`{}`.`{}` contains view recursion", t.db, t.name),
            ));
        }
        self.views.push(t.qualified());
        let saved_db = self.cx.session.db.replace(t.db.clone());
        let saved_ctes = std::mem::take(&mut self.ctes);
        let node = self.plan_query(&q, None);
        self.ctes = saved_ctes;
        self.cx.session.db = saved_db;
        self.views.pop();
        Rel::derived(node?, alias, &v.columns)
    }

    fn table_name(&self, name: &ast::ObjectName) -> SqlResult<(Option<String>, String)> {
        let parts = object_parts(name);
        match parts.as_slice() {
            [t] => Ok((None, t.clone())),
            [d, t] => Ok((Some(d.clone()), t.clone())),
            _ => Err(SqlError::parse(format!("bad table name {name}"))),
        }
    }

    fn cte(&self, name: &str) -> Option<Cte> {
        self.ctes.iter().rev().find(|c| c.name == name).cloned()
    }

    fn base_table(&mut self, db: Option<String>, tname: &str) -> SqlResult<TableDef> {
        let db = match db {
            Some(d) => d,
            None => self.cx.session.require_db()?.to_string(),
        };
        self.cx.session.table_locks.check(&db, tname, false)?;
        if catalog::get_database(self.cx.txn, &db)?.is_none() {
            return Err(SqlError::new(
                code::BAD_DB,
                format!("Unknown database '{db}'"),
            ));
        }
        catalog::require_table(self.cx.txn, &db, tname, false)
    }

    /// One FROM item as a relation.
    fn plan_factor(
        &mut self,
        f: &ast::TableFactor,
        outer: Option<&Scope>,
        for_update: bool,
    ) -> SqlResult<Rel> {
        block::reject_table_factor(f)?;
        match f {
            ast::TableFactor::Table {
                name,
                alias,
                args: Some(args),
                ..
            } => {
                // The one table function: generate_series (reject_table_factor
                // refused any other).
                let alias_name = alias
                    .as_ref()
                    .map(|a| ident_name(&a.name))
                    .unwrap_or_else(|| "generate_series".into());
                let host = crate::sql::host::SessionHost::new(self.cx.session, self.cx.engine);
                let scope = Scope::default();
                let mut vals = Vec::new();
                for a in &args.args {
                    let ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) = a else {
                        return Err(SqlError::unsupported(format!(
                            "generate_series argument {a}"
                        )));
                    };
                    let c = Compiler::new(&scope, false).compile(e)?;
                    if !c.is_constant() {
                        return Err(SqlError::unsupported(
                            "generate_series with arguments that are not constants",
                        ));
                    }
                    vals.push(crate::sql::expr::eval_const(&c, &host)?);
                }
                let values = super::series::plan(name, &vals)?;
                let kind = values.kind;
                let source = Source::values(&alias_name, &[("result", kind)], values);
                let node = Node::Block(Box::new(Plan::all_of(source, false)));
                Ok(Rel::of(node, &alias_name))
            }
            ast::TableFactor::Table { name, alias, .. } => {
                let (db, tname) = self.table_name(name)?;
                let alias_name = alias
                    .as_ref()
                    .map(|a| ident_name(&a.name))
                    .unwrap_or_else(|| tname.clone());
                if db.is_none() {
                    if let Some(cte) = self.cte(&tname) {
                        if let Some(node) = work_node(&cte) {
                            return Rel::derived(node, &alias_name, &[]);
                        }
                        // A CTE sees only the CTEs defined before it (a
                        // recursive one also itself).
                        let saved = std::mem::take(&mut self.ctes);
                        let pos = saved.iter().rposition(|c| c.name == tname).unwrap_or(0);
                        let visible = saved[..pos].to_vec();
                        if cte.recursive && super::recursive::is_recursive(&cte.query, &tname) {
                            self.ctes = saved;
                            let node = crate::sql::stack::descend(|| {
                                self.plan_recursive_guarded(&cte, visible)
                            })?;
                            return Rel::derived(node, &alias_name, &[]);
                        }
                        self.ctes = visible;
                        let node = self.plan_query(&cte.query, None);
                        self.ctes = saved;
                        let node = node?;
                        return Rel::derived(node, &alias_name, &cte.columns);
                    }
                }
                let t = self.base_table(db, &tname)?;
                if t.view.is_some() {
                    return self.view(&t, &alias_name);
                }
                let node = super::scan_node(t, &alias_name, for_update);
                Ok(Rel::of(node, &alias_name))
            }
            ast::TableFactor::Derived {
                lateral,
                subquery,
                alias,
                ..
            } => {
                if *lateral {
                    return Err(SqlError::unsupported("LATERAL derived tables"));
                }
                let Some(alias) = alias else {
                    return Err(SqlError::new(
                        code::DERIVED_MUST_HAVE_ALIAS,
                        "Every derived table must have its own alias",
                    ));
                };
                let name = ident_name(&alias.name);
                let cols: Vec<String> = alias.columns.iter().map(|c| ident_name(&c.name)).collect();
                let node = self.plan_query(subquery, None)?;
                Rel::derived(node, &name, &cols)
            }
            ast::TableFactor::NestedJoin {
                table_with_joins,
                alias,
            } => {
                if alias.is_some() {
                    return Err(SqlError::unsupported("an alias on a parenthesized join"));
                }
                let mut rel = self.plan_factor(&table_with_joins.relation, outer, for_update)?;
                for j in &table_with_joins.joins {
                    let right = self.plan_factor(&j.relation, outer, for_update)?;
                    rel = self.join(rel, right, &j.join_operator, outer)?;
                }
                Ok(rel)
            }
            _ => Err(SqlError::unsupported("this FROM item")),
        }
    }

    /// Join two relations.
    fn join(
        &mut self,
        left: Rel,
        right: Rel,
        op: &ast::JoinOperator,
        outer: Option<&Scope>,
    ) -> SqlResult<Rel> {
        use ast::JoinOperator as J;
        for (t, _) in &right.scope.cols {
            if !t.is_empty() && left.tables.iter().any(|l| l.eq_ignore_ascii_case(t)) {
                return Err(SqlError::new(
                    code::NONUNIQ_TABLE,
                    format!("Not unique table/alias: '{t}'"),
                ));
            }
        }
        let (kind, constraint) = match op {
            J::Join(c) | J::Inner(c) => (JoinKind::Inner, Some(c)),
            J::CrossJoin(c) => (JoinKind::Inner, Some(c)),
            J::StraightJoin(c) => (JoinKind::Inner, Some(c)),
            J::Left(c) | J::LeftOuter(c) => (JoinKind::Left, Some(c)),
            J::Right(c) | J::RightOuter(c) => (JoinKind::Right, Some(c)),
            J::FullOuter(_) => return Err(SqlError::unsupported("FULL OUTER JOIN")),
            other => {
                return Err(SqlError::unsupported(
                    format!("join {other:?}")
                        .chars()
                        .take(40)
                        .collect::<String>(),
                ))
            }
        };
        let (lw, rw) = (left.scope.cols.len(), right.scope.cols.len());
        let mut scope = left.scope.clone();
        scope.extend(&right.scope);
        scope
            .hidden
            .extend(right.scope.hidden.iter().map(|i| i + lw));
        let mut tables = left.tables.clone();
        tables.extend(right.tables.iter().cloned());
        let mut star: Vec<usize> = left.star.clone();
        star.extend(right.star.iter().map(|i| i + lw));
        let mut conds: Vec<CExpr> = Vec::new();
        match constraint {
            None | Some(ast::JoinConstraint::None) => {
                if kind != JoinKind::Inner {
                    return Err(SqlError::parse("an outer join needs ON or USING"));
                }
            }
            Some(ast::JoinConstraint::On(e)) => {
                let mut comp = Compiler::new(&scope, false);
                comp.outer = outer;
                comp.sub = Some(self);
                let c = comp.compile(e).map_err(|e| e.in_clause("on clause"))?;
                let refs = std::mem::take(&mut comp.outer_refs);
                drop(comp);
                self.note_refs(&refs);
                conds.extend(c.conjuncts().into_iter().cloned());
            }
            Some(ast::JoinConstraint::Using(cols)) => {
                // The USING columns appear once in `*`, first, taken from the
                // side that is never NULL-extended.
                let mut firsts = Vec::new();
                let mut hidden = Vec::new();
                for c in cols {
                    let name = object_parts(c).last().cloned().unwrap_or_default();
                    let li = resolve_in(&left.scope, &name, "from clause")?;
                    let ri = resolve_in(&right.scope, &name, "from clause")?;
                    let eq = CExpr::Bin(
                        crate::sql::expr::BinOp::Eq,
                        Box::new(CExpr::Col(li)),
                        Box::new(CExpr::Col(lw + ri)),
                    );
                    // Compared under the columns' collation, as ON would.
                    let env = crate::sql::expr::collate::Env {
                        scope: &scope,
                        outer: None,
                        aggs: &[],
                    };
                    conds.push(crate::sql::expr::collate::resolve(eq, &env)?);
                    let (keep, drop_) = if kind == JoinKind::Right {
                        (lw + ri, li)
                    } else {
                        (li, lw + ri)
                    };
                    firsts.push(keep);
                    hidden.push(keep);
                    hidden.push(drop_);
                    scope.hidden.push(drop_);
                }
                star.retain(|i| !hidden.contains(i));
                firsts.extend(star);
                star = firsts;
            }
            Some(ast::JoinConstraint::Natural) => {
                return Err(SqlError::unsupported("NATURAL JOIN"))
            }
            Some(ast::JoinConstraint::UsingAlias(..)) => {
                return Err(SqlError::unsupported("JOIN … USING … AS"))
            }
        }
        let mut j = Join {
            kind,
            left: left.node,
            right: right.node,
            left_width: lw,
            right_width: rw,
            keys: Vec::new(),
            residual: Vec::new(),
        };
        let host = SessionHost::new(self.cx.session, self.cx.engine);
        for c in conds {
            place_on_condition(&mut j, c, &host);
        }
        Ok(Rel {
            node: Node::Join(Box::new(j)),
            scope,
            star,
            tables,
        })
    }
}

impl<'a> block::BlockBinder<'a> for Planner<'_, 'a> {
    fn ctx(&mut self) -> &mut Ctx<'a> {
        self.cx
    }

    fn note_refs(&mut self, refs: &[usize]) {
        Planner::note_refs(self, refs);
    }
}

impl crate::sql::expr::SubqueryPlanner for Planner<'_, '_> {
    fn plan_subquery(&mut self, q: &Query, outer: &Scope) -> SqlResult<SubqueryRef> {
        self.refs.push(Vec::new());
        let node = self.plan_query(q, Some(outer));
        let mut refs = self.refs.pop().unwrap_or_default();
        let node = node?;
        refs.sort_unstable();
        refs.dedup();
        let width = node.width();
        let kind = node.columns().first().map_or(ColumnKind::Text, |c| c.kind);
        let collation = super::out_collations(&node).first().copied().flatten();
        let memo = repeatable(q);
        let id = self.subqueries.add(SubPlan { node, memo });
        Ok(SubqueryRef {
            id,
            refs,
            width,
            kind,
            collation,
        })
    }
}

/// Whether a subquery gives the same answer for the same outer values
/// within one statement: no call of a volatile function (UUID(), SLEEP(),
/// NOW() read per call, …) and no user-variable assignment.
fn repeatable(q: &Query) -> bool {
    let mut ok = true;
    let _ = ast::visit_expressions(q, |e| {
        match e {
            ast::Expr::Function(f) => {
                let name = f.name.to_string().to_ascii_lowercase();
                if crate::sql::functions::is_volatile(&name) {
                    ok = false;
                }
            }
            ast::Expr::BinaryOp { op, .. } if op.to_string() == ":=" => ok = false,
            _ => {}
        }
        std::ops::ControlFlow::<()>::Continue(())
    });
    // `@v := x` in a select list parses as an assignment item.
    ok && !q.to_string().contains(":=")
}

/// Whether a FROM item is MySQL's `DUAL`: the unquoted, unqualified name
/// without an alias (a quoted `` `dual` `` is a table of that name).
fn is_dual(f: &ast::TableFactor) -> bool {
    match f {
        ast::TableFactor::Table {
            name,
            alias: None,
            args: None,
            ..
        } => matches!(name.0.as_slice(), [part] if part
            .as_ident()
            .is_some_and(|i| i.quote_style.is_none() && i.value.eq_ignore_ascii_case("dual"))),
        _ => false,
    }
}

fn resolve_in(scope: &Scope, name: &str, clause: &str) -> SqlResult<usize> {
    scope.resolve(None, name).map_err(|e| {
        if e.code == code::BAD_FIELD {
            SqlError::new(
                code::BAD_FIELD,
                format!("Unknown column '{name}' in '{clause}'"),
            )
        } else {
            e
        }
    })
}

/// Which FROM item a column reference in WHERE names, if exactly one.
/// The FROM item and column position a column reference names, if it
/// names exactly one.
fn rel_col(rels: &[Rel], e: &ast::Expr) -> Option<(usize, usize)> {
    let (q, c) = match e {
        ast::Expr::Identifier(i) => (None, ident_name(i)),
        ast::Expr::CompoundIdentifier(p) if p.len() == 2 => {
            (Some(ident_name(&p[0])), ident_name(&p[1]))
        }
        ast::Expr::Nested(x) => return rel_col(rels, x),
        _ => return None,
    };
    let mut found = None;
    for (i, r) in rels.iter().enumerate() {
        if let Ok(pos) = r.scope.resolve(q.as_deref(), &c) {
            if found.is_some() {
                return None;
            }
            found = Some((i, pos));
        }
    }
    found
}

/// What the join order knows of one FROM item: its estimated row count
/// (a base table's key count, else a guess) and, for a base table, its
/// single-column primary key.
pub struct RelSize {
    pub rows: f64,
    pub pk: Option<usize>,
    /// Which of its columns are integers (equalities among integers are
    /// transitive: [`crate::sql::plan::rewrite::implied_equalities`]).
    pub ints: Vec<bool>,
}

/// Rows assumed for a FROM item that is not a base table.
const UNKNOWN_ROWS: f64 = 1000.0;

/// The order to join comma-separated FROM items in (inner joins, so any
/// order gives the same rows), by a small cost model: each item's rows
/// (a base table's key count) times the selectivity of WHERE's comparisons
/// of its columns with constants (`=` 1/10, or one row on a one-column
/// primary key; a range 1/3; BETWEEN 1/4; LIKE 1/4); a join's rows are
/// the product of its inputs divided, for each equality joining them, by
/// the distinct values guessed for it (a one-column primary key's table
/// size, also for columns equal to one through other equalities; else a
/// tenth of the larger table). From every starting item, items are added
/// greedily by the smallest next result among those joined to the taken
/// ones by an equality (else the next in FROM order); the order with the
/// smallest sum of intermediate results wins (ties: the earlier start).
/// Up to [`EXHAUSTIVE_JOIN_ITEMS`] items, every order that joins each
/// next item by an equality is costed too, and a strictly cheaper one
/// wins. Without any equality between items: FROM order.
fn join_order(rels: &[Rel], selection: Option<&ast::Expr>, sizes: &[RelSize]) -> Vec<usize> {
    let n = rels.len();
    let mut card: Vec<f64> = sizes.iter().map(|s| s.rows.max(1.0)).collect();
    // Equalities between items: ((rel, col), (rel, col)).
    let mut edges: Vec<((usize, usize), (usize, usize))> = Vec::new();
    let mut stack: Vec<&ast::Expr> = selection.into_iter().collect();
    let is_const = |e: &ast::Expr| matches!(e, ast::Expr::Value(_) | ast::Expr::TypedString { .. });
    while let Some(e) = stack.pop() {
        match e {
            ast::Expr::BinaryOp {
                left,
                op: ast::BinaryOperator::And,
                right,
            } => {
                stack.push(left);
                stack.push(right);
            }
            ast::Expr::Nested(x) => stack.push(x),
            ast::Expr::BinaryOp { left, op, right } => {
                let (l, r) = (rel_col(rels, left), rel_col(rels, right));
                let sel = |(rel, col): (usize, usize)| match op {
                    ast::BinaryOperator::Eq if sizes[rel].pk == Some(col) => 1.0 / card[rel],
                    ast::BinaryOperator::Eq => 0.1,
                    ast::BinaryOperator::Lt
                    | ast::BinaryOperator::LtEq
                    | ast::BinaryOperator::Gt
                    | ast::BinaryOperator::GtEq => 1.0 / 3.0,
                    _ => 1.0,
                };
                match (l, r) {
                    (Some(a), Some(b)) if a.0 != b.0 && *op == ast::BinaryOperator::Eq => {
                        edges.push((a, b))
                    }
                    (Some(a), None) if is_const(right) => card[a.0] *= sel(a),
                    (None, Some(b)) if is_const(left) => card[b.0] *= sel(b),
                    _ => {}
                }
            }
            ast::Expr::Between {
                expr, low, high, ..
            } if is_const(low) && is_const(high) => {
                if let Some((rel, _)) = rel_col(rels, expr) {
                    card[rel] *= 0.25;
                }
            }
            ast::Expr::Like { expr, pattern, .. } if is_const(pattern) => {
                if let Some((rel, _)) = rel_col(rels, expr) {
                    card[rel] *= 0.25;
                }
            }
            _ => {}
        }
    }
    if edges.is_empty() {
        return (0..n).collect();
    }
    for c in card.iter_mut() {
        *c = c.max(1.0);
    }
    // Distinct values of each equality: columns equal through equalities
    // share a one-column primary key's table size when one of them is one.
    let mut class: std::collections::HashMap<(usize, usize), (usize, usize)> =
        std::collections::HashMap::new();
    fn root(
        class: &mut std::collections::HashMap<(usize, usize), (usize, usize)>,
        x: (usize, usize),
    ) -> (usize, usize) {
        let mut r = x;
        while let Some(&p) = class.get(&r) {
            if p == r {
                break;
            }
            r = p;
        }
        r
    }
    for &(a, b) in &edges {
        let (ra, rb) = (root(&mut class, a), root(&mut class, b));
        if ra != rb {
            class.insert(ra, rb);
        }
    }
    let key_rows =
        |(rel, col): (usize, usize)| (sizes[rel].pk == Some(col)).then(|| sizes[rel].rows.max(1.0));
    let mut class_key: std::collections::HashMap<(usize, usize), f64> =
        std::collections::HashMap::new();
    for &(a, b) in &edges {
        for x in [a, b] {
            if let Some(k) = key_rows(x) {
                let r = root(&mut class, x);
                let e = class_key.entry(r).or_insert(k);
                *e = e.min(k);
            }
        }
    }
    let distinct: Vec<f64> = edges
        .iter()
        .map(|&(a, b)| {
            let r = root(&mut class, a);
            key_rows(a)
                .or(key_rows(b))
                .or(class_key.get(&r).copied())
                .unwrap_or_else(|| (sizes[a.0].rows.max(sizes[b.0].rows) / 10.0).max(1.0))
        })
        .collect();
    // Classes of integer columns only: their equalities are transitive
    // (the block pushes the implied ones into the join tree), so an item
    // with a column in such a class joins every item with another one.
    let int_col = |(rel, col): (usize, usize)| sizes[rel].ints.get(col).copied() == Some(true);
    let mut members: std::collections::BTreeMap<(usize, usize), Vec<(usize, usize)>> =
        std::collections::BTreeMap::new();
    let mut all_int: std::collections::HashMap<(usize, usize), bool> =
        std::collections::HashMap::new();
    let mut class_distinct: std::collections::HashMap<(usize, usize), f64> =
        std::collections::HashMap::new();
    for (e, &(a, b)) in edges.iter().enumerate() {
        let r = root(&mut class, a);
        for x in [a, b] {
            *all_int.entry(r).or_insert(true) &= int_col(x);
            let m = members.entry(r).or_default();
            if !m.contains(&x) {
                m.push(x);
            }
        }
        let d = class_distinct.entry(r).or_insert(distinct[e]);
        *d = d.min(distinct[e]);
    }
    members.retain(|r, m| m.len() > 2 && all_int.get(r) == Some(&true));
    let edge_root: Vec<(usize, usize)> = edges.iter().map(|&(a, _)| root(&mut class, a)).collect();
    // The estimated rows of joining item `x` to the items `taken` whose
    // join has `size` rows, and whether an equality joins them.
    let step = |taken: &[bool], size: f64, x: usize| -> (f64, bool) {
        let mut est = size * card[x];
        let mut joined = false;
        // Equalities of one class select once (x.k = a.k AND x.k = b.k
        // where a.k = b.k already holds), by the most distinct values any
        // of them has.
        let mut classes: Vec<((usize, usize), f64)> = Vec::new();
        for (e, &(a, b)) in edges.iter().enumerate() {
            if (a.0 == x && taken[b.0]) || (b.0 == x && taken[a.0]) {
                let r = edge_root[e];
                match classes.iter_mut().find(|(c, _)| *c == r) {
                    Some((_, d)) => *d = d.max(distinct[e]),
                    None => classes.push((r, distinct[e])),
                }
                joined = true;
            }
        }
        for (_, d) in &classes {
            est /= d;
        }
        // Joined only through an implied equality of its class.
        for (r, m) in &members {
            if !classes.iter().any(|(c, _)| c == r)
                && m.iter().any(|c| c.0 == x)
                && m.iter().any(|c| c.0 != x && taken[c.0])
            {
                est /= class_distinct.get(r).copied().unwrap_or(1.0);
                joined = true;
            }
        }
        (est.max(1.0), joined)
    };
    let mut best: Option<(f64, Vec<usize>)> = None;
    for start in 0..n {
        let mut taken = vec![false; n];
        taken[start] = true;
        let mut order = vec![start];
        let mut size = card[start];
        let mut cost = size;
        while order.len() < n {
            let mut pick: Option<(f64, usize)> = None;
            for x in (0..n).filter(|&x| !taken[x]) {
                let (est, joined) = step(&taken, size, x);
                if joined && pick.is_none_or(|(p, _)| est < p) {
                    pick = Some((est, x));
                }
            }
            let (est, x) = pick.unwrap_or_else(|| {
                let x = (0..n).find(|&x| !taken[x]).unwrap_or(0);
                (size * card[x], x)
            });
            taken[x] = true;
            order.push(x);
            size = est;
            cost += est;
        }
        if best.as_ref().is_none_or(|(c, _)| cost < *c) {
            best = Some((cost, order));
        }
    }
    // The greedy choice can miss: from a small start it may take a small
    // item whose join with the next one is many-to-many (Q5: region,
    // nation, then supplier before customer). For a few items, every
    // order joined by equalities is costed (depth first, a partial order
    // dropped once it costs more than the best found); a cheaper one
    // replaces the greedy one (decision 031).
    if let Some((greedy, _)) = &best {
        if n <= EXHAUSTIVE_JOIN_ITEMS {
            let mut search = Search {
                n,
                card: &card,
                step: &step,
                best: *greedy,
                found: None,
                visits: 0,
            };
            let mut taken = vec![false; n];
            let mut order = Vec::with_capacity(n);
            for start in 0..n {
                taken[start] = true;
                order.push(start);
                search.extend(&mut taken, &mut order, card[start], card[start]);
                order.pop();
                taken[start] = false;
            }
            if let Some(found) = search.found {
                best = Some((search.best, found));
            }
        }
    }
    best.map(|(_, o)| o).unwrap_or_else(|| (0..n).collect())
}

/// FROM items up to which every join order is costed ([`join_order`]).
const EXHAUSTIVE_JOIN_ITEMS: usize = 8;

/// Partial orders [`join_order`]'s search extends at most.
const EXHAUSTIVE_JOIN_VISITS: usize = 200_000;

/// One step of a join order's costing: given the items taken, the rows
/// so far and the next item, the rows after joining it and whether an
/// equality joins it.
type JoinStep<'s> = dyn Fn(&[bool], f64, usize) -> (f64, bool) + 's;

/// The exhaustive search of [`join_order`]: the cheapest order so far
/// (when cheaper than the greedy one) and its cost.
struct Search<'s> {
    n: usize,
    card: &'s [f64],
    step: &'s JoinStep<'s>,
    best: f64,
    found: Option<Vec<usize>>,
    visits: usize,
}

impl Search<'_> {
    /// Extend `order` (the items `taken`, whose join has `size` rows and
    /// cost `cost` so far) by every item joined to it by an equality
    /// (else by the first item not taken), keeping the cheapest complete
    /// order.
    fn extend(&mut self, taken: &mut [bool], order: &mut Vec<usize>, size: f64, cost: f64) {
        self.visits += 1;
        if cost >= self.best || self.visits > EXHAUSTIVE_JOIN_VISITS {
            return;
        }
        if order.len() == self.n {
            // Strictly cheaper than the greedy order (relative slack: the
            // same order costed again must not count as better).
            if cost < self.best * (1.0 - 1e-9) {
                self.best = cost;
                self.found = Some(order.clone());
            }
            return;
        }
        let next: Vec<(usize, f64)> = (0..self.n)
            .filter(|&x| !taken[x])
            .filter_map(|x| {
                let (est, joined) = (self.step)(taken, size, x);
                joined.then_some((x, est))
            })
            .collect();
        let next = if next.is_empty() {
            let Some(x) = (0..self.n).find(|&x| !taken[x]) else {
                return;
            };
            vec![(x, size * self.card[x])]
        } else {
            next
        };
        for (x, est) in next {
            taken[x] = true;
            order.push(x);
            self.extend(taken, order, est, cost + est);
            order.pop();
            taken[x] = false;
        }
    }
}

/// A FROM relation under construction.
struct Rel {
    node: Node,
    scope: Scope,
    /// Column positions `*` expands to, in order.
    star: Vec<usize>,
    /// Table names / aliases it binds (for 1066).
    tables: Vec<String>,
}

impl Rel {
    /// The block source that reads this relation, under its own names.
    fn into_source(self) -> Source {
        let mut src = source_of_node(self.node, "");
        src.scope = self.scope;
        src.star = self.star;
        src
    }

    fn of(node: Node, alias: &str) -> Rel {
        let cols = node.columns();
        // The columns keep their collations (a table's, a derived table's).
        let colls = super::out_collations(&node)
            .into_iter()
            .map(Option::unwrap_or_default)
            .collect();
        Rel {
            star: (0..cols.len()).collect(),
            scope: Scope {
                cols: cols
                    .into_iter()
                    .map(|c| (alias.to_string(), c.name))
                    .collect(),
                hidden: Vec::new(),
                colls,
            },
            node,
            tables: vec![alias.to_string()],
        }
    }

    fn derived(node: Node, alias: &str, names: &[String]) -> SqlResult<Rel> {
        let width = node.width();
        if !names.is_empty() && names.len() != width {
            return Err(SqlError::new(
                1353,
                "In definition of view, derived table or common table expression, SELECT list and column names list have different column counts",
            ));
        }
        let mut rel = Rel::of(node, alias);
        for (i, n) in names.iter().enumerate() {
            rel.scope.cols[i].1 = n.clone();
        }
        let mut seen = std::collections::HashSet::new();
        for (_, c) in &rel.scope.cols {
            if !seen.insert(c.to_ascii_lowercase()) {
                return Err(SqlError::new(1060, format!("Duplicate column name '{c}'")));
            }
        }
        Ok(rel)
    }
}

/// A block source that reads a node's output.
pub fn source_of_node(node: Node, alias: &str) -> Source {
    let cols = node.columns().into_iter().map(|c| (c.name, c.kind));
    Source {
        input: Some(Box::new(node)),
        ..Source::computed(alias, cols)
    }
}

/// Recursive common table expressions: planning a reference (the
/// restrictions and the split into seed and recursive blocks are
/// [`super::recursive`]'s).
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
        let cell: super::Cell = Arc::new(Mutex::new(Arc::new(Vec::new())));
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

/// The leaf node of a recursive block's reference to its CTE.
pub(super) fn work_node(cte: &Cte) -> Option<Node> {
    cte.work.clone().map(|w| Node::WorkTable(Box::new(w)))
}
