//! `LOAD DATA [LOCAL] INFILE` as written: its own small parser (sqlparser
//! 0.64 knows only Hive's `LOAD DATA INPATH`), giving a [`LoadSpec`]. Also
//! MatrixOne's form `LOAD DATA INFILE {'filepath'='…', …} INTO TABLE t`.
//!
//! Owns the statement's grammar and its defaults (MySQL's: fields
//! terminated by tab, escaped by backslash, lines terminated by newline).
//! Never opens a file and never executes anything (`load.rs` does);
//! whatever it does not implement (`PARTITION`, `LOAD XML`, compression)
//! is refused with 1235, never ignored.

use sqlparser::ast::Expr;

use crate::error::{SqlError, SqlResult};

/// What a duplicate key does to the load.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnDup {
    /// Error 1062 (the default for a server-side file).
    Error,
    /// `IGNORE` (and `LOCAL` without REPLACE): the row is skipped with a
    /// warning, as are rows with a bad value.
    Ignore,
    /// `REPLACE`: the stored row is deleted first.
    Replace,
}

/// Where one field of a line goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    Column(String),
    /// A user variable (lower case, without `@`).
    Var(String),
}

/// A parsed `LOAD DATA` statement.
#[derive(Debug, Clone)]
pub struct LoadSpec {
    pub local: bool,
    pub file: String,
    pub on_dup: OnDup,
    pub db: Option<String>,
    pub table: String,
    /// `CHARACTER SET` (lower case), if given.
    pub charset: Option<String>,
    pub format: Format,
    pub ignore_lines: u64,
    /// The column list; empty: every column in table order.
    pub targets: Vec<Target>,
    /// `SET col = expr` (`None`: `DEFAULT`).
    pub set: Vec<(String, Option<Expr>)>,
}

/// The FIELDS and LINES options.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Format {
    pub field_term: Vec<u8>,
    pub enclosed: Option<u8>,
    pub optionally: bool,
    pub escape: Option<u8>,
    pub line_start: Vec<u8>,
    pub line_term: Vec<u8>,
}

impl Default for Format {
    fn default() -> Format {
        Format {
            field_term: b"\t".to_vec(),
            enclosed: None,
            optionally: false,
            escape: Some(b'\\'),
            line_start: Vec::new(),
            line_term: b"\n".to_vec(),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Word(String),
    QIdent(String),
    Str(Vec<u8>),
    Num(u64),
    Punct(u8),
}

/// Whether `sql` is a `LOAD …` statement (its first word).
pub fn is_load(sql: &str) -> bool {
    let s = sql.trim_start();
    s.get(..4).is_some_and(|w| w.eq_ignore_ascii_case("load"))
        && !s[4..].starts_with(|c: char| c.is_alphanumeric() || c == '_')
}

/// The tokens of `sql` and each one's starting byte offset.
fn tokenize(sql: &str) -> SqlResult<Vec<(Tok, usize)>> {
    let b = sql.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let start = i;
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if c == b'#' || (c == b'-' && b.get(i + 1) == Some(&b'-')) {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
            continue;
        }
        if c == b'/' && b.get(i + 1) == Some(&b'*') {
            let Some(end) = sql[i + 2..].find("*/") else {
                return Err(SqlError::parse("unterminated comment"));
            };
            i += end + 4;
            continue;
        }
        if c.is_ascii_alphabetic() || c == b'_' || c == b'@' || c >= 0x80 {
            while i < b.len()
                && (b[i].is_ascii_alphanumeric()
                    || matches!(b[i], b'_' | b'@' | b'$' | b'.')
                    || b[i] >= 0x80)
            {
                // `db.t`: split at the dot below.
                if b[i] == b'.' {
                    break;
                }
                i += 1;
            }
            out.push((Tok::Word(sql[start..i].to_string()), start));
            continue;
        }
        if c.is_ascii_digit() {
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            let n = sql[start..i]
                .parse()
                .map_err(|_| SqlError::parse("number out of range"))?;
            out.push((Tok::Num(n), start));
            continue;
        }
        if c == b'\'' || c == b'"' || c == b'`' {
            let q = c;
            i += 1;
            let mut s = Vec::new();
            loop {
                let Some(&d) = b.get(i) else {
                    return Err(SqlError::parse("unterminated quoted string"));
                };
                i += 1;
                if d == b'\\' && q != b'`' {
                    let Some(&n) = b.get(i) else {
                        return Err(SqlError::parse("unterminated quoted string"));
                    };
                    i += 1;
                    s.push(match n {
                        b'n' => b'\n',
                        b't' => b'\t',
                        b'r' => b'\r',
                        b'b' => 8,
                        b'0' => 0,
                        b'Z' => 26,
                        o => o,
                    });
                } else if d == q {
                    if b.get(i) == Some(&q) {
                        s.push(q);
                        i += 1;
                    } else {
                        break;
                    }
                } else {
                    s.push(d);
                }
            }
            out.push((
                if q == b'`' {
                    Tok::QIdent(String::from_utf8_lossy(&s).into_owned())
                } else {
                    Tok::Str(s)
                },
                start,
            ));
            continue;
        }
        out.push((Tok::Punct(c), start));
        i += 1;
    }
    Ok(out)
}

struct P<'a> {
    t: Vec<(Tok, usize)>,
    i: usize,
    sql: &'a str,
}

