//! Exact fixed-point decimals: the values of MySQL's DECIMAL(p,s) type
//! (p ≤ 65, s ≤ 30) and of decimal literals such as `0.1`.
//!
//! This module owns the arithmetic (MySQL's result scales, rounding half
//! away from zero), the text form and the order-preserving key bytes of a
//! decimal. It never decides which SQL type an expression has (that is
//! `sql::plan::block`'s inference) and never touches SQL errors: operations
//! that can overflow return `None` and the caller raises the MySQL error.
//!
//! A value is a mantissa and a scale (value = mantissa / 10^scale). The
//! mantissa is an `i64` when it fits (the common case: no allocation) and
//! a boxed `BigInt` otherwise, so `Decimal` is 24 bytes and `Value` does
//! not grow (decision 019).

use num_bigint::{BigInt, Sign};
use std::cmp::Ordering;
use std::fmt;

/// Most digits a DECIMAL holds (MySQL's DECIMAL_MAX_PRECISION).
pub const MAX_PRECISION: u32 = 65;
/// Most fractional digits (MySQL's DECIMAL_MAX_SCALE).
pub const MAX_SCALE: u8 = 30;
/// Digits `/` adds to the dividend's scale (`div_precision_increment`).
pub const DIV_INCREMENT: u8 = 4;
/// Most fractional digits a value holds inside an expression (a
/// quotient's whole words; MySQL's buffers hold 81 digits).
pub const MAX_HELD_SCALE: u8 = 72;

#[derive(Clone)]
enum Mant {
    Small(i64),
    /// Never a value that fits an `i64` (one representation per value).
    Big(Box<BigInt>),
}

/// An exact decimal number with a scale (the count of fractional digits
/// it prints: `1.50` has scale 2).
///
/// A quotient keeps more digits than it shows, as MySQL's does: `1/3` is
/// held as 0.333333333 (whole 9-digit words) and shows 0.3333, so
/// `1/3*3` is 1.0000 and `1/3 = 0.3333` is false (MySQL 8 compares held
/// values; ORDER BY and keys use the shown one). `scale` is the held
/// scale, `shown` (≤ `scale`) the SQL type's; printing, comparison and
/// keys use the value rounded to `shown`, arithmetic the held value.
#[derive(Clone)]
pub struct Decimal {
    m: Mant,
    scale: u8,
    shown: u8,
}

fn pow10(n: u32) -> BigInt {
    BigInt::from(10u8).pow(n)
}

fn pow10_i128(n: u32) -> Option<i128> {
    10i128.checked_pow(n)
}

/// Integer division rounding half away from zero.
fn div_round(num: &BigInt, den: &BigInt) -> BigInt {
    let q = num / den;
    let r = num - &q * den;
    let twice: BigInt = r.magnitude().clone().into();
    let twice = twice * 2u8;
    let den_abs: BigInt = den.magnitude().clone().into();
    if twice >= den_abs {
        if (num.sign() == Sign::Minus) != (den.sign() == Sign::Minus) {
            q - 1u8
        } else {
            q + 1u8
        }
    } else {
        q
    }
}

impl Decimal {
    /// `mantissa / 10^scale`.
    pub fn new(mantissa: BigInt, scale: u8) -> Decimal {
        let m = match i64::try_from(&mantissa) {
            Ok(i) => Mant::Small(i),
            Err(_) => Mant::Big(Box::new(mantissa)),
        };
        Decimal {
            m,
            scale,
            shown: scale,
        }
    }

    /// `v / 10^scale`.
    pub fn from_i128(v: i128, scale: u8) -> Decimal {
        match i64::try_from(v) {
            Ok(i) => Decimal {
                m: Mant::Small(i),
                scale,
                shown: scale,
            },
            Err(_) => Decimal::new(BigInt::from(v), scale),
        }
    }

    /// An integer as a decimal of scale 0.
    pub fn from_i64(i: i64) -> Decimal {
        Decimal {
            m: Mant::Small(i),
            scale: 0,
            shown: 0,
        }
    }

    /// The mantissa as minimal little-endian two's complement bytes (what
    /// the row codec stores); no allocation for an `i64` mantissa.
    pub fn mantissa_bytes(&self, out: &mut Vec<u8>) {
        match &self.m {
            Mant::Small(i) => {
                let b = i.to_le_bytes();
                // Drop high bytes that only repeat the sign.
                let mut n = 8;
                while n > 1 {
                    let (hi, below) = (b[n - 1], b[n - 2]);
                    if (hi == 0 && below < 0x80) || (hi == 0xFF && below >= 0x80) {
                        n -= 1;
                    } else {
                        break;
                    }
                }
                out.extend_from_slice(&b[..n]);
            }
            Mant::Big(b) => out.extend_from_slice(&b.to_signed_bytes_le()),
        }
    }

