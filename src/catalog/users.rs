//! Accounts and their privileges, stored as records of a system storage
//! table (`mo_catalog.mo_user`), so that CREATE USER / GRANT / REVOKE are
//! transactional like any DDL and survive restarts.
//!
//! One record per user name (key: the name) holds the account's host
//! (`%` or `localhost`), its `mysql_native_password` hash
//! (`*` + hex of `SHA1(SHA1(password))`, empty for an empty password —
//! never the password itself) and every grant of the account. Never
//! decides whether a statement is allowed (that is `sql::privileges`).

use serde::{Deserialize, Serialize};
use sha1::Digest;
use tributary_storage::{TableId, Transaction};

use crate::error::{SqlError, SqlResult};

/// Storage table of account records (key: user name).
pub const SYS_USERS: TableId = 5;

/// The superuser: always exists (empty password until one is set), always
/// holds every privilege, cannot be dropped or have privileges revoked.
pub const ROOT: &str = "root";

/// Privilege bits.
pub mod privs {
    pub const SELECT: u16 = 1;
    pub const INSERT: u16 = 1 << 1;
    pub const UPDATE: u16 = 1 << 2;
    pub const DELETE: u16 = 1 << 3;
    pub const CREATE: u16 = 1 << 4;
    pub const DROP: u16 = 1 << 5;
    pub const INDEX: u16 = 1 << 6;
    pub const ALTER: u16 = 1 << 7;
    pub const SUPER: u16 = 1 << 8;
    /// `LOCK TABLES` (database level: on `db.*` or `*.*`, never a table).
    pub const LOCK_TABLES: u16 = 1 << 9;
    /// `PROCESS` (global only): see every session in the process list.
    pub const PROCESS: u16 = 1 << 10;
    /// `FILE` (global only): server-side `LOAD DATA INFILE`.
    pub const FILE: u16 = 1 << 11;
    /// Every privilege that can be granted on a table (`ALL` on `db.t`).
    pub const ALL_OBJECT: u16 = SELECT | INSERT | UPDATE | DELETE | CREATE | DROP | INDEX | ALTER;
    /// Every privilege that can be granted on a database (`ALL` on `db.*`).
    pub const ALL_DB: u16 = ALL_OBJECT | LOCK_TABLES;
    /// Every privilege (`ALL` on `*.*`).
    pub const ALL_GLOBAL: u16 = ALL_DB | SUPER | PROCESS | FILE;
    /// Privileges that exist only on `*.*` (elsewhere: 1221).
    pub const GLOBAL_ONLY: u16 = SUPER | PROCESS | FILE;
    /// Privileges that cannot be granted on one table (there: 1144).
    pub const NOT_ON_TABLE: u16 = GLOBAL_ONLY | LOCK_TABLES;
    /// Names, in the order `SHOW GRANTS` prints them (MySQL's).
    pub const NAMES: [(u16, &str); 12] = [
        (SELECT, "SELECT"),
        (INSERT, "INSERT"),
        (UPDATE, "UPDATE"),
        (DELETE, "DELETE"),
        (CREATE, "CREATE"),
        (DROP, "DROP"),
        (PROCESS, "PROCESS"),
        (FILE, "FILE"),
        (INDEX, "INDEX"),
        (ALTER, "ALTER"),
        (SUPER, "SUPER"),
        (LOCK_TABLES, "LOCK TABLES"),
    ];

    /// The bit of a privilege name (upper case), if it is one we have.
    pub fn by_name(name: &str) -> Option<u16> {
        NAMES.iter().find(|(_, n)| *n == name).map(|(b, _)| *b)
    }

    /// `SELECT, INSERT` or `ALL PRIVILEGES` (when `bits` holds `all`,
    /// every privilege of its level: [`ALL_GLOBAL`], [`ALL_DB`] or
    /// [`ALL_OBJECT`]) or `USAGE` (none).
    pub fn list(bits: u16, all: u16) -> String {
        if bits == 0 {
            return "USAGE".into();
        }
        if bits & all == all {
            return "ALL PRIVILEGES".into();
        }
        NAMES
            .iter()
            .filter(|(b, _)| bits & b != 0)
            .map(|(_, n)| *n)
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// What a grant applies to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum GrantTarget {
    /// `*.*`
    Global,
    /// `db.*`
    Database(String),
    /// `db.table`
    Table(String, String),
}

impl std::fmt::Display for GrantTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let q = |s: &str| format!("`{}`", s.replace('`', "``"));
        match self {
            GrantTarget::Global => write!(f, "*.*"),
            GrantTarget::Database(d) => write!(f, "{}.*", q(d)),
            GrantTarget::Table(d, t) => write!(f, "{}.{}", q(d), q(t)),
        }
    }
}

/// One grant row: privileges on a target.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Grant {
    pub target: GrantTarget,
    pub privs: u16,
}

/// One account record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UserRecord {
    pub name: String,
    /// `%` (any client) or `localhost` (loopback clients and embedded
    /// sessions).
    pub host: String,
    /// `*` + 40 upper-case hex digits of `SHA1(SHA1(password))`; empty for
    /// an empty password.
    pub auth: String,
    pub grants: Vec<Grant>,
}

impl UserRecord {
    /// Privileges that apply to `db.table` (global ∪ database ∪ table).
    pub fn privs_on_table(&self, db: &str, table: &str) -> u16 {
        self.grants
            .iter()
            .filter(|g| match &g.target {
                GrantTarget::Global => true,
                GrantTarget::Database(d) => d == db,
                GrantTarget::Table(d, t) => d == db && t == table,
            })
            .fold(0, |a, g| a | g.privs)
    }

