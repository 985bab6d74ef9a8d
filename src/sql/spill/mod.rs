//! Spilling to temporary files: what lets sort, aggregate, DISTINCT and
//! hash join work past their memory budget instead of failing (issue 41
//! item 4; decision 027).
//!
//! Owns the running statement's spill settings on its thread ([`Settings`],
//! entered beside its [`budget`] scope): the directory of its temporary
//! files (`@@tmpdir`: `<datadir>/tmp`, or the OS temp dir for a database
//! with no directory), its operators' budgets (`sort_buffer_size` for a
//! sort; the smaller of `tmp_table_size` and `max_heap_table_size` for a
//! hash table), and the node's counters ([`Stats`]: `Created_tmp_files`,
//! `Created_tmp_disk_tables`, `Sort_merge_passes`). Owns the temporary
//! files themselves ([`SpillFile`]: named `#sql-spill-…` in the tmpdir,
//! removed when dropped — so also when the statement fails or is killed —
//! and swept at startup by [`remove_leftovers`]), their row encoding
//! (records of rows, each row in `catalog::codec`'s format), and the
//! primitives built on them: the external merge sort ([`sort`]) and the
//! partitioning of a hybrid hash table and a grace hash join ([`hash`]).
//!
//! Never names a plan, an expression or an executor: operators hand it
//! rows and comparators. Every loop over rows ticks ([`budget::tick`]);
//! the buffers it keeps are charged to the statement's budget.

pub mod hash;
pub mod sort;

use std::cell::RefCell;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::catalog::codec;
use crate::error::{SqlError, SqlResult};
use crate::sql::budget::{self, Reservation};
use crate::types::Value;

/// ER_ERROR_ON_WRITE: a temporary file could not be written.
pub const ERROR_ON_WRITE: u16 = 1026;
/// ER_ERROR_ON_READ: a temporary file could not be read.
pub const ERROR_ON_READ: u16 = 1024;

/// Bytes of one file's read or write buffer.
pub const BUFFER: usize = 32 << 10;

/// Name prefix of every spill file (what [`remove_leftovers`] sweeps).
pub const PREFIX: &str = "#sql-spill-";

/// Default of `sort_buffer_size` and `tmp_table_size` /
/// `max_heap_table_size` (decision 027).
pub const DEFAULT_BUDGET: u64 = 16 << 20;

/// The node's spill counters (`SHOW STATUS`).
#[derive(Debug, Default)]
pub struct Stats {
    /// Temporary files created (`Created_tmp_files`).
    pub files: AtomicU64,
    /// Hash tables (aggregate, DISTINCT, join) that went to disk
    /// (`Created_tmp_disk_tables`).
    pub disk_tables: AtomicU64,
    /// Merge passes of external sorts (`Sort_merge_passes`).
    pub merge_passes: AtomicU64,
    /// Bytes written to spill files (`Tributary_spill_bytes_written`).
    pub bytes_written: AtomicU64,
}

