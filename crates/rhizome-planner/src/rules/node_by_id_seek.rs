//! `node_by_id_seek`: a filter `id(n) = x` or `id(n) IN list` over a scan
//! of `n` becomes a `NodeByIdSeek` (a label scan leaves a label check).

use super::{mark, OptimizerRule, RuleContext};
use crate::usage::{and_all, conjuncts, expr_reads};
use rhizome_common::Value;
use rhizome_plan::{BinaryOp, Expr, OpKind, PlanNode, Slot};

/// See the module documentation.
pub struct NodeByIdSeek;

fn is_id_of(e: &Expr, out: Slot) -> bool {
    matches!(e, Expr::Function(name, args) if name == "id" && args.as_slice() == [Expr::Slot(out)])
}

/// The ids a conjunct asks for, if it is `id(out) = x` / `x = id(out)` / `id(out) IN list`.
fn ids_of(e: &Expr, out: Slot) -> Option<Expr> {
    let Expr::Binary(op, a, b) = e else {
        return None;
    };
    let free = |v: &Expr| !expr_reads(v).contains(&out);
    match op {
        BinaryOp::Eq => {
            let v = if is_id_of(a, out) {
                b
            } else if is_id_of(b, out) {
                a
            } else {
                return None;
            };
            // A list value would be read as several ids; `=` never matches a list.
            let scalar = !matches!(**v, Expr::List(_) | Expr::Literal(Value::List(_)));
            (free(v) && scalar).then(|| (**v).clone())
        }
        BinaryOp::In if is_id_of(a, out) && free(b) => Some((**b).clone()),
        _ => None,
    }
}

impl OptimizerRule for NodeByIdSeek {
    fn name(&self) -> &'static str {
        "node_by_id_seek"
    }

    fn rewrite(&self, n: PlanNode, _ctx: &mut RuleContext<'_>) -> PlanNode {
        let (OpKind::Filter { predicate }, [scan]) = (&n.kind, n.inputs.as_slice()) else {
            return n;
        };
        let (out, label) = match &scan.kind {
            OpKind::AllNodesScan { out } => (*out, None),
            OpKind::LabelScan { out, label } => (*out, Some(label.clone())),
            _ => return n,
        };
        let mut conj = conjuncts(predicate.clone());
        let Some(i) = conj.iter().position(|c| ids_of(c, out).is_some()) else {
            return n;
        };
        let Some(ids) = ids_of(&conj.remove(i), out) else {
            return n;
        };
        if let Some(l) = label {
            conj.insert(0, Expr::HasLabels(Box::new(Expr::Slot(out)), vec![l]));
        }
        let seek = mark(
            PlanNode::new(OpKind::NodeByIdSeek { out, ids }, scan.inputs.clone(), 0.0),
            self.name(),
        );
        match and_all(conj) {
            Some(predicate) => PlanNode::new(OpKind::Filter { predicate }, vec![seek], 0.0),
            None => seek,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::test_util::plan_empty;

    #[test]
    fn id_equality_and_in() {
        assert_eq!(
            plan_empty(
                "MATCH (n) WHERE id(n) = 7 RETURN n",
                Some(Box::new(NodeByIdSeek))
            ),
            "NodeByIdSeek (n) WHERE id = 7 [node_by_id_seek]\n└─ Argument"
        );
        assert_eq!(
            plan_empty(
                "MATCH (n:A) WHERE id(n) IN $ids RETURN n",
                Some(Box::new(NodeByIdSeek))
            ),
            "Filter n:A\n└─ NodeByIdSeek (n) WHERE id = $ids [node_by_id_seek]\n   └─ Argument"
        );
        assert!(plan_empty(
            "MATCH (n) WHERE id(n) = [1] RETURN n",
            Some(Box::new(NodeByIdSeek))
        )
        .starts_with("Filter"));
    }
}
