//! Prepared-statement parameters: counting `?` placeholders and substituting
//! bound values as SQL literals.
//!
//! This module owns the text rewriting of a prepared statement into the
//! single statement the engine executes, for the binary protocol's
//! prepared statements and SQL-level `PREPARE` / `EXECUTE … USING`. It
//! never executes SQL and never touches the wire: the server's protocol
//! layer decodes binary-protocol parameters into [`Param`] first.

use thiserror::Error;

/// One bound parameter value, already decoded from the binary protocol.
#[derive(Debug, Clone, PartialEq)]
pub enum Param {
    Null,
    Int(i64),
    UInt(u64),
    Double(f64),
    /// An exact DECIMAL (a client's NEWDECIMAL parameter, a DECIMAL user
    /// variable): substituted as a decimal literal, so it stays DECIMAL.
    Decimal(crate::decimal::Decimal),
    /// Strings and blobs (sent as bytes by clients).
    Bytes(Vec<u8>),
    /// A temporal value already formatted as MySQL text
    /// (`YYYY-MM-DD[ HH:MM:SS[.ffffff]]` or `[-]HH:MM:SS[.ffffff]`).
    Temporal(String),
}

/// Why a statement could not be rewritten.
#[derive(Debug, Error, PartialEq)]
pub enum ParamError {
    #[error("statement has {expected} placeholders but {got} parameters were bound")]
    Count { expected: usize, got: usize },
    #[error("parameter {index} is not a finite number")]
    NotFinite { index: usize },
}

impl ParamError {
    /// The MySQL error code the client gets.
    pub fn code(&self) -> u16 {
        crate::error::code::WRONG_ARGUMENTS
    }
}

/// Append `b` as a hexadecimal binary-string literal (`X'0AFF'`).
pub fn push_hex(out: &mut String, b: &[u8]) {
    use std::fmt::Write as _;
    out.reserve(b.len() * 2 + 3);
    out.push_str("X'");
    for x in b {
        let _ = write!(out, "{x:02X}");
    }
    out.push('\'');
}

