//! MySQL 8's regular-expression functions — `REGEXP` / `RLIKE` (compiled
//! to `regexp_like`), `REGEXP_LIKE`, `REGEXP_INSTR`, `REGEXP_SUBSTR`,
//! `REGEXP_REPLACE` — over the linear-time `regex` crate (decision 021).
//!
//! MySQL's rules (its `item_regexp_func.cc` / ICU), kept here:
//! * `match_type` is a string of `c` (case-sensitive), `i` (insensitive),
//!   `m` (multi-line), `n` (`.` matches line ends), `u` (only `\n` ends a
//!   line); the rightmost of `c`/`i` wins; any other letter is 1210. Without
//!   `c`/`i` matching follows the collation, as in MySQL: Tributary's is
//!   `utf8mb4_bin`, so case matters (as for `=` and LIKE).
//! * A NULL argument gives NULL; the pattern and match type are looked at
//!   first (a bad pattern is an error even with a NULL subject). An empty
//!   pattern is 3685 (ICU refuses it).
//! * Positions count characters from 1. A position below 1 is 1583
//!   (REGEXP_INSTR: 3686). REGEXP_INSTR searches only the text from the
//!   position on (anchors and look-behind start there) and the position
//!   must be one of a non-empty subject's characters (else 3686);
//!   REGEXP_SUBSTR / REGEXP_REPLACE search the whole subject from the
//!   position, which may be one past the end (3686 beyond). This is what
//!   MySQL 8.4's regexp_facade.cc does. An occurrence below 1 is the first.
//! * REGEXP_REPLACE's replacement is ICU's: `$n` is group n (a first digit
//!   beyond the groups is 3686; further digits are taken while the number
//!   stays a group), `${name}` a named group, `\x` the character x,
//!   `\uhhhh` / `\Uhhhhhhhh` a code point; any other `$` is 3887. Errors in
//!   the replacement show only when a match is replaced, as in ICU.
//! * After an empty match the next search starts one character later; a
//!   match may start where the previous non-empty one ended (ICU's, and
//!   Java's, iteration — not the `regex` crate's `find_iter`).
//!
//! Owns: pattern compilation (with its size limit and error mapping) and a
//! per-thread cache of compiled patterns. Never: reads rows or the session.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;

use regex::{Regex, RegexBuilder};

use super::value::{check_result_size, num_i64, text_of, wrong_count};
use crate::error::{SqlError, SqlResult};
use crate::types::Value;

/// Compiled size beyond which a pattern is refused (3700), like ICU's
/// limits (the `regex` crate's own default): bounds the memory one pattern
/// may take. A case-insensitive `\w{50}` takes a few MiB.
const COMPILED_SIZE_LIMIT: usize = 10 << 20;
/// Patterns compiling within this are "small" and cached generously;
/// bigger ones are kept [`BIG_CACHE_ENTRIES`] at a time.
const SMALL_COMPILED: usize = 256 << 10;
/// Lazy-DFA cache per compiled pattern (and thread using it). With the
/// limits above, a thread's cached patterns hold at most ~60 MiB however
/// adversarial (32 × (256 KiB + 1 MiB) + 2 × (10 + 1) MiB).
const DFA_SIZE_LIMIT: usize = 1 << 20;
/// Longest pattern text accepted (3700 beyond): what the compiled-size
/// check needs to parse stays bounded too.
const MAX_PATTERN_BYTES: usize = 1 << 20;
/// Small patterns kept compiled per thread. A statement's constant pattern
/// is compiled once and found again for every row; a pattern read from a
/// column is compiled once per distinct value while they fit.
const CACHE_ENTRIES: usize = 32;
/// Big patterns kept compiled per thread.
const BIG_CACHE_ENTRIES: usize = 2;

/// `c` / `i` / `m` / `n` / `u` as bits.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
struct Flags {
    case_insensitive: bool,
    multi_line: bool,
    dot_all: bool,
    unix_lines: bool,
}

impl Flags {
    /// Without a match type: the collation's rule, binary (case matters).
    const DEFAULT: Flags = Flags {
        case_insensitive: false,
        multi_line: false,
        dot_all: false,
        unix_lines: false,
    };

