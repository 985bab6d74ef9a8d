//! Time zones as MySQL names them: `SYSTEM` (the server's system zone,
//! UTC here, as `@@system_time_zone` says), a fixed offset `'+HH:MM'` /
//! `'-HH:MM'` (MySQL 8's range, `-13:59` to `+14:00`), or a named zone of
//! the IANA database (`'Europe/Berlin'`, `'UTC'`; case-insensitive) —
//! the database bundled into the binary by `jiff` (decision 029), so every
//! node answers alike whatever its operating system holds.
//!
//! Owns the conversions between a wall-clock time in a zone and UTC, with
//! MySQL's rules where a wall-clock time is missing or repeated. Knows
//! nothing of SQL values or sessions; never reads the system clock.

use jiff::tz::{AmbiguousOffset, TimeZone};
use jiff::Timestamp;

const SEC_US: i64 = 1_000_000;

/// A time zone a session or CONVERT_TZ can name.
#[derive(Debug, Clone)]
pub enum Zone {
    /// A fixed offset from UTC in seconds (east positive).
    Fixed(i64),
    /// A zone of the IANA database.
    Named(TimeZone),
}

impl Zone {
    /// The zone `name` names, or `None` for one MySQL would call unknown
    /// (error 1298 for `time_zone`, NULL from CONVERT_TZ).
    pub fn parse(name: &str) -> Option<Zone> {
        if name.eq_ignore_ascii_case("system") {
            return Some(Zone::Fixed(0));
        }
        if let Some(rest) = name.strip_prefix(['+', '-']) {
            return parse_offset(name.starts_with('-'), rest).map(Zone::Fixed);
        }
        // The database's own names only: no POSIX TZ strings.
        if name.is_empty()
            || !name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"/_-+".contains(&b))
        {
            return None;
        }
        TimeZone::get(name).ok().map(Zone::Named)
    }

    /// The UTC instant (microseconds since 1970-01-01 00:00:00 UTC) of the
    /// wall-clock time `local` (microseconds since 1970-01-01 00:00:00 on
    /// this zone's clock) — MySQL's `TIME_to_gmt_sec`: a time in a
    /// spring-forward gap is the instant the gap begins, a time a
    /// fall-back repeats is its earlier instant. `None` outside the
    /// database's range.
    pub fn to_utc(&self, local: i64) -> Option<i64> {
        let tz = match self {
            Zone::Fixed(off) => return local.checked_sub(off * SEC_US),
            Zone::Named(tz) => tz,
        };
        let civil = Timestamp::from_microsecond(local)
            .ok()?
            .to_zoned(TimeZone::UTC)
            .datetime();
        let off = |o: jiff::tz::Offset| local.checked_sub(i64::from(o.seconds()) * SEC_US);
        match tz.to_ambiguous_timestamp(civil).offset() {
            AmbiguousOffset::Unambiguous { offset } => off(offset),
            AmbiguousOffset::Fold { before, .. } => off(before),
            AmbiguousOffset::Gap { after, .. } => {
                // The transition lies between the wall time read with the
                // later offset and with the earlier one.
                let earliest = Timestamp::from_microsecond(off(after)?).ok()?;
                let t = tz.following(earliest).next()?.timestamp();
                Some(t.as_microsecond())
            }
        }
    }

    /// The wall-clock time (microseconds since 1970-01-01 00:00:00 on this
    /// zone's clock) at the UTC instant `utc`. `None` outside the
    /// database's range.
    pub fn wall_clock(&self, utc: i64) -> Option<i64> {
        let off = match self {
            Zone::Fixed(off) => *off,
            Zone::Named(tz) => i64::from(
                tz.to_offset(Timestamp::from_microsecond(utc).ok()?)
                    .seconds(),
            ),
        };
        utc.checked_add(off * SEC_US)
    }
}

/// `H+:M+` after the sign, as MySQL's `str_to_offset`: minutes below 60,
/// at most 13:59 west and 14:00 east of UTC; nothing after the minutes.
fn parse_offset(negative: bool, rest: &str) -> Option<i64> {
    let (h, m) = rest.split_once(':')?;
    let digits = |s: &str| -> Option<i64> {
        if s.is_empty() || s.len() > 9 || !s.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        s.parse().ok()
    };
    let (h, m) = (digits(h)?, digits(m)?);
    if m > 59 {
        return None;
    }
    let secs = h * 3_600 + m * 60;
    let limit = if negative {
        13 * 3_600 + 59 * 60
    } else {
        14 * 3_600
    };
    if secs > limit {
        return None;
    }
    Some(if negative { -secs } else { secs })
}

