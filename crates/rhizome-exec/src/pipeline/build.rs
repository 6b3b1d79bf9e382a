//! Cutting a compiled plan into pipelines, and the mapping from plan nodes
//! to the physical operators of [`crate::ops`] (one function per role:
//! [`streaming_operator`], [`breaker_sink`]).

use super::{ArgumentSource, CellSource, Pipeline};
use crate::compile::CNode;
use crate::context::QueryContext;
use crate::expr::constant_count;
use crate::operator::{Cell, Chain, Operator, Sink, Source};
use crate::ops::aggregate::AggregateSink;
use crate::ops::apply::Apply;
use crate::ops::cartesian::Cartesian;
use crate::ops::collect::CollectSink;
use crate::ops::distinct::Distinct;
use crate::ops::distinct_endpoints::DistinctEndpointsSink;
use crate::ops::expand::Expand;
use crate::ops::expand_count::ExpandCount;
use crate::ops::expand_into::ExpandInto;
use crate::ops::filter::Filter;
use crate::ops::hash_join::HashJoin;
use crate::ops::limit::LimitSink;
use crate::ops::procedure_call::ProcedureCall;
use crate::ops::project::Project;
use crate::ops::scan::Scan;
use crate::ops::shortest::ShortestPath;
use crate::ops::skip::Skip;
use crate::ops::sort::SortSink;
use crate::ops::unwind::Unwind;
use crate::ops::varexpand::VarExpand;
use crate::scheduler::CancelToken;
use rhizome_common::{Error, ErrorKind, Result};
use rhizome_plan::{OpKind, Slot};
use std::sync::{Arc, Mutex};

/// Builds the streaming operator for `node` (not `Argument`, breakers or joins).
pub fn streaming_operator(node: &Arc<CNode>, q: &QueryContext) -> Result<Arc<dyn Operator>> {
    Ok(match &node.kind {
        OpKind::AllNodesScan { .. }
        | OpKind::LabelScan { .. }
        | OpKind::IndexSeek { .. }
        | OpKind::NodeByIdSeek { .. } => Arc::new(Scan::new(node.clone())),
        OpKind::Expand { .. } => Arc::new(Expand::new(node.clone())),
        OpKind::ExpandInto { .. } => Arc::new(ExpandInto::new(node.clone())),
        OpKind::ExpandCount { .. } => Arc::new(ExpandCount::new(node.clone())),
        OpKind::VarExpand { .. } => Arc::new(VarExpand::new(node.clone())),
        OpKind::ShortestPath { .. } => Arc::new(ShortestPath::new(node.clone())),
        OpKind::Filter { .. } => Arc::new(Filter::new(node.clone())),
        OpKind::Project { .. } => Arc::new(Project::new(node.clone())),
        OpKind::Unwind { .. } => Arc::new(Unwind::new(node.clone())),
        OpKind::Skip { .. } => Arc::new(Skip::new(node.clone(), q)?),
        OpKind::Distinct { slots } => Arc::new(Distinct::new(slots.clone())),
        OpKind::ProcedureCall { .. } => Arc::new(ProcedureCall::new(node.clone())),
        OpKind::Optional { .. } | OpKind::Apply { .. } | OpKind::SemiApply { .. } => {
            Arc::new(Apply::new(node.clone()))
        }
        other => {
            return Err(Error::internal(format!(
                "{other:?} is not a streaming operator"
            )))
        }
    })
}

/// Builds the sink of a breaker node.
/// `wanted`: the only slots read from its output, if known (a sort then
/// gathers no others into its output chunks).
pub fn breaker_sink(
    node: &Arc<CNode>,
    q: &QueryContext,
    wanted: Option<Vec<Slot>>,
) -> Result<Arc<dyn Sink>> {
    Ok(match &node.kind {
        OpKind::Aggregate { .. } => Arc::new(AggregateSink::new(node.clone(), q.worker_slots)),
        OpKind::DistinctEndpoints { .. } => {
            Arc::new(DistinctEndpointsSink::new(node.clone(), q.worker_slots))
        }
        OpKind::Sort { keys } => {
            Arc::new(SortSink::new(keys.clone(), None, q.worker_slots, wanted))
        }
        OpKind::Top { keys, .. } => {
            let limit = constant_count(q, &node.c.exprs[0], "LIMIT")?;
            Arc::new(SortSink::new(
                keys.clone(),
                Some(limit),
                q.worker_slots,
                wanted,
            ))
        }
        OpKind::Limit { .. } => Arc::new(LimitSink::new(
            constant_count(q, &node.c.exprs[0], "LIMIT")?,
            q.worker_slots,
        )),
        other => return Err(Error::internal(format!("{other:?} is not a breaker"))),
    })
}

/// Cuts a compiled plan into pipelines (dependencies first, the result last).
/// `first_row_only` makes the result sink stop the run at its first row.
pub fn build(
    root: &Arc<CNode>,
    q: &QueryContext,
    run_token: &Arc<CancelToken>,
    first_row_only: bool,
) -> Result<Vec<Pipeline>> {
    let sink: Arc<dyn Sink> = Arc::new(CollectSink::new(
        q.worker_slots,
        first_row_only.then(|| run_token.clone()),
    ));
    let mut pipelines = build_with_sink(root, q, run_token, (None, sink))?;
    // The sink's own pipeline is built last (breakers below it first).
    if let Some(last) = pipelines.last_mut() {
        last.chain.first_row_only = first_row_only;
    }
    Ok(pipelines)
}

/// Cuts a compiled plan into pipelines whose last one ends in `sink` (with
/// the operator id PROFILE charges its time to, if any).
pub fn build_with_sink(
    root: &Arc<CNode>,
    q: &QueryContext,
    run_token: &Arc<CancelToken>,
    sink: (Option<usize>, Arc<dyn Sink>),
) -> Result<Vec<Pipeline>> {
    let mut pipelines = Vec::new();
    build_chain(root, sink, false, None, q, run_token, &mut pipelines)?;
    Ok(pipelines)
}

