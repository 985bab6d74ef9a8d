//! MySQL's date and time functions over [`Value::DateTime`] (microseconds
//! since the epoch, UTC: the server's time zone). A `DateTime` value always
//! prints with its time part, so functions MySQL types DATE return
//! `YYYY-MM-DD` text and those typed TIME return `HH:MM:SS` text, which
//! print exactly as MySQL's answers and compare with dates as dates.
//!
//! Owns: the calendar arithmetic of those functions (intervals, week
//! numbers, DATE_FORMAT / STR_TO_DATE). Never: reads table data or the
//! session; the clock is its only input besides the arguments.

use super::value::{num, num_i64, text_of, want, wrong_count};
use crate::error::{SqlError, SqlResult};
use crate::types::{days_in_month, parse_datetime, Value};

const SEC_US: i64 = 1_000_000;
const DAY_US: i64 = 86_400 * SEC_US;
/// The largest UNIX_TIMESTAMP / FROM_UNIXTIME second (3001-01-18
/// 23:59:59 UTC in MySQL 8.0.28+).
const MAX_UNIX_SECS: i64 = 32_536_771_199;

const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];
/// Monday first, as WEEKDAY() numbers them.
const DAYS: [&str; 7] = [
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
    "Sunday",
];

/// Whether a call reads the clock (so it is never folded to a constant).
pub fn reads_clock(name: &str, nargs: usize) -> bool {
    CLOCK.contains(&name) || (name == "unix_timestamp" && nargs == 0)
}

/// The functions of this module that read the clock whatever their
/// arguments.
const CLOCK: [&str; 7] = [
    "curdate",
    "current_date",
    "curtime",
    "current_time",
    "utc_date",
    "utc_time",
    "utc_timestamp",
];

/// Microseconds in one `unit` for the fixed-length units.
pub fn unit_micros(unit: &str) -> Option<i64> {
    Some(match unit {
        "microsecond" => 1,
        "second" => SEC_US,
        "minute" => 60 * SEC_US,
        "hour" => 3_600 * SEC_US,
        "day" => DAY_US,
        "week" => 7 * DAY_US,
        _ => return None,
    })
}

/// Months in one `unit` for the calendar units.
pub fn unit_months(unit: &str) -> Option<i64> {
    Some(match unit {
        "month" => 1,
        "quarter" => 3,
        "year" => 12,
        _ => return None,
    })
}

fn now_us() -> i64 {
    let us = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_micros() as i64)
        .unwrap_or(0);
    us - us % SEC_US
}

// The calendar of `crate::types` (proleptic Gregorian), in i64 parts;
// every caller passes a validated month and day.
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    crate::types::days_from_civil(y, m as u32, d as u32)
}

fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let (y, m, d) = crate::types::civil_from_days(z);
    (y, i64::from(m), i64::from(d))
}

fn is_leap(y: i64) -> bool {
    y % 4 == 0 && (y % 100 != 0 || y % 400 == 0)
}

fn days_in_year(y: i64) -> i64 {
    if is_leap(y) {
        366
    } else {
        365
    }
}

/// A date/time argument: microseconds since the epoch and whether it
/// was written with a time part (a DATE-like text or number is not).
#[derive(Clone, Copy)]
struct Dt {
    us: i64,
    has_time: bool,
}

/// Broken-down fields of an instant.
struct Parts {
    days: i64,
    y: i64,
    m: i64,
    d: i64,
    /// Microseconds into the day.
    tod: i64,
}

impl Parts {
    fn of(us: i64) -> Parts {
        let days = us.div_euclid(DAY_US);
        let (y, m, d) = civil_from_days(days);
        Parts {
            days,
            y,
            m,
            d,
            tod: us.rem_euclid(DAY_US),
        }
    }
    fn hour(&self) -> i64 {
        self.tod / (3_600 * SEC_US)
    }
    fn minute(&self) -> i64 {
        self.tod / (60 * SEC_US) % 60
    }
    fn second(&self) -> i64 {
        self.tod / SEC_US % 60
    }
    fn micro(&self) -> i64 {
        self.tod % SEC_US
    }
    /// 0 = Monday … 6 = Sunday (1970-01-01 was a Thursday).
    fn weekday(&self) -> i64 {
        (self.days + 3).rem_euclid(7)
    }
    fn yday(&self) -> i64 {
        self.days - days_from_civil(self.y, 1, 1) + 1
    }
}

