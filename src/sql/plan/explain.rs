//! EXPLAIN: the lines a plan prints, one per operator, indented by depth;
//! with EXPLAIN ANALYZE's statistics each operator's line ends with what
//! that operator did (rows, loops, batches, time, peak memory): a query
//! block's lines with their own [`Stage`]'s figures, its first line
//! falling back to the whole node's; a line whose operator recorded
//! nothing shows nothing.
//!
//! Owns only the rendering. Never runs or changes a plan.

use crate::catalog::{self, SYSTEM_DB};
use crate::sql::access;
use crate::sql::expr::{CExpr, NoHost};
use crate::sql::plan::explain_tree::bytes;
use crate::sql::plan::{
    correlated_filter, lookup_key, prefilter_access, JoinKind, Node, Plan, Recursive, SetOp, Stage,
    Stat, Stats, Subqueries, LOOKUP_JOIN_MAX_KEYS, PREFILTER_ROWS,
};
use crate::types::Value;

/// ` (actual rows=… loops=… batches=… time=… ms peak=…)`: totals over
/// every loop.
fn note(st: &Stat) -> String {
    format!(
        " (actual rows={} loops={} batches={} time={:.3} ms peak={})",
        st.rows,
        st.loops,
        st.batches,
        st.time.as_secs_f64() * 1e3,
        bytes(st.peak_bytes)
    )
}

/// The figures of `stage` of the node at `addr`; for a node's first line
/// (`first`), the whole node's when the stage recorded nothing, zeros when
/// the node never ran.
fn figures(stats: Option<&Stats>, addr: usize, stage: Stage, first: bool) -> String {
    let Some(s) = stats else {
        return String::new();
    };
    match s.get(&(addr, stage)) {
        Some(st) => note(st),
        None if first => note(&s.get(&(addr, Stage::Node)).copied().unwrap_or_default()),
        None => String::new(),
    }
}

impl Node {
    /// EXPLAIN lines, indented by depth; with `stats` (EXPLAIN ANALYZE)
    /// each operator's line ends with what it did.
    pub fn explain(
        &self,
        depth: usize,
        stats: Option<&Stats>,
        subs: &Subqueries,
        out: &mut Vec<String>,
    ) {
        let pad = "  ".repeat(depth);
        let addr = self as *const Node as usize;
        let note = figures(stats, addr, Stage::Node, true);
        match self {
            Node::Block(p) => explain_block(p, addr, depth, stats, subs, out),
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
        let plan = subs.get(sp.id);
        let memo = matches!(&plan, Ok(p) if p.memo) && !matches!(x, CExpr::InSub(..));
        out.push(format!(
            "{}{what} ({})",
            "  ".repeat(depth),
            match (sp.refs.is_empty(), memo) {
                (true, _) => "run once",
                (false, true) => "correlated: run per distinct outer values",
                (false, false) => "correlated: run per row",
            }
        ));
        match plan {
            Ok(p) => p.node.explain(depth + 1, stats, subs, out),
            Err(e) => out.push(format!("{}{}", "  ".repeat(depth + 1), e.message)),
        }
    });
}