    /// Parse a match_type string (`None`: not valid, error 1210).
    fn parse(s: &str) -> Option<Flags> {
        let mut f = Flags::DEFAULT;
        for c in s.chars() {
            match c {
                'c' => f.case_insensitive = false,
                'i' => f.case_insensitive = true,
                'm' => f.multi_line = true,
                'n' => f.dot_all = true,
                'u' => f.unix_lines = true,
                _ => return None,
            }
        }
        Some(f)
    }
}

/// Compiled patterns by text, then by flags (looked up without copying
/// the text).
type Cache = HashMap<String, Vec<(Flags, Arc<Regex>)>>;

thread_local! {
    /// Small patterns, big patterns.
    static CACHE: RefCell<[Cache; 2]> = RefCell::new([HashMap::new(), HashMap::new()]);
}

fn regexp_error(code: u16, msg: &str) -> SqlError {
    SqlError::new(code, msg)
}

fn out_of_bounds() -> SqlError {
    regexp_error(3686, "Index out of bounds in regular expression search.")
}

/// The MySQL error for a pattern the `regex` crate refuses.
fn compile_error(e: &regex::Error, pattern: &str) -> SqlError {
    use regex_syntax::ast::ErrorKind as K;
    let regex::Error::Syntax(_) = e else {
        return too_big();
    };
    let parsed = regex_syntax::ast::parse::ParserBuilder::new()
        .build()
        .parse(pattern);
    let kind = match &parsed {
        Err(ae) => Some(ae.kind().clone()),
        Ok(_) => None,
    };
    let (code, msg) = match kind {
        Some(K::ClassRangeInvalid) => (
            3697,
            "The regular expression contains an [x-y] character range where x comes after y.",
        ),
        Some(K::ClassUnclosed) => (
            3696,
            "The regular expression contains an unclosed bracket expression.",
        ),
        Some(K::GroupUnclosed | K::GroupUnopened) => {
            (3691, "Mismatched parenthesis in regular expression.")
        }
        Some(K::RepetitionCountInvalid) => (
            3693,
            "The maximum is less than the minimum in a {min,max} interval.",
        ),
        Some(K::RepetitionCountUnclosed | K::RepetitionCountDecimalEmpty) => {
            (3692, "Incorrect description of a {min,max} interval.")
        }
        Some(K::DecimalInvalid) => (4007, "Decimal number is too big in regular expression."),
        Some(K::RepetitionMissing) => (
            3688,
            "Syntax error in regular expression on line 1, character 1.",
        ),
        Some(K::EscapeUnexpectedEof | K::EscapeUnrecognized | K::EscapeHexInvalid)
        | Some(K::EscapeHexEmpty | K::EscapeHexInvalidDigit) => (
            3689,
            "Unrecognized escape sequence in regular expression.",
        ),
        Some(K::UnsupportedBackreference) => (
            3690,
            "The regular expression contains a feature that is not implemented in this library version: back-references.",
        ),
        Some(K::UnsupportedLookAround) => (
            3690,
            "The regular expression contains a feature that is not implemented in this library version: look-around.",
        ),
        Some(
            K::FlagDanglingNegation
            | K::FlagDuplicate { .. }
            | K::FlagRepeatedNegation { .. }
            | K::FlagUnexpectedEof
            | K::FlagUnrecognized,
        ) => (3900, "Invalid match mode flag in regular expression."),
        Some(K::GroupNameInvalid | K::GroupNameEmpty | K::GroupNameUnexpectedEof)
        | Some(K::GroupNameDuplicate { .. }) => {
            (3887, "A capture group has an invalid name.")
        }
        Some(K::NestLimitExceeded(_)) => return too_big(),
        // Unknown POSIX or Unicode classes and the rest: ICU's
        // U_ILLEGAL_ARGUMENT_ERROR / U_REGEX_PROPERTY_SYNTAX.
        _ => (3685, "Illegal argument to a regular expression."),
    };
    regexp_error(code, msg)
}

fn too_big() -> SqlError {
    regexp_error(
        3700,
        "The regular expression pattern exceeds limits on size or complexity.",
    )
}

