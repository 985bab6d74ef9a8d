//! Error codes the protocol layer raises itself, the SQLSTATE of every
//! code, and the ERR packet.
//!
//! This module owns the mapping code → SQLSTATE on the wire (the engine's
//! codes from [`crate::error::code`] plus the protocol's own) and the ERR
//! packet layout. It never decides *which* error a situation deserves; it
//! never rewrites a code (an engine error goes out with its own code).

use super::packet::MAX_PIECE;
use crate::error::{code, SqlError};

/// ER_CON_COUNT_ERROR.
pub const TOO_MANY_CONNECTIONS: u16 = code::TOO_MANY_CONNECTIONS;
/// ER_OUT_OF_RESOURCES.
pub const OUT_OF_RESOURCES: u16 = 1041;
/// ER_HANDSHAKE_ERROR ("Bad handshake").
pub const HANDSHAKE_ERROR: u16 = 1043;
/// ER_ACCESS_DENIED_ERROR.
pub const ACCESS_DENIED: u16 = code::ACCESS_DENIED;
/// ER_UNKNOWN_COM_ERROR.
pub const UNKNOWN_COM: u16 = 1047;
/// ER_BAD_DB_ERROR.
pub const BAD_DB: u16 = code::BAD_DB;
/// ER_EMPTY_QUERY.
pub const EMPTY_QUERY: u16 = 1065;
/// ER_PARSE_ERROR.
pub const PARSE: u16 = code::PARSE;
/// ER_NET_PACKET_TOO_LARGE.
pub const NET_PACKET_TOO_LARGE: u16 = code::NET_PACKET_TOO_LARGE;
/// ER_NET_READ_INTERRUPTED ("Got timeout reading communication packets").
pub const NET_READ_INTERRUPTED: u16 = 1159;
/// ER_WRONG_ARGUMENTS.
pub const WRONG_ARGUMENTS: u16 = code::WRONG_ARGUMENTS;
/// ER_UNKNOWN_STMT_HANDLER.
pub const UNKNOWN_STMT_HANDLER: u16 = 1243;
/// ER_INVALID_CHARACTER_STRING.
pub const INVALID_CHARACTER_STRING: u16 = 1300;
/// ER_PS_MANY_PARAM.
pub const PS_MANY_PARAM: u16 = 1390;
/// ER_MALFORMED_PACKET.
pub const MALFORMED_PACKET: u16 = 1835;
/// ER_CLIENT_INTERACTION_TIMEOUT: an idle session passed `wait_timeout` /
/// `interactive_timeout` and is closed (MySQL 8.0.24+ sends it first).
pub const CLIENT_INTERACTION_TIMEOUT: u16 = 4031;
/// ER_TOO_MANY_USER_CONNECTIONS: the account has `max_user_connections`.
pub const TOO_MANY_USER_CONNECTIONS: u16 = 1203;
/// ER_MAX_PREPARED_STMT_COUNT_REACHED.
pub const MAX_PREPARED_STMT_COUNT_REACHED: u16 = 1461;

/// SQLSTATE for `code`: the protocol's codes here, the engine's from
/// [`crate::error::sqlstate_for`] (HY000 for anything unknown).
pub fn sqlstate(c: u16) -> &'static str {
    match c {
        HANDSHAKE_ERROR | UNKNOWN_COM | NET_PACKET_TOO_LARGE | NET_READ_INTERRUPTED => "08S01",
        OUT_OF_RESOURCES => "HY000",
        TOO_MANY_CONNECTIONS => "08004",
        ACCESS_DENIED => "28000",
        BAD_DB | EMPTY_QUERY | PARSE => "42000",
        UNKNOWN_STMT_HANDLER | INVALID_CHARACTER_STRING | PS_MANY_PARAM | MALFORMED_PACKET => {
            "HY000"
        }
        MAX_PREPARED_STMT_COUNT_REACHED => "42000",
        other => crate::error::sqlstate_for(other),
    }
}

/// An error to send: code, SQLSTATE and message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WireError {
    pub code: u16,
    pub sqlstate: &'static str,
    pub message: String,
}

impl WireError {
    pub fn new(code: u16, message: impl Into<String>) -> Self {
        WireError {
            code,
            sqlstate: sqlstate(code),
            message: message.into(),
        }
    }

    /// ERR packet payload (protocol 4.1 layout: `#` and SQLSTATE).
    pub fn payload(&self) -> Vec<u8> {
        let mut p = Vec::with_capacity(9 + self.message.len());
        p.push(0xff);
        p.extend_from_slice(&self.code.to_le_bytes());
        p.push(b'#');
        let mut state = *b"HY000";
        if self.sqlstate.len() == 5 {
            state.copy_from_slice(self.sqlstate.as_bytes());
        }
        p.extend_from_slice(&state);
        let max = MAX_PIECE - p.len();
        let mut msg = &self.message[..];
        if msg.len() > max {
            let mut end = max;
            while !msg.is_char_boundary(end) {
                end -= 1;
            }
            msg = &msg[..end];
        }
        p.extend_from_slice(msg.as_bytes());
        p
    }
}

impl From<&SqlError> for WireError {
    /// The engine's error with its own code and SQLSTATE, never wrapped.
    fn from(e: &SqlError) -> Self {
        let sqlstate = if e.sqlstate.len() == 5 {
            e.sqlstate
        } else {
            sqlstate(e.code)
        };
        WireError {
            code: e.code,
            sqlstate,
            message: e.message.clone(),
        }
    }
}

/// A full framed ERR packet with sequence id `seq` (for refusals written
/// before any protocol state exists).
pub fn error_frame(seq: u8, e: &WireError) -> Vec<u8> {
    let p = e.payload();
    let mut out = Vec::with_capacity(4 + p.len());
    out.extend_from_slice(&(p.len() as u32).to_le_bytes()[..3]);
    out.push(seq);
    out.extend_from_slice(&p);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_packet_layout() {
        let p = error_frame(0, &WireError::new(1040, "Too many connections"));
        assert_eq!(&p[..4], &[29, 0, 0, 0]);
        assert_eq!(&p[4..13], b"\xff\x10\x04#08004");
        assert!(p.ends_with(b"Too many connections"));
    }

    #[test]
    fn engine_codes_keep_their_code_and_state() {
        for (c, state) in [
            (1054, "42S22"),
            (1146, "42S02"),
            (1235, "42000"),
            (1191, "HY000"),
            (1062, "23000"),
            (4000, "HY000"),
        ] {
            let w = WireError::from(&SqlError::new(c, "m"));
            assert_eq!((w.code, w.sqlstate), (c, state));
            assert_eq!(&w.payload()[..3], &[0xff, c as u8, (c >> 8) as u8]);
        }
        assert_eq!(sqlstate(1047), "08S01");
        assert_eq!(sqlstate(1045), "28000");
    }

    #[test]
    fn long_messages_are_cut_on_a_char_boundary() {
        let w = WireError::new(1105, "é".repeat(MAX_PIECE));
        let p = w.payload();
        assert!(p.len() <= MAX_PIECE);
        assert!(std::str::from_utf8(&p[9..]).is_ok());
    }
}
