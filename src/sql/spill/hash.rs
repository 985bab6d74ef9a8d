//! Partitioning to disk for hash tables: the hybrid hash table of GROUP BY
//! and DISTINCT ([`Overflow`]) and the grace hash join ([`grace_join`]).
//!
//! A hash table that passes its budget (`tmp_table_size`) keeps the keys
//! it has — their rows still fold in memory — and writes each row of a new
//! key to one of [`PARTITIONS`] files by a hash of the key; afterwards
//! every file is read back into a fresh table, which may overflow in turn
//! (with another hash seed) down to [`MAX_DEPTH`] levels, past which the
//! table only grows (the statement's memory limit stays the hard cap).
//! Rows of one key land in one file in their input order, so each group's
//! first row is the one an in-memory table would keep.

use std::collections::HashMap;
use std::hash::{BuildHasher, Hash};
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;

use super::{Reader, Settings, SpillFile, Spillable, Spilled};
use crate::error::SqlResult;
use crate::sql::budget::{self, Reservation};
use crate::types::Value;

/// Files one overflowing table (or one side of a join) is split into.
pub const PARTITIONS: usize = 16;

/// Levels of re-partitioning before a table may grow past its budget
/// (16^4 = 65,536 partitions: a key that repeats beyond that many
/// budgets' worth of rows is not split by any hash).
pub const MAX_DEPTH: u32 = 4;

/// The partition of a key at `depth` (each depth hashes with its own
/// seed, so a re-partitioned file splits).
fn partition_of(key: &impl Hash, depth: u32) -> usize {
    let h = foldhash::fast::FixedState::with_seed(0x5eed_0000 + u64::from(depth)).hash_one(key);
    (h >> 40) as usize % PARTITIONS
}

/// Where a hash table's rows of new keys go once it is full.
pub struct Overflow {
    limit: u64,
    depth: u32,
    settings: Option<Arc<Settings>>,
    /// Each partition's file, created at its first row.
    parts: Vec<Option<SpillFile>>,
}

impl Overflow {
    /// A table of the running statement: full at its `tmp_table_size`
    /// (at most half what the statement may still hold); never on a
    /// thread with no spill settings.
    pub fn for_statement() -> Overflow {
        let (settings, limit) = super::statement_limit(|s| s.tmp_table);
        Overflow::with(settings, limit)
    }

    /// A table full at `limit` bytes, spilling with `settings` (none:
    /// never full).
    pub fn with(settings: Option<Arc<Settings>>, limit: u64) -> Overflow {
        Overflow {
            limit,
            depth: 0,
            settings,
            parts: Vec::new(),
        }
    }

    /// Whether a table holding `bytes` must send rows of new keys to disk.
    pub fn full(&self, bytes: u64) -> bool {
        self.settings.is_some() && self.depth < MAX_DEPTH && bytes >= self.limit
    }

    /// Write a row (a record of rows) of the new key `key` to its
    /// partition.
    pub fn put(&mut self, key: &[u8], rec: &[&[Value]]) -> SqlResult<()> {
        self.file_for(key)?.write(rec)
    }

    /// Write an item of the new key `key` to its partition.
    pub fn put_item<T: Spillable>(&mut self, key: &[u8], item: &T) -> SqlResult<()> {
        item.write(self.file_for(key)?)
    }

    /// The bytes past which this table spills (`None`: never).
    pub fn limit(&self) -> Option<u64> {
        self.settings.as_ref().map(|_| self.limit)
    }

    fn file_for(&mut self, key: &[u8]) -> SqlResult<&mut SpillFile> {
        let Some(settings) = &self.settings else {
            return Err(crate::error::SqlError::internal(
                "a table with no tmpdir overflowed",
            ));
        };
        if self.parts.is_empty() {
            if self.depth == 0 {
                settings.stats.disk_tables.fetch_add(1, Relaxed);
            }
            self.parts.resize_with(PARTITIONS, || None);
        }
        let slot = &mut self.parts[partition_of(&key, self.depth)];
        if slot.is_none() {
            *slot = Some(SpillFile::create(settings)?);
        }
        slot.as_mut()
            .ok_or_else(|| crate::error::SqlError::internal("no partition file"))
    }

