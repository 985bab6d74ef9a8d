//! Statement parsing: MatrixOne/MySQL statements that sqlparser does not
//! know (HNSW and full-text index DDL with `ASYNC`, `SHOW ISCP STATUS`, …)
//! are recognised by a small tokenizer here; everything else — queries, DML
//! and CREATE TABLE — goes to sqlparser's MySQL dialect.
//!
//! Owns the statement enum [`Stmt`]. Never executes anything.

use sqlparser::ast::Statement;
use sqlparser::dialect::MySqlDialect;
use sqlparser::parser::Parser;

use crate::error::{SqlError, SqlResult};
use crate::sql::txn_control::{SavepointOp, TxnScope};

/// A possibly database-qualified name.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Name {
    pub db: Option<String>,
    pub name: String,
}

/// Index DDL options.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct IndexSpec {
    pub name: String,
    pub table: Name,
    pub columns: Vec<String>,
    pub unique: bool,
    pub fulltext: bool,
    /// `USING <algo>` (lower-case), e.g. `hnsw`, `btree`.
    pub using: Option<String>,
    pub op_type: Option<String>,
    pub m: Option<usize>,
    pub ef_construction: Option<usize>,
    pub ef_search: Option<usize>,
    pub parser: Option<String>,
    pub is_async: bool,
    /// Key-part lengths (`KEY (a(10))`), beside `columns`; empty when no
    /// column has one. Checked by `schema::index_def`.
    pub prefixes: Vec<Option<usize>>,
}

/// A user account `'name'@'host'` (host `%` when omitted). An empty name
/// is `CURRENT_USER` (resolved when the statement runs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Account {
    pub name: String,
    pub host: String,
}

/// A password written in a statement; never shown by `Debug`.
#[derive(Clone, PartialEq, Eq)]
pub struct Password(pub String);

impl std::fmt::Debug for Password {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Password(<redacted>)")
    }
}

/// The object of a GRANT/REVOKE: `*.*`, `db.*` / `*` (current database),
/// `db.t` / `t`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GrantOn {
    Global,
    Database(Option<String>),
    Table(Name),
}

/// How a SHOW statement's rows are filtered.
#[derive(Debug, Clone)]
pub enum ShowFilter {
    /// `LIKE 'pattern'` on the first column.
    Like(String),
    /// `WHERE expr` over the result's columns (by their names).
    Where(Box<sqlparser::ast::Expr>),
}

/// sqlparser's AST of a statement: owned, or lent by the INSERT fast path
/// (read-only; it goes back to the fast path's cache when dropped).
#[derive(Clone)]
pub enum Ast {
    Owned(Box<Statement>),
    Lent(crate::sql::fast_insert::Lent),
}

impl Ast {
    /// The statement, owned (a lent one is not given back).
    pub fn into_statement(self) -> Statement {
        match self {
            Ast::Owned(b) => *b,
            Ast::Lent(l) => l.into_statement(),
        }
    }
}

impl std::ops::Deref for Ast {
    type Target = Statement;
    fn deref(&self) -> &Statement {
        match self {
            Ast::Owned(b) => b,
            Ast::Lent(l) => l,
        }
    }
}

impl AsRef<Statement> for Ast {
    fn as_ref(&self) -> &Statement {
        self
    }
}

impl std::fmt::Debug for Ast {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        (**self).fmt(f)
    }
}

/// How EXPLAIN prints a plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExplainFormat {
    /// Tributary's own lines, one row each under `QUERY PLAN` (no FORMAT).
    Lines,
    /// MySQL 8's `FORMAT=TREE`: one row, one column `EXPLAIN`.
    Tree,
}

/// `EXPLAIN`'s options: ANALYZE (run the statement and show what each
/// operator did) and the output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExplainOpts {
    pub analyze: bool,
    pub format: ExplainFormat,
}

/// `FORMAT = name` at the start of `rest` (after `EXPLAIN [ANALYZE]`): the
/// format and the text after it; `None` when `rest` does not start with
/// FORMAT. TREE is the one format printed; TRADITIONAL and JSON (MySQL's
/// others) are refused with 1235, another name with MySQL's 1791 — an
/// option is never ignored.
fn explain_format(rest: &str, analyze: bool) -> SqlResult<Option<(ExplainFormat, &str)>> {
    let r = rest.trim_start();
    let Some(head) = r.get(..6).filter(|h| h.eq_ignore_ascii_case("format")) else {
        return Ok(None);
    };
    let Some(after) = r[head.len()..].trim_start().strip_prefix('=') else {
        return Ok(None);
    };
    let after = after.trim_start();
    let quoted = after.starts_with(['\'', '"']);
    let body = if quoted { &after[1..] } else { after };
    let len = body
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(body.len());
    let name = &body[..len];
    let mut tail = &body[len..];
    if quoted {
        let q = &after[..1];
        tail = tail
            .strip_prefix(q)
            .ok_or_else(|| SqlError::parse("unterminated EXPLAIN format name"))?;
    }
    if name.is_empty() {
        return Err(SqlError::parse("EXPLAIN FORMAT needs a format name"));
    }
    let upper = name.to_ascii_uppercase();
    match upper.as_str() {
        "TREE" => Ok(Some((ExplainFormat::Tree, tail))),
        "TRADITIONAL" | "JSON" if analyze => Err(SqlError::unsupported(format!(
            "EXPLAIN ANALYZE with {upper} format"
        ))),
        "TRADITIONAL" | "JSON" => Err(SqlError::unsupported(format!("EXPLAIN FORMAT={upper}"))),
        _ => Err(SqlError::new(
            crate::error::code::UNKNOWN_EXPLAIN_FORMAT,
            format!("Unknown EXPLAIN format name: '{name}'"),
        )),
    }
}

/// A parsed statement.
#[derive(Debug, Clone)]
pub enum Stmt {
    /// Handled through sqlparser's AST.
    Ast(Ast),
    /// `PREPARE name FROM 'text' | @var` (SQL-level prepared statements).
    Prepare {
        name: String,
        source: PrepareSource,
    },
    /// `EXECUTE name [USING @a, @b, …]`.
    Execute {
        name: String,
        using: Vec<String>,
    },
    /// `{DEALLOCATE | DROP} PREPARE name`.
    Deallocate {
        name: String,
    },
    /// `LOCK TABLES t {READ [LOCAL] | [LOW_PRIORITY] WRITE} [, …]`.
    LockTables(Vec<(Name, crate::sql::table_locks::Mode)>),
    /// `UNLOCK TABLES`.
    UnlockTables,
    /// `KILL [CONNECTION | QUERY] id`.
    Kill {
        id: u64,
        connection: bool,
    },
    /// A SHOW statement with `LIKE` / `WHERE` applied to its rows.
    ShowFiltered(Box<Stmt>, ShowFilter),
    /// `SHOW [FULL] PROCESSLIST`.
    ShowProcesslist {
        full: bool,
    },
    /// `SHOW [GLOBAL | SESSION] STATUS [LIKE 'pattern']`.
    ShowStatus {
        like: Option<String>,
    },
    /// CREATE TABLE (the AST, without its index definitions) and the
    /// index definitions written inside it (`KEY k USING hnsw (v) OP_TYPE
    /// …`, `FULLTEXT ft (body) ASYNC`, `INDEX i (a)`, `UNIQUE KEY u (b)`),
    /// created with the table in its transaction.
    CreateTable(Box<Statement>, Vec<IndexSpec>),
    CreateDatabase {
        name: String,
        if_not_exists: bool,
    },
    DropDatabase {
        name: String,
        if_exists: bool,
    },
    DropTable {
        names: Vec<Name>,
        if_exists: bool,
    },
    /// `TRUNCATE [TABLE] t` (one table, as MySQL: a list is 1064).
    Truncate {
        table: Name,
    },
    CreateIndex(IndexSpec),
    /// `DROP INDEX [IF EXISTS] name ON t` (IF EXISTS as MariaDB and
    /// MatrixOne: a missing index is note 1091, not an error).
    DropIndex {
        name: String,
        table: Name,
        if_exists: bool,
    },
    ShowDatabases,
    /// `SHOW [FULL] TABLES [FROM db]`: FULL adds `Table_type`.
    ShowTables {
        db: Option<String>,
        full: bool,
    },
    ShowIndex {
        table: Name,
    },
    ShowCreateTable {
        table: Name,
    },
    ShowCreateView {
        table: Name,
    },
    /// `SHOW CREATE {DATABASE | SCHEMA} [IF NOT EXISTS] d`.
    ShowCreateDatabase {
        name: String,
        if_not_exists: bool,
    },
    ShowIscpStatus,
    ShowWarnings,
    /// `SHOW ENGINES`, `SHOW COLLATION [LIKE p]`, `SHOW CHARSET` /
    /// `SHOW CHARACTER SET [LIKE p]`: `information_schema`'s rows under
    /// MySQL's SHOW column names.
    ShowInfo {
        table: &'static str,
        like: Option<String>,
    },
    ShowVariables {
        like: Option<String>,
        /// `SHOW GLOBAL VARIABLES`: the values new sessions start with.
        global: bool,
    },
    /// `DESCRIBE t`, `SHOW [FULL] {COLUMNS | FIELDS} {FROM | IN} t [{FROM | IN} db]`.
    Describe {
        table: Name,
        full: bool,
    },
    /// `EXPLAIN [ANALYZE] [FORMAT = TREE] <statement>`.
    Explain(Box<Stmt>, ExplainOpts),
    /// BEGIN / START TRANSACTION: `read_only` when READ ONLY / READ WRITE
    /// was said; `consistent`: WITH CONSISTENT SNAPSHOT.
    Begin {
        read_only: Option<bool>,
        consistent: bool,
    },
    /// `DO expr, …`: the SELECT of the expressions, its rows dropped.
    Do(Box<Stmt>),
    /// `COMMIT [AND [NO] CHAIN]`: `chain` begins the next transaction.
    Commit {
        chain: bool,
    },
    /// `ROLLBACK [AND [NO] CHAIN]`.
    Rollback {
        chain: bool,
    },
    /// `SAVEPOINT n`, `ROLLBACK TO [SAVEPOINT] n`, `RELEASE SAVEPOINT n`.
    Savepoint(SavepointOp, String),
    Use {
        db: String,
    },
    /// `SET a = x, @b = y, …`, applied left to right.
    Set(Vec<(SetTarget, SetValue)>),
    /// `SET [GLOBAL | SESSION] TRANSACTION ISOLATION LEVEL l, READ {WRITE |
    /// ONLY}`: the characteristics of the next transaction, or the
    /// session's or new sessions' default.
    SetTransaction {
        scope: TxnScope,
        isolation: Option<String>,
        read_only: Option<bool>,
    },
    /// `SET NAMES cs` / `SET CHARACTER SET cs`.
    SetNames {
        charset: String,
    },
    /// `CHECK INDEX idx ON t` / `ADMIN CHECK INDEX t idx`: the consistency
    /// checker.
    CheckIndex {
        name: String,
        table: Name,
    },
    /// `ANALYZE TABLE` / `CHECK TABLE` / `OPTIMIZE TABLE t1[, t2 …]`.
    Maintenance {
        op: MaintenanceOp,
        tables: Vec<Name>,
    },
    /// `ALTER TABLE t ALTER REINDEX idx` (MatrixOne): rebuild an index.
    Reindex {
        name: String,
        table: Name,
    },
    /// `ALTER TABLE t DISABLE KEYS` / `ENABLE KEYS`: as in InnoDB, nothing
    /// to do (indexes are always maintained), note 1031.
    AlterKeys {
        table: Name,
    },
    /// `CREATE USER [IF NOT EXISTS] a [IDENTIFIED BY 'pw'], …`
    CreateUser {
        if_not_exists: bool,
        users: Vec<(Account, Password)>,
    },
    /// `DROP USER [IF EXISTS] a, …`
    DropUser {
        if_exists: bool,
        users: Vec<Account>,
    },
    /// `ALTER USER [IF EXISTS] a IDENTIFIED BY 'pw', …`
    AlterUser {
        if_exists: bool,
        users: Vec<(Account, Password)>,
    },
    /// `GRANT privs ON target TO a, …` (`privs`: bits of
    /// [`crate::catalog::users::privs`]).
    Grant {
        privs: u16,
        on: GrantOn,
        users: Vec<Account>,
    },
    /// `REVOKE privs ON target FROM a, …`
    Revoke {
        privs: u16,
        on: GrantOn,
        users: Vec<Account>,
    },
    /// `SHOW GRANTS [FOR a]`
    ShowGrants {
        user: Option<Account>,
    },
    /// `LOAD DATA [LOCAL] INFILE …` (its own parser: `load_spec`).
    LoadData(Box<crate::sql::load_spec::LoadSpec>),
}

/// The left side of one `SET` assignment.
#[derive(Debug, Clone, PartialEq)]
pub enum SetTarget {
    /// A system variable (lower case); `global` for `SET GLOBAL` /
    /// `@@global.`.
    System { name: String, global: bool },
    /// A user variable `@name` (lower case: MySQL's user variables are
    /// case-insensitive).
    User(String),
}

/// The right side of one `SET` assignment.
/// Where `PREPARE` takes its statement text from.
#[derive(Debug, Clone, PartialEq)]
pub enum PrepareSource {
    Text(String),
    /// A user variable (`@v`, lower case, without the `@`).
    Var(String),
}

#[derive(Debug, Clone, PartialEq)]
pub enum SetValue {
    /// A literal: string, number, keyword (`ON`, `DEFAULT`).
    Literal(String),
    /// `NULL`.
    Null,
    /// `@@name`.
    System(String),
    /// `@name`.
    User(String),
    /// Any other expression (`@a + 1`, `(SELECT …)`), as written:
    /// evaluated as `SELECT <text>`.
    Expr(String),
    /// An expression's value, once evaluated.
    Value(crate::types::Value),
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Word(String),
    /// Quoted identifier (backticks).
    QIdent(String),
    Str(String),
    Num(String),
    Punct(char),
}

fn tokenize(sql: &str) -> SqlResult<Vec<Tok>> {
    tokenize_with(sql, None)
}

