//! The window operator: computes a query block's window functions
//! (`f(…) OVER (PARTITION BY … ORDER BY …)`) over the block's rows after
//! WHERE / GROUP BY / HAVING and before DISTINCT / ORDER BY / LIMIT, as
//! MySQL does.
//!
//! Owns: for each window call (an aggregate slot whose [`AggCall::window`]
//! is set, see [`crate::sql::expr::Window`]), sorting the block's output
//! units by (partition keys, order keys) with the bounded, interruptible
//! [`budget::sort_by`] — positions, not units, on keys evaluated once per
//! unit (a plain column read in place) and packed into one `u128` per unit
//! when they are numbers of small enough ranges, else encoded into
//! memcomparable bytes when each key column is of one kind, else compared
//! as values — and writing the function's value into that slot of
//! every unit; the select list and ORDER BY then read it like an
//! aggregate. The functions: ROW_NUMBER, RANK, DENSE_RANK, PERCENT_RANK,
//! CUME_DIST, NTILE, LAG, LEAD, FIRST_VALUE, LAST_VALUE, NTH_VALUE and
//! every aggregate (COUNT / SUM / AVG / MIN / MAX and those of
//! [`crate::sql::agg_stats`]) with MySQL's default frame (the whole
//! partition without ORDER BY; with ORDER BY from the partition's start to
//! the current row's last peer) or an explicit ROWS / RANGE frame
//! ([`crate::sql::expr::Frame`]; a RANGE offset finds its rows by binary
//! search on the one ORDER BY key). Aggregates reuse the GROUP BY fold ([`agg_update`] /
//! [`agg_final`]) and its result types; a frame whose both ends move is
//! slid ([`super::window_slide`]) or folded afresh. Named windows
//! (`WINDOW w AS (…)`) are resolved, and specifications refused as MySQL
//! refuses them, while compiling ([`crate::sql::expr::window_spec`]); a
//! RANGE offset's key type is checked while planning
//! ([`crate::sql::plan::window::check_range_types`]).
//!
//! Never: plans (the compiler refuses the rest of the syntax with 1235 /
//! 3593, [`crate::sql::plan::window::check_placement`] catches aliases
//! used where a window may not be), reads tables, or grows memory unbudgeted (keys are charged to the
//! block's reservation, every loop ticks).

use std::cmp::Ordering;

use crate::error::SqlResult;
use crate::sql::budget::{self, Reservation};
use crate::sql::exec::agg::{agg_final, agg_update, AggState};
use crate::sql::exec::apply as exec; // exec::Prepared, not the dispatcher
use crate::sql::exec::unit::{is_distance_key, key_order, Exprs, Unit, WindowExprs as Prepared};
use crate::sql::expr::{AggCall, CExpr, Frame, FrameBound, WinFunc};
use crate::sql::plan::Plan;
use crate::types::Value;

/// A NULL to borrow where a unit's row is shorter than a column position.
static NULL: Value = Value::Null;

/// One window expression's value for every unit: a plain column of the
/// unit's row read in place (never cloned), or evaluated once per unit.
enum Column {
    Row(usize),
    Values(Vec<Value>),
}

