//! EXPLAIN: the lines a plan prints, one per operator, indented by depth;
//! with EXPLAIN ANALYZE's statistics each line ends with what its node did
//! (rows, loops, time).
//!
//! Owns only the rendering. Never runs or changes a plan.

use crate::catalog::{self, SYSTEM_DB};
use crate::sql::access;
use crate::sql::expr::{CExpr, NoHost};
use crate::sql::plan::{
    correlated_filter, lookup_key, prefilter_access, JoinKind, Node, Plan, Recursive, SetOp, Stage,
    Stats, Subqueries, LOOKUP_JOIN_MAX_KEYS, PREFILTER_ROWS,
};
use crate::types::Value;

impl Node {
    /// EXPLAIN lines, indented by depth; with `stats` (EXPLAIN ANALYZE)
    /// each node's line ends with what it did.
    pub fn explain(
        &self,
        depth: usize,
        stats: Option<&Stats>,
        subs: &Subqueries,
        out: &mut Vec<String>,
    ) {
        let pad = "  ".repeat(depth);
        let note = stats
            .map(|s| {
                let st = s
                    .get(&(self as *const Node as usize, Stage::Node))
                    .copied()
                    .unwrap_or_default();
                format!(
                    " (actual rows={} loops={} time={:.3} ms)",
                    st.rows,
                    st.loops,
                    st.time.as_secs_f64() * 1e3
                )
            })
            .unwrap_or_default();
        match self {
            Node::Block(p) => explain_block(p, depth, stats, subs, &note, out),
            Node::Join(j) => {
                let kind = match j.kind {
                    JoinKind::Inner => "inner",
                    JoinKind::Left => "left outer",
                    JoinKind::Right => "right outer",
                };
                if j.keys.is_empty() {
                    out.push(format!(
                        "{pad}Nested Loop Join ({kind}{}){note}",
                        if j.residual.is_empty() {
                            ", no condition".to_string()
                        } else {
                            format!(", {} condition(s)", j.residual.len())
                        }
                    ));
                } else {
                    out.push(format!(
                        "{pad}Hash Join ({kind}, {} key(s){}{}){note}",
                        j.keys.len(),
                        if j.residual.is_empty() {
                            String::new()
                        } else {
                            format!(", {} residual condition(s)", j.residual.len())
                        },
                        if lookup_key(j).is_some() {
                            format!(
                                "; right side by primary key (prefix) when the left has at most {} keys (or an eighth of its rows)",
                                LOOKUP_JOIN_MAX_KEYS
                            )
                        } else {
                            String::new()
                        }
                    ));
                }
                for c in &j.residual {
                    explain_subqueries(c, depth + 1, stats, subs, out);
                }
                j.left.explain(depth + 1, stats, subs, out);
                j.right.explain(depth + 1, stats, subs, out);
            }
            Node::Union(u) => {
                let op = match u.op {
                    SetOp::Union => "Union",
                    SetOp::Intersect => "Intersect",
                    SetOp::Except => "Except",
                };
                out.push(format!(
                    "{pad}{op}{}{note}",
                    if u.all { " All" } else { " (distinct)" }
                ));
                u.left.explain(depth + 1, stats, subs, out);
                u.right.explain(depth + 1, stats, subs, out);
            }
            Node::Recursive(r) => r.explain(&pad, &note, depth, stats, subs, out),
            Node::WorkTable(w) => {
                out.push(format!(
                    "{pad}Scan of recursive working table {}{note}",
                    w.name
                ));
            }
        }
    }
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

/// EXPLAIN lines for the subqueries inside an expression.
pub fn explain_subqueries(
    e: &CExpr,
    depth: usize,
    stats: Option<&Stats>,
    subs: &Subqueries,
    out: &mut Vec<String>,
) {
    e.walk(&mut |x| {
        let sp = match x {
            CExpr::Scalar(sp) | CExpr::Exists(sp, _) | CExpr::InSub(_, sp, _) => sp,
            _ => return,
        };
        let what = match x {
            CExpr::Scalar(_) => "Scalar Subquery",
            CExpr::Exists(..) => "Exists Subquery",
            _ => "In Subquery",
        };
        out.push(format!(
            "{}{what} ({})",
            "  ".repeat(depth),
            if sp.refs.is_empty() {
                "run once"
            } else {
                "correlated: run per row"
            }
        ));
        match subs.get(sp.id) {
            Ok(p) => p.node.explain(depth + 1, stats, subs, out),
            Err(e) => out.push(format!("{}{}", "  ".repeat(depth + 1), e.message)),
        }
    });
}

/// EXPLAIN lines of one block, its source indented below it.
pub fn explain_block(
    plan: &Plan,
    depth: usize,
    stats: Option<&super::Stats>,
    subs: &super::Subqueries,
    note: &str,
    lines: &mut Vec<String>,
) {
    let mut d = depth;
    let mut first = true;
    let mut push = |s: String, lines: &mut Vec<String>| {
        let n = if std::mem::take(&mut first) { note } else { "" };
        lines.push(format!("{}{s}{n}", "  ".repeat(d)));
        d += 1;
    };
    let mut exprs: Vec<&CExpr> = plan.projection.iter().map(|(_, e, _)| e).collect();
    exprs.extend(plan.filter.iter());
    exprs.extend(plan.having.iter());
    exprs.extend(plan.group_by.iter());
    exprs.extend(plan.order_by.iter().map(|(e, _)| e));
    let mut sub_lines = Vec::new();
    for e in exprs {
        explain_subqueries(e, depth + 1, stats, subs, &mut sub_lines);
    }
    if !plan.is_plain_scan() || depth == 0 {
        push(
            format!(
                "Project ({} column{})",
                plan.projection.len(),
                if plan.projection.len() == 1 { "" } else { "s" }
            ),
            lines,
        );
    }
    match (plan.limit, plan.order_by.is_empty()) {
        (Some(l), false) => push(
            format!(
                "Top-K (sort, keep rows {}..{} of the order)",
                plan.offset,
                plan.offset.saturating_add(l)
            ),
            lines,
        ),
        (Some(l), true) => push(format!("Limit {l} offset {}", plan.offset), lines),
        (None, false) => push("Sort".into(), lines),
        (None, true) => {}
    }
    if plan.distinct {
        push("Distinct".into(), lines);
    }
    for w in plan.aggs.iter().filter_map(|a| a.window.as_deref()) {
        push(format!("Window ({})", w.text), lines);
    }
    if plan.aggregate {
        push(
            format!("Aggregate ({} group key(s))", plan.group_by.len()),
            lines,
        );
    }
    if plan.filter.is_some() {
        push("Filter (exact re-check of WHERE)".into(), lines);
    }
    match (&plan.source.table, &plan.index_path, &plan.source.input) {
        (_, _, Some(node)) => node.explain(d, stats, subs, lines),
        (None, _, None) => match &plan.source.values {
            Some(v) => push(format!("{} ({} rows)", v.label, v.count), lines),
            None => push("Values (1 row)".into(), lines),
        },
        (Some(td), Some(ip), None) => {
            push(ip.describe(td), lines);
            // How a filtered vector search may be answered instead (at the
            // Vector line's depth: alternatives, not inputs).
            let mut alts = Vec::new();
            if let Some((_, access)) = prefilter_access(plan) {
                alts.push(format!(
                    "or, when it yields at most {PREFILTER_ROWS} rows: {} (ranked exactly)",
                    access.describe(td)
                ));
            }
            if let Some(mp) = &plan.match_path {
                alts.push(format!(
                    "or, if fewer than k pass: {} (ranked exactly)",
                    mp.describe(td)
                ));
            }
            for a in alts {
                lines.push(format!("{}{a}", "  ".repeat(d - 1)));
            }
        }
        (Some(td), None, None)
            if (td.db == SYSTEM_DB && catalog::VIRTUAL_TABLES.contains(&td.name.as_str()))
                || catalog::information_schema::is(&td.db) =>
        {
            push(format!("System View {}", td.qualified()), lines)
        }
        (Some(td), None, None) => {
            // A correlated filter's path is chosen again per run with the
            // outer row's values (here: placeholders of the right shape).
            match correlated_filter(plan.filter.as_ref(), |_| Value::Int(0)) {
                Some(f) => {
                    let a = access::choose(td, Some(&f), &NoHost);
                    push(format!("{} (per outer row)", a.describe(td)), lines)
                }
                None => push(plan.access.describe(td), lines),
            }
        }
    }
    lines.extend(sub_lines);
}
