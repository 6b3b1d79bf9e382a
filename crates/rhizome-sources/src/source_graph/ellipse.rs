//! The `ellipse` prefetcher over a [`SourceGraph`]: before a route search,
//! the region between its ends (see [`crate::region`]) fetched in one
//! round trip and turned straight into located lists in the route arena;
//! a search that leaves the region fetches the next ring.
//!
//! A region's answer is a handful of columns (keys, coordinates; start
//! nodes, neighbours, relationship keys, numeric properties), decoded
//! without an allocation per row; the only allocation per node is its
//! located list, which the arena keeps. Neighbours outside the fetched
//! rows (roads longer than [`ROWS_MARGIN_M`](crate::region::ROWS_MARGIN_M) crossing
//! the region's edge, dangling keys) have their rows fetched in one more
//! round trip. Nodes the region cannot describe (a key out of range, a
//! NULL) get no located list, so the search fetches them as without a
//! prefetcher and meets the same errors.

use super::{number, SourceGraph};
use crate::cache::LocatedRel;
use crate::mapping::RegionShape;
use crate::query_graph::node_id;
use crate::region::{first_outer, grown, Foci, RegionQuery, RegionRows};
use rhizome_common::{NodeId, RelId, Result};
use std::collections::HashMap;
use std::time::Instant;

/// At most this many rings are fetched after the first region; a search
/// going further fetches plainly.
const MAX_RINGS: u32 = 8;

/// The region prefetched for the current route.
pub(super) struct RouteRegion {
    foci: Foci,
    /// The first region's stretch.
    stretch: f64,
    /// The sum up to which lists were fetched (`None`: nothing yet).
    lists_outer: Option<f64>,
    /// Rings fetched after the first region.
    rings: u32,
    /// Places of the nodes whose rows came (NaN for absent nodes).
    places: HashMap<i64, (f64, f64), foldhash::fast::RandomState>,
}