impl Column {
    /// The column of expression `p` over `units`: a column reference
    /// without subqueries reads the unit's row (as `ev` would, whose
    /// context row is the unit's first part); anything else is evaluated
    /// once per unit and charged to `mem`.
    fn of(
        p: &exec::Prepared<'_>,
        units: &[Unit],
        mem: &mut Reservation,
        ev: &mut dyn FnMut(&exec::Prepared<'_>, &Unit) -> SqlResult<Value>,
    ) -> SqlResult<Column> {
        if let (CExpr::Col(i), false) = (p.expr(), p.per_row()) {
            return Ok(Column::Row(*i));
        }
        let mut vals = Vec::with_capacity(units.len());
        mem.add(units.len() * std::mem::size_of::<Value>())?;
        for u in units {
            budget::tick()?;
            let v = ev(p, u)?;
            mem.add(budget::approx_size(&v) - std::mem::size_of::<Value>())?;
            vals.push(v);
        }
        Ok(Column::Values(vals))
    }

    #[inline]
    fn at<'a>(&'a self, units: &'a [Unit], i: usize) -> &'a Value {
        match self {
            Column::Row(c) => units[i].0.get(*c).unwrap_or(&NULL),
            Column::Values(v) => &v[i],
        }
    }
}

/// How a key column's values are encoded into the memcomparable sort key:
/// every non-NULL value of the column of one kind, so that byte order is
/// [`Value::total_cmp`]'s order.
#[derive(Clone, Copy, PartialEq, Debug)]
enum KeyKind {
    /// Only NULLs.
    Nulls,
    /// BOOL / INT / DATETIME (one of them), as an `i64`.
    Int(u8),
    Float,
    /// DECIMALs of one scale (held as shown) whose mantissas fit an
    /// `i64`, as the mantissa.
    Decimal(u8),
    Text,
}

/// The kind every non-NULL value of `col` shares, `None` when they are of
/// different kinds (or a kind that has no fixed encoding here): the
/// operator then compares values.
#[cfg(test)]
fn key_kind(col: &Column, units: &[Unit]) -> SqlResult<Option<KeyKind>> {
    Ok(col_stats(col, units)?.kind)
}

/// What one pass over a key column learns: the kind its non-NULL values
/// share ([`KeyKind`]; `None`: mixed, or no fixed encoding) and the range
/// of their order-preserving codes ([`code`]; empty for text), and whether
/// it has NULLs — what packing needs ([`Keys::pack`]), without a second
/// pass.
struct ColStats {
    kind: Option<KeyKind>,
    lo: u64,
    hi: u64,
    nulls: bool,
}

fn col_stats(col: &Column, units: &[Unit]) -> SqlResult<ColStats> {
    let mut kind = KeyKind::Nulls;
    let (mut lo, mut hi, mut nulls) = (u64::MAX, 0u64, false);
    let mut buf = Vec::with_capacity(16);
    let mixed = ColStats {
        kind: None,
        lo,
        hi,
        nulls,
    };
    for i in 0..units.len() {
        budget::tick()?;
        let v = col.at(units, i);
        let k = match v {
            Value::Null => {
                nulls = true;
                continue;
            }
            Value::Bool(_) => KeyKind::Int(0),
            Value::Int(_) => KeyKind::Int(1),
            Value::DateTime(_) => KeyKind::Int(2),
            Value::Float(_) => KeyKind::Float,
            // Bytes key as text does (one column holds one of the two).
            Value::Text(_) | Value::Bytes(_) => KeyKind::Text,
            Value::Decimal(d) => {
                buf.clear();
                d.mantissa_bytes(&mut buf);
                if d.held_scale() != d.scale() || buf.len() > 8 {
                    return Ok(mixed);
                }
                KeyKind::Decimal(d.scale())
            }
            Value::Vector(_) => return Ok(mixed),
        };
        if kind == KeyKind::Nulls {
            kind = k;
        } else if kind != k {
            return Ok(mixed);
        }
        if let Some(x) = code(v, &mut buf) {
            lo = lo.min(x);
            hi = hi.max(x);
        }
    }
    Ok(ColStats {
        kind: Some(kind),
        lo,
        hi,
        nulls,
    })
}

/// Append `v`'s key bytes (a column of kind `kind`) to `out`: a flag byte
/// (NULL before any value, or after every one for a vector distance, in
/// both directions), then the value's order-preserving bytes, inverted
/// for a descending key. `buf` is scratch space.
fn encode_key(out: &mut Vec<u8>, v: &Value, desc: bool, distance: bool, buf: &mut Vec<u8>) {
    let flip = if desc { 0xFF } else { 0 };
    let start = out.len();
    match v {
        Value::Null if distance => return out.push(0x02),
        Value::Null => return out.push(flip),
        _ if distance => out.push(0x01),
        _ => out.push(0x01 ^ flip),
    }
    let body = out.len();
    match v {
        Value::Null => {}
        Value::Bool(b) => out.push(u8::from(*b)),
        // One scale for a DECIMAL column (`col_stats`): its mantissa.
        Value::Int(_) | Value::DateTime(_) | Value::Float(_) | Value::Decimal(_) => {
            if let Some(c) = code(v, buf) {
                out.extend_from_slice(&c.to_be_bytes());
            }
        }
        Value::Text(_) | Value::Bytes(_) => {
            let raw: &[u8] = match v {
                Value::Bytes(b) => b,
                Value::Text(s) => s.as_bytes(),
                _ => &[],
            };
            // Escaped and terminated: no key is a prefix of another.
            for &c in raw {
                if c == 0 {
                    out.extend_from_slice(&[0x00, 0xFF]);
                } else {
                    out.push(c);
                }
            }
            out.extend_from_slice(&[0x00, 0x01]);
        }
        Value::Vector(_) => debug_assert!(false, "vector keys are compared as values"),
    }
    if desc {
        for b in &mut out[body..] {
            *b = !*b;
        }
    }
    debug_assert!(out.len() > start);
}

/// A window's partition and order keys over the units, each evaluated
/// once: encoded into one memcomparable byte string per unit when every
/// key column is of one kind (the common case: the sort compares bytes),
/// else compared value by value as [`Value::total_cmp`] orders them.
struct Keys<'w> {
    cols: Vec<Column>,
    parts: usize,
    order: &'w [(CExpr, bool)],
    /// The units' keys back to back: unit `i`'s are
    /// `bytes[offs[i]..offs[i + 1]]`, its partition keys the part before
    /// `split[i]`.
    encoded: Option<(Vec<u8>, Vec<usize>, Vec<usize>)>,
    /// Better still: every key a number whose range is small enough that
    /// all of a unit's keys pack into 96 bits ([`Field`]), partition keys
    /// in the high bits and order keys in the low `order_bits`: unit
    /// `i`'s keys compare as `packed[i]` does.
    packed: Option<(Vec<u128>, u32)>,
}

/// One numeric key column packed into a few bits: each value's
/// order-preserving code ([`code`]) less the column's least, shifted up
/// by one when the column has NULLs (NULL is then 0), inverted for a
/// descending key; a vector distance's NULL is the largest field in both
/// directions.
struct Field {
    min: u64,
    range: u64,
    nulls: bool,
    desc: bool,
    distance: bool,
}

impl Field {
    /// The largest field value (`None` past 64 bits).
    fn max(&self) -> Option<u64> {
        self.range.checked_add(u64::from(self.nulls))
    }

    fn bits(&self) -> Option<u32> {
        self.max().map(|m| u64::BITS - m.leading_zeros())
    }

    fn of(&self, v: &Value, buf: &mut Vec<u8>) -> u64 {
        let max = self.range + u64::from(self.nulls);
        match code(v, buf) {
            None if self.distance || self.desc => max,
            None => 0,
            Some(c) => {
                let b = c - self.min;
                match (self.distance, self.desc) {
                    (true, true) => self.range - b,
                    (true, false) => b,
                    (false, true) => max - (b + u64::from(self.nulls)),
                    (false, false) => b + u64::from(self.nulls),
                }
            }
        }
    }
}

/// A numeric key's order-preserving unsigned code (`None` for NULL and
/// for text): an integer's, a datetime's or a DECIMAL's mantissa (one
/// scale per column, see [`col_stats`]) with the sign bit flipped, a
/// double's total-order bits. `buf` is scratch space (no allocation per
/// value).
#[inline]
fn code(v: &Value, buf: &mut Vec<u8>) -> Option<u64> {
    match v {
        Value::Bool(b) => Some(u64::from(*b)),
        Value::Int(i) | Value::DateTime(i) => Some((*i as u64) ^ (1u64 << 63)),
        Value::Float(f) => {
            let bits = (f + 0.0).to_bits();
            Some(if bits >> 63 == 1 {
                !bits
            } else {
                bits | (1u64 << 63)
            })
        }
        Value::Decimal(d) => {
            buf.clear();
            d.mantissa_bytes(buf);
            let fill = if buf.last().is_some_and(|&b| b >= 0x80) {
                0xFF
            } else {
                0
            };
            let mut b = [fill; 8];
            let n = buf.len().min(8);
            b[..n].copy_from_slice(&buf[..n]);
            Some((i64::from_le_bytes(b) as u64) ^ (1u64 << 63))
        }
        Value::Null | Value::Text(_) | Value::Vector(_) | Value::Bytes(_) => None,
    }
}