/// The POSIX classes both ICU and the `regex` crate know.
const POSIX_CLASSES: [&str; 14] = [
    "alnum", "alpha", "ascii", "blank", "cntrl", "digit", "graph", "lower", "print", "punct",
    "space", "upper", "word", "xdigit",
];

/// ICU refuses a bracket expression `[:name:]` naming no class (3685);
/// the `regex` crate would take it as a set of the name's characters.
fn check_posix_classes(pattern: &str) -> SqlResult<()> {
    let b = pattern.as_bytes();
    let mut i = 0;
    while i + 1 < b.len() {
        if b[i] == b'\\' {
            i += 2;
            continue;
        }
        if b[i] == b'[' && b[i + 1] == b':' {
            let rest = &pattern[i + 2..];
            if let Some(end) = rest.find(":]") {
                let name = &rest[..end];
                let name = name.strip_prefix('^').unwrap_or(name);
                if !name.contains(']') && !POSIX_CLASSES.contains(&name) {
                    return Err(regexp_error(
                        3685,
                        "Illegal argument to a regular expression.",
                    ));
                }
            }
        }
        i += 1;
    }
    Ok(())
}

/// ICU's possessive quantifiers (`a*+`, `a++`, `a?+`, `a{2}+`): the
/// `regex` crate would read `a*+` as `(a*)+`, which matches other strings,
/// so they are refused (3690) rather than approximated.
fn check_possessive(pattern: &str) -> SqlResult<()> {
    let c: Vec<char> = pattern.chars().collect();
    let mut class = 0usize;
    let mut i = 0;
    while i < c.len() {
        match c[i] {
            '\\' => i += 1,
            '[' => class += 1,
            ']' if class > 0 => class -= 1,
            '*' | '+' | '?' | '}' if class == 0 && c.get(i + 1) == Some(&'+') => {
                let quantifier = match c[i] {
                    '?' => i > 0 && c[i - 1] != '(',
                    '}' => {
                        let open = c[..i].iter().rposition(|&x| x == '{');
                        open.is_some_and(|o| {
                            o + 1 < i && c[o + 1..i].iter().all(|x| x.is_ascii_digit() || *x == ',')
                        })
                    }
                    _ => true,
                };
                if quantifier {
                    return Err(regexp_error(
                        3690,
                        "The regular expression contains a feature that is not implemented in this library version: possessive quantifiers.",
                    ));
                }
            }
            _ => {}
        }
        i += 1;
    }
    Ok(())
}

/// The compiled `pattern` under `flags`, from the thread's cache.
fn compiled(pattern: &str, flags: Flags) -> SqlResult<Arc<Regex>> {
    let hit = CACHE.with(|c| {
        c.borrow().iter().find_map(|m| {
            m.get(pattern)
                .and_then(|v| v.iter().find(|(f, _)| *f == flags))
                .map(|(_, r)| r.clone())
        })
    });
    if let Some(r) = hit {
        return Ok(r);
    }
    // ICU's uregex_open refuses an empty pattern (MySQL: 3685).
    if pattern.is_empty() {
        return Err(regexp_error(
            3685,
            "Illegal argument to a regular expression.",
        ));
    }
    if pattern.len() > MAX_PATTERN_BYTES {
        return Err(too_big());
    }
    check_posix_classes(pattern)?;
    check_possessive(pattern)?;
    let build = |limit: usize| {
        RegexBuilder::new(pattern)
            .case_insensitive(flags.case_insensitive)
            .multi_line(flags.multi_line)
            .dot_matches_new_line(flags.dot_all)
            // ICU: `\r` ends a line too unless UNIX_LINES.
            .crlf(!flags.unix_lines)
            .size_limit(limit)
            .dfa_size_limit(DFA_SIZE_LIMIT)
            .build()
    };
    let (re, big) = match build(SMALL_COMPILED) {
        Ok(re) => (re, false),
        Err(regex::Error::CompiledTooBig(_)) => (
            build(COMPILED_SIZE_LIMIT).map_err(|e| compile_error(&e, pattern))?,
            true,
        ),
        Err(e) => return Err(compile_error(&e, pattern)),
    };
    let re = Arc::new(re);
    CACHE.with(|c| {
        let mut c = c.borrow_mut();
        let (map, cap) = if big {
            (&mut c[1], BIG_CACHE_ENTRIES)
        } else {
            (&mut c[0], CACHE_ENTRIES)
        };
        if map.len() >= cap {
            map.clear();
        }
        map.entry(pattern.to_string())
            .or_default()
            .push((flags, re.clone()));
    });
    Ok(re)
}

