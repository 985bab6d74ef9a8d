//! The cancel queue: the second half of the DROP protocol, run by the
//! runner for every job whose row says dropped (drop_at set) but not yet
//! Canceled — whether the DROP ran on this CN or another, before or after a
//! crash (this is also the recovery path).
//!
//! Steps: fence the job id (new work units skip it) and cancel the running
//! consumer's token and its base writer's (their fault waits, channel
//! receives, chunk writes and commits all observe it), wait for both to exit, then finalize: purge the
//! hidden storage (idempotent), release the change-log consumer, and write
//! Canceled. Failures are retried with capped backoff; the fence is removed
//! only after Canceled is durable, so the runtime maps return to empty.

use std::sync::Arc;

use tokio_util::sync::CancellationToken;
use tributary_fault::points;
use tributary_storage::TxnOptions;

use crate::iscp::consumer::consumer_name;
use crate::iscp::log::{self, JobRow};
use crate::iscp::runtime::TaskKind;
use crate::iscp::Iscp;

/// Upper bound of retry attempts before the queue gives the job back to
/// the next tick (which re-queues it).
pub const MAX_FINALIZE_ATTEMPTS: u32 = 50;

/// Drain and finalize one dropped job.
pub async fn finalize(iscp: Arc<Iscp>, j: JobRow, token: CancellationToken) {
    let job_id = j.key.job_id;
    let _g = iscp.runtime.task(TaskKind::Cancel, Some(job_id));
    let span = tracing::info_span!("iscp_cancel", job_id, index = %j.spec.index);
    let _e = span.enter();
    drop(_e);
    // 1. Fence + cancel, then wait for the consumer to exit.
    for mut done in iscp.runtime.fence_and_cancel(job_id) {
        tokio::select! {
            _ = token.cancelled() => return,
            _ = done.wait_for(|d| *d) => {}
        }
    }
    iscp.drop_live(job_id);
    // 2. Finalize with retries.
    let mut delay = iscp.config.iscp_retry_base;
    for attempt in 0..MAX_FINALIZE_ATTEMPTS {
        match try_finalize(&iscp, &j, &token).await {
            Ok(()) => {
                iscp.runtime.unfence(job_id);
                iscp.notify_progress();
                tracing::info!(job_id, attempt, "ISCP job canceled");
                return;
            }
            Err(Stop::Shutdown) => return,
            Err(Stop::Retry(msg)) => {
                tracing::warn!(job_id, attempt, error = %msg, "mark-canceled failed; retrying");
                tokio::select! {
                    _ = token.cancelled() => return,
                    _ = tokio::time::sleep(delay) => {}
                }
                delay = (delay * 2).min(iscp.config.iscp_retry_cap);
            }
        }
    }
    // Leave the fence in place: the job is still dropped; the next tick
    // queues it again.
}

enum Stop {
    Shutdown,
    Retry(String),
}

async fn try_finalize(iscp: &Arc<Iscp>, j: &JobRow, token: &CancellationToken) -> Result<(), Stop> {
    let idx = Some(j.spec.index.as_str());
    match tributary_fault::hit(points::ISCP_BEFORE_MARK_CANCELED, idx, token).await {
        Err(tributary_fault::FaultError::Canceled { .. }) => return Err(Stop::Shutdown),
        Err(e) => return Err(Stop::Retry(e.to_string())),
        Ok(_) => {}
    }
    match tributary_fault::hit(points::ISCP_MARK_CANCELED_ERROR, idx, token).await {
        Err(tributary_fault::FaultError::Canceled { .. }) => return Err(Stop::Shutdown),
        Err(e) => return Err(Stop::Retry(format!("injected ISCP cancel mark error: {e}"))),
        Ok(_) => {}
    }
    let iscp2 = iscp.clone();
    let key = j.key.clone();
    let storage_id = j.spec.storage_id;
    let r = tokio::task::spawn_blocking(move || -> Result<(), String> {
        iscp2
            .storage
            .purge_table(storage_id)
            .map_err(|e| e.to_string())?;
        iscp2.storage.remove_consumer(&consumer_name(key.job_id));
        let mut txn = iscp2
            .storage
            .begin(TxnOptions {
                lock_wait_timeout: crate::iscp::BOOKKEEPING_LOCK_WAIT,
                read_only: false,
                ..TxnOptions::default()
            })
            .map_err(|e| e.to_string())?;
        log::mark_canceled(txn.as_mut(), &key).map_err(|e| e.message)?;
        txn.commit().map_err(|e| e.to_string())?;
        Ok(())
    })
    .await;
    match r {
        Ok(Ok(())) => Ok(()),
        Ok(Err(m)) => Err(Stop::Retry(m)),
        Err(e) => Err(Stop::Retry(e.to_string())),
    }
}