fn in_range(us: i64) -> bool {
    (0..=9999).contains(&Parts::of(us).y)
}

/// A DATE / DATETIME argument; `None` (the function gives NULL) for
/// NULL and for text or numbers that are not a valid date, such as
/// '2024-02-30'.
fn dt_arg(v: &Value) -> Option<Dt> {
    let dt = match v {
        Value::DateTime(us) => Dt {
            us: *us,
            has_time: true,
        },
        Value::Text(s) => {
            let s = s.trim();
            let Some(us) = parse_datetime(s) else {
                crate::warnings::note_later(
                    crate::error::code::TRUNCATED_WRONG_VALUE,
                    format!("Incorrect datetime value: '{s}'"),
                );
                return None;
            };
            // parse_datetime refuses a day past the month's end.
            Dt {
                us,
                has_time: s.contains([' ', 'T']),
            }
        }
        Value::Int(i) => int_datetime(*i)?,
        Value::Float(f) if f.fract() == 0.0 && f.abs() < 1e15 => int_datetime(*f as i64)?,
        Value::Decimal(d) => int_datetime(d.to_i64_exact()?)?,
        _ => return None,
    };
    in_range(dt.us).then_some(dt)
}

/// A number written as YYYYMMDD or YYYYMMDDHHMMSS.
fn int_datetime(i: i64) -> Option<Dt> {
    let (date, time, has_time) = match i {
        10_000_101..=99_991_231 => (i, 0, false),
        10_000_101_000_000..=99_991_231_235_959 => (i / 1_000_000, i % 1_000_000, true),
        _ => return None,
    };
    let (y, m, d) = (date / 10_000, date / 100 % 100, date % 100);
    let (hh, mi, ss) = (time / 10_000, time / 100 % 100, time % 100);
    if !(1..=12).contains(&m) || d < 1 || d > days_in_month(y, m) || hh > 23 || mi > 59 || ss > 59 {
        return None;
    }
    let us = (days_from_civil(y, m, d) * 86_400 + hh * 3_600 + mi * 60 + ss) * SEC_US;
    Some(Dt { us, has_time })
}

/// A TIME argument as signed microseconds: `[-]H:MM[:SS[.f]]` text, a
/// HHMMSS number, or the time of day of a date/time.
fn time_arg(v: &Value) -> Option<i64> {
    match v {
        Value::Text(s) => {
            let t = s.trim();
            let (neg, body) = match t.strip_prefix('-') {
                Some(b) => (true, b),
                None => (false, t),
            };
            if !body.contains(':') || body.contains('-') {
                return dt_arg(v).map(|d| Parts::of(d.us).tod);
            }
            let (hms, frac) = match body.split_once('.') {
                Some((a, f)) => (a, Some(f)),
                None => (body, None),
            };
            let mut p = hms.split(':');
            let hh: i64 = p.next()?.trim().parse().ok()?;
            let mi: i64 = p.next()?.parse().ok()?;
            let ss: i64 = match p.next() {
                Some(x) => x.parse().ok()?,
                None => 0,
            };
            if p.next().is_some() || !(0..=838).contains(&hh) || !(0..60).contains(&mi) {
                return None;
            }
            if !(0..60).contains(&ss) {
                return None;
            }
            let f = match frac {
                None => 0,
                Some(f)
                    if !f.is_empty() && f.len() <= 6 && f.bytes().all(|b| b.is_ascii_digit()) =>
                {
                    format!("{f:0<6}").parse::<i64>().ok()?
                }
                Some(_) => return None,
            };
            let us = (hh * 3_600 + mi * 60 + ss) * SEC_US + f;
            Some(if neg { -us } else { us })
        }
        Value::Int(i) if i.abs() < 10_000_101_000_000 => {
            let a = i.abs();
            let (hh, mi, ss) = (a / 10_000, a / 100 % 100, a % 100);
            if hh > 838 || mi > 59 || ss > 59 {
                return None;
            }
            let us = (hh * 3_600 + mi * 60 + ss) * SEC_US;
            Some(if *i < 0 { -us } else { us })
        }
        other => dt_arg(other).map(|d| Parts::of(d.us).tod),
    }
}

