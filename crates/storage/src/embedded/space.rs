//! Free space on the data directory's file system, as the applier sees it.
//!
//! Owns the one question "is there room to write this much into the data
//! file?" and its answer for a full disk. The applier asks before every
//! redb write: redb marks its file as needing recovery after any failed
//! write, and every later read then fails until the file is reopened, so
//! a write that would run out of space is better not started. The commit
//! log needs no such check (it is preallocated).
//!
//! This module must never write anything, and never decide alone: the
//! answer is advice for the applier, which keeps the work queued (it is
//! durable in the commit log) and retries.

use std::path::Path;

/// Bytes the applier leaves free on the data file's file system, whatever
/// the batch (less on a file system smaller than 16 times it: a sixteenth
/// of its size): redb grows its file by whole regions, and the rest of the
/// machine (logs, temporary files) needs some room too.
pub(super) const APPLY_RESERVE: u64 = 16 << 20;
/// A batch of changes takes about this many times its size in new pages
/// (rows, change-log entries, B-tree nodes copied on write).
const PAGES_PER_BYTE: u64 = 4;

/// The file system holding a directory: bytes an unprivileged writer may
/// still use, and its size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Space {
    pub free: u64,
    pub total: u64,
}

impl Space {
    /// What the applier keeps free here (see [`APPLY_RESERVE`]).
    pub fn reserve(&self) -> u64 {
        APPLY_RESERVE.min(self.total / 16)
    }
}

/// The file system holding `dir`, or `None` where it cannot be read. The
/// fault point [`tributary_fault::points::STORAGE_FREE_SPACE`] overrides
/// the free bytes with its `iarg` (negative: read the file system), for
/// tests of a full disk without one.
pub(super) fn space_of(dir: &Path) -> Option<Space> {
    let mut space = statvfs(dir);
    if let Ok(Some(hit)) =
        tributary_fault::hit_blocking(tributary_fault::points::STORAGE_FREE_SPACE, None, None)
    {
        if let Ok(free) = u64::try_from(hit.iarg) {
            let total = space.map_or(u64::MAX, |s| s.total);
            space = Some(Space { free, total });
        }
    }
    space
}

#[cfg(unix)]
fn statvfs(dir: &Path) -> Option<Space> {
    let st = rustix::fs::statvfs(dir).ok()?;
    Some(Space {
        free: st.f_bavail.saturating_mul(st.f_frsize),
        total: st.f_blocks.saturating_mul(st.f_frsize),
    })
}

#[cfg(not(unix))]
fn statvfs(_dir: &Path) -> Option<Space> {
    None
}

/// Bytes of new pages a batch of `batch_bytes` bytes of changes may take.
pub(super) fn pages_for(batch_bytes: usize) -> u64 {
    (batch_bytes as u64).saturating_mul(PAGES_PER_BYTE)
}

/// `Err` with a message for the operator when the file system holding
/// `dir` lacks room for `pages` bytes of new pages plus its reserve; `Ok`
/// when it has them or when the free space cannot be read (the write then
/// finds out).
pub(super) fn check_room(dir: &Path, pages: u64) -> Result<(), String> {
    match space_of(dir) {
        Some(sp) if sp.free < pages.saturating_add(sp.reserve()) => Err(format!(
            "No space left on device: {} bytes free on the file system of {}, the data file \
             needs about {} (commits stay durable in the commit log and reach the data file \
             when space returns)",
            sp.free,
            dir.display(),
            pages.saturating_add(sp.reserve())
        )),
        _ => Ok(()),
    }
}

/// An error met while opening the storage, explained when the disk is
/// (nearly) full: opening writes to the data file (its tables, the replay
/// of the commit log) and preallocates the commit log.
pub(super) fn explain_open_failure(
    dir: &Path,
    e: crate::api::StorageError,
) -> crate::api::StorageError {
    use crate::api::StorageError;
    match (&e, space_of(dir)) {
        (StorageError::Io(msg), Some(sp)) if sp.free <= sp.reserve() => StorageError::Io(format!(
            "cannot open the storage in {}: the disk is full ({} bytes free; opening writes to \
             the data file and keeps {} bytes free). Free space and start again: nothing \
             committed is lost, it waits in the commit log. ({msg})",
            dir.display(),
            sp.free,
            sp.reserve()
        )),
        _ => e,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_current_directory_has_a_readable_free_space() {
        let sp = statvfs(Path::new(".")).expect("statvfs works here");
        assert!(sp.free > 0 && sp.total >= sp.free, "{sp:?}");
    }

    #[test]
    fn a_missing_directory_has_no_answer_and_no_refusal() {
        let p = Path::new("/no/such/dir/tributary");
        assert_eq!(statvfs(p), None);
        assert!(check_room(p, u64::MAX).is_ok());
    }

    #[test]
    fn the_reserve_is_a_sixteenth_of_a_small_file_system() {
        let sp = |total| Space { free: 0, total };
        assert_eq!(sp(1 << 40).reserve(), APPLY_RESERVE);
        assert_eq!(sp(8 << 20).reserve(), 512 << 10);
        assert_eq!(pages_for(1 << 20), 4 << 20);
        assert_eq!(pages_for(usize::MAX), u64::MAX);
    }

    #[test]
    fn too_little_room_is_refused_with_the_numbers() {
        let sp = statvfs(Path::new(".")).expect("statvfs works here");
        let err = check_room(Path::new("."), sp.free.saturating_add(1 << 40)).unwrap_err();
        assert!(err.contains("No space left on device"), "{err}");
        assert!(check_room(Path::new("."), 0).is_ok() || sp.free < sp.reserve());
    }
}
