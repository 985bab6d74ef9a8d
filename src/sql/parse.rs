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
}

/// A parsed statement.
#[derive(Debug, Clone)]
pub enum Stmt {
    /// Handled through sqlparser's AST.
    Ast(Box<Statement>),
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
    CreateIndex(IndexSpec),
    DropIndex {
        name: String,
        table: Name,
    },
    ShowDatabases,
    ShowTables {
        db: Option<String>,
    },
    ShowIndex {
        table: Name,
    },
    ShowCreateTable {
        table: Name,
    },
    ShowIscpStatus,
    ShowWarnings,
    ShowVariables {
        like: Option<String>,
    },
    Describe {
        table: Name,
    },
    Explain(Box<Stmt>),
    Begin,
    Commit,
    Rollback,
    Use {
        db: String,
    },
    Set {
        name: String,
        value: String,
    },
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
    let mut out = Vec::new();
    let cs: Vec<char> = sql.chars().collect();
    let mut i = 0;
    while i < cs.len() {
        let c = cs[i];
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
                    if let Some(&n) = cs.get(i) {
                        s.push(match n {
                            'n' => '\n',
                            't' => '\t',
                            '0' => '\0',
                            o => o,
                        });
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
    }
    Ok(out)
}

struct P {
    t: Vec<Tok>,
    i: usize,
}

impl P {
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
    fn done(&self) -> bool {
        self.i >= self.t.len()
    }
    fn end(&self) -> SqlResult<()> {
        if self.done() {
            Ok(())
        } else {
            Err(self.err("unexpected input"))
        }
    }
    fn column_list(&mut self) -> SqlResult<Vec<String>> {
        if !self.punct('(') {
            return Err(self.err("expected '('"));
        }
        let mut cols = vec![self.ident()?];
        // Optional length / order after each column.
        loop {
            if self.punct('(') {
                self.usize()?;
                if !self.punct(')') {
                    return Err(self.err("expected ')'"));
                }
            }
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
        Ok(cols)
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
pub fn parse(sql: &str) -> SqlResult<Stmt> {
    let toks = tokenize(sql)?;
    let mut p = P { t: toks, i: 0 };
    if p.done() {
        return Err(SqlError::parse("Query was empty"));
    }
    // EXPLAIN <statement>: parse the rest of the original text.
    if p.peek_kw("explain") {
        let trimmed = sql.trim_start();
        let rest = trimmed.get(7..).unwrap_or("");
        let first = rest
            .split_whitespace()
            .next()
            .unwrap_or("")
            .to_ascii_lowercase();
        if ["select", "insert", "update", "delete", "with", "("]
            .iter()
            .any(|k| first.starts_with(k))
        {
            return Ok(Stmt::Explain(Box::new(parse(rest)?)));
        }
    }
    if let Some(s) = parse_custom(&mut p)? {
        return Ok(s);
    }
    parse_ast(sql)
}

fn parse_ast(sql: &str) -> SqlResult<Stmt> {
    let mut stmts = Parser::parse_sql(&MySqlDialect {}, sql).map_err(|e| {
        SqlError::parse(format!(
            "You have an error in your SQL syntax: {}",
            e.to_string().trim_start_matches("sql parser error: ")
        ))
    })?;
    if stmts.len() != 1 {
        return Err(SqlError::parse("expected exactly one statement"));
    }
    Ok(Stmt::Ast(Box::new(stmts.remove(0))))
}

fn parse_custom(p: &mut P) -> SqlResult<Option<Stmt>> {
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
            spec.columns = p.column_list()?;
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
            // Ignore charset / collate clauses.
            return Ok(Some(Stmt::CreateDatabase {
                name,
                if_not_exists,
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
            let name = p.ident()?;
            p.expect_kw("on")?;
            let table = p.name()?;
            p.end()?;
            return Ok(Some(Stmt::DropIndex { name, table }));
        }
        return Ok(None);
    }
    if p.kw("alter") {
        p.expect_kw("table")?;
        let table = p.name()?;
        if p.kw("add") {
            let unique = p.kw("unique");
            let fulltext = !unique && p.kw("fulltext");
            if !(p.kw("index") || p.kw("key")) {
                return Err(p.err("only ADD INDEX is supported in ALTER TABLE"));
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
            spec.columns = p.column_list()?;
            p.index_options(&mut spec)?;
            return Ok(Some(Stmt::CreateIndex(spec)));
        }
        if p.kw("drop") {
            if !(p.kw("index") || p.kw("key")) {
                return Err(p.err("only DROP INDEX is supported in ALTER TABLE"));
            }
            let name = p.ident()?;
            p.end()?;
            return Ok(Some(Stmt::DropIndex { name, table }));
        }
        return Err(p.err("unsupported ALTER TABLE action"));
    }
    if p.kw("show") {
        p.kw("full");
        if p.kw("databases") || p.kw("schemas") {
            return Ok(Some(Stmt::ShowDatabases));
        }
        if p.kw("tables") {
            let db = if p.kw("from") || p.kw("in") {
                Some(p.ident()?)
            } else {
                None
            };
            return Ok(Some(Stmt::ShowTables { db }));
        }
        if p.kw("index") || p.kw("indexes") || p.kw("keys") {
            if !(p.kw("from") || p.kw("in")) {
                return Err(p.err("expected FROM"));
            }
            let mut table = p.name()?;
            if p.kw("from") || p.kw("in") {
                table.db = Some(p.ident()?);
            }
            return Ok(Some(Stmt::ShowIndex { table }));
        }
        if p.kw("create") {
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
            return Ok(Some(Stmt::ShowWarnings));
        }
        p.kw("session");
        p.kw("global");
        if p.kw("variables") {
            let like = if p.kw("like") {
                Some(p.string_or_word()?)
            } else {
                None
            };
            return Ok(Some(Stmt::ShowVariables { like }));
        }
        return Err(p.err("unsupported SHOW statement"));
    }
    if p.kw("describe") || p.kw("desc") {
        let table = p.name()?;
        return Ok(Some(Stmt::Describe { table }));
    }
    if p.kw("explain") {
        if matches!(p.t.get(p.i), Some(Tok::Word(_)) | Some(Tok::QIdent(_)))
            && !["select", "insert", "update", "delete", "with"]
                .iter()
                .any(|k| p.peek_kw(k))
        {
            let table = p.name()?;
            return Ok(Some(Stmt::Describe { table }));
        }
        return Err(p.err("unsupported EXPLAIN"));
    }
    if p.kw("begin") {
        p.kw("work");
        p.end()?;
        return Ok(Some(Stmt::Begin));
    }
    if p.kw("start") {
        p.expect_kw("transaction")?;
        return Ok(Some(Stmt::Begin));
    }
    if p.kw("commit") {
        p.kw("work");
        p.end()?;
        return Ok(Some(Stmt::Commit));
    }
    if p.kw("rollback") {
        p.kw("work");
        p.end()?;
        return Ok(Some(Stmt::Rollback));
    }
    if p.kw("use") {
        let db = p.ident()?;
        p.end()?;
        return Ok(Some(Stmt::Use { db }));
    }
    if p.kw("set") {
        if p.kw("names") || p.kw("character") {
            return Ok(Some(Stmt::Set {
                name: "names".into(),
                value: String::new(),
            }));
        }
        p.kw("session");
        p.kw("local");
        let _global = p.kw("global");
        let mut name = p.ident()?;
        if let Some(n) = name.strip_prefix("@@") {
            name = n.to_string();
        }
        if p.punct('.') {
            name = p.ident()?;
        }
        if !p.punct('=') {
            if p.punct(':') && p.punct('=') {
            } else {
                return Err(p.err("expected '='"));
            }
        }
        let value = p.string_or_word()?;
        p.end()?;
        return Ok(Some(Stmt::Set {
            name: name.to_ascii_lowercase(),
            value,
        }));
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn explain_wraps_statement() {
        let s = parse("EXPLAIN SELECT * FROM t WHERE a = 'x''y'").unwrap();
        assert!(matches!(s, Stmt::Explain(_)));
        assert!(matches!(parse("explain t").unwrap(), Stmt::Describe { .. }));
        assert_eq!(parse("selec 1").unwrap_err().code, 1064);
    }
}