/// The SQL text of a statement received as bytes. UTF-8 text is taken as
/// it is. Otherwise every quoted string literal whose bytes (after its
/// escapes) are not UTF-8 — what clients send for a binary value, such as
/// PyMySQL's and mysqlclient's `_binary'…'` or mysqldump's escaped BLOBs —
/// is rewritten as the `X'…'` literal of those bytes; `None` when what is
/// left is still not UTF-8 (bytes outside a string literal).
pub fn sql_text(q: &[u8]) -> Option<std::borrow::Cow<'_, str>> {
    if let Ok(s) = std::str::from_utf8(q) {
        return Some(std::borrow::Cow::Borrowed(s));
    }
    let mut out: Vec<u8> = Vec::with_capacity(q.len() * 2);
    let mut i = 0;
    while i < q.len() {
        let c = q[i];
        match c {
            b'\'' | b'"' => {
                let (bytes, end) = unescape_literal(q, i)?;
                if std::str::from_utf8(&bytes).is_ok() {
                    out.extend_from_slice(&q[i..end]);
                } else {
                    let mut h = String::new();
                    push_hex(&mut h, &bytes);
                    // `_binary'…'` becomes `_binary X'…'`.
                    out.push(b' ');
                    out.extend_from_slice(h.as_bytes());
                }
                i = end;
            }
            b'`' => {
                let end = q[i + 1..].iter().position(|&x| x == b'`')? + i + 2;
                out.extend_from_slice(&q[i..end]);
                i = end;
            }
            // A line comment: `#`, or `-- ` (a dash pair before a space).
            c @ (b'#' | b'-')
                if c == b'#'
                    || (q.get(i + 1) == Some(&b'-')
                        && q.get(i + 2).is_none_or(|n| n.is_ascii_whitespace())) =>
            {
                let end = q[i..]
                    .iter()
                    .position(|&x| x == b'\n')
                    .map_or(q.len(), |p| i + p);
                out.extend_from_slice(&q[i..end]);
                i = end;
            }
            b'/' if q.get(i + 1) == Some(&b'*') => {
                let end = q[i + 2..]
                    .windows(2)
                    .position(|w| w == b"*/")
                    .map_or(q.len(), |p| i + 2 + p + 2);
                out.extend_from_slice(&q[i..end]);
                i = end;
            }
            _ => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8(out).ok().map(std::borrow::Cow::Owned)
}

/// The bytes of the quoted literal starting at `q[start]` (a `'` or `"`)
/// with MySQL's escapes undone (`\0 \b \n \r \t \Z`, `\%` and `\_` keep
/// their backslash, any other escaped byte is itself; a doubled quote is
/// one), and the offset just past its closing quote; `None` when it is not
/// closed.
fn unescape_literal(q: &[u8], start: usize) -> Option<(Vec<u8>, usize)> {
    let quote = q[start];
    let mut out = Vec::new();
    let mut i = start + 1;
    loop {
        let c = *q.get(i)?;
        if c == b'\\' {
            let e = *q.get(i + 1)?;
            match e {
                b'0' => out.push(0),
                b'b' => out.push(8),
                b'n' => out.push(b'\n'),
                b'r' => out.push(b'\r'),
                b't' => out.push(b'\t'),
                b'Z' => out.push(0x1a),
                b'%' | b'_' => out.extend_from_slice(&[b'\\', e]),
                other => out.push(other),
            }
            i += 2;
        } else if c == quote {
            if q.get(i + 1) == Some(&quote) {
                out.push(quote);
                i += 2;
            } else {
                return Some((out, i + 1));
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
}

/// Byte class of a position in the SQL text, as the scanner sees it.
/// Visit every `?` that is a placeholder (outside quotes, backticks and
/// comments), calling `on_placeholder` with its byte offset.
fn scan_placeholders(sql: &str, mut on_placeholder: impl FnMut(usize)) {
    crate::sql::parse::visit_code(sql, |i, c| {
        if c == b'?' {
            on_placeholder(i);
        }
        true
    });
}

/// Number of `?` placeholders outside quotes and comments.
pub fn count_placeholders(sql: &str) -> usize {
    let mut n = 0;
    scan_placeholders(sql, |_| n += 1);
    n
}

/// Append `s` as a single-quoted MySQL string literal, escaping `'`, `\`,
/// NUL, newline, carriage return and Ctrl-Z as `mysql_real_escape_string`
/// does.
pub fn push_quoted(out: &mut String, s: &str) {
    out.reserve(s.len() + 2);
    out.push('\'');
    for ch in s.chars() {
        match ch {
            '\'' => out.push_str("\\'"),
            '\\' => out.push_str("\\\\"),
            '\0' => out.push_str("\\0"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\u{1a}' => out.push_str("\\Z"),
            c => out.push(c),
        }
    }
    out.push('\'');
}

fn push_literal(out: &mut String, p: &Param, index: usize) -> Result<(), ParamError> {
    match p {
        Param::Null => out.push_str("NULL"),
        Param::Int(i) => out.push_str(&i.to_string()),
        Param::UInt(u) => out.push_str(&u.to_string()),
        Param::Double(f) => {
            if !f.is_finite() {
                return Err(ParamError::NotFinite { index });
            }
            // `{:e}` is the shortest round-trip form with an exponent, so
            // the engine reads it as a DOUBLE (`2.5` would be a DECIMAL).
            out.push_str(&format!("{f:e}"));
        }
        Param::Decimal(d) if d.is_negative() => out.push_str(&format!("({d})")),
        Param::Decimal(d) => out.push_str(&d.to_string()),
        // Bytes that are not UTF-8 become a binary-string literal
        // (X'…'): a binary column stores them as they are, a text column
        // refuses them (1366) when the value is stored.
        Param::Bytes(b) => match std::str::from_utf8(b) {
            Ok(s) => push_quoted(out, s),
            Err(_) => push_hex(out, b),
        },
        Param::Temporal(s) => push_quoted(out, s),
    }
    Ok(())
}

/// Replace each placeholder of `sql` by the corresponding parameter as a
/// SQL literal.
pub fn substitute(sql: &str, params: &[Param]) -> Result<String, ParamError> {
    let mut positions = Vec::new();
    scan_placeholders(sql, |i| positions.push(i));
    if positions.len() != params.len() {
        return Err(ParamError::Count {
            expected: positions.len(),
            got: params.len(),
        });
    }
    let mut out = String::with_capacity(sql.len() + params.len() * 8);
    let mut last = 0;
    for (index, (&pos, p)) in positions.iter().zip(params).enumerate() {
        out.push_str(&sql[last..pos]);
        push_literal(&mut out, p, index)?;
        last = pos + 1;
    }
    out.push_str(&sql[last..]);
    Ok(out)
}

/// Format a binary-protocol DATE/DATETIME/TIMESTAMP payload (length byte
/// already stripped) as MySQL text. `None` if the length is not 0, 4, 7
/// or 11.
pub fn format_binary_datetime(v: &[u8], date_only: bool) -> Option<String> {
    let (y, mo, d) = match v.len() {
        0 => (0u16, 0u8, 0u8),
        4 | 7 | 11 => (u16::from_le_bytes([v[0], v[1]]), v[2], v[3]),
        _ => return None,
    };
    if date_only {
        return Some(format!("{y:04}-{mo:02}-{d:02}"));
    }
    let (h, mi, s) = if v.len() >= 7 {
        (v[4], v[5], v[6])
    } else {
        (0, 0, 0)
    };
    let mut out = format!("{y:04}-{mo:02}-{d:02} {h:02}:{mi:02}:{s:02}");
    if v.len() == 11 {
        let us = u32::from_le_bytes([v[7], v[8], v[9], v[10]]);
        if us != 0 {
            out.push_str(&format!(".{us:06}"));
        }
    }
    Some(out)
}

/// Format a binary-protocol TIME payload (length byte stripped) as
/// `[-]HHH:MM:SS[.ffffff]`. `None` if the length is not 0, 8 or 12.
pub fn format_binary_time(v: &[u8]) -> Option<String> {
    if v.is_empty() {
        return Some("00:00:00".into());
    }
    if v.len() != 8 && v.len() != 12 {
        return None;
    }
    let neg = v[0] != 0;
    let days = u32::from_le_bytes([v[1], v[2], v[3], v[4]]);
    let hours = u64::from(days) * 24 + u64::from(v[5]);
    let mut out = format!(
        "{}{hours:02}:{:02}:{:02}",
        if neg { "-" } else { "" },
        v[6],
        v[7]
    );
    if v.len() == 12 {
        let us = u32::from_le_bytes([v[8], v[9], v[10], v[11]]);
        if us != 0 {
            out.push_str(&format!(".{us:06}"));
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_only_real_placeholders() {
        assert_eq!(count_placeholders("select ?, ?"), 2);
        assert_eq!(count_placeholders("select '?', \"?\", `?`, ?"), 1);
        assert_eq!(count_placeholders("select 'it''s ?', 'a\\'?', ?"), 1);
        assert_eq!(count_placeholders("select ? -- ?\n, ? # ?\n, /* ? */ ?"), 3);
        assert_eq!(count_placeholders("select 1--?"), 1, "`--` needs a space");
        assert_eq!(count_placeholders(""), 0);
    }

    #[test]
    fn substitutes_literals_with_escaping() {
        let sql = "insert into t values (?, ?, ?, ?, ?, '?')";
        let out = substitute(
            sql,
            &[
                Param::Int(-3),
                Param::Bytes(b"O'Brien \\ end".to_vec()),
                Param::Null,
                Param::Double(2.5),
                Param::UInt(u64::MAX),
            ],
        )
        .unwrap();
        assert_eq!(
            out,
            "insert into t values (-3, 'O\\'Brien \\\\ end', NULL, 2.5e0, 18446744073709551615, '?')"
        );
    }

    #[test]
    fn bytes_that_are_not_utf8_become_binary_literals() {
        let out = substitute(
            "insert into t values (?, ?)",
            &[
                Param::Bytes("ok é".as_bytes().to_vec()),
                Param::Bytes(vec![b'a', 0xC3, 0x28, 0xFF, 0]),
            ],
        )
        .unwrap();
        assert_eq!(out, "insert into t values ('ok é', X'61C328FF00')");
    }

    #[test]
    fn statements_with_binary_literals_are_rewritten_to_hex() {
        // UTF-8 text is left alone.
        assert_eq!(
            sql_text(b"select '\xC3\xA9'").as_deref(),
            Some("select '\u{e9}'")
        );
        // PyMySQL's form of b"\xff'\x00\\" and a valid literal beside it.
        let q = b"insert into t values (_binary'\xff\\'\\0\\\\z', 'x''y', \"\xfe\"\"\")";
        assert_eq!(
            sql_text(q).as_deref(),
            Some("insert into t values (_binary X'FF27005C7A', 'x''y',  X'FE22')")
        );
        // Escapes that keep their backslash, and comments / identifiers
        // that hold quotes.
        assert_eq!(
            sql_text(b"select `a'b`, '\xff\\%' -- it's\n").as_deref(),
            Some("select `a'b`,  X'FF5C25' -- it's\n")
        );
        // Bytes outside a literal, an unclosed literal: not SQL text.
        assert_eq!(sql_text(b"select \xff"), None);
        assert_eq!(sql_text(b"select '\xff"), None);
    }

    #[test]
    fn escapes_control_characters() {
        let mut s = String::new();
        push_quoted(&mut s, "a\nb\rc\0d\u{1a}");
        assert_eq!(s, "'a\\nb\\rc\\0d\\Z'");
    }

    #[test]
    fn decimals_stay_exact_literals() {
        let d = |s: &str| Param::Decimal(crate::decimal::Decimal::parse(s).unwrap());
        assert_eq!(
            substitute("select 1-?, ?", &[d("-0.10"), d("12345678901234567890.5")]).unwrap(),
            "select 1-(-0.10), 12345678901234567890.5"
        );
    }

    #[test]
    fn doubles_keep_float_form() {
        // An exponent keeps a double a DOUBLE (`3.0` is a DECIMAL literal).
        assert_eq!(substitute("?", &[Param::Double(3.0)]).unwrap(), "3e0");
        assert_eq!(substitute("?", &[Param::Double(0.1)]).unwrap(), "1e-1");
        assert_eq!(
            substitute("?", &[Param::Double(f64::NAN)]),
            Err(ParamError::NotFinite { index: 0 })
        );
    }

    #[test]
    fn count_mismatch_is_an_error() {
        assert_eq!(
            substitute("select ?", &[]),
            Err(ParamError::Count {
                expected: 1,
                got: 0
            })
        );
    }

    #[test]
    fn binary_temporals() {
        let dt = [0xea, 0x07, 12, 2, 16, 25, 41, 0x40, 0xe2, 0x01, 0x00];
        assert_eq!(
            format_binary_datetime(&dt, false).as_deref(),
            Some("2026-12-02 16:25:41.123456")
        );
        assert_eq!(
            format_binary_datetime(&dt[..4], true).as_deref(),
            Some("2026-12-02")
        );
        assert_eq!(format_binary_datetime(&dt[..5], false), None);
        let t = [1, 1, 0, 0, 0, 2, 3, 4];
        assert_eq!(format_binary_time(&t).as_deref(), Some("-26:03:04"));
    }
}