    /// Privileges that apply to the whole database `db` (global ∪ database).
    pub fn privs_on_db(&self, db: &str) -> u16 {
        self.grants
            .iter()
            .filter(|g| match &g.target {
                GrantTarget::Global => true,
                GrantTarget::Database(d) => d == db,
                GrantTarget::Table(..) => false,
            })
            .fold(0, |a, g| a | g.privs)
    }

    /// Whether the account holds any privilege on `db` or on one of its
    /// tables (what USE and SHOW DATABASES ask).
    pub fn any_in_db(&self, db: &str) -> bool {
        self.grants.iter().any(|g| {
            g.privs != 0
                && match &g.target {
                    GrantTarget::Global => true,
                    GrantTarget::Database(d) | GrantTarget::Table(d, _) => d == db,
                }
        })
    }

    /// Global privileges.
    pub fn global(&self) -> u16 {
        self.grants
            .iter()
            .filter(|g| g.target == GrantTarget::Global)
            .fold(0, |a, g| a | g.privs)
    }

    /// Add `bits` on `target`.
    pub fn grant(&mut self, target: &GrantTarget, bits: u16) {
        match self.grants.iter_mut().find(|g| &g.target == target) {
            Some(g) => g.privs |= bits,
            None => self.grants.push(Grant {
                target: target.clone(),
                privs: bits,
            }),
        }
    }

    /// Remove `bits` from `target`; false if the account has no grant row
    /// on `target` at all.
    pub fn revoke(&mut self, target: &GrantTarget, bits: u16) -> bool {
        let Some(g) = self.grants.iter_mut().find(|g| &g.target == target) else {
            return false;
        };
        g.privs &= !bits;
        self.grants.retain(|g| g.privs != 0);
        true
    }
}

fn corrupt(what: &str, e: impl std::fmt::Display) -> SqlError {
    SqlError::internal(format!("corrupt account record ({what}): {e}"))
}

/// The account record of `name`, if stored.
pub fn get_user(
    txn: &mut dyn Transaction,
    name: &str,
    lock: bool,
) -> SqlResult<Option<UserRecord>> {
    match txn.get(SYS_USERS, name.as_bytes(), lock)? {
        None => Ok(None),
        Some(b) => serde_json::from_slice(&b)
            .map(Some)
            .map_err(|e| corrupt(name, e)),
    }
}

/// Write (create or replace) an account record.
pub fn put_user(txn: &mut dyn Transaction, u: &UserRecord) -> SqlResult<()> {
    let b = serde_json::to_vec(u).map_err(|e| SqlError::internal(e.to_string()))?;
    txn.put(SYS_USERS, u.name.as_bytes(), b)?;
    Ok(())
}

/// Remove an account record.
pub fn delete_user(txn: &mut dyn Transaction, name: &str) -> SqlResult<()> {
    txn.delete(SYS_USERS, name.as_bytes())?;
    Ok(())
}

/// The `mysql_native_password` hash MySQL stores: `*` + upper-case hex of
/// `SHA1(SHA1(password))`; empty for an empty password.
pub fn native_password_hash(password: &str) -> String {
    if password.is_empty() {
        return String::new();
    }
    let stage1: [u8; 20] = sha1::Sha1::digest(password.as_bytes()).into();
    let stage2: [u8; 20] = sha1::Sha1::digest(stage1).into();
    let mut s = String::with_capacity(41);
    s.push('*');
    for b in stage2 {
        s.push_str(&format!("{b:02X}"));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn privilege_union_and_revoke() {
        let mut u = UserRecord {
            name: "u".into(),
            host: "%".into(),
            auth: String::new(),
            grants: vec![],
        };
        u.grant(&GrantTarget::Database("d".into()), privs::SELECT);
        u.grant(
            &GrantTarget::Table("d".into(), "t".into()),
            privs::INSERT | privs::DELETE,
        );
        assert_eq!(
            u.privs_on_table("d", "t"),
            privs::SELECT | privs::INSERT | privs::DELETE
        );
        assert_eq!(u.privs_on_table("d", "x"), privs::SELECT);
        assert_eq!(u.privs_on_table("e", "t"), 0);
        assert!(u.any_in_db("d") && !u.any_in_db("e"));
        assert!(u.revoke(&GrantTarget::Table("d".into(), "t".into()), privs::INSERT));
        assert_eq!(u.privs_on_table("d", "t"), privs::SELECT | privs::DELETE);
        assert!(!u.revoke(&GrantTarget::Global, privs::SELECT));
        assert_eq!(
            privs::list(privs::ALL_OBJECT, privs::ALL_OBJECT),
            "ALL PRIVILEGES"
        );
        assert_eq!(privs::list(privs::ALL_DB, privs::ALL_DB), "ALL PRIVILEGES");
        assert_eq!(
            privs::list(privs::ALL_OBJECT, privs::ALL_DB),
            "SELECT, INSERT, UPDATE, DELETE, CREATE, DROP, INDEX, ALTER"
        );
        assert_eq!(
            privs::list(privs::ALL_OBJECT, privs::ALL_GLOBAL),
            "SELECT, INSERT, UPDATE, DELETE, CREATE, DROP, INDEX, ALTER"
        );
        // MySQL's order: PROCESS after DROP, LOCK TABLES after SUPER.
        assert_eq!(
            privs::list(
                privs::SELECT | privs::SUPER | privs::PROCESS | privs::LOCK_TABLES,
                privs::ALL_GLOBAL
            ),
            "SELECT, PROCESS, SUPER, LOCK TABLES"
        );
        assert_eq!(privs::by_name("LOCK TABLES"), Some(privs::LOCK_TABLES));
    }
}
