//! Users and `mysql_native_password` authentication.
//!
//! This module owns login (the scramble check against the stored account
//! records of `crate::catalog::users`) and the `--user` flags. It never stores or logs a
//! plain-text password: only `SHA1(SHA1(password))` is kept, as MySQL does.

use sha1::{Digest, Sha1};
use thiserror::Error;

/// Length of the server's random challenge (scramble).
pub const SALT_LEN: usize = 20;

/// A malformed `--user` specification.
#[derive(Debug, Error, PartialEq)]
pub enum UserSpecError {
    #[error("user spec {0:?} must be NAME:PASSWORD")]
    MissingColon(String),
    #[error("user spec {0:?} has an empty name")]
    EmptyName(String),
}

/// A user as given on the command line (`name:password`).
#[derive(Clone, PartialEq)]
pub struct UserSpec {
    pub name: String,
    pub password: String,
}

impl std::fmt::Debug for UserSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UserSpec")
            .field("name", &self.name)
            .field("password", &"<redacted>")
            .finish()
    }
}

impl std::str::FromStr for UserSpec {
    type Err = UserSpecError;

    /// `name:password`; the password may itself contain `:` and may be empty.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let (name, password) = s
            .split_once(':')
            .ok_or_else(|| UserSpecError::MissingColon(s.to_string()))?;
        if name.is_empty() {
            return Err(UserSpecError::EmptyName(s.to_string()));
        }
        Ok(UserSpec {
            name: name.to_string(),
            password: password.to_string(),
        })
    }
}

/// The server's accounts: a view of the `mo_catalog.mo_user` records of
/// the database (read at every login, so CREATE USER / ALTER USER / DROP
/// USER take effect for the next connection). `root` exists even without a
/// record (empty password).
pub struct UserTable {
    db: crate::db::Database,
}

fn sha1(parts: &[&[u8]]) -> [u8; 20] {
    let mut h = Sha1::new();
    for p in parts {
        h.update(p);
    }
    h.finalize().into()
}

pub use crate::catalog::users::native_password_hash;

