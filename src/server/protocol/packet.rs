//! Packet framing: the 4-byte header (3-byte length, 1-byte sequence id),
//! logical packets split into 16 MiB - 1 pieces, `max_allowed_packet`
//! enforcement on input, buffered output, and the little-endian /
//! length-encoded primitives every payload is made of.
//!
//! This module owns sequence ids, the size limit and the mid-packet read
//! timeout. It never interprets a payload (see [`super::command`] and
//! [`super::handshake`]) and never buffers more than `max_allowed_packet`
//! bytes of one client packet: an oversized packet is refused from its
//! header, before its body is read, and a body is buffered as it arrives
//! (a declared length alone allocates at most [`READ_CHUNK`] bytes).

use std::time::Duration;

use thiserror::Error;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// Payload length of a full (continued) physical packet.
pub const MAX_PIECE: usize = 0xff_ffff;
/// Output is written to the socket whenever this much is buffered.
const FLUSH_AT: usize = 64 << 10;
/// A packet body is read (and its buffer grown) this much at a time.
pub const READ_CHUNK: usize = 256 << 10;

/// Why a client packet could not be read.
#[derive(Debug, Error)]
pub enum PacketError {
    /// The peer closed the connection between packets.
    #[error("connection closed")]
    Closed,
    #[error("i/o error: {0}")]
    Io(#[from] std::io::Error),
    /// A logical packet over `max_allowed_packet`; `unread` payload bytes
    /// of its current piece are still in the socket.
    #[error("packet of at least {size} bytes exceeds max_allowed_packet")]
    TooLarge { seq: u8, size: usize, unread: usize },
    /// A packet started but its rest did not arrive within the body
    /// timeout.
    #[error("timed out reading a packet")]
    Timeout { seq: u8 },
}

/// Reads logical packets from the client.
pub struct PacketReader<R> {
    inner: R,
    max: usize,
    body_timeout: Option<Duration>,
}

impl<R: AsyncRead + Unpin> PacketReader<R> {
    pub fn new(inner: R, max: usize) -> Self {
        PacketReader {
            inner,
            max,
            body_timeout: None,
        }
    }

    /// Change the largest accepted logical packet.
    pub fn set_max(&mut self, max: usize) {
        self.max = max;
    }

    /// Once a packet's header arrived, each further read must make
    /// progress within `t` (`None`: wait forever). Waiting for the first
    /// header of a packet is never timed out here.
    pub fn set_body_timeout(&mut self, t: Option<Duration>) {
        self.body_timeout = t;
    }

    /// Read some bytes into `buf` (non-empty) within the body timeout; end
    /// of stream is an error.
    async fn read_some(&mut self, buf: &mut [u8], seq: u8) -> Result<usize, PacketError> {
        let n = match self.body_timeout {
            Some(t) => tokio::time::timeout(t, self.inner.read(buf))
                .await
                .map_err(|_| PacketError::Timeout { seq })??,
            None => self.inner.read(buf).await?,
        };
        if n == 0 {
            return Err(std::io::Error::from(std::io::ErrorKind::UnexpectedEof).into());
        }
        Ok(n)
    }

    /// The socket half (to drain it after an oversized packet).
    pub fn inner_mut(&mut self) -> &mut R {
        &mut self.inner
    }

    /// The next logical packet: the sequence id of its last piece and the
    /// payload.
    pub async fn read(&mut self) -> Result<(u8, Vec<u8>), PacketError> {
        let mut payload = Vec::new();
        let mut first = true;
        let mut seq = 0;
        loop {
            let mut header = [0u8; 4];
            let mut got = 0;
            if first {
                // Between packets: wait as long as the client likes.
                match self.inner.read(&mut header).await? {
                    0 => return Err(PacketError::Closed),
                    n => got = n,
                }
            }
            while got < 4 {
                got += self.read_some(&mut header[got..], seq).await?;
            }
            first = false;
            let len =
                usize::from(header[0]) | usize::from(header[1]) << 8 | usize::from(header[2]) << 16;
            seq = header[3];
            let size = payload.len() + len;
            if size > self.max {
                return Err(PacketError::TooLarge {
                    seq,
                    size,
                    unread: len,
                });
            }
            while payload.len() < size {
                let start = payload.len();
                payload.resize(start + (size - start).min(READ_CHUNK), 0);
                let n = self.read_some(&mut payload[start..], seq).await?;
                payload.truncate(start + n);
            }
            if len < MAX_PIECE {
                return Ok((seq, payload));
            }
        }
    }
}

/// Buffers framed packets for the client, numbering them from the
/// sequence id set with [`set_seq`](PacketWriter::set_seq).
pub struct PacketWriter<W> {
    inner: W,
    buf: Vec<u8>,
    seq: u8,
}

impl<W: AsyncWrite + Unpin> PacketWriter<W> {
    pub fn new(inner: W) -> Self {
        PacketWriter {
            inner,
            buf: Vec::with_capacity(FLUSH_AT),
            seq: 0,
        }
    }