/// MySQL's CONVERT_TZ on a datetime `us` (microseconds, no zone): from the
/// wall clock of `from` to that of `to`. As MySQL, a value whose instant
/// falls outside the TIMESTAMP range (1970-01-01 00:00:01 to 2038-01-19
/// 03:14:07 UTC) comes back unchanged, and the fraction of a second is
/// kept.
pub fn convert(us: i64, from: &Zone, to: &Zone) -> i64 {
    const TIMESTAMP_MIN: i64 = 1;
    const TIMESTAMP_MAX: i64 = i32::MAX as i64;
    let frac = us.rem_euclid(SEC_US);
    let whole = us - frac;
    // MySQL converts only years 1970..2037 and the edges of 1969 / 2038 it
    // could still reach; this window contains them all.
    let Some(utc) = from.to_utc(whole) else {
        return us;
    };
    let secs = utc.div_euclid(SEC_US);
    if !(TIMESTAMP_MIN..=TIMESTAMP_MAX).contains(&secs) {
        return us;
    }
    match to.wall_clock(secs * SEC_US) {
        Some(local) => local + frac,
        None => us,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Microseconds of a UTC-less datetime.
    fn at(y: i16, mo: i8, d: i8, h: i8, mi: i8, s: i8) -> i64 {
        jiff::civil::date(y, mo, d)
            .at(h, mi, s, 0)
            .to_zoned(TimeZone::UTC)
            .unwrap()
            .timestamp()
            .as_microsecond()
    }

    #[test]
    fn offsets_parse_as_mysql_8() {
        let secs = |s: &str| match Zone::parse(s) {
            Some(Zone::Fixed(o)) => Some(o),
            _ => None,
        };
        assert_eq!(secs("+08:00"), Some(8 * 3600));
        assert_eq!(secs("-5:30"), Some(-(5 * 3600 + 30 * 60)));
        assert_eq!(secs("+5:3"), Some(5 * 3600 + 3 * 60));
        assert_eq!(secs("+14:00"), Some(14 * 3600));
        assert_eq!(secs("-13:59"), Some(-(13 * 3600 + 59 * 60)));
        assert_eq!(secs("SYSTEM"), Some(0));
        for bad in [
            "+14:01", "-14:00", "+05:30 ", "+05", "+05:60", "+:30", "5:00", "",
        ] {
            assert!(Zone::parse(bad).is_none(), "{bad:?}");
        }
        assert!(matches!(Zone::parse("europe/berlin"), Some(Zone::Named(_))));
        assert!(Zone::parse("Mars/Olympus").is_none());
    }

    #[test]
    fn gaps_and_folds_follow_mysql() {
        let berlin = Zone::parse("Europe/Berlin").unwrap();
        let utc = Zone::parse("UTC").unwrap();
        // 02:30 does not exist on 2021-03-28: the gap's start, 01:00 UTC.
        assert_eq!(
            convert(at(2021, 3, 28, 2, 30, 0), &berlin, &utc),
            at(2021, 3, 28, 1, 0, 0)
        );
        // 02:30 happens twice on 2021-10-31: the earlier, 00:30 UTC.
        assert_eq!(
            convert(at(2021, 10, 31, 2, 30, 0), &berlin, &utc),
            at(2021, 10, 31, 0, 30, 0)
        );
        assert_eq!(
            convert(at(2021, 3, 28, 0, 59, 59), &utc, &berlin),
            at(2021, 3, 28, 1, 59, 59)
        );
        assert_eq!(
            convert(at(2021, 3, 28, 1, 0, 0), &utc, &berlin),
            at(2021, 3, 28, 3, 0, 0)
        );
    }

    #[test]
    fn outside_the_timestamp_range_nothing_changes() {
        let plus1 = Zone::parse("+01:00").unwrap();
        let utc = Zone::parse("+00:00").unwrap();
        let plus5 = Zone::parse("+05:00").unwrap();
        let edge = at(2038, 1, 19, 3, 14, 7);
        assert_eq!(convert(edge, &utc, &plus1), at(2038, 1, 19, 4, 14, 7));
        assert_eq!(convert(edge + SEC_US, &utc, &plus1), edge + SEC_US);
        assert_eq!(convert(0, &utc, &plus1), 0);
        assert_eq!(convert(SEC_US, &utc, &plus1), at(1970, 1, 1, 1, 0, 1));
        let four = at(1970, 1, 1, 4, 0, 0);
        assert_eq!(convert(four, &plus5, &utc), four);
        // The fraction of a second is kept.
        assert_eq!(
            convert(at(2001, 1, 1, 1, 0, 0) + 123_000, &utc, &plus1),
            at(2001, 1, 1, 2, 0, 0) + 123_000
        );
    }
}