/// Builds the pipelines of `node` with a collecting sink whose rows go to
/// `cell` (union branches, the materialized side of joins and products).
fn collect_into(
    node: &Arc<CNode>,
    cell: &Cell,
    q: &QueryContext,
    run_token: &Arc<CancelToken>,
    pipelines: &mut Vec<Pipeline>,
) -> Result<()> {
    let collect: Arc<dyn Sink> = Arc::new(CollectSink::new(q.worker_slots, None));
    build_chain(
        node,
        (None, collect),
        false,
        Some(cell.clone()),
        q,
        run_token,
        pipelines,
    )
}

#[allow(clippy::too_many_arguments)]
fn build_chain(
    node: &Arc<CNode>,
    sink: (Option<usize>, Arc<dyn Sink>),
    ends_in_limit: bool,
    output: Option<Cell>,
    q: &QueryContext,
    run_token: &Arc<CancelToken>,
    pipelines: &mut Vec<Pipeline>,
) -> Result<()> {
    let token = run_token.child();
    let mut has_skip = false;
    let mut stages: Vec<(usize, Arc<dyn Operator>)> = Vec::new();
    let mut current = node;
    let mut ordered = false;
    // Every stage handles each chunk on its own (no state across chunks).
    let mut chunk_local = true;
    let source: Box<dyn Source> = loop {
        match &current.kind {
            OpKind::Argument => break Box::new(ArgumentSource),
            kind if matches!(kind, OpKind::Eager) || kind.is_update() => {
                // Computed beforehand by the updating run (`crate::write`).
                let rows = q
                    .materialized
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .remove(&current.id)
                    .ok_or_else(|| {
                        Error::new(
                            ErrorKind::Internal,
                            format!("{} reached the read runtime unmaterialized", current.id),
                        )
                    })?;
                break Box::new(CellSource(Arc::new(Mutex::new(rows))));
            }
            OpKind::Aggregate { .. }
            | OpKind::DistinctEndpoints { .. }
            | OpKind::Sort { .. }
            | OpKind::Top { .. }
            | OpKind::Limit { .. } => {
                let cell: Cell = Arc::default();
                // A breaker right below this pipeline's sink need only
                // produce the slots the sink reads.
                let wanted = stages
                    .is_empty()
                    .then(|| sink.1.reads().map(<[Slot]>::to_vec))
                    .flatten();
                let breaker = breaker_sink(current, q, wanted)?;
                build_chain(
                    &current.inputs[0],
                    (Some(current.id), breaker),
                    matches!(current.kind, OpKind::Limit { .. }),
                    Some(cell.clone()),
                    q,
                    run_token,
                    pipelines,
                )?;
                ordered = matches!(current.kind, OpKind::Sort { .. } | OpKind::Top { .. })
                    || (matches!(current.kind, OpKind::Limit { .. })
                        && input_is_ordered(&current.inputs[0]));
                break Box::new(CellSource(cell));
            }
            OpKind::Union { distinct, slots } => {
                let cell: Cell = Arc::default();
                for branch in &current.inputs {
                    collect_into(branch, &cell, q, run_token, pipelines)?;
                }
                if *distinct {
                    stages.push((current.id, Arc::new(Distinct::new(slots.clone()))));
                }
                break Box::new(CellSource(cell));
            }
            OpKind::CartesianProduct => {
                let cell: Cell = Arc::default();
                collect_into(&current.inputs[1], &cell, q, run_token, pipelines)?;
                stages.push((current.id, Arc::new(Cartesian::new(cell))));
                current = &current.inputs[0];
            }
            OpKind::HashJoin {
                build_keys,
                probe_keys,
            } => {
                let cell: Cell = Arc::default();
                collect_into(&current.inputs[0], &cell, q, run_token, pipelines)?;
                stages.push((
                    current.id,
                    Arc::new(HashJoin::new(cell, build_keys.clone(), probe_keys.clone())),
                ));
                current = &current.inputs[1];
            }
            _ => {
                has_skip |= matches!(current.kind, OpKind::Skip { .. });
                chunk_local &= matches!(
                    current.kind,
                    OpKind::Project { .. } | OpKind::Filter { .. } | OpKind::Unwind { .. }
                );
                stages.push((current.id, streaming_operator(current, q)?));
                current = &current.inputs[0];
            }
        }
    };
    stages.reverse();
    // Which rows a LIMIT keeps or a SKIP drops depends on arrival order; a
    // list unwound or a sorted input has a meaningful order the query text
    // implies, so such pipelines run in source order (one task, no splits).
    let sequenced = ordered && chunk_local && !ends_in_limit && !has_skip && sink.1.sequenced();
    let keeps_order = ordered;
    if ends_in_limit || has_skip {
        ordered = true;
    }
    pipelines.push(Pipeline {
        chain: Chain {
            operators: stages,
            sink,
            result_sink: output.is_none(),
            ordered,
            keeps_order,
            token,
            first_row_only: false,
        },
        source,
        output,
        sequenced,
    });
    Ok(())
}

/// Whether the rows reaching `node` come in a meaningful order (after a sort).
fn input_is_ordered(node: &CNode) -> bool {
    match &node.kind {
        OpKind::Sort { .. } | OpKind::Top { .. } => true,
        OpKind::Project { .. }
        | OpKind::Filter { .. }
        | OpKind::Skip { .. }
        | OpKind::Limit { .. }
        | OpKind::Distinct { .. } => node.inputs.first().is_some_and(|i| input_is_ordered(i)),
        _ => false,
    }
}
