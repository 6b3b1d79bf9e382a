//! Physical operators, one family per file, and the factory that builds the
//! streaming ones from compiled plan nodes (breakers are sinks: [`sinks`]).

pub mod apply;
pub mod expand;
pub mod expand_count;
pub mod join;
pub mod scan;
pub mod shortest;
pub mod simple;
pub mod sinks;
pub mod sort;
pub mod varexpand;

use crate::compile::CNode;
use crate::context::QueryContext;
use crate::pipeline::Operator;
use rhizome_common::{Error, Result};
use rhizome_plan::OpKind;
use std::sync::Arc;

/// Builds the streaming operator for `node` (not `Argument`, breakers or joins).
pub fn streaming_operator(node: &Arc<CNode>, q: &QueryContext) -> Result<Arc<dyn Operator>> {
    Ok(match &node.kind {
        OpKind::AllNodesScan { .. }
        | OpKind::LabelScan { .. }
        | OpKind::IndexSeek { .. }
        | OpKind::NodeByIdSeek { .. } => Arc::new(scan::Scan::new(node.clone())),
        OpKind::Expand { .. } => Arc::new(expand::Expand::new(node.clone())),
        OpKind::ExpandInto { .. } => Arc::new(expand::ExpandInto::new(node.clone())),
        OpKind::ExpandCount { .. } => Arc::new(expand_count::ExpandCount::new(node.clone())),
        OpKind::VarExpand { .. } => Arc::new(varexpand::VarExpand::new(node.clone())),
        OpKind::ShortestPath { .. } => Arc::new(shortest::ShortestPath::new(node.clone())),
        OpKind::Filter { .. } => Arc::new(simple::Filter::new(node.clone())),
        OpKind::Project { .. } => Arc::new(simple::Project::new(node.clone())),
        OpKind::Unwind { .. } => Arc::new(simple::Unwind::new(node.clone())),
        OpKind::Skip { .. } => Arc::new(simple::Skip::new(node.clone(), q)?),
        OpKind::Distinct { slots } => Arc::new(simple::Distinct::new(slots.clone())),
        OpKind::ProcedureCall { .. } => Arc::new(simple::ProcedureCall::new(node.clone())),
        OpKind::Optional { .. } | OpKind::Apply | OpKind::SemiApply { .. } => {
            Arc::new(apply::Apply::new(node.clone()))
        }
        other => {
            return Err(Error::internal(format!(
                "{other:?} is not a streaming operator"
            )))
        }
    })
}
