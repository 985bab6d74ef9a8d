//! The commit log: where a commit group becomes durable before redb has it.
//!
//! One file, `commit.log`, filled with zeros once to [`LOG_BYTES`] so that
//! overwriting it in place changes no file metadata (an `fdatasync` then
//! flushes data only). Records are written one after another from offset
//! 0, one per commit group: `[len u32][crc32 u32][payload]`, the payload
//! `[transactions u32]` then per transaction `[ts u64][count u32]` and per
//! change `[table u64][seq u32][len u32][encoded change]`
//! ([`super::changelog::encode`]), the CRC over the payload. A group is one
//! record written with one call, so a write that fails part-way can never
//! leave a valid record of an unacknowledged transaction behind.
//!
//! Writes are direct (`O_DIRECT`) where the file system allows it: each
//! rewrites the last, partly filled 4 KiB block (kept in memory) with the
//! new record after it and zeros up to a block boundary, like InnoDB's redo
//! log. Through the page cache, the `fdatasync` after a write had to start
//! the page's writeback itself, and about a third of single-client syncs
//! then took ~0.5 ms instead of ~45 µs while the applier's redb writes were
//! being flushed; direct writes reach the device in the `pwrite` and the
//! sync only flushes its cache (p50 18 µs, p90 41 µs). Zeros after a
//! record end the read like the end of the log.
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
use std::sync::Arc;

use parking_lot::Mutex;

use super::changelog;
use super::durable::io;
use crate::api::{Change, Result, StorageError, TableId, Ts};

/// Size the log is preallocated to by default.
pub const LOG_BYTES: u64 = 64 << 20;
const LOG_FILE: &str = "commit.log";
const HEADER: usize = 8;

/// A group's transactions, each with its commit ts and changes.
pub(super) type Record = (Ts, Vec<(TableId, Change)>);

/// The open log, positioned after its last valid record.
pub(super) struct CommitLog {
    file: Arc<File>,
    /// The same file opened for direct writes (`O_DIRECT`), where the
    /// file system allows it; else writes go through `file`.
    direct: Option<File>,
    /// The bytes of the last, partly filled block before `pos` (direct
    /// writes rewrite that block whole, as InnoDB's redo log does).
    tail: Vec<u8>,
    /// Room for an aligned direct write.
    dbuf: Vec<u8>,
    pos: u64,
    size: u64,
    /// Ts of the last record written since the last rewind (0: none).
    last_ts: Ts,
    buf: Vec<u8>,
    /// Set by the first failed sync: the file's state is then unknown (a
    /// failed fsync may have dropped pages it will never write), so nothing
    /// is written any more until a restart replays what is valid. Shared
    /// with the [`LogSync`] handles.
    failed: Arc<Mutex<Option<String>>>,
}

/// Syncs the log without its writer's lock, so a group can be written
/// while the one before it is being synced (see `flush`). Shares the
/// log's "failed" state: a failed sync stops every further write.
pub(super) struct LogSync {
    file: Arc<File>,
    failed: Arc<Mutex<Option<String>>>,
    /// Fail the next sync as the disk would (tests of the failure path).
    fail_next: std::sync::atomic::AtomicBool,
}

impl LogSync {
    /// Make everything written to the log before this call durable.
    pub fn sync(&self) -> Result<()> {
        check(&self.failed)?;
        if self
            .fail_next
            .swap(false, std::sync::atomic::Ordering::AcqRel)
        {
            return Err(fail(
                &self.failed,
                std::io::Error::other("injected sync failure"),
            ));
        }
        let t = std::time::Instant::now();
        let r = self.file.sync_data().map_err(|e| fail(&self.failed, e));
        metrics::counter!("tributary_fsyncs_total").increment(1);
        metrics::histogram!("tributary_fsync_duration_seconds").record(t.elapsed().as_secs_f64());
        r
    }

    /// Make the next [`Self::sync`] fail like a disk error.
    pub fn fail_next(&self) {
        self.fail_next
            .store(true, std::sync::atomic::Ordering::Release);
    }
}

impl CommitLog {
    /// Open (or create and preallocate to `log_bytes`) the log in `dir`
    /// and read its valid records, oldest first, keeping those after
    /// `keep_after` (the file's last applied commit).
    pub fn open(dir: &Path, log_bytes: u64, keep_after: Ts) -> Result<(CommitLog, Vec<Record>)> {
        Self::open_with(dir, log_bytes, keep_after, true)
    }