    /// The partitions written, each to be read into a fresh table.
    pub fn finish(self) -> SqlResult<Vec<Partition>> {
        let mut out = Vec::new();
        for f in self.parts.into_iter().flatten() {
            if f.records() > 0 {
                out.push(Partition {
                    data: f.finish()?,
                    depth: self.depth + 1,
                    limit: self.limit,
                    settings: self.settings.clone(),
                });
            }
        }
        Ok(out)
    }
}

/// One partition of an overflowed table.
pub struct Partition {
    data: Spilled,
    depth: u32,
    limit: u64,
    settings: Option<Arc<Settings>>,
}

impl Partition {
    /// Where the table that reads this partition overflows to (the next
    /// level's seed).
    pub fn overflow(&self) -> Overflow {
        Overflow {
            limit: self.limit,
            depth: self.depth,
            settings: self.settings.clone(),
            parts: Vec::new(),
        }
    }

    /// Its records, in the order they were written.
    pub fn reader(self) -> SqlResult<Reader> {
        self.data.reader()
    }
}

/// DISTINCT of what an overflowing table sent to disk: each partition
/// read into a fresh set of keys (`key` of an item), the first item of
/// each new key appended to `out` in the partition's order; a partition
/// that overflows in turn is split again.
pub fn distinct_partitions<T: Spillable>(
    overflow: Overflow,
    out: &mut Vec<T>,
    key: impl Fn(&T) -> Vec<u8>,
) -> SqlResult<()> {
    let mut pending = overflow.finish()?;
    while let Some(p) = pending.pop() {
        let mut below = p.overflow();
        let mut r = p.reader()?;
        let records = std::iter::from_fn(|| r.next_record().transpose());
        keep_first(records.map(|rec| T::read(rec?)), &mut below, out, &key)?;
        pending.extend(below.finish()?);
    }
    Ok(())
}

/// The first item of each key of `items` appended to `out`, in order,
/// while the set of keys seen fits `overflow`'s limit; past it, the items
/// of keys not seen yet go to `overflow`'s partition files (a key already
/// seen stays dropped). The key set and its charge end with the call.
fn keep_first<T: Spillable>(
    items: impl Iterator<Item = SqlResult<T>>,
    overflow: &mut Overflow,
    out: &mut Vec<T>,
    key: &impl Fn(&T) -> Vec<u8>,
) -> SqlResult<()> {
    let mut seen: std::collections::HashSet<Vec<u8>, foldhash::fast::RandomState> =
        Default::default();
    let mut mem = Reservation::new();
    for item in items {
        let item = item?;
        let k = key(&item);
        if seen.contains(&k) {
            continue;
        }
        if !seen.is_empty() && overflow.full(mem.bytes()) {
            overflow.put_item(&k, &item)?;
            continue;
        }
        mem.add(k.len() + 48)?;
        seen.insert(k);
        out.push(item);
    }
    Ok(())
}

/// DISTINCT of `items` by `key`: the first item of each key, in their
/// order while the set of keys fits the statement's `tmp_table_size`;
/// past it, items of new keys go to partition files and come after
/// ([`distinct_partitions`]).
pub fn distinct<T: Spillable>(items: Vec<T>, key: impl Fn(&T) -> Vec<u8>) -> SqlResult<Vec<T>> {
    let mut overflow = Overflow::for_statement();
    let mut out = Vec::with_capacity(items.len());
    let ticked = items.into_iter().map(|item| budget::tick().map(|()| item));
    keep_first(ticked, &mut overflow, &mut out, &key)?;
    distinct_partitions(overflow, &mut out, key)?;
    Ok(out)
}

/// Where and within how many bytes a hash join whose build side holds
/// `build_bytes` must run as a [`grace_join`]; `None`: in memory.
pub fn join_spill(build_bytes: u64) -> Option<(Arc<Settings>, u64)> {
    let o = Overflow::for_statement();
    let limit = o.limit()?;
    (build_bytes > limit).then_some((o.settings?, limit))
}

/// One side's rows as they come: from memory, then from a partition file.
type Rows<'a> = dyn FnMut() -> SqlResult<Option<Vec<Value>>> + 'a;

/// The join key of a row of the left (`true`) or right side.
pub type JoinKey<'a, K> = dyn FnMut(bool, &[Value]) -> SqlResult<Option<K>> + 'a;