fn date_text(us: i64) -> Value {
    let p = Parts::of(us);
    Value::Text(format!("{:04}-{:02}-{:02}", p.y, p.m, p.d))
}

fn time_text(t: i64) -> Value {
    let a = t.abs();
    let secs = a / SEC_US;
    let mut s = format!(
        "{}{:02}:{:02}:{:02}",
        if t < 0 { "-" } else { "" },
        secs / 3_600,
        secs / 60 % 60,
        secs % 60
    );
    if a % SEC_US != 0 {
        s.push_str(&format!(".{:06}", a % SEC_US));
    }
    Value::Text(s)
}

/// Evaluate one of the date and time functions (those the function
/// registry, `crate::sql::functions`, sends here).
pub fn call(name: &str, args: &[Value]) -> SqlResult<Value> {
    match name {
        "curdate" | "current_date" | "utc_date" => {
            want(args, 0, name)?;
            Ok(date_text(now_us()))
        }
        "curtime" | "current_time" | "utc_time" => {
            want(args, 0, name)?;
            Ok(time_text(now_us().rem_euclid(DAY_US)))
        }
        "utc_timestamp" => {
            want(args, 0, name)?;
            Ok(Value::DateTime(now_us()))
        }
        "time" | "hour" | "minute" | "second" | "microsecond" => {
            want(args, 1, name)?;
            let Some(t) = time_arg(&args[0]) else {
                return Ok(Value::Null);
            };
            let a = t.abs();
            Ok(match name {
                "time" => time_text(t),
                "hour" => Value::Int(a / (3_600 * SEC_US)),
                "minute" => Value::Int(a / (60 * SEC_US) % 60),
                "second" => Value::Int(a / SEC_US % 60),
                _ => Value::Int(a % SEC_US),
            })
        }
        "date" | "year" | "month" | "day" | "dayofmonth" | "dayofweek" | "dayofyear"
        | "weekday" | "quarter" | "monthname" | "dayname" | "last_day" | "to_days" => {
            want(args, 1, name)?;
            let Some(dt) = dt_arg(&args[0]) else {
                return Ok(Value::Null);
            };
            let p = Parts::of(dt.us);
            Ok(match name {
                "date" => date_text(dt.us),
                "year" => Value::Int(p.y),
                "month" => Value::Int(p.m),
                "day" | "dayofmonth" => Value::Int(p.d),
                // 1 = Sunday … 7 = Saturday.
                "dayofweek" => Value::Int((p.weekday() + 1) % 7 + 1),
                "dayofyear" => Value::Int(p.yday()),
                "weekday" => Value::Int(p.weekday()),
                "quarter" => Value::Int((p.m + 2) / 3),
                "monthname" => Value::Text(MONTHS[(p.m - 1) as usize].into()),
                "dayname" => Value::Text(DAYS[p.weekday() as usize].into()),
                // MySQL numbers 0000-01-01 as day 1 and gives year 0
                // no February 29: from March of year 0 on the
                // proleptic count agrees.
                "to_days" => Value::Int(p.days + 719_528 + i64::from(p.y == 0 && p.m <= 2)),
                _ => {
                    let last = days_from_civil(p.y, p.m, days_in_month(p.y, p.m));
                    date_text(last * DAY_US)
                }
            })
        }
        "week" => {
            if !(1..=2).contains(&args.len()) {
                return Err(wrong_count(name));
            }
            let Some(dt) = dt_arg(&args[0]) else {
                return Ok(Value::Null);
            };
            let mode = match args.get(1) {
                None => 0,
                // A NULL mode is mode 0 (MySQL reads it as a number).
                Some(m) => num_i64(m).map_or(0, |m| m.rem_euclid(8)),
            };
            let mut behaviour = mode & 7;
            if behaviour & WEEK_MONDAY_FIRST == 0 {
                behaviour ^= WEEK_FIRST_WEEKDAY;
            }
            Ok(Value::Int(calc_week(&Parts::of(dt.us), behaviour).0))
        }
        "datediff" => {
            want(args, 2, name)?;
            let (Some(a), Some(b)) = (dt_arg(&args[0]), dt_arg(&args[1])) else {
                return Ok(Value::Null);
            };
            Ok(Value::Int(
                a.us.div_euclid(DAY_US) - b.us.div_euclid(DAY_US),
            ))
        }
        "timestampdiff" => {
            want(args, 3, name)?;
            let unit = text_of(&args[0]).into_owned();
            let (Some(a), Some(b)) = (dt_arg(&args[1]), dt_arg(&args[2])) else {
                return Ok(Value::Null);
            };
            if let Some(per) = unit_micros(&unit) {
                return Ok(Value::Int((b.us - a.us) / per));
            }
            let Some(per) = unit_months(&unit) else {
                return Err(SqlError::parse(format!("unknown unit {unit}")));
            };
            let (beg, end, neg) = if b.us >= a.us {
                (Parts::of(a.us), Parts::of(b.us), false)
            } else {
                (Parts::of(b.us), Parts::of(a.us), true)
            };
            let mut months = (end.y * 12 + end.m) - (beg.y * 12 + beg.m);
            if (end.d, end.tod) < (beg.d, beg.tod) {
                months -= 1;
            }
            let r = months / per;
            Ok(Value::Int(if neg { -r } else { r }))
        }
        "timestampadd" => {
            want(args, 3, name)?;
            let unit = text_of(&args[0]).into_owned();
            add_interval(&args[2], &args[1], &unit, false)
        }
        "date_add interval" | "date_sub interval" => {
            let [d, n, unit] = args else {
                return Err(wrong_count(name));
            };
            add_interval(d, n, &text_of(unit), name == "date_sub interval")
        }
        "unix_timestamp" => match args {
            [] => Ok(Value::Int(now_us() / SEC_US)),
            [v] => {
                let Some(dt) = dt_arg(v) else {
                    return Ok(Value::Null);
                };
                let secs = dt.us.div_euclid(SEC_US);
                let frac = dt.us.rem_euclid(SEC_US);
                Ok(if dt.us < 0 || secs > MAX_UNIX_SECS {
                    Value::Int(0)
                } else if frac == 0 {
                    Value::Int(secs)
                } else {
                    Value::Text(format!("{secs}.{frac:06}"))
                })
            }
            _ => Err(wrong_count(name)),
        },
        "from_unixtime" => {
            if !(1..=2).contains(&args.len()) {
                return Err(wrong_count(name));
            }
            let us = match num(&args[0]).map(decimal_as_double) {
                Some(Value::Int(i)) if (0..=MAX_UNIX_SECS).contains(&i) => i * SEC_US,
                Some(Value::Float(f)) if (0.0..MAX_UNIX_SECS as f64 + 1.0).contains(&f) => {
                    (f * 1e6).round() as i64
                }
                _ => return Ok(Value::Null),
            };
            match args.get(1) {
                None => Ok(Value::DateTime(us)),
                Some(Value::Null) => Ok(Value::Null),
                Some(f) => Ok(Value::Text(date_format(us, &text_of(f)))),
            }
        }
        "convert_tz" => {
            want(args, 3, name)?;
            if args.iter().any(Value::is_null) {
                return Ok(Value::Null);
            }
            let Some(dt) = dt_arg(&args[0]) else {
                return Ok(Value::Null);
            };
            let zone = |v: &Value| crate::timezone::Zone::parse(&text_of(v));
            match (zone(&args[1]), zone(&args[2])) {
                (Some(from), Some(to)) => {
                    Ok(Value::DateTime(crate::timezone::convert(dt.us, &from, &to)))
                }
                // An unknown zone: NULL, as MySQL.
                _ => Ok(Value::Null),
            }
        }
        "str_to_date" => {
            want(args, 2, name)?;
            if args[0].is_null() || args[1].is_null() {
                return Ok(Value::Null);
            }
            Ok(str_to_date(&text_of(&args[0]), &text_of(&args[1]))?
                .map_or(Value::Null, Value::Text))
        }
        "date_format" => {
            want(args, 2, name)?;
            if args[1].is_null() {
                return Ok(Value::Null);
            }
            let Some(dt) = dt_arg(&args[0]) else {
                return Ok(Value::Null);
            };
            Ok(Value::Text(date_format(dt.us, &text_of(&args[1]))))
        }
        _ => Err(SqlError::new(
            crate::error::code::UNKNOWN_FUNCTION,
            format!("FUNCTION {name} does not exist"),
        )),
    }
}

