//! The commit clock: when, in wall-clock time, recent commits happened.
//!
//! Commit timestamps are logical (one per commit), so a lag in timestamps
//! says how many commits a consumer is behind, not for how long. This
//! module records `(commit ts, Unix ms)` for the most recent commits of
//! this process, in commit order, so that a consumer's lag can be given
//! in milliseconds: the age of the oldest change it has not applied.
//!
//! It owns only that bounded record. It must never be consulted for
//! anything but reporting: it is not durable (empty after a restart) and
//! forgets the oldest entries first.

use std::collections::VecDeque;
use std::time::{SystemTime, UNIX_EPOCH};

use parking_lot::Mutex;

use crate::api::Ts;

/// Commits remembered: about a minute at 1,000 commits/s, 1 MiB.
const CAPACITY: usize = 65_536;

/// The wall-clock times of the most recent commits.
#[derive(Debug, Default)]
pub(super) struct CommitClock {
    recent: Mutex<VecDeque<(Ts, u64)>>,
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

impl CommitClock {
    /// Record that commit `ts` happened now. Called in commit order.
    pub fn record(&self, ts: Ts) {
        let mut r = self.recent.lock();
        if r.len() == CAPACITY {
            r.pop_front();
        }
        r.push_back((ts, now_ms()));
    }

    /// Unix ms of commit `ts`, if it is among the recorded ones.
    pub fn time_of(&self, ts: Ts) -> Option<u64> {
        let r = self.recent.lock();
        let i = r.partition_point(|(t, _)| *t < ts);
        r.get(i).filter(|(t, _)| *t == ts).map(|(_, ms)| *ms)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remembers_recent_commits_and_forgets_the_oldest() {
        let c = CommitClock::default();
        let before = now_ms();
        for ts in 1..=(CAPACITY as u64 + 10) {
            c.record(ts * 2);
        }
        assert_eq!(c.time_of(2), None, "the oldest are forgotten");
        assert_eq!(c.time_of(21), None, "no commit at an odd ts");
        let t = c.time_of(40).expect("a recent commit");
        assert!(t >= before && t <= now_ms(), "{t}");
        assert!(c.time_of((CAPACITY as u64 + 10) * 2).is_some());
        assert_eq!(c.time_of(u64::MAX), None);
    }
}