impl Stats {
    /// The counters as `SHOW STATUS` rows.
    pub fn status(&self) -> [(&'static str, u64); 4] {
        let l = |a: &AtomicU64| a.load(Ordering::Relaxed);
        [
            ("Created_tmp_disk_tables", l(&self.disk_tables)),
            ("Created_tmp_files", l(&self.files)),
            ("Sort_merge_passes", l(&self.merge_passes)),
            ("Tributary_spill_bytes_written", l(&self.bytes_written)),
        ]
    }
}

/// A running statement's spill settings.
#[derive(Debug)]
pub struct Settings {
    /// Where its temporary files go.
    pub dir: PathBuf,
    /// Bytes one sort keeps in memory (`sort_buffer_size`).
    pub sort_buffer: u64,
    /// Bytes one hash table keeps in memory (`tmp_table_size`,
    /// `max_heap_table_size`: the smaller).
    pub tmp_table: u64,
    /// The node's counters.
    pub stats: Arc<Stats>,
}

thread_local! {
    static CURRENT: crate::sql::thread_slot::Slot<Settings> = const { RefCell::new(None) };
}

/// The statement's settings on this thread while the guard lives.
pub type Scope = crate::sql::thread_slot::Guard<Settings>;

/// Spill with `s` on this thread until the guard is dropped.
pub fn enter(s: Arc<Settings>) -> Scope {
    crate::sql::thread_slot::enter(&CURRENT, s)
}

/// The settings of the statement running on this thread (none: never
/// spill, e.g. on a worker thread).
pub fn current() -> Option<Arc<Settings>> {
    crate::sql::thread_slot::get(&CURRENT)
}

/// The running statement's spill settings and an in-memory budget of
/// `times` × `sort_buffer_size` ([`capped`]), for an operator that holds
/// rows whose sort state is a small part of them (the window's units).
pub fn sort_limit_times(times: u64) -> (Option<Arc<Settings>>, u64) {
    let settings = current();
    let limit = settings
        .as_deref()
        .map_or(u64::MAX, |s| capped(s.sort_buffer.saturating_mul(times)));
    (settings, limit)
}

/// The statement's spill settings and an operator's in-memory budget under
/// them: the setting `field` picks (`sort_buffer_size`, `tmp_table_size`),
/// [`capped`]; without settings (a worker thread) it never spills.
pub(super) fn statement_limit(field: fn(&Settings) -> u64) -> (Option<Arc<Settings>>, u64) {
    let settings = current();
    let limit = settings.as_deref().map_or(u64::MAX, |s| capped(field(s)));
    (settings, limit)
}

/// An operator's in-memory budget: `setting`, but at most half of what
/// the statement may still charge (the rest is for what cannot spill).
fn capped(setting: u64) -> u64 {
    match budget::current() {
        Some(s) => setting.min(s.remaining() / 2),
        None => setting,
    }
}

/// Remove the spill files a previous process left in `dir` (a crash
/// skips their drops). Only ever called on a data directory's own
/// `tmp`, never on a shared temp dir.
pub fn remove_leftovers(dir: &Path) -> std::io::Result<usize> {
    let mut n = 0;
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(e),
    };
    for e in entries {
        let e = e?;
        if e.file_name().to_string_lossy().starts_with(PREFIX) {
            std::fs::remove_file(e.path())?;
            n += 1;
        }
    }
    Ok(n)
}

/// Names of spill files, unique in the process.
static NEXT_FILE: AtomicU64 = AtomicU64::new(0);

fn write_error(path: &Path, e: std::io::Error) -> SqlError {
    SqlError::new(
        ERROR_ON_WRITE,
        format!("Error writing file '{}' ({e})", path.display()),
    )
}

fn read_error(path: &Path, e: impl std::fmt::Display) -> SqlError {
    SqlError::new(
        ERROR_ON_READ,
        format!("Error reading file '{}' ({e})", path.display()),
    )
}

/// One temporary file being written: records appended through a buffer.
/// Removed from disk when dropped unless [`SpillFile::finish`]ed into a
/// [`Spilled`] (which removes it in turn).
pub struct SpillFile {
    out: BufWriter<File>,
    path: Removed,
    records: u64,
    bytes: u64,
    settings: Arc<Settings>,
    /// The write buffer's charge.
    _mem: Reservation,
    scratch: Vec<u8>,
}

/// A path removed from disk when dropped.
struct Removed(PathBuf);

impl Drop for Removed {
    fn drop(&mut self) {
        // Already gone is fine; anything else is swept at the next start.
        let _ = std::fs::remove_file(&self.0);
    }
}

impl SpillFile {
    /// A new, empty file in the statement's tmpdir.
    pub fn create(settings: &Arc<Settings>) -> SqlResult<SpillFile> {
        let mut mem = Reservation::new();
        mem.add(BUFFER)?;
        std::fs::create_dir_all(&settings.dir).map_err(|e| write_error(&settings.dir, e))?;
        let name = format!(
            "{PREFIX}{}-{}",
            std::process::id(),
            NEXT_FILE.fetch_add(1, Ordering::Relaxed)
        );
        let path = settings.dir.join(name);
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(|e| write_error(&path, e))?;
        settings.stats.files.fetch_add(1, Ordering::Relaxed);
        Ok(SpillFile {
            out: BufWriter::with_capacity(BUFFER, file),
            path: Removed(path),
            records: 0,
            bytes: 0,
            settings: settings.clone(),
            _mem: mem,
            scratch: Vec::new(),
        })
    }

