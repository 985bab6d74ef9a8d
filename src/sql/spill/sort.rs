//! External merge sort: items sorted in memory up to the sort's budget
//! (`sort_buffer_size`), each full buffer written as a sorted run, runs
//! merged [`FAN_IN`] at a time (a `Sort_merge_passes` each) into the
//! sorted stream. Stable: runs hold consecutive input and ties are taken
//! from the earlier run first. Never holds more than one buffer of items
//! plus one item and one read buffer per run being merged.

use std::cmp::Ordering;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;

use super::{Reader, Settings, SpillFile, Spillable, Spilled};
use crate::error::SqlResult;
use crate::sql::budget::{self, Reservation};

/// Runs merged at once (each holds a read buffer of [`super::BUFFER`]).
pub const FAN_IN: usize = 32;

/// A sort that spills sorted runs past its budget.
pub struct Sorter<T: Spillable> {
    items: Vec<T>,
    /// The items' charge.
    mem: Reservation,
    bytes: u64,
    limit: u64,
    settings: Option<Arc<Settings>>,
    runs: Vec<Spilled>,
    /// Only the first this many items are wanted (a LIMIT): a full
    /// buffer keeps them instead of spilling while they are at most
    /// half of it.
    top: Option<usize>,
}

impl<T: Spillable> Sorter<T> {
    /// Only the first `k` items in order will be read: a full buffer is
    /// sorted and cut to them (a top-N never spills while `k` items fill
    /// at most half the buffer).
    pub fn top(mut self, k: Option<usize>) -> Self {
        self.top = k;
        self
    }

    /// A sort of the running statement: spills past its `sort_buffer_size`
    /// (at most half what the statement may still hold); never on a
    /// thread with no spill settings.
    pub fn for_statement() -> Self {
        let (settings, limit) = super::statement_limit(|s| s.sort_buffer);
        Self::with(settings, limit)
    }

    /// A sort spilling past `limit` bytes with `settings` (none: never).
    pub fn with(settings: Option<Arc<Settings>>, limit: u64) -> Self {
        Sorter {
            items: Vec::new(),
            mem: Reservation::new(),
            bytes: 0,
            limit,
            settings,
            runs: Vec::new(),
            top: None,
        }
    }

    /// Add an item; past the budget the buffer is sorted by `cmp` and
    /// written as a run.
    pub fn push(&mut self, item: T, cmp: &impl Fn(&T, &T) -> Ordering) -> SqlResult<()> {
        let n = item.size();
        self.mem.add(n)?;
        self.bytes += n as u64;
        self.items.push(item);
        if self.bytes > self.limit && self.settings.is_some() {
            match self.top {
                Some(k) if k.saturating_mul(2) <= self.items.len() && self.runs.is_empty() => {
                    // A stable sort and its prefix: ties keep input order.
                    budget::sort_by(&mut self.items, cmp)?;
                    budget::drop_ticking(self.items.split_off(k))?;
                    self.mem = Reservation::new();
                    let kept: usize = self.items.iter().map(Spillable::size).sum();
                    self.mem.add(kept)?;
                    self.bytes = kept as u64;
                }
                _ => self.write_run(cmp)?,
            }
        }
        Ok(())
    }

    /// What the caller sorts itself (nothing spilled: the items, unsorted,
    /// and their charge), or the merge of the runs.
    pub fn done(self, cmp: &impl Fn(&T, &T) -> Ordering) -> SqlResult<Sorted<T>> {
        if self.runs.is_empty() {
            return Ok(Sorted::InMemory(self.items, self.mem));
        }
        self.finish(cmp).map(Sorted::Merged)
    }

    fn write_run(&mut self, cmp: &impl Fn(&T, &T) -> Ordering) -> SqlResult<()> {
        let Some(settings) = &self.settings else {
            return Ok(());
        };
        budget::sort_by(&mut self.items, cmp)?;
        let mut f = SpillFile::create(settings)?;
        for it in std::mem::take(&mut self.items) {
            it.write(&mut f)?;
        }
        self.runs.push(f.finish()?);
        self.mem = Reservation::new();
        self.bytes = 0;
        Ok(())
    }

