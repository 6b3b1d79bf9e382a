//! Plans as structured trees for clients (Bolt's `plan` / `profile`
//! summaries, the Query API's `queryPlan`): each operator with its
//! description, estimate, optimizer rule, the variables bound at its
//! output, its inputs and the plans nested in its expressions.

use crate::*;

/// One operator of a plan, described for clients.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanDescription {
    /// The index of the operator's PROFILE counters: operators are
    /// numbered as the runtime compiles them — an operator, then the plans
    /// nested in its expressions, then its inputs (an updating operator's
    /// nested plans too). [`describe_plan`] sets it on every operator.
    pub id: Option<usize>,
    /// The operator's name (`LabelScan`, `Expand`, …).
    pub name: &'static str,
    /// Its arguments with variable names (`(p)-[r:KNOWS]->(q)`).
    pub details: String,
    /// The planner's estimate of its rows.
    pub estimated_rows: f64,
    /// The optimizer rule that produced or last changed it.
    pub rule: Option<&'static str>,
    /// For the root of a plan nested in an expression: what kind
    /// (`EXISTS`, `COUNT`, `COLLECT`).
    pub subquery: Option<&'static str>,
    /// The variables bound at its output, sorted (temporaries as
    /// `anon_N`).
    pub identifiers: Vec<String>,
    /// Its inputs, in order, then the plans nested in its expressions.
    pub children: Vec<PlanDescription>,
}

/// The structured tree of `plan`.
pub fn describe_plan(plan: &Plan) -> PlanDescription {
    let mut next = 0;
    describe_node(&plan.root, &plan.slot_names, Some(&mut next), None)
}

fn describe_node(
    node: &PlanNode,
    names: &[String],
    mut next: Option<&mut usize>,
    subquery: Option<&'static str>,
) -> PlanDescription {
    let id = next.as_deref_mut().map(|n| {
        *n += 1;
        *n - 1
    });
    let nested = nested_plans(node);
    // Numbered in compile order (nested plans before inputs), listed
    // inputs first.
    let nested: Vec<PlanDescription> = nested
        .into_iter()
        .map(|(plan, kind)| describe_node(plan, names, next.as_deref_mut(), Some(kind)))
        .collect();
    let mut children: Vec<PlanDescription> = node
        .inputs
        .iter()
        .map(|input| describe_node(input, names, next.as_deref_mut(), None))
        .collect();
    children.extend(nested);
    let mut slots = Vec::new();
    bound(node, &mut slots);
    slots.sort_unstable();
    slots.dedup();
    let mut identifiers: Vec<String> = slots
        .into_iter()
        .filter_map(|s| names.get(s))
        .map(|n| n.trim().to_string())
        .collect();
    identifiers.sort();
    identifiers.dedup();
    let description = node.describe(names);
    let details = description
        .strip_prefix(node.name())
        .unwrap_or(&description)
        .trim()
        .to_string();
    PlanDescription {
        id,
        name: node.name(),
        details,
        estimated_rows: node.estimated_rows,
        rule: node.rule,
        subquery,
        identifiers,
        children,
    }
}

/// The plans nested in `node`'s expressions, in the order the runtime
/// numbers them (after the operator, before its inputs), each with the
/// kind of subquery it computes (`EXISTS`, `COUNT`, `COLLECT`).
pub(crate) fn nested_plans(node: &PlanNode) -> Vec<(&PlanNode, &'static str)> {
    let mut nested = Vec::new();
    for expr in node.kind.exprs() {
        expr.visit(&mut |e| {
            if let Expr::Subquery(plan, kind) = e {
                nested.push((&**plan, kind_name(kind)));
            }
        });
    }
    nested
}

fn kind_name<E>(kind: &SubqueryKind<E>) -> &'static str {
    match kind {
        SubqueryKind::Exists => "EXISTS",
        SubqueryKind::Count => "COUNT",
        SubqueryKind::Collect(_) => "COLLECT",
    }
}