    /// The inverse of [`Decimal::mantissa_bytes`].
    pub fn from_mantissa_bytes(bytes: &[u8], scale: u8) -> Decimal {
        if bytes.is_empty() {
            return Decimal {
                m: Mant::Small(0),
                scale,
                shown: scale,
            };
        }
        if bytes.len() <= 8 {
            let fill = if bytes[bytes.len() - 1] >= 0x80 {
                0xFF
            } else {
                0
            };
            let mut b = [fill; 8];
            b[..bytes.len()].copy_from_slice(bytes);
            return Decimal {
                m: Mant::Small(i64::from_le_bytes(b)),
                scale,
                shown: scale,
            };
        }
        Decimal::new(BigInt::from_signed_bytes_le(bytes), scale)
    }

    /// The mantissa (value × 10^scale).
    pub fn mantissa(&self) -> BigInt {
        match &self.m {
            Mant::Small(i) => BigInt::from(*i),
            Mant::Big(b) => (**b).clone(),
        }
    }

    /// The mantissa and held scale when the mantissa fits an `i64` (the
    /// common case: arithmetic on it needs no allocation).
    pub fn small_parts(&self) -> Option<(i64, u8)> {
        self.small().map(|m| (m, self.scale))
    }

    fn small(&self) -> Option<i64> {
        match self.m {
            Mant::Small(i) => Some(i),
            Mant::Big(_) => None,
        }
    }

    /// Fractional digits the value shows (its SQL type's scale; the field
    /// `scale` is the held one, see [`Decimal::held_scale`]).
    #[allow(clippy::misnamed_getters)]
    pub fn scale(&self) -> u8 {
        self.shown
    }

    /// Fractional digits held (more than shown for a quotient).
    pub fn held_scale(&self) -> u8 {
        self.scale
    }

    /// The value showing only `shown` (≤ its held scale) digits.
    pub fn with_shown(mut self, shown: u8) -> Decimal {
        self.shown = shown.min(self.scale);
        self
    }

