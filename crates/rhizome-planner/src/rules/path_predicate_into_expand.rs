//! `path_predicate_into_expand`: a conjunct
//! `all(x IN nodes(path)[k..] WHERE p(x))` (or over `nodes(path)`, `k` = 0)
//! on the path of a variable-length expansion becomes the expansion's
//! per-hop [`PathNodePredicate`], and `all(r IN relationships(path) WHERE
//! p(r))` its `rel_predicate`, so a branch whose node fails is cut the
//! moment it is reached instead of every path under it being enumerated
//! and filtered afterwards.
//!
//! Sound because `path` is exactly `(from)-[rels]-(to)` of the expansion
//! (its node list is the start node, then the node after each hop), `k` is
//! a literal `>= 0` (so `nodes(path)[k..]` are the nodes after hop `k`,
//! `[1..]` leaving the start node out, whatever the path's length), the
//! predicate reads nothing the expansion or the projection writes, and a
//! filter keeps a row only when `all` is true: a path with a node at
//! position `>= k` whose predicate is false or null is dropped either way,
//! and so is every path that extends it. The expansion must not be
//! optional (a filter drops its null row; the expansion would keep it).
//! A predicate that depends only on `x` and holds a subquery is memoised
//! per node by the runtime's subquery memo.

use super::rel_predicate_into_expand::substitute;
use super::{mark, OptimizerRule, RuleContext};
use crate::expr::has_subquery;
use crate::usage::{and_all, conjuncts, expr_reads};
use rhizome_common::Value;
use rhizome_plan::{
    BinaryOp, Expr, OpKind, PathNodePredicate, PathStep, PlanNode, Quantifier, Slot,
};

/// See the module documentation.
pub struct PathPredicateIntoExpand;

/// Which list of the path a quantifier ranges over, and from which position.
enum PathList {
    /// `nodes(path)[k..]`.
    Nodes(u64),
    /// `relationships(path)` (whole).
    Rels,
}

/// `list` as `nodes(p)[k..]` / `nodes(p)` / `relationships(p)` for one of
/// the `paths` slots, if it is one.
fn path_list(list: &Expr, paths: &[Slot]) -> Option<PathList> {
    let (base, from) = match list {
        Expr::Slice(base, Some(k), None) => match **k {
            Expr::Literal(Value::Int(k)) if k >= 0 => (&**base, k as u64),
            _ => return None,
        },
        other => (other, 0),
    };
    let Expr::Function(name, args) = base else {
        return None;
    };
    let [Expr::Slot(p)] = args.as_slice() else {
        return None;
    };
    if !paths.contains(p) {
        return None;
    }
    match name.as_str() {
        "nodes" => Some(PathList::Nodes(from)),
        "relationships" if from == 0 => Some(PathList::Rels),
        _ => None,
    }
}

fn and(a: Expr, b: Expr) -> Expr {
    Expr::Binary(BinaryOp::And, Box::new(a), Box::new(b))
}

/// `chain` (filters down to an expansion) with the expansion replaced.
fn replace_expand(chain: &PlanNode, expand: PlanNode) -> PlanNode {
    match (&chain.kind, chain.inputs.as_slice()) {
        (OpKind::Filter { .. }, [input]) => {
            let mut f = chain.clone();
            f.inputs = vec![replace_expand(input, expand)];
            f
        }
        _ => expand,
    }
}