/// A joined pair, or an unmatched outer row: whether it was emitted.
pub type JoinEmit<'a> = dyn FnMut(Option<&[Value]>, Option<&[Value]>) -> SqlResult<bool> + 'a;

/// How a [`grace_join`] calls back into its join.
pub struct JoinSides<'a, K> {
    /// Build the hash table on the left side (else the right).
    pub build_left: bool,
    /// Emit left rows without a match (with `None` on the right).
    pub left_outer: bool,
    /// Emit right rows without a match.
    pub right_outer: bool,
    /// The join key of a row of the left (`true`) or right side; `None`
    /// (a NULL part) matches nothing.
    pub key: &'a mut JoinKey<'a, K>,
    /// Try a pair (`Some`, `Some`): whether it matched (the residual
    /// condition held) and was emitted; or emit an unmatched row of an
    /// outer side with `None` for the other.
    pub emit: &'a mut JoinEmit<'a>,
}

/// A grace hash join of `left` and `right` within `limit` bytes of build
/// rows: both sides are written to [`PARTITIONS`] files by key hash
/// (freeing them as they go), then each pair of files is joined in memory
/// — re-partitioned first while its build file is larger than `limit`, to
/// [`MAX_DEPTH`] levels. Every match and unmatched outer row goes to
/// `emit`, in no particular order.
pub fn grace_join<K: Hash + Eq>(
    settings: &Arc<Settings>,
    limit: u64,
    left: Vec<Vec<Value>>,
    right: Vec<Vec<Value>>,
    j: &mut JoinSides<'_, K>,
) -> SqlResult<()> {
    settings.stats.disk_tables.fetch_add(1, Relaxed);
    let mut l = left.into_iter();
    let mut r = right.into_iter();
    split(
        settings,
        limit,
        0,
        &mut || Ok(l.next()),
        &mut || Ok(r.next()),
        j,
    )
}

/// Partition both sides at `depth`, then join each pair of partitions.
fn split<K: Hash + Eq>(
    settings: &Arc<Settings>,
    limit: u64,
    depth: u32,
    left: &mut Rows<'_>,
    right: &mut Rows<'_>,
    j: &mut JoinSides<'_, K>,
) -> SqlResult<()> {
    let (lf, lbytes) = partition_side(settings, depth, true, left, j)?;
    let (rf, rbytes) = partition_side(settings, depth, false, right, j)?;
    let build_bytes = if j.build_left { lbytes } else { rbytes };
    for (p, (lf, rf)) in lf.into_iter().zip(rf).enumerate() {
        if lf.records() == 0 && rf.records() == 0 {
            continue;
        }
        let mut lr = lf.finish()?.reader()?;
        let mut rr = rf.finish()?.reader()?;
        let mut next_l = || read_row(&mut lr);
        let mut next_r = || read_row(&mut rr);
        if build_bytes[p] > limit && depth + 1 < MAX_DEPTH {
            split(settings, limit, depth + 1, &mut next_l, &mut next_r, j)?;
        } else {
            join_in_memory(&mut next_l, &mut next_r, j)?;
        }
    }
    Ok(())
}

/// Write one side's rows to [`PARTITIONS`] files by key hash at `depth`
/// (an unmatched outer row with a NULL key part is emitted at once):
/// the files and the bytes each holds in memory.
fn partition_side<K: Hash + Eq>(
    settings: &Arc<Settings>,
    depth: u32,
    is_left: bool,
    next: &mut Rows<'_>,
    j: &mut JoinSides<'_, K>,
) -> SqlResult<(Vec<SpillFile>, [u64; PARTITIONS])> {
    let mut files = Vec::with_capacity(PARTITIONS);
    for _ in 0..PARTITIONS {
        files.push(SpillFile::create(settings)?);
    }
    let mut bytes = [0u64; PARTITIONS];
    let outer = if is_left { j.left_outer } else { j.right_outer };
    while let Some(row) = next()? {
        match (j.key)(is_left, &row)? {
            Some(k) => {
                let p = partition_of(&k, depth);
                bytes[p] += budget::row_size(&row) as u64 + 48;
                files[p].write(&[&row])?;
            }
            None if outer => {
                let (l, r) = if is_left {
                    (Some(&row[..]), None)
                } else {
                    (None, Some(&row[..]))
                };
                (j.emit)(l, r)?;
            }
            None => budget::tick()?,
        }
    }
    Ok((files, bytes))
}