    /// The value as SQL sees it: rounded to the digits it shows.
    pub fn visible(&self) -> std::borrow::Cow<'_, Decimal> {
        if self.shown < self.scale {
            std::borrow::Cow::Owned(self.rescale(self.shown))
        } else {
            std::borrow::Cow::Borrowed(self)
        }
    }

    /// Order of the values as shown (ORDER BY, keys: MySQL sorts by the
    /// value at its declared scale); SQL comparisons use
    /// [`Decimal::cmp_value`].
    pub fn cmp_sql(&self, o: &Decimal) -> Ordering {
        self.visible().cmp_value(&o.visible())
    }

    pub fn is_zero(&self) -> bool {
        matches!(self.m, Mant::Small(0))
    }

    pub fn is_negative(&self) -> bool {
        match &self.m {
            Mant::Small(i) => *i < 0,
            Mant::Big(b) => b.sign() == Sign::Minus,
        }
    }

    /// -1, 0 or 1.
    pub fn signum(&self) -> i64 {
        if self.is_zero() {
            0
        } else if self.is_negative() {
            -1
        } else {
            1
        }
    }

    /// Digits of the mantissa's magnitude (0 has one digit).
    fn mant_digits(&self) -> u32 {
        match &self.m {
            Mant::Small(i) => i.unsigned_abs().checked_ilog10().map_or(1, |d| d + 1),
            Mant::Big(b) => b.magnitude().to_str_radix(10).len() as u32,
        }
    }

    /// Digits before the point (0 for `0.5`).
    pub fn int_digits(&self) -> u32 {
        self.mant_digits().saturating_sub(u32::from(self.scale))
    }

    /// Whether the value fits DECIMAL(precision, scale) once rounded to
    /// `scale` digits.
    pub fn fits(&self, precision: u8, scale: u8) -> bool {
        let r = self.rescale(scale);
        r.int_digits() <= u32::from(precision.saturating_sub(scale))
    }

    /// The value with `scale` fractional digits: padded with zeros, or
    /// rounded half away from zero.
    pub fn rescale(&self, scale: u8) -> Decimal {
        if scale == self.scale {
            return self.clone().with_shown(scale);
        }
        if scale > self.scale {
            let k = u32::from(scale - self.scale);
            if let (Some(i), Some(p)) = (self.small(), pow10_i128(k)) {
                if let Some(v) = i128::from(i).checked_mul(p) {
                    return Decimal::from_i128(v, scale);
                }
            }
            return Decimal::new(self.mantissa() * pow10(k), scale);
        }
        let k = u32::from(self.scale - scale);
        if let (Some(i), Some(p)) = (self.small(), pow10_i128(k)) {
            let i = i128::from(i);
            let q = i / p;
            let r = i % p;
            let q = if r.abs() * 2 >= p { q + i.signum() } else { q };
            return Decimal::from_i128(q, scale);
        }
        Decimal::new(div_round(&self.mantissa(), &pow10(k)), scale)
    }

    /// The value cut (toward zero) to `scale` fractional digits.
    pub fn truncate_scale(&self, scale: u8) -> Decimal {
        if scale >= self.scale {
            return self.rescale(scale);
        }
        let k = u32::from(self.scale - scale);
        Decimal::new(self.mantissa() / pow10(k), scale)
    }

    /// ROUND(x, d) / TRUNCATE(x, d) as MySQL: half away from zero (or
    /// toward zero); a negative `d` rounds to tens, hundreds, …; the
    /// result has scale d clamped to 0..=30 (`ROUND(1.5, 3)` is `1.500`).
    pub fn round_to(&self, d: i64, truncate: bool) -> Decimal {
        let target = d.clamp(0, i64::from(MAX_SCALE)) as u8;
        if d >= 0 {
            return if truncate {
                self.truncate_scale(target)
            } else {
                self.rescale(target)
            };
        }
        let k = u32::try_from(-d).unwrap_or(u32::MAX).min(200);
        let whole = self.truncate_scale(0);
        let unit = pow10(k);
        let m = self.mantissa();
        let sc = pow10(u32::from(self.scale));
        let q = if truncate {
            whole.mantissa() / &unit
        } else {
            div_round(&m, &(sc * &unit))
        };
        Decimal::new(q * unit, 0)
    }

    /// FLOOR (scale 0).
    pub fn floor(&self) -> Decimal {
        let t = self.truncate_scale(0);
        if self.is_negative() && t.cmp_value(self) != Ordering::Equal {
            t.sub(&Decimal::from_i64(1))
        } else {
            t
        }
    }

    /// CEIL (scale 0).
    pub fn ceil(&self) -> Decimal {
        let t = self.truncate_scale(0);
        if !self.is_negative() && t.cmp_value(self) != Ordering::Equal {
            t.add(&Decimal::from_i64(1))
        } else {
            t
        }
    }

    pub fn neg(&self) -> Decimal {
        match self.m {
            Mant::Small(i) if i != i64::MIN => Decimal {
                m: Mant::Small(-i),
                scale: self.scale,
                shown: self.shown,
            },
            _ => Decimal::new(-self.mantissa(), self.scale).with_shown(self.shown),
        }
    }

    pub fn abs(&self) -> Decimal {
        if self.is_negative() {
            self.neg()
        } else {
            self.clone()
        }
    }

    /// Mantissas of `self` and `o` at their common (larger) scale, as i128
    /// when both fit.
    fn aligned_small(&self, o: &Decimal) -> Option<(i128, i128, u8)> {
        let (a, b) = (self.small()?, o.small()?);
        let s = self.scale.max(o.scale);
        let a = i128::from(a).checked_mul(pow10_i128(u32::from(s - self.scale))?)?;
        let b = i128::from(b).checked_mul(pow10_i128(u32::from(s - o.scale))?)?;
        Some((a, b, s))
    }

    fn aligned_big(&self, o: &Decimal) -> (BigInt, BigInt, u8) {
        let s = self.scale.max(o.scale);
        (
            self.mantissa() * pow10(u32::from(s - self.scale)),
            o.mantissa() * pow10(u32::from(s - o.scale)),
            s,
        )
    }

    /// Exact sum, scale max(s1, s2).
    pub fn add(&self, o: &Decimal) -> Decimal {
        let shown = self.shown.max(o.shown);
        if let Some((a, b, s)) = self.aligned_small(o) {
            if let Some(v) = a.checked_add(b) {
                return Decimal::from_i128(v, s).with_shown(shown);
            }
        }
        let (a, b, s) = self.aligned_big(o);
        Decimal::new(a + b, s).with_shown(shown)
    }

    /// Exact difference, scale max(s1, s2).
    pub fn sub(&self, o: &Decimal) -> Decimal {
        self.add(&o.neg())
    }

    /// Exact product, scale s1 + s2 showing at most [`MAX_SCALE`] digits
    /// (held digits past [`MAX_HELD_SCALE`] cut).
    pub fn mul(&self, o: &Decimal) -> Decimal {
        let s = u32::from(self.scale) + u32::from(o.scale);
        let shown = (u32::from(self.shown) + u32::from(o.shown)).min(u32::from(MAX_SCALE)) as u8;
        let exact = match (self.small(), o.small()) {
            (Some(a), Some(b)) => Decimal::from_i128(i128::from(a) * i128::from(b), 0),
            _ => Decimal::new(self.mantissa() * o.mantissa(), 0),
        };
        if s <= u32::from(MAX_HELD_SCALE) {
            Decimal {
                scale: s as u8,
                ..exact
            }
            .with_shown(shown)
        } else {
            let k = s - u32::from(MAX_HELD_SCALE);
            Decimal::new(exact.mantissa() / pow10(k), MAX_HELD_SCALE).with_shown(shown)
        }
    }

    /// `self / o` rounded half away from zero to `scale` digits; `None`
    /// when `o` is zero.
    pub fn div_to(&self, o: &Decimal, scale: u8) -> Option<Decimal> {
        if o.is_zero() {
            return None;
        }
        // value = (m1 / 10^s1) / (m2 / 10^s2); q = value × 10^scale.
        let up = u32::from(o.scale) + u32::from(scale);
        let down = u32::from(self.scale);
        let (num, den) = if up >= down {
            (self.mantissa() * pow10(up - down), o.mantissa())
        } else {
            (self.mantissa(), o.mantissa() * pow10(down - up))
        };
        Some(Decimal::new(div_round(&num, &den), scale))
    }

    /// MySQL's `/`: shows scale s1 + [`DIV_INCREMENT`] (at most
    /// [`MAX_SCALE`]) and holds the quotient cut (not rounded) to whole
    /// 9-digit words, as MySQL 8's `do_div_mod` (strings/decimal.cc): each
    /// operand's held scale counts as whole words (w1, w2 digits), the
    /// increment is what of [`DIV_INCREMENT`] that padding did not already
    /// give, and the quotient holds w1 + w2 + increment digits rounded up
    /// to a word. So `0.001 / 0.3` holds 18 digits (two padded words),
    /// `1 / 3` nine.
    pub fn div(&self, o: &Decimal) -> Option<Decimal> {
        if o.is_zero() {
            return None;
        }
        let shown = self.shown.saturating_add(DIV_INCREMENT).min(MAX_SCALE);
        let words = |s: u8| u32::from(s).div_ceil(9) * 9;
        let (w1, w2) = (words(self.scale), words(o.scale));
        let padding = (w1 - u32::from(self.scale)) + (w2 - u32::from(o.scale));
        let incr = u32::from(DIV_INCREMENT).saturating_sub(padding);
        let held = (w1 + w2 + incr).div_ceil(9) * 9;
        let held = held.min(u32::from(MAX_HELD_SCALE));
        let up = u32::from(o.scale) + held;
        let down = u32::from(self.scale);
        let (num, den) = if up >= down {
            (self.mantissa() * pow10(up - down), o.mantissa())
        } else {
            (self.mantissa(), o.mantissa() * pow10(down - up))
        };
        Some(Decimal::new(num / den, held as u8).with_shown(shown))
    }

    /// MOD / `%`: the remainder of the truncated quotient, with the
    /// dividend's sign and scale max(s1, s2); `None` when `o` is zero.
    pub fn rem(&self, o: &Decimal) -> Option<Decimal> {
        if o.is_zero() {
            return None;
        }
        let shown = self.shown.max(o.shown);
        if let Some((a, b, s)) = self.aligned_small(o) {
            return Some(Decimal::from_i128(a % b, s).with_shown(shown));
        }
        let (a, b, s) = self.aligned_big(o);
        Some(Decimal::new(a % b, s).with_shown(shown))
    }

    /// DIV: the quotient truncated toward zero, as an exact integer
    /// (scale 0); `None` when `o` is zero.
    pub fn int_div(&self, o: &Decimal) -> Option<Decimal> {
        if o.is_zero() {
            return None;
        }
        if let Some((a, b, _)) = self.aligned_small(o) {
            return Some(Decimal::from_i128(a / b, 0));
        }
        let (a, b, _) = self.aligned_big(o);
        Some(Decimal::new(a / b, 0))
    }

    /// Numeric comparison (1.0 equals 1.00).
    pub fn cmp_value(&self, o: &Decimal) -> Ordering {
        if let Some((a, b, _)) = self.aligned_small(o) {
            return a.cmp(&b);
        }
        let (a, b, _) = self.aligned_big(o);
        a.cmp(&b)
    }

    /// The integer value when the decimal is a whole number that fits.
    pub fn to_i64_exact(&self) -> Option<i64> {
        let t = self.truncate_scale(0);
        if t.cmp_value(self) != Ordering::Equal {
            return None;
        }
        t.small()
    }

    /// Rounded half away from zero to an integer (CAST AS SIGNED);
    /// `None` beyond the i64 range.
    pub fn to_i64_round(&self) -> Option<i64> {
        self.rescale(0).small()
    }

    /// Nearest double to the held value (correctly rounded).
    pub fn to_f64(&self) -> f64 {
        if let Some(i) = self.small() {
            if self.scale == 0 {
                return i as f64;
            }
        }
        self.held_text().parse::<f64>().unwrap_or(0.0)
    }

    /// Every held digit (`0.333333333` for `1/3`).
    pub fn held_text(&self) -> String {
        let digits = match &self.m {
            Mant::Small(i) => i.unsigned_abs().to_string(),
            Mant::Big(b) => b.magnitude().to_str_radix(10),
        };
        let scale = usize::from(self.scale);
        let digits = if digits.len() <= scale {
            format!("{}{digits}", "0".repeat(scale + 1 - digits.len()))
        } else {
            digits
        };
        let (int, frac) = digits.split_at(digits.len() - scale);
        let sign = if self.is_negative() { "-" } else { "" };
        if scale > 0 {
            format!("{sign}{int}.{frac}")
        } else {
            format!("{sign}{int}")
        }
    }

    /// A double as a decimal: its shortest round-trip decimal form, rounded
    /// to at most [`MAX_SCALE`] digits; `None` for NaN / infinity.
    pub fn from_f64(f: f64) -> Option<Decimal> {
        if !f.is_finite() {
            return None;
        }
        // Rust's `Display` for f64 never uses an exponent.
        let d = Decimal::parse(&format!("{}", f + 0.0))?;
        Some(d)
    }

    /// Parse `[+-]digits[.digits]` (no exponent, no spaces); `None` if `s`
    /// is not that. The scale is the count of fractional digits, rounded to
    /// [`MAX_SCALE`] when there are more.
    pub fn parse(s: &str) -> Option<Decimal> {
        let (neg, body) = match s.as_bytes().first() {
            Some(b'-') => (true, &s[1..]),
            Some(b'+') => (false, &s[1..]),
            _ => (false, s),
        };
        let (int, frac) = body.split_once('.').unwrap_or((body, ""));
        if int.is_empty() && frac.is_empty() {
            return None;
        }
        if !int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit()) {
            return None;
        }
        let digits = format!("{int}{frac}");
        let scale = frac.len();
        let m = if digits.len() <= 18 {
            BigInt::from(digits.parse::<i64>().ok()?)
        } else {
            BigInt::parse_bytes(digits.as_bytes(), 10)?
        };
        let m = if neg { -m } else { m };
        if scale <= usize::from(MAX_SCALE) {
            Some(Decimal::new(m, scale as u8))
        } else {
            let k = u32::try_from(scale - usize::from(MAX_SCALE)).ok()?;
            Some(Decimal::new(div_round(&m, &pow10(k)), MAX_SCALE))
        }
    }

    /// Append the memcomparable key form: byte order equals numeric order,
    /// whatever the scales (1.5 and 1.50 have one key).
    pub fn encode_key(&self, out: &mut Vec<u8>) {
        if self.shown < self.scale {
            return self.visible().encode_key(out);
        }
        if self.is_zero() {
            out.push(0x01);
            return;
        }
        let neg = self.is_negative();
        let digits = match &self.m {
            Mant::Small(i) => i.unsigned_abs().to_string(),
            Mant::Big(b) => b.magnitude().to_str_radix(10),
        };
        // value = 0.d1d2… × 10^exp
        let exp = digits.len() as i64 - i64::from(self.scale);
        let sig = digits.trim_end_matches('0');
        let e = (exp + 0x8000).clamp(0, 0xFFFF) as u16;
        if neg {
            out.push(0x00);
            out.extend_from_slice(&(!e).to_be_bytes());
            out.extend(sig.bytes().map(|d| 10 - (d - b'0')));
            out.push(0xFF);
        } else {
            out.push(0x02);
            out.extend_from_slice(&e.to_be_bytes());
            out.extend(sig.bytes().map(|d| d - b'0' + 1));
            out.push(0x00);
        }
    }

    /// Read a key written by [`Decimal::encode_key`] from the front of
    /// `b`; the value comes back at its smallest scale. Returns the value
    /// and the bytes after it.
    pub fn decode_key(b: &[u8]) -> Option<(Decimal, &[u8])> {
        let (&sign, rest) = b.split_first()?;
        if sign == 0x01 {
            return Some((Decimal::from_i64(0), rest));
        }
        let neg = match sign {
            0x00 => true,
            0x02 => false,
            _ => return None,
        };
        let (e, mut rest) = rest.split_at_checked(2)?;
        let e = u16::from_be_bytes([e[0], e[1]]);
        let exp = i64::from(if neg { !e } else { e }) - 0x8000;
        let mut digits = String::new();
        loop {
            let (&c, r) = rest.split_first()?;
            rest = r;
            match (neg, c) {
                (false, 0x00) | (true, 0xFF) => break,
                (false, 1..=10) => digits.push(char::from(b'0' + c - 1)),
                (true, 0..=10) => digits.push(char::from(b'0' + 10 - c)),
                _ => return None,
            }
        }
        let n = digits.len() as i64;
        let scale = (n - exp).max(0);
        if scale > i64::from(u8::MAX) {
            return None;
        }
        let zeros = (exp - n).max(0) as usize;
        let digits = format!("{digits}{}", "0".repeat(zeros));
        let m = BigInt::parse_bytes(digits.as_bytes(), 10)?;
        Some((Decimal::new(if neg { -m } else { m }, scale as u8), rest))
    }

    /// The value as shown without trailing fractional zeros (its
    /// smallest scale).
    pub fn normalized(&self) -> Decimal {
        let mut d = self.visible().into_owned();
        while d.scale > 0 {
            let t = d.truncate_scale(d.scale - 1);
            if t.cmp_value(&d) != Ordering::Equal {
                break;
            }
            d = t;
        }
        d
    }
}

