//! Authorization: which privilege each statement needs, the check made
//! before every statement runs, and the account statements (CREATE / DROP
//! / ALTER USER, GRANT, REVOKE, SHOW GRANTS). See `docs/SECURITY.md`.
//!
//! The check reads the user's account record (`catalog::users`) as
//! committed when the statement starts, so a GRANT or REVOKE reaches every
//! existing session at its next statement. `root` holds every privilege
//! and is never looked up. Never executes the statement it checks.

use sqlparser::ast::{self, Statement as S};

use crate::catalog::users::{self, privs, GrantTarget, UserRecord, ROOT};
use crate::catalog::SYSTEM_DB;
use crate::error::{code, SqlError, SqlResult};
use crate::sql::expr::object_parts;
use crate::sql::parse::{Account, GrantOn, Name, Stmt};
use crate::sql::{Engine, SessionState};
use crate::types::{Column, ColumnKind, QueryResult, Value, Warning};

/// Error 1410 (GRANT to an account that does not exist).
const CANT_CREATE_USER_WITH_GRANT: u16 = 1410;
/// Error 1396 (CREATE USER of an existing / DROP USER of a missing account).
const CANNOT_USER: u16 = 1396;
/// Error 1141 (REVOKE of a grant that does not exist).
const NONEXISTING_GRANT: u16 = 1141;
/// Error 1142 (table-level privilege missing).
pub const TABLEACCESS_DENIED: u16 = 1142;
/// Error 1044 (database-level privilege missing).
pub const DBACCESS_DENIED: u16 = 1044;

/// What the user may do, as loaded for one statement.
enum Access {
    /// `root`: everything.
    Root,
    /// Any other account (no record: nothing).
    User(Option<UserRecord>),
}

impl Access {
    fn table(&self, db: &str, t: &str) -> u16 {
        match self {
            Access::Root => privs::ALL_GLOBAL,
            Access::User(u) => u.as_ref().map_or(0, |u| u.privs_on_table(db, t)),
        }
    }
    fn db(&self, db: &str) -> u16 {
        match self {
            Access::Root => privs::ALL_GLOBAL,
            Access::User(u) => u.as_ref().map_or(0, |u| u.privs_on_db(db)),
        }
    }
    fn any_in_db(&self, db: &str) -> bool {
        match self {
            Access::Root => true,
            Access::User(u) => u.as_ref().is_some_and(|u| u.any_in_db(db)),
        }
    }
    fn is_super(&self) -> bool {
        self.global_has(privs::SUPER)
    }
    /// Whether `bit` is granted on `*.*`.
    fn global_has(&self, bit: u16) -> bool {
        match self {
            Access::Root => true,
            Access::User(u) => u.as_ref().is_some_and(|u| u.global() & bit != 0),
        }
    }
}

/// Post-filter of a result set by what the user may see.
pub struct Filter {
    access: Access,
    kind: FilterKind,
}

enum FilterKind {
    /// SHOW DATABASES: databases with some privilege.
    Databases,
    /// SHOW TABLES of `db`: tables with some privilege.
    Tables(String),
}

impl Filter {
    /// Drop the rows the user has no privilege on.
    pub fn apply(&self, res: &mut QueryResult) {
        res.rows.retain(|row| {
            let Some(Value::Text(name)) = row.first() else {
                return true;
            };
            match &self.kind {
                FilterKind::Databases => self.access.any_in_db(name),
                FilterKind::Tables(db) => self.access.table(db, name) != 0,
            }
        });
    }
}

/// Error 1142: `SELECT command denied to user 'u'@'h' for table 't'`.
pub fn table_denied(st: &SessionState, command: &str, table: &str) -> SqlError {
    SqlError::new(
        TABLEACCESS_DENIED,
        format!(
            "{command} command denied to user '{}'@'{}' for table '{table}'",
            st.user, st.host
        ),
    )
}

/// Error 1044: `Access denied for user 'u'@'h' to database 'd'`.
pub fn db_denied(st: &SessionState, db: &str) -> SqlError {
    SqlError::new(
        DBACCESS_DENIED,
        format!(
            "Access denied for user '{}'@'{}' to database '{db}'",
            st.user, st.host
        ),
    )
}