    /// Append one record: a few rows (an item and its sort keys, a row and
    /// its MATCH scores).
    pub fn write(&mut self, parts: &[&[Value]]) -> SqlResult<()> {
        budget::tick()?;
        self.scratch.clear();
        self.scratch.extend_from_slice(&[0; 4]);
        for p in parts {
            let row = codec::encode_row(p);
            let len = u32::try_from(row.len())
                .map_err(|_| SqlError::new(ERROR_ON_WRITE, "a spilled row is larger than 4 GiB"))?;
            self.scratch.extend_from_slice(&len.to_le_bytes());
            self.scratch.extend_from_slice(&row);
        }
        let total = u32::try_from(self.scratch.len() - 4)
            .map_err(|_| SqlError::new(ERROR_ON_WRITE, "a spilled record is larger than 4 GiB"))?;
        self.scratch[..4].copy_from_slice(&total.to_le_bytes());
        self.out
            .write_all(&self.scratch)
            .map_err(|e| write_error(&self.path.0, e))?;
        self.records += 1;
        self.bytes += self.scratch.len() as u64;
        Ok(())
    }

    /// Records written so far.
    pub fn records(&self) -> u64 {
        self.records
    }

    /// Flush it and make it readable from its start.
    pub fn finish(self) -> SqlResult<Spilled> {
        let SpillFile {
            out,
            path,
            records,
            bytes,
            settings,
            ..
        } = self;
        // Closed until read: a sort may hold many runs, never as many
        // open files.
        out.into_inner()
            .map_err(|e| write_error(&path.0, e.into_error()))?;
        settings
            .stats
            .bytes_written
            .fetch_add(bytes, Ordering::Relaxed);
        Ok(Spilled { path, records })
    }
}

/// A written temporary file, not yet read (and not open).
pub struct Spilled {
    path: Removed,
    records: u64,
}

impl Spilled {
    /// Read its records from the start.
    pub fn reader(self) -> SqlResult<Reader> {
        let mut mem = Reservation::new();
        mem.add(BUFFER)?;
        let file = File::open(&self.path.0).map_err(|e| read_error(&self.path.0, e))?;
        Ok(Reader {
            input: BufReader::with_capacity(BUFFER, file),
            path: self.path,
            left: self.records,
            buf: Vec::new(),
            _mem: mem,
        })
    }
}

/// Reads a [`Spilled`] file's records in the order they were written.
pub struct Reader {
    input: BufReader<File>,
    path: Removed,
    left: u64,
    buf: Vec<u8>,
    _mem: Reservation,
}

impl Reader {
    /// The next record's rows; `None` after the last.
    pub fn next_record(&mut self) -> SqlResult<Option<Vec<Vec<Value>>>> {
        if self.left == 0 {
            return Ok(None);
        }
        budget::tick()?;
        let mut len = [0u8; 4];
        self.input
            .read_exact(&mut len)
            .map_err(|e| read_error(&self.path.0, e))?;
        let len = u32::from_le_bytes(len) as usize;
        self.buf.resize(len, 0);
        self.input
            .read_exact(&mut self.buf)
            .map_err(|e| read_error(&self.path.0, e))?;
        self.left -= 1;
        let mut parts = Vec::new();
        let mut at = 0;
        while at < self.buf.len() {
            let n = self
                .buf
                .get(at..at + 4)
                .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
                .ok_or_else(|| read_error(&self.path.0, "truncated record"))?;
            let row = self
                .buf
                .get(at + 4..at + 4 + n)
                .ok_or_else(|| read_error(&self.path.0, "truncated record"))?;
            parts.push(codec::decode_row(row).map_err(|e| read_error(&self.path.0, e))?);
            at += 4 + n;
        }
        Ok(Some(parts))
    }
}

/// What a spilling operator keeps per item and writes to its files.
pub trait Spillable: Sized + Default + 'static {
    /// Estimated bytes it holds in memory.
    fn size(&self) -> usize;
    /// Append it to `f`.
    fn write(&self, f: &mut SpillFile) -> SqlResult<()>;
    /// Rebuild it from a record [`Spillable::write`] wrote.
    fn read(parts: Vec<Vec<Value>>) -> SqlResult<Self>;
}

fn shape_error() -> SqlError {
    SqlError::internal("a spilled record has the wrong number of rows")
}

