//! `ExpandInto`: the relationships between two bound nodes.

use super::adjacency::{excluded_rels, prefetch_walks, skip_entry, walks};
use super::expand::Output;
use crate::chunk::{Chunk, NULL_ID};
use crate::compile::CNode;
use crate::operator::{return_if_finished, Operator, OperatorResult, TaskCtx, NEED_MORE};
use rhizome_common::Result;
use rhizome_plan::OpKind;
use std::sync::Arc;

/// Relationships between two bound nodes.
pub struct ExpandInto {
    node: Arc<CNode>,
}

impl ExpandInto {
    /// The operator for an `ExpandInto` node.
    pub fn new(node: Arc<CNode>) -> ExpandInto {
        ExpandInto { node }
    }
}

impl Operator for ExpandInto {
    fn execute(&self, input: Chunk, ctx: &mut TaskCtx<'_>) -> Result<OperatorResult> {
        let OpKind::ExpandInto {
            from,
            rel,
            to,
            direction,
            distinct_from,
            optional,
            ..
        } = &self.node.kind
        else {
            unreachable!("ExpandInto built for an ExpandInto node");
        };
        let snap = &ctx.q.snapshot;
        let types = self.node.c.types.as_ref().expect("compiled types");
        let walks = walks(snap, types, *direction);
        if snap.external().is_some() {
            let back: Vec<_> = walks.iter().map(|&(t, d)| (t, d.reverse())).collect();
            prefetch_walks(snap, input.column(*from), input.len(), &walks);
            prefetch_walks(snap, input.column(*to), input.len(), &back);
        }
        ctx.restart_quantum();
        let mut out = Output::new(ctx.first_batch(input.len()));
        let mut excluded = Vec::new();
        for row in 0..input.len() {
            let a = input
                .column(*from)
                .and_then(|c| c.node(row))
                .unwrap_or(NULL_ID);
            let b = input
                .column(*to)
                .and_then(|c| c.node(row))
                .unwrap_or(NULL_ID);
            let mut found = false;
            if a != NULL_ID && b != NULL_ID {
                excluded_rels(&input, row, distinct_from, &mut excluded);
                for &(t, d) in &walks {
                    // Look from whichever end has the shorter list.
                    let (adj, flipped) = if snap.degree(a, t, d) <= snap.degree(b, t, d.reverse()) {
                        (snap.adjacency(a, t, d), false)
                    } else {
                        (snap.adjacency(b, t, d.reverse()), true)
                    };
                    let target = if flipped { a } else { b };
                    for i in adj.neighbours().equal_range(target) {
                        if skip_entry(*direction, d, a, b) {
                            continue;
                        }
                        let r = adj.rel_id(i);
                        if excluded.contains(&r) {
                            continue;
                        }
                        found = true;
                        out.rows.push(row as u32);
                        out.rels.push(r);
                        out.nodes.push(b);
                        if out.full() {
                            return_if_finished!(out.flush(&input, *rel, *to, ctx));
                            if ctx.cancelled() {
                                return NEED_MORE;
                            }
                        }
                    }
                }
            }
            if *optional && !found {
                out.rows.push(row as u32);
                out.rels.push(NULL_ID);
                out.nodes.push(b);
            }
        }
        out.flush(&input, *rel, *to, ctx)
    }
}
