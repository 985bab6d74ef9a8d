//! Runtime registries of the ISCP runner: running consumers per job id,
//! fences per job id (generation), and a task registry that tests use to
//! prove no consumer, retriever or cancel task outlives its job.
//!
//! All maps are keyed by **job id**, so a re-created index with the same
//! name (a new generation) is never blocked by the fence of the old one.
//! Fences are removed once the job's terminal state is installed, so the
//! maps return to empty under endless create/drop. Never does I/O.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

/// Kind of a registered task.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TaskKind {
    Runner,
    TableIteration,
    Retriever,
    Consumer,
    Cancel,
}

/// One running consumer (one job's work unit).
pub struct RunningConsumer {
    pub token: CancellationToken,
    done: watch::Receiver<bool>,
}

/// Guard that unregisters a consumer (and signals `done`) when dropped.
pub struct ConsumerGuard {
    rt: Arc<Runtime>,
    job_id: u64,
    tx: watch::Sender<bool>,
}

impl Drop for ConsumerGuard {
    fn drop(&mut self) {
        self.rt.consumers.lock().remove(&self.job_id);
        let _ = self.tx.send(true);
    }
}

/// Guard of a registered task.
pub struct TaskGuard {
    rt: Arc<Runtime>,
    id: u64,
}

impl Drop for TaskGuard {
    fn drop(&mut self) {
        self.rt.tasks.lock().remove(&self.id);
    }
}

/// The registries.
#[derive(Default)]
pub struct Runtime {
    consumers: Mutex<HashMap<u64, RunningConsumer>>,
    fences: Mutex<HashSet<u64>>,
    tasks: Mutex<HashMap<u64, (TaskKind, Option<u64>)>>,
    next_task: AtomicU64,
}

/// Sizes of the registries (for tests and SHOW ISCP STATUS).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RuntimeSizes {
    pub consumers: usize,
    pub fences: usize,
    pub tasks: usize,
}

impl Runtime {
    /// Register a running consumer for `job_id` with a child of `parent`.
    /// Refused (`None`) when the job is fenced or already has a consumer.
    pub fn register_consumer(
        self: &Arc<Self>,
        job_id: u64,
        parent: &CancellationToken,
    ) -> Option<(CancellationToken, ConsumerGuard)> {
        // Lock order: fences, then consumers (everywhere).
        let fences = self.fences.lock();
        if fences.contains(&job_id) {
            return None;
        }
        let mut consumers = self.consumers.lock();
        if consumers.contains_key(&job_id) {
            return None;
        }
        let token = parent.child_token();
        let (tx, rx) = watch::channel(false);
        consumers.insert(
            job_id,
            RunningConsumer {
                token: token.clone(),
                done: rx,
            },
        );
        drop(consumers);
        drop(fences);
        Some((
            token,
            ConsumerGuard {
                rt: self.clone(),
                job_id,
                tx,
            },
        ))
    }

    /// Fence `job_id` (new work units skip it) and cancel its running
    /// consumer, if any. Returns a receiver that turns `true` when the
    /// consumer has exited (or `None` if none was running).
    pub fn fence_and_cancel(&self, job_id: u64) -> Option<watch::Receiver<bool>> {
        let mut fences = self.fences.lock();
        fences.insert(job_id);
        let consumers = self.consumers.lock();
        let r = consumers.get(&job_id).map(|c| {
            c.token.cancel();
            c.done.clone()
        });
        drop(consumers);
        drop(fences);
        r
    }

    /// Whether `job_id` is fenced.
    pub fn is_fenced(&self, job_id: u64) -> bool {
        self.fences.lock().contains(&job_id)
    }

    /// Whether `job_id` has a running consumer.
    pub fn is_running(&self, job_id: u64) -> bool {
        self.consumers.lock().contains_key(&job_id)
    }

    /// Remove a fence (after the terminal state is installed).
    pub fn unfence(&self, job_id: u64) {
        self.fences.lock().remove(&job_id);
    }

    /// Register a task; it is listed until the guard drops.
    pub fn task(self: &Arc<Self>, kind: TaskKind, job_id: Option<u64>) -> TaskGuard {
        let id = self.next_task.fetch_add(1, Ordering::Relaxed);
        self.tasks.lock().insert(id, (kind, job_id));
        TaskGuard {
            rt: self.clone(),
            id,
        }
    }

    /// Live tasks of a job.
    pub fn tasks_for_job(&self, job_id: u64) -> Vec<TaskKind> {
        self.tasks
            .lock()
            .values()
            .filter(|(_, j)| *j == Some(job_id))
            .map(|(k, _)| *k)
            .collect()
    }

    /// Registry sizes.
    pub fn sizes(&self) -> RuntimeSizes {
        RuntimeSizes {
            consumers: self.consumers.lock().len(),
            fences: self.fences.lock().len(),
            tasks: self.tasks.lock().len(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn fenced_job_is_refused_and_recreated_generation_runs() {
        let rt = Arc::new(Runtime::default());
        let root = CancellationToken::new();
        let (tok, guard) = rt.register_consumer(7, &root).unwrap();
        assert!(
            rt.register_consumer(7, &root).is_none(),
            "one consumer per job"
        );
        let mut done = rt.fence_and_cancel(7).unwrap();
        assert!(tok.is_cancelled());
        assert!(rt.register_consumer(7, &root).is_none(), "fenced");
        // A new generation of the same index has another job id.
        let (_t8, g8) = rt.register_consumer(8, &root).unwrap();
        drop(guard);
        done.wait_for(|d| *d).await.unwrap();
        rt.unfence(7);
        drop(g8);
        assert_eq!(rt.sizes(), RuntimeSizes::default());
    }
}
