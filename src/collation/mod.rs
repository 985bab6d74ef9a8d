//! Collations: how two UTF-8 strings compare, and the weight strings
//! (sort keys) that hash and order them.
//!
//! Owns the [`Collation`] enum, the lookup of a collation by its MySQL
//! name (unknown names are 1273, known collations Tributary does not
//! implement are refused with 1235 — decision 009, never approximated),
//! comparison, equality, `LIKE` matching and [`Collation::sort_key`], and
//! MySQL's coercibility rule for which operand's collation an operation
//! uses ([`Derivation::aggregate`], 1267 on an illegal mix).
//!
//! Never reads rows, the catalog or session state: callers say which
//! collation applies.
//!
//! Implemented:
//! - `utf8mb4_bin` (Tributary's default) and `utf8mb4_0900_bin`: code point
//!   order, NO PAD (`'a' < 'a '`). MySQL 8's `utf8mb4_bin` is PAD SPACE;
//!   Tributary's is not (docs/COMPATIBILITY.md says why).
//! - `utf8mb4_general_ci`: MySQL's per-code-point weights (Latin letters
//!   fold case and accents, `'ß' = 's'`, every supplementary character
//!   weighs U+FFFD), PAD SPACE (`'a' = 'a  '`, and `'a\t' < 'a'` because
//!   the shorter string compares as if padded with spaces).
//!
//! `utf8mb4_0900_ai_ci` (UCA 9.0 DUCET primary weights) is refused: no
//! exact DUCET 9.0 weight table is available to Tributary yet (`feruca`'s
//! DUCET is of Unicode 14 and later, `icu_collator` is CLDR root), and an
//! approximation would give answers that look right and are not.

use std::cmp::Ordering;
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

use crate::error::{SqlError, SqlResult};

mod general_ci_table;

/// MySQL's ER_UNKNOWN_COLLATION.
pub const UNKNOWN_COLLATION: u16 = 1273;
/// MySQL's ER_COLLATION_CHARSET_MISMATCH.
pub const COLLATION_CHARSET_MISMATCH: u16 = 1253;
/// MySQL's ER_CANT_AGGREGATE_2COLLATIONS (illegal mix of collations).
pub const CANT_AGGREGATE_2COLLATIONS: u16 = 1267;

/// A collation of UTF-8 (utf8mb4) text. Stored in the catalog by its
/// MySQL name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub enum Collation {
    /// Code point order, NO PAD (the server default).
    #[default]
    #[serde(rename = "utf8mb4_bin")]
    Utf8mb4Bin,
    /// Code point order, NO PAD (MySQL 8's `utf8mb4_0900_bin`).
    #[serde(rename = "utf8mb4_0900_bin")]
    Utf8mb4_0900Bin,
    /// MySQL's `utf8mb4_general_ci`: case- and accent-folding weights per
    /// code point, PAD SPACE.
    #[serde(rename = "utf8mb4_general_ci")]
    Utf8mb4GeneralCi,
}

/// How strongly an operand's collation binds (MySQL's coercibility; a
/// lower value wins).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Coercibility {
    /// `x COLLATE c`.
    Explicit = 0,
    /// A column (or a stored value).
    Implicit = 2,
    /// A literal or a user variable.
    Coercible = 4,
    /// A number or temporal value converted to text.
    Numeric = 5,
    /// NULL.
    Ignorable = 6,
}

impl Coercibility {
    fn word(self) -> &'static str {
        match self {
            Coercibility::Explicit => "EXPLICIT",
            Coercibility::Implicit => "IMPLICIT",
            Coercibility::Coercible => "COERCIBLE",
            Coercibility::Numeric => "NUMERIC",
            Coercibility::Ignorable => "IGNORABLE",
        }
    }
}

/// An operand's collation and how it was derived.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Derivation {
    pub collation: Collation,
    pub coercibility: Coercibility,
}

impl Derivation {
    pub fn new(collation: Collation, coercibility: Coercibility) -> Derivation {
        Derivation {
            collation,
            coercibility,
        }
    }

