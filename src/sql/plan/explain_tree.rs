//! `EXPLAIN FORMAT=TREE` and `EXPLAIN ANALYZE FORMAT=TREE`: a plan as
//! MySQL 8 prints its iterator tree — one line per operator, `-> ` first,
//! each child indented four spaces more than its parent — worded as
//! MySQL words its iterators (`Table scan on t`, `Filter: (t.a > 1)`,
//! `Inner hash join (…)`, `Limit: 10 row(s)`, …), with Tributary's own
//! operators (vector and full-text index top-k, fresh-tail merge) named in
//! the same style. MySQL's `(cost=… rows=…)` estimates are omitted: there
//! is no cost model. With statistics each operator line ends with
//! MySQL's `(actual time=first..all rows=n loops=l)` (per-loop averages
//! as MySQL prints them) then Tributary's `(batches=b peak=…)`.
//!
//! Owns only the rendering: which line stands for which operator (plan
//! node and [`Stage`]) and its wording. Never runs or changes a plan and
//! never invents a figure: a line whose operator recorded nothing shows
//! none (a node's top line falls back to the whole node's figures).

use std::collections::HashSet;

use crate::catalog::{self, TableDef, SYSTEM_DB};
use crate::error::SqlResult;
use crate::sql::access::{self, Access};
use crate::sql::expr::{BinOp, CExpr, NoHost};
use crate::sql::plan::explain_expr::{agg_call, select_number, show, Names};
use crate::sql::plan::{
    correlated_filter, lookup_key, prefilter_access, JoinKind, Node, Plan, SetOp, Stage, Stat,
    Stats, Subqueries, LOOKUP_JOIN_MAX_KEYS, PREFILTER_ROWS,
};
use crate::sql::search::IndexPath;
use crate::types::Value;

/// One line of the tree before figures are added.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    pub depth: usize,
    pub text: String,
    /// The operator whose figures the line shows: (node address, stage).
    pub key: Option<(usize, Stage)>,
    /// Where to read figures when `key` recorded none: the whole node's
    /// entry (a node's top line only).
    pub fallback: Option<(usize, Stage)>,
}

/// The tree of `node` as one text (lines joined by `\n`), with figures
/// from `stats` (EXPLAIN ANALYZE) when given.
pub fn render(node: &Node, stats: Option<&Stats>, subs: &Subqueries) -> SqlResult<String> {
    let mut t = Tree {
        subs,
        lines: Vec::new(),
    };
    t.node(node, 0, &[], Top::Statement)?;
    Ok(t.lines
        .iter()
        .map(|l| {
            let mut s = format!("{}-> {}", "    ".repeat(l.depth), l.text);
            if let Some(stats) = stats {
                s.push_str(&figures(l, stats));
            }
            s
        })
        .collect::<Vec<_>>()
        .join("\n"))
}

/// The figures a line shows (with their leading spaces): the operator's
/// own, else its fallback's, else `(never executed)` when the line stands
/// for a node that recorded nothing at all, else nothing.
pub fn figures(l: &Line, stats: &Stats) -> String {
    let Some(key) = l.key else {
        return String::new();
    };
    let st = stats
        .get(&key)
        .or_else(|| l.fallback.and_then(|f| stats.get(&f)));
    match st {
        Some(st) => format!("  {}", actual(st)),
        None if (l.fallback.is_some() || key.1 == Stage::Node)
            && !stats.keys().any(|(a, _)| *a == key.0) =>
        {
            "  (never executed)".into()
        }
        None => String::new(),
    }
}

/// MySQL's `(actual time=first..all rows=n loops=l)` — time in ms and rows
/// per loop — then `(batches=b peak=…)`. Operators record their total
/// time only, so the first-row time shows the total (an upper bound).
pub fn actual(st: &Stat) -> String {
    let loops = st.loops.max(1);
    let ms = st.time.as_secs_f64() * 1e3 / loops as f64;
    format!(
        "(actual time={ms:.3}..{ms:.3} rows={} loops={}) (batches={} peak={})",
        per_loop(st.rows, loops),
        st.loops,
        per_loop(st.batches, loops),
        bytes(st.peak_bytes)
    )
}