/// Evaluate REGEXP_LIKE / _INSTR / _SUBSTR / _REPLACE (`name` lower-case).
pub(crate) fn call(name: &str, args: &[Value]) -> SqlResult<Value> {
    let (min, max, mt_at) = match name {
        "regexp_like" => (2, 3, 2),
        "regexp_instr" => (2, 6, 5),
        "regexp_substr" => (2, 5, 4),
        "regexp_replace" => (3, 6, 5),
        _ => return Err(wrong_count(name)),
    };
    if args.len() < min || args.len() > max {
        return Err(wrong_count(name));
    }
    // The pattern first (MySQL's set_pattern): match type, then pattern.
    let flags = match args.get(mt_at) {
        None => Flags::DEFAULT,
        Some(Value::Null) => return Ok(Value::Null),
        Some(v) => Flags::parse(&text_of(v))
            .ok_or_else(|| SqlError::wrong_args(format!("Incorrect arguments to {name}")))?,
    };
    let re = match &args[1] {
        Value::Null => return Ok(Value::Null),
        p => compiled(&text_of(p), flags)?,
    };
    if name == "regexp_like" {
        return Ok(match &args[0] {
            Value::Null => Value::Null,
            s => Value::Bool(re.is_match(&text_of(s))),
        });
    }
    let int_arg = |i: usize, default: i64| -> Option<i64> {
        match args.get(i) {
            None => Some(default),
            Some(Value::Null) => None,
            Some(v) => Some(num_i64(v).unwrap_or(0)),
        }
    };
    let (pos_at, occ_at) = if name == "regexp_replace" {
        (3, 4)
    } else {
        (2, 3)
    };
    let (Some(pos), Some(occ)) = (
        int_arg(pos_at, 1),
        int_arg(occ_at, if name == "regexp_replace" { 0 } else { 1 }),
    ) else {
        return Ok(Value::Null);
    };
    let return_end = if name == "regexp_instr" {
        match int_arg(4, 0) {
            None => return Ok(Value::Null),
            Some(0) => false,
            Some(1) => true,
            Some(_) => {
                return Err(SqlError::wrong_args(
                    "Incorrect arguments to regexp_instr: return_option must be 1 or 0.",
                ))
            }
        }
    } else {
        false
    };
    if pos < 1 && name != "regexp_instr" {
        return Err(SqlError::new(
            1583,
            format!("Incorrect parameters in the call to native function '{name}'"),
        ));
    }
    let replacement = if name == "regexp_replace" {
        match &args[2] {
            Value::Null => return Ok(Value::Null),
            r => Some(text_of(r).into_owned()),
        }
    } else {
        None
    };
    let subject = match &args[0] {
        Value::Null => return Ok(Value::Null),
        s => text_of(s),
    };
    if name == "regexp_instr" {
        // MySQL hands ICU only the text from `pos` on: `^`, `\b` and
        // look-behind context start there, and the position must be a
        // character of a non-empty subject.
        let from = if subject.is_empty() {
            0
        } else {
            match usize::try_from(pos - 1)
                .ok()
                .and_then(|k| subject.char_indices().nth(k))
            {
                Some((b, _)) => b,
                None => return Err(out_of_bounds()),
            }
        };
        let tail = &subject[from..];
        return Ok(Value::Int(match nth_match(&re, tail, 0, occ.max(1)) {
            None => 0,
            Some((s, e)) => {
                let at = if return_end { e } else { s };
                pos + tail[..at].chars().count() as i64
            }
        }));
    }
    // REGEXP_SUBSTR / REGEXP_REPLACE search the whole subject from `pos`
    // (context before it counts), which may be one past the last character.
    let start = byte_of_position(&subject, pos)?;
    match replacement {
        Some(r) => replace(&re, &subject, start, occ, &r).map(Value::Text),
        None => Ok(match nth_match(&re, &subject, start, occ.max(1)) {
            None => Value::Null,
            Some((s, e)) => Value::Text(subject[s..e].to_string()),
        }),
    }
}