    /// The collation an operation `op` over operands `self` and `other`
    /// uses, by MySQL's rules: the lower coercibility wins; at equal
    /// coercibility the same collation is kept, a `_bin` collation beats a
    /// `_ci` one (MySQL 8: "the _bin collation is used"), and two different
    /// explicit collations (or two different non-binary ones) are an
    /// illegal mix (1267).
    pub fn aggregate(self, other: Derivation, op: &str) -> SqlResult<Derivation> {
        let (a, b) = (self, other);
        if a.collation == b.collation {
            return Ok(Derivation::new(
                a.collation,
                a.coercibility.min(b.coercibility),
            ));
        }
        match a.coercibility.cmp(&b.coercibility) {
            Ordering::Less => Ok(a),
            Ordering::Greater => Ok(b),
            Ordering::Equal if a.coercibility != Coercibility::Explicit => {
                match (a.collation.is_binary(), b.collation.is_binary()) {
                    (true, false) => Ok(a),
                    (false, true) => Ok(b),
                    // Two code point orders: one behaviour, keep the first.
                    (true, true) => Ok(a),
                    (false, false) => Err(illegal_mix(a, b, op)),
                }
            }
            Ordering::Equal => Err(illegal_mix(a, b, op)),
        }
    }
}

fn illegal_mix(a: Derivation, b: Derivation, op: &str) -> SqlError {
    SqlError::new(
        CANT_AGGREGATE_2COLLATIONS,
        format!(
            "Illegal mix of collations ({},{}) and ({},{}) for operation '{op}'",
            a.collation.name(),
            a.coercibility.word(),
            b.collation.name(),
            b.coercibility.word()
        ),
    )
}

/// Character sets MySQL 8 knows (their collations are refused, not
/// unknown: Tributary stores UTF-8 only).
const OTHER_CHARSETS: &[&str] = &[
    "armscii8", "ascii", "big5", "cp1250", "cp1251", "cp1256", "cp1257", "cp850", "cp852", "cp866",
    "cp932", "dec8", "eucjpms", "euckr", "gb18030", "gb2312", "gbk", "geostd8", "greek", "hebrew",
    "hp8", "keybcs2", "koi8r", "koi8u", "latin1", "latin2", "latin5", "latin7", "macce",
    "macroman", "sjis", "swe7", "tis620", "ucs2", "ujis", "utf16", "utf16le", "utf32",
];

impl Collation {
    /// Every implemented collation.
    pub const ALL: [Collation; 3] = [
        Collation::Utf8mb4Bin,
        Collation::Utf8mb4_0900Bin,
        Collation::Utf8mb4GeneralCi,
    ];

    /// The collation a name (as written after `COLLATE`, quotes allowed)
    /// denotes. `utf8`/`utf8mb3` names map to their utf8mb4 twin (the same
    /// weights for every character utf8mb3 holds; Tributary stores text as
    /// utf8mb4). A collation MySQL has but Tributary does not implement is
    /// refused with 1235; a name MySQL does not know is 1273.
    pub fn lookup(name: &str) -> SqlResult<Collation> {
        let n = name.trim_matches(['\'', '"', '`']).to_ascii_lowercase();
        match n.as_str() {
            "utf8mb4_bin" | "utf8_bin" | "utf8mb3_bin" | "binary" => {
                return Ok(Collation::Utf8mb4Bin)
            }
            "utf8mb4_0900_bin" => return Ok(Collation::Utf8mb4_0900Bin),
            "utf8mb4_general_ci" | "utf8_general_ci" | "utf8mb3_general_ci" => {
                return Ok(Collation::Utf8mb4GeneralCi)
            }
            _ => {}
        }
        let (cs, rest) = n.split_once('_').unwrap_or((n.as_str(), ""));
        let unicode = matches!(cs, "utf8mb4" | "utf8" | "utf8mb3");
        let known = if unicode {
            // MySQL 8's other UTF-8 collations: UCA-based (`_0900_ai_ci`,
            // `_unicode_ci`, `_unicode_520_ci`, language tailorings) and
            // `_general_mysql500_ci`; all end in a strength suffix.
            ["_ci", "_cs", "_as_ci", "_as_cs", "_ai_ci"]
                .iter()
                .any(|s| rest.ends_with(s))
                || rest == "ci"
        } else {
            OTHER_CHARSETS.contains(&cs) && !rest.is_empty()
        };
        if !known {
            return Err(SqlError::new(
                UNKNOWN_COLLATION,
                format!("Unknown collation: '{n}'"),
            ));
        }
        if n == "utf8mb4_0900_ai_ci" {
            return Err(SqlError::unsupported(
                "COLLATE utf8mb4_0900_ai_ci: UCA 9.0 weights are not implemented \
                 (use utf8mb4_general_ci or utf8mb4_bin)",
            ));
        }
        Err(SqlError::unsupported(format!(
            "COLLATE {n}: implemented collations are utf8mb4_bin, \
             utf8mb4_0900_bin and utf8mb4_general_ci"
        )))
    }