impl SourceGraph<'_> {
    /// Sets up the region of a route from `start` to `end` if the
    /// prefetcher is `ellipse` (the ends' rows: from the cache, else one
    /// round trip; nothing else is fetched until the search misses).
    pub(super) fn prepare_region(
        &self,
        start: NodeId,
        end: NodeId,
        shape: RegionShape,
    ) -> Result<()> {
        let stretch = shape.stretch;
        let mut region = self.region.lock().unwrap_or_else(|p| p.into_inner());
        *region = None;
        let (Some((lat, lon)), Some(_)) = (self.coordinates, &self.arena) else {
            return Ok(());
        };
        // A region's statements carry key columns; spaces with row-number
        // keys (crate::row_keys) are fetched plainly.
        let relationships = &self.source.mapping().relationships;
        if self
            .lists
            .iter()
            .any(|(list, _)| relationships[list.rel as usize].key.is_none())
        {
            return Ok(());
        }
        let (a, b) = (super::key_of(start), super::key_of(end));
        let cached = |key: i64| {
            let k = crate::cache::CacheKey::Node {
                space: self.space,
                key,
            };
            self.source.cache.peek(&k, &self.source.counters).is_some()
        };
        if !(cached(a) && cached(b)) {
            // The ends' rows and the first region in one round trip.
            let lists: Vec<_> = self.lists.iter().map(|(l, _)| *l).collect();
            let at = Instant::now();
            if let Some((ends, fetched)) = self.source.fetch_region_from_ends(
                self.space,
                &lists,
                (a, b),
                shape,
                self.deadline,
            )? {
                self.source.remember(&ends, &|_| true);
                let place = |key: i64| {
                    ends.nodes
                        .iter()
                        .find(|(_, k, _)| *k == key)
                        .and_then(|(_, _, row)| row.as_ref())
                        .and_then(|r| Some((number(r.get(lat)?)?, number(r.get(lon)?)?)))
                };
                if let (Some(a), Some(b)) = (place(a), place(b)) {
                    let foci = Foci::new(a, b, shape.weight());
                    let outer = first_outer(foci.span(), stretch);
                    let mut fresh = RouteRegion {
                        foci,
                        stretch,
                        lists_outer: Some(outer),
                        rings: 0,
                        places: HashMap::default(),
                    };
                    let query = RegionQuery::ring(foci, -1.0, outer);
                    self.absorb(&mut fresh, &query, fetched, at)?;
                    *region = Some(fresh);
                }
                return Ok(());
            }
        }
        let rows = self.node_rows(&[a, b])?;
        let place = |key: i64| {
            rows.iter()
                .find(|(k, _)| *k == key)
                .and_then(|(_, row)| row.as_ref())
                .and_then(|r| Some((number(r.get(lat)?)?, number(r.get(lon)?)?)))
        };
        if let (Some(a), Some(b)) = (place(a), place(b)) {
            *region = Some(RouteRegion {
                foci: Foci::new(a, b, shape.weight()),
                stretch,
                lists_outer: None,
                rings: 0,
                places: HashMap::default(),
            });
        }
        Ok(())
    }

    /// Fetches the first region, or the next ring if one of `nodes` lies
    /// beyond the region fetched so far; false if nothing was fetched
    /// (no region, the nodes are inside it, or the backend cannot answer).
    pub(super) fn extend_region(&self, nodes: &[NodeId]) -> Result<bool> {
        let mut guard = self.region.lock().unwrap_or_else(|p| p.into_inner());
        let Some(region) = guard.as_mut() else {
            return Ok(false);
        };
        let span = region.foci.span();
        let (inner, outer) = match region.lists_outer {
            None => (-1.0, first_outer(span, region.stretch)),
            Some(_) if region.rings >= MAX_RINGS => return Ok(false),
            Some(outer) => {
                // The farthest node asking; unknown places count as far.
                let mut needed = Some(f64::NEG_INFINITY);
                for &node in nodes {
                    match self.place_of(region, super::key_of(node)) {
                        Some(at) if at.0.is_nan() => {}
                        Some(at) => needed = needed.map(|n| n.max(region.foci.sum(at))),
                        None => needed = None,
                    }
                }
                match needed {
                    Some(n) if n <= outer => return Ok(false),
                    _ => {}
                }
                region.rings += 1;
                (outer, grown(span, outer, needed))
            }
        };
        let query = RegionQuery::ring(region.foci, inner, outer);
        let lists: Vec<_> = self.lists.iter().map(|(l, _)| *l).collect();
        let at = Instant::now();
        let Some(fetched) = self
            .source
            .fetch_region(self.space, &lists, &query, self.deadline)?
        else {
            *guard = None;
            return Ok(false);
        };
        region.lists_outer = Some(outer);
        self.absorb(region, &query, fetched, at)?;
        Ok(true)
    }

    /// Where node `key` is, from the region's rows or the cache.
    fn place_of(&self, region: &RouteRegion, key: i64) -> Option<(f64, f64)> {
        if let Some(&at) = region.places.get(&key) {
            return Some(at);
        }
        let (lat, lon) = self.coordinates?;
        let k = crate::cache::CacheKey::Node {
            space: self.space,
            key,
        };
        match self.source.cache.peek(&k, &self.source.counters) {
            Some((crate::cache::CacheValue::Node(Some(row)), _)) => {
                Some((number(row.get(lat)?)?, number(row.get(lon)?)?))
            }
            _ => None,
        }
    }

    /// Stores the located lists of a fetched region in the arena.
    fn absorb(
        &self,
        region: &mut RouteRegion,
        query: &RegionQuery,
        fetched: RegionRows,
        at: Instant,
    ) -> Result<()> {
        let Some((_, arena)) = &self.arena else {
            return Ok(());
        };
        for i in 0..fetched.keys.len() {
            if let (Some(k), Some(lat), Some(lon)) =
                (fetched.keys[i], fetched.lats[i], fetched.lons[i])
            {
                region.places.insert(k, (lat, lon));
            }
        }
        // Neighbours beyond the rows fetched: one more round trip.
        let mut missing: Vec<i64> = fetched
            .lists
            .iter()
            .flat_map(|l| l.neighbours.iter().flatten().copied())
            .filter(|k| !region.places.contains_key(k))
            .collect();
        if !missing.is_empty() {
            missing.sort_unstable();
            missing.dedup();
            let (lat, lon) = self.coordinates.expect("regions need coordinates");
            for (key, row) in self.node_rows(&missing)? {
                let place = row
                    .and_then(|r| Some((number(r.get(lat)?)?, number(r.get(lon)?)?)))
                    .unwrap_or((f64::NAN, f64::NAN));
                region.places.insert(key, place);
            }
        }
        // Every relationship as (start node, list, position), in list order.
        let mut order: Vec<(i64, u32, u32)> =
            Vec::with_capacity(fetched.lists.iter().map(|l| l.nodes.len()).sum());
        for (li, list) in fetched.lists.iter().enumerate() {
            for (i, node) in list.nodes.iter().enumerate() {
                if let Some(node) = node {
                    order.push((*node, li as u32, i as u32));
                }
            }
        }
        order.sort_unstable();
        let weights: Vec<Option<&[Option<f64>]>> = fetched
            .lists
            .iter()
            .map(|l| {
                let weight = self
                    .lists
                    .iter()
                    .find(|(m, _)| *m == l.list)
                    .and_then(|(_, w)| *w);
                weight.and_then(|w| l.property(w))
            })
            .collect();
        let mut stored = 0u64;
        let mut with_lists: Vec<i64> = Vec::new();
        let mut start = 0;
        while start < order.len() {
            let node = order[start].0;
            let mut end = start;
            while end < order.len() && order[end].0 == node {
                end += 1;
            }
            with_lists.push(node);
            if let Some(located) = self.locate(region, &fetched, &weights, &order[start..end]) {
                if arena.insert(node, at, located, true) {
                    stored += 1;
                }
            }
            start = end;
        }
        // Nodes of the lists band without relationships: empty lists
        // (the bounds narrowed a little, as the backend's arithmetic may
        // round differently at the edge).
        let (inner, outer) = (query.lists.inner, query.lists.outer);
        for i in 0..fetched.keys.len() {
            let (Some(k), Some(lat), Some(lon)) =
                (fetched.keys[i], fetched.lats[i], fetched.lons[i])
            else {
                continue;
            };
            let sum = region.foci.sum((lat, lon));
            let inside = sum <= outer * (1.0 - 1e-9) && (inner < 0.0 || sum > inner * (1.0 + 1e-9));
            if inside
                && with_lists.binary_search(&k).is_err()
                && node_id(self.space, k).is_some()
                && arena.insert(k, at, Vec::new(), true)
            {
                stored += 1;
            }
        }
        self.source.counters.prefetched(stored);
        Ok(())
    }

    /// The located list of one node from its entries `(node, list,
    /// position)`; `None` if an id is out of range or NULL.
    fn locate(
        &self,
        region: &RouteRegion,
        fetched: &RegionRows,
        weights: &[Option<&[Option<f64>]>],
        entries: &[(i64, u32, u32)],
    ) -> Option<Vec<LocatedRel>> {
        node_id(self.space, entries[0].0)?;
        let mut located = Vec::with_capacity(entries.len());
        for &(_, li, i) in entries {
            let (list, i) = (&fetched.lists[li as usize], i as usize);
            let neighbour = list.neighbours[i]?;
            let (lat, lon) = region
                .places
                .get(&neighbour)
                .copied()
                .unwrap_or((f64::NAN, f64::NAN));
            let weight = weights[li as usize]
                .and_then(|w| w[i])
                .filter(|w| w.is_finite())
                .unwrap_or(f64::NAN);
            located.push(LocatedRel {
                neighbour: node_id(self.space, neighbour)?,
                rel: node_id(list.list.rel, list.rels[i]?)? as RelId,
                weight,
                lat,
                lon,
            });
        }
        Some(located)
    }
}