impl Spillable for Vec<Value> {
    fn size(&self) -> usize {
        budget::row_size(self)
    }
    fn write(&self, f: &mut SpillFile) -> SqlResult<()> {
        f.write(&[self])
    }
    fn read(parts: Vec<Vec<Value>>) -> SqlResult<Self> {
        let mut it = parts.into_iter();
        match (it.next(), it.next()) {
            (Some(a), None) => Ok(a),
            _ => Err(shape_error()),
        }
    }
}

impl Spillable for (Vec<Value>, Vec<Value>) {
    fn size(&self) -> usize {
        budget::row_size(&self.0) + budget::row_size(&self.1)
    }
    fn write(&self, f: &mut SpillFile) -> SqlResult<()> {
        f.write(&[&self.0, &self.1])
    }
    fn read(parts: Vec<Vec<Value>>) -> SqlResult<Self> {
        let mut it = parts.into_iter();
        match (it.next(), it.next(), it.next()) {
            (Some(a), Some(b), None) => Ok((a, b)),
            _ => Err(shape_error()),
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Settings spilling into a fresh directory with budgets of `bytes`.
    pub(crate) fn settings(bytes: u64) -> (tempfile::TempDir, Arc<Settings>) {
        let dir = tempfile::tempdir().unwrap();
        let s = Arc::new(Settings {
            dir: dir.path().join("tmp"),
            sort_buffer: bytes,
            tmp_table: bytes,
            stats: Default::default(),
        });
        (dir, s)
    }

    pub(crate) fn files_in(dir: &Path) -> usize {
        std::fs::read_dir(dir).map_or(0, |d| d.count())
    }

    #[test]
    fn records_round_trip_and_the_file_goes_when_dropped() {
        let (_d, s) = settings(1 << 20);
        let mut f = SpillFile::create(&s).unwrap();
        let rows: Vec<Vec<Value>> = (0..5000)
            .map(|i| {
                vec![
                    Value::Int(i),
                    Value::Text("x".repeat((i % 50) as usize)),
                    Value::Null,
                    Value::Float(i as f64 / 3.0),
                    Value::Vector(vec![1.0, i as f64]),
                    Value::Decimal(crate::decimal::Decimal::from_i64(i)),
                    Value::DateTime(i * 1000),
                    Value::Bool(i % 2 == 0),
                ]
            })
            .collect();
        for r in &rows {
            f.write(&[r, &[Value::Int(7)]]).unwrap();
        }
        f.write(&[]).unwrap();
        assert_eq!(files_in(&s.dir), 1);
        let mut r = f.finish().unwrap().reader().unwrap();
        for want in &rows {
            let got = r.next_record().unwrap().unwrap();
            assert_eq!(got, vec![want.clone(), vec![Value::Int(7)]]);
        }
        assert_eq!(r.next_record().unwrap(), Some(vec![]));
        assert_eq!(r.next_record().unwrap(), None);
        drop(r);
        assert_eq!(files_in(&s.dir), 0);
        assert_eq!(s.stats.files.load(Ordering::Relaxed), 1);
        assert!(s.stats.bytes_written.load(Ordering::Relaxed) > 5000 * 40);
        // Dropped while written: gone too.
        let mut f = SpillFile::create(&s).unwrap();
        f.write(&[&[Value::Int(1)]]).unwrap();
        drop(f);
        assert_eq!(files_in(&s.dir), 0);
    }

    #[test]
    fn a_damaged_file_is_an_error_not_a_panic() {
        let (_d, s) = settings(1 << 20);
        let mut f = SpillFile::create(&s).unwrap();
        f.write(&[&[Value::Text("abc".into())]]).unwrap();
        let path = f.path.0.clone();
        let done = f.finish().unwrap();
        std::fs::write(&path, [9u8, 0, 0, 0, 1, 0]).unwrap();
        let e = done.reader().unwrap().next_record().unwrap_err();
        assert_eq!(e.code, ERROR_ON_READ);
    }

    #[test]
    fn leftovers_are_swept_and_nothing_else() {
        let (_d, s) = settings(1 << 20);
        std::fs::create_dir_all(&s.dir).unwrap();
        std::fs::write(s.dir.join(format!("{PREFIX}1-2")), b"x").unwrap();
        std::fs::write(s.dir.join("keep.me"), b"x").unwrap();
        assert_eq!(remove_leftovers(&s.dir).unwrap(), 1);
        assert_eq!(files_in(&s.dir), 1);
        assert_eq!(remove_leftovers(&s.dir.join("absent")).unwrap(), 0);
    }
}
