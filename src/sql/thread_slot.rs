//! A per-thread slot for the running statement's shared state (its budget,
//! its spill settings): set when the statement starts on a thread, the
//! previous value put back when the guard drops, so a statement run by
//! another statement (and then its caller again) sees its own.
//!
//! Owns only that rule. Never blocks and never allocates beyond the `Arc`
//! it is handed.

use std::cell::RefCell;
use std::sync::Arc;
use std::thread::LocalKey;

/// What a slot's `thread_local!` holds.
pub type Slot<T> = RefCell<Option<Arc<T>>>;

/// Holds the slot's previous value; puts it back when dropped.
pub struct Guard<T: 'static> {
    key: &'static LocalKey<Slot<T>>,
    prev: Option<Arc<T>>,
}

/// Put `v` in `key` on this thread until the guard is dropped.
pub fn enter<T>(key: &'static LocalKey<Slot<T>>, v: Arc<T>) -> Guard<T> {
    Guard {
        key,
        prev: key.with(|c| c.replace(Some(v))),
    }
}

impl<T> Drop for Guard<T> {
    fn drop(&mut self) {
        let prev = self.prev.take();
        self.key.with(|c| *c.borrow_mut() = prev);
    }
}

/// What `key` holds on this thread.
pub fn get<T>(key: &'static LocalKey<Slot<T>>) -> Option<Arc<T>> {
    key.with(|c| c.borrow().clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    thread_local! {
        static S: Slot<u32> = const { RefCell::new(None) };
    }

    #[test]
    fn a_nested_guard_puts_the_outer_value_back() {
        assert_eq!(get(&S), None);
        let outer = enter(&S, Arc::new(1));
        {
            let _inner = enter(&S, Arc::new(2));
            assert_eq!(get(&S).as_deref(), Some(&2));
        }
        assert_eq!(get(&S).as_deref(), Some(&1));
        drop(outer);
        assert_eq!(get(&S), None);
    }
}