/// A DECIMAL number as the double these microsecond conversions take
/// (exact to the microsecond for every value they accept).
fn decimal_as_double(v: Value) -> Value {
    match v {
        Value::Decimal(d) => Value::Float(d.to_f64()),
        other => other,
    }
}

/// `d ± INTERVAL n unit`. Month units keep the day, clamped to the
/// new month's last day. A DATE-like argument (text or number without a
/// time part) with a day-or-longer unit gives a DATE (`YYYY-MM-DD`);
/// otherwise a DATETIME. A result outside years 0..9999 is NULL.
fn add_interval(d: &Value, n: &Value, unit: &str, sub: bool) -> SqlResult<Value> {
    let Some(dt) = dt_arg(d) else {
        return Ok(Value::Null);
    };
    let us = if let Some(per) = unit_micros(unit) {
        let delta = if unit == "second" {
            // Fractional seconds count (INTERVAL 1.5 SECOND).
            match num(n).map(decimal_as_double) {
                Some(Value::Int(i)) => i.checked_mul(SEC_US),
                Some(Value::Float(f)) if f.is_finite() && f.abs() < 1e12 => {
                    Some((f * 1e6).round() as i64)
                }
                _ => return Ok(Value::Null),
            }
        } else {
            let Some(i) = num_i64(n) else {
                return Ok(Value::Null);
            };
            i.checked_mul(per)
        };
        let delta = match delta {
            Some(x) if sub => x.checked_neg(),
            x => x,
        };
        match delta.and_then(|x| dt.us.checked_add(x)) {
            Some(us) => us,
            None => return Ok(Value::Null),
        }
    } else if let Some(per) = unit_months(unit) {
        let Some(i) = num_i64(n) else {
            return Ok(Value::Null);
        };
        let Some(delta) = i
            .checked_mul(per)
            .and_then(|x| if sub { x.checked_neg() } else { Some(x) })
            .filter(|x| x.abs() < 200_000)
        else {
            return Ok(Value::Null);
        };
        let p = Parts::of(dt.us);
        let total = p.y * 12 + (p.m - 1) + delta;
        let (y, m) = (total.div_euclid(12), total.rem_euclid(12) + 1);
        if !(0..=9999).contains(&y) {
            return Ok(Value::Null);
        }
        let day = p.d.min(days_in_month(y, m));
        days_from_civil(y, m, day) * DAY_US + p.tod
    } else {
        return Err(SqlError::unsupported(format!("INTERVAL unit {unit}")));
    };
    if !(-62_167_219_200 * SEC_US..=253_402_300_799_999_999).contains(&us) {
        // Before 0000-01-01 or after 9999-12-31 23:59:59.999999.
        return Ok(Value::Null);
    }
    let date_unit = matches!(unit, "day" | "week" | "month" | "quarter" | "year");
    Ok(if !dt.has_time && date_unit {
        date_text(us)
    } else {
        Value::DateTime(us)
    })
}