/// [`tokenize`], also giving each token's byte range in `sql` in `spans`
/// (for a statement that keeps part of its text: SET's expressions).
fn tokenize_with(
    sql: &str,
    mut spans: Option<&mut Vec<std::ops::Range<usize>>>,
) -> SqlResult<Vec<Tok>> {
    let mut out = Vec::new();
    let cs: Vec<char> = sql.chars().collect();
    let mut i = 0;
    // Byte offset of char `i` (only built when spans are asked for).
    let offs: Vec<usize> = match spans {
        Some(_) => sql
            .char_indices()
            .map(|(b, _)| b)
            .chain(std::iter::once(sql.len()))
            .collect(),
        None => Vec::new(),
    };
    while i < cs.len() {
        let c = cs[i];
        let start = i;
        let before = out.len();
        if c.is_whitespace() {
            i += 1;
        } else if c.is_alphabetic() || c == '_' || c == '@' {
            let s = i;
            while i < cs.len()
                && (cs[i].is_alphanumeric() || cs[i] == '_' || cs[i] == '@' || cs[i] == '$')
            {
                i += 1;
            }
            out.push(Tok::Word(cs[s..i].iter().collect()));
        } else if c.is_ascii_digit() {
            let s = i;
            while i < cs.len() && (cs[i].is_ascii_digit() || cs[i] == '.') {
                i += 1;
            }
            out.push(Tok::Num(cs[s..i].iter().collect()));
        } else if c == '\'' || c == '"' || c == '`' {
            let q = c;
            i += 1;
            let mut s = String::new();
            loop {
                let Some(&d) = cs.get(i) else {
                    return Err(SqlError::parse("unterminated quoted string"));
                };
                i += 1;
                if d == '\\' && q != '`' {
                    // MySQL's escapes (as sqlparser reads them in the
                    // statements it parses): `\%` and `\_` keep their
                    // backslash, for LIKE; any other escaped character is
                    // itself.
                    if let Some(&n) = cs.get(i) {
                        match n {
                            'n' => s.push('\n'),
                            't' => s.push('\t'),
                            'r' => s.push('\r'),
                            'b' => s.push('\u{8}'),
                            'Z' => s.push('\u{1a}'),
                            '0' => s.push('\0'),
                            '%' | '_' => {
                                s.push('\\');
                                s.push(n);
                            }
                            o => s.push(o),
                        }
                        i += 1;
                    }
                } else if d == q {
                    if cs.get(i) == Some(&q) {
                        s.push(q);
                        i += 1;
                    } else {
                        break;
                    }
                } else {
                    s.push(d);
                }
            }
            out.push(if q == '`' {
                Tok::QIdent(s)
            } else {
                Tok::Str(s)
            });
        } else {
            out.push(Tok::Punct(c));
            i += 1;
        }
        if let Some(sp) = spans.as_deref_mut() {
            if out.len() > before {
                sp.push(offs[start]..offs[i]);
            }
        }
    }
    Ok(out)
}

/// The table maintenance statements MySQL has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MaintenanceOp {
    Analyze,
    Check,
    Optimize,
}

impl MaintenanceOp {
    /// The `Op` column of the result (`analyze`, `check`, `optimize`).
    pub fn name(self) -> &'static str {
        match self {
            MaintenanceOp::Analyze => "analyze",
            MaintenanceOp::Check => "check",
            MaintenanceOp::Optimize => "optimize",
        }
    }
}

struct P<'a> {
    t: Vec<Tok>,
    i: usize,
    /// The statement's text (a SHOW's WHERE expression is parsed from it).
    sql: &'a str,
}

impl P<'_> {
    fn peek_kw(&self, k: &str) -> bool {
        matches!(self.t.get(self.i), Some(Tok::Word(w)) if w.eq_ignore_ascii_case(k))
    }
    fn kw(&mut self, k: &str) -> bool {
        if self.peek_kw(k) {
            self.i += 1;
            true
        } else {
            false
        }
    }
    fn expect_kw(&mut self, k: &str) -> SqlResult<()> {
        if self.kw(k) {
            Ok(())
        } else {
            Err(self.err(&format!("expected {k}")))
        }
    }
    fn peek_punct(&self, c: char) -> bool {
        self.t.get(self.i) == Some(&Tok::Punct(c))
    }
    /// A transaction's access mode: `READ ONLY` (true) or `READ WRITE`
    /// (false); `None` (nothing read) when the next word is not READ.
    fn access_mode(&mut self) -> SqlResult<Option<bool>> {
        if !self.kw("read") {
            return Ok(None);
        }
        if self.kw("only") {
            return Ok(Some(true));
        }
        self.expect_kw("write")?;
        Ok(Some(false))
    }

    fn punct(&mut self, c: char) -> bool {
        if self.t.get(self.i) == Some(&Tok::Punct(c)) {
            self.i += 1;
            true
        } else {
            false
        }
    }
    fn err(&self, what: &str) -> SqlError {
        let near = match self.t.get(self.i) {
            Some(Tok::Word(w)) | Some(Tok::Num(w)) => w.clone(),
            Some(Tok::QIdent(w)) => format!("`{w}`"),
            Some(Tok::Str(s)) => format!("'{s}'"),
            Some(Tok::Punct(c)) => c.to_string(),
            None => "end of statement".into(),
        };
        SqlError::parse(format!(
            "You have an error in your SQL syntax: {what} near '{near}'"
        ))
    }
    fn ident(&mut self) -> SqlResult<String> {
        match self.t.get(self.i).cloned() {
            Some(Tok::Word(w)) => {
                self.i += 1;
                Ok(w.to_ascii_lowercase())
            }
            Some(Tok::QIdent(w)) => {
                self.i += 1;
                Ok(w)
            }
            _ => Err(self.err("expected an identifier")),
        }
    }
    fn name(&mut self) -> SqlResult<Name> {
        let a = self.ident()?;
        if self.punct('.') {
            let b = self.ident()?;
            Ok(Name {
                db: Some(a),
                name: b,
            })
        } else {
            Ok(Name { db: None, name: a })
        }
    }
    fn string_or_word(&mut self) -> SqlResult<String> {
        match self.t.get(self.i).cloned() {
            Some(Tok::Str(s)) | Some(Tok::Word(s)) | Some(Tok::QIdent(s)) | Some(Tok::Num(s)) => {
                self.i += 1;
                Ok(s)
            }
            _ => Err(self.err("expected a value")),
        }
    }
    fn usize(&mut self) -> SqlResult<usize> {
        self.punct('=');
        match self.t.get(self.i).cloned() {
            Some(Tok::Num(n)) => {
                self.i += 1;
                n.parse()
                    .map_err(|_| self.err("expected a positive integer"))
            }
            _ => Err(self.err("expected a positive integer")),
        }
    }
    /// The end of a SHOW statement: nothing, `LIKE 'pattern'` (when
    /// `like` — matched against the first column) or `WHERE expr` (over
    /// the result's columns); anything else is a syntax error, never
    /// ignored.
    fn show_tail(&mut self, stmt: Stmt, like: bool) -> SqlResult<Stmt> {
        if self.done() {
            return Ok(stmt);
        }
        let filter = if like && self.kw("like") {
            let pattern = self.string_or_word()?;
            self.end()?;
            ShowFilter::Like(pattern)
        } else if self.peek_kw("where") {
            let text = where_tail(self.sql).ok_or_else(|| self.err("expected WHERE"))?;
            let mut parser = Parser::new(&MySqlDialect {})
                .with_recursion_limit(PARSER_RECURSION_LIMIT)
                .try_with_sql(text)
                .map_err(parser_error)?;
            let expr = parser.parse_expr().map_err(parser_error)?;
            if parser.peek_token().token != sqlparser::tokenizer::Token::EOF {
                return Err(SqlError::parse(format!(
                    "You have an error in your SQL syntax near '{}'",
                    parser.peek_token().token
                )));
            }
            ShowFilter::Where(Box::new(expr))
        } else {
            self.end()?;
            return Ok(stmt);
        };
        Ok(Stmt::ShowFiltered(Box::new(stmt), filter))
    }
    /// Whether the rest of the statement has a comma outside parentheses
    /// (an ALTER TABLE with several actions).
    fn several_actions(&self) -> bool {
        let mut depth = 0i32;
        self.t[self.i..].iter().any(|t| match t {
            Tok::Punct('(') => {
                depth += 1;
                false
            }
            Tok::Punct(')') => {
                depth -= 1;
                false
            }
            Tok::Punct(',') => depth == 0,
            _ => false,
        })
    }
    fn done(&self) -> bool {
        self.i >= self.t.len()
    }
    /// A host part: `%` or `localhost` (case-insensitive); anything else
    /// is refused rather than stored and ignored.
    fn host_part(&mut self, h: String) -> SqlResult<String> {
        let h = h.to_ascii_lowercase();
        if h == "%" || h == "localhost" {
            Ok(h)
        } else {
            Err(SqlError::unsupported(format!(
                "account host '{h}' (only '%' and 'localhost' are supported)"
            )))
        }
    }
    /// `'name'[@'host']`, `name@host`, `CURRENT_USER[()]`.
    fn account(&mut self) -> SqlResult<Account> {
        let tok = self.t.get(self.i).cloned();
        self.i += 1;
        let (name, rest) = match tok {
            Some(Tok::Str(s)) | Some(Tok::QIdent(s)) => (s, None),
            Some(Tok::Word(w)) if w.eq_ignore_ascii_case("current_user") => {
                if self.punct('(') && !self.punct(')') {
                    return Err(self.err("expected ')'"));
                }
                return Ok(Account {
                    name: String::new(),
                    host: String::new(),
                });
            }
            Some(Tok::Word(w)) => match w.split_once('@') {
                Some((n, h)) => (n.to_string(), Some(h.to_string())),
                None => (w, None),
            },
            _ => {
                self.i -= 1;
                return Err(self.err("expected a user name"));
            }
        };
        if name.is_empty() {
            return Err(SqlError::unsupported("anonymous accounts"));
        }
        let rest = match rest {
            Some(h) => Some(h),
            None => match self.t.get(self.i).cloned() {
                Some(Tok::Word(w)) if w.starts_with('@') => {
                    self.i += 1;
                    Some(w[1..].to_string())
                }
                _ => None,
            },
        };
        let host = match rest {
            None => "%".to_string(),
            Some(h) if h.is_empty() => match self.t.get(self.i).cloned() {
                Some(Tok::Str(s)) | Some(Tok::QIdent(s)) => {
                    self.i += 1;
                    s
                }
                _ => return Err(self.err("expected a host name")),
            },
            Some(h) => h,
        };
        let host = self.host_part(host)?;
        Ok(Account { name, host })
    }
    /// `IDENTIFIED [WITH mysql_native_password] BY 'pw'`, if present.
    fn identified(&mut self) -> SqlResult<Option<Password>> {
        if !self.kw("identified") {
            return Ok(None);
        }
        if self.kw("with") {
            let plugin = self.string_or_word()?;
            if !plugin.eq_ignore_ascii_case("mysql_native_password") {
                return Err(SqlError::unsupported(format!(
                    "authentication plugin '{plugin}' (only mysql_native_password)"
                )));
            }
        }
        self.expect_kw("by")?;
        match self.t.get(self.i).cloned() {
            Some(Tok::Str(s)) => {
                self.i += 1;
                Ok(Some(Password(s)))
            }
            _ => Err(self.err("expected a quoted password")),
        }
    }
    /// The end of COMMIT / ROLLBACK: `[AND [NO] CHAIN] [[NO] RELEASE]`;
    /// true for AND CHAIN. RELEASE (closing the connection) is refused.
    fn completion(&mut self) -> SqlResult<bool> {
        let mut chain = false;
        if self.kw("and") {
            let no = self.kw("no");
            self.expect_kw("chain")?;
            chain = !no;
        }
        let no_release = self.kw("no");
        if self.peek_kw("release") {
            if no_release {
                self.i += 1;
            } else {
                return Err(SqlError::unsupported(
                    "COMMIT / ROLLBACK … RELEASE (closing the connection)",
                ));
            }
        } else if no_release {
            return Err(self.err("expected RELEASE"));
        }
        self.end()?;
        Ok(chain)
    }
    /// `IF [NOT] EXISTS` after CREATE/DROP/ALTER USER.
    fn if_exists(&mut self, not: bool) -> SqlResult<bool> {
        if !self.kw("if") {
            return Ok(false);
        }
        if not {
            self.expect_kw("not")?;
        }
        self.expect_kw("exists")?;
        Ok(true)
    }
    fn accounts(&mut self) -> SqlResult<Vec<Account>> {
        let mut v = vec![self.account()?];
        while self.punct(',') {
            v.push(self.account()?);
        }
        Ok(v)
    }
    fn accounts_with_passwords(&mut self, required: bool) -> SqlResult<Vec<(Account, Password)>> {
        let mut v = Vec::new();
        loop {
            let a = self.account()?;
            let pw = match self.identified()? {
                Some(p) => p,
                None if required => return Err(self.err("expected IDENTIFIED BY")),
                None => Password(String::new()),
            };
            v.push((a, pw));
            if !self.punct(',') {
                break;
            }
        }
        Ok(v)
    }
    /// `GRANT`/`REVOKE` body up to and including the account list.
    fn grant_body(&mut self, to: &str) -> SqlResult<(u16, GrantOn, Vec<Account>)> {
        use crate::catalog::users::privs;
        const ALL: u16 = 1 << 15;
        let mut bits = 0u16;
        loop {
            let w = match self.t.get(self.i).cloned() {
                Some(Tok::Word(w)) => w.to_ascii_uppercase(),
                _ => return Err(self.err("expected a privilege")),
            };
            self.i += 1;
            let multi_word = matches!(
                self.t.get(self.i),
                Some(Tok::Word(n)) if !n.eq_ignore_ascii_case("on") && !n.eq_ignore_ascii_case("privileges")
            );
            if w == "ALL" {
                self.kw("privileges");
                bits |= ALL;
            } else if w == "LOCK" && self.kw("tables") {
                bits |= privs::LOCK_TABLES;
            } else if w == "USAGE" {
            } else if let (Some(b), false) = (privs::by_name(&w), multi_word) {
                if self.t.get(self.i) == Some(&Tok::Punct('(')) {
                    return Err(SqlError::unsupported("column privileges"));
                }
                bits |= b;
            } else {
                return Err(SqlError::unsupported(format!("the {w} privilege")));
            }
            if !self.punct(',') {
                break;
            }
        }
        self.expect_kw("on")?;
        self.kw("table");
        let on = if self.punct('*') {
            if self.punct('.') {
                if !self.punct('*') {
                    return Err(self.err("expected '*'"));
                }
                GrantOn::Global
            } else {
                GrantOn::Database(None)
            }
        } else {
            let first = self.ident()?;
            if self.punct('.') {
                if self.punct('*') {
                    GrantOn::Database(Some(first))
                } else {
                    GrantOn::Table(Name {
                        db: Some(first),
                        name: self.ident()?,
                    })
                }
            } else {
                GrantOn::Table(Name {
                    db: None,
                    name: first,
                })
            }
        };
        let global = on == GrantOn::Global;
        if bits & ALL != 0 {
            bits = match on {
                GrantOn::Global => privs::ALL_GLOBAL,
                GrantOn::Database(_) => privs::ALL_DB,
                GrantOn::Table(_) => privs::ALL_OBJECT,
            };
        }
        if !global && bits & privs::GLOBAL_ONLY != 0 {
            return Err(SqlError::new(
                1221,
                "Incorrect usage of DB GRANT and GLOBAL PRIVILEGES",
            ));
        }
        if matches!(on, GrantOn::Table(_)) && bits & privs::NOT_ON_TABLE != 0 {
            return Err(SqlError::new(
                1144,
                "Illegal GRANT/REVOKE command; please consult the manual to see which privileges can be used",
            ));
        }
        self.expect_kw(to)?;
        let users = self.accounts()?;
        if self.kw("with") {
            return Err(SqlError::unsupported("WITH GRANT OPTION"));
        }
        self.end()?;
        Ok((bits, on, users))
    }
    fn end(&self) -> SqlResult<()> {
        if self.done() {
            Ok(())
        } else {
            Err(self.err("unexpected input"))
        }
    }
    /// `(col [(length)] [ASC|DESC], …)` into `spec.columns` and
    /// `spec.prefixes`.
    fn column_list(&mut self, spec: &mut IndexSpec) -> SqlResult<()> {
        if !self.punct('(') {
            return Err(self.err("expected '('"));
        }
        let mut cols = vec![self.ident()?];
        let mut prefixes = Vec::new();
        // Optional length / order after each column.
        loop {
            let mut len = None;
            if self.punct('(') {
                len = Some(self.usize()?);
                if !self.punct(')') {
                    return Err(self.err("expected ')'"));
                }
            }
            prefixes.push(len);
            self.kw("asc");
            self.kw("desc");
            if self.punct(',') {
                cols.push(self.ident()?);
            } else {
                break;
            }
        }
        if !self.punct(')') {
            return Err(self.err("expected ')'"));
        }
        spec.columns = cols;
        if prefixes.iter().any(Option::is_some) {
            spec.prefixes = prefixes;
        }
        Ok(())
    }
    /// Index options after the column list (MatrixOne syntax).
    fn index_options(&mut self, spec: &mut IndexSpec) -> SqlResult<()> {
        while !self.done() {
            if self.kw("using") {
                spec.using = Some(self.ident()?);
            } else if self.kw("op_type") {
                self.punct('=');
                spec.op_type = Some(self.string_or_word()?.to_ascii_lowercase());
            } else if self.kw("m") {
                spec.m = Some(self.usize()?);
            } else if self.kw("ef_construction") {
                spec.ef_construction = Some(self.usize()?);
            } else if self.kw("ef_search") {
                spec.ef_search = Some(self.usize()?);
            } else if self.kw("with") {
                self.expect_kw("parser")?;
                spec.parser = Some(self.ident()?);
            } else if self.kw("async") {
                spec.is_async = true;
            } else if self.kw("comment") {
                self.string_or_word()?;
            } else {
                return Err(self.err("unknown index option"));
            }
        }
        Ok(())
    }
}