    /// [`Self::open`], with direct writes when `direct` and the file
    /// system allows them.
    fn open_with(
        dir: &Path,
        log_bytes: u64,
        keep_after: Ts,
        direct: bool,
    ) -> Result<(CommitLog, Vec<Record>)> {
        let path = dir.join(LOG_FILE);
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(io)?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).map_err(io)?;
        }
        let mut size = file.metadata().map_err(io)?.len();
        if size < log_bytes {
            // Zeros, written for real (not a sparse extent), then synced
            // once with the file's size.
            let no_room = |e: std::io::Error| {
                if e.raw_os_error() == Some(libc::ENOSPC) {
                    StorageError::Io(format!(
                        "No space left on device: the commit log {} is preallocated to {log_bytes} \
                         bytes; free space or start with a smaller --commit-log-size",
                        path.display()
                    ))
                } else {
                    io(e)
                }
            };
            file.seek(SeekFrom::Start(size)).map_err(io)?;
            let zeros = vec![0u8; 1 << 20];
            while size < log_bytes {
                let n = (log_bytes - size).min(zeros.len() as u64) as usize;
                file.write_all(&zeros[..n]).map_err(no_room)?;
                size += n as u64;
            }
            file.sync_all().map_err(no_room)?;
        }
        file.seek(SeekFrom::Start(0)).map_err(io)?;
        let (records, pos, last_ts) =
            read_records(std::io::BufReader::new(&file), size, keep_after)?;
        let tail_len = (pos % BLOCK as u64) as usize;
        let mut tail = vec![0u8; tail_len];
        file.read_exact_at(&mut tail, pos - tail_len as u64)
            .map_err(io)?;
        let mut dbuf = Vec::new();
        let direct = direct.then(|| open_direct(&path)).flatten().and_then(|d| {
            // Probe: rewrite the last block as it is (zeros after `pos`).
            match write_direct(&d, &mut dbuf, pos - tail.len() as u64, &[&tail]) {
                Ok(()) => Some(d),
                Err(e) => {
                    tracing::info!(error = %e, "commit log: no direct writes here; buffered");
                    None
                }
            }
        });
        Ok((
            CommitLog {
                file: Arc::new(file),
                direct,
                tail,
                dbuf,
                pos,
                size,
                last_ts,
                buf: Vec::new(),
                failed: Arc::default(),
            },
            records,
        ))
    }

    /// Ts of the last record written since the last rewind (0: none).
    pub fn last_ts(&self) -> Ts {
        self.last_ts
    }

    /// Whether `records` fit after the last record. Encodes them: a
    /// following [`Self::append_encoded`] writes them without encoding
    /// them again.
    pub fn fits(&mut self, records: &[(Ts, &[(TableId, Change)])]) -> bool {
        self.encode(records);
        self.pos + self.buf.len() as u64 <= self.size
    }

    /// Encode and write `records` after the last one (tests; the commit
    /// path asks [`Self::fits`] first, which encodes them).
    #[cfg(test)]
    pub fn append(&mut self, records: &[(Ts, &[(TableId, Change)])]) -> Result<()> {
        self.encode(records);
        self.append_encoded(records.last().map(|r| r.0))
    }

    /// Write the group [`Self::fits`] encoded last, whose last transaction
    /// has ts `last`, after the last record (not synced: see
    /// [`Self::sync`]). A group larger than the room left grows the file.
    pub fn append_encoded(&mut self, last: Option<Ts>) -> Result<()> {
        self.check()?;
        // The record's length is a u32: a larger group cannot be written
        // (read back, it would end the log early). Nothing is written.
        if self.buf.len() - HEADER > u32::MAX as usize {
            self.buf = Vec::new();
            return Err(StorageError::TxnTooLarge {
                setting: "the commit log's 4 GiB record".into(),
            });
        }
        // A full disk on demand: a `return` action fails the write as the
        // kernel would (ENOSPC), with its message.
        if let Err(tributary_fault::FaultError::Injected { message, .. }) =
            tributary_fault::hit_blocking(tributary_fault::points::STORAGE_LOG_WRITE, None, None)
        {
            return Err(StorageError::Io(format!("commit log: {message}")));
        }
        // A failed write (a full disk) acknowledged nothing and left no
        // valid record (one record per group): the next group is written at
        // the same place.
        let written = match &self.direct {
            Some(d) => {
                let start = self.pos - self.tail.len() as u64;
                write_direct(d, &mut self.dbuf, start, &[&self.tail, &self.buf])
            }
            None => self.file.write_all_at(&self.buf, self.pos),
        };
        written.map_err(|e| StorageError::Io(format!("commit log: {e}")))?;
        if self.direct.is_some() {
            // The new partial block: the end of what was just written.
            let end = self.tail.len() + self.buf.len();
            let keep = end % BLOCK;
            let mut next = Vec::with_capacity(keep);
            let from_tail = keep.saturating_sub(self.buf.len());
            next.extend_from_slice(&self.tail[self.tail.len() - from_tail..]);
            next.extend_from_slice(&self.buf[self.buf.len() - (keep - from_tail)..]);
            self.tail = next;
        }
        self.pos += self.buf.len() as u64;
        self.size = self.size.max(self.pos);
        if self.buf.capacity() > DBUF_KEEP {
            self.buf = Vec::new(); // a large group's room is not kept
        }
        if let Some(ts) = last {
            self.last_ts = ts;
        }
        Ok(())
    }

    /// Make what was appended durable.
    pub fn sync(&mut self) -> Result<()> {
        self.syncer().sync()
    }

    /// A handle that syncs the log without this writer.
    pub fn syncer(&self) -> LogSync {
        LogSync {
            file: self.file.clone(),
            failed: self.failed.clone(),
            fail_next: Default::default(),
        }
    }

    fn check(&self) -> Result<()> {
        check(&self.failed)
    }

    /// Forget every record (all are in the file) and make that durable:
    /// the next open reads nothing.
    pub fn clear(&mut self) -> Result<()> {
        self.check()?;
        match &self.direct {
            Some(d) => write_direct(d, &mut self.dbuf, 0, &[]),
            None => self.file.write_all_at(&[0u8; HEADER], 0),
        }
        .map_err(|e| StorageError::Io(format!("commit log: {e}")))?;
        self.sync()?;
        self.rewind();
        Ok(())
    }

    /// Start again at offset 0. Only when every record written is durably
    /// in redb: they are never read again.
    pub fn rewind(&mut self) {
        self.pos = 0;
        self.tail.clear();
        self.last_ts = 0;
    }

    fn encode(&mut self, records: &[(Ts, &[(TableId, Change)])]) {
        self.buf.clear();
        self.buf.extend_from_slice(&[0u8; HEADER]);
        self.buf
            .extend_from_slice(&(records.len() as u32).to_be_bytes());
        for (ts, changes) in records {
            self.buf.extend_from_slice(&ts.to_be_bytes());
            self.buf
                .extend_from_slice(&(changes.len() as u32).to_be_bytes());
            for (table, ch) in *changes {
                let enc = changelog::encode(ch);
                self.buf.extend_from_slice(&table.to_be_bytes());
                self.buf.extend_from_slice(&ch.seq.to_be_bytes());
                self.buf
                    .extend_from_slice(&(enc.len() as u32).to_be_bytes());
                self.buf.extend_from_slice(&enc);
            }
        }
        let payload = &self.buf[HEADER..];
        let len = payload.len() as u32;
        let crc = crc32fast::hash(payload);
        self.buf[..4].copy_from_slice(&len.to_be_bytes());
        self.buf[4..8].copy_from_slice(&crc.to_be_bytes());
    }
}