/// Fields STR_TO_DATE has read so far.
#[derive(Default)]
struct Scan {
    year: i64,
    month: i64,
    day: i64,
    hour: i64,
    minute: i64,
    second: i64,
    frac: i64,
    yearday: i64,
    usa_time: bool,
    pm: bool,
}

/// Read up to `max` digits (at least one).
fn scan_digits(v: &[u8], vi: &mut usize, max: usize) -> Option<(i64, usize)> {
    let n = v[*vi..]
        .iter()
        .take(max)
        .take_while(|b| b.is_ascii_digit())
        .count();
    if n == 0 {
        return None;
    }
    let x = std::str::from_utf8(&v[*vi..*vi + n]).ok()?.parse().ok()?;
    *vi += n;
    Some((x, n))
}

/// A month or weekday name (the whole alphabetic word, any case);
/// its index in `names`, compared on the first `len` letters when
/// `len` is set (abbreviations).
fn scan_name(v: &[u8], vi: &mut usize, names: &[&str], len: Option<usize>) -> Option<i64> {
    let n = v[*vi..]
        .iter()
        .take_while(|b| b.is_ascii_alphabetic())
        .count();
    let word = std::str::from_utf8(&v[*vi..*vi + n]).ok()?;
    let i = names.iter().position(|name| {
        let name = len.map_or(*name, |l| &name[..l]);
        name.eq_ignore_ascii_case(word)
    })?;
    *vi += n;
    Some(i as i64)
}