/// Parse one statement.
/// The MySQL version number executable comments are compared with
/// (`/*!80036 … */` runs, `/*!80037 … */` does not): the version in
/// (the server reports MySQL 8.0.36, see [`crate::SERVER_VERSION`]).
pub const VERSION_ID: u32 = 80036;

/// The text after the first `WHERE` keyword outside quotes and comments
/// (a SHOW statement's filter).
fn where_tail(sql: &str) -> Option<&str> {
    let b = sql.as_bytes();
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c == b'$';
    let mut found = None;
    visit_code(sql, |i, _| {
        let hit = b.len() >= i + 5
            && b[i..i + 5].eq_ignore_ascii_case(b"where")
            && (i == 0 || !ident(b[i - 1]))
            && b.get(i + 5).is_none_or(|c| !ident(*c));
        if hit {
            found = Some(i + 5);
        }
        !hit
    });
    found.and_then(|i| sql.get(i..))
}

/// The `MAX_EXECUTION_TIME(n)` optimizer hint of a top-level SELECT
/// (`SELECT /*+ MAX_EXECUTION_TIME(1000) */ …`), in milliseconds; `None`
/// when the statement has none (hints elsewhere are comments, as in MySQL).
pub fn max_execution_time_hint(sql: &str) -> Option<u64> {
    let rest = sql.trim_start();
    let head = rest.get(..6)?;
    if !head.eq_ignore_ascii_case("select") {
        return None;
    }
    let hint = rest[6..].trim_start().strip_prefix("/*+")?;
    let hint = &hint[..hint.find("*/")?];
    let upper = hint.to_ascii_uppercase();
    let at = upper.find("MAX_EXECUTION_TIME")? + "MAX_EXECUTION_TIME".len();
    let args = upper[at..].trim_start().strip_prefix('(')?;
    args[..args.find(')')?].trim().parse().ok()
}

/// Execute MySQL's executable comments as MySQL does: `/*! body */` and
/// `/*!NNNNN body */` with NNNNN ≤ [`VERSION_ID`] become ` body `; with a
/// higher version, and MariaDB's `/*M!…*/`, they are plain comments and
/// vanish. Quotes and other comments are left alone. Returns the text
/// unchanged (borrowed) when it has no executable comment.
pub fn expand_versioned_comments(sql: &str) -> std::borrow::Cow<'_, str> {
    if !sql.contains("/*!") {
        return std::borrow::Cow::Borrowed(sql);
    }
    let b = sql.as_bytes();
    let mut out = String::with_capacity(sql.len());
    let mut i = 0;
    let mut quote: Option<u8> = None;
    let mut start = 0; // start of the pending verbatim run
    while i < b.len() {
        let c = b[i];
        if let Some(q) = quote {
            if c == b'\\' && q != b'`' {
                i += 2;
                continue;
            }
            if c == q {
                quote = None;
            }
            i += 1;
            continue;
        }
        match c {
            b'\'' | b'"' | b'`' => {
                quote = Some(c);
                i += 1;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let Some(end) = sql[i + 2..].find("*/").map(|e| i + 2 + e) else {
                    break; // unterminated: leave it to the parser
                };
                if b.get(i + 2) == Some(&b'!') {
                    out.push_str(&sql[start..i]);
                    let body = &sql[i + 3..end];
                    let digits = body.bytes().take_while(u8::is_ascii_digit).count();
                    let runs = match digits {
                        0 => true,
                        5 | 6 => body[..digits].parse::<u32>().is_ok_and(|v| v <= VERSION_ID),
                        _ => true,
                    };
                    let body = if matches!(digits, 5 | 6) {
                        &body[digits..]
                    } else {
                        body
                    };
                    out.push(' ');
                    if runs {
                        out.push_str(body);
                        out.push(' ');
                    }
                    start = end + 2;
                }
                i = end + 2;
            }
            _ => i += 1,
        }
    }
    out.push_str(&sql[start..]);
    std::borrow::Cow::Owned(out)
}

/// Longest chain of binary operators one expression may have (error 1436
/// beyond it). Parsing, evaluating and dropping an expression recurse once
/// per operator of a chain; this bound keeps that recursion within a
/// thread's stack whatever the statement's size.
pub const MAX_OPERATOR_CHAIN: usize = 4096;

/// Deepest nesting one statement may have (error 1436 beyond it): open
/// parentheses (groupings, calls, subqueries, lists), open `CASE`s, a run
/// of unary `NOT` / `-` / `+` / `~` / `!` and the set operators (`UNION`…)
/// so far together. MySQL's own limit is
/// its thread stack; this one is explicit and far above what queries use
/// (issue 38: 1,000 deep must work). Passes over a tree are either
/// `#[recursive::recursive]` (they grow their stack on the heap) or run
/// on a stack sized for the statement (`with_stack_for`).
pub const MAX_NESTING: usize = 2000;

/// sqlparser's recursion budget: it spends a few levels per nesting level
/// (a parenthesised subquery takes the most), so this is sized to never be
/// the first limit hit for input within [`MAX_NESTING`]; its error is 1436
/// too. sqlparser's parser is `recursive-protection`-built (its recursive
/// methods grow their stack on the heap), so the budget is not a stack
/// bound.
const PARSER_RECURSION_LIMIT: usize = 8 * MAX_NESTING + 64;

fn stack_overrun(what: String) -> SqlError {
    SqlError::new(1436, format!("Thread stack overrun: {what}"))
}

/// Most binary (and postfix) operators one statement may have (1436
/// beyond). Runs of operators separated by commas can still stack into one
/// deep tree (`f(f(… + 1 + 1, 0) + 1 + 1, 0)`), so the stack a statement
/// gets grows with this count too.
pub const MAX_STATEMENT_OPERATORS: usize = 1 << 18;

/// Stack a statement gets per nesting level, in [`STACK_UNIT`]s.
const UNITS_PER_NESTING_LEVEL: usize = 16;

/// Refuse a statement nested deeper than [`MAX_NESTING`], whose operator
/// chains are longer than [`MAX_OPERATOR_CHAIN`] (a run of binary operators
/// not separated by a comma) or with more than [`MAX_STATEMENT_OPERATORS`]
/// operators, from its tokens, before any recursive pass. Returns the
/// stack the statement needs beyond [`STACK_BASE`], in [`STACK_UNIT`]s: a
/// bound on its tree's depth (nesting levels and operators).
fn check_depth(toks: &[Tok]) -> SqlResult<usize> {
    let mut deepest = 0usize;
    let mut operators = 0usize;
    let mut run = 0usize;
    let mut prev_operand = false;
    // Open parentheses and CASEs, and the current run of unary operators.
    let mut open = 0usize;
    let mut unary = 0usize;
    // Set operators so far: a UNION chain is planned as a tree as deep.
    let mut sets = 0usize;
    for t in toks {
        let (binary, operand) = match t {
            Tok::Punct(',') | Tok::Punct(';') => {
                run = 0;
                (false, false)
            }
            Tok::Punct('(') => {
                open += 1;
                (false, false)
            }
            Tok::Punct(')') => {
                open = open.saturating_sub(1);
                (false, true)
            }
            Tok::Punct('+' | '-' | '*' | '/' | '%' | '=' | '<' | '>' | '&' | '|' | '^') => {
                (prev_operand, false)
            }
            Tok::Punct(_) => (false, false),
            Tok::Word(w) => {
                let l = w.to_ascii_lowercase();
                match l.as_str() {
                    "and" | "or" | "xor" | "div" | "mod" | "like" | "regexp" | "rlike" | "is"
                    | "in" | "between" | "collate" | "escape" | "sounds" | "member" => {
                        (prev_operand, false)
                    }
                    "case" => {
                        open += 1;
                        (false, false)
                    }
                    "union" | "except" | "intersect" | "minus" => {
                        sets += 1;
                        (false, false)
                    }
                    "end" => {
                        open = open.saturating_sub(1);
                        (false, true)
                    }
                    "not" | "when" | "then" | "else" | "select" | "where" | "on" | "by"
                    | "having" | "interval" | "binary" => (false, false),
                    _ => (false, true),
                }
            }
            Tok::QIdent(_) | Tok::Str(_) | Tok::Num(_) => (false, true),
        };
        if binary {
            operators += 1;
            if operators > MAX_STATEMENT_OPERATORS {
                return Err(stack_overrun(format!(
                    "the statement has more than {MAX_STATEMENT_OPERATORS} operators"
                )));
            }
            run += 1;
            if run > MAX_OPERATOR_CHAIN {
                return Err(stack_overrun(format!(
                    "an expression chains more than {MAX_OPERATOR_CHAIN} operators; split it or use IN (…)"
                )));
            }
        }
        // A prefix operator: `NOT`, or a sign / `~` / `!` not after an operand.
        let prefix = match t {
            Tok::Word(w) => w.eq_ignore_ascii_case("not"),
            Tok::Punct('-' | '+' | '~' | '!') => !prev_operand,
            _ => false,
        };
        unary = if prefix { unary + 1 } else { 0 };
        deepest = deepest.max(open + unary + sets);
        if deepest > MAX_NESTING {
            return Err(stack_overrun(format!(
                "the statement nests more than {MAX_NESTING} levels deep"
            )));
        }
        prev_operand = operand;
    }
    Ok(deepest * UNITS_PER_NESTING_LEVEL + operators)
}

/// Stack a statement needs besides its depth.
const STACK_BASE: usize = 512 << 10;

/// The unit of [`with_stack_for`]: what one operator of a chain may need
/// in the passes that are not `#[recursive::recursive]` (sqlparser's
/// derived `Clone`, `PartialEq` and `Drop` of the AST; the drop of a
/// compiled expression) with debug builds' frames; a nesting level (a call
/// or subquery: several frames) gets 16. Measured by `tests/depth.rs` on a
/// 2 MiB thread.
const STACK_UNIT: usize = 1 << 10;

/// Run `f` (everything done with a statement needing `units` of stack, as
/// [`parse_measured`] says: check, plan, execute, drop) with enough stack:
/// in place when the thread has it (every ordinary statement), else on a
/// stack segment of that size allocated for the call (pages are only
/// touched as used).
pub fn with_stack_for<R>(units: usize, f: impl FnOnce() -> R) -> R {
    let most = MAX_NESTING * UNITS_PER_NESTING_LEVEL + MAX_STATEMENT_OPERATORS;
    let need = STACK_BASE + units.min(most) * STACK_UNIT;
    stacker::maybe_grow(need, need, f)
}

/// sqlparser's error for a statement within our bounds but beyond its
/// recursion budget, as MySQL's 1436; others as 1064.
fn parser_error(e: sqlparser::parser::ParserError) -> SqlError {
    match e {
        sqlparser::parser::ParserError::RecursionLimitExceeded => {
            stack_overrun("the statement nests too deeply".into())
        }
        e => SqlError::parse(format!(
            "You have an error in your SQL syntax: {}",
            e.to_string().trim_start_matches("sql parser error: ")
        )),
    }
}

pub fn parse(sql: &str) -> SqlResult<Stmt> {
    parse_measured(sql).map(|(s, _)| s)
}

/// A statement built from another's text (DO's SELECT), parsed as a whole.
fn parse_tokens_of(sql: &str) -> SqlResult<Stmt> {
    let toks = tokenize(sql)?;
    parse_tokens(sql, toks)
}