impl PartialEq for Decimal {
    /// Same value and same scale (`1.0` ≠ `1.00` here: they print
    /// differently; SQL equality is [`Decimal::cmp_value`]).
    fn eq(&self, o: &Decimal) -> bool {
        self.scale == o.scale && self.shown == o.shown && self.cmp_value(o) == Ordering::Equal
    }
}

impl fmt::Display for Decimal {
    /// The value as shown (rounded to its SQL scale).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.visible().held_text())
    }
}

impl fmt::Debug for Decimal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.shown < self.scale {
            write!(f, "Decimal({} shown {self})", self.held_text())
        } else {
            write!(f, "Decimal({self})")
        }
    }
}

impl serde::Serialize for Decimal {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

impl<'de> serde::Deserialize<'de> for Decimal {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Decimal, D::Error> {
        let s = String::deserialize(d)?;
        Decimal::parse(&s).ok_or_else(|| serde::de::Error::custom("bad decimal"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> Decimal {
        Decimal::parse(s).unwrap_or_else(|| panic!("parse {s}"))
    }

    #[test]
    fn mantissa_bytes_round_trip() {
        for s in [
            "0",
            "1",
            "-1",
            "127",
            "128",
            "-128",
            "-129",
            "255",
            "0.01",
            "9223372036854775807",
            "-9223372036854775808",
            "9223372036854775808",
            "-99999999999999999999999999999999999.999999999999999999999999999999",
        ] {
            let x = d(s);
            let mut b = Vec::new();
            x.mantissa_bytes(&mut b);
            assert_eq!(b, x.mantissa().to_signed_bytes_le(), "{s}");
            assert_eq!(Decimal::from_mantissa_bytes(&b, x.scale()), x, "{s}");
        }
    }

    #[test]
    fn size_stays_small() {
        assert_eq!(std::mem::size_of::<Decimal>(), 24);
    }

    #[test]
    fn text_round_trip() {
        for s in [
            "0",
            "0.10",
            "-0.5",
            "12345678.99",
            "-1.000",
            "0.001",
            "12345678901234567890123456789012345.123456789012345678901234567890",
            "-99999999999999999999999999999999999.999999999999999999999999999999",
        ] {
            assert_eq!(d(s).to_string(), s);
        }
        assert_eq!(d("+.5").to_string(), "0.5");
        assert_eq!(d("5.").to_string(), "5");
        assert!(Decimal::parse("1e3").is_none());
        assert!(Decimal::parse("").is_none());
        assert!(Decimal::parse("-").is_none());
        assert!(Decimal::parse("1.2.3").is_none());
    }

    #[test]
    fn arithmetic_is_exact() {
        assert_eq!(d("0.1").add(&d("0.2")).to_string(), "0.3");
        assert_eq!(d("0.1").add(&d("0.20")).to_string(), "0.30");
        assert_eq!(d("1").sub(&d("0.01")).to_string(), "0.99");
        assert_eq!(
            d("12345678.99").mul(&d("100000000")).to_string(),
            "1234567899000000.00"
        );
        assert_eq!(d("1.5").mul(&d("-1.5")).to_string(), "-2.25");
        assert_eq!(
            d("1").div(&d("3")).map(|x| x.to_string()),
            Some("0.3333".into())
        );
        assert_eq!(
            d("2").div(&d("3")).map(|x| x.to_string()),
            Some("0.6667".into())
        );
        assert_eq!(
            d("-2").div(&d("3")).map(|x| x.to_string()),
            Some("-0.6667".into())
        );
        assert_eq!(
            d("1.00").div(&d("8")).map(|x| x.to_string()),
            Some("0.125000".into())
        );
        assert!(d("1").div(&d("0.00")).is_none());
        assert_eq!(
            d("7.5").rem(&d("2")).map(|x| x.to_string()),
            Some("1.5".into())
        );
        assert_eq!(
            d("-7.5").rem(&d("2")).map(|x| x.to_string()),
            Some("-1.5".into())
        );
        assert_eq!(
            d("7.5").int_div(&d("2")).map(|x| x.to_string()),
            Some("3".into())
        );
        assert_eq!(
            d("-7.5").int_div(&d("2")).map(|x| x.to_string()),
            Some("-3".into())
        );
        // Wide values take the big path and come back.
        let big = d("99999999999999999999999999999999999.999999999999999999999999999999");
        assert_eq!(
            big.sub(&big).to_string(),
            "0.000000000000000000000000000000"
        );
        assert_eq!(big.sub(&big).small(), Some(0));
        assert_eq!(big.int_digits(), 35);
        assert_eq!(
            d("0.000000000000001")
                .mul(&d("0.0000000000000015"))
                .to_string(),
            "0.000000000000000000000000000002"
        );
    }

    #[test]
    fn quotients_hold_whole_words() {
        // As MariaDB answers: 1/3 holds 0.333333333 and shows 0.3333.
        let third = d("1").div(&d("3")).expect("nonzero");
        assert_eq!(third.held_text(), "0.333333333");
        assert_eq!(third.to_string(), "0.3333");
        assert_eq!(third.mul(&d("3")).to_string(), "1.0000");
        assert_eq!(third.cmp_sql(&d("0.3333")), Ordering::Equal);
        assert_eq!(third.cmp_value(&d("0.3333")), Ordering::Greater);
        assert_eq!(third.round_to(6, false).to_string(), "0.333333");
        assert_eq!(third.add(&d("0.00000000")).to_string(), "0.33333333");
        let two_thirds = d("2").div(&d("3")).expect("nonzero");
        assert_eq!(two_thirds.rescale(12).to_string(), "0.666666666000");
        assert_eq!(two_thirds.mul(&d("3")).to_string(), "2.0000");
        assert_eq!(
            d("1.00").div(&d("7")).map(|x| x.held_text()),
            Some("0.142857142".into())
        );
        // Padding to whole words counts as held digits (MySQL 8's
        // do_div_mod): 0.001 / 0.3 holds two words, not one.
        assert_eq!(
            d("0.001").div(&d("0.3")).map(|x| x.held_text()),
            Some("0.003333333333333333".into())
        );
        let q = d("3.0").div(&d("-2.25")).expect("nonzero");
        assert_eq!(q.held_scale(), 18);
        assert_eq!(q.mul(&d("12345678.99")).to_string(), "-16460905.3200000");
        // A dividend of 9 fractional digits has no padding: one more word.
        assert_eq!(
            d("0.000000001").div(&d("3")).map(|x| x.held_scale()),
            Some(18)
        );
        let mut k1 = Vec::new();
        third.encode_key(&mut k1);
        let mut k2 = Vec::new();
        d("0.3333").encode_key(&mut k2);
        assert_eq!(k1, k2);
    }

    #[test]
    fn rounding_is_half_away_from_zero() {
        assert_eq!(d("2.5").rescale(0).to_string(), "3");
        assert_eq!(d("-2.5").rescale(0).to_string(), "-3");
        assert_eq!(d("1.005").rescale(2).to_string(), "1.01");
        assert_eq!(d("-1.004").rescale(2).to_string(), "-1.00");
        assert_eq!(d("1.5").rescale(3).to_string(), "1.500");
        assert_eq!(d("1.99").truncate_scale(1).to_string(), "1.9");
        assert_eq!(d("-1.99").truncate_scale(1).to_string(), "-1.9");
        assert_eq!(d("155.5").round_to(-1, false).to_string(), "160");
        assert_eq!(d("-155.5").round_to(-2, false).to_string(), "-200");
        assert_eq!(d("155.5").round_to(-1, true).to_string(), "150");
        assert_eq!(d("1.234").round_to(5, false).to_string(), "1.23400");
        assert_eq!(d("1.5").round_to(3, true).to_string(), "1.500");
        assert_eq!(d("-1.5").floor().to_string(), "-2");
        assert_eq!(d("-1.5").ceil().to_string(), "-1");
        assert_eq!(d("1.5").ceil().to_string(), "2");
        assert_eq!(d("2.0").floor().to_string(), "2");
        assert_eq!(d("2.5").to_i64_round(), Some(3));
        assert_eq!(d("-2.5").to_i64_round(), Some(-3));
        assert_eq!(d("0.1").to_f64(), 0.1);
        assert_eq!(
            Decimal::from_f64(0.1).map(|x| x.to_string()),
            Some("0.1".into())
        );
        assert_eq!(
            Decimal::from_f64(-0.0).map(|x| x.to_string()),
            Some("0".into())
        );
        assert!(d("9.99").fits(3, 2));
        assert!(!d("9.995").fits(3, 2));
        assert!(d("-9.994").fits(3, 2));
    }

    /// A small deterministic generator (no dependency): xorshift64*.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
        }
        fn decimal(&mut self) -> Decimal {
            let len = 1 + (self.next() % 40) as usize;
            let digits: String = (0..len)
                .map(|_| char::from(b'0' + (self.next() % 10) as u8))
                .collect();
            let scale = (self.next() % (len as u64 + 1)).min(30) as usize;
            let (i, f) = digits.split_at(len - scale);
            let sign = if self.next().is_multiple_of(2) {
                "-"
            } else {
                ""
            };
            let s = if f.is_empty() {
                format!("{sign}{i}")
            } else {
                format!("{sign}{i}.{f}")
            };
            Decimal::parse(&s).unwrap_or_else(|| Decimal::from_i64(0))
        }
    }