    /// The collation of `x COLLATE name` where `x` is text (utf8mb4): as
    /// [`Self::lookup`], but a collation of another character set
    /// (`latin1_swedish_ci`, `utf8mb3_general_ci`, `binary`) is 1253, as in
    /// MySQL.
    pub fn lookup_for_utf8mb4(name: &str) -> SqlResult<Collation> {
        let n = name.trim_matches(['\'', '"', '`']).to_ascii_lowercase();
        let c = Collation::lookup(&n);
        if n.starts_with("utf8mb4_") || c.as_ref().is_err_and(|e| e.code == UNKNOWN_COLLATION) {
            return c;
        }
        // MySQL 8 names the utf8 alias by what it is.
        let shown = match n.strip_prefix("utf8_") {
            Some(rest) => format!("utf8mb3_{rest}"),
            None => n,
        };
        Err(SqlError::new(
            COLLATION_CHARSET_MISMATCH,
            format!("COLLATION '{shown}' is not valid for CHARACTER SET 'utf8mb4'"),
        ))
    }

    /// The MySQL name.
    pub fn name(self) -> &'static str {
        match self {
            Collation::Utf8mb4Bin => "utf8mb4_bin",
            Collation::Utf8mb4_0900Bin => "utf8mb4_0900_bin",
            Collation::Utf8mb4GeneralCi => "utf8mb4_general_ci",
        }
    }

    /// MySQL's collation id (information_schema.COLLATIONS.ID).
    pub fn id(self) -> u16 {
        match self {
            Collation::Utf8mb4Bin => 46,
            Collation::Utf8mb4_0900Bin => 309,
            Collation::Utf8mb4GeneralCi => 45,
        }
    }

    /// The default (`utf8mb4_bin`): what the catalog leaves unwritten.
    pub fn is_default(&self) -> bool {
        *self == Collation::default()
    }

    /// Code point order (equal only when byte-identical).
    pub fn is_binary(self) -> bool {
        !matches!(self, Collation::Utf8mb4GeneralCi)
    }

    /// Trailing spaces do not count (`'a' = 'a '`).
    pub fn pad_space(self) -> bool {
        matches!(self, Collation::Utf8mb4GeneralCi)
    }

    /// Order of `a` and `b` under this collation.
    pub fn cmp(self, a: &str, b: &str) -> Ordering {
        match self {
            Collation::Utf8mb4Bin | Collation::Utf8mb4_0900Bin => a.cmp(b),
            Collation::Utf8mb4GeneralCi => {
                let (mut x, mut y) = (a.chars().map(general_ci), b.chars().map(general_ci));
                loop {
                    match (x.next(), y.next()) {
                        (Some(p), Some(q)) if p == q => {}
                        (Some(p), Some(q)) => return p.cmp(&q),
                        (None, None) => return Ordering::Equal,
                        // PAD SPACE: the shorter string goes on as spaces.
                        (Some(p), None) => return pad_cmp(p, x),
                        (None, Some(q)) => return pad_cmp(q, y).reverse(),
                    }
                }
            }
        }
    }

    /// Equality under this collation.
    pub fn eq(self, a: &str, b: &str) -> bool {
        match self {
            Collation::Utf8mb4Bin | Collation::Utf8mb4_0900Bin => a == b,
            Collation::Utf8mb4GeneralCi => self.cmp(a, b) == Ordering::Equal,
        }
    }

    /// A weight string: `sort_key(a) == sort_key(b)` exactly when `a` and
    /// `b` are equal under this collation, and the byte order of keys is
    /// the collation's order. For hashing (GROUP BY, DISTINCT, joins) and
    /// B-tree keys.
    ///
    /// Binary collations: the UTF-8 bytes (whose byte order is code point
    /// order). `utf8mb4_general_ci`: each character's 16-bit weight, big
    /// endian; PAD SPACE is kept exact by writing a space as `00 20 f`
    /// with `f` = 0 when the next non-space weight is below a space's and
    /// 2 when above, and ending every key with `00 20 01` (the endless
    /// spaces after the string) — trailing spaces are dropped first.
    pub fn sort_key(self, s: &str) -> Vec<u8> {
        match self {
            Collation::Utf8mb4Bin | Collation::Utf8mb4_0900Bin => s.as_bytes().to_vec(),
            Collation::Utf8mb4GeneralCi => {
                let w: Vec<u16> = s.trim_end_matches(' ').chars().map(general_ci).collect();
                let mut out = Vec::with_capacity(w.len() * 2 + 3);
                for (i, &x) in w.iter().enumerate() {
                    out.extend_from_slice(&x.to_be_bytes());
                    if x == SPACE {
                        // A non-space follows: the string was trimmed.
                        let next = w[i..].iter().find(|&&y| y != SPACE);
                        debug_assert!(next.is_some(), "trailing spaces were trimmed");
                        out.push(if next.is_some_and(|&y| y < SPACE) {
                            0
                        } else {
                            2
                        });
                    }
                }
                out.extend_from_slice(&[0x00, 0x20, 0x01]);
                out
            }
        }
    }

    /// `s` with each character replaced by one that stands for its weight:
    /// the same number of characters, two of them equal exactly when the
    /// originals are equal under this collation (no padding: for searches
    /// by position, INSTR / LOCATE).
    pub fn fold(self, s: &str) -> String {
        match self {
            Collation::Utf8mb4Bin | Collation::Utf8mb4_0900Bin => s.to_string(),
            Collation::Utf8mb4GeneralCi => s
                .chars()
                .map(|c| char::from_u32(u32::from(general_ci(c))).unwrap_or('\u{FFFD}'))
                .collect(),
        }
    }

    /// Whether the collation ignores case (REGEXP then matches without
    /// case, as MySQL's ICU does under such a collation).
    pub fn case_insensitive(self) -> bool {
        !self.is_binary()
    }

    /// `s LIKE pat` under this collation (`%`, `_`, `\` escapes).
    /// Characters match by weight; trailing spaces count (LIKE does not
    /// pad, in MySQL either).
    pub fn like(self, s: &str, pat: &str) -> bool {
        match self {
            Collation::Utf8mb4Bin | Collation::Utf8mb4_0900Bin => {
                if s.is_ascii() && pat.is_ascii() {
                    return wildcard(s.as_bytes(), pat.as_bytes(), |a, b| a == b);
                }
                let s: Vec<char> = s.chars().collect();
                let p: Vec<char> = pat.chars().collect();
                wildcard(&s, &p, |a, b| a == b)
            }
            Collation::Utf8mb4GeneralCi => {
                let s: Vec<char> = s.chars().collect();
                let p: Vec<char> = pat.chars().collect();
                wildcard(&s, &p, |a, b| general_ci(a) == general_ci(b))
            }
        }
    }
}

