//! State kept per worker slot by a sink (collected chunks, groups, sorted
//! runs, a result block): one mutex per slot, each on cache lines of its
//! own, so workers filling their own slots never pass a cache line back and
//! forth between cores.

use crossbeam_utils::CachePadded;
use std::sync::{Mutex, MutexGuard};

/// Locks `m`, also after a panic elsewhere (the data is still consistent
/// for the sinks' purposes: the query fails anyway).
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// One `T` per worker slot ([`crate::context::QueryContext::worker_slots`]),
/// each behind its own mutex on its own cache lines. While the pipeline
/// runs, a slot is locked by the worker it belongs to, or by the successor
/// of an ordered pipeline's task that began there (which keeps its slot, so
/// a slot's state stays in arrival order); the lock is nearly always
/// uncontended and is there for that and for the finishing step.
pub struct PerWorker<T> {
    slots: Box<[CachePadded<Mutex<T>>]>,
}

impl<T> PerWorker<T> {
    /// `slots` slots (at least one); slot `i` starts as `make(i)`.
    pub fn new(slots: usize, mut make: impl FnMut(usize) -> T) -> PerWorker<T> {
        PerWorker {
            slots: (0..slots.max(1))
                .map(|i| CachePadded::new(Mutex::new(make(i))))
                .collect(),
        }
    }

    /// Number of slots (at least one).
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// Always false: there is at least one slot.
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// Locks the slot of `worker` (taken modulo the number of slots); a
    /// panic elsewhere does not poison it for the rest of the query, which
    /// fails anyway.
    pub fn lock(&self, worker: usize) -> MutexGuard<'_, T> {
        lock(&self.slots[worker % self.slots.len()])
    }

    /// Takes every slot's state in slot order, leaving the default behind.
    pub fn take_all(&self) -> impl Iterator<Item = T> + '_
    where
        T: Default,
    {
        (0..self.slots.len()).map(|i| std::mem::take(&mut *self.lock(i)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_kept_apart_and_taken_in_order() {
        let slots = PerWorker::new(3, |i| vec![i]);
        assert_eq!(slots.len(), 3);
        slots.lock(4).push(10); // worker 4 uses slot 1
        let taken: Vec<Vec<usize>> = slots.take_all().collect();
        assert_eq!(taken, vec![vec![0], vec![1, 10], vec![2]]);
        assert!(slots.take_all().all(|v| v.is_empty()));
        // Each slot starts a cache line of its own.
        let a = &*slots.lock(0) as *const Vec<usize> as usize;
        let b = &*slots.lock(1) as *const Vec<usize> as usize;
        assert!(b - a >= 64);
        assert_eq!(PerWorker::new(0, |_| ()).len(), 1);
    }
}