/// Size and alignment of direct writes: a page, a multiple of any logical
/// block size in use.
const BLOCK: usize = 4096;
/// Room for direct writes kept between groups.
const DBUF_KEEP: usize = 1 << 20;

/// The log opened for direct writes, or `None` where that is refused
/// (tmpfs on older kernels, some network file systems).
fn open_direct(path: &Path) -> Option<File> {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::fs::OpenOptionsExt;
        match OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_DIRECT)
            .open(path)
        {
            Ok(f) => Some(f),
            Err(e) => {
                tracing::info!(error = %e, "commit log: cannot open for direct writes; buffered");
                None
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = path;
        None
    }
}

/// Write `parts` one after another at block-aligned `start`, padded with
/// zeros to whole blocks, from a block-aligned buffer (`dbuf`, reused).
fn write_direct(f: &File, dbuf: &mut Vec<u8>, start: u64, parts: &[&[u8]]) -> std::io::Result<()> {
    let len: usize = parts.iter().map(|p| p.len()).sum();
    let padded = len.div_ceil(BLOCK).max(1) * BLOCK;
    if dbuf.len() < padded + BLOCK {
        dbuf.resize(padded + BLOCK, 0);
    }
    let off = dbuf.as_ptr().align_offset(BLOCK);
    let out = &mut dbuf[off..off + padded];
    let mut at = 0;
    for p in parts {
        out[at..at + p.len()].copy_from_slice(p);
        at += p.len();
    }
    out[at..].fill(0);
    let r = f.write_all_at(out, start);
    if dbuf.len() > DBUF_KEEP {
        *dbuf = Vec::new(); // a large group's room is not kept
    }
    r
}

