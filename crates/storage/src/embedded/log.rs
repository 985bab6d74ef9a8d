//! The commit log: where a commit group becomes durable before redb has it.
//!
//! One file, `commit.log`, filled with zeros once to [`LOG_BYTES`] so that
//! overwriting it in place changes no file metadata (an `fdatasync` then
//! flushes data only). Records are written one after another from offset
//! 0: `[len u32][crc32 u32][payload]`, the payload `[ts u64][count u32]`
//! then per change `[table u64][seq u32][len u32][encoded change]`
//! ([`super::changelog::encode`]), the CRC over the payload.
//!
//! Recovery ([`CommitLog::open`]) reads records from offset 0 while the
//! CRC holds and the ts strictly increases: a torn last record (a crash in
//! its write) fails its CRC, and what follows the valid tail is either
//! zeros or records of an earlier pass, whose ts are smaller — both stop
//! the read. The writer goes back to offset 0 only once every record in
//! the file is in redb durably ([`CommitLog::rewind`]), so a record an
//! earlier pass left behind is never needed.
//!
//! This module must never decide commit order or what is applied: it
//! stores records in the order it is handed them and gives them back.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::fs::FileExt;
use std::path::Path;

use super::changelog;
use super::durable::io;
use crate::api::{Change, Result, StorageError, TableId, Ts};

/// Size the log is preallocated to.
pub(super) const LOG_BYTES: u64 = 64 << 20;
const LOG_FILE: &str = "commit.log";
const HEADER: usize = 8;

/// A group's transactions, each with its commit ts and changes.
pub(super) type Record = (Ts, Vec<(TableId, Change)>);

/// The open log, positioned after its last valid record.
pub(super) struct CommitLog {
    file: File,
    pos: u64,
    size: u64,
    /// Ts of the last record written since the last rewind (0: none).
    last_ts: Ts,
    buf: Vec<u8>,
}

impl CommitLog {
    /// Open (or create and preallocate) the log in `dir` and read its
    /// valid records, oldest first.
    pub fn open(dir: &Path) -> Result<(CommitLog, Vec<Record>)> {
        let path = dir.join(LOG_FILE);
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(io)?;
        let mut size = file.metadata().map_err(io)?.len();
        if size < LOG_BYTES {
            // Zeros, written for real (not a sparse extent), then synced
            // once with the file's size.
            file.seek(SeekFrom::Start(size)).map_err(io)?;
            let zeros = vec![0u8; 1 << 20];
            while size < LOG_BYTES {
                let n = (LOG_BYTES - size).min(zeros.len() as u64) as usize;
                file.write_all(&zeros[..n]).map_err(io)?;
                size += n as u64;
            }
            file.sync_all().map_err(io)?;
        }
        let mut bytes = Vec::with_capacity(size as usize);
        file.seek(SeekFrom::Start(0)).map_err(io)?;
        file.read_to_end(&mut bytes).map_err(io)?;
        let (records, pos) = read_records(&bytes)?;
        let last_ts = records.last().map_or(0, |r| r.0);
        Ok((
            CommitLog {
                file,
                pos: pos as u64,
                size: bytes.len() as u64,
                last_ts,
                buf: Vec::new(),
            },
            records,
        ))
    }

    /// Ts of the last record written since the last rewind (0: none).
    pub fn last_ts(&self) -> Ts {
        self.last_ts
    }

    /// Whether `records` fit after the last record.
    pub fn fits(&mut self, records: &[(Ts, &[(TableId, Change)])]) -> bool {
        self.encode(records);
        self.pos + self.buf.len() as u64 <= self.size
    }

    /// Write `records` after the last one (not synced: see [`Self::sync`]).
    /// A group larger than the room left grows the file.
    pub fn append(&mut self, records: &[(Ts, &[(TableId, Change)])]) -> Result<()> {
        self.encode(records);
        self.file.write_all_at(&self.buf, self.pos).map_err(io)?;
        self.pos += self.buf.len() as u64;
        self.size = self.size.max(self.pos);
        if let Some((ts, _)) = records.last() {
            self.last_ts = *ts;
        }
        Ok(())
    }

    /// Make what was appended durable.
    pub fn sync(&self) -> Result<()> {
        self.file.sync_data().map_err(io)
    }

    /// Start again at offset 0. Only when every record written is durably
    /// in redb: they are never read again.
    pub fn rewind(&mut self) {
        self.pos = 0;
        self.last_ts = 0;
    }

    fn encode(&mut self, records: &[(Ts, &[(TableId, Change)])]) {
        self.buf.clear();
        for (ts, changes) in records {
            let start = self.buf.len();
            self.buf.extend_from_slice(&[0u8; HEADER]);
            self.buf.extend_from_slice(&ts.to_be_bytes());
            self.buf
                .extend_from_slice(&(changes.len() as u32).to_be_bytes());
            for (table, ch) in *changes {
                let enc = changelog::encode(ch);
                self.buf.extend_from_slice(&table.to_be_bytes());
                self.buf.extend_from_slice(&ch.seq.to_be_bytes());
                self.buf.extend_from_slice(&(enc.len() as u32).to_be_bytes());
                self.buf.extend_from_slice(&enc);
            }
            let payload = &self.buf[start + HEADER..];
            let len = payload.len() as u32;
            let crc = crc32fast::hash(payload);
            self.buf[start..start + 4].copy_from_slice(&len.to_be_bytes());
            self.buf[start + 4..start + 8].copy_from_slice(&crc.to_be_bytes());
        }
    }
}

