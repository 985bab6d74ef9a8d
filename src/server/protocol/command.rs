//! Command-phase requests: the command byte and its arguments, and the
//! parameter block of COM_STMT_EXECUTE.
//!
//! This module owns the request layouts of every command the server
//! understands and decodes binary-protocol parameters into
//! [`Param`]s. It never executes anything, never answers (see
//! `crate::server::conn`) and never allocates more than the packet it was
//! given already holds.

use std::collections::HashMap;

use thiserror::Error;

use super::packet::{Cursor, Malformed};
use super::resultset::types;
use crate::sql::params::{self, Param};

/// Command bytes (`COM_*`).
pub mod com {
    pub const SLEEP: u8 = 0x00;
    pub const QUIT: u8 = 0x01;
    pub const INIT_DB: u8 = 0x02;
    pub const QUERY: u8 = 0x03;
    pub const FIELD_LIST: u8 = 0x04;
    pub const STATISTICS: u8 = 0x09;
    pub const PROCESS_KILL: u8 = 0x0c;
    pub const PING: u8 = 0x0e;
    pub const CHANGE_USER: u8 = 0x11;
    pub const STMT_PREPARE: u8 = 0x16;
    pub const STMT_EXECUTE: u8 = 0x17;
    pub const STMT_SEND_LONG_DATA: u8 = 0x18;
    pub const STMT_CLOSE: u8 = 0x19;
    pub const STMT_RESET: u8 = 0x1a;
    pub const SET_OPTION: u8 = 0x1b;
    pub const RESET_CONNECTION: u8 = 0x1f;
}

