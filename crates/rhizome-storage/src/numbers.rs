//! Numeric relationship properties written since the last checkpoint, kept
//! as dense pages of floats per property key.
//!
//! Filters such as `r.weight > 0.5` run once per relationship a traversal
//! visits. Reading a changed relationship's value from its change record
//! ([`crate::delta::RelDelta`]) costs several dependent pointer loads; these
//! pages answer it with one page lookup, and relationships created together
//! (consecutive ids) share a page, so a node's new relationships are read
//! like a base column slice. Pages are persistent: a commit copies only the
//! pages it writes, like the rest of the delta.

use rhizome_common::{RelId, Value};
use std::sync::Arc;

const PAGE_BITS: u32 = 10;
const PAGE: usize = 1 << PAGE_BITS;
const MASK: u64 = PAGE as u64 - 1;
/// Slots per page (relationship ids `page * PAGE_SLOTS ..`).
pub(crate) const PAGE_SLOTS: usize = PAGE;

/// Slot value: not written since the checkpoint (read the base column).
const UNSET: u64 = 0x7ff8_dead_0000_0001;
/// Slot value: written, and not a number (absent, removed or another type).
const ABSENT: u64 = 0x7ff8_dead_0000_0002;

/// What the pages know of one relationship's property.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Written {
    /// Not written since the checkpoint: the base column has the value.
    Unset,
    /// Written, and not a number.
    Absent,
    /// Written as this number (integers as floats).
    Number(f64),
}

/// One property key's numeric values of relationships written since the
/// checkpoint, by relationship id.
#[derive(Debug, Clone)]
pub(crate) struct NumberPages {
    /// Page `p` holds the slots of ids `p * PAGE ..`; a page is one shared
    /// slice, so a read is the page pointer and then the slot.
    pages: Arc<Vec<Option<Arc<[u64]>>>>,
    /// The lowest id written: reads below it (base relationships, when
    /// only new ones were written) skip the page vector.
    low: RelId,
}

impl Default for NumberPages {
    fn default() -> Self {
        NumberPages {
            pages: Arc::default(),
            low: RelId::MAX,
        }
    }
}

impl NumberPages {
    /// Records the value relationship `rel` now has (`None`: none).
    pub(crate) fn set(&mut self, rel: RelId, value: Option<&Value>) {
        let bits = match value {
            Some(Value::Float(x)) if x.is_nan() => f64::NAN.to_bits(),
            Some(Value::Float(x)) => x.to_bits(),
            Some(Value::Int(i)) => (*i as f64).to_bits(),
            _ => ABSENT,
        };
        self.low = self.low.min(rel);
        let p = (rel >> PAGE_BITS) as usize;
        let pages = Arc::make_mut(&mut self.pages);
        if pages.len() <= p {
            pages.resize(p + 1, None);
        }
        let page = pages[p].get_or_insert_with(|| Arc::from(vec![UNSET; PAGE]));
        if Arc::get_mut(page).is_none() {
            // Shared with an earlier version: copy the page before writing.
            *page = Arc::from(&page[..]);
        }
        let page = Arc::get_mut(page).expect("a page just copied is not shared");
        page[(rel & MASK) as usize] = bits;
    }

    /// Approximate heap bytes of the pages.
    pub(crate) fn approx_bytes(&self) -> u64 {
        let pages = self.pages.iter().flatten().count();
        (self.pages.len() * 8 + pages * PAGE * 8) as u64
    }

    /// The pages as saved in a delta file: `(page number, 1024 slots)` for
    /// every page written, and the lowest id written.
    pub(crate) fn raw(&self) -> (Vec<(usize, &[u64])>, RelId) {
        let pages = self
            .pages
            .iter()
            .enumerate()
            .filter_map(|(p, page)| page.as_ref().map(|page| (p, &page[..])))
            .collect();
        (pages, self.low)
    }

    /// Pages read back from a delta file (each page exactly [`PAGE_SLOTS`] slots).
    pub(crate) fn from_raw(pages: Vec<(usize, Vec<u64>)>, low: RelId) -> NumberPages {
        let mut all: Vec<Option<Arc<[u64]>>> = Vec::new();
        for (p, page) in pages {
            debug_assert_eq!(page.len(), PAGE);
            if all.len() <= p {
                all.resize(p + 1, None);
            }
            all[p] = Some(Arc::from(page));
        }
        NumberPages {
            pages: Arc::new(all),
            low,
        }
    }

    /// What is known of relationship `rel`.
    #[inline(always)]
    pub(crate) fn get(&self, rel: RelId) -> Written {
        if rel < self.low {
            return Written::Unset;
        }
        match self.bits(rel) {
            UNSET => Written::Unset,
            ABSENT => Written::Absent,
            bits => Written::Number(f64::from_bits(bits)),
        }
    }

    /// The lowest id written (`RelId::MAX` if none): every id below it is
    /// [`Written::Unset`].
    #[inline(always)]
    pub(crate) fn low(&self) -> RelId {
        self.low
    }

    /// The raw slot of `rel`: the number's bits, or [`UNSET`] / [`ABSENT`].
    #[inline(always)]
    fn bits(&self, rel: RelId) -> u64 {
        match self.pages.get((rel >> PAGE_BITS) as usize) {
            Some(Some(page)) => page.get((rel & MASK) as usize).copied().unwrap_or(UNSET),
            _ => UNSET,
        }
    }

    /// The number written for `rel`, as `Some(bits)`; `None` if nothing or
    /// no number was written. Branches only on where the page is, not on
    /// what the slot holds, so a loop over ids of mixed kinds (see
    /// [`crate::RelFloats::count_created`]) does not mispredict per entry.
    #[inline(always)]
    pub(crate) fn number_bits(&self, rel: RelId) -> (bool, u64) {
        let bits = self.bits(rel);
        ((bits != UNSET) & (bits != ABSENT), bits)
    }