    /// The items in order: merged from the runs (the buffer written as the
    /// last run), after as many passes as there are more than [`FAN_IN`]
    /// runs.
    pub fn finish(mut self, cmp: &impl Fn(&T, &T) -> Ordering) -> SqlResult<Merge<T>> {
        if self.runs.is_empty() {
            budget::sort_by(&mut self.items, cmp)?;
            return Ok(Merge {
                memory: std::mem::take(&mut self.items).into_iter(),
                _mem: std::mem::take(&mut self.mem),
                heads: Vec::new(),
                readers: Vec::new(),
            });
        }
        if !self.items.is_empty() {
            self.write_run(cmp)?;
        }
        let Some(settings) = self.settings.clone() else {
            return Err(crate::error::SqlError::internal("spilled without settings"));
        };
        let mut runs = std::mem::take(&mut self.runs);
        while runs.len() > FAN_IN {
            // One level: each FAN_IN consecutive runs merged into one (in
            // their order, so ties keep theirs).
            let mut level = Vec::with_capacity(runs.len().div_ceil(FAN_IN));
            let mut rest = runs.into_iter();
            loop {
                let group: Vec<Spilled> = rest.by_ref().take(FAN_IN).collect();
                if group.len() <= 1 {
                    level.extend(group);
                    break;
                }
                let mut m = Merge::of(group)?;
                settings.stats.merge_passes.fetch_add(1, Relaxed);
                let mut f = SpillFile::create(&settings)?;
                while let Some(it) = m.next(cmp)? {
                    it.write(&mut f)?;
                }
                level.push(f.finish()?);
            }
            runs = level;
        }
        settings.stats.merge_passes.fetch_add(1, Relaxed);
        Merge::of(runs)
    }
}

/// What a [`Sorter`] ends with.
pub enum Sorted<T: Spillable> {
    /// Nothing spilled: the items in input order, and their charge.
    InMemory(Vec<T>, Reservation),
    /// Runs on disk: their merge.
    Merged(Merge<T>),
}

/// The sorted stream of a [`Sorter`].
pub struct Merge<T: Spillable> {
    /// A sort that never spilled: its sorted items.
    memory: std::vec::IntoIter<T>,
    _mem: Reservation,
    /// The next item of each run (`None`: run ended).
    heads: Vec<Option<T>>,
    readers: Vec<Reader>,
}

impl<T: Spillable> Merge<T> {
    fn of(runs: Vec<Spilled>) -> SqlResult<Merge<T>> {
        let mut readers = runs
            .into_iter()
            .map(Spilled::reader)
            .collect::<SqlResult<Vec<_>>>()?;
        let mut heads = Vec::with_capacity(readers.len());
        for r in &mut readers {
            heads.push(r.next_record()?.map(T::read).transpose()?);
        }
        Ok(Merge {
            memory: Vec::new().into_iter(),
            _mem: Reservation::new(),
            heads,
            readers,
        })
    }

