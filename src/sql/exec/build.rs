//! Building a running plan: the one place that maps each plan [`Node`] to
//! its operator ([`Operator`]) and knows every kind of operator.
//!
//! A query block is its own chain of operators ([`super::block`]); so is
//! a recursive union, which passes each round's rows on
//! ([`super::recursive::operator`]); a join and a working-table scan are
//! materializing operators around their algorithms ([`super::join`],
//! [`super::recursive`]), which run their own inputs through the
//! [`Exec`]; a set operation's two inputs are its children, built here. Never plans, never evaluates an
//! expression.

use crate::error::SqlResult;
use crate::sql::budget::Reservation;
use crate::sql::exec::op::{drain, BoxOp, Exec, Made, Meter, Operator, Row, BATCH_ROWS};
use crate::sql::exec::{block, join, recursive, set_op};
use crate::sql::plan::{Node, Stage};
use crate::types::Value;

/// The operator tree of `node`, with `outer` as the row of the enclosing
/// query.
pub fn build<'p>(node: &'p Node, outer: &'p [Value]) -> SqlResult<BoxOp<'p>> {
    crate::sql::stack::descend(|| {
        let op: BoxOp<'p> = match node {
            Node::Block(p) => block::chain::operator(node, p, outer, true),
            Node::Union(u) => Box::new(Whole::new(
                node,
                outer,
                Some((build(&u.left, outer)?, build(&u.right, outer)?)),
            )),
            Node::Recursive(r) => recursive::operator(node, r, outer),
            Node::Join(_) | Node::WorkTable(_) => Box::new(Whole::new(node, outer, None)),
        };
        Ok(op)
    })
}

/// A node whose rows are made all at once, then passed on: a join, a set
/// operation (its two inputs are its children), a working-table scan. Its figures are those of [`Stage::Node`].
struct Whole<'p> {
    node: &'p Node,
    outer: &'p [Value],
    children: Option<(BoxOp<'p>, BoxOp<'p>)>,
    made: Option<Made>,
    meter: Meter<'p>,
}

impl<'p> Whole<'p> {
    fn new(
        node: &'p Node,
        outer: &'p [Value],
        children: Option<(BoxOp<'p>, BoxOp<'p>)>,
    ) -> Whole<'p> {
        Whole {
            node,
            outer,
            children,
            made: None,
            meter: Meter::new(node, Stage::Node),
        }
    }

    /// The node's rows, made at the first call.
    fn made(&mut self, cx: &mut Exec<'_, '_>) -> SqlResult<&mut Made> {
        if self.made.is_none() {
            let start = self.meter.start();
            let rows = self.make(cx)?;
            self.meter
                .step(start, rows.len(), rows.len().div_ceil(BATCH_ROWS));
            self.made = Some(Made::new(rows));
        }
        Ok(self.made.get_or_insert_with(|| Made::new(Vec::new())))
    }

    fn make(&mut self, cx: &mut Exec<'_, '_>) -> SqlResult<Vec<Row>> {
        let outer = self.outer;
        match self.node {
            Node::Join(j) => join::join(cx, j, outer),
            Node::Recursive(_) => Err(crate::error::SqlError::internal(
                "a recursive union is its own operator",
            )),
            Node::WorkTable(w) => recursive::run_work(w),
            Node::Union(u) => {
                let Some((left, right)) = self.children.as_mut() else {
                    return Err(crate::error::SqlError::internal(
                        "a set operation built without its inputs",
                    ));
                };
                // Out of line and guarded: a chain of set operations
                // drains its inputs one level per operator.
                crate::sql::stack::descend(|| {
                    // Both inputs and the DISTINCT keys are charged to the
                    // statement's budget while the set operation runs.
                    let mut mem = Reservation::new();
                    let rows = drain(left.as_mut(), cx)?;
                    mem.add_rows(&rows)?;
                    let right = drain(right.as_mut(), cx)?;
                    mem.add_rows(&right)?;
                    set_op::set_operation(self.node, u, rows, right, &mut mem)
                })
            }
            Node::Block(_) => Err(crate::error::SqlError::internal(
                "a query block is its own operator",
            )),
        }
    }
}