/// MySQL's `extract_date_time`: match `v` from `*vi` against `fmt`.
fn scan_format(v: &[u8], vi: &mut usize, fmt: &[u8], st: &mut Scan) -> SqlResult<bool> {
    let mut fi = 0;
    while fi < fmt.len() && *vi < v.len() {
        while *vi < v.len() && v[*vi].is_ascii_whitespace() {
            *vi += 1;
        }
        if *vi >= v.len() {
            break;
        }
        if fmt[fi] == b'%' && fi + 1 < fmt.len() {
            fi += 1;
            let ok = match fmt[fi] {
                b'Y' => scan_digits(v, vi, 4).map(|(y, n)| {
                    st.year = if n <= 2 { two_digit_year(y) } else { y };
                }),
                b'y' => scan_digits(v, vi, 2).map(|(y, _)| st.year = two_digit_year(y)),
                b'm' | b'c' => scan_digits(v, vi, 2).map(|(x, _)| st.month = x),
                b'd' | b'e' => scan_digits(v, vi, 2).map(|(x, _)| st.day = x),
                b'H' | b'k' => scan_digits(v, vi, 2).map(|(x, _)| st.hour = x),
                b'h' | b'I' | b'l' => scan_digits(v, vi, 2).map(|(x, _)| {
                    st.hour = x;
                    st.usa_time = true;
                }),
                b'i' => scan_digits(v, vi, 2).map(|(x, _)| st.minute = x),
                b's' | b'S' => scan_digits(v, vi, 2).map(|(x, _)| st.second = x),
                b'f' => scan_digits(v, vi, 6).map(|(x, n)| {
                    st.frac = x * 10i64.pow(6 - n as u32);
                }),
                b'j' => scan_digits(v, vi, 3).map(|(x, _)| st.yearday = x),
                b'M' => scan_name(v, vi, &MONTHS, None).map(|m| st.month = m + 1),
                b'b' => scan_name(v, vi, &MONTHS, Some(3)).map(|m| st.month = m + 1),
                b'W' => scan_name(v, vi, &DAYS, None).map(|_| ()),
                b'a' => scan_name(v, vi, &DAYS, Some(3)).map(|_| ()),
                b'p' => {
                    let w = v.get(*vi..*vi + 2).unwrap_or(b"");
                    if !st.usa_time {
                        None
                    } else if w.eq_ignore_ascii_case(b"AM") {
                        *vi += 2;
                        st.pm = false;
                        Some(())
                    } else if w.eq_ignore_ascii_case(b"PM") {
                        *vi += 2;
                        st.pm = true;
                        Some(())
                    } else {
                        None
                    }
                }
                b'T' => scan_format(v, vi, b"%H:%i:%s", st)?.then_some(()),
                b'r' => scan_format(v, vi, b"%I:%i:%S %p", st)?.then_some(()),
                b'%' => {
                    if v[*vi] == b'%' {
                        *vi += 1;
                        Some(())
                    } else {
                        None
                    }
                }
                b'U' | b'u' | b'V' | b'v' | b'X' | b'x' | b'D' | b'w' => {
                    return Err(SqlError::unsupported(format!(
                        "STR_TO_DATE specifier %{}",
                        fmt[fi] as char
                    )))
                }
                _ => None,
            };
            if ok.is_none() {
                return Ok(false);
            }
        } else if !fmt[fi].is_ascii_whitespace() {
            if fmt[fi] != v[*vi] {
                return Ok(false);
            }
            *vi += 1;
        }
        fi += 1;
    }
    Ok(true)
}

