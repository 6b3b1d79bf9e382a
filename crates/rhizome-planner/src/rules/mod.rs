//! Optimizer rules: one rule per file, each a unit struct implementing
//! [`OptimizerRule`] whose file, struct and [`OptimizerRule::name`] agree.
//!
//! A rule rewrites one operator and declares how the plan is walked for it
//! ([`OptimizerRule::apply_order`]); the driver ([`apply_rule`]) owns the
//! walk (`PlanNode::transform_up` / `transform_down` of `rhizome-plan`,
//! which enter plans nested in expressions too) and checks that the rule
//! kept the plan's output schema. [`optimize`] applies the rules in
//! [`all_rules`] order, over and over, until a whole pass changes nothing
//! (or a pass limit is reached, so a pair of rules undoing each other cannot
//! loop forever). A rule marks every
//! operator it creates or changes with its name (`PlanNode::rule`), which
//! EXPLAIN prints. Rules never change what the plan returns: the result
//! columns' slots and the rows' values are preserved.

mod count_comprehension;
mod distinct_endpoints;
mod drop_implied_label;
mod exists_to_semi_apply;
mod expand_count;
mod fold_constants;
mod fuse_count_hops;
mod index_seek;
mod limit_to_top;
mod node_by_id_seek;
mod optional_expand;
mod or_to_union;
mod path_predicate_into_expand;
mod prune_projections;
mod push_down_filter;
mod push_down_limit;
mod rel_predicate_into_expand;
mod seek_expand_end;

pub use count_comprehension::CountComprehension;
pub use distinct_endpoints::DistinctEndpoints;
pub use drop_implied_label::DropImpliedLabel;
pub use exists_to_semi_apply::ExistsToSemiApply;
pub use expand_count::ExpandCount;
pub use fold_constants::FoldConstants;
pub use fuse_count_hops::FuseCountHops;
pub use index_seek::IndexSeek;
pub use limit_to_top::LimitToTop;
pub use node_by_id_seek::NodeByIdSeek;
pub use optional_expand::OptionalExpand;
pub use or_to_union::OrToUnion;
pub use path_predicate_into_expand::PathPredicateIntoExpand;
pub use prune_projections::PruneProjections;
pub use push_down_filter::PushDownFilter;
pub use push_down_limit::PushDownLimit;
pub use rel_predicate_into_expand::RelPredicateIntoExpand;
pub use seek_expand_end::SeekExpandEnd;

use crate::context::PlannerContext;
use crate::slots::Slots;
use crate::usage::subtree_writes;
use rhizome_plan::{PlanNode, Slot};
use std::collections::BTreeSet;

/// What a rule may read (statistics, the result slots) and allocate (slots).
pub struct RuleContext<'a> {
    /// Statistics and schema.
    pub ctx: &'a dyn PlannerContext,
    /// Slots of the plan's result columns (must keep their values).
    pub columns: Vec<Slot>,
    /// The plan's slot space, for rules that need new slots.
    pub slots: &'a mut Slots,
}

/// How the optimizer walks the plan for a rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApplyOrder {
    /// Each operator after its inputs (and the plans nested in its
    /// expressions): [`PlanNode::transform_up`].
    BottomUp,
    /// Each operator before its inputs: [`PlanNode::transform_down`].
    TopDown,
    /// Once, at the root: for rules that need the whole plan first (which
    /// slots anything reads); such a rule walks with the same drivers.
    WholePlan,
}