/// [`parse`], and the stack the statement needs (for [`with_stack_for`]).
/// Parsing runs with that stack too: sqlparser grows its own recursion, but
/// a partial tree it drops on an error is as deep as the statement.
pub fn parse_measured(sql: &str) -> SqlResult<(Stmt, usize)> {
    if let Some(st) = crate::sql::fast_insert::parse(sql) {
        return Ok((Stmt::Ast(Ast::Lent(st)), 0));
    }
    let sql = &*expand_versioned_comments(sql);
    if crate::sql::load_spec::is_load(sql) {
        let spec = crate::sql::load_spec::parse(sql)?;
        return Ok((Stmt::LoadData(Box::new(spec)), 0));
    }
    let sql = &*infix_mod(sql);
    let toks = tokenize(sql)?;
    let depth = check_depth(&toks)?;
    with_stack_for(depth, || parse_tokens(sql, toks)).map(|s| (s, depth))
}

fn parse_tokens(sql: &str, toks: Vec<Tok>) -> SqlResult<Stmt> {
    // `DO expr, …`: the expressions of a SELECT, evaluated for their
    // effects (GET_LOCK, SLEEP, `@v := …`), no result set.
    if matches!(toks.first(), Some(Tok::Word(w)) if w.eq_ignore_ascii_case("do")) {
        if let Some(&(_, end)) = code_tokens(sql).first() {
            let select = parse_tokens_of(&format!("SELECT {}", &sql[end..]))?;
            let is_query = matches!(&select, Stmt::Ast(a)
                if matches!(&**a, Statement::Query(q) if q.body.as_select().is_some_and(|s| s.from.is_empty())));
            if !is_query {
                return Err(SqlError::parse(
                    "You have an error in your SQL syntax: DO takes expressions",
                ));
            }
            return Ok(Stmt::Do(Box::new(select)));
        }
    }
    let regexp_null = toks.windows(2).any(|w| match w {
        [Tok::Word(a), Tok::Word(b)] => {
            (a.eq_ignore_ascii_case("regexp") || a.eq_ignore_ascii_case("rlike"))
                && b.eq_ignore_ascii_case("null")
        }
        _ => false,
    });
    if regexp_null {
        let fixed = parenthesize_regexp_null(sql);
        if fixed != sql {
            return parse_tokens(&fixed, tokenize(&fixed)?);
        }
    }
    let mut p = P { t: toks, i: 0, sql };
    if p.done() {
        return Err(SqlError::parse("Query was empty"));
    }
    // EXPLAIN <statement> (DESCRIBE and DESC are its synonyms, as in
    // MySQL): parse the rest of the original text.
    if let Some(kw) = ["explain", "describe", "desc"]
        .into_iter()
        .find(|k| p.peek_kw(k))
    {
        let trimmed = sql.trim_start();
        let mut rest = trimmed.get(kw.len()..).unwrap_or("");
        let mut analyze = false;
        if rest
            .split_whitespace()
            .next()
            .is_some_and(|w| w.eq_ignore_ascii_case("analyze"))
        {
            analyze = true;
            rest = rest.trim_start().get(7..).unwrap_or("");
        }
        let mut format = ExplainFormat::Lines;
        if let Some((f, tail)) = explain_format(rest, analyze)? {
            format = f;
            rest = tail;
        }
        let first = rest
            .split_whitespace()
            .next()
            .unwrap_or("")
            .to_ascii_lowercase();
        if ["select", "insert", "update", "delete", "with", "("]
            .iter()
            .any(|k| first.starts_with(k))
        {
            return Ok(Stmt::Explain(
                Box::new(parse(rest)?),
                ExplainOpts { analyze, format },
            ));
        }
    }
    if let Some(plain) = without_dml_modifiers(sql)? {
        return parse(&plain);
    }
    if let Some(plain) = alter_drop_check(sql)? {
        // Straight to sqlparser: the rewritten text holds the RESTRICT
        // that [`alter_drop_check`] refuses when written.
        return parse_ast(&plain);
    }
    if let Some(s) = parse_custom(&mut p)? {
        return Ok(s);
    }
    if let Some((rest, indexes)) = split_inline_indexes(sql)? {
        let Stmt::Ast(a) = parse_ast(&rest)? else {
            return Err(SqlError::parse("expected CREATE TABLE"));
        };
        if !matches!(a.as_ref(), Statement::CreateTable(_)) {
            return Err(SqlError::parse("expected CREATE TABLE"));
        }
        return Ok(Stmt::CreateTable(Box::new(a.into_statement()), indexes));
    }
    parse_ast(sql).or_else(|e| {
        if let Some(refused) = window_syntax_refused(&p.t) {
            return Err(refused);
        }
        // `SELECT … FROM … INTO @v`: MySQL's trailing INTO, which
        // sqlparser does not parse.
        if let Some(s) = trailing_into(sql)? {
            return Ok(s);
        }
        // `NTH_VALUE(…) FROM FIRST` is MySQL's default, which sqlparser
        // does not parse: the same statement without it.
        if let Some(plain) = without_from_first(sql) {
            return parse_ast(&plain);
        }
        // `SELECT … LOCK IN SHARE MODE`: MySQL's older spelling of FOR SHARE.
        match lock_in_share_mode(sql) {
            Some(plain) => parse_ast(&plain),
            None => Err(e),
        }
    })
}

/// `CREATE [DEFINER = u] {TRIGGER | PROCEDURE | FUNCTION | EVENT}`,
/// `ALTER [DEFINER = u] {PROCEDURE | FUNCTION | EVENT}` and `DROP EVENT`:
/// stored programs, which Tributary does not have — refused by name (1235)
/// rather than as a syntax error, so a schema script says what it needs.
/// (DROP TRIGGER / PROCEDURE / FUNCTION and CALL parse, and the statement
/// dispatcher refuses them quoting the statement.)
fn stored_program(t: &[Tok]) -> Option<&'static str> {
    let word = |i: usize| match t.get(i) {
        Some(Tok::Word(w)) => Some(w.to_ascii_lowercase()),
        _ => None,
    };
    let verb = word(0)?;
    if verb == "drop" {
        if word(1).as_deref() == Some("event") {
            return Some("DROP EVENT (the event scheduler)");
        }
        return None;
    }
    let alter = verb == "alter";
    if !alter && verb != "create" {
        return None;
    }
    // Past a DEFINER clause and characteristics that come before the
    // object's kind; the first word naming an object decides.
    for i in 1..t.len().min(16) {
        match word(i).as_deref() {
            Some("trigger") if !alter => return Some("CREATE TRIGGER (triggers)"),
            Some("procedure") if alter => return Some("ALTER PROCEDURE (stored procedures)"),
            Some("procedure") => return Some("CREATE PROCEDURE (stored procedures)"),
            Some("function") if alter => {
                return Some("ALTER FUNCTION (stored and loadable functions)")
            }
            Some("function") => return Some("CREATE FUNCTION (stored and loadable functions)"),
            Some("event") if alter => return Some("ALTER EVENT (the event scheduler)"),
            Some("event") => return Some("CREATE EVENT (the event scheduler)"),
            Some(
                "table" | "view" | "index" | "database" | "schema" | "user" | "role" | "unique"
                | "fulltext" | "spatial" | "temporary" | "tablespace" | "server",
            ) => return None,
            _ => {}
        }
    }
    None
}

/// A SELECT with its `INTO @a[, @b …]` after the FROM clause (at the end,
/// or before `FOR UPDATE` / `FOR SHARE` / `LOCK IN SHARE MODE`, as MySQL 8
/// allows) as the statement with the INTO in its leading place; `None`
/// when `sql` has no such clause. Only user variables: another INTO target
/// there stays a syntax error.
fn trailing_into(sql: &str) -> SqlResult<Option<Stmt>> {
    let mut spans = Vec::new();
    let toks = tokenize_with(sql, Some(&mut spans))?;
    let word =
        |i: usize, w: &str| matches!(toks.get(i), Some(Tok::Word(x)) if x.eq_ignore_ascii_case(w));
    let var = |i: usize| -> Option<String> {
        match toks.get(i) {
            Some(Tok::Word(x)) if x.starts_with('@') && !x.starts_with("@@") && x.len() > 1 => {
                Some(x.clone())
            }
            _ => None,
        }
    };
    if !(word(0, "select") || word(0, "with")) {
        return Ok(None);
    }
    let mut depth = 0usize;
    let mut seen_from = false;
    let mut at = None;
    for (i, t) in toks.iter().enumerate() {
        match t {
            Tok::Punct('(') => depth += 1,
            Tok::Punct(')') => depth = depth.saturating_sub(1),
            Tok::Word(w) if depth == 0 && w.eq_ignore_ascii_case("from") => seen_from = true,
            Tok::Word(w) if depth == 0 && seen_from && w.eq_ignore_ascii_case("into") => {
                at = Some(i)
            }
            _ => {}
        }
    }
    let Some(at) = at else {
        return Ok(None);
    };
    let mut vars = Vec::new();
    let mut i = at + 1;
    loop {
        let Some(v) = var(i) else {
            return Ok(None);
        };
        vars.push(v);
        i += 1;
        if matches!(toks.get(i), Some(Tok::Punct(','))) {
            i += 1;
        } else {
            break;
        }
    }
    let tail_ok = match toks.get(i) {
        None | Some(Tok::Punct(';')) => true,
        Some(Tok::Word(_)) => word(i, "for") || word(i, "lock"),
        _ => false,
    };
    if !tail_ok {
        return Ok(None);
    }
    let rest = format!("{} {}", &sql[..spans[at].start], &sql[spans[i - 1].end..]);
    let Ok(Stmt::Ast(a)) = parse_ast(&rest) else {
        return Ok(None);
    };
    let mut stmt = a.into_statement();
    let Statement::Query(q) = &mut stmt else {
        return Ok(None);
    };
    let sqlparser::ast::SetExpr::Select(sel) = q.body.as_mut() else {
        return Err(SqlError::unsupported("INTO after a UNION"));
    };
    if sel.into.is_some() {
        return Ok(None);
    }
    sel.into = Some(sqlparser::ast::SelectInto {
        temporary: false,
        unlogged: false,
        table: false,
        targets: vars
            .into_iter()
            .map(|v| sqlparser::ast::Expr::Identifier(sqlparser::ast::Ident::new(v)))
            .collect(),
    });
    Ok(Some(Stmt::Ast(Ast::Owned(Box::new(stmt)))))
}

/// The words and `)`s of `sql`'s code (outside quotes and comments), as
/// byte ranges in order.
fn code_tokens(sql: &str) -> Vec<(usize, usize)> {
    let b = sql.as_bytes();
    // The words and parentheses of the code, with their byte ranges.
    let mut toks: Vec<(usize, usize)> = Vec::new();
    let mut open: Option<usize> = None;
    let mut code = vec![false; b.len()];
    visit_code(sql, |i, _| {
        code[i] = true;
        true
    });
    for i in 0..=b.len() {
        let word = i < b.len() && code[i] && (b[i].is_ascii_alphanumeric() || b[i] == b'_');
        match (open, word) {
            (None, true) => open = Some(i),
            (Some(st), false) => {
                toks.push((st, i));
                open = None;
            }
            _ => {}
        }
        if i < b.len() && code[i] && b[i] == b')' {
            toks.push((i, i + 1));
        }
    }
    toks
}

/// `UPDATE` / `DELETE` with MySQL's modifiers: `LOW_PRIORITY` and (DELETE)
/// `QUICK` change nothing for a transactional table (InnoDB ignores them
/// too): the statement without them. `IGNORE` (errors turned into
/// warnings, rows skipped) is refused by name (1235). `None` when there is
/// no modifier.
fn without_dml_modifiers(sql: &str) -> SqlResult<Option<String>> {
    let toks = code_tokens(sql);
    let word = |i: usize| toks.get(i).map(|t| sql[t.0..t.1].to_ascii_lowercase());
    let Some(verb) = word(0).filter(|w| w == "update" || w == "delete") else {
        return Ok(None);
    };
    let mut cut = Vec::new();
    let mut i = 1;
    while let Some(w) = word(i) {
        match w.as_str() {
            "low_priority" => cut.push(toks[i]),
            "quick" if verb == "delete" => cut.push(toks[i]),
            "ignore" => {
                return Err(SqlError::unsupported(format!(
                    "{} IGNORE (errors are not turned into warnings): check the rows first, or use INSERT … ON DUPLICATE KEY UPDATE",
                    verb.to_ascii_uppercase()
                )))
            }
            _ => break,
        }
        i += 1;
    }
    if cut.is_empty() {
        return Ok(None);
    }
    let mut out = String::with_capacity(sql.len());
    let mut from = 0;
    for (st, end) in cut {
        out.push_str(&sql[from..st]);
        from = end;
    }
    out.push_str(&sql[from..]);
    Ok(Some(out))
}

/// `sql` with MySQL's old `LOCK IN SHARE MODE` (outside quotes and
/// comments) written `FOR SHARE`, which sqlparser parses; `None` when it
/// has none.
fn lock_in_share_mode(sql: &str) -> Option<String> {
    let toks = code_tokens(sql);
    let is = |t: (usize, usize), w: &str| sql[t.0..t.1].eq_ignore_ascii_case(w);
    let at: Vec<(usize, usize)> = toks
        .windows(4)
        .filter(|w| is(w[0], "lock") && is(w[1], "in") && is(w[2], "share") && is(w[3], "mode"))
        .map(|w| (w[0].0, w[3].1))
        .collect();
    if at.is_empty() {
        return None;
    }
    let mut out = String::with_capacity(sql.len());
    let mut from = 0;
    for (st, end) in at {
        out.push_str(&sql[from..st]);
        out.push_str("FOR SHARE");
        from = end;
    }
    out.push_str(&sql[from..]);
    Some(out)
}