fn parse_hash(stored: &str) -> Option<[u8; 20]> {
    let hex = stored.strip_prefix('*')?;
    if hex.len() != 40 {
        return None;
    }
    let mut out = [0u8; 20];
    for (i, o) in out.iter_mut().enumerate() {
        *o = u8::from_str_radix(hex.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    Some(out)
}

/// Check a `mysql_native_password` response against a stored hash: `auth`
/// must equal `SHA1(pw) XOR SHA1(salt + SHA1(SHA1(pw)))` (empty for an
/// empty password).
pub fn verify_native(stored: &str, salt: &[u8], auth: &[u8]) -> bool {
    if stored.is_empty() {
        return auth.is_empty();
    }
    let Some(stage2) = parse_hash(stored) else {
        return false;
    };
    if auth.len() != 20 {
        return false;
    }
    let mask = sha1(&[salt, &stage2]);
    let mut stage1 = [0u8; 20];
    for (i, b) in stage1.iter_mut().enumerate() {
        *b = auth[i] ^ mask[i];
    }
    let got = sha1(&[&stage1]);
    got.iter().zip(stage2).fold(0u8, |a, (x, y)| a | (x ^ y)) == 0
}

/// Whether an account host (`%` or `localhost`) admits a client from
/// `peer` (an IP address, or `localhost` for embedded sessions).
pub fn host_matches(account_host: &str, peer: &str) -> bool {
    match account_host {
        "%" => true,
        "localhost" => {
            peer == "localhost"
                || peer
                    .parse::<std::net::IpAddr>()
                    .is_ok_and(|ip| ip.is_loopback())
        }
        _ => false,
    }
}

impl UserTable {
    /// The accounts of `db`, after applying the command-line specs: each
    /// `--user NAME:PASSWORD` creates the account `NAME`@`%` if it does not
    /// exist — with every privilege except SUPER on `*.*` — and sets its
    /// password (at every start). `root` always has every privilege.
    pub fn open(db: crate::db::Database, specs: &[UserSpec]) -> crate::error::SqlResult<Self> {
        use crate::catalog::users::{self, privs, GrantTarget, UserRecord};
        if !specs.is_empty() {
            let engine = db.engine().clone();
            let mut txn = engine.storage.begin(Default::default())?;
            for s in specs {
                let rec = match users::get_user(txn.as_mut(), &s.name, true)? {
                    Some(mut u) => {
                        u.auth = native_password_hash(&s.password);
                        u
                    }
                    None => {
                        let mut u = UserRecord {
                            name: s.name.clone(),
                            host: "%".into(),
                            auth: native_password_hash(&s.password),
                            grants: vec![],
                        };
                        if s.name != users::ROOT {
                            u.grant(&GrantTarget::Global, privs::ALL_GLOBAL & !privs::SUPER);
                        }
                        u
                    }
                };
                users::put_user(txn.as_mut(), &rec)?;
            }
            txn.commit()?;
        }
        Ok(UserTable { db })
    }

    /// Check a login of `user` from `peer_host` with `mysql_native_password`
    /// response `auth`. Returns whether the account is the superuser
    /// (`root`) on success, `None` for an unknown user, a host the account
    /// does not admit, or a wrong password (all error 1045).
    pub fn verify(&self, user: &str, peer_host: &str, salt: &[u8], auth: &[u8]) -> Option<bool> {
        self.check(user, peer_host, salt, auth).ok().flatten()
    }

    /// [`UserTable::verify`], telling a storage failure (the account could
    /// not be read: PostgreSQL away, MySQL 1030) apart from a refusal.
    pub fn check(
        &self,
        user: &str,
        peer_host: &str,
        salt: &[u8],
        auth: &[u8],
    ) -> crate::error::SqlResult<Option<bool>> {
        let engine = self.db.engine();
        let rec = {
            let mut txn = engine.storage.begin(Default::default())?;
            let r = crate::catalog::users::get_user(txn.as_mut(), user, false);
            txn.rollback();
            r?
        };
        let (host, stored) = match &rec {
            Some(u) => (u.host.as_str(), u.auth.as_str()),
            None if user == crate::catalog::users::ROOT => ("%", ""),
            None => return Ok(None),
        };
        Ok(
            (host_matches(host, peer_host) && verify_native(stored, salt, auth))
                .then_some(user == crate::catalog::users::ROOT),
        )
    }
}

/// A fresh random scramble: printable ASCII without `$` (and never NUL,
/// which would end the handshake field). Falls back to a time-derived
/// value only if the OS random source fails.
pub fn random_salt() -> [u8; SALT_LEN] {
    let mut raw = [0u8; SALT_LEN];
    if getrandom::fill(&mut raw).is_err() {
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        let h = sha1(&[&t.to_le_bytes()]);
        raw.copy_from_slice(&h);
    }
    let mut out = [0u8; SALT_LEN];
    for (o, r) in out.iter_mut().zip(raw) {
        let mut c = 0x21 + (r % 94);
        if c == b'$' {
            c += 1;
        }
        *o = c;
    }
    out
}

/// The client side of `mysql_native_password` (used by tests).
pub fn scramble_native(password: &str, salt: &[u8]) -> Vec<u8> {
    if password.is_empty() {
        return Vec::new();
    }
    let stage1 = sha1(&[password.as_bytes()]);
    let stage2 = sha1(&[&stage1]);
    let mask = sha1(&[salt, &stage2]);
    stage1.iter().zip(mask).map(|(a, b)| a ^ b).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(specs: &[&str]) -> (tempfile::TempDir, UserTable) {
        let dir = tempfile::tempdir().unwrap();
        let db = crate::db::Database::open(dir.path()).unwrap();
        let specs: Vec<UserSpec> = specs.iter().map(|s| s.parse().unwrap()).collect();
        (dir, UserTable::open(db, &specs).unwrap())
    }

    #[test]
    fn native_password_round_trip() {
        let (_d, t) = table(&["alice:secret"]);
        let salt = random_salt();
        let good = scramble_native("secret", &salt);
        assert_eq!(t.verify("alice", "10.0.0.1", &salt, &good), Some(false));
        let bad = scramble_native("wrong", &salt);
        assert_eq!(t.verify("alice", "127.0.0.1", &salt, &bad), None);
        assert_eq!(t.verify("alice", "127.0.0.1", &salt, &[]), None);
        let other_salt = random_salt();
        if other_salt != salt {
            assert_eq!(t.verify("alice", "127.0.0.1", &other_salt, &good), None);
        }
        assert_eq!(t.verify("bob", "127.0.0.1", &salt, &good), None);
    }

    #[test]
    fn root_default_empty_password() {
        let (_d, t) = table(&[]);
        let salt = random_salt();
        assert_eq!(t.verify("root", "127.0.0.1", &salt, &[]), Some(true));
        assert_eq!(
            t.verify("root", "127.0.0.1", &salt, &scramble_native("x", &salt)),
            None
        );
        let (_d, t) = table(&["root:pw"]);
        assert_eq!(t.verify("root", "127.0.0.1", &salt, &[]), None);
        assert_eq!(
            t.verify("root", "127.0.0.1", &salt, &scramble_native("pw", &salt)),
            Some(true)
        );
    }

    #[test]
    fn hosts() {
        assert!(host_matches("%", "192.0.2.1"));
        assert!(host_matches("localhost", "127.0.0.1"));
        assert!(host_matches("localhost", "::1"));
        assert!(host_matches("localhost", "localhost"));
        assert!(!host_matches("localhost", "192.0.2.1"));
        assert!(!host_matches("192.0.2.1", "192.0.2.1"));
        assert_eq!(
            native_password_hash("secret"),
            "*14E65567ABDB5135D0CFD9A70B3032C179A49EE7"
        );
        assert_eq!(native_password_hash(""), "");
    }

    #[test]
    fn known_vector() {
        // SHA1(SHA1("secret")) as MySQL's PASSWORD() shows it (without '*').
        let stage2 = sha1(&[&sha1(&[b"secret"])]);
        let hex: String = stage2.iter().map(|b| format!("{b:02X}")).collect();
        assert_eq!(hex, "14E65567ABDB5135D0CFD9A70B3032C179A49EE7");
    }

    #[test]
    fn salt_is_printable() {
        let s = random_salt();
        assert!(s.iter().all(|&c| (0x21..0x7f).contains(&c) && c != b'$'));
    }

    #[test]
    fn user_spec_parsing() {
        let u: UserSpec = "bob:a:b".parse().unwrap();
        assert_eq!((u.name.as_str(), u.password.as_str()), ("bob", "a:b"));
        assert!("bob".parse::<UserSpec>().is_err());
        assert!(":pw".parse::<UserSpec>().is_err());
        assert!(!format!("{u:?}").contains("a:b"));
    }
}
