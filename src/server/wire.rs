//! Byte-stream adapters around a client socket that fill gaps in
//! opensrv-mysql 0.7:
//!
//! * [`LimitReader`] enforces `max_allowed_packet` by watching packet
//!   headers as they arrive, so an oversized packet is refused before it is
//!   buffered (opensrv itself buffers packets of any size).
//! * [`HandshakeWriter`] rewrites two server packets of the connection
//!   phase: the greeting (advertise multi-statements/multi-results, and do
//!   not advertise `CLIENT_DEPRECATE_EOF`, with which opensrv cannot flag
//!   "more results" after a result set), and the authentication error
//!   (opensrv sends 1698; MySQL clients expect 1045 "Access denied").
//!   After the connection phase it is a pass-through.
//!
//! This module only frames bytes; it never interprets commands or SQL.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context, Poll};

use parking_lot::Mutex;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// Payload length of a full (continued) MySQL packet.
const FULL_PACKET: usize = 0xff_ffff;

/// Build one raw error packet (header included).
pub fn error_packet(seq: u8, code: u16, sqlstate: &str, message: &str) -> Vec<u8> {
    let mut payload = Vec::with_capacity(9 + message.len());
    payload.push(0xff);
    payload.extend_from_slice(&code.to_le_bytes());
    payload.push(b'#');
    let mut state = [b'H', b'Y', b'0', b'0', b'0'];
    for (d, s) in state.iter_mut().zip(sqlstate.bytes()) {
        *d = s;
    }
    payload.extend_from_slice(&state);
    // A packet is at most 16 MiB - 1; messages are short, but never exceed it.
    let max_msg = FULL_PACKET - payload.len();
    payload.extend_from_slice(&message.as_bytes()[..message.len().min(max_msg)]);
    let len = payload.len() as u32;
    let mut out = Vec::with_capacity(4 + payload.len());
    out.extend_from_slice(&len.to_le_bytes()[..3]);
    out.push(seq);
    out.extend_from_slice(&payload);
    out
}

/// A packet that exceeded the limit: its sequence id and the logical size
/// seen so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Oversize {
    pub seq: u8,
    pub size: usize,
    /// Payload bytes of the offending physical packet not yet read.
    pub unread: usize,
}

/// Reader that fails with `InvalidData` as soon as a logical packet
/// (a run of 16 MiB pieces plus a final shorter one) would exceed `max`.
pub struct LimitReader<R> {
    inner: R,
    max: usize,
    header: [u8; 4],
    header_len: usize,
    /// Payload bytes of the current physical packet still to come.
    remaining: usize,
    /// Logical packet size so far (sum of continued pieces).
    logical: usize,
    continued: bool,
    oversize: Option<Oversize>,
}

impl<R> LimitReader<R> {
    pub fn new(inner: R, max: usize) -> Self {
        LimitReader {
            inner,
            max,
            header: [0; 4],
            header_len: 0,
            remaining: 0,
            logical: 0,
            continued: false,
            oversize: None,
        }
    }

    /// Set once a packet over the limit was seen; the reader then fails.
    pub fn oversize(&self) -> Option<Oversize> {
        self.oversize
    }

    /// Access to the socket half (to drain it after an oversize packet).
    pub fn inner_mut(&mut self) -> &mut R {
        &mut self.inner
    }

    /// Feed bytes through the header state machine. Returns `Err` when a
    /// packet over the limit starts.
    fn track(&mut self, mut data: &[u8]) -> Result<(), Oversize> {
        while !data.is_empty() {
            if self.remaining > 0 {
                let n = self.remaining.min(data.len());
                self.remaining -= n;
                data = &data[n..];
                continue;
            }
            let need = 4 - self.header_len;
            let n = need.min(data.len());
            self.header[self.header_len..self.header_len + n].copy_from_slice(&data[..n]);
            self.header_len += n;
            data = &data[n..];
            if self.header_len == 4 {
                self.header_len = 0;
                let len = usize::from(self.header[0])
                    | usize::from(self.header[1]) << 8
                    | usize::from(self.header[2]) << 16;
                if !self.continued {
                    self.logical = 0;
                }
                self.logical += len;
                self.continued = len == FULL_PACKET;
                if self.logical > self.max {
                    return Err(Oversize {
                        seq: self.header[3],
                        size: self.logical,
                        unread: len.saturating_sub(data.len()),
                    });
                }
                self.remaining = len;
            }
        }
        Ok(())
    }
}