impl Keys<'_> {
    fn new<'w>(
        w: &'w crate::sql::expr::Window,
        prep: &Prepared<'_>,
        units: &[Unit],
        mem: &mut Reservation,
        ev: &mut dyn FnMut(&exec::Prepared<'_>, &Unit) -> SqlResult<Value>,
    ) -> SqlResult<Keys<'w>> {
        let cols = prep
            .keys
            .iter()
            .map(|p| Column::of(p, units, mem, ev))
            .collect::<SqlResult<Vec<_>>>()?;
        let mut keys = Keys {
            cols,
            parts: w.partition.len(),
            order: &w.order,
            encoded: None,
            packed: None,
        };
        let mut kinds = Vec::with_capacity(keys.cols.len());
        let mut stats = Vec::with_capacity(keys.cols.len());
        for c in &keys.cols {
            let st = col_stats(c, units)?;
            match st.kind {
                Some(k) => kinds.push(k),
                None => break,
            }
            stats.push(st);
        }
        let encodable = kinds.len() == keys.cols.len();
        if encodable
            && !keys.cols.is_empty()
            && !kinds.contains(&KeyKind::Text)
            && u32::try_from(units.len()).is_ok()
        {
            keys.packed = keys.pack(units, &stats, mem)?;
            if keys.packed.is_some() {
                return Ok(keys);
            }
        }
        if encodable && !keys.cols.is_empty() {
            let n = units.len();
            mem.add((2 * n + 1) * std::mem::size_of::<usize>())?;
            let mut bytes = Vec::with_capacity(n * 9 * keys.cols.len());
            let mut offs = Vec::with_capacity(n + 1);
            let mut split = Vec::with_capacity(n);
            let mut buf = Vec::with_capacity(16);
            offs.push(0);
            for i in 0..n {
                budget::tick()?;
                let before = bytes.len();
                for (k, c) in keys.cols.iter().enumerate() {
                    if k == keys.parts {
                        split.push(bytes.len());
                    }
                    let (desc, distance) = match k.checked_sub(keys.parts) {
                        Some(o) => (keys.order[o].1, is_distance_key(&keys.order[o].0)),
                        None => (false, false),
                    };
                    encode_key(&mut bytes, c.at(units, i), desc, distance, &mut buf);
                }
                if keys.cols.len() == keys.parts {
                    split.push(bytes.len());
                }
                mem.add(bytes.len() - before)?;
                offs.push(bytes.len());
            }
            keys.encoded = Some((bytes, offs, split));
        }
        Ok(keys)
    }

    /// Every unit's keys packed into one `u128` when their fields fit 96
    /// bits (`None` otherwise), and the bits of the order keys.
    fn pack(
        &self,
        units: &[Unit],
        stats: &[ColStats],
        mem: &mut Reservation,
    ) -> SqlResult<Option<(Vec<u128>, u32)>> {
        let mut fields = Vec::with_capacity(self.cols.len());
        let mut buf = Vec::with_capacity(16);
        for (k, st) in stats.iter().enumerate() {
            let (lo, hi) = (st.lo, st.hi);
            let (desc, distance) = match k.checked_sub(self.parts) {
                Some(o) => (self.order[o].1, is_distance_key(&self.order[o].0)),
                None => (false, false),
            };
            fields.push(Field {
                min: lo.min(hi),
                range: hi.saturating_sub(lo),
                nulls: st.nulls,
                desc,
                distance,
            });
        }
        let mut total = 0u32;
        let mut order_bits = 0u32;
        for (k, f) in fields.iter().enumerate() {
            let Some(b) = f.bits() else { return Ok(None) };
            total += b;
            if k >= self.parts {
                order_bits += b;
            }
        }
        if total > 96 {
            return Ok(None);
        }
        mem.add(units.len() * std::mem::size_of::<u128>())?;
        let mut packed = Vec::with_capacity(units.len());
        for i in 0..units.len() {
            budget::tick()?;
            let mut key = 0u128;
            for (f, c) in fields.iter().zip(&self.cols) {
                // `bits` fit (checked above); a 0-bit field adds nothing.
                let b = f.bits().unwrap_or(0);
                key = (key << b) | u128::from(f.of(c.at(units, i), &mut buf));
            }
            packed.push(key);
        }
        Ok(Some((packed, order_bits)))
    }

    /// The units' positions sorted by (partition keys, order keys), ties
    /// in their order (stable).
    fn sorted(&self, units: &[Unit], mem: &mut Reservation) -> SqlResult<Vec<usize>> {
        Ok(self.sorted_parts(units, mem, false)?.0)
    }

    /// [`Keys::sorted`], and with `ends` where each partition ends in that
    /// order (exclusive, ascending; empty without `ends`) — read off the
    /// sorted packed keys in one pass when the keys pack.
    fn sorted_parts(
        &self,
        units: &[Unit],
        mem: &mut Reservation,
        ends: bool,
    ) -> SqlResult<(Vec<usize>, Vec<usize>)> {
        mem.add(units.len() * std::mem::size_of::<usize>())?;
        if let Some((packed, order_bits)) = &self.packed {
            // The position in the low 32 bits: all distinct, in key order
            // then position order.
            mem.add(units.len() * std::mem::size_of::<u128>())?;
            let mut tagged: Vec<u128> = packed
                .iter()
                .enumerate()
                .map(|(i, k)| (k << 32) | i as u128)
                .collect();
            sort_distinct(&mut tagged, mem)?;
            let mut out = Vec::new();
            if ends {
                let part = |t: u128| t >> (32 + order_bits);
                for p in 1..tagged.len() {
                    if part(tagged[p - 1]) != part(tagged[p]) {
                        out.push(p);
                    }
                }
                if !tagged.is_empty() {
                    out.push(tagged.len());
                }
            }
            let order = tagged
                .into_iter()
                .map(|t| (t & u128::from(u32::MAX)) as usize)
                .collect();
            return Ok((order, out));
        }
        let mut order: Vec<usize> = (0..units.len()).collect();
        budget::sort_by(&mut order, |&i, &j| self.cmp(units, i, j))?;
        let mut out = Vec::new();
        if ends {
            for p in 1..order.len() {
                budget::tick()?;
                if !self.same_partition(units, order[p - 1], order[p]) {
                    out.push(p);
                }
            }
            if !order.is_empty() {
                out.push(order.len());
            }
        }
        Ok((order, out))
    }

    /// Whether units `a` and `b` fall in one partition.
    #[inline]
    fn same_partition(&self, units: &[Unit], a: usize, b: usize) -> bool {
        if let Some((packed, order_bits)) = &self.packed {
            return packed[a] >> order_bits == packed[b] >> order_bits;
        }
        if let Some((bytes, offs, split)) = &self.encoded {
            return bytes[offs[a]..split[a]] == bytes[offs[b]..split[b]];
        }
        (0..self.parts).all(|k| {
            self.cols[k]
                .at(units, a)
                .total_cmp(self.cols[k].at(units, b))
                .is_eq()
        })
    }

    /// Units `a` and `b` by their order keys (within a partition).
    #[inline]
    fn cmp_order(&self, units: &[Unit], a: usize, b: usize) -> Ordering {
        if let Some((packed, order_bits)) = &self.packed {
            let mask = (1u128 << order_bits) - 1;
            return (packed[a] & mask).cmp(&(packed[b] & mask));
        }
        if let Some((bytes, offs, split)) = &self.encoded {
            return bytes[split[a]..offs[a + 1]].cmp(&bytes[split[b]..offs[b + 1]]);
        }
        self.order
            .iter()
            .zip(&self.cols[self.parts..])
            .map(|((key, desc), c)| {
                let (x, y) = (c.at(units, a), c.at(units, b));
                // A NULL vector distance sorts after every real one in
                // both directions, as the block's ORDER BY and the
                // vector index have it.
                key_order(x, y, *desc, is_distance_key(key))
            })
            .find(|o| o.is_ne())
            .unwrap_or(Ordering::Equal)
    }

    /// Units `a` and `b` by partition keys, then order keys.
    #[inline]
    fn cmp(&self, units: &[Unit], a: usize, b: usize) -> Ordering {
        if let Some((packed, _)) = &self.packed {
            return packed[a].cmp(&packed[b]);
        }
        if let Some((bytes, offs, _)) = &self.encoded {
            return bytes[offs[a]..offs[a + 1]].cmp(&bytes[offs[b]..offs[b + 1]]);
        }
        (0..self.parts)
            .map(|k| {
                self.cols[k]
                    .at(units, a)
                    .total_cmp(self.cols[k].at(units, b))
            })
            .find(|o| o.is_ne())
            .unwrap_or_else(|| self.cmp_order(units, a, b))
    }

    /// Unit `i`'s first order key (a RANGE offset frame's).
    fn first_order<'a>(&'a self, units: &'a [Unit], i: usize) -> &'a Value {
        self.cols[self.parts].at(units, i)
    }
}