/// A rewrite of a plan that keeps its results.
pub trait OptimizerRule: Send + Sync {
    /// The rule's name, as shown by EXPLAIN (the file name).
    fn name(&self) -> &'static str;
    /// How the driver walks the plan for this rule.
    fn apply_order(&self) -> ApplyOrder {
        ApplyOrder::BottomUp
    }
    /// Rewrites one operator (its inputs already rewritten when bottom-up;
    /// the root for [`ApplyOrder::WholePlan`]); returns it unchanged when the
    /// rule does not apply.
    fn rewrite(&self, node: PlanNode, ctx: &mut RuleContext<'_>) -> PlanNode;
}

/// Every rule, in the order a pass applies them.
pub fn all_rules() -> Vec<Box<dyn OptimizerRule>> {
    vec![
        Box::new(FoldConstants),
        Box::new(CountComprehension),
        Box::new(PushDownFilter),
        Box::new(OrToUnion),
        Box::new(ExistsToSemiApply),
        Box::new(NodeByIdSeek),
        Box::new(IndexSeek),
        Box::new(SeekExpandEnd),
        Box::new(OptionalExpand),
        Box::new(RelPredicateIntoExpand),
        Box::new(PathPredicateIntoExpand),
        Box::new(ExpandCount),
        Box::new(DistinctEndpoints),
        Box::new(DropImpliedLabel),
        Box::new(LimitToTop),
        Box::new(PushDownLimit),
        Box::new(PruneProjections),
        Box::new(FuseCountHops),
    ]
}

/// Most passes over the rule list.
const MAX_PASSES: usize = 8;

/// What a plan promises its reader: the result slots it produces (of those
/// a rule must keep, [`RuleContext::columns`]).
fn output_schema(root: &PlanNode, columns: &[Slot]) -> BTreeSet<Slot> {
    let written = subtree_writes(root);
    columns
        .iter()
        .copied()
        .filter(|c| written.contains(c))
        .collect()
}

/// Applies one rule to the plan at `root`, walking it as the rule asks, and
/// checks that the rule kept the output schema: every result slot the plan
/// produced before, it still produces. A rule that breaks it is a planner
/// bug: debug builds stop on it, release builds keep the plan as it was.
pub fn apply_rule(rule: &dyn OptimizerRule, root: PlanNode, ctx: &mut RuleContext<'_>) -> PlanNode {
    let before = output_schema(&root, &ctx.columns);
    let kept = root.clone();
    let rewritten = match rule.apply_order() {
        ApplyOrder::BottomUp => root.transform_up(&mut |n| rule.rewrite(n, ctx)),
        ApplyOrder::TopDown => root.transform_down(&mut |n| rule.rewrite(n, ctx)),
        ApplyOrder::WholePlan => rule.rewrite(root, ctx),
    };
    let after = output_schema(&rewritten, &ctx.columns);
    if !after.is_superset(&before) {
        debug_assert!(
            false,
            "optimizer rule {} lost result slots {:?}",
            rule.name(),
            before.difference(&after).collect::<Vec<_>>()
        );
        return kept;
    }
    rewritten
}

/// Applies `rules` to a fixed point.
pub fn optimize_with(
    root: PlanNode,
    rules: &[Box<dyn OptimizerRule>],
    ctx: &mut RuleContext<'_>,
) -> PlanNode {
    let rules: Vec<&dyn OptimizerRule> = rules.iter().map(|r| r.as_ref()).collect();
    optimize_to_fixed_point(root, &rules, ctx)
}

fn optimize_to_fixed_point(
    mut root: PlanNode,
    rules: &[&dyn OptimizerRule],
    ctx: &mut RuleContext<'_>,
) -> PlanNode {
    for _ in 0..MAX_PASSES {
        let before = root.clone();
        for rule in rules {
            root = apply_rule(*rule, root, ctx);
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
    "path_predicate_into_expand",
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
        return optimize_to_fixed_point(node, rules, ctx);
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

    /// A graph of 100 nodes, all carrying every label and no relationships,
    /// with property indexes on the given `(label, key)` pairs: the context
    /// the index rules' tests plan against.
    pub struct Indexed {
        /// The indexed `(label, key)` pairs.
        pub indexes: &'static [(&'static str, &'static str)],
        /// Distinct values of an indexed key: `(key, count)` pairs, and
        /// `default_distinct` for any other key.
        pub distinct: &'static [(&'static str, u64)],
        /// Distinct values of an indexed key not named in `distinct`.
        pub default_distinct: u64,
    }

    impl PlannerContext for Indexed {
        fn label_count(&self, _: &str) -> Option<u64> {
            Some(100)
        }
        fn node_count(&self) -> u64 {
            100
        }
        fn rel_count(&self, _: Option<&str>) -> u64 {
            0
        }
        fn triple_count(&self, _: Option<&str>, _: Option<&str>, _: Option<&str>) -> u64 {
            0
        }
        fn has_index(&self, label: &str, key: &str) -> bool {
            self.indexes.iter().any(|&(l, k)| l == label && k == key)
        }
        fn distinct_values(&self, _: &str, key: &str) -> Option<u64> {
            let named = self.distinct.iter().find(|&&(k, _)| k == key);
            Some(named.map_or(self.default_distinct, |&(_, n)| n))
        }
    }

    /// Like [`plan_with`] against the empty context.
    pub fn plan_empty(query: &str, rule: Option<Box<dyn OptimizerRule>>) -> String {
        plan_with(query, rule, &EmptyContext)
    }
}

#[cfg(test)]
mod driver_tests {
    use super::{apply_rule, ApplyOrder, OptimizerRule, RuleContext};
    use crate::context::EmptyContext;
    use crate::slots::Slots;
    use rhizome_common::Value;
    use rhizome_plan::{Expr, OpKind, PlanNode};

    /// A broken rule: drops every projection (and so the result column).
    struct DropProjections;

    impl OptimizerRule for DropProjections {
        fn name(&self) -> &'static str {
            "drop_projections"
        }
        fn apply_order(&self) -> ApplyOrder {
            ApplyOrder::TopDown
        }
        fn rewrite(&self, mut node: PlanNode, _: &mut RuleContext<'_>) -> PlanNode {
            match node.kind {
                OpKind::Project { .. } => node.inputs.pop().expect("an input"),
                _ => node,
            }
        }
    }

    fn plan() -> PlanNode {
        let argument = PlanNode::new(OpKind::Argument, Vec::new(), 1.0);
        PlanNode::new(
            OpKind::Project {
                items: vec![(0, Expr::Literal(Value::Int(1)))],
            },
            vec![argument],
            1.0,
        )
    }

    #[test]
    #[cfg_attr(
        debug_assertions,
        should_panic(expected = "optimizer rule drop_projections lost result slots [0]")
    )]
    fn the_driver_rejects_a_rule_that_loses_a_result_column() {
        let mut slots = Slots::new();
        let mut ctx = RuleContext {
            ctx: &EmptyContext,
            columns: vec![0],
            slots: &mut slots,
        };
        // Release builds keep the plan the rule was given.
        assert_eq!(apply_rule(&DropProjections, plan(), &mut ctx), plan());
    }

    #[test]
    fn the_driver_lets_a_rule_drop_what_is_not_a_result_column() {
        let mut slots = Slots::new();
        let mut ctx = RuleContext {
            ctx: &EmptyContext,
            columns: vec![],
            slots: &mut slots,
        };
        let out = apply_rule(&DropProjections, plan(), &mut ctx);
        assert_eq!(out.kind, OpKind::Argument);
    }
}
