//! The connection phase: the server's HandshakeV10 greeting, the client's
//! HandshakeResponse41, the AuthSwitchRequest to `mysql_native_password`,
//! and the COM_CHANGE_USER payload (which re-runs authentication).
//!
//! This module owns the layouts of those packets and capability
//! negotiation. It never checks a password (see [`crate::server::auth`])
//! and never does I/O.

use thiserror::Error;

use super::caps;
use super::packet::{Cursor, Malformed};

/// The only authentication method this server verifies.
pub const NATIVE_PASSWORD: &str = "mysql_native_password";

/// Why a handshake response was refused.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum HandshakeError {
    #[error("malformed handshake response")]
    Malformed,
    /// Pre-4.1 clients (protocol 3.20) are not supported.
    #[error("client does not speak protocol 4.1")]
    OldProtocol,
    /// The client asked for TLS, which this server does not offer.
    #[error("client requested SSL, which this server does not offer")]
    SslRequested,
}

impl From<Malformed> for HandshakeError {
    fn from(_: Malformed) -> Self {
        HandshakeError::Malformed
    }
}

/// HandshakeV10 payload. `salt` is the 20-byte scramble.
pub fn greeting(conn_id: u32, version: &str, salt: &[u8; 20], status: u16, charset: u8) -> Vec<u8> {
    let mut p = Vec::with_capacity(80 + version.len());
    p.push(10);
    p.extend_from_slice(version.as_bytes());
    p.push(0);
    p.extend_from_slice(&conn_id.to_le_bytes());
    p.extend_from_slice(&salt[..8]);
    p.push(0);
    p.extend_from_slice(&(caps::SERVER as u16).to_le_bytes());
    p.push(charset);
    p.extend_from_slice(&status.to_le_bytes());
    p.extend_from_slice(&((caps::SERVER >> 16) as u16).to_le_bytes());
    p.push(21); // length of the whole scramble plus its NUL
    p.extend_from_slice(&[0; 10]);
    p.extend_from_slice(&salt[8..]);
    p.push(0);
    p.extend_from_slice(NATIVE_PASSWORD.as_bytes());
    p.push(0);
    p
}

/// A parsed HandshakeResponse41.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HandshakeResponse {
    /// The client's flags intersected with the server's.
    pub caps: u32,
    pub charset: u8,
    pub user: Vec<u8>,
    pub auth: Vec<u8>,
    pub database: Option<Vec<u8>>,
    /// The client's auth plugin, if it named one.
    pub plugin: Option<String>,
}

/// Parse a HandshakeResponse41.
pub fn parse_response(payload: &[u8]) -> Result<HandshakeResponse, HandshakeError> {
    let mut c = Cursor::new(payload);
    if payload.len() < 4 {
        return Err(HandshakeError::Malformed);
    }
    let client = c.u32()?;
    if client & caps::PROTOCOL_41 == 0 {
        return Err(HandshakeError::OldProtocol);
    }
    if client & caps::SSL != 0 {
        return Err(HandshakeError::SslRequested);
    }
    let negotiated = client & caps::SERVER;
    let _max_packet = c.u32()?;
    let charset = c.u8()?;
    c.take(23)?;
    let user = c.nul_bytes()?.to_vec();
    let auth = if negotiated & caps::PLUGIN_AUTH_LENENC_CLIENT_DATA != 0 {
        c.lenenc_bytes()?.to_vec()
    } else if negotiated & caps::SECURE_CONNECTION != 0 {
        let n = usize::from(c.u8()?);
        c.take(n)?.to_vec()
    } else {
        c.nul_bytes()?.to_vec()
    };
    let mut database = None;
    if negotiated & caps::CONNECT_WITH_DB != 0 && !c.is_empty() {
        let db = c.nul_or_eof_bytes();
        if !db.is_empty() {
            database = Some(db.to_vec());
        }
    }
    let mut plugin = None;
    if negotiated & caps::PLUGIN_AUTH != 0 && !c.is_empty() {
        plugin = Some(String::from_utf8_lossy(c.nul_or_eof_bytes()).into_owned());
    }
    // Connection attributes (if any) are accepted and ignored.
    Ok(HandshakeResponse {
        caps: negotiated,
        charset,
        user,
        auth,
        database,
        plugin,
    })
}