/// LIKE's matcher over `s` and `p` (units of bytes or chars): `%` any
/// run, `_` one unit, `\x` the unit `x` itself (a trailing `\` is itself).
/// Iterative with one backtrack point, the last `%` seen: O(|s|·|p|) at
/// worst, never exponential (a pattern such as `%a%a%a%b` on a long string
/// is a user's input, not a denial of service).
pub fn wildcard<T: Copy + Into<u32>>(s: &[T], p: &[T], eq: impl Fn(T, T) -> bool) -> bool {
    const PCT: u32 = '%' as u32;
    const ONE: u32 = '_' as u32;
    const ESC: u32 = '\\' as u32;
    let (mut si, mut pi) = (0usize, 0usize);
    // (pattern position after the `%`, string position it now absorbs to).
    let mut star: Option<(usize, usize)> = None;
    while si < s.len() {
        if pi < p.len() {
            let c: u32 = p[pi].into();
            if c == PCT {
                pi += 1;
                star = Some((pi, si));
                continue;
            }
            let (lit, width) = if c == ESC && pi + 1 < p.len() {
                (Some(p[pi + 1]), 2)
            } else if c == ONE {
                (None, 1)
            } else {
                (Some(p[pi]), 1)
            };
            if lit.is_none_or(|l| eq(s[si], l)) {
                si += 1;
                pi += width;
                continue;
            }
        }
        match star {
            Some((sp, ss)) => {
                pi = sp;
                si = ss + 1;
                star = Some((sp, ss + 1));
            }
            None => return false,
        }
    }
    while pi < p.len() && p[pi].into() == PCT {
        pi += 1;
    }
    pi == p.len()
}