/// Error 1227: the statement needs SUPER.
pub fn super_denied() -> SqlError {
    SqlError::new(
        code::SPECIFIC_ACCESS_DENIED,
        "Access denied; you need (at least one of) the SUPER privilege(s) for this operation",
    )
}

/// Load the session user's access as committed now.
fn load(engine: &Engine, st: &SessionState) -> SqlResult<Access> {
    if st.user == ROOT {
        return Ok(Access::Root);
    }
    let mut txn = engine.storage.begin(Default::default())?;
    let r = users::get_user(txn.as_mut(), &st.user, false);
    txn.rollback();
    Ok(Access::User(r?))
}

struct Checker<'a> {
    st: &'a SessionState,
    access: &'a Access,
}

impl Checker<'_> {
    /// `(db, table)` of a name, or `None` when unqualified without a
    /// current database (the statement then fails with 1046 itself).
    fn resolve(&self, db: Option<&str>, t: &str) -> Option<(String, String)> {
        let db = db.or(self.st.db.as_deref())?;
        Some((db.to_string(), t.to_string()))
    }

    fn need_table(&self, bits: u16, command: &str, n: &Name) -> SqlResult<()> {
        let Some((db, t)) = self.resolve(n.db.as_deref(), &n.name) else {
            return Ok(());
        };
        if bits == privs::SELECT && crate::catalog::information_schema::open_to_all(&db, &t) {
            return Ok(());
        }
        if self.access.table(&db, &t) & bits == 0 {
            return Err(table_denied(self.st, command, &t));
        }
        Ok(())
    }

    fn need_object(&self, bits: u16, command: &str, name: &ast::ObjectName) -> SqlResult<()> {
        let parts = object_parts(name);
        let n = match parts.as_slice() {
            [t] => Name {
                db: None,
                name: t.clone(),
            },
            [d, t] => Name {
                db: Some(d.clone()),
                name: t.clone(),
            },
            // A malformed name is refused by the statement itself.
            _ => return Ok(()),
        };
        self.need_table(bits, command, &n)
    }

    /// A foreign key's parent: MySQL wants the REFERENCES privilege on
    /// it, which Tributary has no grant for; SELECT stands in (a key
    /// answers whether a parent value exists, which SELECT reveals too).
    fn references(&self, f: &ast::ForeignKeyConstraint) -> SqlResult<()> {
        self.need_object(privs::SELECT, "REFERENCES", &f.foreign_table)
    }

    fn need_db(&self, bits: u16, db: &str) -> SqlResult<()> {
        if self.access.db(db) & bits == 0 {
            return Err(db_denied(self.st, db));
        }
        Ok(())
    }

    fn need_super(&self) -> SqlResult<()> {
        if self.access.is_super() {
            Ok(())
        } else {
            Err(super_denied())
        }
    }

    fn is_self(&self, a: &Account) -> bool {
        a.name.is_empty() || a.name == self.st.user
    }

    /// SELECT on every table a query reads, wherever it appears (FROM,
    /// joins, derived tables, CTE bodies, subqueries in any expression).
    /// A one-part name that is a CTE of the statement is not a table.
    fn query(&self, q: &ast::Query) -> SqlResult<()> {
        self.reads(q)?;
        self.locking_reads(q)
    }

    /// `SELECT … FOR UPDATE` (anywhere in the statement) takes exclusive
    /// row locks that hold writers off until the transaction ends: MySQL 8
    /// wants, besides SELECT, one of DELETE, LOCK TABLES or UPDATE on each
    /// table it reads (`check_locking_clause_access`; 1142 "SELECT with
    /// locking clause"). `FOR SHARE` needs SELECT only.
    fn locking_reads(&self, q: &ast::Query) -> SqlResult<()> {
        let mut locking = Vec::new();
        let _ = visit_queries(q, &mut |q: &ast::Query| {
            if q.locks
                .iter()
                .any(|l| matches!(l.lock_type, ast::LockType::Update))
            {
                locking.push(q.clone());
            }
        });
        for lq in &locking {
            let mut ctes = std::collections::HashSet::new();
            let _ = visit_queries(lq, &mut |q: &ast::Query| {
                if let Some(w) = &q.with {
                    for c in &w.cte_tables {
                        ctes.insert(crate::sql::expr::ident_name(&c.alias.name));
                    }
                }
            });
            let r = ast::visit_relations(lq, |name| {
                let parts = object_parts(name);
                if parts.len() == 1 && ctes.contains(&parts[0]) {
                    return std::ops::ControlFlow::Continue(());
                }
                match self.need_object(
                    privs::DELETE | privs::UPDATE | privs::LOCK_TABLES,
                    "SELECT with locking clause",
                    name,
                ) {
                    Ok(()) => std::ops::ControlFlow::Continue(()),
                    Err(e) => std::ops::ControlFlow::Break(e),
                }
            });
            if let std::ops::ControlFlow::Break(e) = r {
                return Err(e);
            }
        }
        Ok(())
    }

    /// SELECT on every relation named inside `node` (except CTE names).
    fn reads<V: ast::Visit>(&self, node: &V) -> SqlResult<()> {
        let mut ctes = std::collections::HashSet::new();
        let _ = visit_queries(node, &mut |q: &ast::Query| {
            if let Some(w) = &q.with {
                for c in &w.cte_tables {
                    ctes.insert(crate::sql::expr::ident_name(&c.alias.name));
                }
            }
        });
        let r = ast::visit_relations(node, |name| {
            let parts = object_parts(name);
            if parts.len() == 1 && ctes.contains(&parts[0]) {
                return std::ops::ControlFlow::Continue(());
            }
            match self.need_object(privs::SELECT, "SELECT", name) {
                Ok(()) => std::ops::ControlFlow::Continue(()),
                Err(e) => std::ops::ControlFlow::Break(e),
            }
        });
        match r {
            std::ops::ControlFlow::Break(e) => Err(e),
            std::ops::ControlFlow::Continue(()) => Ok(()),
        }
    }

    fn twj_target(
        &self,
        twj: &ast::TableWithJoins,
        bits: u16,
        command: &str,
        reads: bool,
    ) -> SqlResult<()> {
        if let ast::TableFactor::Table { name, .. } = &twj.relation {
            self.need_object(bits, command, name)?;
            if reads {
                self.need_object(privs::SELECT, "SELECT", name)?;
            }
        }
        for j in &twj.joins {
            self.reads(&j.relation)?;
        }
        Ok(())
    }

    fn ast(&self, s: &S) -> SqlResult<()> {
        match s {
            S::Query(q) => self.query(q),
            S::Insert(ins) => {
                if let ast::TableObject::TableName(name) = &ins.table {
                    self.need_object(privs::INSERT, "INSERT", name)?;
                    // REPLACE deletes the rows it replaces (MySQL: INSERT
                    // and DELETE).
                    if ins.replace_into {
                        self.need_object(privs::DELETE, "DELETE", name)?;
                    }
                    // ON DUPLICATE KEY UPDATE also updates (and reads) rows.
                    if ins.on.is_some() {
                        self.need_object(privs::UPDATE, "UPDATE", name)?;
                        self.need_object(privs::SELECT, "SELECT", name)?;
                    }
                }
                // Rows of literals read no table: skip the walk over every
                // value (a 100-row INSERT spent ~7 % of its time in it).
                if let Some(src) = ins.source.as_deref().filter(|q| !literal_rows(q)) {
                    self.query(src)?;
                }
                Ok(())
            }
            S::Update(up) => {
                // Reading rows (WHERE, ORDER BY) also needs SELECT.
                let reads = up.selection.is_some() || !up.order_by.is_empty();
                self.twj_target(&up.table, privs::UPDATE, "UPDATE", reads)?;
                // Tables read by subqueries in WHERE / SET.
                if let Some(w) = &up.selection {
                    self.reads(w)?;
                }
                for a in &up.assignments {
                    self.reads(&a.value)?;
                }
                Ok(())
            }
            S::Delete(del) => {
                let tables = match &del.from {
                    ast::FromTable::WithFromKeyword(v) | ast::FromTable::WithoutKeyword(v) => v,
                };
                let reads = del.selection.is_some() || !del.order_by.is_empty();
                for twj in tables {
                    self.twj_target(twj, privs::DELETE, "DELETE", reads)?;
                }
                if let Some(w) = &del.selection {
                    self.reads(w)?;
                }
                Ok(())
            }
            S::CreateTable(ct) => {
                self.need_object(privs::CREATE, "CREATE", &ct.name)?;
                let column_keys =
                    ct.columns
                        .iter()
                        .flat_map(|c| &c.options)
                        .filter_map(|o| match &o.option {
                            ast::ColumnOption::ForeignKey(f) => Some(f),
                            _ => None,
                        });
                let table_keys = ct.constraints.iter().filter_map(|c| match c {
                    ast::TableConstraint::ForeignKey(f) => Some(f),
                    _ => None,
                });
                for f in column_keys.chain(table_keys) {
                    self.references(f)?;
                }
                if let Some(q) = &ct.query {
                    self.need_object(privs::INSERT, "INSERT", &ct.name)?;
                    self.reads(q)?;
                }
                Ok(())
            }
            S::AlterTable(at) => {
                self.need_object(privs::ALTER, "ALTER", &at.name)?;
                for op in &at.operations {
                    if let ast::AlterTableOperation::AddConstraint {
                        constraint: ast::TableConstraint::ForeignKey(f),
                        ..
                    } = op
                    {
                        self.references(f)?;
                    }
                    if let ast::AlterTableOperation::RenameTable { table_name } = op {
                        let (ast::RenameTableNameKind::As(to) | ast::RenameTableNameKind::To(to)) =
                            table_name;
                        self.need_object(privs::DROP, "DROP", &at.name)?;
                        self.need_object(privs::CREATE, "CREATE", to)?;
                        self.need_object(privs::INSERT, "INSERT", to)?;
                    }
                }
                Ok(())
            }
            // RENAME TABLE needs ALTER and DROP on the old name, CREATE and
            // INSERT on the new one (MySQL's rule).
            S::RenameTable(renames) => {
                for r in renames {
                    self.need_object(privs::ALTER, "ALTER", &r.old_name)?;
                    self.need_object(privs::DROP, "DROP", &r.old_name)?;
                    self.need_object(privs::CREATE, "CREATE", &r.new_name)?;
                    self.need_object(privs::INSERT, "INSERT", &r.new_name)?;
                }
                Ok(())
            }
            // A view reads with its creator's rights (SQL SECURITY
            // DEFINER, MySQL's default): creating one needs SELECT on what
            // it reads; reading it needs SELECT on the view.
            S::CreateView(cv) => {
                self.need_object(privs::CREATE, "CREATE VIEW", &cv.name)?;
                if cv.or_replace {
                    self.need_object(privs::DROP, "DROP", &cv.name)?;
                }
                self.reads(&cv.query)
            }
            S::Drop {
                object_type: ast::ObjectType::View,
                names,
                ..
            } => {
                for n in names {
                    self.need_object(privs::DROP, "DROP", n)?;
                }
                Ok(())
            }
            // Anything else is refused by the SQL layer (1235); for a user
            // without SUPER the refusal is 1227, so a statement whose
            // privilege is not mapped here can never run unchecked.
            _ => self.need_super(),
        }
    }

    fn stmt(&self, s: &Stmt) -> SqlResult<Option<FilterKind>> {
        use privs::*;
        match s {
            Stmt::Ast(a) => self.ast(a)?,
            Stmt::CreateTable(a, _) => self.ast(a)?,
            Stmt::CreateDatabase { name, .. } => self.need_db(CREATE, name)?,
            Stmt::DropDatabase { name, .. } => self.need_db(DROP, name)?,
            Stmt::DropTable { names, .. } => {
                for n in names {
                    self.need_table(DROP, "DROP", n)?;
                }
            }
            // TRUNCATE TABLE needs DROP (MySQL's rule).
            Stmt::Truncate { table } => self.need_table(DROP, "DROP", table)?,
            Stmt::CreateIndex(spec) => self.need_table(INDEX | ALTER, "INDEX", &spec.table)?,
            Stmt::AlterKeys { table } => self.need_table(ALTER, "ALTER", table)?,
            Stmt::DropIndex { table, .. } | Stmt::Reindex { table, .. } => {
                self.need_table(INDEX | ALTER, "INDEX", table)?
            }
            Stmt::ShowDatabases => return Ok(Some(FilterKind::Databases)),
            Stmt::ShowTables { db, .. } => {
                let Some(db) = db.as_deref().or(self.st.db.as_deref()) else {
                    return Ok(None);
                };
                if !self.access.any_in_db(db) {
                    return Err(db_denied(self.st, db));
                }
                return Ok(Some(FilterKind::Tables(db.to_string())));
            }
            Stmt::ShowCreateDatabase { name, .. } => {
                if !self.access.any_in_db(name) {
                    return Err(db_denied(self.st, name));
                }
            }
            Stmt::ShowIndex { table }
            | Stmt::ShowCreateTable { table }
            | Stmt::ShowCreateView { table }
            | Stmt::Describe { table, .. }
            | Stmt::CheckIndex { table, .. } => self.need_table(SELECT, "SELECT", table)?,
            // MySQL: SELECT for CHECK TABLE, SELECT and INSERT for ANALYZE
            // and OPTIMIZE.
            Stmt::Maintenance { op, tables } => {
                for t in tables {
                    self.need_table(SELECT, "SELECT", t)?;
                    if *op != crate::sql::parse::MaintenanceOp::Check {
                        self.need_table(privs::INSERT, "INSERT", t)?;
                    }
                }
            }
            Stmt::ShowIscpStatus => self.need_table(
                SELECT,
                "SELECT",
                &Name {
                    db: Some(SYSTEM_DB.into()),
                    name: "mo_iscp_log".into(),
                },
            )?,
            Stmt::Explain(inner, _) | Stmt::Do(inner) => return self.stmt(inner).map(|_| None),
            Stmt::ShowFiltered(inner, _) => return self.stmt(inner),
            Stmt::Use { db } => {
                if !self.access.any_in_db(db) {
                    return Err(db_denied(self.st, db));
                }
            }
            Stmt::Set(assignments) => {
                if assignments.iter().any(|(t, _)| {
                    matches!(t, crate::sql::parse::SetTarget::System { global: true, .. })
                }) {
                    self.need_super()?;
                }
            }
            Stmt::SetTransaction { scope, .. } => {
                if *scope == crate::sql::txn_control::TxnScope::Global {
                    self.need_super()?;
                }
            }
            Stmt::CreateUser { .. }
            | Stmt::DropUser { .. }
            | Stmt::Grant { .. }
            | Stmt::Revoke { .. } => self.need_super()?,
            Stmt::AlterUser { users, .. } => {
                if !users.iter().all(|(a, _)| self.is_self(a)) {
                    self.need_super()?;
                }
            }
            Stmt::ShowGrants { user } => {
                if user.as_ref().is_some_and(|a| !self.is_self(a)) {
                    self.need_super()?;
                }
            }
            // LOCK TABLES needs, for each table, the LOCK TABLES
            // privilege on its database (1044) and SELECT on it (1142),
            // MySQL's check in that order.
            Stmt::LockTables(tables) => {
                for (name, _) in tables {
                    if let Some((db, _)) = self.resolve(name.db.as_deref(), &name.name) {
                        self.need_db(LOCK_TABLES, &db)?;
                    }
                    self.need_table(SELECT, "SELECT", name)?;
                }
            }
            Stmt::UnlockTables => {}
            // INSERT on the table; a server-side file needs FILE too (as
            // MySQL: 1045 without it).
            Stmt::LoadData(spec) => {
                if !spec.local && !self.access.global_has(FILE) {
                    return Err(SqlError::new(
                        code::ACCESS_DENIED,
                        format!(
                            "Access denied for user '{}'@'{}' (using password: YES)",
                            self.st.user, self.st.host
                        ),
                    ));
                }
                let name = Name {
                    db: spec.db.clone(),
                    name: spec.table.clone(),
                };
                self.need_table(INSERT, "INSERT", &name)?;
            }
            // KILL checks ownership itself (1095: another user's session
            // needs SUPER); the process list shows a user without PROCESS
            // only their own sessions (`SessionState::sees_all`).
            Stmt::Kill { .. }
            | Stmt::ShowProcesslist { .. }
            | Stmt::ShowStatus { .. }
            | Stmt::ShowWarnings
            | Stmt::ShowVariables { .. }
            | Stmt::ShowInfo { .. }
            // The prepared statement is checked when EXECUTE runs it.
            | Stmt::Prepare { .. }
            | Stmt::Execute { .. }
            | Stmt::Deallocate { .. }
            | Stmt::Begin { .. }
            | Stmt::Commit { .. }
            | Stmt::Rollback { .. }
            | Stmt::Savepoint(..)
            | Stmt::SetNames { .. } => {}
        }
        Ok(None)
    }
}