/// AuthSwitchRequest to `plugin` with a fresh scramble.
pub fn auth_switch_request(plugin: &str, salt: &[u8; 20]) -> Vec<u8> {
    let mut p = Vec::with_capacity(2 + plugin.len() + 21);
    p.push(0xfe);
    p.extend_from_slice(plugin.as_bytes());
    p.push(0);
    p.extend_from_slice(salt);
    p.push(0);
    p
}

/// A COM_CHANGE_USER request (command byte already stripped).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangeUser {
    pub user: Vec<u8>,
    pub auth: Vec<u8>,
    pub database: Option<Vec<u8>>,
    pub plugin: Option<String>,
}

/// Parse COM_CHANGE_USER's body with the connection's negotiated `caps`.
pub fn parse_change_user(body: &[u8], negotiated: u32) -> Result<ChangeUser, HandshakeError> {
    let mut c = Cursor::new(body);
    let user = c.nul_bytes()?.to_vec();
    let auth = if negotiated & caps::SECURE_CONNECTION != 0 {
        let n = usize::from(c.u8()?);
        c.take(n)?.to_vec()
    } else {
        c.nul_bytes()?.to_vec()
    };
    let db = c.nul_or_eof_bytes();
    let database = (!db.is_empty()).then(|| db.to_vec());
    let mut plugin = None;
    if c.remaining() >= 2 {
        let _charset = c.u16()?;
        if negotiated & caps::PLUGIN_AUTH != 0 && !c.is_empty() {
            plugin = Some(String::from_utf8_lossy(c.nul_or_eof_bytes()).into_owned());
        }
    }
    Ok(ChangeUser {
        user,
        auth,
        database,
        plugin,
    })
}

