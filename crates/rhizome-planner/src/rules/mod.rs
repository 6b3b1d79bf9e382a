//! Optimizer rules: one rule per file, each a unit struct implementing
//! [`OptimizerRule`] whose file, struct and [`OptimizerRule::name`] agree.
//!
//! [`optimize`] applies the rules in [`all_rules`] order, over and over,
//! until a whole pass changes nothing (or a pass limit is reached, so a pair
//! of rules undoing each other cannot loop forever). A rule marks every
//! operator it creates or changes with its name (`PlanNode::rule`), which
//! EXPLAIN prints. Rules never change what the plan returns: the result
//! columns' slots and the rows' values are preserved.

mod count_comprehension;
mod drop_implied_label;
mod exists_to_semi_apply;
mod expand_count;
mod fold_constants;
mod fuse_count_hops;
mod index_seek;
mod limit_to_top;
mod node_by_id_seek;
mod optional_expand;
mod prune_projections;
mod push_down_filter;
mod push_down_limit;
mod rel_predicate_into_expand;

pub use count_comprehension::CountComprehension;
pub use drop_implied_label::DropImpliedLabel;
pub use exists_to_semi_apply::ExistsToSemiApply;
pub use expand_count::ExpandCount;
pub use fold_constants::FoldConstants;
pub use fuse_count_hops::FuseCountHops;
pub use index_seek::IndexSeek;
pub use limit_to_top::LimitToTop;
pub use node_by_id_seek::NodeByIdSeek;
pub use optional_expand::OptionalExpand;
pub use prune_projections::PruneProjections;
pub use push_down_filter::PushDownFilter;
pub use push_down_limit::PushDownLimit;
pub use rel_predicate_into_expand::RelPredicateIntoExpand;

use crate::context::PlannerContext;
use crate::slots::Slots;
use rhizome_plan::{Expr, PlanNode, Slot};

/// What a rule may read (statistics, the result slots) and allocate (slots).
pub struct RuleContext<'a> {
    /// Statistics and schema.
    pub ctx: &'a dyn PlannerContext,
    /// Slots of the plan's result columns (must keep their values).
    pub columns: Vec<Slot>,
    /// The plan's slot space, for rules that need new slots.
    pub slots: &'a mut Slots,
}

