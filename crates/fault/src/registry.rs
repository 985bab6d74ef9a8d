//! The fault-point registry: arming, dispatching hits, running actions, control API.
//!
//! Owns the table of armed points, the armed-count fast path, hit counting, action
//! execution (sync and async), and the MatrixOne-compatible control surface
//! (`add`/`remove`/`trigger`/`list`/`handle_fault_inject`).
//!
//! Rules it must never break:
//! - a hit when nothing is armed costs exactly one relaxed atomic load;
//! - no lock is held while an action runs (sleep, wait, the test hook, logging), so
//!   actions may re-enter the registry (NOTIFY, GETCOUNT, a hook that REMOVEs);
//! - every retired point (removed, replaced, disabled) is marked removed under its
//!   waiter lock, which releases present waiters and makes later registrations return
//!   immediately (see `waiter`);
//! - it never blocks without a bound other than point removal or the caller's token.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::{Mutex, RwLock};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use crate::action::Action;
use crate::error::FaultError;
use crate::freq::{Freq, SplitMix64};
use crate::waiter::{ParkingWaitCell, Registration, WaitOutcome, WaiterId};

/// Longest time a blocking `sleep`/`wait` goes without checking the caller's token.
pub const CANCEL_POLL_SLICE: Duration = Duration::from_millis(5);

/// What a fired point hands back to its call site.
///
/// - `echo`, `sleep`, `wait`: the point's own `(iarg, sarg)`;
/// - `getcount`: `iarg` = hit count; `getwaiters`: `iarg` = waiters;
/// - `notify` / `notifyall`: `iarg` = number of waiters woken.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FaultHit {
    /// Integer result / argument.
    pub iarg: i64,
    /// String argument of the point.
    pub sarg: String,
}

/// A snapshot of one armed point, as listed by [`FaultRegistry::list`].
#[derive(Debug, Clone, PartialEq)]
pub struct PointInfo {
    /// Point name (without target).
    pub name: String,
    /// Target the point is restricted to, if any.
    pub target: Option<String>,
    /// The `freq` string it was armed with.
    pub freq: String,
    /// Its action.
    pub action: Action,
    /// Integer argument.
    pub iarg: i64,
    /// String argument.
    pub sarg: String,
    /// Whether the point is constant (cannot be replaced).
    pub constant: bool,
    /// Hits counted so far (fired or not).
    pub hits: u64,
    /// Waiters currently blocked on it.
    pub waiters: usize,
}

impl PointInfo {
    /// `name` or `name:target`, the key the point was armed under.
    pub fn key(&self) -> String {
        match &self.target {
            Some(t) => format!("{}:{}", self.name, t),
            None => self.name.clone(),
        }
    }

    /// One JSON object (no external serializer needed).
    pub fn to_json(&self) -> String {
        let mut s = String::from("{");
        let _ = write!(s, "\"name\":{}", json_str(&self.name));
        match &self.target {
            Some(t) => {
                let _ = write!(s, ",\"target\":{}", json_str(t));
            }
            None => s.push_str(",\"target\":null"),
        }
        let _ = write!(
            s,
            ",\"freq\":{},\"action\":{},\"iarg\":{},\"sarg\":{},\"constant\":{},\"hits\":{},\"waiters\":{}}}",
            json_str(&self.freq),
            json_str(self.action.as_str()),
            self.iarg,
            json_str(&self.sarg),
            self.constant,
            self.hits,
            self.waiters
        );
        s
    }
}