/// Whether the client must be switched to `mysql_native_password`: it
/// named another plugin (e.g. `caching_sha2_password`).
pub fn needs_switch(plugin: Option<&str>) -> bool {
    plugin.is_some_and(|p| !p.is_empty() && p != NATIVE_PASSWORD)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn response(
        client_caps: u32,
        user: &[u8],
        auth: &[u8],
        db: Option<&str>,
        plugin: &str,
    ) -> Vec<u8> {
        let mut p = client_caps.to_le_bytes().to_vec();
        p.extend_from_slice(&(1u32 << 24).to_le_bytes());
        p.push(45);
        p.extend_from_slice(&[0; 23]);
        p.extend_from_slice(user);
        p.push(0);
        p.push(auth.len() as u8);
        p.extend_from_slice(auth);
        if let Some(db) = db {
            p.extend_from_slice(db.as_bytes());
            p.push(0);
        }
        p.extend_from_slice(plugin.as_bytes());
        p.push(0);
        p
    }

    #[test]
    fn greeting_layout() {
        let salt = *b"abcdefghijklmnopqrst";
        let g = greeting(7, "8.0.36-x", &salt, 2, 45);
        assert_eq!(g[0], 10);
        assert_eq!(&g[1..10], b"8.0.36-x\0");
        assert_eq!(&g[10..14], &7u32.to_le_bytes());
        assert_eq!(&g[14..22], b"abcdefgh");
        let lo = u16::from_le_bytes([g[23], g[24]]);
        let hi = u16::from_le_bytes([g[28], g[29]]);
        assert_eq!(u32::from(lo) | u32::from(hi) << 16, caps::SERVER);
        assert_eq!(g[25], 45);
        assert_eq!(u16::from_le_bytes([g[26], g[27]]), 2);
        assert_eq!(g[30], 21);
        assert_eq!(&g[41..54], b"ijklmnopqrst\0");
        assert_eq!(&g[54..], b"mysql_native_password\0");
    }

    #[test]
    fn parses_response_with_and_without_db() {
        let c =
            caps::PROTOCOL_41 | caps::SECURE_CONNECTION | caps::PLUGIN_AUTH | caps::CONNECT_WITH_DB;
        let r = parse_response(&response(
            c,
            b"alice",
            &[1; 20],
            Some("d"),
            "caching_sha2_password",
        ))
        .unwrap();
        assert_eq!(r.user, b"alice");
        assert_eq!(r.auth, vec![1; 20]);
        assert_eq!(r.database.as_deref(), Some(&b"d"[..]));
        assert_eq!(r.plugin.as_deref(), Some("caching_sha2_password"));
        assert!(needs_switch(r.plugin.as_deref()));
        let c2 = caps::PROTOCOL_41 | caps::SECURE_CONNECTION | caps::PLUGIN_AUTH;
        let r = parse_response(&response(c2, b"root", &[], None, NATIVE_PASSWORD)).unwrap();
        assert_eq!(r.database, None);
        assert!(r.auth.is_empty());
        assert!(!needs_switch(r.plugin.as_deref()));
        assert_eq!(r.caps & caps::CONNECT_WITH_DB, 0);
    }

    #[test]
    fn rejects_malformed_old_and_ssl() {
        let c = caps::PROTOCOL_41 | caps::SECURE_CONNECTION;
        let mut p = response(c, b"bob", &[], None, "");
        // User name without its NUL terminator.
        p.truncate(32 + 3);
        assert_eq!(parse_response(&p), Err(HandshakeError::Malformed));
        assert_eq!(parse_response(&[1, 2]), Err(HandshakeError::Malformed));
        let p = response(caps::SECURE_CONNECTION, b"bob", &[], None, "");
        assert_eq!(parse_response(&p), Err(HandshakeError::OldProtocol));
        let p = response(c | caps::SSL, b"bob", &[], None, "");
        assert_eq!(parse_response(&p), Err(HandshakeError::SslRequested));
        // Auth length past the end of the packet.
        let mut p = response(c, b"bob", &[], None, "");
        p[32 + 4] = 200;
        assert_eq!(parse_response(&p), Err(HandshakeError::Malformed));
    }

    #[test]
    fn lenenc_auth_data() {
        let c = caps::PROTOCOL_41 | caps::SECURE_CONNECTION | caps::PLUGIN_AUTH_LENENC_CLIENT_DATA;
        let p = response(c, b"u", &[9; 3], None, "");
        let r = parse_response(&p).unwrap();
        assert_eq!(r.auth, vec![9; 3]);
    }

    #[test]
    fn change_user_and_switch() {
        let mut b = b"bob\0".to_vec();
        b.push(20);
        b.extend_from_slice(&[3; 20]);
        b.extend_from_slice(b"db1\0");
        b.extend_from_slice(&45u16.to_le_bytes());
        b.extend_from_slice(b"mysql_native_password\0");
        let negotiated = caps::SERVER;
        let cu = parse_change_user(&b, negotiated).unwrap();
        assert_eq!(cu.user, b"bob");
        assert_eq!(cu.auth, vec![3; 20]);
        assert_eq!(cu.database.as_deref(), Some(&b"db1"[..]));
        assert_eq!(cu.plugin.as_deref(), Some(NATIVE_PASSWORD));
        assert_eq!(
            parse_change_user(b"bob", negotiated),
            Err(HandshakeError::Malformed)
        );
        let s = auth_switch_request(NATIVE_PASSWORD, b"01234567890123456789");
        assert_eq!(s[0], 0xfe);
        assert_eq!(&s[1..23], b"mysql_native_password\0");
        assert_eq!(&s[23..], b"01234567890123456789\0");
    }
}