    /// The sequence id the next packet gets.
    #[cfg(test)]
    fn seq(&self) -> u8 {
        self.seq
    }

    pub fn set_seq(&mut self, seq: u8) {
        self.seq = seq;
    }

    /// Frame `payload` into the buffer (splitting it into pieces as the
    /// protocol requires), without I/O.
    pub fn push(&mut self, payload: &[u8]) {
        let mut rest = payload;
        loop {
            let n = rest.len().min(MAX_PIECE);
            self.buf.extend_from_slice(&(n as u32).to_le_bytes()[..3]);
            self.buf.push(self.seq);
            self.seq = self.seq.wrapping_add(1);
            self.buf.extend_from_slice(&rest[..n]);
            rest = &rest[n..];
            // A piece of exactly MAX_PIECE bytes is followed by another
            // (possibly empty) one.
            if n < MAX_PIECE {
                return;
            }
        }
    }

    /// Frame `payload`; write the buffer out once it is large.
    pub async fn write(&mut self, payload: &[u8]) -> std::io::Result<()> {
        self.push(payload);
        if self.buf.len() >= FLUSH_AT {
            self.inner.write_all(&self.buf).await?;
            self.buf.clear();
        }
        Ok(())
    }

    /// Write everything buffered and flush the socket.
    pub async fn flush(&mut self) -> std::io::Result<()> {
        if !self.buf.is_empty() {
            self.inner.write_all(&self.buf).await?;
            self.buf.clear();
        }
        self.inner.flush().await
    }

    /// Flush, then shut the write side down.
    pub async fn shutdown(&mut self) -> std::io::Result<()> {
        self.flush().await?;
        self.inner.shutdown().await
    }
}

/// A payload that ended early or had an impossible field.
#[derive(Debug, Error, PartialEq, Eq)]
#[error("malformed packet")]
pub struct Malformed;

/// Cursor over a payload with the protocol's primitive readers.
pub struct Cursor<'a> {
    data: &'a [u8],
}

impl<'a> Cursor<'a> {
    pub fn new(data: &'a [u8]) -> Self {
        Cursor { data }
    }

    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    pub fn remaining(&self) -> usize {
        self.data.len()
    }

    pub fn take(&mut self, n: usize) -> Result<&'a [u8], Malformed> {
        if self.data.len() < n {
            return Err(Malformed);
        }
        let (a, b) = self.data.split_at(n);
        self.data = b;
        Ok(a)
    }

    pub fn rest(&mut self) -> &'a [u8] {
        std::mem::take(&mut self.data)
    }

    pub fn u8(&mut self) -> Result<u8, Malformed> {
        Ok(self.take(1)?[0])
    }

    pub fn u16(&mut self) -> Result<u16, Malformed> {
        let b = self.take(2)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }

    pub fn u32(&mut self) -> Result<u32, Malformed> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    pub fn u64(&mut self) -> Result<u64, Malformed> {
        let b = self.take(8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(u64::from_le_bytes(a))
    }

    /// A length-encoded integer (`None` for the NULL marker 0xFB).
    pub fn lenenc_int(&mut self) -> Result<Option<u64>, Malformed> {
        Ok(match self.u8()? {
            0xfb => None,
            0xfc => Some(u64::from(self.u16()?)),
            0xfd => {
                let b = self.take(3)?;
                Some(u64::from(b[0]) | u64::from(b[1]) << 8 | u64::from(b[2]) << 16)
            }
            0xfe => Some(self.u64()?),
            0xff => return Err(Malformed),
            n => Some(u64::from(n)),
        })
    }

    /// A length-encoded string (NULL is malformed here).
    pub fn lenenc_bytes(&mut self) -> Result<&'a [u8], Malformed> {
        let n = self.lenenc_int()?.ok_or(Malformed)?;
        let n = usize::try_from(n).map_err(|_| Malformed)?;
        self.take(n)
    }

    /// Bytes up to a NUL, which is consumed; a missing NUL is malformed.
    pub fn nul_bytes(&mut self) -> Result<&'a [u8], Malformed> {
        let i = self.data.iter().position(|&b| b == 0).ok_or(Malformed)?;
        let s = &self.data[..i];
        self.data = &self.data[i + 1..];
        Ok(s)
    }

    /// Bytes up to a NUL or the end of the payload (the NUL is consumed).
    pub fn nul_or_eof_bytes(&mut self) -> &'a [u8] {
        match self.data.iter().position(|&b| b == 0) {
            Some(i) => {
                let s = &self.data[..i];
                self.data = &self.data[i + 1..];
                s
            }
            None => self.rest(),
        }
    }
}