/// `ALTER TABLE … DROP CHECK name`: MySQL's clause, which sqlparser does
/// not read, as `DROP CONSTRAINT name RESTRICT` — the drop behaviour
/// (never MySQL syntax: refused here when written) marks a drop that may
/// only find a CHECK constraint ([`crate::sql::alter`]). `None` when the
/// statement has neither.
fn alter_drop_check(sql: &str) -> SqlResult<Option<String>> {
    let toks = code_tokens(sql);
    let is = |t: (usize, usize), w: &str| sql[t.0..t.1].eq_ignore_ascii_case(w);
    if toks.len() < 4 || !is(toks[0], "alter") || !is(toks[1], "table") {
        return Ok(None);
    }
    let name_end = |from: usize| -> usize {
        let b = sql.as_bytes();
        let mut i = from;
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        if b.get(i) == Some(&b'`') {
            i += 1;
            while i < b.len() {
                if b[i] == b'`' {
                    if b.get(i + 1) == Some(&b'`') {
                        i += 2;
                        continue;
                    }
                    return i + 1;
                }
                i += 1;
            }
            return i;
        }
        while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b'$') {
            i += 1;
        }
        i
    };
    let mut out = String::new();
    let mut from = 0;
    for w in toks.windows(2) {
        if !is(w[0], "drop") {
            continue;
        }
        if is(w[1], "constraint") {
            let end = name_end(w[1].1);
            let next = sql[end..].trim_start();
            let word: String = next
                .chars()
                .take_while(|c| c.is_ascii_alphabetic())
                .collect();
            if word.eq_ignore_ascii_case("restrict") || word.eq_ignore_ascii_case("cascade") {
                return Err(SqlError::parse(format!(
                    "You have an error in your SQL syntax near '{word}'"
                )));
            }
        } else if is(w[1], "check") {
            let end = name_end(w[1].1);
            out.push_str(&sql[from..w[1].0]);
            out.push_str("CONSTRAINT");
            out.push_str(&sql[w[1].1..end]);
            out.push_str(" RESTRICT");
            from = end;
        }
    }
    if from == 0 {
        return Ok(None);
    }
    out.push_str(&sql[from..]);
    Ok(Some(out))
}

/// `sql` without each `FROM FIRST` that stands between a `)` and `OVER`
/// (NTH_VALUE's default, outside quotes and comments); `None` when there
/// is none.
fn without_from_first(sql: &str) -> Option<String> {
    let toks = code_tokens(sql);
    let is = |t: (usize, usize), w: &str| sql[t.0..t.1].eq_ignore_ascii_case(w);
    let cuts: Vec<(usize, usize)> = toks
        .windows(4)
        .filter(|w| is(w[0], ")") && is(w[1], "from") && is(w[2], "first") && is(w[3], "over"))
        .map(|w| (w[1].0, w[2].1))
        .collect();
    if cuts.is_empty() {
        return None;
    }
    let mut out = String::with_capacity(sql.len());
    let mut from = 0;
    for (st, end) in cuts {
        out.push_str(&sql[from..st]);
        from = end;
    }
    out.push_str(&sql[from..]);
    Some(out)
}

/// Window syntax MySQL 8 parses and then refuses as not supported (1235)
/// — a frame's `EXCLUDE …`, `NTH_VALUE(…) FROM LAST` — which sqlparser
/// does not parse: the same refusal rather than 1064. (`FROM FIRST`, the
/// default, is accepted: [`without_from_first`].)
fn window_syntax_refused(toks: &[Tok]) -> Option<SqlError> {
    let word = |t: &Tok, w: &str| matches!(t, Tok::Word(x) if x.eq_ignore_ascii_case(w));
    toks.windows(3).find_map(|w| {
        if word(&w[0], "exclude")
            && ["current", "group", "ties", "no"]
                .iter()
                .any(|k| word(&w[1], k))
        {
            Some(SqlError::unsupported("EXCLUDE"))
        } else if word(&w[0], "from") && word(&w[1], "last") && word(&w[2], "over") {
            Some(SqlError::unsupported("FROM LAST"))
        } else {
            None
        }
    })
}

/// `x REGEXP NULL` as `x REGEXP (NULL)`: sqlparser takes a NULL right
/// after REGEXP / RLIKE as the start of `NOT NULL` and fails (1064).
fn parenthesize_regexp_null(sql: &str) -> String {
    let b = sql.as_bytes();
    let mut code = vec![false; b.len()];
    visit_code(sql, |i, _| {
        code[i] = true;
        true
    });
    let word = |i: usize| code[i] && (b[i].is_ascii_alphanumeric() || b[i] == b'_');
    let mut nulls = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if !word(i) || (i > 0 && word(i - 1)) {
            i += 1;
            continue;
        }
        let mut e = i;
        while e < b.len() && word(e) {
            e += 1;
        }
        let w = &sql[i..e];
        if w.eq_ignore_ascii_case("regexp") || w.eq_ignore_ascii_case("rlike") {
            let mut n = e;
            while n < b.len() && code[n] && b[n].is_ascii_whitespace() {
                n += 1;
            }
            if n + 4 <= b.len()
                && (n..n + 4).all(word)
                && sql[n..n + 4].eq_ignore_ascii_case("null")
                && !(n + 4 < b.len() && word(n + 4))
            {
                nulls.push(n);
            }
        }
        i = e;
    }
    let mut out = String::with_capacity(sql.len() + 2 * nulls.len());
    let mut from = 0;
    for n in nulls {
        out.push_str(&sql[from..n]);
        out.push_str("(NULL)");
        from = n + 4;
    }
    out.push_str(&sql[from..]);
    out
}

#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Code,
    Quote(u8),
    LineComment,
    BlockComment,
}

/// MySQL's infix `a MOD b` (sqlparser knows only `%` and the function
/// `MOD(a, b)`): the word MOD in code, not followed by `(` nor part of a
/// qualified name, becomes `%`. MOD is a reserved word in MySQL, so it
/// names nothing else unquoted.
pub fn infix_mod(sql: &str) -> std::borrow::Cow<'_, str> {
    let b = sql.as_bytes();
    if !b.windows(3).any(|w| w.eq_ignore_ascii_case(b"mod")) {
        return std::borrow::Cow::Borrowed(sql);
    }
    let word = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c == b'$' || c >= 0x80;
    let mut at = Vec::new();
    visit_code(sql, |i, _| {
        if b.len() >= i + 3
            && b[i..i + 3].eq_ignore_ascii_case(b"mod")
            && (i == 0 || (!word(b[i - 1]) && b[i - 1] != b'.' && b[i - 1] != b'@'))
            && b.get(i + 3).is_none_or(|c| !word(*c) && *c != b'.')
        {
            let next = b[i + 3..].iter().find(|c| !c.is_ascii_whitespace());
            if next != Some(&b'(') || after_operand(&b[..i]) {
                at.push(i);
            }
        }
        true
    });
    if at.is_empty() {
        return std::borrow::Cow::Borrowed(sql);
    }
    let mut out = String::with_capacity(sql.len());
    let mut last = 0;
    for i in at {
        out.push_str(&sql[last..i]);
        out.push('%');
        last = i + 3;
    }
    out.push_str(&sql[last..]);
    std::borrow::Cow::Owned(out)
}

/// Whether `before` (code up to a word) ends with an operand — a number, a
/// name, a closing bracket or quote — so the word is an infix operator
/// (`j MOD (2)`), not a function name (`SELECT MOD(7, 3)`).
fn after_operand(before: &[u8]) -> bool {
    let end = before.len()
        - before
            .iter()
            .rev()
            .take_while(|c| c.is_ascii_whitespace())
            .count();
    let before = &before[..end];
    let Some(&last) = before.last() else {
        return false;
    };
    if matches!(last, b')' | b'\'' | b'"' | b'`') {
        return true;
    }
    if !(last.is_ascii_alphanumeric() || last == b'_') {
        return false;
    }
    let start = before
        .iter()
        .rposition(|c| !(c.is_ascii_alphanumeric() || *c == b'_' || *c == b'$' || *c == b'.'))
        .map_or(0, |p| p + 1);
    let word = String::from_utf8_lossy(&before[start..]).to_ascii_lowercase();
    const BEFORE_EXPR: &[&str] = &[
        "select",
        "where",
        "and",
        "or",
        "not",
        "xor",
        "on",
        "by",
        "when",
        "then",
        "else",
        "having",
        "set",
        "in",
        "is",
        "like",
        "between",
        "case",
        "distinct",
        "all",
        "any",
        "some",
        "exists",
        "values",
        "value",
        "limit",
        "offset",
        "interval",
        "div",
        "mod",
        "return",
        "using",
        "row",
        "regexp",
        "rlike",
        "sounds",
        "escape",
        "straight_join",
        "high_priority",
        "sql_no_cache",
    ];
    !BEFORE_EXPR.contains(&word.as_str())
}

/// Visit every byte of `sql` that is code — outside quotes (`'`, `"`,
/// backticks; backslash escapes and doubled quotes inside), `#` / `-- `
/// line comments and block comments — calling `f` with its offset until it
/// returns false. What prepared-statement placeholders and CREATE TABLE's
/// element list are found with.
pub fn visit_code(sql: &str, mut f: impl FnMut(usize, u8) -> bool) {
    let b = sql.as_bytes();
    let mut mode = Mode::Code;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        match mode {
            Mode::Code => match c {
                b'\'' | b'"' | b'`' => mode = Mode::Quote(c),
                b'#' => mode = Mode::LineComment,
                b'-' if b.get(i + 1) == Some(&b'-')
                    && b.get(i + 2).is_none_or(|n| n.is_ascii_whitespace()) =>
                {
                    mode = Mode::LineComment;
                    i += 1;
                }
                b'/' if b.get(i + 1) == Some(&b'*') => {
                    mode = Mode::BlockComment;
                    i += 1;
                }
                _ => {
                    if !f(i, c) {
                        return;
                    }
                }
            },
            Mode::Quote(q) => {
                if c == b'\\' && q != b'`' {
                    i += 1;
                } else if c == q {
                    if b.get(i + 1) == Some(&q) {
                        i += 1;
                    } else {
                        mode = Mode::Code;
                    }
                }
            }
            Mode::LineComment => {
                if c == b'\n' {
                    mode = Mode::Code;
                }
            }
            Mode::BlockComment => {
                if c == b'*' && b.get(i + 1) == Some(&b'/') {
                    mode = Mode::Code;
                    i += 1;
                }
            }
        }
        i += 1;
    }
}

/// The index definitions of a `CREATE [TEMPORARY] TABLE name (…)`: each
/// top-level element of the parenthesised list that starts with KEY,
/// INDEX, UNIQUE [KEY|INDEX] or FULLTEXT [KEY|INDEX] is parsed here (with
/// MatrixOne's options: USING hnsw, OP_TYPE, M, EF_*, WITH PARSER, ASYNC)
/// and cut out of the text. `None` when the statement is not such a
/// CREATE TABLE or has no index element (sqlparser handles it whole).
fn split_inline_indexes(sql: &str) -> SqlResult<Option<(String, Vec<IndexSpec>)>> {
    let words: Vec<&str> = sql.split_whitespace().take(3).collect();
    let is_table = words.len() >= 2
        && words[0].eq_ignore_ascii_case("create")
        && (words[1].eq_ignore_ascii_case("table")
            || (words[1].eq_ignore_ascii_case("temporary")
                && words
                    .get(2)
                    .is_some_and(|w| w.eq_ignore_ascii_case("table"))));
    if !is_table {
        return Ok(None);
    }
    // Top-level elements of the first parenthesised list, by byte ranges.
    let (mut depth, mut open) = (0usize, None::<usize>);
    let mut elems: Vec<(usize, usize)> = Vec::new();
    let mut start = 0;
    let mut close = None;
    visit_code(sql, |i, c| {
        match c {
            b'(' => {
                depth += 1;
                if depth == 1 && open.is_none() {
                    open = Some(i);
                    start = i + 1;
                }
            }
            b')' => {
                depth = depth.saturating_sub(1);
                if depth == 0 && open.is_some() {
                    elems.push((start, i));
                    close = Some(i);
                    return false;
                }
            }
            b',' if depth == 1 => {
                elems.push((start, i));
                start = i + 1;
            }
            _ => {}
        }
        true
    });
    let (Some(open), Some(close)) = (open, close) else {
        return Ok(None);
    };
    let mut kept: Vec<&str> = Vec::new();
    let mut indexes = Vec::new();
    for &(s, e) in &elems {
        let text = &sql[s..e];
        let first: Vec<String> = text
            .split(|c: char| c.is_whitespace() || c == '(' || c == '`')
            .filter(|w| !w.is_empty())
            .take(2)
            .map(|w| w.to_ascii_lowercase())
            .collect();
        let lead = first.first().map(String::as_str).unwrap_or("");
        let second = first.get(1).map(String::as_str).unwrap_or("");
        let is_index = matches!(lead, "key" | "index" | "fulltext")
            || (lead == "unique" && matches!(second, "key" | "index"));
        if !is_index {
            kept.push(text);
            continue;
        }
        let mut p = P {
            t: tokenize(text)?,
            i: 0,
            sql: text,
        };
        let unique = p.kw("unique");
        let fulltext = !unique && p.kw("fulltext");
        if !(p.kw("key") || p.kw("index") || fulltext) {
            return Err(p.err("expected KEY or INDEX"));
        }
        let mut spec = IndexSpec {
            unique,
            fulltext,
            ..Default::default()
        };
        if !p.peek_kw("using") && !matches!(p.t.get(p.i), Some(Tok::Punct('('))) {
            spec.name = p.ident()?;
        }
        if p.kw("using") {
            spec.using = Some(p.ident()?);
        }
        p.column_list(&mut spec)?;
        p.index_options(&mut spec)?;
        indexes.push(spec);
    }
    if indexes.is_empty() {
        return Ok(None);
    }
    if kept.is_empty() {
        return Err(SqlError::new(1113, "A table must have at least 1 column"));
    }
    let rest = format!("{}{}{}", &sql[..=open], kept.join(","), &sql[close..]);
    Ok(Some((rest, indexes)))
}

fn parse_ast(sql: &str) -> SqlResult<Stmt> {
    let mut stmts = Parser::new(&MySqlDialect {})
        .with_recursion_limit(PARSER_RECURSION_LIMIT)
        .try_with_sql(sql)
        .and_then(|mut p| p.parse_statements())
        .map_err(parser_error)?;
    if stmts.len() != 1 {
        return Err(SqlError::parse("expected exactly one statement"));
    }
    Ok(Stmt::Ast(Ast::Owned(Box::new(stmts.remove(0)))))
}