/// Check `stmt` against the session user's privileges (and refresh the
/// session's SUPER flag, which the fault-injection functions read).
/// Returns a filter for the result of SHOW DATABASES / SHOW TABLES.
pub fn check(engine: &Engine, st: &mut SessionState, stmt: &Stmt) -> SqlResult<Option<Filter>> {
    let access = load(engine, st)?;
    st.privileged = access.is_super();
    st.sees_all = access.global_has(privs::PROCESS);
    let kind = Checker {
        st,
        access: &access,
    }
    .stmt(stmt)?;
    Ok(kind.map(|kind| Filter { access, kind }))
}

/// Whether `q` is a plain `VALUES` list whose every item is a literal or a
/// signed literal: it names no relation, so there is nothing to check.
fn literal_rows(q: &ast::Query) -> bool {
    fn literal(e: &ast::Expr) -> bool {
        match e {
            ast::Expr::Value(_) => true,
            ast::Expr::UnaryOp { expr, .. } => matches!(**expr, ast::Expr::Value(_)),
            _ => false,
        }
    }
    let ast::SetExpr::Values(v) = q.body.as_ref() else {
        return false;
    };
    q.with.is_none()
        && q.order_by.is_none()
        && q.limit_clause.is_none()
        && q.fetch.is_none()
        && q.locks.is_empty()
        && q.for_clause.is_none()
        && q.settings.is_none()
        && q.format_clause.is_none()
        && q.pipe_operators.is_empty()
        && v.rows.iter().all(|r| r.iter().all(literal))
}