impl Operator for Whole<'_> {
    fn next(&mut self, cx: &mut Exec<'_, '_>) -> SqlResult<Option<crate::sql::exec::op::Batch>> {
        Ok(self.made(cx)?.next_batch())
    }

    fn take_all(&mut self, cx: &mut Exec<'_, '_>) -> SqlResult<Option<Vec<Row>>> {
        Ok(Some(self.made(cx)?.rest()))
    }
}

#[cfg(test)]
mod tests {
    use crate::sql::exec::op::{self, BATCH_ROWS};
    use crate::sql::plan::{Stage, Stat};
    use crate::types::Value;

    /// Rows of `t` and `u`: `a` 1..=N, `b = a % 7`.
    const N: i64 = 3000;

    fn db() -> (tempfile::TempDir, crate::Database) {
        let dir = tempfile::tempdir().unwrap();
        let db = crate::Database::open(dir.path()).unwrap();
        let mut s = db.session();
        for sql in [
            "CREATE DATABASE o",
            "USE o",
            "CREATE TABLE t (a BIGINT PRIMARY KEY, b BIGINT)",
            "CREATE TABLE u (a BIGINT PRIMARY KEY, b BIGINT)",
        ] {
            s.execute(sql).unwrap();
        }
        for t in ["t", "u"] {
            s.execute(&format!(
                "INSERT INTO {t} SELECT result, result % 7 FROM generate_series(1, {N}) g"
            ))
            .unwrap();
        }
        (dir, db)
    }

    /// The rows of `sql` and what each operator of it did, by stage.
    fn analyzed(db: &crate::Database, sql: &str) -> (Vec<Vec<Value>>, Vec<(Stage, Stat)>) {
        let mut s = db.session();
        s.execute("USE o").unwrap();
        op::start_analyzing();
        let r = s.execute(sql);
        let stats = op::stop_analyzing();
        let mut by_stage: Vec<(Stage, Stat)> =
            stats.into_iter().map(|((_, st), s)| (st, s)).collect();
        by_stage.sort_by_key(|(st, s)| (*st, s.rows));
        for (st, s) in &by_stage {
            // Every batch holds 1 to BATCH_ROWS rows.
            assert!(
                s.rows <= s.batches * BATCH_ROWS as u64 && s.batches <= s.rows,
                "{sql}: {st:?} {s:?}"
            );
        }
        (r.unwrap().rows, by_stage)
    }

    fn stage(stats: &[(Stage, Stat)], want: Stage) -> Vec<Stat> {
        stats
            .iter()
            .filter(|(s, _)| *s == want)
            .map(|(_, s)| *s)
            .collect()
    }

    fn one(stats: &[(Stage, Stat)], want: Stage) -> Stat {
        let all = stage(stats, want);
        assert_eq!(all.len(), 1, "{want:?}: {stats:?}");
        all[0]
    }

    /// A block's rows pass up in batches of at most BATCH_ROWS, counted
    /// per operator under EXPLAIN ANALYZE.
    #[test]
    fn rows_pass_in_bounded_batches() {
        let (_d, db) = db();
        let (rows, st) = analyzed(&db, "SELECT a + 0 FROM t");
        assert_eq!(rows.len(), N as usize);
        let batches = (N as u64).div_ceil(BATCH_ROWS as u64);
        for s in [Stage::Scan, Stage::Project, Stage::Node] {
            let s = one(&st, s);
            assert_eq!(
                (s.rows, s.batches, s.loops),
                (N as u64, batches, 1),
                "{st:?}"
            );
        }
        // No operator the block does not need.
        for s in [Stage::Filter, Stage::Aggregate, Stage::Sort, Stage::Limit] {
            assert!(stage(&st, s).is_empty(), "{s:?} in {st:?}");
        }
    }