fn parse_custom(p: &mut P) -> SqlResult<Option<Stmt>> {
    if let Some(what) = stored_program(&p.t) {
        return Err(SqlError::unsupported(what));
    }
    if p.kw("prepare") {
        let name = p.ident()?;
        p.expect_kw("from")?;
        let source = match p.t.get(p.i).cloned() {
            Some(Tok::Str(s)) => PrepareSource::Text(s),
            Some(Tok::Word(w)) if w.starts_with('@') && !w.starts_with("@@") => {
                PrepareSource::Var(w[1..].to_ascii_lowercase())
            }
            _ => return Err(p.err("expected a string or a user variable")),
        };
        p.i += 1;
        p.end()?;
        return Ok(Some(Stmt::Prepare { name, source }));
    }
    if p.kw("execute") {
        let name = p.ident()?;
        let mut using = Vec::new();
        if p.kw("using") {
            loop {
                match p.t.get(p.i).cloned() {
                    Some(Tok::Word(w)) if w.starts_with('@') && !w.starts_with("@@") => {
                        p.i += 1;
                        using.push(w[1..].to_ascii_lowercase());
                    }
                    _ => return Err(p.err("expected a user variable")),
                }
                if !p.punct(',') {
                    break;
                }
            }
        }
        p.end()?;
        return Ok(Some(Stmt::Execute { name, using }));
    }
    if p.peek_kw("lock")
        && matches!(p.t.get(p.i + 1), Some(Tok::Word(w)) if w.eq_ignore_ascii_case("tables") || w.eq_ignore_ascii_case("table"))
    {
        use crate::sql::table_locks::Mode;
        p.i += 2;
        let mut locks = Vec::new();
        loop {
            let name = p.name()?;
            if !(p.peek_kw("read") || p.peek_kw("write") || p.peek_kw("low_priority")) {
                if p.done() || matches!(p.t.get(p.i), Some(Tok::Punct(_))) {
                    return Err(p.err("expected READ or WRITE"));
                }
                return Err(SqlError::unsupported("LOCK TABLES with a table alias"));
            }
            let mode = if p.kw("read") {
                p.kw("local");
                Mode::Read
            } else {
                p.kw("low_priority");
                p.expect_kw("write")?;
                Mode::Write
            };
            locks.push((name, mode));
            if !p.punct(',') {
                break;
            }
        }
        p.end()?;
        return Ok(Some(Stmt::LockTables(locks)));
    }
    if p.kw("truncate") {
        p.kw("table");
        let table = p.name()?;
        p.end()?;
        return Ok(Some(Stmt::Truncate { table }));
    }
    if p.kw("unlock") {
        if !(p.kw("tables") || p.kw("table")) {
            return Err(p.err("expected TABLES"));
        }
        p.end()?;
        return Ok(Some(Stmt::UnlockTables));
    }
    if p.kw("kill") {
        let connection = !p.kw("query");
        if connection {
            p.kw("connection");
        }
        let id = match p.t.get(p.i).cloned() {
            Some(Tok::Num(n)) => n.parse().map_err(|_| p.err("expected a thread id"))?,
            _ => return Err(p.err("expected a thread id")),
        };
        p.i += 1;
        p.end()?;
        return Ok(Some(Stmt::Kill { id, connection }));
    }
    if p.peek_kw("deallocate")
        || (p.peek_kw("drop")
            && matches!(p.t.get(p.i + 1), Some(Tok::Word(w)) if w.eq_ignore_ascii_case("prepare")))
    {
        p.i += 1;
        p.expect_kw("prepare")?;
        let name = p.ident()?;
        p.end()?;
        return Ok(Some(Stmt::Deallocate { name }));
    }
    if p.kw("create") {
        let unique = p.kw("unique");
        let fulltext = !unique && p.kw("fulltext");
        if p.kw("index") || ((unique || fulltext) && p.kw("key")) {
            let mut spec = IndexSpec {
                unique,
                fulltext,
                ..Default::default()
            };
            spec.name = p.ident()?;
            if p.kw("using") {
                spec.using = Some(p.ident()?);
            }
            p.expect_kw("on")?;
            spec.table = p.name()?;
            p.column_list(&mut spec)?;
            p.index_options(&mut spec)?;
            return Ok(Some(Stmt::CreateIndex(spec)));
        }
        if unique || fulltext {
            return Err(p.err("expected INDEX"));
        }
        if p.kw("database") || p.kw("schema") {
            let if_not_exists = if p.kw("if") {
                p.expect_kw("not")?;
                p.expect_kw("exists")?;
                true
            } else {
                false
            };
            let name = p.ident()?;
            // `[DEFAULT] {CHARACTER SET | CHARSET} [=] cs`, `[DEFAULT]
            // COLLATE [=] c`: only what Tributary keeps (UTF-8, code-point
            // order) is accepted.
            while !p.done() {
                p.kw("default");
                if p.kw("charset") || (p.kw("character") && p.expect_kw("set").is_ok()) {
                    p.punct('=');
                    crate::sql::vars::require_stored_charset(&p.string_or_word()?)?;
                } else if p.kw("collate") {
                    p.punct('=');
                    crate::sql::vars::require_collation(&p.string_or_word()?)?;
                } else if p.kw("encryption") {
                    p.punct('=');
                    let v = p.string_or_word()?;
                    if !v.eq_ignore_ascii_case("n") {
                        return Err(SqlError::unsupported("ENCRYPTION = 'Y'"));
                    }
                } else {
                    return Err(p.err("unexpected database option"));
                }
            }
            return Ok(Some(Stmt::CreateDatabase {
                name,
                if_not_exists,
            }));
        }
        if p.kw("user") {
            let if_not_exists = p.if_exists(true)?;
            let users = p.accounts_with_passwords(false)?;
            p.end()?;
            return Ok(Some(Stmt::CreateUser {
                if_not_exists,
                users,
            }));
        }
        return Ok(None);
    }
    if p.kw("drop") {
        if p.kw("database") || p.kw("schema") {
            let if_exists = p.kw("if") && {
                p.expect_kw("exists")?;
                true
            };
            let name = p.ident()?;
            p.end()?;
            return Ok(Some(Stmt::DropDatabase { name, if_exists }));
        }
        if p.kw("table") {
            let if_exists = p.kw("if") && {
                p.expect_kw("exists")?;
                true
            };
            let mut names = vec![p.name()?];
            while p.punct(',') {
                names.push(p.name()?);
            }
            p.kw("cascade");
            p.kw("restrict");
            p.end()?;
            return Ok(Some(Stmt::DropTable { names, if_exists }));
        }
        if p.kw("index") {
            let if_exists = p.if_exists(false)?;
            let name = p.ident()?;
            p.expect_kw("on")?;
            let table = p.name()?;
            p.end()?;
            return Ok(Some(Stmt::DropIndex {
                name,
                table,
                if_exists,
            }));
        }
        if p.kw("user") {
            let if_exists = p.if_exists(false)?;
            let users = p.accounts()?;
            p.end()?;
            return Ok(Some(Stmt::DropUser { if_exists, users }));
        }
        return Ok(None);
    }
    // ANALYZE / OPTIMIZE [NO_WRITE_TO_BINLOG | LOCAL] TABLE t1[, t2 …];
    // CHECK TABLE t1[, t2 …] [FOR UPGRADE | QUICK | FAST | MEDIUM |
    // EXTENDED | CHANGED]… (the options choose how much MySQL reads: the
    // checker here always compares every index with its table).
    let op = if p.peek_kw("analyze") {
        Some(MaintenanceOp::Analyze)
    } else if p.peek_kw("optimize") {
        Some(MaintenanceOp::Optimize)
    } else if p.peek_kw("check")
        && matches!(p.t.get(p.i + 1), Some(Tok::Word(w)) if w.eq_ignore_ascii_case("table"))
    {
        Some(MaintenanceOp::Check)
    } else {
        None
    };
    if let Some(op) = op {
        p.i += 1;
        if op != MaintenanceOp::Check && !p.kw("no_write_to_binlog") {
            p.kw("local");
        }
        p.expect_kw("table")?;
        let mut tables = vec![p.name()?];
        while p.punct(',') {
            tables.push(p.name()?);
        }
        if op == MaintenanceOp::Check {
            loop {
                if p.kw("for") {
                    p.expect_kw("upgrade")?;
                } else if !["quick", "fast", "medium", "extended", "changed"]
                    .iter()
                    .any(|o| p.kw(o))
                {
                    break;
                }
            }
        }
        p.end()?;
        return Ok(Some(Stmt::Maintenance { op, tables }));
    }
    if p.kw("check") {
        p.expect_kw("index")?;
        let name = p.ident()?;
        p.expect_kw("on")?;
        let table = p.name()?;
        p.end()?;
        return Ok(Some(Stmt::CheckIndex { name, table }));
    }
    if p.kw("admin") {
        p.expect_kw("check")?;
        p.expect_kw("index")?;
        let table = p.name()?;
        let name = p.ident()?;
        p.end()?;
        return Ok(Some(Stmt::CheckIndex { name, table }));
    }
    if p.kw("alter") {
        if p.kw("user") {
            let if_exists = p.if_exists(false)?;
            let users = p.accounts_with_passwords(true)?;
            p.end()?;
            return Ok(Some(Stmt::AlterUser { if_exists, users }));
        }
        p.expect_kw("table")?;
        let table = p.name()?;
        if p.several_actions() {
            // `ADD INDEX i (c), ADD COLUMN …`: the general parser's ALTER
            // TABLE (index options such as USING hnsw are single-action).
            return Ok(None);
        }
        if p.peek_kw("alter")
            && matches!(p.t.get(p.i + 1), Some(Tok::Word(w)) if w.eq_ignore_ascii_case("reindex"))
        {
            p.i += 2;
            let name = p.ident()?;
            p.end()?;
            return Ok(Some(Stmt::Reindex { name, table }));
        }
        if p.kw("disable") || p.kw("enable") {
            p.expect_kw("keys")?;
            p.end()?;
            return Ok(Some(Stmt::AlterKeys { table }));
        }
        if p.kw("add") {
            let unique = p.kw("unique");
            let fulltext = !unique && p.kw("fulltext");
            if !(p.kw("index") || p.kw("key")) {
                // ADD COLUMN, ADD UNIQUE (…), ADD CONSTRAINT …: the
                // general parser's ALTER TABLE (see `crate::sql::alter`).
                return Ok(None);
            }
            let mut spec = IndexSpec {
                unique,
                fulltext,
                table,
                ..Default::default()
            };
            spec.name = p.ident()?;
            if p.kw("using") {
                spec.using = Some(p.ident()?);
            }
            p.column_list(&mut spec)?;
            p.index_options(&mut spec)?;
            return Ok(Some(Stmt::CreateIndex(spec)));
        }
        if p.kw("drop") {
            if !(p.kw("index") || p.kw("key")) {
                return Ok(None);
            }
            let if_exists = p.if_exists(false)?;
            let name = p.ident()?;
            p.end()?;
            return Ok(Some(Stmt::DropIndex {
                name,
                table,
                if_exists,
            }));
        }
        return Ok(None);
    }
    if p.kw("show") {
        let full = p.kw("full");
        if p.kw("databases") || p.kw("schemas") {
            return p.show_tail(Stmt::ShowDatabases, true).map(Some);
        }
        if p.kw("tables") {
            let db = if p.kw("from") || p.kw("in") {
                Some(p.ident()?)
            } else {
                None
            };
            return p.show_tail(Stmt::ShowTables { db, full }, true).map(Some);
        }
        if p.kw("columns") || p.kw("fields") {
            if !(p.kw("from") || p.kw("in")) {
                return Err(p.err("expected FROM"));
            }
            let mut table = p.name()?;
            if p.kw("from") || p.kw("in") {
                table.db = Some(p.ident()?);
            }
            return p.show_tail(Stmt::Describe { table, full }, true).map(Some);
        }
        if p.kw("index") || p.kw("indexes") || p.kw("keys") {
            if !(p.kw("from") || p.kw("in")) {
                return Err(p.err("expected FROM"));
            }
            let mut table = p.name()?;
            if p.kw("from") || p.kw("in") {
                table.db = Some(p.ident()?);
            }
            return p.show_tail(Stmt::ShowIndex { table }, false).map(Some);
        }
        if p.kw("create") {
            for (kind, what) in [
                ("procedure", "SHOW CREATE PROCEDURE"),
                ("function", "SHOW CREATE FUNCTION"),
                ("trigger", "SHOW CREATE TRIGGER"),
                ("event", "SHOW CREATE EVENT"),
            ] {
                if p.peek_kw(kind) {
                    return Err(SqlError::unsupported(what));
                }
            }
            if p.kw("database") || p.kw("schema") {
                let if_not_exists = p.if_exists(true)?;
                let name = p.ident()?;
                p.end()?;
                return Ok(Some(Stmt::ShowCreateDatabase {
                    name,
                    if_not_exists,
                }));
            }
            if p.kw("view") {
                let table = p.name()?;
                p.end()?;
                return Ok(Some(Stmt::ShowCreateView { table }));
            }
            p.expect_kw("table")?;
            let table = p.name()?;
            p.end()?;
            return Ok(Some(Stmt::ShowCreateTable { table }));
        }
        if p.kw("iscp") {
            p.expect_kw("status")?;
            p.end()?;
            return Ok(Some(Stmt::ShowIscpStatus));
        }
        if p.kw("warnings") {
            p.end()?;
            return Ok(Some(Stmt::ShowWarnings));
        }
        if p.kw("grants") {
            let user = if p.kw("for") {
                Some(p.account()?)
            } else {
                None
            };
            if p.kw("using") {
                return Err(SqlError::unsupported("SHOW GRANTS … USING (roles)"));
            }
            p.end()?;
            return Ok(Some(Stmt::ShowGrants { user }));
        }
        if p.kw("processlist") {
            p.end()?;
            return Ok(Some(Stmt::ShowProcesslist { full }));
        }
        let session = p.kw("session");
        let global = !session && p.kw("global");
        if p.kw("status") {
            let like = if p.kw("like") {
                Some(p.string_or_word()?)
            } else {
                None
            };
            return p.show_tail(Stmt::ShowStatus { like }, false).map(Some);
        }
        let info = if p.kw("engines") {
            Some("ENGINES")
        } else if p.kw("collation") {
            Some("COLLATIONS")
        } else if p.kw("charset") || (p.kw("character") && p.kw("set")) {
            Some("CHARACTER_SETS")
        } else {
            None
        };
        if let Some(table) = info {
            let like = if table != "ENGINES" && p.kw("like") {
                Some(p.string_or_word()?)
            } else {
                None
            };
            return p.show_tail(Stmt::ShowInfo { table, like }, false).map(Some);
        }
        // MySQL SHOW statements not implemented yet: refused by name.
        for (words, what) in [
            (&["table", "status"][..], "SHOW TABLE STATUS"),
            (&["plugins"][..], "SHOW PLUGINS"),
            (&["triggers"][..], "SHOW TRIGGERS"),
            (&["events"][..], "SHOW EVENTS"),
            (&["open", "tables"][..], "SHOW OPEN TABLES"),
            (&["engine"][..], "SHOW ENGINE"),
            (&["profiles"][..], "SHOW PROFILES"),
            (&["procedure", "status"][..], "SHOW PROCEDURE STATUS"),
            (&["function", "status"][..], "SHOW FUNCTION STATUS"),
        ] {
            let at = p.i;
            if words.iter().all(|w| p.kw(w)) {
                return Err(SqlError::unsupported(what));
            }
            p.i = at;
        }
        if p.kw("variables") {
            let like = if p.kw("like") {
                Some(p.string_or_word()?)
            } else {
                None
            };
            return p
                .show_tail(Stmt::ShowVariables { like, global }, false)
                .map(Some);
        }
        return Err(p.err("unsupported SHOW statement"));
    }
    if p.kw("describe") || p.kw("desc") {
        let table = p.name()?;
        // `DESCRIBE t col`: the columns whose name matches (a LIKE
        // pattern, as MySQL).
        if !p.done() {
            let pattern = p.string_or_word()?;
            p.end()?;
            let stmt = Stmt::Describe { table, full: false };
            return Ok(Some(Stmt::ShowFiltered(
                Box::new(stmt),
                ShowFilter::Like(pattern),
            )));
        }
        return Ok(Some(Stmt::Describe { table, full: false }));
    }
    if p.kw("explain") {
        if matches!(p.t.get(p.i), Some(Tok::Word(_)) | Some(Tok::QIdent(_)))
            && !["select", "insert", "update", "delete", "with"]
                .iter()
                .any(|k| p.peek_kw(k))
        {
            let table = p.name()?;
            p.end()?;
            return Ok(Some(Stmt::Describe { table, full: false }));
        }
        return Err(p.err("unsupported EXPLAIN"));
    }
    if p.kw("begin") {
        p.kw("work");
        p.end()?;
        return Ok(Some(Stmt::Begin {
            read_only: None,
            consistent: false,
        }));
    }
    if p.kw("start") {
        p.expect_kw("transaction")?;
        let mut read_only = None;
        let mut consistent = false;
        loop {
            if p.kw("with") {
                p.expect_kw("consistent")?;
                p.expect_kw("snapshot")?;
                consistent = true;
            } else if let Some(ro) = p.access_mode()? {
                read_only = Some(ro);
            } else {
                break;
            }
            if !p.punct(',') {
                break;
            }
        }
        p.end()?;
        return Ok(Some(Stmt::Begin {
            read_only,
            consistent,
        }));
    }
    if p.kw("commit") {
        p.kw("work");
        let chain = p.completion()?;
        return Ok(Some(Stmt::Commit { chain }));
    }
    if p.kw("rollback") {
        p.kw("work");
        if p.kw("to") {
            p.kw("savepoint");
            let name = p.ident()?;
            p.end()?;
            return Ok(Some(Stmt::Savepoint(SavepointOp::RollbackTo, name)));
        }
        let chain = p.completion()?;
        return Ok(Some(Stmt::Rollback { chain }));
    }
    if p.kw("savepoint") {
        let name = p.ident()?;
        p.end()?;
        return Ok(Some(Stmt::Savepoint(SavepointOp::Set, name)));
    }
    if p.kw("release") {
        p.expect_kw("savepoint")?;
        let name = p.ident()?;
        p.end()?;
        return Ok(Some(Stmt::Savepoint(SavepointOp::Release, name)));
    }
    if p.kw("use") {
        let db = p.ident()?;
        p.end()?;
        return Ok(Some(Stmt::Use { db }));
    }
    if p.kw("set") {
        return parse_set(p).map(Some);
    }
    if p.kw("grant") {
        let (privs, on, users) = p.grant_body("to")?;
        return Ok(Some(Stmt::Grant { privs, on, users }));
    }
    if p.kw("revoke") {
        let (privs, on, users) = p.grant_body("from")?;
        return Ok(Some(Stmt::Revoke { privs, on, users }));
    }
    Ok(None)
}

