//! Background CPU work of the ISCP layer: threads that run below the
//! priority of statements, so index maintenance (writing and purging
//! bases) uses idle CPU without slowing foreground queries.
//!
//! Owns: the niceness of such threads and the one `unsafe` call that sets
//! it. Must never: take a lock that foreground work waits on from a
//! lowered thread (priority inversion), or leave a thread behind (every
//! thread started here is joined before its caller returns).

/// CPU niceness of background work: foreground statements and units run
/// first.
const BACKGROUND_NICE: i32 = 10;

/// Run `f` on a thread of its own at `BACKGROUND_NICE` (Linux; at normal
/// priority elsewhere), joined before this returns. Never holds a lock that
/// foreground work waits on (priority inversion): the index's lock is taken
/// on normal threads only.
pub async fn on_background_thread<T: Send + 'static>(
    f: impl FnOnce() -> T + Send + 'static,
) -> Result<T, String> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    let handle = std::thread::Builder::new()
        .name("iscp-base-writer".into())
        .spawn(move || {
            lower_this_threads_priority();
            let _ = tx.send(f());
        })
        .map_err(|e| format!("starting a base writer thread: {e}"))?;
    let out = rx
        .await
        .map_err(|_| "the base writer thread panicked".to_string());
    // It has sent its result (or died): the join returns at once.
    let _ = tokio::task::spawn_blocking(move || handle.join()).await;
    out
}

#[cfg(target_os = "linux")]
#[allow(unsafe_code, reason = "setpriority(2) has no safe wrapper in libc")]
fn lower_this_threads_priority() {
    // SAFETY: setpriority(2) takes plain integers and reads no memory of
    // ours; on Linux `who = 0` with PRIO_PROCESS is the calling thread, so
    // this changes only this short-lived thread's nice value.
    let r = unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, BACKGROUND_NICE) };
    if r != 0 {
        tracing::debug!("could not lower a background thread's priority");
    }
}

#[cfg(not(target_os = "linux"))]
fn lower_this_threads_priority() {}
