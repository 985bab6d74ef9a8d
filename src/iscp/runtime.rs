//! Runtime registries of the ISCP runner: running consumers per job id —
//! at most one work unit and one background base writer each —, fences per
//! job id (generation), and a task registry that tests use to prove no
//! consumer, base writer, retriever or cancel task outlives its job.
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
    /// Writes a base of a job's index beside its work units.
    BaseWriter,
    Cancel,
}

/// What a registered consumer does for its job: a job has at most one of
/// each at a time, and a DROP cancels and drains both.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    /// A work unit (build, changes, or a synchronous index's checkpoint).
    Unit,
    /// A base being written in the background while units go on.
    Base,
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
    role: Role,
    tx: watch::Sender<bool>,
}

impl Drop for ConsumerGuard {
    fn drop(&mut self) {
        self.rt.consumers.lock().remove(&(self.job_id, self.role));
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
    consumers: Mutex<HashMap<(u64, Role), RunningConsumer>>,
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
    /// Register a running work unit for `job_id` with a child of `parent`.
    /// Refused (`None`) when the job is fenced or already has a unit.
    pub fn register_consumer(
        self: &Arc<Self>,
        job_id: u64,
        parent: &CancellationToken,
    ) -> Option<(CancellationToken, ConsumerGuard)> {
        self.register(job_id, Role::Unit, parent)
    }

    /// Register `role` for `job_id` with a child of `parent`. Refused
    /// (`None`) when the job is fenced or already has one in that role.
    pub fn register(
        self: &Arc<Self>,
        job_id: u64,
        role: Role,
        parent: &CancellationToken,
    ) -> Option<(CancellationToken, ConsumerGuard)> {
        // Lock order: fences, then consumers (everywhere).
        let fences = self.fences.lock();
        if fences.contains(&job_id) {
            return None;
        }
        let mut consumers = self.consumers.lock();
        if consumers.contains_key(&(job_id, role)) {
            return None;
        }
        let token = parent.child_token();
        let (tx, rx) = watch::channel(false);
        consumers.insert(
            (job_id, role),
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
                role,
                tx,
            },
        ))
    }

    /// Fence `job_id` (new work units and base writers skip it) and cancel
    /// whatever of it runs. Returns one receiver per cancelled consumer,
    /// each turning `true` when that consumer has exited.
    pub fn fence_and_cancel(&self, job_id: u64) -> Vec<watch::Receiver<bool>> {
        let mut fences = self.fences.lock();
        fences.insert(job_id);
        let consumers = self.consumers.lock();
        let r = [Role::Unit, Role::Base]
            .iter()
            .filter_map(|role| consumers.get(&(job_id, *role)))
            .map(|c| {
                c.token.cancel();
                c.done.clone()
            })
            .collect();
        drop(consumers);
        drop(fences);
        r
    }

    /// Whether `job_id` is fenced.
    pub fn is_fenced(&self, job_id: u64) -> bool {
        self.fences.lock().contains(&job_id)
    }

    /// Whether `job_id` has a running work unit.
    pub fn is_running(&self, job_id: u64) -> bool {
        self.consumers.lock().contains_key(&(job_id, Role::Unit))
    }

    /// Whether `job_id` has a base being written.
    pub fn is_writing_base(&self, job_id: u64) -> bool {
        self.consumers.lock().contains_key(&(job_id, Role::Base))
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
        let base = rt.register(7, Role::Base, &root).unwrap();
        assert!(
            rt.register(7, Role::Base, &root).is_none(),
            "one base writer per job"
        );
        let done = rt.fence_and_cancel(7);
        assert_eq!(done.len(), 2, "the unit and the base writer");
        assert!(tok.is_cancelled() && base.0.is_cancelled());
        assert!(rt.register(7, Role::Base, &root).is_none(), "fenced");
        assert!(rt.register_consumer(7, &root).is_none(), "fenced");
        // A new generation of the same index has another job id.
        let (_t8, g8) = rt.register_consumer(8, &root).unwrap();
        drop(guard);
        drop(base);
        for mut d in done {
            d.wait_for(|d| *d).await.unwrap();
        }
        rt.unfence(7);
        drop(g8);
        assert_eq!(rt.sizes(), RuntimeSizes::default());
    }
}
