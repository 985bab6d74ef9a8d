//! utf8mb4_0900_ai_ci's weights: the primary (level 1) weights of Unicode's
//! DUCET 9.0.0, computed per code point as MySQL 8's `uca_scanner_900`
//! computes them.
//!
//! Owns the decoded weight table (built once from the generated blob,
//! `uca900_table.rs`) and the per-character weights: a listed code point
//! weighs its table entry (expansions included: `'ß'` weighs two `s`, a
//! character whose primaries are all 0 weighs nothing); a Hangul syllable
//! (U+AC00..U+D7AF) weighs its conjoining jamo; any other code point gets
//! the UCA 9.0 implicit weight `[base + (cp >> 15)][(cp & 0x7FFF) | 0x8000]`
//! (Tangut `[FB00][(cp - 0x17000) | 0x8000]`). DUCET contractions are not
//! applied — MySQL's root uca900 table has none.
//!
//! Never compares or pads strings itself: `super` does, from
//! [`Primaries`] and [`like_eq`].

use std::sync::OnceLock;

use super::uca900_table::{BLOB, ENTRIES};

/// Code points per page of the lookup table (MySQL's page size too).
const PAGE: usize = 256;
/// Pages up to U+10FFFF.
const PAGES: usize = 0x1100;
/// A page slot or an entry that is not in the table.
const ABSENT: u32 = u32::MAX;
/// Hangul syllables MySQL decomposes (its range: to U+D7AF).
const HANGUL: std::ops::RangeInclusive<u32> = 0xAC00..=0xD7AF;

/// The decoded DUCET primaries.
struct Table {
    /// Per page: the index of its first slot in `slots`, or [`ABSENT`]
    /// when the DUCET lists no code point of the page.
    pages: Vec<u32>,
    /// Per code point of a listed page: `offset << 4 | len` into
    /// `weights`, or [`ABSENT`].
    slots: Vec<u32>,
    weights: Vec<u16>,
}

fn table() -> &'static Table {
    static T: OnceLock<Table> = OnceLock::new();
    T.get_or_init(|| match decode(BLOB) {
        Some(t) => {
            debug_assert_eq!(
                t.slots.iter().filter(|&&e| e != ABSENT).count(),
                ENTRIES,
                "uca900.bin and uca900_table.rs disagree"
            );
            t
        }
        // The blob is compiled in and checked by a unit test: a bad one
        // is a build defect, not a runtime condition.
        None => panic!("src/collation/uca900.bin is malformed: rerun scripts/gen_uca900.py"),
    })
}

/// Decodes the generator's format (see scripts/gen_uca900.py); `None` on
/// any inconsistency.
fn decode(blob: &[u8]) -> Option<Table> {
    let rest = blob.strip_prefix(b"UCA9")?;
    let count = u32::from_be_bytes(rest.get(..4)?.try_into().ok()?) as usize;
    let mut at = 4usize;
    let mut t = Table {
        pages: vec![ABSENT; PAGES],
        slots: Vec::new(),
        weights: Vec::with_capacity(count + count / 4),
    };
    let mut cp: i64 = -1;
    for _ in 0..count {
        let mut delta: i64 = 0;
        let mut shift = 0;
        loop {
            let b = *rest.get(at)?;
            at += 1;
            delta |= i64::from(b & 0x7F) << shift;
            shift += 7;
            if b & 0x80 == 0 {
                break;
            }
            if shift > 21 {
                return None;
            }
        }
        if delta < 1 {
            return None;
        }
        cp += delta;
        let c = usize::try_from(cp).ok().filter(|&c| c < PAGES * PAGE)?;
        let n = usize::from(*rest.get(at)?);
        at += 1;
        if n > 15 {
            return None;
        }
        let off = t.weights.len();
        for i in 0..n {
            let w = rest.get(at + 2 * i..at + 2 * i + 2)?;
            t.weights.push(u16::from_be_bytes([w[0], w[1]]));
        }
        at += 2 * n;
        let page = c / PAGE;
        if t.pages[page] == ABSENT {
            t.pages[page] = u32::try_from(t.slots.len()).ok()?;
            t.slots.extend(std::iter::repeat_n(ABSENT, PAGE));
        }
        let slot = t.pages[page] as usize + c % PAGE;
        t.slots[slot] = (u32::try_from(off).ok()? << 4) | n as u32;
    }
    (at == rest.len()).then_some(t)
}

impl Table {
    /// Whether MySQL's table has a weight page for `cp` (its `LIKE`
    /// compares characters of other pages by code point).
    fn page_listed(&self, cp: u32) -> bool {
        self.pages
            .get(cp as usize / PAGE)
            .is_some_and(|&p| p != ABSENT)
    }

    fn listed(&self, cp: u32) -> Option<&[u16]> {
        let p = *self.pages.get(cp as usize / PAGE)?;
        if p == ABSENT {
            return None;
        }
        let e = self.slots[p as usize + cp as usize % PAGE];
        if e == ABSENT {
            return None;
        }
        let off = (e >> 4) as usize;
        Some(&self.weights[off..off + (e & 15) as usize])
    }
}