fn two_digit_year(y: i64) -> i64 {
    if y < 70 {
        y + 2000
    } else {
        y + 1900
    }
}

/// STR_TO_DATE: a DATE, DATETIME or TIME text by the specifiers
/// `fmt` uses; `None` when `s` does not match or is not a valid date.
fn str_to_date(s: &str, fmt: &str) -> SqlResult<Option<String>> {
    let fb = fmt.as_bytes();
    let (mut date_used, mut time_used, mut frac_used) = (false, false, false);
    let mut i = 0;
    while i + 1 < fb.len() {
        if fb[i] == b'%' {
            i += 1;
            match fb[i] {
                b'f' => {
                    frac_used = true;
                    time_used = true;
                }
                b'H' | b'I' | b'k' | b'h' | b'l' | b'i' | b'p' | b'r' | b'S' | b's' | b'T' => {
                    time_used = true
                }
                b'M' | b'm' | b'b' | b'c' | b'D' | b'd' | b'e' | b'j' | b'U' | b'u' | b'V'
                | b'v' | b'W' | b'w' | b'a' | b'X' | b'x' | b'Y' | b'y' => date_used = true,
                _ => {}
            }
        }
        i += 1;
    }
    let mut st = Scan::default();
    let mut vi = 0;
    if !scan_format(s.as_bytes(), &mut vi, fb, &mut st)? {
        return Ok(None);
    }
    if st.usa_time {
        if !(1..=12).contains(&st.hour) {
            return Ok(None);
        }
        st.hour = st.hour % 12 + if st.pm { 12 } else { 0 };
    }
    if st.yearday > 0 {
        let days = days_from_civil(st.year, 1, 1) + st.yearday - 1;
        let (y, m, d) = civil_from_days(days);
        if y != st.year {
            return Ok(None);
        }
        (st.month, st.day) = (m, d);
    }
    if st.minute > 59 || st.second > 59 || (st.hour > 23 && date_used) {
        return Ok(None);
    }
    let time = {
        let mut t = format!("{:02}:{:02}:{:02}", st.hour, st.minute, st.second);
        if frac_used {
            t.push_str(&format!(".{:06}", st.frac));
        }
        t
    };
    if time_used && !date_used {
        return Ok(Some(time));
    }
    // MySQL 8's default modes (NO_ZERO_IN_DATE, NO_ZERO_DATE) make a
    // date with a zero or impossible part NULL.
    if !(1..=9999).contains(&st.year)
        || !(1..=12).contains(&st.month)
        || st.day < 1
        || st.day > days_in_month(st.year, st.month)
    {
        return Ok(None);
    }
    let date = format!("{:04}-{:02}-{:02}", st.year, st.month, st.day);
    Ok(Some(if time_used {
        format!("{date} {time}")
    } else {
        date
    }))
}

const WEEK_MONDAY_FIRST: i64 = 1;
const WEEK_YEAR: i64 = 2;
const WEEK_FIRST_WEEKDAY: i64 = 4;

