//! Reference answers for A1–A4 computed by plain loops over Rhizome's CSR
//! arrays — no query engine — as fast as a hand-written loop gets on this
//! storage. The benchmark prints the engine's throughput relative to them.

use rhizome_common::{Error, NodeId, Result, Value};
use rhizome_storage::{Direction, PropertyKeyId, RelTypeId, Snapshot};
use std::time::{Duration, Instant};

/// What the loops need from the likes graph.
#[derive(Clone)]
pub struct LikesReference {
    snapshot: Snapshot,
    likes: RelTypeId,
    person: u32,
    item: u32,
    id: PropertyKeyId,
    weight: PropertyKeyId,
}

impl LikesReference {
    /// Resolves the names of the likes graph in `snapshot`.
    pub fn new(snapshot: &Snapshot) -> Result<LikesReference> {
        use rhizome_storage::GraphRead;
        let catalog = snapshot.catalog();
        let missing = |what: &str| Error::internal(format!("the likes graph has no {what}"));
        Ok(LikesReference {
            likes: catalog
                .rel_type_id("LIKES")
                .ok_or_else(|| missing("LIKES"))?,
            person: catalog
                .label_id("Person")
                .ok_or_else(|| missing("Person"))?,
            item: catalog.label_id("Item").ok_or_else(|| missing("Item"))?,
            id: catalog.property_key_id("id").ok_or_else(|| missing("id"))?,
            weight: catalog
                .property_key_id("weight")
                .ok_or_else(|| missing("weight"))?,
            snapshot: snapshot.clone(),
        })
    }

    fn lookup(&self, label: u32, id: i64) -> Option<NodeId> {
        use rhizome_storage::GraphRead;
        let index = self.snapshot.index(label, self.id)?;
        index
            .seek(&Value::Int(id), &|n| {
                self.snapshot.node_property(n, self.id)
            })
            .first()
            .copied()
    }

    /// A1: total out-degree over the persons with the given ids.
    pub fn a1(&self, ids: &[i64]) -> (Duration, i64) {
        let start = Instant::now();
        let csr = self
            .snapshot
            .csr(self.likes, Direction::Outgoing)
            .expect("LIKES exists");
        let mut count = 0u64;
        for &id in ids {
            if let Some(p) = self.lookup(self.person, id) {
                count += csr.degree(p);
            }
        }
        (start.elapsed(), count as i64)
    }

    /// A2: total in-degree over the items with the given ids.
    pub fn a2(&self, ids: &[i64]) -> (Duration, i64) {
        let start = Instant::now();
        let csr = self
            .snapshot
            .csr(self.likes, Direction::Incoming)
            .expect("LIKES exists");
        let mut count = 0u64;
        for &id in ids {
            if let Some(i) = self.lookup(self.item, id) {
                count += csr.degree(i);
            }
        }
        (start.elapsed(), count as i64)
    }

    /// A3 (and A4 with `weighted`: every relationship's weight > -1.0): the
    /// relationship-unique paths `(p)-[r1]->(i)<-[r2]-(o)-[r3]->(j)`, counted
    /// as Σ over r1 of Σ over r2 ≠ r1 of (outdeg(o) − 1 − [o = p]), with the
    /// degrees counting only passing relationships when weighted (each
    /// node's passing degree computed once, as the engine does).
    pub fn a3(&self, person_id: i64, weighted: bool) -> (Duration, i64) {
        let start = Instant::now();
        let Some(p) = self.lookup(self.person, person_id) else {
            return (start.elapsed(), 0);
        };
        let count = if weighted {
            self.a3_from::<true>(p)
        } else {
            self.a3_from::<false>(p)
        };
        (start.elapsed(), count)
    }

    /// The loops of [`LikesReference::a3`] from person node `p`, compiled
    /// apart for the weighted and the plain count.
    fn a3_from<const WEIGHTED: bool>(&self, p: NodeId) -> i64 {
        let out = self
            .snapshot
            .csr(self.likes, Direction::Outgoing)
            .expect("LIKES exists");
        let inc = self
            .snapshot
            .csr(self.likes, Direction::Incoming)
            .expect("LIKES exists");
        let back = inc.back_links().expect("an incoming CSR links back");
        let weights: &[f64] = self
            .snapshot
            .rel_column(self.likes, self.weight)
            .and_then(|c| c.dense_f64())
            .unwrap_or(&[]);
        let passes = |pos: usize| !WEIGHTED || weights[pos] > -1.0;
        let _ = self.item;
        // Passing out-degrees by node, each computed once: a walk reaches
        // the same person once per item they share with `p`.
        let mut passing = vec![
            u32::MAX;
            if WEIGHTED {
                out.node_range().end as usize
            } else {
                0
            }
        ];
        let mut count = 0i64;
        for p1 in out.positions(p) {
            if !passes(p1) {
                continue;
            }
            let i = out.all_neighbours()[p1] as NodeId;
            let range = inc.positions(i);
            let others = &inc.all_neighbours()[range.clone()];
            let back = back.slice(range.clone());
            for (k, &o) in others.iter().enumerate() {
                let o = o as NodeId;
                // The other ends and the weights are scattered: start loading
                // what entry k + 8 reads now (the offsets and slot), and the
                // weight of entry k + 4, whose position the offsets requested
                // four entries before give.
                if let Some(&ahead) = others.get(k + 8) {
                    out.prefetch(ahead as NodeId);
                    if WEIGHTED {
                        rhizome_common::prefetch(&passing[ahead as usize]);
                    }
                }
                // The weights of a list still to be counted, four entries
                // ahead (its offsets and slot were requested four before).
                if let (true, Some(&near)) = (WEIGHTED, others.get(k + 4)) {
                    if let Some(w) = weights.get(back.position(k + 4, near as NodeId) as usize) {
                        rhizome_common::prefetch(w);
                    }
                    if passing[near as usize] == u32::MAX {
                        for pos in out.positions(near as NodeId).step_by(8).take(16) {
                            rhizome_common::prefetch(&weights[pos]);
                        }
                    }
                }
                // Only an entry from `p` can be `p1` itself: unweighted,
                // no other entry needs its position.
                let p2 = if WEIGHTED || o == p {
                    back.position(k, o) as usize
                } else {
                    usize::MAX
                };
                if p2 == p1 || !passes(p2) {
                    continue;
                }
                let range = out.positions(o);
                let mut c = if WEIGHTED {
                    let slot = &mut passing[o as usize];
                    if *slot == u32::MAX {
                        *slot = weights[range].iter().filter(|&&w| w > -1.0).count() as u32;
                    }
                    *slot as i64
                } else {
                    range.len() as i64
                };
                c -= 1;
                if o == p {
                    c -= 1;
                }
                count += c;
            }
        }
        count
    }
}