/// The byte offset of 1-based character position `pos`, at most one past
/// the last character (3686 beyond, as ICU's `uregex_find`).
fn byte_of_position(s: &str, pos: i64) -> SqlResult<usize> {
    let skip = usize::try_from(pos - 1).map_err(|_| out_of_bounds())?;
    match s.char_indices().map(|(b, _)| b).chain([s.len()]).nth(skip) {
        Some(b) => Ok(b),
        None => Err(out_of_bounds()),
    }
}

/// The first match at or after byte `from` (the whole subject is the
/// context of `^`, `\b` …, as ICU's `uregex_find(start)`).
fn find_from(re: &Regex, s: &str, from: usize) -> Option<(usize, usize)> {
    if from > s.len() {
        return None;
    }
    re.find_at(s, from).map(|m| (m.start(), m.end()))
}

/// Where the search after match `(start, end)` begins.
fn next_start(s: &str, (start, end): (usize, usize)) -> usize {
    if start == end {
        end + s[end..].chars().next().map_or(1, char::len_utf8)
    } else {
        end
    }
}

/// The `occ`-th (from 1) match at or after byte `start`.
fn nth_match(re: &Regex, s: &str, start: usize, occ: i64) -> Option<(usize, usize)> {
    let mut m = find_from(re, s, start)?;
    for _ in 1..occ {
        m = find_from(re, s, next_start(s, m))?;
    }
    Some(m)
}

/// REGEXP_REPLACE from byte `start`: every match when `occ` is 0, else
/// only the `occ`-th (a negative one is the first, as MySQL).
fn replace(re: &Regex, s: &str, start: usize, occ: i64, repl: &str) -> SqlResult<String> {
    let Some(first) = find_from(re, s, start) else {
        return Ok(s.to_string());
    };
    let mut m = first;
    for _ in 1..occ {
        match find_from(re, s, next_start(s, m)) {
            Some(n) => m = n,
            None => return Ok(s.to_string()),
        }
    }
    let mut out = String::with_capacity(s.len());
    out.push_str(&s[..m.0]);
    let mut caps = re.capture_locations();
    loop {
        re.captures_read_at(&mut caps, s, m.0);
        expand(re, s, &caps, repl, &mut out)?;
        check_result_size("regexp_replace", out.len() as u128)?;
        let tail_from = m.1;
        let next = if occ == 0 {
            find_from(re, s, next_start(s, m))
        } else {
            None
        };
        match next {
            Some(n) => {
                out.push_str(&s[tail_from..n.0]);
                m = n;
            }
            None => {
                out.push_str(&s[tail_from..]);
                break;
            }
        }
    }
    check_result_size("regexp_replace", out.len() as u128)?;
    Ok(out)
}