/// Whether `s` is an account statement ([`execute`] runs it).
pub fn is_account_statement(s: &Stmt) -> bool {
    matches!(
        s,
        Stmt::CreateUser { .. }
            | Stmt::DropUser { .. }
            | Stmt::AlterUser { .. }
            | Stmt::Grant { .. }
            | Stmt::Revoke { .. }
            | Stmt::ShowGrants { .. }
    )
}

fn shown(a: &Account) -> String {
    format!("'{}'@'{}'", a.name, a.host)
}

fn quoted(name: &str, host: &str) -> String {
    format!(
        "`{}`@`{}`",
        name.replace('`', "``"),
        host.replace('`', "``")
    )
}

/// Run an account statement in its own transaction.
pub fn execute(engine: &Engine, st: &mut SessionState, s: Stmt) -> SqlResult<QueryResult> {
    // CURRENT_USER (an empty name) is the session's account.
    let resolve = |a: Account| -> Account {
        if a.name.is_empty() {
            Account {
                name: st.user.clone(),
                host: "%".into(),
            }
        } else {
            a
        }
    };
    if let Stmt::ShowGrants { user } = s {
        let a = user.map(resolve);
        let name = a.as_ref().map_or(st.user.clone(), |a| a.name.clone());
        let mut txn = engine.storage.begin(Default::default())?;
        let rec = users::get_user(txn.as_mut(), &name, false);
        txn.rollback();
        return show_grants(&name, a.as_ref(), rec?);
    }
    let mut txn = engine.begin(st)?;
    let mut warnings = Vec::new();
    let r = (|| -> SqlResult<()> {
        let t = txn.as_mut();
        match s {
            Stmt::CreateUser {
                if_not_exists,
                users: list,
            } => {
                for (a, pw) in list {
                    let a = resolve(a);
                    let exists = a.name == ROOT || users::get_user(t, &a.name, true)?.is_some();
                    if exists {
                        if if_not_exists {
                            warnings.push(Warning {
                                code: 3163,
                                message: format!("Authorization ID {} already exists.", shown(&a)),
                            });
                            continue;
                        }
                        return Err(SqlError::new(
                            CANNOT_USER,
                            format!("Operation CREATE USER failed for {}", shown(&a)),
                        ));
                    }
                    users::put_user(
                        t,
                        &UserRecord {
                            name: a.name,
                            host: a.host,
                            auth: crate::catalog::users::native_password_hash(&pw.0),
                            grants: vec![],
                        },
                    )?;
                }
            }
            Stmt::DropUser {
                if_exists,
                users: list,
            } => {
                for a in list {
                    let a = resolve(a);
                    if a.name == ROOT {
                        return Err(SqlError::unsupported("dropping the root account"));
                    }
                    match users::get_user(t, &a.name, true)? {
                        Some(u) if u.host == a.host => users::delete_user(t, &a.name)?,
                        _ if if_exists => warnings.push(Warning {
                            code: 3162,
                            message: format!("Authorization ID {} does not exist.", shown(&a)),
                        }),
                        _ => {
                            return Err(SqlError::new(
                                CANNOT_USER,
                                format!("Operation DROP USER failed for {}", shown(&a)),
                            ))
                        }
                    }
                }
            }
            Stmt::AlterUser {
                if_exists,
                users: list,
            } => {
                for (a, pw) in list {
                    let a = resolve(a);
                    let rec = match users::get_user(t, &a.name, true)? {
                        Some(u) if u.host == a.host || a.name == st.user => Some(u),
                        None if a.name == ROOT => Some(UserRecord {
                            name: ROOT.into(),
                            host: "%".into(),
                            auth: String::new(),
                            grants: vec![],
                        }),
                        _ => None,
                    };
                    match rec {
                        Some(mut u) => {
                            u.auth = crate::catalog::users::native_password_hash(&pw.0);
                            users::put_user(t, &u)?;
                        }
                        None if if_exists => warnings.push(Warning {
                            code: 3162,
                            message: format!("Authorization ID {} does not exist.", shown(&a)),
                        }),
                        None => {
                            return Err(SqlError::new(
                                CANNOT_USER,
                                format!("Operation ALTER USER failed for {}", shown(&a)),
                            ))
                        }
                    }
                }
            }
            Stmt::Grant {
                privs: bits,
                on,
                users: list,
            } => {
                let target = grant_target(t, st, &on, true)?;
                for a in list {
                    let a = resolve(a);
                    if a.name == ROOT {
                        continue; // root already holds everything
                    }
                    let Some(mut u) =
                        users::get_user(t, &a.name, true)?.filter(|u| u.host == a.host)
                    else {
                        return Err(SqlError::new(
                            CANT_CREATE_USER_WITH_GRANT,
                            "You are not allowed to create a user with GRANT",
                        ));
                    };
                    u.grant(&target, bits);
                    users::put_user(t, &u)?;
                }
            }
            Stmt::Revoke {
                privs: bits,
                on,
                users: list,
            } => {
                let target = grant_target(t, st, &on, false)?;
                for a in list {
                    let a = resolve(a);
                    if a.name == ROOT {
                        return Err(SqlError::unsupported(
                            "revoking privileges of root (root always holds every privilege)",
                        ));
                    }
                    let found = users::get_user(t, &a.name, true)?.filter(|u| u.host == a.host);
                    let Some(mut u) = found else {
                        return Err(SqlError::new(
                            NONEXISTING_GRANT,
                            format!(
                                "There is no such grant defined for user '{}' on host '{}'",
                                a.name, a.host
                            ),
                        ));
                    };
                    if !u.revoke(&target, bits) && target != GrantTarget::Global {
                        return Err(SqlError::new(
                            NONEXISTING_GRANT,
                            format!(
                                "There is no such grant defined for user '{}' on host '{}'",
                                a.name, a.host
                            ),
                        ));
                    }
                    users::put_user(t, &u)?;
                }
            }
            other => {
                return Err(SqlError::internal(format!(
                    "not an account statement: {other:?}"
                )))
            }
        }
        Ok(())
    })();
    match r {
        Ok(()) => {
            txn.commit()?;
            Ok(QueryResult {
                warnings,
                ..Default::default()
            })
        }
        Err(e) => {
            txn.rollback();
            Err(e)
        }
    }
}