impl P<'_> {
    fn peek(&self) -> Option<&Tok> {
        self.t.get(self.i).map(|(t, _)| t)
    }
    fn peek_kw(&self, k: &str) -> bool {
        matches!(self.peek(), Some(Tok::Word(w)) if w.eq_ignore_ascii_case(k))
    }
    fn kw(&mut self, k: &str) -> bool {
        let yes = self.peek_kw(k);
        if yes {
            self.i += 1;
        }
        yes
    }
    fn expect_kw(&mut self, k: &str) -> SqlResult<()> {
        if self.kw(k) {
            Ok(())
        } else {
            Err(self.err(&format!("expected {}", k.to_ascii_uppercase())))
        }
    }
    fn punct(&mut self, c: u8) -> bool {
        let yes = self.peek() == Some(&Tok::Punct(c));
        if yes {
            self.i += 1;
        }
        yes
    }
    fn err(&self, what: &str) -> SqlError {
        let near = match self.t.get(self.i) {
            Some((_, at)) => self.sql[*at..].chars().take(40).collect::<String>(),
            None => String::new(),
        };
        SqlError::parse(format!(
            "You have an error in your SQL syntax ({what}) near '{near}'"
        ))
    }
    fn string(&mut self) -> SqlResult<Vec<u8>> {
        match self.peek() {
            Some(Tok::Str(s)) => {
                let s = s.clone();
                self.i += 1;
                Ok(s)
            }
            _ => Err(self.err("expected a string")),
        }
    }
    fn text(&mut self) -> SqlResult<String> {
        String::from_utf8(self.string()?).map_err(|_| self.err("a string that is not UTF-8"))
    }
    fn ident(&mut self) -> SqlResult<String> {
        match self.peek() {
            Some(Tok::Word(w)) if !w.starts_with('@') => {
                let w = w.clone();
                self.i += 1;
                Ok(w)
            }
            Some(Tok::QIdent(w)) => {
                let w = w.clone();
                self.i += 1;
                Ok(w)
            }
            _ => Err(self.err("expected a name")),
        }
    }
    /// A one-byte string (ENCLOSED BY / ESCAPED BY); empty: none.
    fn char_option(&mut self, what: &str) -> SqlResult<Option<u8>> {
        let s = self.string()?;
        match s.as_slice() {
            [] => Ok(None),
            [c] => Ok(Some(*c)),
            _ => Err(SqlError::new(
                crate::error::code::WRONG_FIELD_TERMINATORS,
                format!(
                    "Field separator argument is not what is expected; check the manual ({what})"
                ),
            )),
        }
    }
}