/// One character's primaries: a table slice, or up to three computed
/// ones (implicit weights, Hangul jamo).
#[derive(Debug, Clone, Copy)]
pub(super) enum Weights {
    Listed(&'static [u16]),
    Computed([u16; 3], u8),
}

impl Weights {
    pub(super) fn as_slice(&self) -> &[u16] {
        match self {
            Weights::Listed(s) => s,
            Weights::Computed(w, n) => &w[..usize::from(*n)],
        }
    }
}

/// The UCA 9.0 implicit weight of a code point the DUCET does not list,
/// with MySQL's ranges (Unified_Ideograph of Unicode 9.0).
pub(super) fn implicit(cp: u32) -> [u16; 2] {
    if (0x17000..=0x18AFF).contains(&cp) {
        return [0xFB00, ((cp - 0x17000) | 0x8000) as u16];
    }
    let ext = [
        0x3400..=0x4DB5,
        0x20000..=0x2A6D6,
        0x2A700..=0x2B734,
        0x2B740..=0x2B81D,
        0x2B820..=0x2CEA1,
    ];
    let base: u32 = if ext.iter().any(|r| r.contains(&cp)) {
        0xFB80
    } else if (0x4E00..=0x9FD5).contains(&cp) || (0xFA0E..=0xFA29).contains(&cp) {
        0xFB40
    } else {
        0xFBC0
    };
    [(base + (cp >> 15)) as u16, ((cp & 0x7FFF) | 0x8000) as u16]
}

/// The conjoining jamo of a Hangul syllable (MySQL decomposes U+AC00 to
/// U+D7AF by the Unicode formula; the last two are jamo of two).
fn jamo(cp: u32) -> ([u32; 3], usize) {
    debug_assert!(HANGUL.contains(&cp));
    let s = cp - 0xAC00;
    let (l, v, t) = (s / (21 * 28), (s % (21 * 28)) / 28, s % 28);
    let j = [0x1100 + l, 0x1161 + v, 0x11A7 + t];
    (j, if t == 0 { 2 } else { 3 })
}

/// The primaries of one character.
pub(super) fn weights(c: char) -> Weights {
    let cp = c as u32;
    let t = table();
    if let Some(w) = t.listed(cp) {
        return Weights::Listed(w);
    }
    if HANGUL.contains(&cp) {
        let (j, n) = jamo(cp);
        let mut w = [0u16; 3];
        let mut k = 0;
        for &x in &j[..n] {
            // A jamo's one collation element (MySQL takes the first).
            let p = t.listed(x).and_then(|s| s.first().copied());
            debug_assert!(p.is_some(), "jamo U+{x:04X} has a primary");
            if let Some(p) = p {
                w[k] = p;
                k += 1;
            }
        }
        return Weights::Computed(w, k as u8);
    }
    let [a, b] = implicit(cp);
    Weights::Computed([a, b, 0], 2)
}

/// The primaries of a string, in order (ignorable characters give none).
pub(super) struct Primaries<'a> {
    chars: std::str::Chars<'a>,
    cur: Weights,
    at: usize,
}

impl<'a> Primaries<'a> {
    pub(super) fn new(s: &'a str) -> Primaries<'a> {
        Primaries {
            chars: s.chars(),
            cur: Weights::Listed(&[]),
            at: 0,
        }
    }
}

impl Iterator for Primaries<'_> {
    type Item = u16;

    fn next(&mut self) -> Option<u16> {
        loop {
            if let Some(&w) = self.cur.as_slice().get(self.at) {
                self.at += 1;
                return Some(w);
            }
            self.cur = weights(self.chars.next()?);
            self.at = 0;
        }
    }
}

/// Two characters match in `LIKE` (MySQL's `my_uca_charcmp_900`): the
/// same code point, or both on a page of MySQL's table and of equal
/// primaries. A character of an unlisted page (most CJK ideographs,
/// Hangul syllables, unassigned planes) matches only itself.
pub(super) fn like_eq(a: char, b: char) -> bool {
    if a == b {
        return true;
    }
    let t = table();
    t.page_listed(a as u32)
        && t.page_listed(b as u32)
        && weights(a).as_slice() == weights(b).as_slice()
}

/// How many code points the table lists (for a test of the decoder).
#[cfg(test)]
pub(super) fn listed_count() -> usize {
    let t = table();
    t.slots.iter().filter(|&&e| e != ABSENT).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decoder_refuses_a_damaged_blob() {
        assert!(decode(BLOB).is_some());
        assert!(decode(&BLOB[..BLOB.len() - 1]).is_none());
        assert!(decode(b"UCA8\0\0\0\0").is_none());
        assert!(decode(b"UCA9\0\0\0\x01").is_none());
        // One entry, U+0000 (distance 1 from -1), no primaries: fine; a
        // trailing byte is not.
        assert!(decode(b"UCA9\0\0\0\x01\x01\x00").is_some());
        assert!(decode(b"UCA9\0\0\0\x01\x01\x00\x00").is_none());
        // A distance of 0 would list a code point twice.
        assert!(decode(b"UCA9\0\0\0\x02\x01\x00\x00\x00").is_none());
    }

    #[test]
    fn implicit_weights_follow_mysql_ranges() {
        assert_eq!(implicit(0x4E00), [0xFB40, 0xCE00]);
        assert_eq!(implicit(0x9FD5), [0xFB41, 0x9FD5]);
        assert_eq!(implicit(0x9FD6), [0xFBC1, 0x9FD6]);
        assert_eq!(implicit(0xFA29), [0xFB41, 0xFA29]);
        assert_eq!(implicit(0x20000), [0xFB84, 0x8000]);
        assert_eq!(implicit(0x2CEA1), [0xFB85, 0xCEA1]);
        assert_eq!(implicit(0x2CEA2), [0xFBC5, 0xCEA2]);
        assert_eq!(implicit(0x18AFF), [0xFB00, 0x9AFF]);
        assert_eq!(implicit(0x10FFFF), [0xFBE1, 0xFFFF]);
        // Hangul past the last syllable: decomposed by formula, as MySQL.
        assert_eq!(jamo(0xD7AF), ([0x1113, 0x1161, 0x11B2], 3));
        assert_eq!(weights('\u{D7A4}').as_slice().len(), 2);
    }
}