/// Sort `v`, whose values are all distinct (so unstable is stable),
/// ascending without a buffer per merge: runs of [`SORT_RUN`] sorted in
/// place, then merged pass by pass between `v` and one second buffer
/// (charged to `mem`), a look at the interrupt per run sorted and every
/// [`SORT_RUN`] values merged.
fn sort_distinct(v: &mut Vec<u128>, mem: &mut Reservation) -> SqlResult<()> {
    for run in v.chunks_mut(SORT_RUN) {
        budget::check()?;
        run.sort_unstable();
    }
    let n = v.len();
    if n <= SORT_RUN {
        return Ok(());
    }
    mem.add(n * std::mem::size_of::<u128>())?;
    let mut from = std::mem::take(v);
    let mut to = vec![0u128; n];
    let mut width = SORT_RUN;
    while width < n {
        for start in (0..n).step_by(2 * width) {
            let mid = (start + width).min(n);
            let end = (start + 2 * width).min(n);
            let (l, r) = (&from[start..mid], &from[mid..end]);
            let (mut i, mut j) = (0, 0);
            for (k, slot) in to[start..end].iter_mut().enumerate() {
                if k % SORT_RUN == 0 {
                    budget::check()?;
                }
                *slot = if j >= r.len() || (i < l.len() && l[i] < r[j]) {
                    i += 1;
                    l[i - 1]
                } else {
                    j += 1;
                    r[j - 1]
                };
            }
        }
        std::mem::swap(&mut from, &mut to);
        width *= 2;
    }
    *v = from;
    Ok(())
}

/// Values [`sort_distinct`] sorts between two looks at the interrupt.
const SORT_RUN: usize = 4096;

/// Move `units` into the order `order` (position `p` gets the unit that
/// was at `order[p]`), in place: one swap per unit moved.
fn permute(units: &mut [Unit], mut order: Vec<usize>) -> SqlResult<()> {
    debug_assert_eq!(units.len(), order.len());
    for start in 0..order.len() {
        if order[start] == usize::MAX {
            continue;
        }
        let mut cur = start;
        loop {
            budget::tick()?;
            let src = std::mem::replace(&mut order[cur], usize::MAX);
            if src == start {
                break;
            }
            units.swap(cur, src);
            cur = src;
        }
    }
    Ok(())
}

/// The last window call's sort over the units, for passing them on one
/// group of partitions at a time ([`sort_last`]).
pub(crate) struct Sorted {
    /// The last window call's slot.
    pub slot: usize,
    /// Unit positions in the call's sort order (ties in input order).
    pub order: Vec<usize>,
    /// Where each partition ends in `order` (exclusive), ascending.
    pub ends: Vec<usize>,
    /// The charge of `order` and `ends`.
    pub _mem: Reservation,
}