fn check(failed: &Mutex<Option<String>>) -> Result<()> {
    match &*failed.lock() {
        Some(msg) => Err(StorageError::Io(format!(
            "the commit log failed earlier ({msg}); restart to recover"
        ))),
        None => Ok(()),
    }
}

fn fail(failed: &Mutex<Option<String>>, e: std::io::Error) -> StorageError {
    let msg = e.to_string();
    failed.lock().get_or_insert(msg.clone());
    StorageError::Io(format!("commit log: {msg}"))
}

/// The valid records at the start of a log of `size` bytes read from `r`,
/// and where they end. Reads record by record: a log of unapplied commits
/// costs memory for those only.
fn read_records(mut r: impl Read, size: u64, keep_after: Ts) -> Result<(Vec<Record>, u64, Ts)> {
    let mut out: Vec<Record> = Vec::new();
    let mut pos = 0u64;
    let mut last_ts: Ts = 0;
    let mut header = [0u8; HEADER];
    let mut payload = Vec::new();
    loop {
        if pos + HEADER as u64 > size || r.read_exact(&mut header).is_err() {
            break;
        }
        let len = u32::from_be_bytes([header[0], header[1], header[2], header[3]]) as usize;
        let crc = u32::from_be_bytes([header[4], header[5], header[6], header[7]]);
        if len < 4 || pos + (HEADER + len) as u64 > size {
            break;
        }
        payload.resize(len, 0);
        if r.read_exact(&mut payload).is_err() || crc32fast::hash(&payload) != crc {
            break;
        }
        let group = decode_group(&payload)?;
        let (Some(first), Some(last)) = (group.first(), group.last()) else {
            break;
        };
        let increasing = group.windows(2).all(|w| w[0].0 < w[1].0);
        if !increasing || last_ts >= first.0 {
            break; // a record of an earlier pass
        }
        last_ts = last.0;
        out.extend(group.into_iter().filter(|r| r.0 > keep_after));
        pos += (HEADER + len) as u64;
    }
    Ok((out, pos, last_ts))
}