/// A rewrite of a plan tree that keeps its results.
pub trait OptimizerRule: Send + Sync {
    /// The rule's name, as shown by EXPLAIN (the file name).
    fn name(&self) -> &'static str;
    /// Rewrites the tree rooted at `node`; returns it unchanged when the rule does not apply.
    fn rewrite(&self, node: PlanNode, ctx: &mut RuleContext<'_>) -> PlanNode;
}

/// Every rule, in the order a pass applies them.
pub fn all_rules() -> Vec<Box<dyn OptimizerRule>> {
    vec![
        Box::new(FoldConstants),
        Box::new(CountComprehension),
        Box::new(PushDownFilter),
        Box::new(ExistsToSemiApply),
        Box::new(NodeByIdSeek),
        Box::new(IndexSeek),
        Box::new(OptionalExpand),
        Box::new(RelPredicateIntoExpand),
        Box::new(ExpandCount),
        Box::new(DropImpliedLabel),
        Box::new(LimitToTop),
        Box::new(PushDownLimit),
        Box::new(PruneProjections),
        Box::new(FuseCountHops),
    ]
}

/// Most passes over the rule list.
const MAX_PASSES: usize = 8;

/// Applies `rules` to a fixed point.
pub fn optimize_with(
    mut root: PlanNode,
    rules: &[Box<dyn OptimizerRule>],
    ctx: &mut RuleContext<'_>,
) -> PlanNode {
    for _ in 0..MAX_PASSES {
        let before = root.clone();
        for rule in rules {
            root = rule.rewrite(root, ctx);
        }
        if root == before {
            break;
        }
    }
    root
}

/// Rules that only rewrite inside the subtree they are given and neither
/// depend on what is read above it nor on statistics a write could falsify.
const SAFE_AROUND_WRITES: &[&str] = &[
    "fold_constants",
    "push_down_filter",
    "exists_to_semi_apply",
    "node_by_id_seek",
    "index_seek",
    "optional_expand",
    "rel_predicate_into_expand",
];

/// Optimizes an updating plan conservatively: only the maximal subtrees
/// without writes or barriers are rewritten, each on its own, and only with
/// the rules of `rules` that are local to a subtree (no rule moves an
/// operator across a write, prunes slots a write reads, or relies on
/// statistics the statement's own writes may change).
pub fn optimize_around_writes(
    root: PlanNode,
    rules: &[Box<dyn OptimizerRule>],
    ctx: &mut RuleContext<'_>,
) -> PlanNode {
    let safe: Vec<&dyn OptimizerRule> = rules
        .iter()
        .filter(|r| SAFE_AROUND_WRITES.contains(&r.name()))
        .map(|r| r.as_ref())
        .collect();
    optimize_write_free(root, &safe, ctx)
}

fn optimize_write_free(
    mut node: PlanNode,
    rules: &[&dyn OptimizerRule],
    ctx: &mut RuleContext<'_>,
) -> PlanNode {
    if !node.has_updates() {
        for _ in 0..MAX_PASSES {
            let before = node.clone();
            for rule in rules {
                node = rule.rewrite(node, ctx);
            }
            if node == before {
                break;
            }
        }
        return node;
    }
    node.inputs = std::mem::take(&mut node.inputs)
        .into_iter()
        .map(|i| optimize_write_free(i, rules, ctx))
        .collect();
    node
}

/// Applies [`all_rules`] to a fixed point.
pub fn optimize(root: PlanNode, ctx: &mut RuleContext<'_>) -> PlanNode {
    optimize_with(root, &all_rules(), ctx)
}

/// Rewrites every operator bottom-up (inputs first, and plans nested in
/// expressions), applying `f` to each.
pub fn transform_up(node: PlanNode, f: &mut dyn FnMut(PlanNode) -> PlanNode) -> PlanNode {
    let PlanNode {
        mut kind,
        inputs,
        estimated_rows,
        rule,
    } = node;
    let inputs = inputs.into_iter().map(|n| transform_up(n, f)).collect();
    for e in crate::usage::op_exprs_mut(&mut kind) {
        transform_expr_plans(e, f);
    }
    f(PlanNode {
        kind,
        inputs,
        estimated_rows,
        rule,
    })
}

/// Applies [`transform_up`] to every plan nested in `e`.
fn transform_expr_plans(e: &mut Expr, f: &mut dyn FnMut(PlanNode) -> PlanNode) {
    crate::rules::fold_constants::visit_exprs_mut(e, &mut |x| {
        if let Expr::Subquery(plan, _) = x {
            let p = std::mem::replace(&mut **plan, crate::logical::argument());
            **plan = transform_up(p, f);
        }
    });
}

/// Visits every sub-expression of `e` (children first), mutably; plans
/// nested in subqueries are not entered.
pub fn visit_exprs(e: &mut Expr, f: &mut dyn FnMut(&mut Expr)) {
    fold_constants::visit_exprs_mut(e, f)
}

/// Marks `node` as produced by `rule`.
pub(crate) fn mark(mut node: PlanNode, rule: &'static str) -> PlanNode {
    node.rule = Some(rule);
    node
}

/// Helpers for the rules' unit tests.
#[cfg(test)]
pub(crate) mod test_util {
    use super::OptimizerRule;
    use crate::context::EmptyContext;
    use crate::PlannerContext;

    /// The EXPLAIN text of `query` planned with only `rule` (or no rule), without estimates.
    pub fn plan_with(
        query: &str,
        rule: Option<Box<dyn OptimizerRule>>,
        ctx: &dyn PlannerContext,
    ) -> String {
        let analyzed = rhizome_cypher::compile(query).expect("query compiles");
        let rules: Vec<Box<dyn OptimizerRule>> = rule.into_iter().collect();
        let planned = crate::plan_statement_with(&analyzed, ctx, &rules).expect("query plans");
        let text = rhizome_plan::render_plan(&planned.plan, &mut |_, _| String::new());
        text.lines()
            .map(|l| match l.find("  [est.") {
                Some(i) => {
                    let rule = l.rfind("] [").map(|j| &l[j + 2..]).unwrap_or("");
                    format!(
                        "{}{}{}",
                        &l[..i],
                        if rule.is_empty() { "" } else { " " },
                        rule
                    )
                }
                None => l.to_string(),
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// Like [`plan_with`] against the empty context.
    pub fn plan_empty(query: &str, rule: Option<Box<dyn OptimizerRule>>) -> String {
        plan_with(query, rule, &EmptyContext)
    }
}
