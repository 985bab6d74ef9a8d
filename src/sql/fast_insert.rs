//! A fast path for the commonest bulk statement: `INSERT … VALUES` whose
//! rows are plain literals (integers, decimals, strings, NULL, a leading
//! minus). sqlparser spends most of a 100-row INSERT on its values: for
//! every one it first tries a typed string (`DATE '…'`), formatting an
//! error message each time it is not one. Here the rows are scanned by
//! hand, the head (`INSERT INTO t (cols) VALUES`) is parsed by sqlparser
//! once per connection thread while it repeats, and the rows are put into
//! its AST — the very nodes sqlparser builds for them
//! (`tests::same_ast_as_sqlparser` checks this on generated statements).
//! The head's AST is lent to the statement ([`Lent`], read-only) and comes
//! back when the statement is dropped, so it is not copied either.
//!
//! Anything else — an expression, a backslash escape, a comment, a
//! double-quoted string, `ON DUPLICATE KEY UPDATE`, a trailing `;` — makes
//! [`parse`] return `None`, and the statement takes the ordinary path. Must
//! never accept a statement sqlparser would read differently.

use std::sync::Arc;

use sqlparser::ast::{Expr, Parens, SetExpr, Statement, UnaryOperator, Value};
use sqlparser::dialect::MySqlDialect;
use sqlparser::parser::Parser;

/// A row of VALUES as sqlparser builds it.
type Row = Parens<Vec<Expr>>;

/// The statement, when it is an `INSERT` of literal rows; `None` sends it
/// down the ordinary path.
pub fn parse(sql: &str) -> Option<Lent> {
    let sql = sql.trim_matches(|c: char| c.is_ascii_whitespace());
    let word = sql.get(..6)?;
    if !word.eq_ignore_ascii_case("insert") || sql.contains("/*") {
        return None;
    }
    let rows_at = values_keyword_end(sql)?;
    let mut scan = Scan {
        b: sql.as_bytes(),
        s: sql,
        i: rows_at,
    };
    let mut rows = Vec::new();
    loop {
        scan.ws();
        rows.push(scan.row()?);
        scan.ws();
        if scan.i == scan.b.len() {
            break;
        }
        if !scan.eat(b',') {
            return None;
        }
    }
    let (mut stmt, template, head) = lend_head(sql.get(..rows_at)?)?;
    let values = values_of(&mut stmt)?;
    values.rows.clear();
    values.rows.extend(rows.into_iter().map(|content| {
        let mut r = template.clone();
        r.content = content;
        r
    }));
    Some(Lent {
        stmt: Some(stmt),
        head,
    })
}

/// The VALUES of an INSERT head's statement.
fn values_of(stmt: &mut Statement) -> Option<&mut sqlparser::ast::Values> {
    let Statement::Insert(ins) = stmt else {
        return None;
    };
    match ins.source.as_mut()?.body.as_mut() {
        SetExpr::Values(values) => Some(values),
        _ => None,
    }
}

/// The last INSERT head a thread parsed: a connection repeats its head, and
/// both sqlparser's parse of it and a copy of its AST cost more than the
/// rest of a single-row INSERT's statement handling. So the AST is lent
/// out ([`Lent`]) and comes back when the statement is dropped.
struct Head {
    /// The head's text (`INSERT … VALUES`); its allocation also names the
    /// head, so that only statements lent for it come back.
    text: Arc<str>,
    /// The AST (its rows cleared), `None` while lent out.
    stmt: Option<Box<Statement>>,
    /// Row `(NULL)` as sqlparser builds it: the template of every row.
    template: Row,
}

thread_local! {
    static LAST_HEAD: std::cell::RefCell<Option<Head>> = const { std::cell::RefCell::new(None) };
}