    #[test]
    fn key_order_is_numeric_order() {
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        let mut vals: Vec<Decimal> = (0..3000).map(|_| rng.decimal()).collect();
        // Equal values at different scales, and small integers.
        for i in -20i64..20 {
            vals.push(Decimal::from_i64(i));
            vals.push(Decimal::from_i64(i).rescale((i.unsigned_abs() % 5) as u8));
        }
        let key = |x: &Decimal| {
            let mut k = Vec::new();
            x.encode_key(&mut k);
            k
        };
        let n = vals.len();
        for i in 0..n * 4 {
            let (a, b) = (&vals[i % n], &vals[(i * 7919 + 13) % n]);
            assert_eq!(key(a).cmp(&key(b)), a.cmp_value(b), "{a} vs {b}");
        }
        let mut by_key = vals.clone();
        by_key.sort_by_key(key);
        for w in by_key.windows(2) {
            assert_ne!(
                w[0].cmp_value(&w[1]),
                Ordering::Greater,
                "{} > {}",
                w[0],
                w[1]
            );
        }
        for v in &vals {
            let k = key(v);
            let (back, rest) = Decimal::decode_key(&k).expect("decode");
            assert!(rest.is_empty());
            assert_eq!(back.cmp_value(v), Ordering::Equal);
            assert_eq!(back, v.normalized());
        }
    }
}