impl std::fmt::Display for Collation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

const SPACE: u16 = 0x20;

/// The rest of a longer string against the endless spaces padding the
/// shorter one: decided by its first weight that is not a space's.
fn pad_cmp(first: u16, rest: impl Iterator<Item = u16>) -> Ordering {
    std::iter::once(first)
        .chain(rest)
        .find(|&w| w != SPACE)
        .map_or(Ordering::Equal, |w| w.cmp(&SPACE))
}

/// The utf8mb4_general_ci weight of one character.
fn general_ci(c: char) -> u16 {
    let cp = c as u32;
    if cp < 0x80 {
        return (c.to_ascii_uppercase() as u32) as u16;
    }
    if cp > 0xFFFF {
        return 0xFFFD;
    }
    static TABLE: OnceLock<Vec<u16>> = OnceLock::new();
    let t = TABLE.get_or_init(|| {
        let mut t: Vec<u16> = (0..=0xFFFFu32).map(|c| c as u16).collect();
        for &(c, w) in general_ci_table::GENERAL_CI {
            t[usize::from(c)] = w;
        }
        t
    });
    t[cp as usize]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::code;

    const CI: Collation = Collation::Utf8mb4GeneralCi;
    const BIN: Collation = Collation::Utf8mb4Bin;

    #[test]
    fn lookup_by_name() {
        assert_eq!(Collation::lookup("utf8mb4_bin").ok(), Some(BIN));
        assert_eq!(Collation::lookup("'UTF8MB4_GENERAL_CI'").ok(), Some(CI));
        assert_eq!(Collation::lookup("utf8_general_ci").ok(), Some(CI));
        assert_eq!(
            Collation::lookup("utf8mb4_0900_bin").ok(),
            Some(Collation::Utf8mb4_0900Bin)
        );
        let err = |n: &str| Collation::lookup(n).map(|_| ()).unwrap_err().code;
        assert_eq!(err("no_such_collation"), UNKNOWN_COLLATION);
        assert_eq!(err("utf8mb4_nonsense"), UNKNOWN_COLLATION);
        assert_eq!(err("latin1_swedish_ci"), code::NOT_SUPPORTED);
        assert_eq!(err("utf8mb4_unicode_ci"), code::NOT_SUPPORTED);
        assert_eq!(err("utf8mb4_0900_ai_ci"), code::NOT_SUPPORTED);
        for c in Collation::ALL {
            assert_eq!(Collation::lookup(c.name()).ok(), Some(c));
        }
    }

    #[test]
    fn expression_collations_are_utf8mb4_ones() {
        assert_eq!(
            Collation::lookup_for_utf8mb4("utf8mb4_general_ci").ok(),
            Some(CI)
        );
        let err = |n: &str| {
            Collation::lookup_for_utf8mb4(n)
                .map(|_| ())
                .unwrap_err()
                .code
        };
        assert_eq!(err("utf8_general_ci"), COLLATION_CHARSET_MISMATCH);
        assert_eq!(err("binary"), COLLATION_CHARSET_MISMATCH);
        assert_eq!(err("latin1_swedish_ci"), COLLATION_CHARSET_MISMATCH);
        assert_eq!(err("utf8mb4_unicode_ci"), code::NOT_SUPPORTED);
        assert_eq!(err("nope"), UNKNOWN_COLLATION);
    }

    #[test]
    fn general_ci_folds_case_and_accents() {
        for (a, b) in [
            ("a", "A"),
            ("a", "á"),
            ("Á", "a"),
            ("ß", "s"),
            ("straße", "STRASE"),
            ("ÉCOLE", "ecole"),
            ("ø", "Ø"),
        ] {
            assert!(CI.eq(a, b), "{a} = {b}");
            assert_eq!(CI.sort_key(a), CI.sort_key(b), "{a} = {b}");
        }
        // ß weighs like one s, not two (per code point, no expansions).
        assert!(!CI.eq("straße", "strasse"));
        assert!(!CI.eq("a", "b"));
        assert!(CI.cmp("a", "B") == Ordering::Less);
        assert!(BIN.cmp("a", "B") == Ordering::Greater);
        assert!(!BIN.eq("a", "A"));
    }

    #[test]
    fn supplementary_characters_weigh_like_replacement_char() {
        assert!(CI.eq("😀", "😁"));
        assert!(CI.eq("😀", "\u{FFFD}"));
        assert!(!CI.eq("😀", "a"));
        assert!(!BIN.eq("😀", "😁"));
    }

    #[test]
    fn general_ci_pads_with_spaces_and_bin_does_not() {
        assert!(CI.eq("a", "a  "));
        assert!(CI.eq("", "   "));
        assert_eq!(CI.sort_key("a"), CI.sort_key("A  "));
        // Padded: 'a\t' against 'a ' — a tab is below a space.
        assert_eq!(CI.cmp("a\t", "a"), Ordering::Less);
        assert_eq!(CI.cmp("a", "a b"), Ordering::Less);
        assert_eq!(CI.cmp("", "\t"), Ordering::Greater);
        assert!(!BIN.eq("a", "a "));
        assert_eq!(BIN.cmp("a", "a\t"), Ordering::Less);
    }

    /// `sort_key` order is `cmp` order, on every pair of short strings over
    /// an alphabet with the cases that matter (space, a character below
    /// it, folded letters, accents, a supplementary character).
    #[test]
    fn sort_keys_order_like_cmp() {
        let alphabet = [' ', '\t', 'a', 'A', 'b', 'á', 'ß', 's', '😀', '\u{FFFD}'];
        let mut all = vec![String::new()];
        let mut last = vec![String::new()];
        for _ in 0..3 {
            let next: Vec<String> = last
                .iter()
                .flat_map(|s| alphabet.iter().map(move |c| format!("{s}{c}")))
                .collect();
            all.extend(next.iter().cloned());
            last = next;
        }
        for c in Collation::ALL {
            let keys: Vec<Vec<u8>> = all.iter().map(|s| c.sort_key(s)).collect();
            for (i, a) in all.iter().enumerate() {
                for (j, b) in all.iter().enumerate().step_by(7) {
                    assert_eq!(keys[i].cmp(&keys[j]), c.cmp(a, b), "{c}: {a:?} vs {b:?}");
                    assert_eq!(c.eq(a, b), keys[i] == keys[j], "{c}: {a:?} vs {b:?}");
                }
            }
        }
    }

    #[test]
    fn fold_keeps_positions_and_equalities() {
        assert_eq!(CI.fold("Ábß😀"), CI.fold("abs\u{FFFD}"));
        assert_eq!(CI.fold("Ábß😀").chars().count(), 4);
        assert_ne!(CI.fold("a"), CI.fold("b"));
        assert_eq!(BIN.fold("Ab"), "Ab");
    }

    #[test]
    fn like_follows_the_collation() {
        assert!(CI.like("Ábc", "a%"));
        assert!(CI.like("straße", "STRA_E"));
        assert!(!CI.like("a", "A "));
        assert!(CI.like("😀", "😁"));
        assert!(!BIN.like("Abc", "a%"));
        assert!(BIN.like("abc", "a%"));
    }

    #[test]
    fn coercibility_picks_the_collation() {
        let d = Derivation::new;
        use Coercibility::*;
        let ci_x = d(CI, Explicit);
        let bin_col = d(BIN, Implicit);
        let lit = d(BIN, Coercible);
        assert_eq!(lit.aggregate(ci_x, "=").ok(), Some(ci_x));
        assert_eq!(bin_col.aggregate(d(CI, Coercible), "=").ok(), Some(bin_col));
        assert_eq!(
            d(CI, Implicit).aggregate(lit, "=").ok(),
            Some(d(CI, Implicit))
        );
        // Two columns, _bin and _ci: the _bin collation is used.
        assert_eq!(d(CI, Implicit).aggregate(bin_col, "=").ok(), Some(bin_col));
        let e = ci_x.aggregate(d(BIN, Explicit), "=").unwrap_err();
        assert_eq!(e.code, CANT_AGGREGATE_2COLLATIONS);
        assert_eq!(
            e.message,
            "Illegal mix of collations (utf8mb4_general_ci,EXPLICIT) and \
             (utf8mb4_bin,EXPLICIT) for operation '='"
        );
    }
}