/// sqlparser's AST of `head` (`INSERT … VALUES`, no quotes or comments),
/// the template row and the head's name; `None` when it is not one INSERT.
/// Taken from this thread's [`Head`] when it is there, parsed otherwise.
fn lend_head(head: &str) -> Option<(Box<Statement>, Row, Arc<str>)> {
    let cached = LAST_HEAD.with_borrow_mut(|c| {
        let h = c.as_mut().filter(|h| &*h.text == head)?;
        Some((h.stmt.take()?, h.template.clone(), h.text.clone()))
    });
    if cached.is_some() {
        return cached;
    }
    let mut stmts = Parser::parse_sql(&MySqlDialect {}, &format!("{head} (NULL)")).ok()?;
    let (1, Some(mut st @ Statement::Insert(_))) = (stmts.len(), stmts.pop()) else {
        return None;
    };
    let values = values_of(&mut st)?;
    let template = values.rows.pop()?;
    if !values.rows.is_empty() {
        return None;
    }
    let text = LAST_HEAD.with_borrow_mut(|c| match c {
        // Another statement still holds this head's AST: keep its name,
        // so that the AST comes back when that one is dropped.
        Some(h) if &*h.text == head => h.text.clone(),
        _ => {
            let text: Arc<str> = Arc::from(head);
            *c = Some(Head {
                text: text.clone(),
                stmt: None,
                template: template.clone(),
            });
            text
        }
    });
    Some((Box::new(st), template, text))
}

/// An INSERT built by the fast path. Read-only: when dropped, its AST goes
/// back to its thread's `Head` if that is still the head it was lent
/// for (and the head holds no other).
pub struct Lent {
    /// `Some` until dropped or taken by [`Lent::into_statement`].
    stmt: Option<Box<Statement>>,
    head: Arc<str>,
}

impl Lent {
    /// The statement, kept (its head is parsed again next time).
    pub fn into_statement(mut self) -> Statement {
        match self.stmt.take() {
            Some(s) => *s,
            None => unreachable!("a Lent holds its statement until dropped"),
        }
    }
}

impl std::ops::Deref for Lent {
    type Target = Statement;
    fn deref(&self) -> &Statement {
        match &self.stmt {
            Some(s) => s,
            None => unreachable!("a Lent holds its statement until dropped"),
        }
    }
}

impl Drop for Lent {
    fn drop(&mut self) {
        let Some(mut stmt) = self.stmt.take() else {
            return;
        };
        if let Some(values) = values_of(&mut stmt) {
            values.rows.clear();
        }
        // The thread may be exiting (its locals gone): then it is dropped.
        let _ = LAST_HEAD.try_with(|c| {
            if let Ok(mut c) = c.try_borrow_mut() {
                if let Some(h) = c.as_mut() {
                    if Arc::ptr_eq(&h.text, &self.head) && h.stmt.is_none() {
                        h.stmt = Some(stmt);
                    }
                }
            }
        });
    }
}

impl Clone for Lent {
    /// A copy that is not lent (it never goes back to a head).
    fn clone(&self) -> Self {
        Lent {
            stmt: Some(Box::new((**self).clone())),
            head: Arc::from(""),
        }
    }
}

impl std::fmt::Debug for Lent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        (**self).fmt(f)
    }
}

/// The byte offset just past the first `VALUES` keyword of an INSERT
/// head without quotes (a head with a string or quoted name is left to
/// sqlparser).
fn values_keyword_end(sql: &str) -> Option<usize> {
    let b = sql.as_bytes();
    let mut i = 0;
    while i + 6 <= b.len() {
        match b[i] {
            b'\'' | b'"' | b'`' | b'#' | b';' => return None,
            b'-' if b.get(i + 1) == Some(&b'-') => return None,
            _ => {}
        }
        let before_ok = i > 0 && (b[i - 1].is_ascii_whitespace() || b[i - 1] == b')');
        if before_ok && b[i..i + 6].eq_ignore_ascii_case(b"values") {
            let after = b.get(i + 6).copied();
            if after.is_some_and(|c| c.is_ascii_whitespace() || c == b'(') {
                return Some(i + 6);
            }
        }
        i += 1;
    }
    None
}

struct Scan<'a> {
    b: &'a [u8],
    s: &'a str,
    i: usize,
}