/// `n / loops`, whole when it divides, else to at most two decimals
/// (`0.6`, `1.33`).
fn per_loop(n: u64, loops: u64) -> String {
    if n.is_multiple_of(loops) {
        (n / loops).to_string()
    } else {
        let s = format!("{:.2}", n as f64 / loops as f64);
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

/// A byte count as `512 B`, `4.0 KiB`, `1.5 MiB`, `2.0 GiB`.
pub fn bytes(n: u64) -> String {
    const K: f64 = 1024.0;
    let f = n as f64;
    if n < 1024 {
        format!("{n} B")
    } else if f < K * K {
        format!("{:.1} KiB", f / K)
    } else if f < K * K * K {
        format!("{:.1} MiB", f / K / K)
    } else {
        format!("{:.1} GiB", f / K / K / K)
    }
}

/// Where a node sits, for the lines MySQL prints above it.
#[derive(Clone, Copy)]
enum Top<'n> {
    /// The statement's own query (a set operation reads its temporary
    /// table back: `Table scan on <union temporary>`).
    Statement,
    /// Inside another operator.
    Inner,
    /// Inside another operator that names this node's output columns (a
    /// block reading a join: its scope's `v.r`, where the join's own
    /// sides only know their tables').
    Named(&'n [(String, String)]),
}

struct Tree<'a> {
    subs: &'a Subqueries,
    lines: Vec<Line>,
}

fn addr(n: &Node) -> usize {
    n as *const Node as usize
}

/// The names of a node's output columns as `(alias, column)`.
fn out_names(n: &Node) -> Vec<(String, String)> {
    match n {
        Node::Block(p) if p.is_plain_scan() => p.source.scope.cols.clone(),
        Node::Block(p) => p
            .projection
            .iter()
            .map(|(name, _, _)| (p.source.alias.clone(), name.clone()))
            .collect(),
        Node::Join(j) => {
            let mut v = out_names(&j.left);
            v.extend(out_names(&j.right));
            v
        }
        Node::Union(u) => u
            .columns
            .iter()
            .map(|(c, _)| (String::new(), c.clone()))
            .collect(),
        Node::Recursive(r) => r
            .columns
            .iter()
            .map(|c| (r.name.clone(), c.name.clone()))
            .collect(),
        Node::WorkTable(w) => w
            .columns
            .iter()
            .map(|c| (w.name.clone(), c.name.clone()))
            .collect(),
    }
}

impl Tree<'_> {
    fn push(&mut self, depth: usize, text: String, key: Option<(usize, Stage)>) {
        self.lines.push(Line {
            depth,
            text,
            key,
            fallback: None,
        });
    }

    /// The lines of `n` at `depth`; `outer` names the enclosing query's
    /// row its correlated references read.
    fn node(
        &mut self,
        n: &Node,
        depth: usize,
        outer: &[(String, String)],
        top: Top,
    ) -> SqlResult<()> {
        crate::sql::stack::descend(|| match n {
            Node::Block(p) => self.block(n, p, depth, outer),
            Node::Join(_) => {
                let given = match top {
                    Top::Named(names) => Some(names),
                    _ => None,
                };
                self.join(n, depth, outer, given)
            }
            Node::Union(_) => self.set_op(n, depth, outer, top),
            Node::Recursive(r) => {
                let mut d = depth;
                if matches!(top, Top::Statement) {
                    self.push(d, format!("Table scan on {}", r.name), None);
                    d += 1;
                }
                // `LIMIT` on the CTE's union: the rounds stop once it has
                // its rows.
                if let Some((skip, count)) = r.limit {
                    self.push(d, limit_text(Some(count), skip), None);
                    d += 1;
                }
                self.push(
                    d,
                    format!(
                        "Materialize recursive CTE {}{}",
                        r.name,
                        if r.all { "" } else { " with deduplication" }
                    ),
                    Some((addr(n), Stage::Node)),
                );
                self.node(&r.seed, d + 1, outer, Top::Inner)?;
                self.push(d + 1, "Repeat until convergence".into(), None);
                for s in &r.steps {
                    self.node(s, d + 2, outer, Top::Inner)?;
                }
                Ok(())
            }
            Node::WorkTable(w) => {
                self.push(
                    depth,
                    format!("Scan new records on {}", w.name),
                    Some((addr(n), Stage::Node)),
                );
                Ok(())
            }
        })
    }

    /// A set operation; a chain of the same operation (`a UNION b UNION
    /// c`, planned as nested pairs) prints as one operator with every
    /// operand below it, as MySQL's does.
    fn set_op(
        &mut self,
        n: &Node,
        depth: usize,
        outer: &[(String, String)],
        top: Top,
    ) -> SqlResult<()> {
        let Node::Union(u) = n else {
            return Ok(());
        };
        let mut operands = vec![&u.right];
        let mut left = &u.left;
        while let Node::Union(l) = left {
            if l.op != u.op || l.all != u.all {
                break;
            }
            operands.push(&l.right);
            left = &l.left;
        }
        operands.push(left);
        operands.reverse();
        let op = match u.op {
            SetOp::Union => "Union",
            SetOp::Intersect => "Intersect",
            SetOp::Except => "Except",
        };
        let mut d = depth;
        if matches!(top, Top::Statement) {
            self.push(
                d,
                format!("Table scan on <{} temporary>", op.to_ascii_lowercase()),
                None,
            );
            d += 1;
        }
        let text = if u.all {
            format!("{op} all materialize")
        } else {
            format!("{op} materialize with deduplication")
        };
        self.push(d, text, Some((addr(n), Stage::Node)));
        for o in operands {
            self.node(o, d + 1, outer, Top::Inner)?;
        }
        Ok(())
    }

    fn join(
        &mut self,
        n: &Node,
        depth: usize,
        outer: &[(String, String)],
        given: Option<&[(String, String)]>,
    ) -> SqlResult<()> {
        let Node::Join(j) = n else {
            return Ok(());
        };
        let (ln, rn) = match given {
            Some(g) if g.len() == j.left_width + j.right_width => {
                (g[..j.left_width].to_vec(), g[j.left_width..].to_vec())
            }
            _ => (out_names(&j.left), out_names(&j.right)),
        };
        let mut both = ln.clone();
        both.extend(rn.iter().cloned());
        let names = |cols| Names {
            cols,
            outer,
            ..Names::default()
        };
        // MySQL has no right join: it swaps the sides of a left one.
        let swapped = j.kind == JoinKind::Right;
        let kind = match j.kind {
            JoinKind::Inner => "inner",
            JoinKind::Left | JoinKind::Right => "left",
        };
        let extra = if j.residual.is_empty() {
            String::new()
        } else {
            let both_names = names(&both);
            format!(
                ", extra conditions: {}",
                j.residual
                    .iter()
                    .map(|c| show(c, &both_names))
                    .collect::<Vec<_>>()
                    .join(" and ")
            )
        };
        let me = Some((addr(n), Stage::Node));
        let sub_outer = {
            let mut o = both.clone();
            o.extend(outer.iter().cloned());
            o
        };
        if let Some((ki, right, t)) = lookup_key(j) {
            // An index nested-loop join: the right table read by primary
            // key for the left side's keys, batched; past the key limit
            // the same join runs as a hash join over a scan.
            self.push(
                depth,
                format!(
                    "Nested loop {kind} join (batched key access, or hash join past {LOOKUP_JOIN_MAX_KEYS} keys){extra}"
                ),
                me,
            );
            self.node(&j.left, depth + 1, outer, Top::Named(&ln))?;
            let key = show(&j.keys[ki].0, &names(&ln));
            let pk = t.columns.get(t.pk[0]).map_or("?", |c| c.name.as_str());
            let how = if t.pk.len() == 1 {
                "Single-row index lookup"
            } else {
                "Index lookup"
            };
            let mut d = depth + 1;
            let right_addr = addr(&j.right);
            if let Some(f) = &right.filter {
                let rnames = Names {
                    cols: &right.source.scope.cols,
                    outer,
                    ..Names::default()
                };
                self.lines.push(Line {
                    depth: d,
                    text: format!("Filter: {}", show(f, &rnames)),
                    key: Some((right_addr, Stage::Filter)),
                    fallback: Some((right_addr, Stage::Node)),
                });
                d += 1;
            }
            let top_line = right.filter.is_none();
            self.lines.push(Line {
                depth: d,
                text: format!("{how} on {} using PRIMARY ({pk}={key})", right.source.alias),
                key: Some((right_addr, Stage::Scan)),
                fallback: top_line.then_some((right_addr, Stage::Node)),
            });
        } else if j.keys.is_empty() {
            self.push(depth, format!("Nested loop {kind} join{extra}"), me);
            let (a, b) = if swapped {
                ((&j.right, &rn), (&j.left, &ln))
            } else {
                ((&j.left, &ln), (&j.right, &rn))
            };
            self.node(a.0, depth + 1, outer, Top::Named(a.1))?;
            self.node(b.0, depth + 1, outer, Top::Named(b.1))?;
        } else {
            let (lnames, rnames) = (names(&ln), names(&rn));
            let conds = j
                .keys
                .iter()
                .map(|(l, r)| {
                    let (l, r) = (show(l, &lnames), show(r, &rnames));
                    if swapped {
                        format!("({r} = {l})")
                    } else {
                        format!("({l} = {r})")
                    }
                })
                .collect::<Vec<_>>()
                .join(", ");
            let kind = match kind {
                "inner" => "Inner",
                _ => "Left",
            };
            self.push(depth, format!("{kind} hash join {conds}{extra}"), me);
            let (probe, build) = if swapped {
                ((&j.right, &rn), (&j.left, &ln))
            } else {
                ((&j.left, &ln), (&j.right, &rn))
            };
            self.node(probe.0, depth + 1, outer, Top::Named(probe.1))?;
            self.push(depth + 1, "Hash".into(), None);
            self.node(build.0, depth + 2, outer, Top::Named(build.1))?;
        }
        let mut seen = HashSet::new();
        for c in &j.residual {
            self.subqueries(c, "condition", depth + 1, &sub_outer, &mut seen)?;
        }
        Ok(())
    }

    /// The `Select #n (subquery in …)` sections of the subqueries in `e`,
    /// each once.
    fn subqueries(
        &mut self,
        e: &CExpr,
        place: &str,
        depth: usize,
        outer: &[(String, String)],
        seen: &mut HashSet<usize>,
    ) -> SqlResult<()> {
        let mut found = Vec::new();
        e.walk(&mut |x| {
            if let CExpr::Scalar(sp) | CExpr::Exists(sp, _) | CExpr::InSub(_, sp, _) = x {
                found.push((sp.id, sp.refs.is_empty()));
            }
        });
        for (id, once) in found {
            if !seen.insert(id) {
                continue;
            }
            self.push(
                depth,
                format!(
                    "Select #{} (subquery in {place}; {})",
                    select_number(id),
                    if once { "run only once" } else { "dependent" }
                ),
                None,
            );
            let sp = self.subs.get(id)?;
            self.node(&sp.node, depth + 1, outer, Top::Inner)?;
        }
        Ok(())
    }

    /// A query block: its operators from the top (limit) down to its
    /// source, then the subqueries its expressions run.
    fn block(
        &mut self,
        n: &Node,
        p: &Plan,
        depth: usize,
        outer: &[(String, String)],
    ) -> SqlResult<()> {
        let a = addr(n);
        let names = Names {
            cols: &p.source.scope.cols,
            outer,
            aggs: &p.aggs,
            matches: &p.matches,
        };
        let first = self.lines.len();
        let mut d = depth;
        // Each operator one level below the one above it; its depth.
        let op = |t: &mut Self, d: &mut usize, text: String, stage: Option<Stage>| {
            t.push(*d, text, stage.map(|s| (a, s)));
            *d += 1;
            *d - 1
        };
        let top = d;
        if p.limit.is_some() || p.offset > 0 {
            op(
                self,
                &mut d,
                limit_text(p.limit, p.offset),
                Some(Stage::Limit),
            );
        }
        // A window that leaves the rows in ORDER BY's order: no sort.
        if !p.order_by.is_empty() && !p.sorted_by_window() {
            let keys = p
                .order_by
                .iter()
                .map(|(e, desc)| {
                    let s = show(e, &names);
                    if *desc {
                        format!("{s} DESC")
                    } else {
                        s
                    }
                })
                .collect::<Vec<_>>()
                .join(", ");
            let text = match p.limit {
                Some(l) => format!(
                    "Sort: {keys}, limit input to {} row(s) per chunk",
                    l.saturating_add(p.offset)
                ),
                None => format!("Sort: {keys}"),
            };
            op(self, &mut d, text, Some(Stage::Sort));
        }
        if p.distinct {
            op(self, &mut d, "Table scan on <temporary>".into(), None);
            op(
                self,
                &mut d,
                "Temporary table with deduplication".into(),
                Some(Stage::Distinct),
            );
        }
        let windows: Vec<&str> = p
            .aggs
            .iter()
            .filter_map(|c| c.window.as_deref().map(|w| w.text.as_str()))
            .collect();
        if !windows.is_empty() {
            op(
                self,
                &mut d,
                format!("Window aggregate: {}", windows.join(", ")),
                Some(Stage::Window),
            );
        }
        let mut having_at = None;
        if let Some(h) = &p.having {
            having_at = Some(op(
                self,
                &mut d,
                format!("Filter: {}", show(h, &names)),
                None,
            ));
        }
        if p.aggregate {
            if p.group_by.is_empty() {
                let calls: Vec<String> = p
                    .aggs
                    .iter()
                    .filter(|c| c.window.is_none())
                    .map(|c| agg_call(c, &names))
                    .collect();
                op(
                    self,
                    &mut d,
                    format!("Aggregate: {}", calls.join(", ")),
                    Some(Stage::Aggregate),
                );
            } else {
                op(self, &mut d, "Table scan on <temporary>".into(), None);
                op(
                    self,
                    &mut d,
                    "Aggregate using temporary table".into(),
                    Some(Stage::Aggregate),
                );
            }
        }
        let mut filter_at = None;
        if let Some(f) = &p.filter {
            filter_at = Some(op(
                self,
                &mut d,
                format!("Filter: {}", show(f, &names)),
                Some(Stage::Filter),
            ));
        }
        self.source(p, a, d, outer)?;
        // The block's top line stands for the whole node when its own
        // operator recorded nothing.
        if let Some(l) = self.lines.get_mut(first) {
            l.fallback = Some((a, Stage::Node));
            l.key.get_or_insert((a, Stage::Node));
        }
        // Subqueries: the row they read is the block's source row.
        let mut sub_outer = p.source.scope.cols.clone();
        sub_outer.extend(outer.iter().cloned());
        let mut seen = HashSet::new();
        if let (Some(f), Some(fd)) = (&p.filter, filter_at) {
            self.subqueries(f, "condition", fd + 1, &sub_outer, &mut seen)?;
        }
        if let (Some(h), Some(hd)) = (&p.having, having_at) {
            self.subqueries(h, "condition", hd + 1, &sub_outer, &mut seen)?;
        }
        let projected = p
            .projection
            .iter()
            .map(|(_, e, _)| e)
            .chain(p.group_by.iter())
            .chain(p.order_by.iter().map(|(e, _)| e));
        for e in projected {
            self.subqueries(e, "projection", top + 1, &sub_outer, &mut seen)?;
        }
        Ok(())
    }

    /// The block's source: a table by its access path, an index search,
    /// a table function, no table, or another node.
    fn source(
        &mut self,
        p: &Plan,
        a: usize,
        d: usize,
        outer: &[(String, String)],
    ) -> SqlResult<()> {
        let scan = Some((a, Stage::Scan));
        // A derived table's or CTE's name is its columns' qualifier.
        let alias = match p.source.scope.cols.first() {
            Some((q, _)) if p.source.alias.is_empty() => q,
            _ => &p.source.alias,
        };
        let names = Names {
            cols: &p.source.scope.cols,
            outer,
            aggs: &p.aggs,
            matches: &p.matches,
        };
        if let Some(input) = &p.source.input {
            match &**input {
                Node::Join(_) => {
                    return self.node(input, d, outer, Top::Named(&p.source.scope.cols))
                }
                Node::WorkTable(w) => {
                    self.lines.push(Line {
                        depth: d,
                        text: format!("Scan new records on {}", w.name),
                        key: scan,
                        fallback: Some((addr(input), Stage::Node)),
                    });
                    return Ok(());
                }
                Node::Union(_) | Node::Recursive(_) => {
                    self.push(d, format!("Table scan on {alias}"), scan);
                    return self.node(input, d + 1, outer, Top::Inner);
                }
                // A block that only passes on its table or table
                // function's rows: that source stands for it.
                Node::Block(q) if passes_on(q) => {
                    let at = self.lines.len();
                    self.source(q, addr(input), d, outer)?;
                    if let Some(l) = self.lines.get_mut(at) {
                        l.key = scan;
                        l.fallback = Some((addr(input), Stage::Node));
                    }
                    return Ok(());
                }
                Node::Block(_) => {
                    self.push(d, format!("Table scan on {alias}"), scan);
                    self.push(d + 1, "Materialize".into(), None);
                    return self.node(input, d + 2, outer, Top::Inner);
                }
            }
        }
        let Some(td) = &p.source.table else {
            match &p.source.values {
                Some(v) => self.push(
                    d,
                    format!(
                        "Table function scan on {alias}: {} ({} row(s))",
                        v.label.strip_prefix("Function Scan ").unwrap_or(&v.label),
                        v.count
                    ),
                    scan,
                ),
                None => self.push(d, "Rows fetched before execution".into(), scan),
            }
            return Ok(());
        };
        if let Some(ip) = &p.index_path {
            self.index_search(p, a, td, ip, d, &names);
            return Ok(());
        }
        if (td.db == SYSTEM_DB && catalog::VIRTUAL_TABLES.contains(&td.name.as_str()))
            || catalog::information_schema::is(&td.db)
        {
            self.push(d, format!("Table scan on {}", td.name), scan);
            return Ok(());
        }
        // A correlated filter's path is chosen again per run with the
        // outer row's values (here: placeholders of the right shape).
        let text = match correlated_filter(p.filter.as_ref(), |_| Value::Int(0)) {
            Some(f) => {
                let per_run = access::choose(td, Some(&f), &NoHost);
                access_text(td, alias, &per_run, p.filter.as_ref(), &names)
            }
            None => access_text(td, alias, &p.access, p.filter.as_ref(), &names),
        };
        self.push(d, text, scan);
        Ok(())
    }

    /// A vector or full-text top-k search; unless the session reads the
    /// index alone, under the merge of the rows changed since the index's
    /// view (evaluated exactly).
    fn index_search(
        &mut self,
        p: &Plan,
        a: usize,
        td: &TableDef,
        ip: &IndexPath,
        mut d: usize,
        names: &Names<'_>,
    ) {
        let alias = &p.source.alias;
        let (index, fast) = match ip {
            IndexPath::Vector { index, fast, .. } | IndexPath::FullText { index, fast, .. } => {
                (index, *fast)
            }
        };
        let mut key = Some((a, Stage::Scan));
        if !fast {
            self.push(
                d,
                format!(
                    "Fresh-tail merge on {alias} (index hits + rows changed since the index's view, evaluated exactly; {} index)",
                    if index.is_async { "asynchronous" } else { "synchronous" }
                ),
                key.take(),
            );
            d += 1;
        }
        let text = match ip {
            IndexPath::Vector { k, .. } => {
                let mut how = vec!["hnsw".to_string(), format!("k={k}")];
                if let Some((_, acc)) = prefilter_access(p) {
                    how.push(format!(
                        "or, when it yields at most {PREFILTER_ROWS} rows: {} ranked exactly",
                        access_text(td, alias, acc, p.filter.as_ref(), names)
                    ));
                }
                match &p.match_path {
                    Some(IndexPath::FullText { index: ft, .. }) => how.push(format!(
                        "exact over the full-text hits of {} if fewer than k pass",
                        ft.name
                    )),
                    _ => how.push("exact scan if fewer than k pass".into()),
                }
                if fast {
                    how.push("index only".into());
                }
                format!(
                    "Vector index scan on {alias} using {} ({})",
                    index.name,
                    how.join(", ")
                )
            }
            IndexPath::FullText { slot, .. } => {
                // MySQL's `(title = 'database')`.
                let mut how = vec![match p.matches.get(*slot) {
                    Some(m) => format!(
                        "{} = {}{}",
                        m.columns
                            .iter()
                            .filter_map(|c| names.cols.get(*c).map(|(_, n)| n.as_str()))
                            .collect::<Vec<_>>()
                            .join(","),
                        crate::sql::plan::explain_expr::literal(&Value::Text(m.query.clone())),
                        if m.boolean { " in boolean mode" } else { "" }
                    ),
                    None => show(&CExpr::Match(*slot), names),
                }];
                if let Some(k) = p.relevance_top_k() {
                    how.push(format!("top {k}"));
                }
                if fast {
                    how.push("index only".into());
                }
                format!(
                    "Full-text index search on {alias} using {} ({})",
                    index.name,
                    how.join(", ")
                )
            }
        };
        self.push(d, text, key);
    }
}