/// The valid records at the start of `bytes` and where they end.
fn read_records(bytes: &[u8]) -> Result<(Vec<Record>, usize)> {
    let mut out: Vec<Record> = Vec::new();
    let mut pos = 0usize;
    while let Some(header) = bytes.get(pos..pos + HEADER) {
        let len = u32::from_be_bytes([header[0], header[1], header[2], header[3]]) as usize;
        let crc = u32::from_be_bytes([header[4], header[5], header[6], header[7]]);
        let Some(payload) = bytes.get(pos + HEADER..pos + HEADER + len) else {
            break;
        };
        if len < 12 || crc32fast::hash(payload) != crc {
            break;
        }
        let rec = decode_record(payload)?;
        if out.last().is_some_and(|last| last.0 >= rec.0) {
            break; // a record of an earlier pass
        }
        out.push(rec);
        pos += HEADER + len;
    }
    Ok((out, pos))
}

fn decode_record(p: &[u8]) -> Result<Record> {
    let corrupt = || StorageError::Corrupt("malformed commit-log record".into());
    let take = |p: &mut &[u8], n: usize| -> Result<Vec<u8>> {
        if p.len() < n {
            return Err(corrupt());
        }
        let (h, rest) = p.split_at(n);
        *p = rest;
        Ok(h.to_vec())
    };
    let u64_of = |b: Vec<u8>| -> Result<u64> {
        Ok(u64::from_be_bytes(b.try_into().map_err(|_| corrupt())?))
    };
    let u32_of = |b: Vec<u8>| -> Result<u32> {
        Ok(u32::from_be_bytes(b.try_into().map_err(|_| corrupt())?))
    };
    let mut p = p;
    let ts = u64_of(take(&mut p, 8)?)?;
    let count = u32_of(take(&mut p, 4)?)?;
    let mut changes = Vec::with_capacity(count.min(1 << 16) as usize);
    for _ in 0..count {
        let table = u64_of(take(&mut p, 8)?)?;
        let seq = u32_of(take(&mut p, 4)?)?;
        let len = u32_of(take(&mut p, 4)?)? as usize;
        let enc = take(&mut p, len)?;
        changes.push((table, changelog::decode(ts, seq, &enc)?));
    }
    if !p.is_empty() {
        return Err(corrupt());
    }
    Ok((ts, changes))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::ChangeKind;

    fn change(key: &[u8], v: &[u8], seq: u32) -> Change {
        Change {
            commit_ts: 0,
            seq,
            kind: ChangeKind::Insert,
            key: key.to_vec(),
            old: None,
            new: Some(v.to_vec()),
        }
    }

    fn write(log: &mut CommitLog, ts: Ts, n: u32) {
        let changes: Vec<(TableId, Change)> = (0..n)
            .map(|i| (7, change(&i.to_be_bytes(), &ts.to_be_bytes(), i)))
            .collect();
        log.append(&[(ts, &changes)]).unwrap();
        log.sync().unwrap();
    }

    #[test]
    fn records_come_back_in_order_and_a_torn_tail_is_cut() {
        let dir = tempfile::tempdir().unwrap();
        {
            let (mut log, recs) = CommitLog::open(dir.path()).unwrap();
            assert!(recs.is_empty());
            for ts in 1..=5 {
                write(&mut log, ts, 3);
            }
        }
        let (_, recs) = CommitLog::open(dir.path()).unwrap();
        assert_eq!(recs.iter().map(|r| r.0).collect::<Vec<_>>(), [1, 2, 3, 4, 5]);
        assert_eq!(recs[2].1.len(), 3);
        assert_eq!(recs[2].1[1].1.new.as_deref(), Some(&3u64.to_be_bytes()[..]));
        assert_eq!(recs[2].1[1].1.commit_ts, 3);
        // Tear the last record: every byte of it in turn.
        let path = dir.path().join(LOG_FILE);
        let bytes = std::fs::read(&path).unwrap();
        let (_, end) = read_records(&bytes).unwrap();
        let (four, start) = read_records(&bytes[..end - 1]).unwrap();
        assert_eq!(four.len(), 4);
        for at in start..end {
            let mut torn = bytes.clone();
            torn[at] ^= 0x5a;
            let (recs, _) = read_records(&torn).unwrap();
            assert_eq!(recs.len(), 4, "flipped byte {at}");
        }
    }

    #[test]
    fn after_a_rewind_records_of_the_earlier_pass_are_never_read() {
        let dir = tempfile::tempdir().unwrap();
        let (mut log, _) = CommitLog::open(dir.path()).unwrap();
        for ts in 1..=10 {
            write(&mut log, ts, 2);
        }
        log.rewind();
        write(&mut log, 11, 2);
        write(&mut log, 12, 1);
        drop(log);
        let (log, recs) = CommitLog::open(dir.path()).unwrap();
        assert_eq!(recs.iter().map(|r| r.0).collect::<Vec<_>>(), [11, 12]);
        assert_eq!(log.last_ts(), 12);
    }

    #[test]
    fn a_group_larger_than_the_file_grows_it() {
        let dir = tempfile::tempdir().unwrap();
        let (mut log, _) = CommitLog::open(dir.path()).unwrap();
        let big = vec![9u8; 1 << 20];
        let changes: Vec<(TableId, Change)> =
            (0..70u32).map(|i| (1, change(&i.to_be_bytes(), &big, i))).collect();
        assert!(!log.fits(&[(1, &changes)]));
        log.append(&[(1, &changes)]).unwrap();
        log.sync().unwrap();
        drop(log);
        let (_, recs) = CommitLog::open(dir.path()).unwrap();
        assert_eq!(recs.len(), 1);
        assert_eq!(recs[0].1.len(), 70);
    }
}