/// Append a length-encoded integer.
pub fn put_lenenc_int(out: &mut Vec<u8>, n: u64) {
    if n < 251 {
        out.push(n as u8);
    } else if n < 1 << 16 {
        out.push(0xfc);
        out.extend_from_slice(&(n as u16).to_le_bytes());
    } else if n < 1 << 24 {
        out.push(0xfd);
        out.extend_from_slice(&(n as u32).to_le_bytes()[..3]);
    } else {
        out.push(0xfe);
        out.extend_from_slice(&n.to_le_bytes());
    }
}

/// Append a length-encoded string.
pub fn put_lenenc_str(out: &mut Vec<u8>, s: &[u8]) {
    put_lenenc_int(out, s.len() as u64);
    out.extend_from_slice(s);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(seq: u8, payload: &[u8]) -> Vec<u8> {
        let mut v = (payload.len() as u32).to_le_bytes()[..3].to_vec();
        v.push(seq);
        v.extend_from_slice(payload);
        v
    }

    #[tokio::test]
    async fn reads_packets_and_reports_close() {
        let mut data = frame(0, &[3, b'a']);
        data.extend(frame(7, b""));
        let mut r = PacketReader::new(&data[..], 100);
        assert_eq!(r.read().await.unwrap(), (0, vec![3, b'a']));
        assert_eq!(r.read().await.unwrap(), (7, vec![]));
        assert!(matches!(r.read().await, Err(PacketError::Closed)));
        // A truncated packet is an I/O error, not a clean close.
        let data = &frame(0, b"abc")[..5];
        let mut r = PacketReader::new(data, 100);
        assert!(matches!(r.read().await, Err(PacketError::Io(_))));
    }

    #[tokio::test]
    async fn refuses_oversized_packet_from_its_header() {
        let data = frame(3, &[b'x'; 60]);
        let mut r = PacketReader::new(&data[..], 50);
        match r.read().await {
            Err(PacketError::TooLarge { seq, size, unread }) => {
                assert_eq!((seq, size, unread), (3, 60, 60))
            }
            other => panic!("{other:?}"),
        }
        let data = frame(0, &[b'y'; 50]);
        let mut r = PacketReader::new(&data[..], 50);
        assert_eq!(r.read().await.unwrap().1.len(), 50);
    }

    #[tokio::test]
    async fn joins_continued_pieces() {
        let big = vec![7u8; MAX_PIECE + 3];
        let mut w = PacketWriter::new(Vec::new());
        w.set_seq(4);
        w.push(&big);
        assert_eq!(w.seq(), 6);
        w.flush().await.unwrap();
        let bytes = w.inner;
        assert_eq!(&bytes[..4], &[0xff, 0xff, 0xff, 4]);
        let mut r = PacketReader::new(&bytes[..], MAX_PIECE + 3);
        let (seq, p) = r.read().await.unwrap();
        assert_eq!((seq, p.len()), (5, MAX_PIECE + 3));
        let mut r = PacketReader::new(&bytes[..], MAX_PIECE + 2);
        assert!(matches!(
            r.read().await,
            Err(PacketError::TooLarge { seq: 5, .. })
        ));
    }

    #[test]
    fn exact_piece_gets_empty_trailer() {
        let mut w = PacketWriter::new(Vec::<u8>::new());
        w.push(&vec![0u8; MAX_PIECE]);
        assert_eq!(w.buf.len(), 4 + MAX_PIECE + 4);
        assert_eq!(&w.buf[4 + MAX_PIECE..], &[0, 0, 0, 1]);
    }

    #[test]
    fn lenenc_round_trip() {
        for n in [
            0u64,
            250,
            251,
            65_535,
            65_536,
            (1 << 24) - 1,
            1 << 24,
            u64::MAX,
        ] {
            let mut v = Vec::new();
            put_lenenc_int(&mut v, n);
            let mut c = Cursor::new(&v);
            assert_eq!(c.lenenc_int(), Ok(Some(n)));
            assert!(c.is_empty());
        }
        assert_eq!(Cursor::new(&[0xfb]).lenenc_int(), Ok(None));
        assert_eq!(Cursor::new(&[0xfc, 1]).lenenc_int(), Err(Malformed));
        assert_eq!(Cursor::new(&[5, b'a']).lenenc_bytes(), Err(Malformed));
        let mut c = Cursor::new(b"ab\0cd");
        assert_eq!(c.nul_bytes(), Ok(&b"ab"[..]));
        assert_eq!(c.nul_bytes(), Err(Malformed));
        assert_eq!(c.nul_or_eof_bytes(), b"cd");
    }
}