/// Resolve a GRANT/REVOKE object against the session's database; a GRANT
/// on a table needs the table to exist (1146), as in MySQL.
fn grant_target(
    t: &mut dyn tributary_storage::Transaction,
    st: &SessionState,
    on: &GrantOn,
    must_exist: bool,
) -> SqlResult<GrantTarget> {
    Ok(match on {
        GrantOn::Global => GrantTarget::Global,
        GrantOn::Database(db) => GrantTarget::Database(st.db_for(db.as_deref())?.to_string()),
        GrantOn::Table(n) => {
            let db = st.db_for(n.db.as_deref())?.to_string();
            if must_exist {
                crate::catalog::require_table(t, &db, &n.name, false)?;
            }
            GrantTarget::Table(db, n.name.clone())
        }
    })
}

/// `SHOW GRANTS [FOR a]`: MySQL's shape, one `GRANT … ON … TO …` row per
/// object (`USAGE ON *.*` first when there is no global privilege).
fn show_grants(
    name: &str,
    asked: Option<&Account>,
    rec: Option<UserRecord>,
) -> SqlResult<QueryResult> {
    let rec = match rec {
        Some(r) => Some(r),
        None if name == ROOT => None,
        None => {
            let host = asked.map_or("%", |a| a.host.as_str());
            return Err(SqlError::new(
                NONEXISTING_GRANT,
                format!("There is no such grant defined for user '{name}' on host '{host}'"),
            ));
        }
    };
    let host = rec.as_ref().map_or("%".to_string(), |r| r.host.clone());
    if let Some(a) = asked {
        if a.host != host && !(a.name.is_empty()) {
            return Err(SqlError::new(
                NONEXISTING_GRANT,
                format!(
                    "There is no such grant defined for user '{}' on host '{}'",
                    a.name, a.host
                ),
            ));
        }
    }
    let who = quoted(name, &host);
    let mut rows = Vec::new();
    if name == ROOT {
        rows.push(format!(
            "GRANT ALL PRIVILEGES ON *.* TO {who} WITH GRANT OPTION"
        ));
    } else if let Some(r) = &rec {
        rows.push(format!(
            "GRANT {} ON *.* TO {who}",
            privs::list(r.global(), privs::ALL_GLOBAL)
        ));
        let mut rest: Vec<&users::Grant> = r
            .grants
            .iter()
            .filter(|g| g.target != GrantTarget::Global && g.privs != 0)
            .collect();
        rest.sort_by_key(|g| match &g.target {
            GrantTarget::Global => (0, String::new(), String::new()),
            GrantTarget::Database(d) => (1, d.clone(), String::new()),
            GrantTarget::Table(d, t) => (2, d.clone(), t.clone()),
        });
        for g in rest {
            let all = match g.target {
                GrantTarget::Database(_) => privs::ALL_DB,
                _ => privs::ALL_OBJECT,
            };
            rows.push(format!(
                "GRANT {} ON {} TO {who}",
                privs::list(g.privs, all),
                g.target
            ));
        }
    }
    Ok(QueryResult {
        columns: vec![Column {
            name: format!("Grants for {name}@{host}"),
            kind: ColumnKind::Text,
        }],
        rows: rows.into_iter().map(|r| vec![Value::Text(r)]).collect(),
        ..Default::default()
    })
}

/// Call `f` on every query (the statement's and every subquery) in `node`.
fn visit_queries<V: ast::Visit>(
    node: &V,
    f: &mut dyn FnMut(&ast::Query),
) -> std::ops::ControlFlow<()> {
    struct Q<'a>(&'a mut dyn FnMut(&ast::Query));
    impl ast::Visitor for Q<'_> {
        type Break = ();
        fn pre_visit_query(&mut self, q: &ast::Query) -> std::ops::ControlFlow<()> {
            (self.0)(q);
            std::ops::ControlFlow::Continue(())
        }
    }
    node.visit(&mut Q(f))
}