/// `SET …` after the keyword.
fn parse_set(p: &mut P) -> SqlResult<Stmt> {
    if p.kw("names")
        || (p.kw("character") && {
            p.expect_kw("set")?;
            true
        })
        || p.kw("charset")
    {
        let charset = names_clause(p)?;
        if !p.done() {
            // `SET NAMES cs, x = …`: the same as a list with NAMES in it.
            if !p.punct(',') {
                return Err(p.err("unexpected input"));
            }
            let mut out = names_assignments(&charset);
            out.extend(set_assignments(p)?);
            return Ok(Stmt::Set(out));
        }
        return Ok(Stmt::SetNames { charset });
    }
    // SET [GLOBAL|SESSION] TRANSACTION {ISOLATION LEVEL … | READ WRITE | READ ONLY}, …
    let save = p.i;
    let global = p.kw("global");
    let session = !global && (p.kw("session") || p.kw("local"));
    if p.kw("transaction") {
        let mut isolation = None;
        let mut read_only = None;
        loop {
            if p.kw("isolation") {
                p.expect_kw("level")?;
                let mut words = Vec::new();
                while !p.done() && !p.peek_punct(',') {
                    words.push(p.ident()?);
                }
                isolation = Some(words.join(" "));
            } else if let Some(ro) = p.access_mode()? {
                read_only = Some(ro);
            } else {
                return Err(p.err("expected ISOLATION LEVEL, READ WRITE or READ ONLY"));
            }
            if !p.punct(',') {
                break;
            }
        }
        p.end()?;
        let scope = match (global, session) {
            (true, _) => TxnScope::Global,
            (_, true) => TxnScope::Session,
            _ => TxnScope::Next,
        };
        return Ok(Stmt::SetTransaction {
            scope,
            isolation,
            read_only,
        });
    }
    p.i = save;
    Ok(Stmt::Set(set_assignments(p)?))
}

/// `cs [COLLATE c]` after `SET NAMES`.
fn names_clause(p: &mut P) -> SqlResult<String> {
    let charset = p.string_or_word()?;
    if p.kw("collate") {
        // mysql-connector sends `SET NAMES 'utf8mb4' COLLATE
        // 'utf8mb4_0900_ai_ci'` at connect: a UTF-8 collation is
        // accepted and the connection collation stays utf8mb4_bin (as
        // @@collation_connection says); columns compare by their own
        // collation in MySQL too. Another character set's is refused.
        let c = p.string_or_word()?.to_ascii_lowercase();
        if !["utf8mb4_", "utf8_", "utf8mb3_"]
            .iter()
            .any(|x| c.starts_with(x))
        {
            crate::sql::vars::require_collation(&c)?;
        }
    }
    Ok(charset)
}

/// `NAMES cs` inside an assignment list (sqlx sends `SET sql_mode = …,
/// time_zone = …, NAMES utf8mb4 COLLATE …`): the three connection
/// character sets `SET NAMES` sets.
fn names_assignments(charset: &str) -> Vec<(SetTarget, SetValue)> {
    let cs = if charset.eq_ignore_ascii_case("default") {
        "utf8mb4"
    } else {
        charset
    };
    [
        "character_set_client",
        "character_set_connection",
        "character_set_results",
    ]
    .into_iter()
    .map(|name| {
        (
            SetTarget::System {
                name: name.to_string(),
                global: false,
            },
            SetValue::Literal(cs.to_string()),
        )
    })
    .collect()
}

/// `SET` assignments `target = value, …` (NAMES among them) to the end.
fn set_assignments(p: &mut P) -> SqlResult<Vec<(SetTarget, SetValue)>> {
    let mut out = Vec::new();
    loop {
        if p.kw("names") {
            let charset = names_clause(p)?;
            out.extend(names_assignments(&charset));
            if !p.punct(',') {
                break;
            }
            continue;
        }
        let mut global = p.kw("global");
        if !global {
            let _ = p.kw("session") || p.kw("local");
        }
        let word = p.ident()?;
        let target = if let Some(rest) = word.strip_prefix("@@") {
            let mut name = rest.to_ascii_lowercase();
            if matches!(name.as_str(), "global" | "session" | "local") && p.punct('.') {
                global |= name == "global";
                name = p.ident()?.to_ascii_lowercase();
            }
            SetTarget::System { name, global }
        } else if let Some(rest) = word.strip_prefix('@') {
            SetTarget::User(rest.to_ascii_lowercase())
        } else {
            SetTarget::System {
                name: word.to_ascii_lowercase(),
                global,
            }
        };
        if !(p.punct('=') || (p.punct(':') && p.punct('='))) {
            return Err(p.err("expected '='"));
        }
        let value_at = p.i;
        let value = match p.t.get(p.i).cloned() {
            Some(Tok::Punct('-')) => {
                p.i += 1;
                match p.t.get(p.i).cloned() {
                    Some(Tok::Num(n)) => {
                        p.i += 1;
                        SetValue::Literal(format!("-{n}"))
                    }
                    // `- @a`, `-(…)`: an expression.
                    _ => SetValue::Expr(String::new()),
                }
            }
            Some(Tok::Word(w)) if w.starts_with("@@") => {
                p.i += 1;
                let mut name = w[2..].to_ascii_lowercase();
                if matches!(name.as_str(), "global" | "session" | "local") && p.punct('.') {
                    name = p.ident()?.to_ascii_lowercase();
                }
                SetValue::System(name)
            }
            Some(Tok::Word(w)) if w.starts_with('@') => {
                p.i += 1;
                SetValue::User(w[1..].to_ascii_lowercase())
            }
            Some(Tok::Word(w)) if w.eq_ignore_ascii_case("null") => {
                p.i += 1;
                SetValue::Null
            }
            Some(Tok::Str(_) | Tok::Word(_) | Tok::QIdent(_) | Tok::Num(_)) => {
                SetValue::Literal(p.string_or_word()?)
            }
            // `(SELECT …)`, `(1 + 2)`: an expression.
            _ => SetValue::Expr(String::new()),
        };
        // Anything more before the next assignment: the value is an
        // expression (`@a + 1`, `(SELECT …)`, `CONCAT(…)`), kept as text
        // and evaluated as a SELECT.
        let simple = !matches!(value, SetValue::Expr(_));
        let value = if simple && (p.done() || p.peek_punct(',')) {
            value
        } else {
            p.i = value_at;
            SetValue::Expr(set_expression(p)?)
        };
        out.push((target, value));
        if !p.punct(',') {
            break;
        }
    }
    p.end()?;
    Ok(out)
}

/// The text of a SET value expression starting at token `p.i`, up to the
/// next comma outside parentheses or the end; `p.i` moves past it.
fn set_expression(p: &mut P) -> SqlResult<String> {
    let mut spans = Vec::new();
    let toks = tokenize_with(p.sql, Some(&mut spans))?;
    if toks != p.t {
        // The tokens were not made from this text (cannot happen: every
        // P is built from its own text); refuse rather than guess.
        return Err(SqlError::internal("SET expression text out of step"));
    }
    let start = p.i;
    let mut depth = 0usize;
    while let Some(t) = p.t.get(p.i) {
        match t {
            Tok::Punct('(') => depth += 1,
            Tok::Punct(')') => depth = depth.saturating_sub(1),
            Tok::Punct(',') if depth == 0 => break,
            _ => {}
        }
        p.i += 1;
    }
    match (spans.get(start), spans.get(p.i.wrapping_sub(1))) {
        (Some(a), Some(b)) if p.i > start => Ok(p.sql[a.start..b.end].to_string()),
        _ => Err(p.err("expected a value")),
    }
}

#[cfg(test)]
mod tests {
    /// `FROM FIRST` goes only between a `)` and `OVER` in code, never in
    /// a string, a comment or another place of the statement.
    #[test]
    fn from_first_is_dropped_only_before_over() {
        use super::without_from_first;
        assert_eq!(
            without_from_first("SELECT NTH_VALUE(x, 2) from  First\nOVER w FROM t").as_deref(),
            Some("SELECT NTH_VALUE(x, 2) \nOVER w FROM t")
        );
        assert_eq!(
            without_from_first(
                "SELECT NTH_VALUE(x,1) FROM FIRST OVER (), NTH_VALUE(y,1)FROM FIRST OVER ()"
            )
            .as_deref(),
            Some("SELECT NTH_VALUE(x,1)  OVER (), NTH_VALUE(y,1) OVER ()")
        );
        for sql in [
            "SELECT 'x) FROM FIRST OVER' FROM t",
            "SELECT x /* ) FROM FIRST OVER */ FROM t",
            "SELECT (x) FROM first_over",
            "SELECT (x) FROM FIRST",
            "SELECT NTH_VALUE(x, 1) FROM LAST OVER ()",
        ] {
            assert_eq!(without_from_first(sql), None, "{sql}");
        }
    }

    #[test]
    fn infix_mod_becomes_percent_only_where_it_is_the_operator() {
        use super::infix_mod;
        let cases = [
            ("SELECT 7 MOD 3", "SELECT 7 % 3"),
            (
                "select a mod b, MOD(a, b), mod (a, b) from t",
                "select a % b, MOD(a, b), mod (a, b) from t",
            ),
            (
                "SELECT 'x mod y', `mod`, t.mod, @mod, model, modal FROM t",
                "SELECT 'x mod y', `mod`, t.mod, @mod, model, modal FROM t",
            ),
            ("SELECT 5 Mod-2 -- mod 3", "SELECT 5 %-2 -- mod 3"),
            (
                "SELECT j MOD (10 DIV 10), INSTR('0', 'x') MOD (2), (1) mod(2)",
                "SELECT j % (10 DIV 10), INSTR('0', 'x') % (2), (1) %(2)",
            ),
            (
                "SELECT a FROM t WHERE MOD(a, 2) = 0 AND mod(b, 3) OR NOT MOD(c, 4)",
                "SELECT a FROM t WHERE MOD(a, 2) = 0 AND mod(b, 3) OR NOT MOD(c, 4)",
            ),
        ];
        for (sql, want) in cases {
            assert_eq!(infix_mod(sql), want, "{sql}");
        }
    }

    /// Index definitions inside CREATE TABLE are found past commas and
    /// parentheses in quotes and comments.
    #[test]
    fn max_execution_time_hint_only_on_a_top_level_select() {
        use super::max_execution_time_hint as h;
        assert_eq!(h("SELECT /*+ MAX_EXECUTION_TIME(150) */ 1"), Some(150));
        assert_eq!(
            h("  select /*+ BKA(t) max_execution_time( 7 ) */ * FROM t"),
            Some(7)
        );
        assert_eq!(h("SELECT 1 /*+ MAX_EXECUTION_TIME(150) */"), None);
        assert_eq!(h("SELECT /* MAX_EXECUTION_TIME(150) */ 1"), None);
        assert_eq!(h("UPDATE /*+ MAX_EXECUTION_TIME(150) */ t SET a = 1"), None);
        assert_eq!(h("SELECT /*+ MAX_EXECUTION_TIME(x) */ 1"), None);
        assert_eq!(h("SELECT /*+ MAX_EXECUTION_TIME(5"), None);
        assert_eq!(h("SELé"), None);
    }

