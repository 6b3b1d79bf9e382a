//! `index_seek`: a filter over a label scan whose conjuncts compare an
//! indexed property of the scanned node with a value computable before the
//! scan becomes an `IndexSeek`: equality (`=`) first, then `IN` lists, then
//! ranges (`<`, `<=`, `>`, `>=`, both bounds combined when given). The
//! conjuncts the seek answers are dropped; the rest stay in a filter.

use super::{mark, OptimizerRule, RuleContext};
use crate::usage::{and_all, conjuncts, expr_reads};
use rhizome_common::Value;
use rhizome_plan::{BinaryOp, Expr, IndexLookup, OpKind, PlanNode, SeekBound, Slot};

/// See the module documentation.
pub struct IndexSeek;

/// `out.key <op> value` normalised so the property is on the left.
fn compare_on(e: &Expr, out: Slot) -> Option<(BinaryOp, String, Expr)> {
    let Expr::Binary(op, a, b) = e else {
        return None;
    };
    let flip = |op: BinaryOp| match op {
        BinaryOp::Lt => Some(BinaryOp::Gt),
        BinaryOp::Gt => Some(BinaryOp::Lt),
        BinaryOp::Le => Some(BinaryOp::Ge),
        BinaryOp::Ge => Some(BinaryOp::Le),
        BinaryOp::Eq => Some(BinaryOp::Eq),
        _ => None,
    };
    let prop = |x: &Expr| match x {
        Expr::Property(base, key) if **base == Expr::Slot(out) => Some(key.clone()),
        _ => None,
    };
    let usable = |v: &Expr| !expr_reads(v).contains(&out);
    match op {
        BinaryOp::Eq | BinaryOp::Lt | BinaryOp::Gt | BinaryOp::Le | BinaryOp::Ge => {
            if let Some(k) = prop(a) {
                if usable(b) {
                    return Some((*op, k, (**b).clone()));
                }
            }
            if let Some(k) = prop(b) {
                if usable(a) {
                    return Some((flip(*op)?, k, (**a).clone()));
                }
            }
            None
        }
        BinaryOp::In => {
            let k = prop(a)?;
            usable(b).then(|| (BinaryOp::In, k, (**b).clone()))
        }
        _ => None,
    }
}

fn is_list_value(e: &Expr) -> bool {
    matches!(
        e,
        Expr::List(_) | Expr::Literal(Value::List(_)) | Expr::Literal(Value::Null)
    )
}

impl OptimizerRule for IndexSeek {
    fn name(&self) -> &'static str {
        "index_seek"
    }

    fn rewrite(&self, n: PlanNode, ctx: &mut RuleContext<'_>) -> PlanNode {
        let pctx = ctx.ctx;
        let (OpKind::Filter { predicate }, [scan]) = (&n.kind, n.inputs.as_slice()) else {
            return n;
        };
        let OpKind::LabelScan { out, label } = &scan.kind else {
            return n;
        };
        let out = *out;
        let conj = conjuncts(predicate.clone());
        let parsed: Vec<Option<(BinaryOp, String, Expr)>> = conj
            .iter()
            .map(|c| compare_on(c, out).filter(|(_, k, _)| pctx.has_index(label, k)))
            .collect();
        // Equality with the fewest expected rows, then IN, then a range.
        let mut best: Option<(usize, Vec<usize>, String, IndexLookup)> = None;
        let mut best_rows = f64::INFINITY;
        for (i, p) in parsed.iter().enumerate() {
            if let Some((BinaryOp::Eq, k, v)) = p {
                if is_list_value(v) {
                    continue;
                }
                let rows = crate::cost::seek_rows(pctx, label, k);
                if best.is_none() || rows < best_rows {
                    best_rows = rows;
                    best = Some((0, vec![i], k.clone(), IndexLookup::Equal(v.clone())));
                }
            }
        }
        if best.is_none() {
            if let Some((i, Some((_, k, v)))) = parsed
                .iter()
                .enumerate()
                .find(|(_, p)| matches!(p, Some((BinaryOp::In, ..))))
            {
                best = Some((1, vec![i], k.clone(), IndexLookup::AnyOf(v.clone())));
            }
        }
        if best.is_none() {
            let mut key: Option<String> = None;
            let (mut lo, mut hi) = (SeekBound::Unbounded, SeekBound::Unbounded);
            let mut used = Vec::new();
            for (i, p) in parsed.iter().enumerate() {
                let Some((op, k, v)) = p else { continue };
                if !matches!(
                    op,
                    BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge
                ) {
                    continue;
                }
                if key.as_ref().is_some_and(|x| x != k) {
                    continue;
                }
                let slot = match op {
                    BinaryOp::Gt | BinaryOp::Ge => &mut lo,
                    _ => &mut hi,
                };
                if !matches!(slot, SeekBound::Unbounded) {
                    continue;
                }
                *slot = match op {
                    BinaryOp::Ge | BinaryOp::Le => SeekBound::Inclusive(v.clone()),
                    _ => SeekBound::Exclusive(v.clone()),
                };
                key = Some(k.clone());
                used.push(i);
            }
            if let Some(k) = key {
                best = Some((2, used, k, IndexLookup::Range(lo, hi)));
            }
        }
        let Some((_, used, key, lookup)) = best else {
            return n;
        };
        let rest: Vec<Expr> = conj
            .into_iter()
            .enumerate()
            .filter(|(i, _)| !used.contains(i))
            .map(|(_, c)| c)
            .collect();
        let seek = mark(
            PlanNode::new(
                OpKind::IndexSeek {
                    out,
                    label: label.clone(),
                    key,
                    lookup,
                },
                scan.inputs.clone(),
                0.0,
            ),
            self.name(),
        );
        match and_all(rest) {
            Some(predicate) => PlanNode::new(OpKind::Filter { predicate }, vec![seek], 0.0),
            None => seek,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::test_util::{plan_with, Indexed};

    /// `A.k` and `A.r` are indexed, with ten values each.
    const INDEXED: Indexed = Indexed {
        indexes: &[("A", "k"), ("A", "r")],
        distinct: &[],
        default_distinct: 10,
    };

    fn seek(q: &str) -> String {
        plan_with(q, Some(Box::new(IndexSeek)), &INDEXED)
    }

    #[test]
    fn equality_in_and_range() {
        assert_eq!(
            seek("MATCH (n:A) WHERE n.k = $v AND n.x = 1 RETURN n"),
            "Filter (n.x = 1)\n└─ IndexSeek (n:A {k = $v}) [index_seek]\n   └─ Argument"
        );
        assert_eq!(
            seek("MATCH (n:A) WHERE n.k IN [1, 2] RETURN n"),
            "IndexSeek (n:A {k IN [1, 2]}) [index_seek]\n└─ Argument"
        );
        assert_eq!(
            seek("MATCH (n:A) WHERE 3 < n.r <= 7 RETURN n"),
            "IndexSeek (n:A {r range > 3 <= 7}) [index_seek]\n└─ Argument"
        );
    }

    #[test]
    fn no_seek_without_index_or_with_self_reference() {
        assert!(seek("MATCH (n:A) WHERE n.z = 1 RETURN n").starts_with("Filter"));
        assert!(seek("MATCH (n:A) WHERE n.k = n.r RETURN n").starts_with("Filter"));
        assert!(seek("MATCH (n:B) WHERE n.k = 1 RETURN n").starts_with("Filter"));
    }
}