fn too_large() -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        "Got a packet bigger than 'max_allowed_packet' bytes",
    )
}

impl<R: AsyncRead + Unpin> AsyncRead for LimitReader<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if self.oversize.is_some() {
            return Poll::Ready(Err(too_large()));
        }
        let before = buf.filled().len();
        ready!(Pin::new(&mut self.inner).poll_read(cx, buf))?;
        let this = &mut *self;
        if let Err(o) = this.track(&buf.filled()[before..]) {
            this.oversize = Some(o);
            buf.set_filled(before);
            return Poll::Ready(Err(too_large()));
        }
        Poll::Ready(Ok(()))
    }
}

/// Shared slot: the message of the authentication error to send instead of
/// opensrv's, set by the shim when a password check fails.
pub type AuthFailureSlot = Arc<Mutex<Option<String>>>;

/// Capability bits (see the MySQL protocol docs).
const CLIENT_MULTI_STATEMENTS: u32 = 1 << 16;
const CLIENT_MULTI_RESULTS: u32 = 1 << 17;
const CLIENT_DEPRECATE_EOF: u32 = 1 << 24;

/// Writer that patches the greeting and the authentication error packet,
/// then passes everything through.
pub struct HandshakeWriter<W> {
    inner: W,
    handshake: bool,
    packets: usize,
    pending: Vec<u8>,
    out: Vec<u8>,
    out_pos: usize,
    auth_failure: AuthFailureSlot,
}

impl<W> HandshakeWriter<W> {
    pub fn new(inner: W, auth_failure: AuthFailureSlot) -> Self {
        HandshakeWriter {
            inner,
            handshake: true,
            packets: 0,
            pending: Vec::new(),
            out: Vec::new(),
            out_pos: 0,
            auth_failure,
        }
    }

    /// Move complete packets from `pending` to `out`, rewriting as needed.
    fn process(&mut self) {
        while self.handshake && self.pending.len() >= 4 {
            let len = usize::from(self.pending[0])
                | usize::from(self.pending[1]) << 8
                | usize::from(self.pending[2]) << 16;
            if self.pending.len() < 4 + len {
                return;
            }
            let mut packet: Vec<u8> = self.pending.drain(..4 + len).collect();
            let first = packet.get(4).copied();
            if self.packets == 0 && first == Some(10) {
                patch_greeting(&mut packet);
            } else if first == Some(0xff) {
                if let Some(msg) = self.auth_failure.lock().take() {
                    packet = error_packet(packet[3], 1045, "28000", &msg);
                }
                self.handshake = false;
            } else if self.packets > 0 && first == Some(0x00) {
                self.handshake = false;
            }
            self.packets += 1;
            self.out.extend_from_slice(&packet);
        }
        if !self.handshake && !self.pending.is_empty() {
            let rest = std::mem::take(&mut self.pending);
            self.out.extend_from_slice(&rest);
        }
    }
}

/// Clear `CLIENT_DEPRECATE_EOF` and set multi-statement/multi-result bits in
/// a HandshakeV10 packet (header included). Leaves malformed packets alone.
fn patch_greeting(packet: &mut [u8]) {
    let payload = &mut packet[4..];
    let Some(nul) = payload.iter().skip(1).position(|&b| b == 0) else {
        return;
    };
    // protocol(1) version NUL conn_id(4) scramble1(8) filler(1) caps_lo(2)
    // charset(1) status(2) caps_hi(2)
    let lo = 1 + nul + 1 + 4 + 8 + 1;
    let hi = lo + 2 + 1 + 2;
    if payload.len() < hi + 2 {
        return;
    }
    let mut caps = u32::from(u16::from_le_bytes([payload[lo], payload[lo + 1]]))
        | u32::from(u16::from_le_bytes([payload[hi], payload[hi + 1]])) << 16;
    caps &= !CLIENT_DEPRECATE_EOF;
    caps |= CLIENT_MULTI_STATEMENTS | CLIENT_MULTI_RESULTS;
    payload[lo..lo + 2].copy_from_slice(&(caps as u16).to_le_bytes());
    payload[hi..hi + 2].copy_from_slice(&((caps >> 16) as u16).to_le_bytes());
}

impl<W: AsyncWrite + Unpin> HandshakeWriter<W> {
    fn poll_drain(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while self.out_pos < self.out.len() {
            let n = ready!(Pin::new(&mut self.inner).poll_write(cx, &self.out[self.out_pos..]))?;
            if n == 0 {
                return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
            }
            self.out_pos += n;
        }
        self.out.clear();
        self.out_pos = 0;
        Poll::Ready(Ok(()))
    }
}