/// MySQL's `calc_week`: (week number, the year it belongs to).
fn calc_week(p: &Parts, behaviour: i64) -> (i64, i64) {
    let monday_first = behaviour & WEEK_MONDAY_FIRST != 0;
    let mut week_year = behaviour & WEEK_YEAR != 0;
    let first_weekday = behaviour & WEEK_FIRST_WEEKDAY != 0;
    let daynr = p.days;
    let mut first_daynr = days_from_civil(p.y, 1, 1);
    // 0 = first day of the week (Monday, or Sunday unless monday_first).
    let wd = |d: i64| {
        if monday_first {
            (d + 3).rem_euclid(7)
        } else {
            (d + 4).rem_euclid(7)
        }
    };
    let mut weekday = wd(first_daynr);
    let mut year = p.y;
    if p.m == 1 && p.d <= 7 - weekday {
        if !week_year && ((first_weekday && weekday != 0) || (!first_weekday && weekday >= 4)) {
            return (0, year);
        }
        week_year = true;
        year -= 1;
        let days = days_in_year(year);
        first_daynr -= days;
        weekday = (weekday + 53 * 7 - days) % 7;
    }
    let days = if (first_weekday && weekday != 0) || (!first_weekday && weekday >= 4) {
        daynr - (first_daynr + (7 - weekday))
    } else {
        daynr - (first_daynr - weekday)
    };
    if week_year && days >= 52 * 7 {
        weekday = (weekday + days_in_year(year)) % 7;
        if (!first_weekday && weekday < 4) || (first_weekday && weekday == 0) {
            return (1, year + 1);
        }
    }
    (days / 7 + 1, year)
}

/// DATE_FORMAT: MySQL's `%` specifiers; `%x` for an unknown `x` gives
/// `x`, as MySQL does.
pub fn date_format(us: i64, fmt: &str) -> String {
    let p = Parts::of(us);
    let h12 = if p.hour() % 12 == 0 {
        12
    } else {
        p.hour() % 12
    };
    let ampm = if p.hour() < 12 { "AM" } else { "PM" };
    let mut out = String::with_capacity(fmt.len() + 16);
    let mut chars = fmt.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '%' || chars.peek().is_none() {
            out.push(c);
            continue;
        }
        let Some(s) = chars.next() else { break };
        let piece = match s {
            'a' => DAYS[p.weekday() as usize][..3].to_string(),
            'b' => MONTHS[(p.m - 1) as usize][..3].to_string(),
            'c' => p.m.to_string(),
            'D' => {
                let suffix = match (p.d % 10, p.d / 10 == 1) {
                    (_, true) => "th",
                    (1, _) => "st",
                    (2, _) => "nd",
                    (3, _) => "rd",
                    _ => "th",
                };
                format!("{}{suffix}", p.d)
            }
            'd' => format!("{:02}", p.d),
            'e' => p.d.to_string(),
            'f' => format!("{:06}", p.micro()),
            'H' => format!("{:02}", p.hour()),
            'h' | 'I' => format!("{h12:02}"),
            'i' => format!("{:02}", p.minute()),
            'j' => format!("{:03}", p.yday()),
            'k' => p.hour().to_string(),
            'l' => h12.to_string(),
            'M' => MONTHS[(p.m - 1) as usize].to_string(),
            'm' => format!("{:02}", p.m),
            'p' => ampm.to_string(),
            'r' => format!("{h12:02}:{:02}:{:02} {ampm}", p.minute(), p.second()),
            'S' | 's' => format!("{:02}", p.second()),
            'T' => format!("{:02}:{:02}:{:02}", p.hour(), p.minute(), p.second()),
            'U' => format!("{:02}", calc_week(&p, WEEK_FIRST_WEEKDAY).0),
            'u' => format!("{:02}", calc_week(&p, WEEK_MONDAY_FIRST).0),
            'V' => format!("{:02}", calc_week(&p, WEEK_YEAR | WEEK_FIRST_WEEKDAY).0),
            'v' => format!("{:02}", calc_week(&p, WEEK_MONDAY_FIRST | WEEK_YEAR).0),
            'X' => format!("{:04}", calc_week(&p, WEEK_YEAR | WEEK_FIRST_WEEKDAY).1),
            'x' => format!("{:04}", calc_week(&p, WEEK_MONDAY_FIRST | WEEK_YEAR).1),
            'W' => DAYS[p.weekday() as usize].to_string(),
            'w' => ((p.weekday() + 1) % 7).to_string(),
            'Y' => format!("{:04}", p.y),
            'y' => format!("{:02}", p.y % 100),
            other => other.to_string(),
        };
        out.push_str(&piece);
    }
    out
}
