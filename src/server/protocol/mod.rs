//! Tributary's own implementation of the MySQL client/server protocol
//! (the subset MySQL 8 clients and drivers use).
//!
//! This module owns the bytes on the wire: packet framing and sequence ids
//! ([`packet`]), the connection phase ([`handshake`]), command decoding
//! ([`command`]), result-set, OK/EOF and column-definition encoding
//! ([`resultset`]) and error codes with their SQLSTATE ([`codes`]). It never
//! executes SQL, never touches a [`crate::Session`] and never spawns tasks:
//! `super::conn` drives a connection with these building blocks.

pub mod codes;
pub mod command;
pub mod handshake;
pub mod packet;
pub mod resultset;

/// Capability flags (`CLIENT_*` in the MySQL documentation).
#[allow(dead_code, reason = "the protocol's table, listed whole")]
pub mod caps {
    pub const LONG_PASSWORD: u32 = 1;
    pub const FOUND_ROWS: u32 = 1 << 1;
    pub const LONG_FLAG: u32 = 1 << 2;
    pub const CONNECT_WITH_DB: u32 = 1 << 3;
    pub const NO_SCHEMA: u32 = 1 << 4;
    pub const COMPRESS: u32 = 1 << 5;
    pub const LOCAL_FILES: u32 = 1 << 7;
    pub const IGNORE_SPACE: u32 = 1 << 8;
    pub const PROTOCOL_41: u32 = 1 << 9;
    pub const INTERACTIVE: u32 = 1 << 10;
    pub const SSL: u32 = 1 << 11;
    pub const IGNORE_SIGPIPE: u32 = 1 << 12;
    pub const TRANSACTIONS: u32 = 1 << 13;
    pub const RESERVED2: u32 = 1 << 15;
    /// Same bit as `RESERVED2` (CLIENT_SECURE_CONNECTION in old docs).
    pub const SECURE_CONNECTION: u32 = 1 << 15;
    pub const MULTI_STATEMENTS: u32 = 1 << 16;
    pub const MULTI_RESULTS: u32 = 1 << 17;
    pub const PS_MULTI_RESULTS: u32 = 1 << 18;
    pub const PLUGIN_AUTH: u32 = 1 << 19;
    pub const CONNECT_ATTRS: u32 = 1 << 20;
    pub const PLUGIN_AUTH_LENENC_CLIENT_DATA: u32 = 1 << 21;
    pub const SESSION_TRACK: u32 = 1 << 23;
    pub const DEPRECATE_EOF: u32 = 1 << 24;
    pub const QUERY_ATTRIBUTES: u32 = 1 << 27;

    /// What this server offers. No SSL, compression, session tracking or
    /// query attributes. LOCAL_FILES: `LOAD DATA LOCAL` (the global
    /// `local_infile` decides whether a load may use it).
    pub const SERVER: u32 = LONG_PASSWORD
        | FOUND_ROWS
        | LONG_FLAG
        | CONNECT_WITH_DB
        | NO_SCHEMA
        | LOCAL_FILES
        | IGNORE_SPACE
        | PROTOCOL_41
        | INTERACTIVE
        | IGNORE_SIGPIPE
        | TRANSACTIONS
        | SECURE_CONNECTION
        | MULTI_STATEMENTS
        | MULTI_RESULTS
        | PS_MULTI_RESULTS
        | PLUGIN_AUTH
        | CONNECT_ATTRS
        | PLUGIN_AUTH_LENENC_CLIENT_DATA
        | DEPRECATE_EOF;
}

/// Server status flags sent in OK and EOF packets (`SERVER_*`).
#[allow(dead_code, reason = "the protocol's table, listed whole")]
pub mod status {
    pub const IN_TRANS: u16 = 0x0001;
    pub const AUTOCOMMIT: u16 = 0x0002;
    pub const MORE_RESULTS_EXISTS: u16 = 0x0008;
    pub const NO_INDEX_USED: u16 = 0x0020;

    /// The flags for a session in state (`in_transaction`, `autocommit`),
    /// with `more` results of a multi-statement still to come.
    pub fn flags(in_transaction: bool, autocommit: bool, more: bool) -> u16 {
        let mut s = 0;
        if in_transaction {
            s |= IN_TRANS;
        }
        if autocommit {
            s |= AUTOCOMMIT;
        }
        if more {
            s |= MORE_RESULTS_EXISTS;
        }
        s
    }
}

/// The one character set this server speaks: utf8mb4 (utf8mb4_general_ci,
/// known to every client, old MariaDB ones included).
pub const UTF8MB4_GENERAL_CI: u8 = 45;
/// The `binary` character set (numbers and temporal columns).
pub const BINARY_CHARSET: u16 = 63;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_bits() {
        assert_eq!(status::flags(false, true, false), 0x0002);
        assert_eq!(status::flags(true, false, false), 0x0001);
        assert_eq!(status::flags(true, true, true), 0x000b);
        assert_eq!(caps::SERVER & caps::SSL, 0);
        assert_ne!(caps::SERVER & caps::DEPRECATE_EOF, 0);
    }
}
