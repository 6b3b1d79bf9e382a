//! [`RouteArena`]: the located lists of route searches, indexed by node key.
//!
//! A hot A* over a source reads one located list per settled node. In the
//! shared cache that is a lock, a hash of the key, a probe of a map that
//! also holds every row and list the prefetchers brought, a clock read for
//! the time to live and a reference count taken and dropped. The arena
//! keeps located lists apart, one per node key in a page table indexed by
//! the key itself (keys are the dense integers of a table's primary key or
//! a DIMACS node number): a lookup is two indexed loads and a timestamp
//! comparison against the statement's start, with no lock, hash or
//! reference count, and the lists a search walks sit together in memory.
//!
//! There is one arena per *view* (followed lists, weight property and
//! coordinates: what a located list is derived for). Keys outside
//! `0..MAX_KEYS`, and lists derived once the arena holds its share of the
//! cache's `max_entries`, are kept in the cache as before. Freshness: a
//! list is as old as the oldest entry it was derived from and counts as
//! absent once that is older than the time to live at the statement's
//! start; [`Source::clear_cache`](crate::Source::clear_cache) drops every
//! arena, and a search finding an expired list starts a new arena for its
//! view (searches holding the old one finish on it).

use crate::cache::LocatedRel;
use crate::counters::Counters;
use crate::fetch::ListRef;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// Keys per page (a page is allocated when a key in it is first stored).
const PAGE: usize = 4096;
/// Pages: node keys `0..PAGES * PAGE` (16.8 million) are kept here.
const PAGES: usize = 4096;
/// The node keys the arena indexes directly.
pub const MAX_KEYS: i64 = (PAGE * PAGES) as i64;

/// What a located list is derived for: the followed lists with their
/// weight property, the node space and its coordinate properties.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct View {
    /// Followed lists and the index of the weight property in each.
    pub lists: Vec<(ListRef, Option<usize>)>,
    /// The node space.
    pub space: u16,
    /// Indexes of (lat, lon) in the node space's properties.
    pub coordinates: (usize, usize),
}

/// One node's located relationships over every followed list, in list
/// order, and when the oldest entry they were derived from was made.
struct Slot {
    at: Instant,
    rels: Box<[LocatedRel]>,
    /// Stored by a prefetcher and not read yet (counted on first read).
    prefetched: AtomicBool,
}

/// `PAGE` slots, each set at most once.
type Page = Box<[OnceLock<Slot>]>;

/// The located lists of one view, by node key.
pub struct RouteArena {
    pages: Box<[OnceLock<Page>]>,
    stored: AtomicUsize,
    limit: usize,
    ttl: Option<Duration>,
}

impl RouteArena {
    fn new(limit: usize, ttl: Option<Duration>) -> RouteArena {
        RouteArena {
            pages: (0..PAGES).map(|_| OnceLock::new()).collect(),
            stored: AtomicUsize::new(0),
            limit,
            ttl,
        }
    }

    fn slot(&self, key: i64) -> Option<&OnceLock<Slot>> {
        if !(0..MAX_KEYS).contains(&key) {
            return None;
        }
        let key = key as usize;
        self.pages[key / PAGE].get().map(|page| &page[key % PAGE])
    }

    /// The located relationships of node `key` if they are stored and were
    /// fresh at `now` (the statement's start); `Err(())` if they are
    /// stored but expired.
    #[inline]
    #[allow(clippy::result_unit_err)]
    pub fn get(
        &self,
        key: i64,
        now: Instant,
        counters: &Counters,
    ) -> Result<Option<&[LocatedRel]>, ()> {
        let Some(slot) = self.slot(key).and_then(OnceLock::get) else {
            return Ok(None);
        };
        match self.ttl {
            Some(ttl) if now.saturating_duration_since(slot.at) >= ttl => Err(()),
            _ => {
                if slot.prefetched.load(Ordering::Relaxed)
                    && slot.prefetched.swap(false, Ordering::Relaxed)
                {
                    counters.prefetch_used();
                }
                Ok(Some(&slot.rels))
            }
        }
    }

    /// Stores the located relationships of node `key`, derived from
    /// entries the oldest of which was made at `at` (`prefetched`: by a
    /// prefetcher, not for a lookup; its first read is counted). False if
    /// the key is out of range, the arena is full or the key already has
    /// a list.
    pub fn insert(&self, key: i64, at: Instant, rels: Vec<LocatedRel>, prefetched: bool) -> bool {
        if !(0..MAX_KEYS).contains(&key) || self.stored.load(Ordering::Relaxed) >= self.limit {
            return false;
        }
        let k = key as usize;
        let page =
            self.pages[k / PAGE].get_or_init(|| (0..PAGE).map(|_| OnceLock::new()).collect());
        let stored = page[k % PAGE]
            .set(Slot {
                at,
                rels: rels.into_boxed_slice(),
                prefetched: AtomicBool::new(prefetched),
            })
            .is_ok();
        if stored {
            self.stored.fetch_add(1, Ordering::Relaxed);
        }
        stored
    }