    /// The next item in order (ties: the earlier run's first).
    pub fn next(&mut self, cmp: &impl Fn(&T, &T) -> Ordering) -> SqlResult<Option<T>> {
        if let Some(x) = self.memory.next() {
            budget::tick()?;
            return Ok(Some(x));
        }
        let mut best: Option<usize> = None;
        for i in 0..self.heads.len() {
            let Some(h) = &self.heads[i] else { continue };
            let better = match best.and_then(|b| self.heads[b].as_ref()) {
                Some(x) => cmp(h, x) == Ordering::Less,
                None => true,
            };
            if better {
                best = Some(i);
            }
        }
        let Some(b) = best else { return Ok(None) };
        let next = self.readers[b].next_record()?.map(T::read).transpose()?;
        Ok(std::mem::replace(&mut self.heads[b], next))
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{files_in, settings};
    use super::*;
    use crate::types::Value;

    type Item = (Vec<Value>, Vec<Value>);

    fn rows(n: usize, seed: u64) -> Vec<(Vec<Value>, Vec<Value>)> {
        let mut x = seed;
        (0..n)
            .map(|i| {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let k = (x >> 40) % 1000;
                (
                    vec![Value::Int(i as i64), Value::Text(format!("row {i}"))],
                    vec![Value::Int(k as i64)],
                )
            })
            .collect()
    }

    fn by_key(a: &(Vec<Value>, Vec<Value>), b: &(Vec<Value>, Vec<Value>)) -> Ordering {
        a.1[0].total_cmp(&b.1[0])
    }

    fn sorted(budget: u64, input: Vec<(Vec<Value>, Vec<Value>)>) -> (Vec<Item>, u64, usize) {
        let (_d, s) = settings(budget);
        let mut sorter = Sorter::with(Some(s.clone()), budget);
        for r in input {
            sorter.push(r, &by_key).unwrap();
        }
        let mut m = sorter.finish(&by_key).unwrap();
        let mut out = Vec::new();
        while let Some(r) = m.next(&by_key).unwrap() {
            out.push(r);
        }
        let during = files_in(&s.dir);
        drop(m);
        assert_eq!(files_in(&s.dir), 0, "runs are removed once merged");
        (out, s.stats.merge_passes.load(Relaxed), during)
    }

    #[test]
    fn spilled_sort_equals_the_stable_in_memory_sort() {
        for (n, budget) in [
            (0, 1 << 10),
            (10, 1 << 10),
            (5000, 1 << 30),
            (20_000, 64 << 10),
            (50_000, 16 << 10),
        ] {
            let input = rows(n, n as u64 + 3);
            let mut want = input.clone();
            want.sort_by(by_key);
            let (got, passes, _) = sorted(budget, input);
            assert_eq!(got, want, "n = {n}, budget = {budget}");
            if budget < 1 << 20 && n > 0 {
                assert!(passes >= 1, "n = {n}: spilled and merged");
            } else {
                assert_eq!(passes, 0);
            }
        }
        // 50,000 rows in 16 KiB runs: more runs than one merge takes.
        let (_, passes, _) = sorted(16 << 10, rows(50_000, 1));
        assert!(passes > 1, "{passes}");
    }

    #[test]
    fn a_top_n_keeps_its_prefix_in_memory() {
        let input = rows(30_000, 9);
        let mut want = input.clone();
        want.sort_by(by_key);
        for k in [0, 1, 10, 25] {
            let (_d, s) = settings(16 << 10);
            let mut sorter = Sorter::with(Some(s.clone()), 16 << 10).top(Some(k));
            for r in input.clone() {
                sorter.push(r, &by_key).unwrap();
            }
            let Sorted::InMemory(mut items, _mem) = sorter.done(&by_key).unwrap() else {
                panic!("k = {k}: a top-N spilled")
            };
            items.sort_by(by_key);
            items.truncate(k);
            assert_eq!(items, want[..k], "k = {k}");
            assert_eq!(s.stats.files.load(Relaxed), 0);
        }
        // A prefix larger than half the buffer spills as any sort.
        let (_d, s) = settings(16 << 10);
        let mut sorter = Sorter::with(Some(s.clone()), 16 << 10).top(Some(20_000));
        for r in input {
            sorter.push(r, &by_key).unwrap();
        }
        assert!(matches!(sorter.done(&by_key).unwrap(), Sorted::Merged(_)));
    }

    #[test]
    fn never_spills_without_settings() {
        let mut s: Sorter<Vec<Value>> = Sorter::with(None, 0);
        let cmp = |a: &Vec<Value>, b: &Vec<Value>| a[0].total_cmp(&b[0]);
        for i in (0..100).rev() {
            s.push(vec![Value::Int(i)], &cmp).unwrap();
        }
        let Sorted::InMemory(items, _mem) = s.done(&cmp).unwrap() else {
            panic!("spilled with no settings")
        };
        assert_eq!(items.len(), 100);
    }
}