/// Whether block `q` passes its table's or table function's rows on as
/// they are (no filter, grouping, order, limit; every column in order).
fn passes_on(q: &Plan) -> bool {
    q.source.input.is_none()
        && (q.source.values.is_some() || q.source.table.is_some())
        && q.filter.is_none()
        && q.having.is_none()
        && !q.aggregate
        && !q.distinct
        && !q.windowed()
        && q.order_by.is_empty()
        && q.limit.is_none()
        && q.offset == 0
        && q.index_path.is_none()
        && q.projection.len() == q.source.scope.cols.len()
        && q.projection
            .iter()
            .enumerate()
            .all(|(i, (_, e, _))| matches!(e, CExpr::Col(c) if *c == i))
}

/// `Limit: 10 row(s)` / `Limit/Offset: 10/5 row(s)`.
fn limit_text(limit: Option<usize>, offset: usize) -> String {
    let l = limit.map_or_else(|| "18446744073709551615".to_string(), |l| l.to_string());
    if offset == 0 {
        format!("Limit: {l} row(s)")
    } else {
        format!("Limit/Offset: {l}/{offset} row(s)")
    }
}

/// A scan by its access path, worded as MySQL words them, with the key
/// values or ranges read from the filter's conjuncts on the key columns
/// (the count of keys or ranges when the filter does not show them).
pub fn access_text(
    td: &TableDef,
    alias: &str,
    a: &Access,
    filter: Option<&CExpr>,
    names: &Names<'_>,
) -> String {
    let col = |i: usize| td.columns.get(i).map_or("?", |c| c.name.as_str());
    let bounds = |cols: &[usize]| key_bounds(cols, filter, names, &col);
    match a {
        Access::FullScan => format!("Table scan on {alias}"),
        Access::PkPoint(keys) if keys.len() == 1 => {
            let (eqs, _) = bounds(&td.pk);
            if eqs.len() == td.pk.len() {
                format!(
                    "Single-row index lookup on {alias} using PRIMARY ({})",
                    eqs.join(", ")
                )
            } else {
                format!("Single-row index lookup on {alias} using PRIMARY")
            }
        }
        Access::PkPoint(keys) => {
            let listed = (td.pk.len() == 1)
                .then(|| in_list(td.pk[0], filter, names, &col))
                .flatten();
            match listed {
                Some(r) => format!("Index range scan on {alias} using PRIMARY over {r}"),
                None => format!(
                    "Index range scan on {alias} using PRIMARY over ({} keys)",
                    keys.len()
                ),
            }
        }
        Access::PkRange(..) => {
            let (eqs, range) = bounds(&td.pk);
            format!(
                "Index range scan on {alias} using PRIMARY{}",
                over(&eqs, range.as_deref())
            )
        }
        Access::PkRanges(r) => format!(
            "Index range scan on {alias} using PRIMARY over ({} ranges)",
            r.len()
        ),
        Access::IndexRange { index, .. } => {
            let cols: &[usize] = td
                .indexes
                .iter()
                .find(|i| i.name == *index)
                .map_or(&[], |i| i.columns.as_slice());
            let (eqs, range) = bounds(cols);
            if range.is_none() && !eqs.is_empty() && eqs.len() == cols.len() {
                format!("Index lookup on {alias} using {index} ({})", eqs.join(", "))
            } else {
                format!(
                    "Index range scan on {alias} using {index}{}",
                    over(&eqs, range.as_deref())
                )
            }
        }
    }
}

