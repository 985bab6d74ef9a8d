//! Small helpers for the byte formats of this crate: a checksum and a bounds-checked
//! little-endian reader. Owns no format itself (each index module defines its layout);
//! must never panic on hostile input — every read is bounds-checked.

use crate::{IndexError, Result};

/// A fast 64-bit integrity checksum (not cryptographic): word-at-a-time multiply/xor
/// mixing with a final avalanche. Detects truncation and random corruption.
pub(crate) fn checksum(bytes: &[u8]) -> u64 {
    const K: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut h: u64 = 0xcbf2_9ce4_8422_2325 ^ (bytes.len() as u64).wrapping_mul(K);
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
        let mut w = [0u8; 8];
        w.copy_from_slice(c);
        h = (h ^ u64::from_le_bytes(w)).wrapping_mul(K).rotate_left(29);
    }
    for &b in chunks.remainder() {
        h = (h ^ u64::from(b)).wrapping_mul(K).rotate_left(29);
    }
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h
}

/// Appends `payload` followed by its checksum, after a magic and a version.
pub(crate) fn seal(magic: &[u8; 8], version: u32, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(payload.len() + 28);
    seal_into(&mut out, magic, version, |o| o.extend_from_slice(payload));
    out
}

/// [`seal`] appended to `out`, the payload written by `write` in place (no copy
/// of a large payload).
pub(crate) fn seal_into(
    out: &mut Vec<u8>,
    magic: &[u8; 8],
    version: u32,
    write: impl FnOnce(&mut Vec<u8>),
) {
    out.extend_from_slice(magic);
    out.extend_from_slice(&version.to_le_bytes());
    let len_at = out.len();
    out.extend_from_slice(&0u64.to_le_bytes());
    let start = out.len();
    write(out);
    let len = (out.len() - start) as u64;
    out[len_at..start].copy_from_slice(&len.to_le_bytes());
    let sum = checksum(&out[start..]);
    out.extend_from_slice(&sum.to_le_bytes());
}

/// Validates magic, version, length and checksum; returns the payload.
pub(crate) fn unseal<'a>(magic: &[u8; 8], version: u32, bytes: &'a [u8]) -> Result<&'a [u8]> {
    unseal_versions(magic, version..=version, bytes).map(|(_, p)| p)
}

/// Like [`unseal`], accepting any version in `versions`; returns it with
/// the payload.
pub(crate) fn unseal_versions<'a>(
    magic: &[u8; 8],
    versions: std::ops::RangeInclusive<u32>,
    bytes: &'a [u8],
) -> Result<(u32, &'a [u8])> {
    let mut r = Reader::new(bytes);
    if r.take(8)? != magic {
        return Err(IndexError::Corrupt("bad magic".into()));
    }
    let v = r.u32()?;
    if !versions.contains(&v) {
        return Err(IndexError::Corrupt(format!(
            "unsupported format version {v} (expected {versions:?})"
        )));
    }
    let len = r.len_u64()?;
    let payload = r.take(len)?;
    let sum = r.u64()?;
    if !r.is_empty() {
        return Err(IndexError::Corrupt("trailing bytes".into()));
    }
    if checksum(payload) != sum {
        return Err(IndexError::Corrupt("checksum mismatch".into()));
    }
    Ok((v, payload))
}

/// Bounds-checked little-endian cursor.
pub(crate) struct Reader<'a> {
    buf: &'a [u8],
}

impl<'a> Reader<'a> {
    pub(crate) fn new(buf: &'a [u8]) -> Self {
        Self { buf }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    /// Bytes left.
    pub(crate) fn remaining(&self) -> usize {
        self.buf.len()
    }

    pub(crate) fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        if n > self.buf.len() {
            return Err(IndexError::Corrupt(format!(
                "truncated: need {n} bytes, have {}",
                self.buf.len()
            )));
        }
        let (head, tail) = self.buf.split_at(n);
        self.buf = tail;
        Ok(head)
    }

    pub(crate) fn u32(&mut self) -> Result<u32> {
        let mut w = [0u8; 4];
        w.copy_from_slice(self.take(4)?);
        Ok(u32::from_le_bytes(w))
    }

    pub(crate) fn u64(&mut self) -> Result<u64> {
        let mut w = [0u8; 8];
        w.copy_from_slice(self.take(8)?);
        Ok(u64::from_le_bytes(w))
    }

    /// A u64 length that must fit in the remaining buffer's address space.
    pub(crate) fn len_u64(&mut self) -> Result<usize> {
        let v = self.u64()?;
        usize::try_from(v).map_err(|_| IndexError::Corrupt(format!("length {v} too large")))
    }
}

/// Appends a length-prefixed byte string.
pub(crate) fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
    out.extend_from_slice(bytes);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seal_unseal_round_trip_and_rejects_damage() {
        let payload = b"hello world, this is a payload".to_vec();
        let sealed = seal(b"TESTMAGC", 3, &payload);
        assert_eq!(unseal(b"TESTMAGC", 3, &sealed).unwrap(), &payload[..]);
        assert!(unseal(b"OTHERMAG", 3, &sealed).is_err());
        assert!(unseal(b"TESTMAGC", 4, &sealed).is_err());
        for cut in 0..sealed.len() {
            assert!(unseal(b"TESTMAGC", 3, &sealed[..cut]).is_err());
        }
        for i in 20..sealed.len() {
            let mut bad = sealed.clone();
            bad[i] ^= 0x10;
            assert!(unseal(b"TESTMAGC", 3, &bad).is_err(), "flip at {i}");
        }
    }
}