impl Scan<'_> {
    fn ws(&mut self) {
        while self.b.get(self.i).is_some_and(|c| c.is_ascii_whitespace()) {
            self.i += 1;
        }
    }

    fn eat(&mut self, c: u8) -> bool {
        if self.b.get(self.i) == Some(&c) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    /// `( literal, … )`.
    fn row(&mut self) -> Option<Vec<Expr>> {
        if !self.eat(b'(') {
            return None;
        }
        let mut out = Vec::new();
        loop {
            self.ws();
            out.push(self.literal()?);
            self.ws();
            if self.eat(b')') {
                return Some(out);
            }
            if !self.eat(b',') {
                return None;
            }
        }
    }

    fn literal(&mut self) -> Option<Expr> {
        let e = match *self.b.get(self.i)? {
            b'\'' => Expr::Value(Value::SingleQuotedString(self.string()?).into()),
            b'-' => {
                self.i += 1;
                Expr::UnaryOp {
                    op: UnaryOperator::Minus,
                    expr: Box::new(self.number()?),
                }
            }
            b'0'..=b'9' => self.number()?,
            b'n' | b'N' => {
                let w = self.s.get(self.i..self.i + 4)?;
                if !w.eq_ignore_ascii_case("null") {
                    return None;
                }
                self.i += 4;
                Expr::Value(Value::Null.into())
            }
            _ => return None,
        };
        // A literal ends at a separator: `1abc`, `NULLx`, `'a' 'b'` (MySQL
        // concatenates adjacent strings) and `1 + 2` are sqlparser's.
        self.ws();
        matches!(self.b.get(self.i), Some(b',' | b')')).then_some(e)
    }

    /// Digits, optionally `.` and more digits (no exponent, no leading dot).
    fn number(&mut self) -> Option<Expr> {
        let start = self.i;
        let digits = |s: &mut Self| {
            let from = s.i;
            while s.b.get(s.i).is_some_and(u8::is_ascii_digit) {
                s.i += 1;
            }
            s.i > from
        };
        if !digits(self) {
            return None;
        }
        if self.eat(b'.') && !digits(self) {
            return None;
        }
        if self
            .b
            .get(self.i)
            .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_' || *c == b'.')
        {
            return None;
        }
        let text = self.s.get(start..self.i)?;
        Some(Expr::Value(Value::Number(text.to_string(), false).into()))
    }

    /// `'…'` with `''` for a quote; a backslash (MySQL escapes) is left to
    /// sqlparser.
    fn string(&mut self) -> Option<String> {
        self.i += 1;
        let mut out = String::new();
        let mut from = self.i;
        loop {
            match *self.b.get(self.i)? {
                b'\\' => return None,
                b'\'' => {
                    out.push_str(self.s.get(from..self.i)?);
                    if self.b.get(self.i + 1) == Some(&b'\'') {
                        out.push('\'');
                        self.i += 2;
                        from = self.i;
                    } else {
                        self.i += 1;
                        return Some(out);
                    }
                }
                _ => self.i += 1,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sqlparser(sql: &str) -> Statement {
        let mut v = Parser::parse_sql(&MySqlDialect {}, sql).unwrap();
        assert_eq!(v.len(), 1, "{sql}");
        v.remove(0)
    }

    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
            xs[(self.next() % xs.len() as u64) as usize]
        }
    }

    fn literal(r: &mut Rng) -> String {
        match r.next() % 7 {
            0 => format!("{}", r.next() % 100_000),
            1 => format!("-{}", r.next() % 1000),
            2 => format!("{}.{}", r.next() % 1000, r.next() % 100),
            3 => "NULL".into(),
            4 => "null".into(),
            5 => {
                let parts = [
                    "",
                    "a",
                    "it''s",
                    "x y",
                    "é€😀",
                    "''",
                    ",)",
                    "(",
                    "NULL",
                    "1",
                ];
                format!("'{}{}'", r.pick(&parts), r.pick(&parts))
            }
            _ => format!("'{}'", "z".repeat((r.next() % 120) as usize)),
        }
    }

    /// Generated literal INSERTs: the fast path takes every one and builds
    /// exactly sqlparser's statement.
    #[test]
    fn same_ast_as_sqlparser() {
        let mut r = Rng(0x9E37_79B9_7F4A_7C15);
        let ws = ["", " ", "  ", "\n", "\t "];
        for _ in 0..2000 {
            let cols = 1 + (r.next() % 4) as usize;
            let head = match r.next() % 5 {
                0 => "INSERT INTO t VALUES".to_string(),
                1 => format!(
                    "insert into d.t ({}) values",
                    ["a", "b", "c", "d"][..cols].join(", ")
                ),
                2 => "INSERT IGNORE INTO t VALUES".into(),
                3 => format!(
                    "INSERT INTO t({})VALUES",
                    ["a", "b", "c", "d"][..cols].join(",")
                ),
                _ => "Insert Into tbl Values".into(),
            };
            let nrows = 1 + (r.next() % 5) as usize;
            let rows: Vec<String> = (0..nrows)
                .map(|_| {
                    let vals: Vec<String> = (0..cols)
                        .map(|_| format!("{}{}{}", r.pick(&ws), literal(&mut r), r.pick(&ws)))
                        .collect();
                    format!("({})", vals.join(","))
                })
                .collect();
            let sql = format!(
                "{head}{}{}{}",
                r.pick(&ws),
                rows.join(&format!(",{}", r.pick(&ws))),
                r.pick(&ws)
            );
            let fast = parse(&sql).unwrap_or_else(|| panic!("fast path refused {sql}"));
            assert_eq!(*fast, sqlparser(&sql), "{sql}");
        }
        // Rows of different lengths: the same AST (execution reports 1136).
        let sql = "INSERT INTO t VALUES (1), (2, 'x')";
        assert_eq!(parse(sql).map(Lent::into_statement), Some(sqlparser(sql)));
    }

    /// A head's AST is lent to one statement at a time and comes back only
    /// to the head it was lent for: statements held at once, a head that
    /// changes while one is held, a copy and a taken statement each still
    /// get exactly sqlparser's AST.
    #[test]
    fn lent_heads_come_back_only_to_their_own_head() {
        let check = |sql: &str| {
            let l = parse(sql).unwrap_or_else(|| panic!("fast path refused {sql}"));
            assert_eq!(*l, sqlparser(sql), "{sql}");
            l
        };
        let a = check("INSERT INTO t VALUES (1)");
        let b = check("INSERT INTO t VALUES (2), (3)"); // while `a` is held
        drop(a);
        drop(b);
        let c = check("INSERT INTO t VALUES (4)");
        // Another head while `c` is held: `c` must not come back under it.
        let d = check("INSERT INTO u (x) VALUES ('d')");
        drop(c);
        drop(d);
        check("INSERT INTO u (x) VALUES ('e')");
        check("INSERT INTO t VALUES (5)");
        // A copy is not lent; a taken statement does not come back.
        let e = check("INSERT INTO t VALUES (6)");
        let copy = e.clone();
        drop(e);
        assert_eq!(*copy, sqlparser("INSERT INTO t VALUES (6)"));
        drop(copy);
        let taken = check("INSERT INTO t VALUES (7)").into_statement();
        check("INSERT INTO t VALUES (8)");
        assert_eq!(taken, sqlparser("INSERT INTO t VALUES (7)"));
        check("INSERT INTO t VALUES (9)");
    }

    /// What the fast path leaves to sqlparser (each still parses there, or
    /// fails there with sqlparser's own message).
    #[test]
    fn anything_else_takes_the_ordinary_path() {
        for sql in [
            "INSERT INTO t VALUES (1 + 2)",
            "INSERT INTO t VALUES ('a\\'b')",
            "INSERT INTO t VALUES (\"dq\")",
            "INSERT INTO t VALUES ('a' 'b')",
            "INSERT INTO t VALUES (1e5)",
            "INSERT INTO t VALUES (.5)",
            "INSERT INTO t VALUES (1.)",
            "INSERT INTO t VALUES (x'00')",
            "INSERT INTO t VALUES (TRUE)",
            "INSERT INTO t VALUES (NOW())",
            "INSERT INTO t VALUES (--1\n)",
            "INSERT INTO t VALUES (1) ON DUPLICATE KEY UPDATE a = 1",
            "INSERT INTO t VALUES (1);",
            "INSERT INTO t VALUES (1) /* c */",
            "INSERT INTO `values` VALUES (1)",
            "INSERT INTO t SET a = 1",
            "INSERT INTO t SELECT 1",
            "INSERT INTO t VALUES (1)(2)",
            "INSERT INTO t VALUES ()",
            "INSERT INTO t VALUES (1abc)",
            "INSERT INTO t VALUES (NULLx)",
            "REPLACE INTO t VALUES (1)",
            "SELECT 1",
        ] {
            assert!(parse(sql).is_none(), "{sql}");
        }
    }
}