/// Parse a `LOAD …` statement.
pub fn parse(sql: &str) -> SqlResult<LoadSpec> {
    let mut p = P {
        t: tokenize(sql)?,
        i: 0,
        sql,
    };
    p.expect_kw("load")?;
    if p.peek_kw("xml") {
        return Err(SqlError::unsupported("LOAD XML"));
    }
    p.expect_kw("data")?;
    // As InnoDB: neither changes what a load does to a row-locked table.
    if !p.kw("low_priority") {
        p.kw("concurrent");
    }
    let local = p.kw("local");
    p.expect_kw("infile")?;
    let file = if p.punct(b'{') {
        matrixone_options(&mut p)?
    } else {
        p.text()?
    };
    let on_dup = if p.kw("replace") {
        OnDup::Replace
    } else if p.kw("ignore") || local {
        // MySQL: LOCAL without REPLACE behaves as IGNORE (the server
        // cannot stop the client's transfer midway).
        OnDup::Ignore
    } else {
        OnDup::Error
    };
    p.expect_kw("into")?;
    p.expect_kw("table")?;
    let first = p.ident()?;
    let (db, table) = if p.punct(b'.') {
        (Some(first), p.ident()?)
    } else {
        (None, first)
    };
    if p.peek_kw("partition") {
        return Err(SqlError::unsupported("LOAD DATA … PARTITION"));
    }
    let mut charset = None;
    if p.kw("character") {
        p.expect_kw("set")?;
        charset = Some(charset_name(&mut p)?);
    } else if p.kw("charset") {
        charset = Some(charset_name(&mut p)?);
    }
    let mut format = Format::default();
    if p.kw("fields") || p.kw("columns") {
        let mut any = false;
        loop {
            if p.kw("terminated") {
                p.expect_kw("by")?;
                format.field_term = p.string()?;
            } else if p.peek_kw("optionally") || p.peek_kw("enclosed") {
                format.optionally = p.kw("optionally");
                p.expect_kw("enclosed")?;
                p.expect_kw("by")?;
                format.enclosed = p.char_option("ENCLOSED BY")?;
            } else if p.kw("escaped") {
                p.expect_kw("by")?;
                format.escape = p.char_option("ESCAPED BY")?;
            } else {
                break;
            }
            any = true;
        }
        if !any {
            return Err(p.err("expected TERMINATED, ENCLOSED or ESCAPED"));
        }
    }
    if p.kw("lines") {
        let mut any = false;
        loop {
            if p.kw("starting") {
                p.expect_kw("by")?;
                format.line_start = p.string()?;
            } else if p.kw("terminated") {
                p.expect_kw("by")?;
                format.line_term = p.string()?;
            } else {
                break;
            }
            any = true;
        }
        if !any {
            return Err(p.err("expected STARTING or TERMINATED"));
        }
    }
    if format.line_term.is_empty() && format.field_term.is_empty() {
        // MySQL's fixed-row format (both empty): not implemented.
        return Err(SqlError::unsupported(
            "LOAD DATA with empty FIELDS and LINES TERMINATED BY (fixed-width rows)",
        ));
    }
    if format.line_term.is_empty() || format.field_term.is_empty() {
        return Err(SqlError::unsupported(
            "LOAD DATA with an empty FIELDS or LINES TERMINATED BY",
        ));
    }
    let mut ignore_lines = 0;
    if p.kw("ignore") {
        ignore_lines = match p.peek() {
            Some(Tok::Num(n)) => *n,
            _ => return Err(p.err("expected a number of lines")),
        };
        p.i += 1;
        if !(p.kw("lines") || p.kw("rows")) {
            return Err(p.err("expected LINES or ROWS"));
        }
    }
    let mut targets = Vec::new();
    if p.punct(b'(') && !p.punct(b')') {
        loop {
            match p.peek() {
                Some(Tok::Word(w)) if w.starts_with('@') && !w.starts_with("@@") => {
                    let name = w[1..].to_ascii_lowercase();
                    p.i += 1;
                    targets.push(Target::Var(name));
                }
                _ => targets.push(Target::Column(p.ident()?)),
            }
            if p.punct(b')') {
                break;
            }
            if !p.punct(b',') {
                return Err(p.err("expected , or )"));
            }
        }
    }
    let mut set = Vec::new();
    if p.peek_kw("set") {
        let Some((_, at)) = p.t.get(p.i) else {
            return Err(p.err("expected SET"));
        };
        set = set_clause(&sql[*at..])?;
        p.i = p.t.len();
    }
    if p.punct(b';') && p.i < p.t.len() {
        return Err(p.err("unexpected text after the statement"));
    }
    if p.i < p.t.len() {
        return Err(p.err("unexpected text"));
    }
    Ok(LoadSpec {
        local,
        file,
        on_dup,
        db,
        table,
        charset,
        format,
        ignore_lines,
        targets,
        set,
    })
}