    /// Lists stored.
    pub fn len(&self) -> usize {
        self.stored.load(Ordering::Relaxed)
    }

    /// True if no list is stored.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The arenas of a source, one per view.
pub struct RouteArenas {
    views: Mutex<Vec<(View, Arc<RouteArena>)>>,
    limit: usize,
    ttl: Option<Duration>,
}

/// At most this many views keep an arena (a new one replaces the oldest).
const MAX_VIEWS: usize = 8;

impl RouteArenas {
    /// Arenas holding at most `limit` lists each, living `ttl`.
    pub fn new(limit: usize, ttl: Option<Duration>) -> RouteArenas {
        RouteArenas {
            views: Mutex::new(Vec::new()),
            limit,
            ttl,
        }
    }

    /// The arena of `view` (made empty on first use).
    pub fn of(&self, view: &View) -> Arc<RouteArena> {
        let mut views = self.views.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((_, arena)) = views.iter().find(|(v, _)| v == view) {
            return arena.clone();
        }
        if views.len() >= MAX_VIEWS {
            views.remove(0);
        }
        let arena = Arc::new(RouteArena::new(self.limit, self.ttl));
        views.push((view.clone(), arena.clone()));
        arena
    }

    /// Starts a new, empty arena for `view` if its arena is still `old`
    /// (a list in it expired), and returns the arena to use.
    pub fn renew(&self, view: &View, old: &Arc<RouteArena>) -> Arc<RouteArena> {
        let mut views = self.views.lock().unwrap_or_else(|p| p.into_inner());
        match views.iter_mut().find(|(v, _)| v == view) {
            Some((_, arena)) if Arc::ptr_eq(arena, old) => {
                *arena = Arc::new(RouteArena::new(self.limit, self.ttl));
                arena.clone()
            }
            Some((_, arena)) => arena.clone(),
            None => {
                drop(views);
                self.of(view)
            }
        }
    }

    /// Lists stored over every arena.
    pub fn len(&self) -> usize {
        let views = self.views.lock().unwrap_or_else(|p| p.into_inner());
        views.iter().map(|(_, a)| a.len()).sum()
    }

    /// True if no arena holds a list.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Drops every arena.
    pub fn clear(&self) {
        self.views.lock().unwrap_or_else(|p| p.into_inner()).clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rel(n: u64) -> LocatedRel {
        LocatedRel {
            neighbour: n,
            rel: n,
            weight: 1.0,
            lat: 0.0,
            lon: 0.0,
        }
    }

    #[test]
    fn lists_by_key_within_range_limit_and_time_to_live() {
        let arena = RouteArena::new(3, Some(Duration::from_secs(60)));
        let now = Instant::now();
        let c = Counters::default();
        assert_eq!(arena.get(7, now, &c), Ok(None));
        assert!(arena.insert(7, now, vec![rel(1), rel(2)], false));
        assert!(
            !arena.insert(7, now, vec![rel(3)], false),
            "a key is stored once"
        );
        assert_eq!(arena.get(7, now, &c).unwrap().unwrap().len(), 2);
        assert!(!arena.insert(-1, now, vec![], false));
        assert!(!arena.insert(MAX_KEYS, now, vec![], false));
        assert_eq!(arena.get(-1, now, &c), Ok(None));
        assert!(arena.insert(MAX_KEYS - 1, now, vec![], false));
        assert!(arena.insert(0, now, vec![rel(9)], true));
        assert!(!arena.insert(1, now, vec![], false), "full at 3 lists");
        assert_eq!(arena.len(), 3);
        // Fresh at the statement's start, expired a minute after.
        assert_eq!(c.snapshot().prefetch_used, 0);
        assert!(arena.get(0, now + Duration::from_secs(59), &c).is_ok());
        assert!(arena.get(0, now + Duration::from_secs(59), &c).is_ok());
        assert_eq!(
            c.snapshot().prefetch_used,
            1,
            "the first read of a prefetched list"
        );
        assert_eq!(arena.get(0, now + Duration::from_secs(60), &c), Err(()));
    }

    #[test]
    fn views_share_an_arena_until_renewed_or_cleared() {
        let arenas = RouteArenas::new(100, None);
        let view = View {
            lists: vec![(
                ListRef {
                    rel: 0,
                    outgoing: true,
                },
                Some(0),
            )],
            space: 0,
            coordinates: (1, 2),
        };
        let a = arenas.of(&view);
        assert!(Arc::ptr_eq(&a, &arenas.of(&view)));
        let b = arenas.renew(&view, &a);
        assert!(!Arc::ptr_eq(&a, &b));
        // A second search that saw the old one expire gets the new one.
        assert!(Arc::ptr_eq(&b, &arenas.renew(&view, &a)));
        arenas.clear();
        assert!(!Arc::ptr_eq(&b, &arenas.of(&view)));
    }
}