fn decode_group(p: &[u8]) -> Result<Vec<Record>> {
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
    let txns = u32_of(take(&mut p, 4)?)?;
    let mut out = Vec::with_capacity(txns.min(1 << 16) as usize);
    for _ in 0..txns {
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
        out.push((ts, changes));
    }
    if !p.is_empty() {
        return Err(corrupt());
    }
    Ok(out)
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
            let (mut log, recs) = CommitLog::open(dir.path(), LOG_BYTES, 0).unwrap();
            assert!(recs.is_empty());
            for ts in 1..=5 {
                write(&mut log, ts, 3);
            }
        }
        let (_, recs) = CommitLog::open(dir.path(), LOG_BYTES, 0).unwrap();
        assert_eq!(
            recs.iter().map(|r| r.0).collect::<Vec<_>>(),
            [1, 2, 3, 4, 5]
        );
        assert_eq!(recs[2].1.len(), 3);
        assert_eq!(recs[2].1[1].1.new.as_deref(), Some(&3u64.to_be_bytes()[..]));
        assert_eq!(recs[2].1[1].1.commit_ts, 3);
        // Tear the last record: every byte of it in turn.
        let path = dir.path().join(LOG_FILE);
        let bytes = std::fs::read(&path).unwrap();
        let (_, end) = {
            let (r, e, _) = read_records(&bytes[..], bytes.len() as u64, 0).unwrap();
            (r, e)
        };
        let (four, start) = {
            let (r, e, _) = read_records(&bytes[..end as usize - 1], end - 1, 0).unwrap();
            (r, e)
        };
        assert_eq!(four.len(), 4);
        for at in start as usize..end as usize {
            let mut torn = bytes.clone();
            torn[at] ^= 0x5a;
            let (recs, _) = {
                let (r, e, _) = read_records(&torn[..], torn.len() as u64, 0).unwrap();
                (r, e)
            };
            assert_eq!(recs.len(), 4, "flipped byte {at}");
        }
    }

    #[test]
    fn a_group_is_one_record_of_several_transactions() {
        let dir = tempfile::tempdir().unwrap();
        let (mut log, _) = CommitLog::open(dir.path(), LOG_BYTES, 0).unwrap();
        let a = vec![(1, change(b"a", b"1", 0))];
        let b = vec![(2, change(b"b", b"2", 0)), (1, change(b"c", b"3", 1))];
        log.append(&[(4, &a), (5, &b)]).unwrap();
        log.sync().unwrap();
        drop(log);
        let path = dir.path().join(LOG_FILE);
        let bytes = std::fs::read(&path).unwrap();
        let (recs, end) = {
            let (r, e, _) = read_records(&bytes[..], bytes.len() as u64, 0).unwrap();
            (r, e)
        };
        assert_eq!(
            recs.iter().map(|r| (r.0, r.1.len())).collect::<Vec<_>>(),
            [(4, 1), (5, 2)]
        );
        // Any prefix of the group's bytes holds no transaction at all.
        for cut in 0..end as usize {
            let mut torn = bytes.clone();
            torn[cut..end as usize].fill(0);
            assert!(
                {
                    let (r, e, _) = read_records(&torn[..], torn.len() as u64, 0).unwrap();
                    (r, e)
                }
                .0
                .is_empty(),
                "cut at {cut}"
            );
        }
    }

    #[test]
    fn after_a_rewind_records_of_the_earlier_pass_are_never_read() {
        let dir = tempfile::tempdir().unwrap();
        let (mut log, _) = CommitLog::open(dir.path(), LOG_BYTES, 0).unwrap();
        for ts in 1..=10 {
            write(&mut log, ts, 2);
        }
        log.rewind();
        write(&mut log, 11, 2);
        write(&mut log, 12, 1);
        drop(log);
        let (log, recs) = CommitLog::open(dir.path(), LOG_BYTES, 0).unwrap();
        assert_eq!(recs.iter().map(|r| r.0).collect::<Vec<_>>(), [11, 12]);
        assert_eq!(log.last_ts(), 12);
    }

    /// Records across many blocks, the log reopened at every few of them
    /// (mid-block) and appended to again: direct writes rewrite the last
    /// block from what they keep of it, buffered ones write in place.
    #[test]
    fn appends_after_reopening_mid_block_keep_every_record() {
        for direct in [true, false] {
            let dir = tempfile::tempdir().unwrap();
            let mut ts = 0;
            for round in 0..12u32 {
                let (mut log, recs) = CommitLog::open_with(dir.path(), 1 << 20, 0, direct).unwrap();
                assert_eq!(
                    recs.iter().map(|r| r.0).collect::<Vec<_>>(),
                    (1..=ts).collect::<Vec<_>>(),
                    "direct {direct}, round {round}"
                );
                for r in &recs {
                    let n = r.1.len() as u32;
                    assert_eq!(n, (r.0 % 7 + 1) as u32);
                    assert_eq!(r.1[0].1.new.as_deref(), Some(&r.0.to_be_bytes()[..]));
                }
                if direct && log.direct.is_none() {
                    eprintln!("no O_DIRECT on this file system: buffered writes twice");
                }
                for _ in 0..(round * 5 + 1) {
                    ts += 1;
                    write(&mut log, ts, (ts % 7 + 1) as u32);
                }
            }
        }
    }

    #[test]
    fn a_group_larger_than_the_file_grows_it() {
        let dir = tempfile::tempdir().unwrap();
        let (mut log, _) = CommitLog::open(dir.path(), LOG_BYTES, 0).unwrap();
        let big = vec![9u8; 1 << 20];
        let changes: Vec<(TableId, Change)> = (0..70u32)
            .map(|i| (1, change(&i.to_be_bytes(), &big, i)))
            .collect();
        assert!(!log.fits(&[(1, &changes)]));
        log.append(&[(1, &changes)]).unwrap();
        log.sync().unwrap();
        drop(log);
        let (_, recs) = CommitLog::open(dir.path(), LOG_BYTES, 0).unwrap();
        assert_eq!(recs.len(), 1);
        assert_eq!(recs[0].1.len(), 70);
    }
}