impl OptimizerRule for PathPredicateIntoExpand {
    fn name(&self) -> &'static str {
        "path_predicate_into_expand"
    }

    fn rewrite(&self, n: PlanNode, _ctx: &mut RuleContext<'_>) -> PlanNode {
        let (OpKind::Filter { predicate }, [project]) = (&n.kind, n.inputs.as_slice()) else {
            return n;
        };
        let (OpKind::Project { items }, [below]) = (&project.kind, project.inputs.as_slice())
        else {
            return n;
        };
        // Filters between the projection and the expansion commute with
        // the moved predicate.
        let mut expand = below;
        while let (OpKind::Filter { .. }, [input]) = (&expand.kind, expand.inputs.as_slice()) {
            expand = input;
        }
        let OpKind::VarExpand {
            from,
            rels,
            to,
            optional: false,
            node_predicate,
            ..
        } = &expand.kind
        else {
            return n;
        };
        let whole = Expr::Path(vec![PathStep::Node(*from), PathStep::Rels(*rels, *to)]);
        let paths: Vec<Slot> = items
            .iter()
            .filter(|(_, e)| *e == whole)
            .map(|(s, _)| *s)
            .collect();
        if paths.is_empty() {
            return n;
        }
        // Slots the predicate may not read: what the expansion and the
        // projection write.
        let mut written: Vec<Slot> = items.iter().map(|(s, _)| *s).collect();
        written.extend([*rels, *to]);
        let mut node_moved: Option<PathNodePredicate> = node_predicate.clone();
        let mut rel_moved: Vec<(Slot, Expr)> = Vec::new();
        let mut rest = Vec::new();
        for c in conjuncts(predicate.clone()) {
            let Expr::Quantified {
                quantifier: Quantifier::All,
                variable,
                list,
                predicate: p,
            } = &c
            else {
                rest.push(c);
                continue;
            };
            let mut reads = expr_reads(p);
            reads.remove(variable);
            if reads.iter().any(|s| written.contains(s)) {
                rest.push(c);
                continue;
            }
            match path_list(list, &paths) {
                Some(PathList::Nodes(k)) => match &mut node_moved {
                    None => {
                        node_moved = Some(PathNodePredicate {
                            var: *variable,
                            predicate: (**p).clone(),
                            from_hop: k,
                        })
                    }
                    // Two node predicates combine only from the same hop.
                    Some(np) if np.from_hop == k => {
                        let mut p = (**p).clone();
                        substitute(&mut p, *variable, np.var);
                        np.predicate = and(np.predicate.clone(), p);
                    }
                    Some(_) => rest.push(c),
                },
                Some(PathList::Rels) if !has_subquery(p) => {
                    rel_moved.push((*variable, (**p).clone()))
                }
                _ => rest.push(c),
            }
        }
        if node_moved == *node_predicate && rel_moved.is_empty() {
            return n;
        }
        let mut expand = expand.clone();
        if let OpKind::VarExpand {
            rel_predicate,
            node_predicate,
            ..
        } = &mut expand.kind
        {
            *node_predicate = node_moved;
            for (var, mut p) in rel_moved {
                *rel_predicate = Some(match rel_predicate.take() {
                    None => (var, p),
                    Some((v0, p0)) => {
                        substitute(&mut p, var, v0);
                        (v0, and(p0, p))
                    }
                });
            }
        }
        let expand = mark(expand, self.name());
        let mut project = project.clone();
        project.inputs = vec![replace_expand(below, expand)];
        match and_all(rest) {
            Some(predicate) => PlanNode::new(OpKind::Filter { predicate }, vec![project], 0.0),
            None => project,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::test_util::plan_empty;

    fn plan(q: &str) -> String {
        plan_empty(q, Some(Box::new(PathPredicateIntoExpand)))
    }

    #[test]
    fn all_over_the_nodes_after_the_start_becomes_a_per_hop_predicate() {
        let text = plan(
            "MATCH path = (a)-[:T*1..3]->(b) WHERE all(x IN nodes(path)[1..] WHERE x.ok) \
             AND b.x = 1 RETURN b",
        );
        assert!(
            text.contains("per hop: all(x IN nodes[1..] WHERE x.ok)"),
            "{text}"
        );
        assert!(text.contains("[path_predicate_into_expand]"), "{text}");
        assert!(!text.contains("All(...)"), "{text}");
    }

    #[test]
    fn all_over_every_node_starts_at_hop_zero() {
        let text =
            plan("MATCH path = (a)-[:T*1..3]->(b) WHERE all(x IN nodes(path) WHERE x.ok) RETURN b");
        assert!(
            text.contains("per hop: all(x IN nodes[0..] WHERE x.ok)"),
            "{text}"
        );
    }

    #[test]
    fn an_exists_subquery_over_the_node_is_pushed() {
        let text = plan(
            "MATCH path = (a)-[:T*2]-(b) \
             WHERE all(x IN nodes(path)[1..] WHERE EXISTS { (x)-[:U]->(:L) }) RETURN b",
        );
        assert!(
            text.contains("per hop: all(x IN nodes[1..] WHERE EXISTS {...})"),
            "{text}"
        );
    }

    #[test]
    fn what_cannot_be_tested_per_hop_stays_in_the_filter() {
        for q in [
            // A parameter (not a literal) start, a negative start, an end bound.
            "MATCH path = (a)-[:T*1..3]->(b) WHERE all(x IN nodes(path)[$k..] WHERE x.ok) RETURN b",
            "MATCH path = (a)-[:T*1..3]->(b) WHERE all(x IN nodes(path)[-1..] WHERE x.ok) RETURN b",
            "MATCH path = (a)-[:T*1..3]->(b) WHERE all(x IN nodes(path)[..2] WHERE x.ok) RETURN b",
            // The predicate reads the end node or the path.
            "MATCH path = (a)-[:T*1..3]->(b) WHERE all(x IN nodes(path) WHERE x.v < b.v) RETURN b",
            "MATCH path = (a)-[:T*1..3]->(b) WHERE all(x IN nodes(path) WHERE length(path) > 1) RETURN b",
            // Not `all`.
            "MATCH path = (a)-[:T*1..3]->(b) WHERE any(x IN nodes(path) WHERE x.ok) RETURN b",
            // The path has more than the expansion.
            "MATCH path = (c)-[:U]->(a)-[:T*1..3]->(b) WHERE all(x IN nodes(path) WHERE x.ok) RETURN b",
        ] {
            let text = plan(q);
            assert!(!text.contains("per hop"), "{q}\n{text}");
        }
    }

    #[test]
    fn all_over_the_relationships_of_the_path_becomes_the_rel_predicate() {
        let text = plan(
            "MATCH path = (a)-[:T*1..3]->(b) WHERE all(r IN relationships(path) WHERE r.w > 1) RETURN b",
        );
        assert!(text.contains("[path_predicate_into_expand]"), "{text}");
        assert!(!text.contains("Filter"), "{text}");
    }
}