/// One decoded request.
#[derive(Debug, PartialEq, Eq)]
pub enum Command<'a> {
    Quit,
    InitDb(&'a [u8]),
    Query(&'a [u8]),
    FieldList {
        table: &'a [u8],
    },
    Statistics,
    Ping,
    ChangeUser(&'a [u8]),
    ResetConnection,
    SetOption(u16),
    StmtPrepare(&'a [u8]),
    StmtExecute {
        id: u32,
        params: &'a [u8],
    },
    StmtSendLongData {
        id: u32,
        param: u16,
        data: &'a [u8],
    },
    StmtClose(u32),
    StmtReset(u32),
    /// COM_PROCESS_KILL: `KILL CONNECTION id`.
    ProcessKill(u32),
    /// A command byte this server does not implement (error 1047).
    Unknown(u8),
    /// A known command whose arguments are truncated.
    Malformed(u8),
}

impl<'a> Command<'a> {
    /// Decode a command-phase packet.
    pub fn parse(payload: &'a [u8]) -> Command<'a> {
        let Some((&byte, body)) = payload.split_first() else {
            return Command::Unknown(com::SLEEP);
        };
        Self::parse_body(byte, body).unwrap_or(Command::Malformed(byte))
    }

    fn parse_body(byte: u8, body: &'a [u8]) -> Result<Command<'a>, Malformed> {
        let mut c = Cursor::new(body);
        Ok(match byte {
            com::QUIT => Command::Quit,
            com::INIT_DB => Command::InitDb(body),
            com::QUERY => Command::Query(body),
            com::FIELD_LIST => Command::FieldList {
                table: c.nul_or_eof_bytes(),
            },
            com::STATISTICS => Command::Statistics,
            com::PING => Command::Ping,
            com::CHANGE_USER => Command::ChangeUser(body),
            com::RESET_CONNECTION => Command::ResetConnection,
            com::SET_OPTION => Command::SetOption(c.u16()?),
            com::STMT_PREPARE => Command::StmtPrepare(body),
            com::STMT_EXECUTE => {
                let id = c.u32()?;
                let _cursor_flags = c.u8()?;
                let _iterations = c.u32()?;
                Command::StmtExecute {
                    id,
                    params: c.rest(),
                }
            }
            com::STMT_SEND_LONG_DATA => Command::StmtSendLongData {
                id: c.u32()?,
                param: c.u16()?,
                data: c.rest(),
            },
            com::STMT_CLOSE => Command::StmtClose(c.u32()?),
            com::STMT_RESET => Command::StmtReset(c.u32()?),
            com::PROCESS_KILL => Command::ProcessKill(c.u32()?),
            other => Command::Unknown(other),
        })
    }
}

/// Why COM_STMT_EXECUTE's parameters could not be decoded.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum ParamDecodeError {
    #[error("malformed parameter block")]
    Malformed,
    /// No types were sent, and none were bound by an earlier execute.
    #[error("no parameter types bound")]
    NoTypes,
    /// A temporal value of an impossible length.
    #[error("malformed temporal value for parameter {}", .0 + 1)]
    BadTemporal(usize),
}

impl From<Malformed> for ParamDecodeError {
    fn from(_: Malformed) -> Self {
        ParamDecodeError::Malformed
    }
}

/// Decode the parameter block of COM_STMT_EXECUTE for a statement with
/// `n` placeholders. `bound_types` holds the (type, flags) pairs of the
/// previous execute and is updated when the client sends new ones.
/// Parameters with data sent by COM_STMT_SEND_LONG_DATA take it from
/// `long_data` and have no value in the packet.
pub fn decode_params(
    block: &[u8],
    n: usize,
    bound_types: &mut Vec<(u8, u8)>,
    long_data: &HashMap<u16, Vec<u8>>,
) -> Result<Vec<Param>, ParamDecodeError> {
    if n == 0 {
        return Ok(Vec::new());
    }
    let mut c = Cursor::new(block);
    let null_bitmap = c.take(n.div_ceil(8))?;
    if c.u8()? == 1 {
        let mut t = Vec::with_capacity(n);
        for _ in 0..n {
            t.push((c.u8()?, c.u8()?));
        }
        *bound_types = t;
    }
    if bound_types.len() != n {
        return Err(ParamDecodeError::NoTypes);
    }
    let mut out = Vec::with_capacity(n);
    for (i, &(ty, fl)) in bound_types.iter().enumerate() {
        if let Some(data) = u16::try_from(i).ok().and_then(|k| long_data.get(&k)) {
            out.push(Param::Bytes(data.clone()));
            continue;
        }
        if null_bitmap[i / 8] & (1 << (i % 8)) != 0 || ty == types::NULL {
            out.push(Param::Null);
            continue;
        }
        let unsigned = fl & 0x80 != 0;
        let int = |v: i64, u: u64| {
            if unsigned {
                Param::UInt(u)
            } else {
                Param::Int(v)
            }
        };
        out.push(match ty {
            types::TINY => {
                let b = c.u8()?;
                int(i64::from(b as i8), u64::from(b))
            }
            types::SHORT | types::YEAR => {
                let v = c.u16()?;
                int(i64::from(v as i16), u64::from(v))
            }
            types::LONG | types::INT24 => {
                let v = c.u32()?;
                int(i64::from(v as i32), u64::from(v))
            }
            types::LONGLONG => {
                let v = c.u64()?;
                int(v as i64, v)
            }
            types::FLOAT => Param::Double(f64::from(f32::from_bits(c.u32()?))),
            types::DOUBLE => Param::Double(f64::from_bits(c.u64()?)),
            // DECIMAL parameters arrive as text; one that is a plain
            // decimal stays exact, anything else is passed on as a string.
            types::NEWDECIMAL | types::DECIMAL => {
                let b = c.lenenc_bytes()?;
                match std::str::from_utf8(b)
                    .ok()
                    .and_then(|t| crate::decimal::Decimal::parse(t.trim()))
                {
                    Some(d) => Param::Decimal(d),
                    None => Param::Bytes(b.to_vec()),
                }
            }
            types::DATE | types::DATETIME | types::TIMESTAMP => {
                let len = usize::from(c.u8()?);
                let b = c.take(len)?;
                Param::Temporal(
                    params::format_binary_datetime(b, ty == types::DATE)
                        .ok_or(ParamDecodeError::BadTemporal(i))?,
                )
            }
            types::TIME => {
                let len = usize::from(c.u8()?);
                let b = c.take(len)?;
                Param::Temporal(
                    params::format_binary_time(b).ok_or(ParamDecodeError::BadTemporal(i))?,
                )
            }
            _ => Param::Bytes(c.lenenc_bytes()?.to_vec()),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_commands() {
        assert_eq!(Command::parse(&[1]), Command::Quit);
        assert_eq!(Command::parse(b"\x03select 1"), Command::Query(b"select 1"));
        assert_eq!(
            Command::parse(b"\x04t\0%"),
            Command::FieldList { table: b"t" }
        );
        assert_eq!(Command::parse(b"\x04t"), Command::FieldList { table: b"t" });
        assert_eq!(Command::parse(&[0x1b, 1, 0]), Command::SetOption(1));
        assert_eq!(Command::parse(&[0x1b, 1]), Command::Malformed(0x1b));
        assert_eq!(Command::parse(&[0x19, 7, 0, 0, 0]), Command::StmtClose(7));
        assert_eq!(
            Command::parse(&[0x18, 7, 0, 0, 0, 1, 0, b'x']),
            Command::StmtSendLongData {
                id: 7,
                param: 1,
                data: b"x"
            }
        );
        assert_eq!(
            Command::parse(&[0x17, 2, 0, 0, 0, 0, 1, 0, 0, 0, 9]),
            Command::StmtExecute {
                id: 2,
                params: &[9]
            }
        );
        assert_eq!(Command::parse(&[0x05]), Command::Unknown(0x05));
        assert_eq!(Command::parse(&[0xee]), Command::Unknown(0xee));
        assert_eq!(Command::parse(&[]), Command::Unknown(0));
    }

    #[test]
    fn decimal_parameters_stay_exact() {
        // 2 params, both NEWDECIMAL: "-0.10" and a non-number.
        let mut b = vec![0, 1, 246, 0, 246, 0];
        b.extend_from_slice(&[5, b'-', b'0', b'.', b'1', b'0']);
        b.extend_from_slice(&[1, b'x']);
        let p = decode_params(&b, 2, &mut Vec::new(), &HashMap::new()).unwrap();
        assert_eq!(
            p,
            vec![
                Param::Decimal(crate::decimal::Decimal::parse("-0.10").unwrap()),
                Param::Bytes(b"x".to_vec()),
            ]
        );
    }

    #[test]
    fn decodes_parameters() {
        // 4 params: LONGLONG -5, NULL, VAR_STRING "hi", DATE 2024-02-29;
        // plus param 4 (TINY unsigned 200).
        let mut b = vec![0b0000_0010, 1];
        for (t, f) in [(8u8, 0u8), (8, 0), (253, 0), (10, 0), (1, 0x80)] {
            b.extend_from_slice(&[t, f]);
        }
        b.extend_from_slice(&(-5i64).to_le_bytes());
        b.extend_from_slice(&[2, b'h', b'i']);
        b.extend_from_slice(&[4, 0xe8, 0x07, 2, 29]);
        b.push(200);
        let mut bound = Vec::new();
        let p = decode_params(&b, 5, &mut bound, &HashMap::new()).unwrap();
        assert_eq!(
            p,
            vec![
                Param::Int(-5),
                Param::Null,
                Param::Bytes(b"hi".to_vec()),
                Param::Temporal("2024-02-29".into()),
                Param::UInt(200),
            ]
        );
        // Re-execute without types: the bound ones are reused.
        let mut b2 = vec![0b0001_1110, 0];
        b2.extend_from_slice(&7i64.to_le_bytes());
        let p = decode_params(&b2, 5, &mut bound, &HashMap::new()).unwrap();
        assert_eq!(p[0], Param::Int(7));
        // Long data replaces the value (none in the packet).
        let long = HashMap::from([(0u16, b"long".to_vec())]);
        let p = decode_params(&[0b0001_1110, 0], 5, &mut bound, &long).unwrap();
        assert_eq!(p[0], Param::Bytes(b"long".to_vec()));
        // Truncated and untyped blocks.
        assert_eq!(
            decode_params(&b[..9], 5, &mut Vec::new(), &HashMap::new()),
            Err(ParamDecodeError::Malformed)
        );
        assert_eq!(
            decode_params(&[0, 0], 1, &mut Vec::new(), &HashMap::new()),
            Err(ParamDecodeError::NoTypes)
        );
        let bad = [0, 1, 12, 0, 2, 1, 2];
        assert_eq!(
            decode_params(&bad, 1, &mut Vec::new(), &HashMap::new()),
            Err(ParamDecodeError::BadTemporal(0))
        );
    }
}