fn charset_name(p: &mut P) -> SqlResult<String> {
    let name = match p.peek() {
        Some(Tok::Str(_)) => p.text()?,
        _ => p.ident()?,
    };
    Ok(name.to_ascii_lowercase())
}

/// MatrixOne's `{'filepath'='…', 'compression'='…', 'format'='csv'}`
/// (after the `{`): the file path. Compression is refused by name: no
/// decompressor is in the build.
fn matrixone_options(p: &mut P) -> SqlResult<String> {
    let mut path = None;
    loop {
        let key = p.text()?.to_ascii_lowercase();
        if !p.punct(b'=') {
            return Err(p.err("expected ="));
        }
        let value = p.text()?;
        match key.as_str() {
            "filepath" => path = Some(value),
            "compression" => {
                let v = value.to_ascii_lowercase();
                if !(v.is_empty() || v == "none") {
                    return Err(SqlError::unsupported(format!(
                        "LOAD DATA compression '{value}'"
                    )));
                }
            }
            "format" => {
                if !value.eq_ignore_ascii_case("csv") {
                    return Err(SqlError::unsupported(format!("LOAD DATA format '{value}'")));
                }
            }
            _ => return Err(SqlError::unsupported(format!("LOAD DATA option '{key}'"))),
        }
        if p.punct(b'}') {
            break;
        }
        if !p.punct(b',') {
            return Err(p.err("expected , or }"));
        }
    }
    path.ok_or_else(|| p.err("a MatrixOne LOAD DATA needs 'filepath'"))
}

/// `SET a = expr, b = DEFAULT` (from `SET` on), parsed by sqlparser as an
/// UPDATE's assignments.
fn set_clause(text: &str) -> SqlResult<Vec<(String, Option<Expr>)>> {
    use sqlparser::ast::{AssignmentTarget, Statement};
    let text = text.trim_end().trim_end_matches(';');
    let sql = format!("UPDATE __load {text}");
    let stmt = sqlparser::parser::Parser::parse_sql(&sqlparser::dialect::MySqlDialect {}, &sql)
        .map_err(|e| SqlError::parse(e.to_string()))?;
    let [Statement::Update(up)] = stmt.as_slice() else {
        return Err(SqlError::parse("bad SET clause of LOAD DATA"));
    };
    if up.selection.is_some() || up.from.is_some() || up.limit.is_some() {
        return Err(SqlError::parse("bad SET clause of LOAD DATA"));
    }
    let mut out = Vec::new();
    for a in &up.assignments {
        let AssignmentTarget::ColumnName(n) = &a.target else {
            return Err(SqlError::unsupported("tuple assignment"));
        };
        let col =
            n.0.last()
                .and_then(|p| p.as_ident())
                .map(|i| i.value.clone())
                .unwrap_or_default();
        let is_default = matches!(&a.value, Expr::Identifier(i)
            if i.quote_style.is_none() && i.value.eq_ignore_ascii_case("default"));
        out.push((col, (!is_default).then(|| a.value.clone())));
    }
    Ok(out)
}