/// EXPLAIN lines of one block (the node at `addr`), its source indented
/// below it.
pub fn explain_block(
    plan: &Plan,
    addr: usize,
    depth: usize,
    stats: Option<&super::Stats>,
    subs: &super::Subqueries,
    lines: &mut Vec<String>,
) {
    let mut d = depth;
    let mut first = true;
    // A line that stands for no operator of its own (a second window
    // function of the one window operator) passes `None`.
    let mut push = |s: String, stage: Option<Stage>, lines: &mut Vec<String>| {
        let n = match stage {
            Some(stage) => figures(stats, addr, stage, std::mem::take(&mut first)),
            None => String::new(),
        };
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
            // The block's output: its projection runs below its sort and
            // limit (sort keys are computed with the select list), so the
            // top line shows the whole block's figures.
            Some(Stage::Node),
            lines,
        );
    }
    // A top-N is a sort and a limit: the limit's figures (what comes
    // out) when it recorded its own.
    let top_k = if stats.is_some_and(|s| s.contains_key(&(addr, Stage::Limit))) {
        Stage::Limit
    } else {
        Stage::Sort
    };
    // A window that leaves the rows in ORDER BY's order: no sort.
    let sorts = !plan.order_by.is_empty() && !plan.sorted_by_window();
    match (plan.limit, !sorts) {
        (Some(l), false) => push(
            format!(
                "Top-K (sort, keep rows {}..{} of the order)",
                plan.offset,
                plan.offset.saturating_add(l)
            ),
            Some(top_k),
            lines,
        ),
        (Some(l), true) => push(
            format!("Limit {l} offset {}", plan.offset),
            Some(Stage::Limit),
            lines,
        ),
        (None, false) => push("Sort".into(), Some(Stage::Sort), lines),
        (None, true) => {}
    }
    if plan.distinct {
        push("Distinct".into(), Some(Stage::Distinct), lines);
    }
    for (i, w) in plan
        .aggs
        .iter()
        .filter_map(|a| a.window.as_deref())
        .enumerate()
    {
        let stage = (i == 0).then_some(Stage::Window);
        push(format!("Window ({})", w.text), stage, lines);
    }
    if plan.aggregate {
        push(
            format!("Aggregate ({} group key(s))", plan.group_by.len()),
            Some(Stage::Aggregate),
            lines,
        );
    }
    if plan.filter.is_some() {
        push(
            "Filter (exact re-check of WHERE)".into(),
            Some(Stage::Filter),
            lines,
        );
    }
    match (&plan.source.table, &plan.index_path, &plan.source.input) {
        (_, _, Some(node)) => node.explain(d, stats, subs, lines),
        (None, _, None) => match &plan.source.values {
            Some(v) => push(
                format!("{} ({} rows)", v.label, v.count),
                Some(Stage::Scan),
                lines,
            ),
            None => push("Values (1 row)".into(), Some(Stage::Scan), lines),
        },
        (Some(td), Some(ip), None) => {
            push(ip.describe(td), Some(Stage::Scan), lines);
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
            push(
                format!("System View {}", td.qualified()),
                Some(Stage::Scan),
                lines,
            )
        }
        (Some(td), None, None) => {
            // A correlated filter's path is chosen again per run with the
            // outer row's values (here: placeholders of the right shape).
            match correlated_filter(plan.filter.as_ref(), |_| Value::Int(0)) {
                Some(f) => {
                    let a = access::choose(td, Some(&f), &NoHost);
                    push(
                        format!("{} (per outer row)", a.describe(td)),
                        Some(Stage::Scan),
                        lines,
                    )
                }
                None => push(plan.access.describe(td), Some(Stage::Scan), lines),
            }
        }
    }
    lines.extend(sub_lines);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::expr::BinOp;
    use std::time::Duration;

    fn stat(rows: u64, loops: u64, ms: u64) -> Stat {
        Stat {
            rows,
            batches: rows.div_ceil(1024),
            loops,
            time: Duration::from_millis(ms),
            peak_bytes: 1536,
        }
    }

    #[test]
    fn each_block_line_shows_its_stage_and_the_first_falls_back_to_the_node() {
        let mut p = Plan::table_scan(super::super::explain_tree::tests::table(), "t", false);
        p.filter = Some(CExpr::Bin(
            BinOp::Gt,
            Box::new(CExpr::Col(1)),
            Box::new(CExpr::Lit(Value::Int(1))),
        ));
        p.limit = Some(5);
        let n = Node::Block(Box::new(p));
        let a = &n as *const Node as usize;
        let mut s = Stats::new();
        s.insert((a, Stage::Node), stat(5, 1, 2));
        s.insert((a, Stage::Filter), stat(7, 1, 1));
        let mut lines = Vec::new();
        n.explain(0, Some(&s), &Subqueries::default(), &mut lines);
        assert_eq!(
            lines,
            vec![
                "Project (2 columns) (actual rows=5 loops=1 batches=1 time=2.000 ms peak=1.5 KiB)",
                "  Limit 5 offset 0",
                "    Filter (exact re-check of WHERE) (actual rows=7 loops=1 batches=1 time=1.000 ms peak=1.5 KiB)",
                "      Table Scan on d.t",
            ]
        );
        // A node that never ran: its first line says so in zeros.
        let mut lines = Vec::new();
        n.explain(0, Some(&Stats::new()), &Subqueries::default(), &mut lines);
        assert!(
            lines[0].ends_with("(actual rows=0 loops=0 batches=0 time=0.000 ms peak=0 B)"),
            "{lines:?}"
        );
        assert_eq!(lines[2], "    Filter (exact re-check of WHERE)");
    }
}