/// ` over (a = 1 AND 10 < b <= 20)`, or nothing when nothing is known.
fn over(eqs: &[String], range: Option<&str>) -> String {
    let mut parts: Vec<String> = eqs.iter().map(|e| e.replacen('=', " = ", 1)).collect();
    parts.extend(range.map(str::to_string));
    if parts.is_empty() {
        String::new()
    } else {
        format!(" over ({})", parts.join(" AND "))
    }
}

/// A key value as printed: a literal or an outer column (other
/// expressions are not key values).
fn key_value(e: &CExpr, names: &Names<'_>) -> Option<String> {
    match e {
        CExpr::Lit(v) if !v.is_null() => Some(show(e, names)),
        CExpr::Outer(_) => Some(show(e, names)),
        x if x.is_constant() => Some(show(x, names)),
        _ => None,
    }
}

/// For the leading key columns `cols`: `col=value` for each one a
/// conjunct fixes (in order, up to the first one that is not fixed), and
/// the range of the next one (`10 < c <= 20`), from the filter.
fn key_bounds<'c>(
    cols: &[usize],
    filter: Option<&CExpr>,
    names: &Names<'_>,
    col: &dyn Fn(usize) -> &'c str,
) -> (Vec<String>, Option<String>) {
    let conj: Vec<&CExpr> = filter.map(|f| f.conjuncts()).unwrap_or_default();
    let is_col = |e: &CExpr, c: usize| matches!(e, CExpr::Col(i) if *i == c);
    let mut eqs = Vec::new();
    for &c in cols {
        let eq = conj.iter().find_map(|x| match x {
            CExpr::Bin(BinOp::Eq, l, r) if is_col(l, c) => key_value(r, names),
            CExpr::Bin(BinOp::Eq, l, r) if is_col(r, c) => key_value(l, names),
            _ => None,
        });
        match eq {
            Some(v) => eqs.push(format!("{}={v}", col(c))),
            None => {
                let mut lo: Option<(String, bool)> = None;
                let mut hi: Option<(String, bool)> = None;
                for x in &conj {
                    match x {
                        CExpr::Bin(op, l, r) if is_col(l, c) || is_col(r, c) => {
                            let (op, v) = if is_col(l, c) {
                                (*op, r)
                            } else {
                                let flipped = match op {
                                    BinOp::Lt => BinOp::Gt,
                                    BinOp::LtEq => BinOp::GtEq,
                                    BinOp::Gt => BinOp::Lt,
                                    BinOp::GtEq => BinOp::LtEq,
                                    o => *o,
                                };
                                (flipped, l)
                            };
                            let Some(v) = key_value(v, names) else {
                                continue;
                            };
                            match op {
                                BinOp::Gt => lo = Some((v, false)),
                                BinOp::GtEq => lo = Some((v, true)),
                                BinOp::Lt => hi = Some((v, false)),
                                BinOp::LtEq => hi = Some((v, true)),
                                _ => {}
                            }
                        }
                        CExpr::Between(x, l, h, false) if is_col(x, c) => {
                            if let (Some(l), Some(h)) = (key_value(l, names), key_value(h, names)) {
                                lo = Some((l, true));
                                hi = Some((h, true));
                            }
                        }
                        _ => {}
                    }
                }
                let name = col(c);
                let range = match (lo, hi) {
                    (None, None) => None,
                    (lo, hi) => {
                        let mut s = String::new();
                        if let Some((v, inc)) = lo {
                            s.push_str(&format!("{v} {} ", if inc { "<=" } else { "<" }));
                        }
                        s.push_str(name);
                        if let Some((v, inc)) = hi {
                            s.push_str(&format!(" {} {v}", if inc { "<=" } else { "<" }));
                        }
                        Some(s)
                    }
                };
                return (eqs, range);
            }
        }
    }
    (eqs, None)
}