/// JSON string literal with the mandatory escapes.
pub(crate) fn json_str(v: &str) -> String {
    let mut out = String::with_capacity(v.len() + 2);
    out.push('"');
    for c in v.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Splits `name[:target]` on the first ':' (names contain '/', never ':').
pub(crate) fn parse_key(key: &str) -> Result<(&str, Option<&str>), FaultError> {
    let key = key.trim();
    let (name, target) = match key.split_once(':') {
        Some((n, t)) => (n.trim(), Some(t.trim())),
        None => (key, None),
    };
    if name.is_empty() {
        return Err(FaultError::invalid(format!(
            "fault point name is empty in {key:?}"
        )));
    }
    if target == Some("") {
        return Err(FaultError::invalid(format!(
            "fault point {key:?} has an empty target after ':'"
        )));
    }
    Ok((name, target))
}

struct Counter {
    hits: u64,
    rng: SplitMix64,
}

/// One armed point.
struct Entry {
    key: String,
    name: String,
    target: Option<String>,
    freq: Freq,
    freq_text: String,
    action: Action,
    iarg: i64,
    sarg: String,
    constant: bool,
    counter: Mutex<Counter>,
    waits: ParkingWaitCell,
    /// Cancelled when the point is retired; ends sleeps early.
    retired: CancellationToken,
}

impl Entry {
    /// Counts one hit; returns the hit number when the point fires.
    fn count_hit(&self) -> Option<u64> {
        let mut c = self.counter.lock();
        c.hits = c.hits.saturating_add(1);
        let n = c.hits;
        self.freq.fires(n, &mut c.rng).then_some(n)
    }

    fn hits(&self) -> u64 {
        self.counter.lock().hits
    }

    fn args(&self) -> FaultHit {
        FaultHit {
            iarg: self.iarg,
            sarg: self.sarg.clone(),
        }
    }

    fn retire(&self) {
        let woken = self.waits.remove();
        self.retired.cancel();
        tracing::debug!(point = %self.key, woken, "fault point retired");
    }

    fn info(&self) -> PointInfo {
        PointInfo {
            name: self.name.clone(),
            target: self.target.clone(),
            freq: self.freq_text.clone(),
            action: self.action,
            iarg: self.iarg,
            sarg: self.sarg.clone(),
            constant: self.constant,
            hits: self.hits(),
            waiters: self.waits.waiting(),
        }
    }

    fn canceled(&self) -> FaultError {
        FaultError::Canceled {
            point: self.key.clone(),
        }
    }
}

/// All points of one name: the untargeted one and the per-target ones.
#[derive(Default)]
struct Slot {
    any: Option<Arc<Entry>>,
    targeted: BTreeMap<String, Arc<Entry>>,
}

impl Slot {
    fn get(&self, target: Option<&str>) -> Option<&Arc<Entry>> {
        match target {
            None => self.any.as_ref(),
            Some(t) => self.targeted.get(t),
        }
    }

    fn len(&self) -> usize {
        usize::from(self.any.is_some()) + self.targeted.len()
    }

    fn entries(&self) -> impl Iterator<Item = &Arc<Entry>> {
        self.any.iter().chain(self.targeted.values())
    }
}

struct Table {
    enabled: bool,
    points: BTreeMap<String, Slot>,
}

impl Table {
    fn count(&self) -> usize {
        self.points.values().map(Slot::len).sum()
    }

    fn get(&self, name: &str, target: Option<&str>) -> Option<&Arc<Entry>> {
        self.points.get(name)?.get(target)
    }

    fn drain(&mut self) -> Vec<Arc<Entry>> {
        let mut out = Vec::new();
        for (_, slot) in std::mem::take(&mut self.points) {
            out.extend(slot.any);
            out.extend(slot.targeted.into_values());
        }
        out
    }
}

/// Test hook invoked after a hit was dispatched (point looked up, fire decided) and
/// before its action runs — i.e. before a WAIT registers its waiter.
pub type DispatchHook = Arc<dyn Fn(&str) + Send + Sync>;

/// What the shared part of action execution leaves to the sync/async drivers.
enum Plan {
    Done(Result<Option<FaultHit>, FaultError>),
    Sleep(Duration),
    Wait,
}

/// A set of named fault points plus the switch that enables them.
///
/// Use [`crate::global()`] in production code; [`FaultRegistry::new`] gives isolated
/// registries for tests.
pub struct FaultRegistry {
    /// Number of armed points; the only thing a hit reads when it is 0.
    armed: AtomicUsize,
    /// Mirror of `table.enabled` for lock-free `is_enabled()`.
    enabled: AtomicBool,
    seed: AtomicU64,
    table: RwLock<Table>,
    hook: RwLock<Option<DispatchHook>>,
}

impl Default for FaultRegistry {
    fn default() -> Self {
        Self::new()
    }
}

impl FaultRegistry {
    /// A disabled registry without points.
    pub const fn new() -> Self {
        FaultRegistry {
            armed: AtomicUsize::new(0),
            enabled: AtomicBool::new(false),
            seed: AtomicU64::new(0),
            table: RwLock::new(Table {
                enabled: false,
                points: BTreeMap::new(),
            }),
            hook: RwLock::new(None),
        }
    }

    // ----------------------------------------------------------------- control API

    /// Enables fault injection. Returns true if it was disabled before.
    pub fn enable(&self) -> bool {
        let mut t = self.table.write();
        let changed = !t.enabled;
        t.enabled = true;
        self.enabled.store(true, Ordering::SeqCst);
        if changed {
            tracing::info!("fault injection enabled");
        }
        changed
    }

    /// Disables fault injection, removes every point and wakes every waiter.
    /// Returns true if it was enabled before.
    pub fn disable(&self) -> bool {
        let (changed, retired) = {
            let mut t = self.table.write();
            let changed = t.enabled;
            t.enabled = false;
            self.enabled.store(false, Ordering::SeqCst);
            let retired = t.drain();
            self.armed.store(0, Ordering::SeqCst);
            (changed, retired)
        };
        for e in &retired {
            e.retire();
        }
        if changed {
            tracing::info!(removed = retired.len(), "fault injection disabled");
        }
        changed
    }

    /// Whether fault injection is enabled.
    pub fn is_enabled(&self) -> bool {
        self.enabled.load(Ordering::SeqCst)
    }

    /// Number of armed points.
    pub fn armed_count(&self) -> usize {
        self.armed.load(Ordering::SeqCst)
    }

    /// Sets the global seed mixed into every point's PRNG (applies to points armed
    /// afterwards). The same seed + point key always gives the same draws.
    pub fn set_seed(&self, seed: u64) {
        self.seed.store(seed, Ordering::SeqCst);
    }

    /// The global PRNG seed.
    pub fn seed(&self) -> u64 {
        self.seed.load(Ordering::SeqCst)
    }

    /// Arms point `name` (`name` or `name:target`).
    ///
    /// Errors: [`FaultError::InvalidArgument`] for a bad name, freq, action or argument;
    /// [`FaultError::Disabled`] when injection is disabled; [`FaultError::Constant`]
    /// when a constant point of that key exists. Replacing a non-constant point retires
    /// it (its waiters are released). On error nothing is armed or changed.
    pub fn add(
        &self,
        name: &str,
        freq: &str,
        action: &str,
        iarg: i64,
        sarg: &str,
        constant: bool,
    ) -> Result<(), FaultError> {
        let (pname, target) = parse_key(name)?;
        let parsed_freq = Freq::parse(freq)?;
        let action: Action = action.parse()?;
        action.validate_args(iarg, sarg)?;
        let key = match target {
            Some(t) => format!("{pname}:{t}"),
            None => pname.to_string(),
        };
        let freq_text = if freq.trim().is_empty() {
            ":::".to_string()
        } else {
            freq.trim().to_string()
        };
        let entry = Arc::new(Entry {
            counter: Mutex::new(Counter {
                hits: 0,
                rng: SplitMix64::for_point(&key, self.seed()),
            }),
            key,
            name: pname.to_string(),
            target: target.map(str::to_string),
            freq: parsed_freq,
            freq_text,
            action,
            iarg,
            sarg: sarg.to_string(),
            constant,
            waits: ParkingWaitCell::new(),
            retired: CancellationToken::new(),
        });
        let old = {
            let mut t = self.table.write();
            if !t.enabled {
                return Err(FaultError::Disabled);
            }
            if let Some(old) = t.get(pname, target) {
                if old.constant {
                    return Err(FaultError::Constant(old.key.clone()));
                }
            }
            let slot = t.points.entry(pname.to_string()).or_default();
            let old = match target {
                None => slot.any.replace(entry.clone()),
                Some(tg) => slot.targeted.insert(tg.to_string(), entry.clone()),
            };
            self.armed.store(t.count(), Ordering::SeqCst);
            old
        };
        tracing::info!(
            point = %entry.key, freq = %entry.freq_text, action = %entry.action,
            iarg, sarg, constant, replaced = old.is_some(), "fault point armed"
        );
        if let Some(old) = old {
            old.retire();
        }
        Ok(())
    }

    /// Removes point `name` (`name:target` for a targeted one; `"all"` removes every
    /// point), releasing its waiters. Returns whether something was removed.
    pub fn remove(&self, name: &str) -> Result<bool, FaultError> {
        let retired = {
            let mut t = self.table.write();
            if !t.enabled {
                return Err(FaultError::Disabled);
            }
            let retired = if name.trim().eq_ignore_ascii_case("all") {
                t.drain()
            } else {
                let (pname, target) = parse_key(name)?;
                let mut out = Vec::new();
                if let Some(slot) = t.points.get_mut(pname) {
                    out.extend(match target {
                        None => slot.any.take(),
                        Some(tg) => slot.targeted.remove(tg),
                    });
                    if slot.len() == 0 {
                        t.points.remove(pname);
                    }
                }
                out
            };
            self.armed.store(t.count(), Ordering::SeqCst);
            retired
        };
        for e in &retired {
            tracing::info!(point = %e.key, "fault point removed");
            e.retire();
        }
        Ok(!retired.is_empty())
    }

    /// SQL `trigger_fault_point(name)`: counts a hit on exactly the point armed under
    /// `name` (`name` or `name:target`), runs its action if the window fires, and returns
    /// the hit count. A `wait`/`sleep` action blocks the calling thread (uncancellable;
    /// use [`FaultRegistry::trigger_with_cancel`] to bound it).
    pub fn trigger(&self, name: &str) -> Result<i64, FaultError> {
        self.trigger_with_cancel(name, None)
    }

    /// [`FaultRegistry::trigger`] with a cancellation token for `sleep`/`wait`.
    pub fn trigger_with_cancel(
        &self,
        name: &str,
        cancel: Option<&CancellationToken>,
    ) -> Result<i64, FaultError> {
        let (pname, target) = parse_key(name)?;
        let entry = {
            let t = self.table.read();
            if !t.enabled {
                return Err(FaultError::Disabled);
            }
            t.get(pname, target)
                .cloned()
                .ok_or_else(|| FaultError::NotFound(name.trim().to_string()))?
        };
        if let Some(n) = entry.count_hit() {
            self.run_blocking(&entry, n, cancel)?;
        }
        Ok(i64::try_from(entry.hits()).unwrap_or(i64::MAX))
    }

    /// Snapshot of every armed point, sorted by name then target.
    pub fn list(&self) -> Vec<PointInfo> {
        let entries: Vec<Arc<Entry>> = {
            let t = self.table.read();
            t.points
                .values()
                .flat_map(|s| s.entries().cloned())
                .collect()
        };
        entries.iter().map(|e| e.info()).collect()
    }

    /// [`FaultRegistry::list`] as a JSON array.
    pub fn list_json(&self) -> String {
        let items: Vec<String> = self.list().iter().map(PointInfo::to_json).collect();
        format!("[{}]", items.join(","))
    }

    /// Info of the point armed under exactly `name` (`name` or `name:target`).
    pub fn status(&self, name: &str) -> Result<PointInfo, FaultError> {
        self.lookup(name)
            .map(|e| e.info())
            .ok_or_else(|| FaultError::NotFound(name.trim().to_string()))
    }

    /// MatrixOne's generic `fault_inject(scope, method, params)`.
    ///
    /// `scope` (e.g. `'all.'`) names the nodes to act on; a single process is every
    /// node, so it is accepted and ignored. Methods (case-insensitive):
    /// `ENABLE_FAULT_INJECTION`, `DISABLE_FAULT_INJECTION`, `LIST_FAULT_POINT`,
    /// `ADD_FAULT_POINT` (params `name#freq#action#iarg#sarg#constant`; `sarg` may itself
    /// contain `#`; `#constant` may be omitted), `REMOVE_FAULT_POINT` (params = name),
    /// `STATUS_FAULT_POINT` (params = name → that point as JSON; empty → global status).
    pub fn handle_fault_inject(
        &self,
        scope: &str,
        method: &str,
        params: &str,
    ) -> Result<String, FaultError> {
        tracing::debug!(scope, method, params, "fault_inject");
        match method.trim().to_ascii_uppercase().as_str() {
            "ENABLE_FAULT_INJECTION" => {
                let prev = if self.enable() { "disabled" } else { "enabled" };
                Ok(format!("Fault injection enabled. Previous status: {prev}"))
            }
            "DISABLE_FAULT_INJECTION" => {
                let prev = if self.disable() {
                    "enabled"
                } else {
                    "disabled"
                };
                Ok(format!("Fault injection disabled. Previous status: {prev}"))
            }
            "LIST_FAULT_POINT" => Ok(self.list_json()),
            "STATUS_FAULT_POINT" => {
                if params.trim().is_empty() {
                    let s = if self.is_enabled() {
                        "enabled"
                    } else {
                        "disabled"
                    };
                    Ok(format!("Fault injection is {s}"))
                } else {
                    self.status(params).map(|i| i.to_json())
                }
            }
            "REMOVE_FAULT_POINT" => {
                let existed = self.remove(params)?;
                Ok(format!(
                    "Fault point '{}' successfully removed. Previously existed: {existed}",
                    params.trim()
                ))
            }
            "ADD_FAULT_POINT" => {
                let (name, freq, action, iarg, sarg, constant) = parse_add_params(params)?;
                self.add(name, freq, action, iarg, sarg, constant)?;
                Ok("OK".to_string())
            }
            other => Err(FaultError::invalid(format!(
                "unknown fault injection command {other:?}"
            ))),
        }
    }

    /// Installs (or clears) the dispatch hook. Test-only plumbing: the hook runs after a
    /// fired hit looked its point up and before the action (e.g. WAIT registration), so a
    /// test can REMOVE the point at exactly that moment.
    #[doc(hidden)]
    pub fn set_dispatch_hook(&self, hook: Option<DispatchHook>) {
        *self.hook.write() = hook;
    }

    // ----------------------------------------------------------------- call sites

    /// Async call site. Returns `Ok(None)` when nothing fired, `Ok(Some(..))` when an
    /// action fired and completed (see [`FaultHit`]), `Err(Injected)` for `return`,
    /// `Err(Canceled)` when `cancel` fired during `sleep`/`wait`.
    ///
    /// Must be polled inside a tokio runtime with time enabled when a `sleep` fires.
    #[inline]
    pub async fn hit(
        &self,
        name: &str,
        target: Option<&str>,
        cancel: &CancellationToken,
    ) -> Result<Option<FaultHit>, FaultError> {
        if self.armed.load(Ordering::Relaxed) == 0 {
            return Ok(None);
        }
        let Some((entry, n)) = self.dispatch(name, target) else {
            return Ok(None);
        };
        match self.plan(&entry, n) {
            Plan::Done(r) => r,
            Plan::Sleep(d) => {
                if cancel.is_cancelled() {
                    return Err(entry.canceled());
                }
                tokio::select! {
                    biased;
                    _ = cancel.cancelled() => Err(entry.canceled()),
                    _ = entry.retired.cancelled() => Ok(Some(entry.args())),
                    _ = tokio::time::sleep(d) => Ok(Some(entry.args())),
                }
            }
            Plan::Wait => wait_async(&entry, cancel).await,
        }
    }

    /// Blocking call site for sync code (plain threads, `spawn_blocking`); needs no
    /// runtime. With a token, `sleep`/`wait` check it at least every
    /// [`CANCEL_POLL_SLICE`]. Results as for [`FaultRegistry::hit`].
    ///
    /// A firing `sleep`/`wait` blocks the calling thread: never call this on an async
    /// worker thread (use [`FaultRegistry::hit`] there, or `spawn_blocking`).
    #[inline]
    pub fn hit_blocking(
        &self,
        name: &str,
        target: Option<&str>,
        cancel: Option<&CancellationToken>,
    ) -> Result<Option<FaultHit>, FaultError> {
        if self.armed.load(Ordering::Relaxed) == 0 {
            return Ok(None);
        }
        let Some((entry, n)) = self.dispatch(name, target) else {
            return Ok(None);
        };
        self.run_blocking(&entry, n, cancel)
    }

    // ----------------------------------------------------------------- internals

    /// Looks the point up (targeted first, then untargeted) and counts the hit.
    fn dispatch(&self, name: &str, target: Option<&str>) -> Option<(Arc<Entry>, u64)> {
        let entry = {
            let t = self.table.read();
            let slot = t.points.get(name)?;
            target
                .and_then(|tg| slot.targeted.get(tg))
                .or(slot.any.as_ref())?
                .clone()
        };
        let n = entry.count_hit()?;
        Some((entry, n))
    }

    /// Exact-key lookup (`name` or `name:target`).
    fn lookup(&self, key: &str) -> Option<Arc<Entry>> {
        let (name, target) = parse_key(key).ok()?;
        self.table.read().get(name, target).cloned()
    }

    /// Shared part of action execution; returns what is left for the driver.
    fn plan(&self, entry: &Arc<Entry>, n: u64) -> Plan {
        let hook = self.hook.read().clone();
        if let Some(hook) = hook {
            hook(&entry.key);
        }
        let key = entry.key.as_str();
        tracing::debug!(point = key, hit = n, action = %entry.action, "fault point fired");
        let count = |v: u64| i64::try_from(v).unwrap_or(i64::MAX);
        let result = |iarg: i64| {
            Plan::Done(Ok(Some(FaultHit {
                iarg,
                sarg: entry.sarg.clone(),
            })))
        };
        match entry.action {
            Action::Echo => {
                tracing::info!(point = key, hit = n, iarg = entry.iarg, sarg = %entry.sarg, "fault point echo");
                result(entry.iarg)
            }
            Action::Sleep => {
                Plan::Sleep(Duration::from_secs(u64::try_from(entry.iarg).unwrap_or(0)))
            }
            Action::Wait => Plan::Wait,
            Action::GetWaiters => {
                let w = self.lookup(&entry.sarg).map_or(0, |e| e.waits.waiting());
                result(count(w as u64))
            }
            Action::Notify => {
                let w = self.lookup(&entry.sarg).map_or(0, |e| e.waits.notify_one());
                result(count(w as u64))
            }
            Action::NotifyAll => {
                let w = self.lookup(&entry.sarg).map_or(0, |e| e.waits.notify_all());
                result(count(w as u64))
            }
            Action::GetCount => {
                let c = if entry.sarg.trim().is_empty() {
                    entry.hits()
                } else {
                    self.lookup(&entry.sarg).map_or(0, |e| e.hits())
                };
                result(count(c))
            }
            Action::Return => {
                let message = if entry.sarg.is_empty() {
                    format!("injected fault at {key}")
                } else {
                    entry.sarg.clone()
                };
                tracing::info!(point = key, hit = n, %message, "fault point returns an error");
                Plan::Done(Err(FaultError::Injected {
                    point: key.to_string(),
                    message,
                }))
            }
            Action::Panic => {
                let message = if entry.sarg.is_empty() {
                    format!("injected panic at {key}")
                } else {
                    entry.sarg.clone()
                };
                tracing::error!(point = key, hit = n, %message, "fault point panics");
                panic!("{message}");
            }
            Action::Abort => {
                tracing::error!(point = key, hit = n, "fault point aborts the process");
                std::process::abort();
            }
        }
    }

    fn run_blocking(
        &self,
        entry: &Arc<Entry>,
        n: u64,
        cancel: Option<&CancellationToken>,
    ) -> Result<Option<FaultHit>, FaultError> {
        match self.plan(entry, n) {
            Plan::Done(r) => r,
            Plan::Sleep(d) => sleep_blocking(entry, d, cancel),
            Plan::Wait => {
                let id = match entry.waits.register(None) {
                    Registration::AlreadyRemoved => return Ok(Some(entry.args())),
                    Registration::Waiting(id) => id,
                };
                let outcome =
                    entry
                        .waits
                        .wait_blocking(id, cancel.is_some(), CANCEL_POLL_SLICE, || {
                            cancel.is_some_and(CancellationToken::is_cancelled)
                        });
                match outcome {
                    WaitOutcome::Released(_) => Ok(Some(entry.args())),
                    WaitOutcome::Canceled => Err(entry.canceled()),
                }
            }
        }
    }
}

fn sleep_blocking(
    entry: &Entry,
    d: Duration,
    cancel: Option<&CancellationToken>,
) -> Result<Option<FaultHit>, FaultError> {
    let deadline = Instant::now() + d;
    loop {
        if cancel.is_some_and(CancellationToken::is_cancelled) {
            return Err(entry.canceled());
        }
        let now = Instant::now();
        if now >= deadline || entry.retired.is_cancelled() {
            return Ok(Some(entry.args()));
        }
        std::thread::sleep((deadline - now).min(CANCEL_POLL_SLICE));
    }
}

/// Deregisters an async waiter whose future is dropped mid-wait.
struct Deregister<'a> {
    entry: &'a Entry,
    id: WaiterId,
    active: bool,
}

