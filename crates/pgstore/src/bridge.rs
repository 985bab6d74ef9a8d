//! The bridge from the synchronous storage contract to async tokio-postgres.
//!
//! Owns the backend's own multi-thread tokio runtime (its threads run every
//! PostgreSQL connection) and [`Bridge::call`], which runs a future there
//! and parks the calling thread on a std channel until it is done. Callers
//! may themselves be on tokio threads (the server's connection runtimes,
//! ISCP's workers): nothing here uses `block_on`, which panics there.
//!
//! This module must never hold a lock of its own while it waits, and never
//! let a caller's future outlive the runtime (shutdown drops pending calls,
//! whose callers then get [`StorageError::Io`]).

use std::future::Future;

use tributary_storage::StorageError;

/// The backend's runtime.
pub(crate) struct Bridge {
    rt: Option<tokio::runtime::Runtime>,
}

impl Bridge {
    /// A runtime with `threads` worker threads named `pg-<name>`.
    pub fn new(threads: usize) -> Result<Bridge, StorageError> {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(threads.max(1))
            .thread_name("tributary-pg")
            .enable_all()
            .build()
            .map_err(|e| StorageError::Io(format!("starting the PostgreSQL runtime: {e}")))?;
        Ok(Bridge { rt: Some(rt) })
    }

    /// The runtime's handle (for spawning owned background tasks).
    #[allow(
        clippy::expect_used,
        reason = "`rt` is Some from `new` until `drop` takes it"
    )]
    pub fn handle(&self) -> &tokio::runtime::Handle {
        self.rt.as_ref().expect("runtime lives until drop").handle()
    }

    /// Run `fut` on the backend runtime and wait for its output.
    pub fn call<T, F>(&self, fut: F) -> Result<T, StorageError>
    where
        F: Future<Output = T> + Send + 'static,
        T: Send + 'static,
    {
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        self.handle().spawn(async move {
            let _ = tx.send(fut.await);
        });
        rx.recv()
            .map_err(|_| StorageError::Io("the PostgreSQL runtime shut down".into()))
    }
}

impl Drop for Bridge {
    fn drop(&mut self) {
        // Dropping a runtime blocks; from inside another runtime that
        // panics, so let its threads go in the background.
        if let Some(rt) = self.rt.take() {
            rt.shutdown_background();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_from_inside_another_runtime_do_not_panic() {
        let bridge = std::sync::Arc::new(Bridge::new(1).unwrap());
        let outer = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let b = bridge.clone();
        let got = outer.block_on(async move { b.call(async { 7 }) });
        assert_eq!(got, Ok(7));
    }
}