/// `(id = 1) OR (id = 3)` from an `id IN (1, 3)` conjunct.
fn in_list<'c>(
    c: usize,
    filter: Option<&CExpr>,
    names: &Names<'_>,
    col: &dyn Fn(usize) -> &'c str,
) -> Option<String> {
    let conj: Vec<&CExpr> = filter.map(|f| f.conjuncts()).unwrap_or_default();
    conj.iter().find_map(|x| match x {
        CExpr::InList(e, items, false) if matches!(&**e, CExpr::Col(i) if *i == c) => items
            .iter()
            .map(|v| key_value(v, names).map(|v| format!("({} = {v})", col(c))))
            .collect::<Option<Vec<_>>>()
            .map(|v| v.join(" OR ")),
        _ => None,
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::time::Duration;

    fn line(key: Option<(usize, Stage)>, fallback: Option<(usize, Stage)>) -> Line {
        Line {
            depth: 0,
            text: "x".into(),
            key,
            fallback,
        }
    }

    fn stat(rows: u64, batches: u64, loops: u64, ms: u64, peak: u64) -> Stat {
        Stat {
            rows,
            batches,
            loops,
            time: Duration::from_millis(ms),
            peak_bytes: peak,
        }
    }

    #[test]
    fn a_line_shows_its_own_stage_per_loop() {
        let mut s = Stats::new();
        s.insert((7, Stage::Filter), stat(10, 2, 2, 4, 4096));
        s.insert((7, Stage::Node), stat(99, 99, 99, 99, 99));
        let got = figures(&line(Some((7, Stage::Filter)), Some((7, Stage::Node))), &s);
        assert_eq!(
            got,
            "  (actual time=2.000..2.000 rows=5 loops=2) (batches=1 peak=4.0 KiB)"
        );
        let got = figures(&line(Some((7, Stage::Scan)), None), &s);
        assert_eq!(got, "", "a stage that recorded nothing shows nothing");
    }

    #[test]
    fn a_top_line_falls_back_to_its_node_and_never_invents() {
        let mut s = Stats::new();
        s.insert((7, Stage::Node), stat(3, 1, 3, 3, 0));
        let got = figures(&line(Some((7, Stage::Limit)), Some((7, Stage::Node))), &s);
        assert_eq!(
            got,
            "  (actual time=1.000..1.000 rows=1 loops=3) (batches=0.33 peak=0 B)"
        );
        // A node that never ran.
        let got = figures(&line(Some((8, Stage::Limit)), Some((8, Stage::Node))), &s);
        assert_eq!(got, "  (never executed)");
        // A join or set operation that never ran.
        let got = figures(&line(Some((9, Stage::Node)), None), &s);
        assert_eq!(got, "  (never executed)");
        // A line that stands for no operator.
        assert_eq!(figures(&line(None, None), &s), "");
    }

    /// `t (id INT PRIMARY KEY, a INT)`.
    pub(crate) fn table() -> TableDef {
        let col = |name: &str| crate::catalog::ColumnDef {
            name: name.into(),
            ty: crate::types::DataType::Int,
            nullable: true,
            default: None,
            auto_increment: false,
            collation: Default::default(),
        };
        TableDef {
            id: 1000,
            db: "d".into(),
            name: "t".into(),
            columns: vec![col("id"), col("a")],
            pk: vec![0],
            indexes: vec![],
            comment: String::new(),
            view: None,
            collation: Default::default(),
            foreign_keys: Vec::new(),
            referenced_by: Vec::new(),
            checks: Vec::new(),
        }
    }

    /// `SELECT * FROM t WHERE a > 1 ORDER BY a DESC LIMIT 10`, planned by
    /// hand.
    fn top_n() -> Node {
        let mut p = Plan::table_scan(table(), "t", false);
        p.filter = Some(CExpr::Bin(
            BinOp::Gt,
            Box::new(CExpr::Col(1)),
            Box::new(CExpr::Lit(Value::Int(1))),
        ));
        p.order_by = vec![(CExpr::Col(1), true)];
        p.limit = Some(10);
        Node::Block(Box::new(p))
    }

    #[test]
    fn each_operator_line_shows_its_own_stage() {
        let n = top_n();
        let subs = Subqueries::default();
        assert_eq!(
            render(&n, None, &subs).unwrap(),
            "-> Limit: 10 row(s)\n    \
             -> Sort: t.a DESC, limit input to 10 row(s) per chunk\n        \
             -> Filter: (t.a > 1)\n            \
             -> Table scan on t"
        );
        let a = addr(&n);
        let mut s = Stats::new();
        s.insert((a, Stage::Node), stat(10, 1, 1, 9, 0));
        s.insert((a, Stage::Sort), stat(10, 1, 1, 8, 2048));
        s.insert((a, Stage::Scan), stat(3000, 3, 1, 5, 0));
        let got = render(&n, Some(&s), &subs).unwrap();
        let lines: Vec<&str> = got.lines().collect();
        // No Limit stage recorded: the top line shows the whole node.
        assert!(
            lines[0].ends_with("(actual time=9.000..9.000 rows=10 loops=1) (batches=1 peak=0 B)"),
            "{got}"
        );
        assert!(
            lines[1]
                .ends_with("(actual time=8.000..8.000 rows=10 loops=1) (batches=1 peak=2.0 KiB)"),
            "{got}"
        );
        // The filter recorded nothing: no figures, none invented.
        assert!(lines[2].ends_with("-> Filter: (t.a > 1)"), "{got}");
        assert!(
            lines[3].ends_with("(actual time=5.000..5.000 rows=3000 loops=1) (batches=3 peak=0 B)"),
            "{got}"
        );
    }

    #[test]
    fn a_right_join_prints_as_mysql_left_join_with_sides_swapped() {
        let left = crate::sql::plan::scan_node(table(), "l", false);
        let right = crate::sql::plan::scan_node(table(), "r", false);
        let j = crate::sql::plan::Join {
            kind: JoinKind::Right,
            left,
            right,
            left_width: 2,
            right_width: 2,
            keys: vec![(CExpr::Col(1), CExpr::Col(1))],
            residual: vec![],
        };
        let n = Node::Join(Box::new(j));
        let got = render(&n, None, &Subqueries::default()).unwrap();
        assert_eq!(
            got,
            "-> Left hash join (r.a = l.a)\n    \
             -> Table scan on r\n    \
             -> Hash\n        \
             -> Table scan on l"
        );
    }

    /// A chain of 2,000 UNIONs (the most a statement may hold), planned
    /// as nested pairs, prints as one operator over its 2,001 operands.
    #[test]
    fn a_long_union_chain_prints_flat() {
        let col = || vec![("id".to_string(), crate::types::ColumnKind::Int)];
        let mut n = crate::sql::plan::scan_node(table(), "t0", false);
        for i in 1..=2000 {
            n = Node::Union(Box::new(crate::sql::plan::Union {
                op: SetOp::Union,
                left: n,
                right: crate::sql::plan::scan_node(table(), &format!("t{i}"), false),
                all: false,
                columns: col(),
            }));
        }
        let got = render(&n, None, &Subqueries::default()).unwrap();
        let lines: Vec<&str> = got.lines().collect();
        assert_eq!(lines.len(), 2 + 2001, "{}", &got[..200]);
        assert_eq!(lines[1], "    -> Union materialize with deduplication");
        assert_eq!(lines[2002], "        -> Table scan on t2000");
        // Unwind the chain without a 2,000-deep recursive drop.
        while let Node::Union(u) = n {
            n = u.left;
        }
    }

    #[test]
    fn rows_per_loop_print_short() {
        assert_eq!(per_loop(6, 3), "2");
        assert_eq!(per_loop(3, 5), "0.6");
        assert_eq!(per_loop(4, 3), "1.33");
        assert_eq!(per_loop(0, 1), "0");
    }

    #[test]
    fn bytes_print_in_binary_units() {
        assert_eq!(bytes(0), "0 B");
        assert_eq!(bytes(1023), "1023 B");
        assert_eq!(bytes(1536), "1.5 KiB");
        assert_eq!(bytes(3 << 20), "3.0 MiB");
        assert_eq!(bytes(5 << 30), "5.0 GiB");
    }

    #[test]
    fn limits_print_as_mysql_does() {
        assert_eq!(limit_text(Some(10), 0), "Limit: 10 row(s)");
        assert_eq!(limit_text(Some(10), 5), "Limit/Offset: 10/5 row(s)");
    }
}