impl Drop for Deregister<'_> {
    fn drop(&mut self) {
        if self.active {
            let _ = self.entry.waits.cancel(self.id);
        }
    }
}

async fn wait_async(
    entry: &Arc<Entry>,
    cancel: &CancellationToken,
) -> Result<Option<FaultHit>, FaultError> {
    let signal = Arc::new(Notify::new());
    let id = match entry.waits.register(Some(signal.clone())) {
        Registration::AlreadyRemoved => return Ok(Some(entry.args())),
        Registration::Waiting(id) => id,
    };
    let mut guard = Deregister {
        entry,
        id,
        active: true,
    };
    loop {
        if entry.waits.poll(id).is_some() {
            guard.active = false;
            return Ok(Some(entry.args()));
        }
        tokio::select! {
            biased;
            _ = signal.notified() => {}
            _ = cancel.cancelled() => {
                guard.active = false;
                return match entry.waits.cancel(id) {
                    Some(_) => Ok(Some(entry.args())),
                    None => Err(entry.canceled()),
                };
            }
        }
    }
}

type AddParams<'a> = (&'a str, &'a str, &'a str, i64, &'a str, bool);

/// Parses `name#freq#action#iarg#sarg[#constant]`.
fn parse_add_params(params: &str) -> Result<AddParams<'_>, FaultError> {
    let usage = "expected name#freq#action#iarg#sarg#constant";
    let mut it = params.splitn(5, '#');
    let (Some(name), Some(freq), Some(action), Some(iarg)) =
        (it.next(), it.next(), it.next(), it.next())
    else {
        return Err(FaultError::invalid(format!("{usage}, got {params:?}")));
    };
    let rest = it.next().unwrap_or("");
    let (sarg, constant) = match rest.rsplit_once('#') {
        Some((s, c)) if c.trim().eq_ignore_ascii_case("true") => (s, true),
        Some((s, c)) if c.trim().eq_ignore_ascii_case("false") => (s, false),
        _ => (rest, false),
    };
    let iarg_text = iarg.trim();
    let iarg: i64 = if iarg_text.is_empty() {
        0
    } else {
        iarg_text.parse().map_err(|_| {
            FaultError::invalid(format!("iarg {iarg_text:?} is not an integer ({usage})"))
        })?
    };
    Ok((name, freq, action, iarg, sarg, constant))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_split_on_first_colon() {
        assert_eq!(parse_key("fj/a/b").unwrap(), ("fj/a/b", None));
        assert_eq!(parse_key("fj/a:idx01").unwrap(), ("fj/a", Some("idx01")));
        assert_eq!(parse_key("fj/a:x:y").unwrap(), ("fj/a", Some("x:y")));
        assert!(parse_key("").is_err());
        assert!(parse_key(":t").is_err());
        assert!(parse_key("p:").is_err());
    }

    #[test]
    fn add_params_grammar() {
        assert_eq!(
            parse_add_params("fj/a#:::#sleep#30##false").unwrap(),
            ("fj/a", ":::", "sleep", 30, "", false)
        );
        assert_eq!(
            parse_add_params("fj/a#1:1::#return#0#a#b#true").unwrap(),
            ("fj/a", "1:1::", "return", 0, "a#b", true)
        );
        assert_eq!(
            parse_add_params("fj/a#:::#echo#1#hello").unwrap(),
            ("fj/a", ":::", "echo", 1, "hello", false)
        );
        assert!(parse_add_params("fj/a#:::").is_err());
        assert!(parse_add_params("fj/a#:::#echo#x#s#false").is_err());
    }

    #[test]
    fn json_escapes() {
        assert_eq!(json_str("a\"b\\c\n\u{1}"), "\"a\\\"b\\\\c\\n\\u0001\"");
    }

    #[test]
    fn disabled_registry_refuses_control_and_hits_are_free() {
        let r = FaultRegistry::new();
        assert_eq!(
            r.add("p", ":::", "echo", 0, "", false),
            Err(FaultError::Disabled)
        );
        assert_eq!(r.remove("p"), Err(FaultError::Disabled));
        assert_eq!(r.trigger("p"), Err(FaultError::Disabled));
        assert_eq!(r.hit_blocking("p", None, None), Ok(None));
        assert_eq!(r.armed_count(), 0);
    }
}