    #[test]
    fn inline_indexes_skip_quotes_and_comments() {
        let s = parse(
            "CREATE TABLE cm (id INT PRIMARY KEY, /* a, (b */ v VECF32(2), -- c, (\n \
             note VARCHAR(9) DEFAULT 'x, (y', KEY hv USING hnsw (v) OP_TYPE 'vector_l2_ops', \
             FULLTEXT ft (note) ASYNC)",
        )
        .unwrap();
        let Stmt::CreateTable(_, specs) = s else {
            panic!("{s:?}");
        };
        let names: Vec<&str> = specs.iter().map(|x| x.name.as_str()).collect();
        assert_eq!(names, ["hv", "ft"]);
        assert!(specs[1].fulltext && specs[1].is_async);
    }

    use super::*;

    #[test]
    fn set_lists_and_variables() {
        let Stmt::Set(v) = parse(
            "SET @OLD_UNIQUE_CHECKS=@@UNIQUE_CHECKS, UNIQUE_CHECKS=0, @@session.sql_mode = '', GLOBAL x = -1, @a = NULL",
        )
        .unwrap() else {
            panic!("not a SET")
        };
        assert_eq!(
            v,
            vec![
                (
                    SetTarget::User("old_unique_checks".into()),
                    SetValue::System("unique_checks".into())
                ),
                (
                    SetTarget::System {
                        name: "unique_checks".into(),
                        global: false
                    },
                    SetValue::Literal("0".into())
                ),
                (
                    SetTarget::System {
                        name: "sql_mode".into(),
                        global: false
                    },
                    SetValue::Literal(String::new())
                ),
                (
                    SetTarget::System {
                        name: "x".into(),
                        global: true
                    },
                    SetValue::Literal("-1".into())
                ),
                (SetTarget::User("a".into()), SetValue::Null),
            ]
        );
        assert!(matches!(
            parse("SET NAMES utf8mb4 COLLATE utf8mb4_bin").unwrap(),
            Stmt::SetNames { .. }
        ));
        // An expression is kept whole (to be evaluated), up to the next
        // top-level comma; never truncated to its first token.
        let Stmt::Set(v) = parse("SET a = 1 + 1, @b = (SELECT f(1, 2)) * -x, @c = - @d").unwrap()
        else {
            panic!("not a SET")
        };
        let values: Vec<&SetValue> = v.iter().map(|(_, v)| v).collect();
        assert_eq!(
            values,
            [
                &SetValue::Expr("1 + 1".into()),
                &SetValue::Expr("(SELECT f(1, 2)) * -x".into()),
                &SetValue::Expr("- @d".into()),
            ]
        );
        assert!(matches!(
            parse("START TRANSACTION READ ONLY").unwrap(),
            Stmt::Begin {
                read_only: Some(true),
                consistent: false
            }
        ));
        assert!(parse("START TRANSACTION bogus").is_err());
    }

    #[test]
    fn version_id_is_the_server_version() {
        let v: Vec<u32> = crate::SERVER_VERSION
            .split('-')
            .next()
            .unwrap()
            .split('.')
            .map(|x| x.parse().unwrap())
            .collect();
        assert_eq!(VERSION_ID, v[0] * 10_000 + v[1] * 100 + v[2]);
    }

    #[test]
    fn executable_comments_run_by_version() {
        let e = |s: &str| expand_versioned_comments(s).into_owned();
        assert_eq!(
            e("/*!40100 SET @@SQL_MODE='' */").trim(),
            "SET @@SQL_MODE=''"
        );
        assert_eq!(e("/*! SET a=1 */").trim(), "SET a=1");
        assert_eq!(
            e("SELECT /*!40001 SQL_NO_CACHE */ * FROM t"),
            "SELECT   SQL_NO_CACHE   * FROM t"
        );
        assert_eq!(e("/*!99999 DROP TABLE t */SELECT 1").trim(), "SELECT 1");
        assert_eq!(
            e("/*M!100100 SET x=1 */SELECT 1"),
            "/*M!100100 SET x=1 */SELECT 1"
        );
        assert_eq!(e("SELECT '/*!40100 x */'"), "SELECT '/*!40100 x */'");
        assert_eq!(e("SELECT 1 /* plain */"), "SELECT 1 /* plain */");
        assert!(matches!(
            parse("/*!40101 SET NAMES utf8mb4 */").unwrap(),
            Stmt::SetNames { .. }
        ));
        assert!(
            parse("/*!99999 SELECT 1 */").is_err(),
            "empty after a skipped comment"
        );
    }

    #[test]
    fn matrixone_index_syntax() {
        let s = parse("CREATE INDEX idx01 USING HNSW ON t(v) OP_TYPE \"vector_l2_ops\" M 16 EF_CONSTRUCTION 128 EF_SEARCH 64 ASYNC").unwrap();
        let Stmt::CreateIndex(spec) = s else { panic!() };
        assert_eq!(spec.name, "idx01");
        assert_eq!(spec.using.as_deref(), Some("hnsw"));
        assert_eq!(spec.op_type.as_deref(), Some("vector_l2_ops"));
        assert_eq!(
            (spec.m, spec.ef_construction, spec.ef_search),
            (Some(16), Some(128), Some(64))
        );
        assert!(spec.is_async);
        let s = parse("create fulltext index ft on db1.t(title, body) with parser ngram async")
            .unwrap();
        let Stmt::CreateIndex(spec) = s else { panic!() };
        assert!(spec.fulltext && spec.is_async);
        assert_eq!(spec.table.db.as_deref(), Some("db1"));
        assert_eq!(spec.columns, vec!["title", "body"]);
        assert_eq!(spec.parser.as_deref(), Some("ngram"));
        let s = parse("ALTER TABLE t DROP INDEX idx01").unwrap();
        assert!(matches!(s, Stmt::DropIndex { .. }));
        assert!(parse("CREATE INDEX i ON t(v) BOGUS 3").is_err());
        assert!(matches!(
            parse("SHOW ISCP STATUS").unwrap(),
            Stmt::ShowIscpStatus
        ));
    }

    #[test]
    fn account_statements() {
        use crate::catalog::users::privs;
        let acct = |n: &str, h: &str| Account {
            name: n.into(),
            host: h.into(),
        };
        let Stmt::CreateUser {
            if_not_exists,
            users,
        } = parse("CREATE USER IF NOT EXISTS 'Bob'@'localhost' IDENTIFIED BY 'pw'").unwrap()
        else {
            panic!()
        };
        assert!(if_not_exists);
        assert_eq!(
            users,
            vec![(acct("Bob", "localhost"), Password("pw".into()))]
        );
        assert!(!format!("{users:?}").contains("pw\""));
        for sql in [
            "DROP USER u",
            "DROP USER 'u'@'%'",
            "DROP USER u@'%'",
            "DROP USER `u`@`%`",
        ] {
            let Stmt::DropUser { users, .. } = parse(sql).unwrap() else {
                panic!("{sql}")
            };
            assert_eq!(users, vec![acct("u", "%")], "{sql}");
        }
        let Stmt::DropUser { users, .. } = parse("DROP USER a@localhost, b").unwrap() else {
            panic!()
        };
        assert_eq!(users, vec![acct("a", "localhost"), acct("b", "%")]);
        assert_eq!(parse("CREATE USER 'u'@'10.0.0.1'").unwrap_err().code, 1235);
        assert!(matches!(
            parse("ALTER USER u IDENTIFIED WITH mysql_native_password BY 'x'").unwrap(),
            Stmt::AlterUser { .. }
        ));
        assert_eq!(
            parse("ALTER USER u IDENTIFIED WITH caching_sha2_password BY 'x'")
                .unwrap_err()
                .code,
            1235
        );
        let Stmt::Grant {
            privs: p,
            on,
            users,
        } = parse("GRANT SELECT, INSERT ON d.* TO 'u'@'%'").unwrap()
        else {
            panic!()
        };
        assert_eq!(p, privs::SELECT | privs::INSERT);
        assert_eq!(on, GrantOn::Database(Some("d".into())));
        assert_eq!(users, vec![acct("u", "%")]);
        let Stmt::Grant { privs: p, on, .. } = parse("GRANT ALL PRIVILEGES ON *.* TO u").unwrap()
        else {
            panic!()
        };
        assert_eq!((p, on), (privs::ALL_GLOBAL, GrantOn::Global));
        let Stmt::Revoke { privs: p, on, .. } = parse("REVOKE ALL ON d.t FROM u").unwrap() else {
            panic!()
        };
        assert_eq!(p, privs::ALL_OBJECT);
        assert!(matches!(on, GrantOn::Table(_)));
        assert_eq!(parse("GRANT SUPER ON d.* TO u").unwrap_err().code, 1221);
        assert_eq!(parse("GRANT PROCESS ON d.* TO u").unwrap_err().code, 1221);
        assert_eq!(
            parse("GRANT LOCK TABLES ON d.t TO u").unwrap_err().code,
            1144
        );
        let Stmt::Grant { privs: p, on, .. } =
            parse("GRANT LOCK TABLES, SELECT ON d.* TO u").unwrap()
        else {
            panic!()
        };
        assert_eq!(p, privs::LOCK_TABLES | privs::SELECT);
        assert_eq!(on, GrantOn::Database(Some("d".into())));
        let Stmt::Grant { privs: p, .. } = parse("GRANT ALL ON d.* TO u").unwrap() else {
            panic!()
        };
        assert_eq!(p, privs::ALL_DB);
        let Stmt::Grant { privs: p, .. } = parse("GRANT PROCESS ON *.* TO u").unwrap() else {
            panic!()
        };
        assert_eq!(p, privs::PROCESS);
        assert_eq!(parse("GRANT EXECUTE ON *.* TO u").unwrap_err().code, 1235);
        assert_eq!(
            parse("GRANT CREATE USER ON *.* TO u").unwrap_err().code,
            1235
        );
        assert_eq!(
            parse("GRANT SELECT (a) ON d.t TO u").unwrap_err().code,
            1235
        );
        assert_eq!(
            parse("GRANT SELECT ON *.* TO u WITH GRANT OPTION")
                .unwrap_err()
                .code,
            1235
        );
        assert!(matches!(
            parse("SHOW GRANTS FOR CURRENT_USER()").unwrap(),
            Stmt::ShowGrants { user: Some(Account { ref name, .. }) } if name.is_empty()
        ));
        assert!(matches!(
            parse("SHOW GRANTS").unwrap(),
            Stmt::ShowGrants { user: None }
        ));
    }

    #[test]
    fn regexp_null_is_parenthesized_outside_quotes() {
        assert_eq!(
            parenthesize_regexp_null(
                "SELECT a REGEXP NULL, 'x regexp null', b rlike\tnull, c REGEXP nullx"
            ),
            "SELECT a REGEXP (NULL), 'x regexp null', b rlike\t(NULL), c REGEXP nullx"
        );
        assert!(parse("SELECT 'a' REGEXP NULL, 'a' NOT RLIKE null").is_ok());
        // A comment in between is left alone (and refused), never a loop.
        assert!(parse("SELECT 'a' REGEXP /* c */ NULL").is_err());
    }

    #[test]
    fn drop_check_reads_as_a_marked_drop_constraint() {
        assert_eq!(
            alter_drop_check("ALTER TABLE t DROP CHECK c, DROP CHECK `a``b`")
                .unwrap()
                .as_deref(),
            Some("ALTER TABLE t DROP CONSTRAINT c RESTRICT, DROP CONSTRAINT `a``b` RESTRICT")
        );
        assert_eq!(
            alter_drop_check("ALTER TABLE t DROP CONSTRAINT c").unwrap(),
            None
        );
        assert_eq!(alter_drop_check("SELECT 'drop check x'").unwrap(), None);
        // RESTRICT / CASCADE are not MySQL's: written, they are a syntax error.
        assert!(alter_drop_check("ALTER TABLE t DROP CONSTRAINT `c` CASCADE").is_err());
    }

    #[test]
    fn explain_wraps_statement() {
        let s = parse("EXPLAIN SELECT * FROM t WHERE a = 'x''y'").unwrap();
        let lines = ExplainOpts {
            analyze: false,
            format: ExplainFormat::Lines,
        };
        assert!(matches!(s, Stmt::Explain(_, o) if o == lines));
        assert!(matches!(parse("explain t").unwrap(), Stmt::Describe { .. }));
        assert_eq!(parse("selec 1").unwrap_err().code, 1064);
    }

    #[test]
    fn explain_takes_mysql_formats_and_refuses_the_rest() {
        let opts = |sql: &str| match parse(sql) {
            Ok(Stmt::Explain(_, o)) => Ok(o),
            Ok(other) => panic!("{sql}: {other:?}"),
            Err(e) => Err(e.code),
        };
        let tree = |analyze| {
            Ok(ExplainOpts {
                analyze,
                format: ExplainFormat::Tree,
            })
        };
        assert_eq!(opts("EXPLAIN FORMAT=TREE SELECT 1"), tree(false));
        assert_eq!(opts("explain format = 'tree' select 1"), tree(false));
        assert_eq!(
            opts("EXPLAIN  Format =Tree\n WITH x AS (SELECT 1) SELECT * FROM x"),
            tree(false)
        );
        assert_eq!(opts("EXPLAIN ANALYZE FORMAT=TREE SELECT 1"), tree(true));
        assert_eq!(
            opts("EXPLAIN ANALYZE SELECT 1"),
            Ok(ExplainOpts {
                analyze: true,
                format: ExplainFormat::Lines
            })
        );
        assert_eq!(opts("EXPLAIN FORMAT=JSON SELECT 1"), Err(1235));
        assert_eq!(opts("EXPLAIN FORMAT=traditional SELECT 1"), Err(1235));
        assert_eq!(opts("EXPLAIN ANALYZE FORMAT=JSON SELECT 1"), Err(1235));
        assert_eq!(opts("EXPLAIN FORMAT=XML SELECT 1"), Err(1791));
        assert_eq!(opts("EXPLAIN FORMAT='tree SELECT 1"), Err(1064));
        // DESCRIBE and DESC are EXPLAIN's synonyms; with a table name they
        // still describe the table.
        assert_eq!(opts("DESCRIBE FORMAT=TREE SELECT 1"), tree(false));
        assert_eq!(opts("desc analyze format=tree select 1"), tree(true));
        assert!(matches!(parse("DESC t").unwrap(), Stmt::Describe { .. }));
        assert!(matches!(
            parse("describe t").unwrap(),
            Stmt::Describe { .. }
        ));
        // MySQL's order only: ANALYZE comes before FORMAT.
        assert_eq!(opts("EXPLAIN FORMAT=TREE ANALYZE SELECT 1"), Err(1064));
    }
}