/// Append ICU's expansion of `repl` for the match in `caps`.
fn expand(
    re: &Regex,
    s: &str,
    caps: &regex::CaptureLocations,
    repl: &str,
    out: &mut String,
) -> SqlResult<()> {
    let groups = re.captures_len() - 1;
    let group = |i: usize, out: &mut String| {
        if let Some((a, b)) = caps.get(i) {
            out.push_str(&s[a..b]);
        }
    };
    let bad_name = || regexp_error(3887, "A capture group has an invalid name.");
    let mut it = repl.char_indices().peekable();
    while let Some((_, c)) = it.next() {
        match c {
            '\\' => {
                let Some((at, e)) = it.next() else {
                    break;
                };
                if e == 'u' || e == 'U' {
                    let n = if e == 'u' { 4 } else { 8 };
                    let hex = repl.get(at + 1..at + 1 + n);
                    if let Some(ch) = hex
                        .filter(|h| h.chars().all(|c| c.is_ascii_hexdigit()))
                        .and_then(|h| u32::from_str_radix(h, 16).ok())
                        .and_then(char::from_u32)
                    {
                        out.push(ch);
                        for _ in 0..n {
                            it.next();
                        }
                        continue;
                    }
                }
                out.push(e);
            }
            '$' => match it.peek().map(|&(_, d)| d) {
                Some('{') => {
                    it.next();
                    let mut name = String::new();
                    loop {
                        match it.next() {
                            Some((_, '}')) => break,
                            Some((_, ch)) if ch.is_ascii_alphanumeric() => name.push(ch),
                            _ => return Err(bad_name()),
                        }
                    }
                    if !name.starts_with(|c: char| c.is_ascii_alphabetic()) {
                        return Err(bad_name());
                    }
                    let Some(i) = re.capture_names().position(|n| n == Some(name.as_str())) else {
                        return Err(bad_name());
                    };
                    group(i, out);
                }
                Some(d) if d.is_ascii_digit() => {
                    let mut n = 0usize;
                    let mut digits = 0;
                    while let Some(&(_, d)) = it.peek() {
                        let Some(v) = d.to_digit(10) else { break };
                        let next = n * 10 + v as usize;
                        if next > groups {
                            if digits == 0 {
                                return Err(out_of_bounds());
                            }
                            break;
                        }
                        n = next;
                        digits += 1;
                        it.next();
                    }
                    group(n, out);
                }
                _ => return Err(bad_name()),
            },
            c => out.push(c),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> Value {
        Value::Text(s.into())
    }

    fn run(name: &str, args: &[Value]) -> Result<Value, u16> {
        call(name, args).map_err(|e| e.code)
    }

    #[test]
    fn iteration_after_empty_matches_is_icus() {
        // ICU/Java: "baaab" ~ a* matches at 0..0, 1..4, 4..4, 5..5.
        assert_eq!(
            run("regexp_replace", &[t("baaab"), t("a*"), t("X")]),
            Ok(t("XbXXbX"))
        );
        assert_eq!(
            run(
                "regexp_instr",
                &[t("baaab"), t("a*"), Value::Int(1), Value::Int(3)]
            ),
            Ok(Value::Int(5))
        );
    }

    #[test]
    fn replacement_syntax() {
        let s = [t("abc123"), t("([a-z]+)([0-9]+)")];
        let r = |repl: &str| {
            run(
                "regexp_replace",
                &[
                    s[0].clone(),
                    s[1].clone(),
                    t(repl),
                    Value::Int(1),
                    Value::Int(0),
                    t("c"),
                ],
            )
        };
        assert_eq!(r("$2-$1"), Ok(t("123-abc")));
        assert_eq!(r("$10"), Ok(t("abc0")));
        assert_eq!(r("$1x"), Ok(t("abcx")));
        assert_eq!(r("\\$1"), Ok(t("$1")));
        assert_eq!(r("\\1"), Ok(t("1")));
        assert_eq!(r("a\\u0041"), Ok(t("aA")));
        assert_eq!(r("end\\"), Ok(t("end")));
        assert_eq!(r("$3"), Err(3686));
        assert_eq!(r("${1}"), Err(3887));
        assert_eq!(r("$$"), Err(3887));
        assert_eq!(r("$"), Err(3887));
        // Errors only show when something is replaced.
        assert_eq!(
            run("regexp_replace", &[t("xyz"), t("q"), t("$9")]),
            Ok(t("xyz"))
        );
        assert_eq!(
            run("regexp_replace", &[t("ab"), t("(?<w>b)"), t("<${w}>")]),
            Ok(t("a<b>"))
        );
    }

    #[test]
    fn patterns_map_to_mysql_errors() {
        for (p, code) in [
            ("(", 3691),
            ("a)", 3691),
            ("a[", 3696),
            ("[b-a]", 3697),
            ("a{2,1}", 3693),
            ("+", 3688),
            ("\\", 3689),
            ("(?-", 3900),
            ("\\1", 3690),
            ("(?<=a)b", 3690),
            ("(?=a)", 3690),
            ("(?>a)", 3900),
            ("a*+", 3690),
            ("a++b", 3690),
            ("a{2,3}+", 3690),
            ("\\N{LATIN SMALL LETTER A}", 3689),
            ("a\\Z", 3689),
            ("[[:invalid_bracket_expression:]]", 3685),
            ("[[:<:]]a", 3685),
            ("", 3685),
        ] {
            assert_eq!(run("regexp_like", &[t("a"), t(p)]), Err(code), "{p}");
        }
        let huge = "(?:\\w{1000}){100}";
        assert_eq!(run("regexp_like", &[t("a"), t(huge)]), Err(3700));
        assert_eq!(
            run(
                "regexp_like",
                &[t("a"), t(&"a".repeat(MAX_PATTERN_BYTES + 1))]
            ),
            Err(3700)
        );
    }

    #[test]
    fn possessive_check_leaves_other_plus_alone() {
        for p in ["a+", "[*+]", "\\*+", "(?i)a+", "a{2}", "x}+"] {
            assert!(check_possessive(p).is_ok(), "{p}");
        }
    }

    #[test]
    fn positions_are_characters() {
        let s = t("🍣🍣a");
        assert_eq!(
            run("regexp_instr", &[s.clone(), t("a"), Value::Int(3)]),
            Ok(Value::Int(3))
        );
        assert_eq!(
            run("regexp_instr", &[s.clone(), t("a"), Value::Int(4)]),
            Err(3686)
        );
        assert_eq!(
            run("regexp_instr", &[s.clone(), t("a"), Value::Int(0)]),
            Err(3686)
        );
        assert_eq!(
            run("regexp_substr", &[s.clone(), t("a"), Value::Int(0)]),
            Err(1583)
        );
        assert_eq!(
            run("regexp_substr", &[t(""), t("x*"), Value::Int(1)]),
            Ok(t(""))
        );
        assert_eq!(
            run("regexp_substr", &[t(""), t("x*"), Value::Int(2)]),
            Err(3686)
        );
        assert_eq!(
            run("regexp_substr", &[t("a🍣b"), t("."), Value::Int(4)]),
            Ok(Value::Null)
        );
        assert_eq!(
            run("regexp_substr", &[t("a🍣b"), t("."), Value::Int(5)]),
            Err(3686)
        );
        assert_eq!(
            run("regexp_replace", &[t("abc"), t("$"), t("!"), Value::Int(4)]),
            Ok(t("abc!"))
        );
        // REGEXP_INSTR sees the text from the position on; SUBSTR all of it.
        assert_eq!(
            run("regexp_instr", &[t("aaa"), t("^a"), Value::Int(2)]),
            Ok(Value::Int(2))
        );
        assert_eq!(
            run("regexp_substr", &[t("aaa"), t("^a"), Value::Int(2)]),
            Ok(Value::Null)
        );
        assert_eq!(
            run("regexp_instr", &[t(""), t("x*"), Value::Int(3)]),
            Ok(Value::Int(3))
        );
        assert_eq!(
            run("regexp_instr", &[t("abc"), t("c"), Value::Int(3)]),
            Ok(Value::Int(3))
        );
        assert_eq!(
            run(
                "regexp_instr",
                &[
                    t("a🍣🍣b"),
                    t("b"),
                    Value::Int(2),
                    Value::Int(1),
                    Value::Int(1)
                ]
            ),
            Ok(Value::Int(5))
        );
        assert_eq!(
            run(
                "regexp_replace",
                &[t("🍣🍣🍣"), t("."), t("a"), Value::Int(2), Value::Int(2)]
            ),
            Ok(t("🍣🍣a"))
        );
    }

    #[test]
    fn cache_is_bounded_and_reused() {
        let a = compiled("x+", Flags::parse("").unwrap()).unwrap();
        let b = compiled("x+", Flags::parse("").unwrap()).unwrap();
        assert!(Arc::ptr_eq(&a, &b), "a constant pattern compiles once");
        for i in 0..CACHE_ENTRIES * 2 {
            compiled(&format!("y{i}"), Flags::parse("c").unwrap()).unwrap();
        }
        assert!(CACHE.with(|c| c.borrow()[0].len()) <= CACHE_ENTRIES);
        // A big pattern (a case-insensitive \w{50} is a few MiB) compiles,
        // and only a few of them are kept.
        for i in 50..50 + BIG_CACHE_ENTRIES * 3 {
            compiled(&format!("\\w{{{i}}}"), Flags::DEFAULT).unwrap();
        }
        assert!(CACHE.with(|c| c.borrow()[1].len()) <= BIG_CACHE_ENTRIES);
    }
}