    /// How many of the relationships `ids` (ascending) have a number
    /// written that passes `test`. A run of consecutive ids in one page
    /// (relationships created together) is read as a slice of the page.
    #[inline]
    pub(crate) fn count_passing(&self, ids: &[RelId], test: impl Fn(f64) -> bool) -> u64 {
        let number = |bits: u64| (bits != UNSET) & (bits != ABSENT) & test(f64::from_bits(bits));
        let mut count = 0u64;
        let mut rest = ids;
        while let (Some(&first), Some(&last)) = (rest.first(), rest.last()) {
            let p = first >> PAGE_BITS;
            // The ids of this page: a prefix of the rest (they ascend).
            // Found without a binary search when the rest lies in this page
            // or is one run of consecutive ids (a list's created ids mostly
            // are): the search's probes each missed the cache, and were 70%
            // of A4's time filling counts over a large delta.
            let n = if last >> PAGE_BITS == p {
                rest.len()
            } else if last - first + 1 == rest.len() as u64 {
                (((p + 1) << PAGE_BITS) - first) as usize
            } else {
                rest.partition_point(|&r| r >> PAGE_BITS == p)
            };
            let (here, after) = rest.split_at(n);
            rest = after;
            let Some(Some(page)) = self.pages.get(p as usize) else {
                continue;
            };
            let (a, b) = ((first & MASK) as usize, (here[n - 1] & MASK) as usize);
            count += if b - a + 1 == n {
                // Consecutive: the slots are one slice.
                page[a..=b].iter().filter(|&&bits| number(bits)).count() as u64
            } else {
                here.iter()
                    .filter(|&&r| number(page[(r & MASK) as usize]))
                    .count() as u64
            };
        }
        count
    }

    /// Starts loading `rel`'s slot into the cache, if one of its page was
    /// written.
    #[inline(always)]
    pub(crate) fn prefetch(&self, rel: RelId) {
        if rel < self.low {
            return;
        }
        if let Some(Some(page)) = self.pages.get((rel >> PAGE_BITS) as usize) {
            if let Some(slot) = page.get((rel & MASK) as usize) {
                rhizome_common::prefetch(slot);
            }
        }
    }

    /// True if no relationship with an id in `ids` was written (checked per
    /// page, so it may say false for an unwritten range that shares a page
    /// with a written one).
    #[inline]
    pub(crate) fn untouched(&self, ids: std::ops::Range<RelId>) -> bool {
        if ids.is_empty() || ids.end <= self.low {
            return true;
        }
        let (first, last) = (ids.start >> PAGE_BITS, (ids.end - 1) >> PAGE_BITS);
        (first..=last).all(|p| !matches!(self.pages.get(p as usize), Some(Some(_))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_tell_unset_absent_and_numbers_apart() {
        let mut pages = NumberPages::default();
        assert_eq!(pages.get(5), Written::Unset);
        pages.set(5, Some(&Value::Float(0.25)));
        pages.set(6, Some(&Value::Int(-3)));
        pages.set(7, Some(&Value::String("x".into())));
        pages.set(8, None);
        let old = pages.clone();
        pages.set(5, Some(&Value::Float(f64::NAN)));
        assert_eq!(
            old.get(5),
            Written::Number(0.25),
            "earlier versions keep their pages"
        );
        assert!(matches!(pages.get(5), Written::Number(x) if x.is_nan()));
        assert_eq!(pages.get(6), Written::Number(-3.0));
        assert_eq!(pages.get(7), Written::Absent);
        assert_eq!(pages.get(8), Written::Absent);
        assert_eq!(pages.get(9), Written::Unset);
        assert_eq!(pages.get(5000), Written::Unset);
        // Sorted ids: a consecutive run, a gap, ids of a page never written.
        let ids = [5, 6, 7, 8, 9, 3000];
        assert_eq!(pages.count_passing(&ids, |x| x < 0.0), 1);
        assert_eq!(pages.count_passing(&ids, |x| x.is_nan() || x > -10.0), 2);
        assert_eq!(pages.count_passing(&[5, 6], |_| true), 2);
        assert_eq!(pages.count_passing(&[5, 7, 8], |_| true), 1);
        assert_eq!(pages.count_passing(&[6, 2048, 2049], |_| true), 1);
        assert_eq!(pages.count_passing(&[], |_| true), 0);
        assert!(!pages.untouched(0..10));
        assert!(pages.untouched(1024..5000));
        assert!(pages.untouched(3..3));
    }

    #[test]
    fn counting_runs_that_cross_pages_agrees_with_reading_each_id() {
        let mut pages = NumberPages::default();
        for rel in 1000..1100u64 {
            if rel % 7 != 0 {
                pages.set(rel, Some(&Value::Float(rel as f64)));
            }
        }
        pages.set(2050, Some(&Value::Int(1)));
        let one_by_one = |ids: &[RelId]| {
            ids.iter()
                .filter(|&&r| matches!(pages.get(r), Written::Number(x) if x > 1010.0))
                .count() as u64
        };
        let runs: [Vec<RelId>; 5] = [
            (1000..1100).collect(),                   // consecutive, two pages
            (1020..1024).collect(),                   // consecutive, one page
            vec![1000, 1010, 1023, 1024, 1050, 2050], // gaps, three pages
            (1000..1100).step_by(3).collect(),        // gaps, two pages
            (1000..1100).chain(2040..2060).collect(), // a run, a gap, a run
        ];
        for ids in &runs {
            assert_eq!(
                pages.count_passing(ids, |x| x > 1010.0),
                one_by_one(ids),
                "{ids:?}"
            );
        }
    }
}