/// Every window call of `plan` but the last computed over `units` (the
/// block's rows or groups, HAVING applied) into its aggregate slot, the
/// units left where they are; the last call's units only sorted into its
/// partitions — its values are computed a group of whole partitions at a
/// time as the units are passed on ([`apply_slot`] over each group, which
/// sorts them as they already are), so a LIMIT above stops the work.
/// `None` without a window call. Each call's working memory is charged to
/// the statement while it runs (the units themselves already are).
///
/// Each window evaluates its keys and argument once per unit (a plain
/// column is read in place), encodes the keys into one memcomparable byte
/// string per unit when it can, and sorts positions, not units.
pub(crate) fn sort_last(
    plan: &Plan,
    ex: &Exprs<'_>,
    units: &mut [Unit],
    ev: &mut dyn FnMut(&exec::Prepared<'_>, &Unit) -> SqlResult<Value>,
) -> SqlResult<Option<Sorted>> {
    let calls: Vec<usize> = plan
        .aggs
        .iter()
        .zip(&ex.windows)
        .enumerate()
        .filter(|(_, (c, p))| c.window.is_some() && p.is_some())
        .map(|(i, _)| i)
        .collect();
    let Some((&last_slot, earlier)) = calls.split_last() else {
        return Ok(None);
    };
    if !earlier.is_empty() {
        for u in units.iter_mut() {
            u.1.resize(plan.aggs.len(), Value::Null);
        }
    }
    for &slot in earlier {
        let (Some(w), Some(Some(prep))) = (plan.aggs[slot].window.as_deref(), ex.windows.get(slot))
        else {
            continue;
        };
        let mut mem = Reservation::new();
        let mut order = None;
        let values = compute(
            w,
            &plan.aggs[slot],
            prep,
            units,
            &mut mem,
            &mut *ev,
            &mut order,
        )?;
        for (u, v) in units.iter_mut().zip(values) {
            u.1[slot] = v;
        }
    }
    let (Some(w), Some(Some(prep))) = (
        plan.aggs[last_slot].window.as_deref(),
        ex.windows.get(last_slot),
    ) else {
        return Err(crate::error::SqlError::internal(
            "a window call without its expressions",
        ));
    };
    let mut mem = Reservation::new();
    let (order, ends) = {
        let mut work = Reservation::new();
        let keys = Keys::new(w, prep, units, &mut work, &mut *ev)?;
        keys.sorted_parts(units, &mut work, true)?
    };
    mem.add((order.len() + ends.len()) * std::mem::size_of::<usize>())?;
    Ok(Some(Sorted {
        slot: last_slot,
        order,
        ends,
        _mem: mem,
    }))
}

/// [`sort_last`]'s last call computed over a group of its whole
/// partitions (`units`, in its sort order) alone; the spilled window
/// computes one call over one partition at a time the same way
/// ([`super::window_stream`]).
pub(crate) fn apply_slot(
    plan: &Plan,
    ex: &Exprs<'_>,
    slot: usize,
    units: &mut [Unit],
    ev: &mut dyn FnMut(&exec::Prepared<'_>, &Unit) -> SqlResult<Value>,
) -> SqlResult<()> {
    for u in units.iter_mut() {
        u.1.resize(plan.aggs.len(), Value::Null);
    }
    let (Some(call), Some(Some(prep))) = (plan.aggs.get(slot), ex.windows.get(slot)) else {
        return Ok(());
    };
    let Some(w) = call.window.as_deref() else {
        return Ok(());
    };
    // This window's keys, sort and values, charged while it runs.
    let mut mem = Reservation::new();
    let mut last = None;
    let values = compute(w, call, prep, units, &mut mem, &mut *ev, &mut last)?;
    for (u, v) in units.iter_mut().zip(values) {
        u.1[slot] = v;
    }
    if let Some(order) = last {
        permute(units, order)?;
    }
    Ok(())
}

/// One window call's value for every unit (in the units' order); `last`
/// gets the order of its sort.
fn compute(
    w: &crate::sql::expr::Window,
    call: &AggCall,
    prep: &Prepared<'_>,
    units: &[Unit],
    mem: &mut Reservation,
    ev: &mut dyn FnMut(&exec::Prepared<'_>, &Unit) -> SqlResult<Value>,
    last: &mut Option<Vec<usize>>,
) -> SqlResult<Vec<Value>> {
    let keys = Keys::new(w, prep, units, mem, ev)?;
    let arg_col = prep
        .arg
        .as_ref()
        .map(|p| Column::of(p, units, mem, ev))
        .transpose()?;
    let default_col = prep
        .default
        .as_ref()
        .map(|p| Column::of(p, units, mem, ev))
        .transpose()?;
    // A RANGE frame's offset bounds' key values, per unit.
    let targets: [Option<Column>; 2] = [
        prep.range_at[0]
            .as_ref()
            .map(|p| Column::of(p, units, mem, ev))
            .transpose()?,
        prep.range_at[1]
            .as_ref()
            .map(|p| Column::of(p, units, mem, ev))
            .transpose()?,
    ];
    let arg_ref = |i: usize| arg_col.as_ref().map_or(&NULL, |c| c.at(units, i));
    let arg_at = |i: usize| arg_ref(i).clone();
    // As the fold takes it: `None` without an argument (COUNT(*)).
    let arg_opt = |i: usize| arg_col.as_ref().map(|c| c.at(units, i).clone());
    let default_at = |i: usize| {
        default_col
            .as_ref()
            .map_or(Value::Null, |c| c.at(units, i).clone())
    };
    let order = keys.sorted(units, mem)?;
    // One partition at a time; inside it, one peer group at a time.
    mem.add(units.len() * std::mem::size_of::<Value>())?;
    let mut values: Vec<Value> = vec![Value::Null; units.len()];
    let cmp_order = |a: usize, b: usize| keys.cmp_order(units, a, b);
    let framed = matches!(
        w.func,
        WinFunc::Agg | WinFunc::FirstValue | WinFunc::LastValue | WinFunc::NthValue
    );
    // NTH_VALUE always goes through a frame: the default one is
    // RANGE from the partition's start to the row's last peer.
    let frame = w.frame.or((w.func == WinFunc::NthValue).then_some(Frame {
        rows: false,
        start: FrameBound::UnboundedPreceding,
        end: FrameBound::CurrentRow,
    }));
    let mut peers: Vec<(usize, usize)> = Vec::new();
    let mut start = 0;
    while start < order.len() {
        let mut end = start + 1;
        while end < order.len() && keys.same_partition(units, order[start], order[end]) {
            budget::tick()?;
            end += 1;
        }
        let part = &order[start..end];
        let mut st = AggState::default();
        if let (Some(frame), true) = (frame, framed) {
            let len = part.len();
            // Each position's peer group [start, end) (a ROWS frame
            // needs none).
            let need_peers = !frame.rows;
            peers.clear();
            if need_peers {
                if peers.capacity() < len {
                    mem.add((len - peers.capacity()) * std::mem::size_of::<(usize, usize)>())?;
                }
                peers.resize(len, (0, 0));
                let mut a = 0;
                while a < len {
                    let mut b = a + 1;
                    while b < len && cmp_order(part[a], part[b]).is_eq() {
                        budget::tick()?;
                        b += 1;
                    }
                    for p in &mut peers[a..b] {
                        *p = (a, b);
                    }
                    a = b;
                }
            }
            let peers_of = |j: usize| peers.get(j).copied().unwrap_or((j, j + 1));
            // A RANGE offset bound of row `j`: the first row not
            // before the frame (start) or the last not after it (end).
            let offset_at = |j: usize, start: bool| -> usize {
                let Some((_, desc)) = w.order.first() else {
                    return if start { 0 } else { len };
                };
                let key = |r: usize| keys.first_order(units, r);
                if key(part[j]).is_null() {
                    // A NULL key's offsets are its peers (the NULLs).
                    return if start {
                        peers_of(j).0
                    } else {
                        peers_of(j).1 - 1
                    };
                }
                let t = targets[usize::from(!start)]
                    .as_ref()
                    .map_or(&NULL, |c| c.at(units, part[j]));
                // Candidate `r` against the bound, in sort order: NULLs
                // sort first ascending, last descending.
                let cmp = |r: usize| -> Ordering {
                    let k = key(r);
                    if k.is_null() {
                        return if *desc {
                            Ordering::Greater
                        } else {
                            Ordering::Less
                        };
                    }
                    let o = k.total_cmp(t);
                    if *desc {
                        o.reverse()
                    } else {
                        o
                    }
                };
                if start {
                    part.partition_point(|&r| cmp(r).is_lt())
                } else {
                    // May be 0: the frame is then empty.
                    part.partition_point(|&r| cmp(r).is_le()).wrapping_sub(1)
                }
            };
            let range = |j: usize| frame_range(frame, j, len, peers_of(j), &offset_at);
            let empty = agg_final(&AggState::default(), call);
            match w.func {
                WinFunc::FirstValue | WinFunc::LastValue | WinFunc::NthValue => {
                    let nth = usize::try_from(w.n.saturating_sub(1)).unwrap_or(usize::MAX);
                    for j in 0..len {
                        budget::tick()?;
                        values[part[j]] = match (w.func, range(j)) {
                            (WinFunc::FirstValue, Some((fs, _))) => arg_at(part[fs]),
                            (WinFunc::LastValue, Some((_, fe))) => arg_at(part[fe]),
                            (WinFunc::NthValue, Some((fs, fe)))
                                if fs.checked_add(nth).is_some_and(|k| k <= fe) =>
                            {
                                arg_at(part[fs + nth])
                            }
                            _ => Value::Null,
                        };
                    }
                }
                _ if frame.start == FrameBound::UnboundedPreceding => {
                    // Frames [0, fe], fe never decreasing: one pass.
                    let mut next = 0;
                    for j in 0..len {
                        values[part[j]] = match range(j) {
                            Some((_, fe)) => {
                                while next <= fe {
                                    budget::tick()?;
                                    agg_update(&mut st, call, arg_opt(part[next]))?;
                                    next += 1;
                                }
                                agg_final(&st, call)
                            }
                            None => empty.clone(),
                        };
                    }
                }
                _ if frame.end == FrameBound::UnboundedFollowing => {
                    // Frames [fs, len - 1], fs never decreasing: one
                    // pass from the end.
                    let mut next = len;
                    for j in (0..len).rev() {
                        values[part[j]] = match range(j) {
                            Some((fs, _)) => {
                                while next > fs {
                                    budget::tick()?;
                                    next -= 1;
                                    agg_update(&mut st, call, arg_opt(part[next]))?;
                                }
                                agg_final(&st, call)
                            }
                            None => empty.clone(),
                        };
                    }
                }
                _ if super::window_slide::slide(
                    call,
                    len,
                    &|p| arg_opt(part[p]),
                    &range,
                    &mut |j, v| values[part[j]] = v,
                )? => {}
                _ => {
                    // Both ends move and the aggregate does not slide
                    // exactly: each frame folded on its own (at most
                    // its offsets' width).
                    for j in 0..len {
                        let mut st = AggState::default();
                        if let Some((fs, fe)) = range(j) {
                            for &r in &part[fs..=fe] {
                                budget::tick()?;
                                agg_update(&mut st, call, arg_opt(r))?;
                            }
                        }
                        values[part[j]] = agg_final(&st, call);
                    }
                }
            }
        } else if w.order.is_empty() && w.func == WinFunc::Agg {
            for &i in part {
                budget::tick()?;
                agg_update(&mut st, call, arg_opt(i))?;
            }
            let v = agg_final(&st, call);
            for &i in part {
                values[i] = v.clone();
            }
        } else {
            let mut peer = 0;
            let mut groups = 0i64;
            while peer < part.len() {
                let mut next = peer + 1;
                while next < part.len() && cmp_order(part[peer], part[next]).is_eq() {
                    next += 1;
                }
                groups += 1;
                if w.func == WinFunc::Agg {
                    for &i in &part[peer..next] {
                        budget::tick()?;
                        agg_update(&mut st, call, arg_opt(i))?;
                    }
                }
                let shared = (w.func == WinFunc::Agg).then(|| agg_final(&st, call));
                let len = part.len();
                for (j, &i) in part.iter().enumerate().take(next).skip(peer) {
                    budget::tick()?;
                    values[i] = match w.func {
                        WinFunc::RowNumber => Value::Int((j + 1) as i64),
                        WinFunc::Rank => Value::Int((peer + 1) as i64),
                        WinFunc::DenseRank => Value::Int(groups),
                        WinFunc::PercentRank if len > 1 => {
                            Value::Float(peer as f64 / (len - 1) as f64)
                        }
                        WinFunc::PercentRank => Value::Float(0.0),
                        WinFunc::CumeDist => Value::Float(next as f64 / len as f64),
                        WinFunc::Ntile => Value::Int(ntile(j, len, w.n) as i64),
                        WinFunc::Lag => match usize::try_from(w.n) {
                            Ok(n) if j >= n => arg_at(part[j - n]),
                            _ => default_at(i),
                        },
                        WinFunc::Lead => match usize::try_from(w.n) {
                            Ok(n) if j.checked_add(n).is_some_and(|x| x < len) => {
                                arg_at(part[j + n])
                            }
                            _ => default_at(i),
                        },
                        WinFunc::FirstValue => arg_at(part[0]),
                        // The default frame ends at the row's last peer.
                        WinFunc::LastValue => arg_at(part[next - 1]),
                        WinFunc::Agg => shared.clone().unwrap_or(Value::Null),
                        WinFunc::NthValue => {
                            debug_assert!(false, "NTH_VALUE always has a frame");
                            Value::Null
                        }
                    };
                }
                peer = next;
            }
        }
        start = end;
    }
    *last = Some(order);
    Ok(values)
}

/// Positions [fs, fe] (inclusive, in the partition of `len` rows) of row
/// `j`'s frame, whose peer group is `peers` = [start, end); `None` when
/// the frame is empty. ROWS offsets count rows; a RANGE CURRENT ROW is
/// the row's peers, a RANGE offset where `offset_at(j, start)` puts it
/// (usize::MAX: before the first row).
fn frame_range(
    f: Frame,
    j: usize,
    len: usize,
    peers: (usize, usize),
    offset_at: &dyn Fn(usize, bool) -> usize,
) -> Option<(usize, usize)> {
    let row = j;
    let (j, len) = (j as i128, len as i128);
    let at = |b: FrameBound, start: bool| -> i128 {
        match b {
            FrameBound::UnboundedPreceding => 0,
            FrameBound::Preceding(_) | FrameBound::Following(_) if !f.rows => {
                match offset_at(row, start) {
                    usize::MAX => -1,
                    p => p as i128,
                }
            }
            FrameBound::Preceding(n) => j - i128::from(n),
            FrameBound::CurrentRow if f.rows => j,
            FrameBound::CurrentRow if start => peers.0 as i128,
            FrameBound::CurrentRow => peers.1 as i128 - 1,
            FrameBound::Following(n) => j + i128::from(n),
            FrameBound::UnboundedFollowing => len - 1,
        }
    };
    let fs = at(f.start, true).max(0);
    let fe = at(f.end, false).min(len - 1);
    (fs <= fe).then_some((fs as usize, fe as usize))
}

/// NTILE(n)'s bucket (1-based) of the `j`-th (0-based) of `len` rows: the
/// first `len % n` buckets hold one row more than the others (MySQL).
fn ntile(j: usize, len: usize, n: u64) -> u64 {
    let n = n.max(1);
    let (len, j) = (len as u64, j as u64);
    let small = len / n;
    let extra = len % n;
    let big_rows = extra * (small + 1);
    if j < big_rows {
        j / (small + 1) + 1
    } else {
        // Here small > 0: rows past the big buckets exist only then.
        (j - big_rows) / small.max(1) + extra + 1
    }
}

#[cfg(test)]
mod tests {
    use super::{encode_key, key_kind, ntile, permute, Column, KeyKind, Unit};
    use crate::sql::exec::unit::key_order;
    use crate::types::Value;

    /// A deterministic stream of pseudo-random numbers.
    struct Lcg(u64);
    impl Lcg {
        fn next(&mut self) -> u64 {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            self.0 >> 33
        }
    }

    fn units(vals: &[Value]) -> Vec<Unit> {
        vals.iter()
            .map(|v| (vec![v.clone()], Vec::new(), Vec::new()))
            .collect()
    }

    /// The encoded key orders every pair of a one-kind column as the
    /// value comparison does (`total_cmp`, reversed for DESC; a vector
    /// distance's NULL last both ways), and is equal exactly when it is.
    #[test]
    fn encoded_keys_order_as_values_do() {
        let dec = |s: &str| Value::Decimal(crate::decimal::Decimal::parse(s).unwrap());
        let mut rng = Lcg(7);
        let texts = ["", "a", "a\0", "a\0b", "ab", "b", "\u{e9}", "z\u{ff}"];
        let columns: Vec<(KeyKind, Vec<Value>)> = vec![
            (
                KeyKind::Int(1),
                (0..40)
                    .map(|_| match rng.next() % 6 {
                        0 => Value::Null,
                        1 => Value::Int(i64::MIN),
                        2 => Value::Int(i64::MAX),
                        _ => Value::Int(rng.next() as i64 % 7 - 3),
                    })
                    .collect(),
            ),
            (
                KeyKind::Int(2),
                (0..30)
                    .map(|_| Value::DateTime(rng.next() as i64 % 5 - 2))
                    .collect(),
            ),
            (
                KeyKind::Float,
                (0..40)
                    .map(|_| match rng.next() % 5 {
                        0 => Value::Null,
                        1 => Value::Float(-0.0),
                        2 => Value::Float(0.0),
                        3 => Value::Float(f64::INFINITY),
                        _ => Value::Float((rng.next() % 9) as f64 / 4.0 - 1.0),
                    })
                    .collect(),
            ),
            (
                KeyKind::Decimal(2),
                [
                    "1.50",
                    "-1.50",
                    "0.00",
                    "-0.01",
                    "99999999999.99",
                    "-99999999999.99",
                    "3.14",
                ]
                .iter()
                .map(|s| dec(s))
                .chain([Value::Null])
                .collect(),
            ),
            (
                KeyKind::Text,
                texts
                    .iter()
                    .map(|t| Value::Text(t.to_string()))
                    .chain([Value::Null])
                    .collect(),
            ),
        ];
        for (kind, vals) in &columns {
            let us = units(vals);
            assert_eq!(key_kind(&Column::Row(0), &us).unwrap(), Some(*kind));
            for desc in [false, true] {
                for distance in [false, true] {
                    let enc = |v: &Value| {
                        let mut out = Vec::new();
                        encode_key(&mut out, v, desc, distance, &mut Vec::new());
                        out
                    };
                    for x in vals {
                        for y in vals {
                            let want = key_order(x, y, desc, distance);
                            // Keys are concatenated: a following key part
                            // must not change the order (prefix-free).
                            let (mut a, mut b) = (enc(x), enc(y));
                            a.push(0xFF);
                            b.push(0x00);
                            let got = enc(x).cmp(&enc(y));
                            assert_eq!(got, want, "{x:?} {y:?} desc {desc} distance {distance}");
                            if want.is_ne() {
                                assert_eq!(a.cmp(&b), want, "{x:?} {y:?} followed");
                            }
                        }
                    }
                }
            }
        }
    }

    /// Columns whose values are of different kinds (which compare across
    /// kinds), quotients held past their shown scale, DECIMALs of two
    /// scales or too wide, and vectors are compared as values.
    #[test]
    fn mixed_columns_are_not_encoded() {
        let dec = |s: &str| Value::Decimal(crate::decimal::Decimal::parse(s).unwrap());
        let quotient = crate::decimal::Decimal::parse("1")
            .unwrap()
            .div(&crate::decimal::Decimal::parse("3").unwrap())
            .unwrap();
        for col in [
            vec![Value::Int(1), Value::Float(1.5)],
            vec![Value::Int(1), dec("1.5")],
            vec![Value::Bool(true), Value::Int(1)],
            vec![Value::Int(1), Value::DateTime(1)],
            vec![dec("1.5"), dec("1.25")],
            vec![dec("123456789012345678901234567890")],
            vec![Value::Null, Value::Vector(vec![1.0])],
        ] {
            assert_eq!(
                key_kind(&Column::Row(0), &units(&col)).unwrap(),
                None,
                "{col:?}"
            );
        }
        if quotient.held_scale() != quotient.scale() {
            let col = vec![Value::Decimal(quotient)];
            assert_eq!(key_kind(&Column::Row(0), &units(&col)).unwrap(), None);
        }
        assert_eq!(
            key_kind(&Column::Row(0), &units(&[Value::Null, Value::Null])).unwrap(),
            Some(KeyKind::Nulls)
        );
    }

    /// Packed keys compare, group into partitions and order peers
    /// exactly as the values do, over integer, datetime, double, DECIMAL
    /// and boolean columns with NULLs, both directions and a vector
    /// distance's NULL-last rule; too wide a range is not packed.
    #[test]
    fn packed_keys_compare_as_values_do() {
        use super::{col_stats, ColStats, Keys};
        use crate::sql::budget::Reservation;
        use crate::sql::expr::CExpr;
        let dec = |m: i64| Value::Decimal(crate::decimal::Decimal::from_i64(m).rescale(2));
        let mut rng = Lcg(5);
        let mut gen = |k: u64| -> Value {
            let r = rng.next();
            if r.is_multiple_of(5) {
                return Value::Null;
            }
            let x = (r / 5 % 9) as i64 - 4;
            match k {
                0 => Value::Int(x * 1000),
                1 => Value::DateTime(x * 86_400_000_000),
                2 => Value::Float(x as f64 / 3.0),
                3 => dec(x),
                _ => Value::Bool(x > 0),
            }
        };
        let distance = CExpr::Func("l2_distance".into(), Vec::new());
        for (pk, ok) in [(0u64, 1u64), (1, 2), (2, 3), (3, 4), (4, 0), (3, 3)] {
            let rows: Vec<Value> = (0..60).flat_map(|_| [gen(pk), gen(ok)]).collect();
            let us: Vec<Unit> = rows
                .chunks(2)
                .map(|r| (r.to_vec(), Vec::new(), Vec::new()))
                .collect();
            for desc in [false, true] {
                for key in [CExpr::Col(1), distance.clone()] {
                    let order = [(key, desc)];
                    let keys = |packed: bool| {
                        let mut k = Keys {
                            cols: vec![Column::Row(0), Column::Row(1)],
                            parts: 1,
                            order: &order,
                            encoded: None,
                            packed: None,
                        };
                        if packed {
                            let stats: Vec<ColStats> =
                                k.cols.iter().map(|c| col_stats(c, &us).unwrap()).collect();
                            k.packed = k.pack(&us, &stats, &mut Reservation::new()).unwrap();
                            // A double's codes of both signs span 64 bits:
                            // with a datetime's 40, past 96.
                            assert_eq!(k.packed.is_some(), (pk, ok) != (1, 2));
                        }
                        k
                    };
                    let (p, v) = (keys(true), keys(false));
                    for a in 0..us.len() {
                        for b in 0..us.len() {
                            let ctx = format!("{:?} {:?} desc {desc}", us[a].0, us[b].0);
                            assert_eq!(p.cmp(&us, a, b), v.cmp(&us, a, b), "{ctx}");
                            assert_eq!(p.cmp_order(&us, a, b), v.cmp_order(&us, a, b), "{ctx}");
                            assert_eq!(
                                p.same_partition(&us, a, b),
                                v.same_partition(&us, a, b),
                                "{ctx}"
                            );
                        }
                    }
                    let sorted = p.sorted(&us, &mut Reservation::new()).unwrap();
                    assert_eq!(sorted, v.sorted(&us, &mut Reservation::new()).unwrap());
                }
            }
        }
        // Two full-range integer keys need 128 bits: not packed.
        let wide: Vec<Unit> = [i64::MIN, i64::MAX]
            .iter()
            .map(|&i| (vec![Value::Int(i), Value::Int(i)], Vec::new(), Vec::new()))
            .collect();
        let order = [(CExpr::Col(1), false)];
        let k = Keys {
            cols: vec![Column::Row(0), Column::Row(1)],
            parts: 1,
            order: &order,
            encoded: None,
            packed: None,
        };
        let stats: Vec<ColStats> = k
            .cols
            .iter()
            .map(|c| col_stats(c, &wide).unwrap())
            .collect();
        assert!(k
            .pack(&wide, &stats, &mut Reservation::new())
            .unwrap()
            .is_none());
    }

    /// `permute` moves every unit to its place of the order.
    #[test]
    fn permute_applies_the_order() {
        let mut rng = Lcg(11);
        for n in [0usize, 1, 2, 5, 64] {
            let mut order: Vec<usize> = (0..n).collect();
            for i in (1..n).rev() {
                order.swap(i, rng.next() as usize % (i + 1));
            }
            let mut us = units(&(0..n as i64).map(Value::Int).collect::<Vec<_>>());
            permute(&mut us, order.clone()).unwrap();
            let got: Vec<usize> = us
                .iter()
                .map(|u| match u.0[0] {
                    Value::Int(i) => i as usize,
                    _ => usize::MAX,
                })
                .collect();
            assert_eq!(got, order);
        }
    }

    /// NTILE against its definition: bucket sizes differ by at most one,
    /// larger first, in order, every row in 1..=min(n, len).
    #[test]
    fn ntile_buckets_are_balanced_and_ordered() {
        for len in 1..40usize {
            for n in 1..45u64 {
                let b: Vec<u64> = (0..len).map(|j| ntile(j, len, n)).collect();
                assert_eq!(b[0], 1);
                assert!(b.windows(2).all(|w| w[1] == w[0] || w[1] == w[0] + 1));
                let buckets = (len as u64).min(n);
                assert_eq!(*b.last().unwrap(), buckets, "len {len} n {n}");
                let sizes: Vec<usize> = (1..=buckets)
                    .map(|k| b.iter().filter(|&&x| x == k).count())
                    .collect();
                assert!(sizes.windows(2).all(|w| w[0] == w[1] || w[0] == w[1] + 1));
            }
        }
    }

    /// The packed keys' sort orders distinct values of any count (runs,
    /// odd leftovers, several merge passes) as the standard sort does.
    #[test]
    fn sort_distinct_sorts() {
        use crate::sql::budget::Reservation;
        for n in [0usize, 1, 5, 4096, 4097, 8192 + 3, 3 * 4096 + 17, 20_000] {
            // Distinct: a scrambled key above the position.
            let mut v: Vec<u128> = (0..n as u128)
                .map(|i| (((i * 7919) % 1013) << 32) | i)
                .collect();
            let mut want = v.clone();
            want.sort();
            super::sort_distinct(&mut v, &mut Reservation::new()).unwrap();
            assert_eq!(v, want, "n = {n}");
        }
    }
}