fn read_row(r: &mut Reader) -> SqlResult<Option<Vec<Value>>> {
    Ok(match r.next_record()? {
        Some(parts) => Some(<Vec<Value> as Spillable>::read(parts)?),
        None => None,
    })
}

/// Join one pair of partitions: the build side in a hash table, the
/// probe side streamed past it.
fn join_in_memory<K: Hash + Eq>(
    left: &mut Rows<'_>,
    right: &mut Rows<'_>,
    j: &mut JoinSides<'_, K>,
) -> SqlResult<()> {
    let (build_rows, probe_rows): (&mut Rows<'_>, &mut Rows<'_>) = if j.build_left {
        (left, right)
    } else {
        (right, left)
    };
    let mut mem = Reservation::new();
    let mut build: Vec<Vec<Value>> = Vec::new();
    let mut table: HashMap<K, Vec<usize>, foldhash::fast::RandomState> = HashMap::default();
    while let Some(row) = build_rows()? {
        mem.add(budget::row_size(&row) + 48)?;
        if let Some(k) = (j.key)(j.build_left, &row)? {
            table.entry(k).or_default().push(build.len());
        }
        build.push(row);
    }
    let mut matched = vec![false; build.len()];
    let (build_outer, probe_outer) = if j.build_left {
        (j.left_outer, j.right_outer)
    } else {
        (j.right_outer, j.left_outer)
    };
    while let Some(row) = probe_rows()? {
        let mut any = false;
        if let Some(k) = (j.key)(!j.build_left, &row)? {
            for &bi in table.get(&k).map_or(&[][..], |v| &v[..]) {
                budget::tick()?;
                let hit = if j.build_left {
                    (j.emit)(Some(&build[bi]), Some(&row))?
                } else {
                    (j.emit)(Some(&row), Some(&build[bi]))?
                };
                if hit {
                    matched[bi] = true;
                    any = true;
                }
            }
        }
        if !any && probe_outer {
            if j.build_left {
                (j.emit)(None, Some(&row))?;
            } else {
                (j.emit)(Some(&row), None)?;
            }
        }
    }
    if build_outer {
        for (row, m) in build.iter().zip(&matched) {
            if !m {
                budget::tick()?;
                if j.build_left {
                    (j.emit)(Some(row), None)?;
                } else {
                    (j.emit)(None, Some(row))?;
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::tests::{files_in, settings};
    use super::*;

    #[test]
    fn overflow_sends_new_keys_to_partitions_and_splits_again_below() {
        let (_d, s) = settings(1 << 10);
        let mut o = Overflow::with(Some(s.clone()), 100);
        assert!(!o.full(99) && o.full(100));
        for i in 0..1000i64 {
            let k = i.to_le_bytes();
            o.put(&k, &[&[Value::Int(i)], &[]]).unwrap();
        }
        assert_eq!(files_in(&s.dir), PARTITIONS);
        let parts = o.finish().unwrap();
        assert!(parts.len() > PARTITIONS / 2, "{}", parts.len());
        let mut seen = Vec::new();
        for p in parts {
            let mut below = p.overflow();
            let mut r = p.reader().unwrap();
            let mut mine = Vec::new();
            while let Some(rec) = r.next_record().unwrap() {
                assert_eq!(rec.len(), 2);
                let Value::Int(i) = rec[0][0] else { panic!() };
                // In input order within a partition.
                assert!(mine.last().is_none_or(|&l| l < i));
                mine.push(i);
                below.put(&i.to_le_bytes(), &[&rec[0]]).unwrap();
            }
            // The next level splits the partition again.
            let sub = below.finish().unwrap();
            assert!(sub.len() > 1, "{}", sub.len());
            seen.extend(mine);
        }
        seen.sort_unstable();
        assert_eq!(seen, (0..1000).collect::<Vec<_>>());
        assert_eq!(files_in(&s.dir), 0);
        assert_eq!(s.stats.disk_tables.load(Relaxed), 1);
        // Past the deepest level a table is never full.
        let deep = Overflow {
            depth: MAX_DEPTH,
            ..Overflow::with(Some(s), 0)
        };
        assert!(!deep.full(u64::MAX));
        assert!(!Overflow::with(None, 0).full(u64::MAX));
    }

    type Pair = (Option<Vec<Value>>, Option<Vec<Value>>);

    #[test]
    fn distinct_keeps_each_key_once_whatever_the_budget() {
        let items: Vec<Vec<Value>> = (0..20_000i64)
            .map(|i| vec![Value::Int((i * 7919) % 5000), Value::Text(format!("{i}"))])
            .collect();
        let key = |r: &Vec<Value>| crate::catalog::codec::encode_row(&r[..1]);
        // In memory: the first of each key, in order.
        let mut want = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for r in &items {
            if seen.insert(key(r)) {
                want.push(r.clone());
            }
        }
        let none = distinct(items.clone(), key).unwrap();
        assert_eq!(none, want);
        let (_d, s) = settings(4 << 10);
        let _scope = super::super::enter(s.clone());
        let mut got = distinct(items, key).unwrap();
        assert!(s.stats.disk_tables.load(Relaxed) == 1, "spilled");
        assert_eq!(files_in(&s.dir), 0);
        // Spilled: the same rows (each key's first), in another order.
        got.sort_by(|a, b| a[0].total_cmp(&b[0]));
        want.sort_by(|a, b| a[0].total_cmp(&b[0]));
        assert_eq!(got, want);
    }

    /// A join by brute force: every matching pair, then unmatched outer
    /// rows; sorted for comparison.
    fn brute(l: &[Vec<Value>], r: &[Vec<Value>], lo: bool, ro: bool) -> Vec<Pair> {
        let key = |x: &Vec<Value>| (!x[0].is_null()).then(|| x[0].clone());
        let mut out = Vec::new();
        for a in l {
            let mut any = false;
            for b in r {
                if key(a).is_some() && key(a) == key(b) && a[1] != b[1] {
                    out.push((Some(a.clone()), Some(b.clone())));
                    any = true;
                }
            }
            if !any && lo {
                out.push((Some(a.clone()), None));
            }
        }
        if ro {
            for b in r {
                let hit = l
                    .iter()
                    .any(|a| key(a).is_some() && key(a) == key(b) && a[1] != b[1]);
                if !hit {
                    out.push((None, Some(b.clone())));
                }
            }
        }
        out.sort_by(|x, y| format!("{x:?}").cmp(&format!("{y:?}")));
        out
    }

    #[test]
    fn grace_join_equals_the_join_by_brute_force() {
        let side = |n: i64, m: i64, seed: i64| -> Vec<Vec<Value>> {
            (0..n)
                .map(|i| {
                    let k = if i % 17 == 0 {
                        Value::Null
                    } else {
                        Value::Int((i * seed) % m)
                    };
                    vec![k, Value::Int(i % 3), Value::Text(format!("{seed}:{i}"))]
                })
                .collect()
        };
        let (l, r) = (side(700, 150, 7), side(500, 200, 3));
        for (build_left, lo, ro) in [
            (true, false, false),
            (false, false, false),
            (false, true, false),
            (true, false, true),
            (false, true, true),
        ] {
            for limit in [64u64, 2048, u64::MAX] {
                let (_d, s) = settings(limit);
                let mut got = Vec::new();
                let mut key = |_: bool, row: &[Value]| -> SqlResult<Option<i64>> {
                    Ok(match row[0] {
                        Value::Int(i) => Some(i),
                        _ => None,
                    })
                };
                // The residual: the second columns differ.
                let mut emit = |a: Option<&[Value]>, b: Option<&[Value]>| -> SqlResult<bool> {
                    if let (Some(x), Some(y)) = (a, b) {
                        if x[1] == y[1] {
                            return Ok(false);
                        }
                    }
                    got.push((a.map(<[Value]>::to_vec), b.map(<[Value]>::to_vec)));
                    Ok(true)
                };
                grace_join(
                    &s,
                    limit,
                    l.clone(),
                    r.clone(),
                    &mut JoinSides {
                        build_left,
                        left_outer: lo,
                        right_outer: ro,
                        key: &mut key,
                        emit: &mut emit,
                    },
                )
                .unwrap();
                got.sort_by(|x, y| format!("{x:?}").cmp(&format!("{y:?}")));
                assert_eq!(got, brute(&l, &r, lo, ro), "{build_left} {lo} {ro} {limit}");
                assert_eq!(files_in(&s.dir), 0);
            }
        }
    }
}
