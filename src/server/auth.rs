//! Users and `mysql_native_password` authentication.
//!
//! This module owns the user table of a running server (names, password
//! hashes, privilege) and the scramble check. It never stores or logs a
//! plain-text password: only `SHA1(SHA1(password))` is kept, as MySQL does.

use std::collections::HashMap;

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

struct UserEntry {
    /// `SHA1(SHA1(password))`, `None` for an empty password.
    stage2: Option<[u8; 20]>,
    privileged: bool,
}

/// The server's users. `root` (privileged, empty password) exists unless
/// overridden by a spec named `root`.
pub struct UserTable {
    users: HashMap<String, UserEntry>,
}

fn sha1(parts: &[&[u8]]) -> [u8; 20] {
    let mut h = Sha1::new();
    for p in parts {
        h.update(p);
    }
    h.finalize().into()
}

impl UserTable {
    /// Build the table from command-line specs (later specs win).
    pub fn new(specs: &[UserSpec]) -> Self {
        let mut users = HashMap::new();
        users.insert(
            "root".to_string(),
            UserEntry {
                stage2: None,
                privileged: true,
            },
        );
        for s in specs {
            let stage2 = if s.password.is_empty() {
                None
            } else {
                Some(sha1(&[&sha1(&[s.password.as_bytes()])]))
            };
            users.insert(
                s.name.clone(),
                UserEntry {
                    stage2,
                    privileged: s.name == "root",
                },
            );
        }
        UserTable { users }
    }

    /// Check a `mysql_native_password` response: `auth` must equal
    /// `SHA1(pw) XOR SHA1(salt + SHA1(SHA1(pw)))` (empty for an empty
    /// password). Returns the user's privilege on success.
    pub fn verify(&self, user: &str, salt: &[u8], auth: &[u8]) -> Option<bool> {
        let entry = self.users.get(user)?;
        match &entry.stage2 {
            None => auth.is_empty().then_some(entry.privileged),
            Some(stage2) => {
                if auth.len() != 20 {
                    return None;
                }
                let mask = sha1(&[salt, stage2]);
                let mut stage1 = [0u8; 20];
                for (i, b) in stage1.iter_mut().enumerate() {
                    *b = auth[i] ^ mask[i];
                }
                // Constant-time-ish comparison; the hash is not secret but
                // there is no reason to leak timing either.
                let got = sha1(&[&stage1]);
                let diff = got.iter().zip(stage2).fold(0u8, |a, (x, y)| a | (x ^ y));
                (diff == 0).then_some(entry.privileged)
            }
        }
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

    #[test]
    fn native_password_round_trip() {
        let t = UserTable::new(&["alice:secret".parse().unwrap()]);
        let salt = random_salt();
        let good = scramble_native("secret", &salt);
        assert_eq!(t.verify("alice", &salt, &good), Some(false));
        let bad = scramble_native("wrong", &salt);
        assert_eq!(t.verify("alice", &salt, &bad), None);
        assert_eq!(t.verify("alice", &salt, &[]), None);
        let other_salt = random_salt();
        if other_salt != salt {
            assert_eq!(t.verify("alice", &other_salt, &good), None);
        }
        assert_eq!(t.verify("bob", &salt, &good), None);
    }

    #[test]
    fn root_default_empty_password() {
        let t = UserTable::new(&[]);
        let salt = random_salt();
        assert_eq!(t.verify("root", &salt, &[]), Some(true));
        assert_eq!(t.verify("root", &salt, &scramble_native("x", &salt)), None);
        let t = UserTable::new(&["root:pw".parse().unwrap()]);
        assert_eq!(t.verify("root", &salt, &[]), None);
        assert_eq!(
            t.verify("root", &salt, &scramble_native("pw", &salt)),
            Some(true)
        );
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