    /// A LIMIT stops pulling once it has its rows: the block over a join
    /// passes one batch of the join's rows up, not all of them.
    #[test]
    fn a_limit_stops_pulling_early() {
        let (_d, db) = db();
        let (rows, st) = analyzed(&db, "SELECT t.a + u.b FROM t JOIN u ON u.a = t.a LIMIT 5");
        assert_eq!(rows.len(), 5);
        let limit = one(&st, Stage::Limit);
        assert_eq!((limit.rows, limit.batches), (5, 1), "{st:?}");
        let project = one(&st, Stage::Project);
        assert_eq!(
            (project.rows, project.batches),
            (BATCH_ROWS as u64, 1),
            "{st:?}"
        );
        // The join made all its rows (it materializes); the block's scan of
        // them passed one batch on.
        let nodes = stage(&st, Stage::Node);
        assert!(nodes.iter().any(|s| s.rows == N as u64), "{st:?}");
        let scans = stage(&st, Stage::Scan);
        assert!(
            scans
                .iter()
                .any(|s| (s.rows, s.batches) == (BATCH_ROWS as u64, 1)),
            "{st:?}"
        );
        // An EXISTS stops its subquery at its first batch, a scalar
        // subquery at its second row.
        for (sql, want) in [
            (
                "SELECT EXISTS (SELECT t.a + u.b FROM t JOIN u ON u.a = t.a)",
                Value::Bool(true),
            ),
            (
                "SELECT NOT EXISTS (SELECT t.a + u.b FROM t JOIN u ON u.a = t.a)",
                Value::Bool(false),
            ),
        ] {
            let (rows, st) = analyzed(&db, sql);
            assert_eq!(rows, vec![vec![want]], "{sql}");
            let projects = stage(&st, Stage::Project);
            assert!(
                projects
                    .iter()
                    .any(|s| (s.rows, s.batches) == (BATCH_ROWS as u64, 1)),
                "{sql}: {st:?}"
            );
            assert!(projects.iter().all(|s| s.rows < N as u64), "{sql}: {st:?}");
        }
        let mut s = db.session();
        s.execute("USE o").unwrap();
        let e = s
            .execute("SELECT (SELECT t.a + u.b FROM t JOIN u ON u.a = t.a)")
            .unwrap_err();
        assert_eq!(e.code, crate::error::code::SUBQUERY_NO_1_ROW, "{e:?}");
    }

    /// Each operator of a block records its stage: scan (stopped early by
    /// LIMIT when the primary key gives the order), filter, aggregate,
    /// window, project, sort, distinct, limit.
    #[test]
    fn every_stage_records_its_figures() {
        let (_d, db) = db();
        let threes = (1..=N).filter(|a| a % 7 == 3).count() as u64;
        let (rows, st) = analyzed(&db, "SELECT a FROM t WHERE b = 3 ORDER BY a LIMIT 2");
        assert_eq!(rows, vec![vec![Value::Int(3)], vec![Value::Int(10)]]);
        // The primary key's order: the scan stops at 2 rows.
        assert_eq!(one(&st, Stage::Scan).rows, 2, "{st:?}");
        assert_eq!(one(&st, Stage::Filter).rows, 2, "{st:?}");
        assert_eq!(one(&st, Stage::Sort).rows, 2, "{st:?}");
        assert_eq!(one(&st, Stage::Limit).rows, 2, "{st:?}");

        let (rows, st) = analyzed(&db, "SELECT a FROM t WHERE b = 3 ORDER BY a DESC LIMIT 2");
        assert_eq!(rows.len(), 2);
        assert_eq!(one(&st, Stage::Filter).rows, threes, "{st:?}");
        assert_eq!(one(&st, Stage::Project).rows, threes, "{st:?}");
        assert_eq!(one(&st, Stage::Sort).rows, 2, "{st:?}");

        // An aggregate over a join's rows (not folded in a table scan).
        let (rows, st) = analyzed(
            &db,
            "SELECT t.b, COUNT(*) FROM t JOIN u ON u.a = t.a GROUP BY t.b \
             HAVING COUNT(*) > 0 ORDER BY t.b DESC LIMIT 3",
        );
        assert_eq!(rows.len(), 3);
        assert_eq!(one(&st, Stage::Aggregate).rows, 7, "{st:?}");
        assert_eq!(one(&st, Stage::Sort).rows, 3, "{st:?}");
        assert!(one(&st, Stage::Aggregate).peak_bytes > 0, "{st:?}");

        let (rows, st) = analyzed(
            &db,
            "SELECT a, ROW_NUMBER() OVER (ORDER BY a DESC) FROM t WHERE a <= 10",
        );
        assert_eq!(rows.len(), 10);
        assert_eq!(one(&st, Stage::Window).rows, 10, "{st:?}");

        let (rows, st) = analyzed(&db, "SELECT DISTINCT b FROM t");
        assert_eq!(rows.len(), 7);
        assert_eq!(one(&st, Stage::Distinct).rows, 7, "{st:?}");
        assert_eq!(one(&st, Stage::Project).rows, N as u64, "{st:?}");
    }
}