impl<W: AsyncWrite + Unpin> AsyncWrite for HandshakeWriter<W> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        if this.handshake {
            this.pending.extend_from_slice(buf);
            this.process();
            return Poll::Ready(Ok(buf.len()));
        }
        ready!(this.poll_drain(cx))?;
        Pin::new(&mut this.inner).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = &mut *self;
        ready!(this.poll_drain(cx))?;
        Pin::new(&mut this.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = &mut *self;
        ready!(this.poll_drain(cx))?;
        Pin::new(&mut this.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    fn packet(seq: u8, payload: &[u8]) -> Vec<u8> {
        let mut v = (payload.len() as u32).to_le_bytes()[..3].to_vec();
        v.push(seq);
        v.extend_from_slice(payload);
        v
    }

    #[tokio::test]
    async fn limit_reader_passes_small_and_rejects_large() {
        let mut data = packet(0, &[3, b'a', b'b']);
        data.extend(packet(0, &[b'x'; 100]));
        let mut r = LimitReader::new(&data[..], 50);
        let mut got = Vec::new();
        let err = r.read_to_end(&mut got).await.unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidData);
        let o = r.oversize().unwrap();
        assert_eq!((o.seq, o.size), (0, 100));

        let data = packet(0, &[b'y'; 50]);
        let mut r = LimitReader::new(&data[..], 50);
        let mut got = Vec::new();
        r.read_to_end(&mut got).await.unwrap();
        assert_eq!(got, data);
        assert!(r.oversize().is_none());
    }

    #[test]
    fn limit_reader_sums_continued_pieces() {
        let mut r = LimitReader::new((), FULL_PACKET + 10);
        let mut hdr = vec![0xff, 0xff, 0xff, 0];
        assert!(r.track(&hdr).is_ok());
        assert_eq!(r.remaining, FULL_PACKET);
        r.remaining = 0;
        hdr = vec![11, 0, 0, 1];
        let o = r.track(&hdr).unwrap_err();
        assert_eq!((o.seq, o.size), (1, FULL_PACKET + 11));
    }

    #[tokio::test]
    async fn handshake_writer_patches_greeting_and_auth_error() {
        let slot: AuthFailureSlot = Arc::new(Mutex::new(None));
        let mut out = Vec::new();
        let mut w = HandshakeWriter::new(&mut out, slot.clone());
        // protocol 10, "v" NUL, conn id, scramble1, filler, caps lo, charset,
        // status, caps hi (DEPRECATE_EOF set), rest.
        let mut g = vec![10, b'v', 0, 1, 0, 0, 0];
        g.extend_from_slice(b"12345678");
        g.push(0);
        g.extend_from_slice(&[0x00, 0x82]);
        g.push(0x21);
        g.extend_from_slice(&[0, 0]);
        g.extend_from_slice(&[0x08, 0x01]);
        g.extend_from_slice(&[21, 0, 0]);
        let greeting = packet(0, &g);
        w.write_all(&greeting[..5]).await.unwrap();
        w.write_all(&greeting[5..]).await.unwrap();
        *slot.lock() = Some("Access denied for user 'x'".into());
        w.write_all(&packet(
            2,
            &[0xff, 0xa2, 0x06, b'#', b'2', b'8', b'0', b'0', b'0', b'n'],
        ))
        .await
        .unwrap();
        w.write_all(b"after").await.unwrap();
        w.flush().await.unwrap();
        drop(w);
        let hi = 4 + 1 + 2 + 4 + 8 + 1 + 2 + 1 + 2;
        assert_eq!(out[hi + 1] & 1, 0, "DEPRECATE_EOF cleared");
        assert_eq!(out[hi] & 3, 3, "multi statements/results set");
        let err = &out[greeting.len()..];
        assert_eq!(err[3], 2);
        assert_eq!(&err[4..7], &[0xff, 0x15, 0x04]);
        assert!(err.ends_with(b"Access denied for user 'x'after"));
    }

    #[test]
    fn error_packet_layout() {
        let p = error_packet(0, 1040, "08004", "Too many connections");
        assert_eq!(&p[..4], &[29, 0, 0, 0]);
        assert_eq!(&p[4..13], b"\xff\x10\x04#08004");
    }
}