/// The slots bound at `node`'s output.
fn bound(node: &PlanNode, out: &mut Vec<Slot>) {
    let inputs = |out: &mut Vec<Slot>| {
        for input in &node.inputs {
            bound(input, out);
        }
    };
    let first_input = |out: &mut Vec<Slot>| {
        if let Some(input) = node.inputs.first() {
            bound(input, out);
        }
    };
    match &node.kind {
        OpKind::AllNodesScan { out: s }
        | OpKind::LabelScan { out: s, .. }
        | OpKind::IndexSeek { out: s, .. }
        | OpKind::NodeByIdSeek { out: s, .. }
        | OpKind::Unwind { out: s, .. }
        | OpKind::ExpandCount { count_slot: s, .. }
        | OpKind::DistinctEndpoints { to: s, .. } => {
            inputs(out);
            out.push(*s);
        }
        OpKind::Expand { rel, to, .. } => {
            inputs(out);
            out.extend([*rel, *to]);
        }
        OpKind::ExpandInto { rel, .. } => {
            inputs(out);
            out.push(*rel);
        }
        OpKind::VarExpand { rels, to, .. } => {
            inputs(out);
            out.extend([*rels, *to]);
        }
        OpKind::ShortestPath { path, rels, .. } => {
            inputs(out);
            out.push(*path);
            out.extend(rels.iter().copied());
        }
        OpKind::Project { items } => {
            inputs(out);
            out.extend(items.iter().map(|(s, _)| *s));
        }
        OpKind::Aggregate { keys, aggregates } => {
            out.extend(keys.iter().map(|(s, _)| *s));
            out.extend(aggregates.iter().map(|a| a.slot));
        }
        OpKind::Union { slots, .. } => out.extend(slots.iter().copied()),
        OpKind::ProcedureCall { yields, .. } => {
            inputs(out);
            out.extend(yields.iter().map(|(_, s)| *s));
        }
        OpKind::Create { nodes, rels } | OpKind::Merge { nodes, rels, .. } => {
            inputs(out);
            out.extend(nodes.iter().map(|n| n.slot));
            out.extend(rels.iter().map(|r| r.slot));
        }
        OpKind::SemiApply { .. } | OpKind::Foreach { .. } => first_input(out),
        _ => inputs(out),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(root: PlanNode, names: &[&str]) -> Plan {
        Plan {
            root,
            width: names.len(),
            columns: vec![],
            slot_names: names.iter().map(|n| n.to_string()).collect(),
            ordered: false,
            updating: false,
        }
    }

    #[test]
    fn describes_operators_with_their_bound_variables() {
        let scan = PlanNode::new(
            OpKind::LabelScan {
                out: 0,
                label: "Person".into(),
            },
            vec![PlanNode::new(OpKind::Argument, vec![], 1.0)],
            100.0,
        );
        let expand = PlanNode::new(
            OpKind::Expand {
                from: 0,
                rel: 1,
                to: 2,
                types: vec!["LIKES".into()],
                direction: ExpandDirection::Outgoing,
                to_labels: vec![],
                distinct_from: vec![],
                optional: false,
            },
            vec![scan],
            1000.0,
        );
        let tree = describe_plan(&plan(expand, &["p", "  anon_0", "i"]));
        assert_eq!(tree.name, "Expand");
        assert_eq!(tree.details, "(p)-[  anon_0:LIKES]->(i)");
        assert_eq!(tree.identifiers, vec!["anon_0", "i", "p"]);
        assert_eq!(tree.id, Some(0));
        let scan = &tree.children[0];
        assert_eq!((scan.name, scan.id), ("LabelScan", Some(1)));
        assert_eq!(scan.identifiers, vec!["p"]);
        assert_eq!(scan.children[0].id, Some(2));
        assert!(scan.children[0].identifiers.is_empty());
    }

    #[test]
    fn nested_plans_are_children_numbered_before_the_inputs() {
        let inner = PlanNode::new(
            OpKind::LabelScan {
                out: 1,
                label: "Q".into(),
            },
            vec![PlanNode::new(OpKind::Argument, vec![], 1.0)],
            5.0,
        );
        let filter = PlanNode::new(
            OpKind::Filter {
                predicate: Expr::Subquery(Box::new(inner), SubqueryKind::Exists),
            },
            vec![PlanNode::new(
                OpKind::AllNodesScan { out: 0 },
                vec![PlanNode::new(OpKind::Argument, vec![], 1.0)],
                10.0,
            )],
            3.0,
        );
        let tree = describe_plan(&plan(filter, &["p", "q"]));
        assert_eq!(tree.id, Some(0));
        assert_eq!(tree.identifiers, vec!["p"]);
        // Inputs first in the list, but the nested plan compiles first.
        let [input, nested] = &tree.children[..] else {
            panic!("{tree:?}")
        };
        assert_eq!((input.name, input.id), ("AllNodesScan", Some(3)));
        assert_eq!((nested.name, nested.id), ("LabelScan", Some(1)));
        assert_eq!(nested.subquery, Some("EXISTS"));
        assert_eq!(nested.children[0].id, Some(2));
    }
}