/// The client side of `LOAD DATA LOCAL`: asks the client for a file and
/// streams what it sends. The server's connection installs one around
/// the statements it runs ([`with_local_files`]).
pub trait LocalFiles {
    /// The client's file `name`, as a stream of its bytes.
    fn open(&self, name: &str) -> SqlResult<Box<dyn std::io::Read>>;
}

thread_local! {
    static LOCAL_FILES: std::cell::RefCell<Option<std::rc::Rc<dyn LocalFiles>>> =
        const { std::cell::RefCell::new(None) };
}

/// Run `f` with `files` as this thread's [`LocalFiles`].
pub fn with_local_files<T>(files: std::rc::Rc<dyn LocalFiles>, f: impl FnOnce() -> T) -> T {
    struct Reset(Option<std::rc::Rc<dyn LocalFiles>>);
    impl Drop for Reset {
        fn drop(&mut self) {
            let old = self.0.take();
            LOCAL_FILES.with(|l| *l.borrow_mut() = old);
        }
    }
    let old = LOCAL_FILES.with(|l| l.borrow_mut().replace(files));
    let _reset = Reset(old);
    f()
}

/// This thread's [`LocalFiles`], if a client that can send files is
/// being served.
pub fn local_files() -> Option<std::rc::Rc<dyn LocalFiles>> {
    LOCAL_FILES.with(|l| l.borrow().clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_clauses() {
        let s = parse("LOAD DATA INFILE '/x/a.txt' INTO TABLE t").unwrap();
        assert!(!s.local);
        assert_eq!(s.on_dup, OnDup::Error);
        assert_eq!(s.format, Format::default());
        let s = parse(
            "load data local infile 'a.csv' replace into table d.t character set utf8mb4 \
             fields terminated by ',' optionally enclosed by '\"' escaped by '' \
             lines starting by 'x' terminated by '\\r\\n' ignore 2 lines (a, @b, `c`) \
             set d = @b + 1, e = default",
        )
        .unwrap();
        assert!(s.local);
        assert_eq!(s.on_dup, OnDup::Replace);
        assert_eq!(s.db.as_deref(), Some("d"));
        assert_eq!(s.charset.as_deref(), Some("utf8mb4"));
        assert_eq!(s.format.field_term, b",");
        assert_eq!(s.format.enclosed, Some(b'"'));
        assert!(s.format.optionally);
        assert_eq!(s.format.escape, None);
        assert_eq!(s.format.line_start, b"x");
        assert_eq!(s.format.line_term, b"\r\n");
        assert_eq!(s.ignore_lines, 2);
        assert_eq!(
            s.targets,
            vec![
                Target::Column("a".into()),
                Target::Var("b".into()),
                Target::Column("c".into())
            ]
        );
        assert_eq!(s.set.len(), 2);
        assert!(s.set[0].1.is_some() && s.set[1].1.is_none());
        // LOCAL without REPLACE: IGNORE.
        let s = parse("LOAD DATA LOCAL INFILE 'f' INTO TABLE t").unwrap();
        assert_eq!(s.on_dup, OnDup::Ignore);
    }

    #[test]
    fn refusals() {
        for (sql, code) in [
            ("LOAD XML INFILE 'f' INTO TABLE t", 1235),
            ("LOAD DATA INFILE 'f' INTO TABLE t PARTITION (p0)", 1235),
            (
                "LOAD DATA INFILE {'filepath'='f', 'compression'='gzip'} INTO TABLE t",
                1235,
            ),
            (
                "LOAD DATA INFILE 'f' INTO TABLE t FIELDS ENCLOSED BY 'ab'",
                1083,
            ),
            ("LOAD DATA INFILE 'f' INTO TABLE t garbage", 1064),
            ("LOAD DATA INFILE INTO TABLE t", 1064),
        ] {
            assert_eq!(parse(sql).unwrap_err().code, code, "{sql}");
        }
        let s =
            parse("LOAD DATA INFILE {'filepath'='/p/f.csv', 'format'='csv'} INTO TABLE t").unwrap();
        assert_eq!(s.file, "/p/f.csv");
    }
}
