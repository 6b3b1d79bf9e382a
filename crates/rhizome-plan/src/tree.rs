//! The one walk over plans and expressions: child visitors of [`Expr`],
//! the expressions an operator holds ([`OpKind::exprs_mut`]), and the
//! [`PlanNode::transform_up`] / [`PlanNode::transform_down`] drivers that
//! optimizer rules use instead of writing their own recursion (after
//! datafusion's `TreeNode`).

use crate::{
    Expr, IndexLookup, MapProjectionItem, OpKind, PathNodePredicate, PlanNode, RemoveItem,
    SeekBound, SetItem, SubqueryKind,
};

/// The one list of an [`Expr`]'s direct children, shared by
/// [`Expr::for_each_child`] and [`Expr::for_each_child_mut`] (which differ
/// only in `iter` / `iter_mut`), so a new variant is added in one place.
macro_rules! for_each_child_of {
    ($expr:expr, $f:ident, $iter:ident) => {
        match $expr {
            Expr::Literal(_) | Expr::Parameter(_) | Expr::Slot(_) | Expr::Path(_) => {}
            Expr::Property(b, _)
            | Expr::Unary(_, b)
            | Expr::IsNull(b, _)
            | Expr::HasLabels(b, _) => $f(b),
            Expr::Index(a, b) | Expr::Binary(_, a, b) => {
                $f(a);
                $f(b);
            }
            Expr::Slice(a, b, c) => {
                $f(a);
                for x in [b, c].into_iter().flatten() {
                    $f(x);
                }
            }
            Expr::List(items) | Expr::Function(_, items) => items.$iter().for_each(&mut *$f),
            Expr::Map(items) => items.$iter().for_each(|(_, x)| $f(x)),
            Expr::Case {
                operand,
                whens,
                else_,
            } => {
                if let Some(x) = operand {
                    $f(x);
                }
                for (w, t) in whens {
                    $f(w);
                    $f(t);
                }
                if let Some(x) = else_ {
                    $f(x);
                }
            }
            Expr::ListComprehension {
                list,
                predicate,
                projection,
                ..
            } => {
                $f(list);
                for x in predicate.$iter().chain(projection.$iter()) {
                    $f(x);
                }
            }
            Expr::Quantified {
                list, predicate, ..
            } => {
                $f(list);
                $f(predicate);
            }
            Expr::Reduce {
                init, list, expr, ..
            } => {
                $f(init);
                $f(list);
                $f(expr);
            }
            Expr::MapProjection(b, items) => {
                $f(b);
                for item in items {
                    if let MapProjectionItem::Entry(_, x) = item {
                        $f(x);
                    }
                }
            }
            Expr::Subquery(_, kind) => {
                if let SubqueryKind::Collect(x) = kind {
                    $f(x);
                }
            }
        }
    };
}

impl Expr {
    /// Calls `f` on each direct sub-expression, in evaluation order. The
    /// projection of a `COLLECT`-style subquery is a child; the plan of a
    /// subquery is not (it is a [`PlanNode`], see [`PlanNode::transform_up`]).
    pub fn for_each_child<'a>(&'a self, f: &mut dyn FnMut(&'a Expr)) {
        for_each_child_of!(self, f, iter)
    }

    /// Like [`Expr::for_each_child`], mutably.
    pub fn for_each_child_mut(&mut self, f: &mut dyn FnMut(&mut Expr)) {
        for_each_child_of!(self, f, iter_mut)
    }

    /// Visits `self` and every sub-expression, children first; plans nested
    /// in subqueries are not entered.
    pub fn visit<'a>(&'a self, f: &mut dyn FnMut(&'a Expr)) {
        self.for_each_child(&mut |c| c.visit(f));
        f(self);
    }

    /// Like [`Expr::visit`], mutably: `f` sees each expression after its
    /// children were visited (so it may replace it with a rewritten one).
    pub fn visit_mut(&mut self, f: &mut dyn FnMut(&mut Expr)) {
        self.for_each_child_mut(&mut |c| c.visit_mut(f));
        f(self);
    }
}

/// Every expression of a list of assignments, mutably.
/// The expressions of a list of `SET` items, shared by the shared and the
/// mutable form (which differ only in the reference they take).
macro_rules! set_items_exprs_of {
    ($items:expr) => {{
        let mut v = Vec::new();
        for item in $items {
            match item {
                SetItem::Property { entity, value, .. } => {
                    v.push(entity);
                    v.push(value);
                }
                SetItem::Properties { entity, map, .. } => {
                    v.push(entity);
                    v.push(map);
                }
                SetItem::Labels { entity, .. } => v.push(entity),
            }
        }
        v
    }};
}

fn set_items_exprs(items: &[SetItem]) -> Vec<&Expr> {
    set_items_exprs_of!(items)
}

fn set_items_exprs_mut(items: &mut [SetItem]) -> Vec<&mut Expr> {
    set_items_exprs_of!(items)
}

/// The one list of the expressions an operator holds, shared by
/// [`OpKind::exprs`] and [`OpKind::exprs_mut`] (`iter`/`as_ref` or
/// `iter_mut`/`as_mut`), so a new operator is added in one place.
macro_rules! op_exprs_of {
    ($kind:expr, $iter:ident, $as:ident, $set_items:ident) => {
        match $kind {
            OpKind::IndexSeek { lookup, .. } => match lookup {
                IndexLookup::Equal(x) | IndexLookup::AnyOf(x) => vec![x],
                IndexLookup::Range(lo, hi) => {
                    let mut v = Vec::new();
                    for b in [lo, hi] {
                        if let SeekBound::Inclusive(x) | SeekBound::Exclusive(x) = b {
                            v.push(x);
                        }
                    }
                    v
                }
            },
            OpKind::NodeByIdSeek { ids, .. } => vec![ids],
            OpKind::VarExpand {
                rel_predicate,
                node_predicate,
                ..
            } => rel_predicate
                .$iter()
                .map(|(_, p)| p)
                .chain(
                    node_predicate
                        .$iter()
                        .map(|PathNodePredicate { predicate, .. }| predicate),
                )
                .collect(),
            OpKind::ExpandCount {
                rel_predicate,
                prefix,
                ..
            } => rel_predicate
                .$iter()
                .chain(prefix.$iter().filter_map(|h| h.rel_predicate.$as()))
                .map(|(_, p)| p)
                .collect(),
            OpKind::ShortestPath { path_predicate, .. } => path_predicate.$iter().collect(),
            OpKind::Filter { predicate } => vec![predicate],
            OpKind::Project { items } => items.$iter().map(|(_, x)| x).collect(),
            OpKind::Aggregate { keys, aggregates } => keys
                .$iter()
                .map(|(_, x)| x)
                .chain(aggregates.$iter().flat_map(|a| a.args.$iter()))
                .collect(),
            OpKind::Top { limit, .. } => vec![limit],
            OpKind::Skip { count } | OpKind::Limit { count } => vec![count],
            OpKind::Unwind { list, .. } => vec![list],
            OpKind::ProcedureCall { args, .. } => args.$iter().collect(),
            OpKind::Create { nodes, rels } => nodes
                .$iter()
                .filter_map(|n| n.properties.$as())
                .chain(rels.$iter().filter_map(|r| r.properties.$as()))
                .collect(),
            OpKind::Merge {
                nodes,
                rels,
                on_create,
                on_match,
            } => {
                let mut v: Vec<_> = nodes
                    .$iter()
                    .filter_map(|n| n.properties.$as())
                    .chain(rels.$iter().filter_map(|r| r.properties.$as()))
                    .collect();
                v.extend($set_items(on_create));
                v.extend($set_items(on_match));
                v
            }
            OpKind::SetItems { items } => $set_items(items),
            OpKind::RemoveItems { items } => items
                .$iter()
                .map(|i| match i {
                    RemoveItem::Property { entity, .. } | RemoveItem::Labels { entity, .. } => {
                        entity
                    }
                })
                .collect(),
            OpKind::Delete { exprs, .. } => exprs.$iter().collect(),
            OpKind::Foreach { list, .. } => vec![list],
            _ => Vec::new(),
        }
    };
}

impl OpKind {
    /// Every expression the operator holds (the top expressions; their
    /// sub-expressions through [`Expr::visit`]).
    pub fn exprs(&self) -> Vec<&Expr> {
        op_exprs_of!(self, iter, as_ref, set_items_exprs)
    }

    /// Every expression the operator holds, mutably (the top expressions;
    /// their sub-expressions through [`Expr::visit_mut`]).
    pub fn exprs_mut(&mut self) -> Vec<&mut Expr> {
        op_exprs_of!(self, iter_mut, as_mut, set_items_exprs_mut)
    }
}

impl PlanNode {
    /// Rewrites every operator bottom-up: inputs first, then plans nested
    /// in the operator's expressions, then the operator itself with `f`.
    pub fn transform_up(self, f: &mut dyn FnMut(PlanNode) -> PlanNode) -> PlanNode {
        let PlanNode {
            mut kind,
            inputs,
            estimated_rows,
            rule,
        } = self;
        let inputs = inputs.into_iter().map(|n| n.transform_up(f)).collect();
        transform_nested(&mut kind, &mut |p| p.transform_up(f));
        f(PlanNode {
            kind,
            inputs,
            estimated_rows,
            rule,
        })
    }

    /// Rewrites every operator top-down: the operator with `f` first, then
    /// (in what `f` returned) plans nested in its expressions and its inputs.
    pub fn transform_down(self, f: &mut dyn FnMut(PlanNode) -> PlanNode) -> PlanNode {
        let PlanNode {
            mut kind,
            inputs,
            estimated_rows,
            rule,
        } = f(self);
        transform_nested(&mut kind, &mut |p| p.transform_down(f));
        let inputs = inputs.into_iter().map(|n| n.transform_down(f)).collect();
        PlanNode {
            kind,
            inputs,
            estimated_rows,
            rule,
        }
    }
}

/// Replaces every plan nested in `kind`'s expressions by `f` of it.
fn transform_nested(kind: &mut OpKind, f: &mut dyn FnMut(PlanNode) -> PlanNode) {
    for e in kind.exprs_mut() {
        e.visit_mut(&mut |x| {
            if let Expr::Subquery(plan, _) = x {
                let placeholder = PlanNode::new(OpKind::Argument, Vec::new(), 1.0);
                let p = std::mem::replace(&mut **plan, placeholder);
                **plan = f(p);
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use crate::{BinaryOp, Expr, OpKind, PlanNode, SubqueryKind};
    use rhizome_common::Value;

    fn int(i: i64) -> Expr {
        Expr::Literal(Value::Int(i))
    }

    #[test]
    fn visit_sees_children_before_parents() {
        let e = Expr::Binary(
            BinaryOp::Add,
            Box::new(int(1)),
            Box::new(Expr::List(vec![int(2), Expr::Slot(3)])),
        );
        let mut seen = Vec::new();
        e.visit(&mut |x| {
            seen.push(match x {
                Expr::Literal(Value::Int(i)) => format!("{i}"),
                Expr::Slot(s) => format!("s{s}"),
                Expr::List(_) => "list".into(),
                Expr::Binary(..) => "add".into(),
                _ => "?".into(),
            })
        });
        assert_eq!(seen, ["1", "2", "s3", "list", "add"]);
    }

    #[test]
    fn transforms_reach_inputs_and_nested_plans_in_their_order() {
        let nested = PlanNode::new(OpKind::Argument, Vec::new(), 1.0);
        let filter = PlanNode::new(
            OpKind::Filter {
                predicate: Expr::Subquery(Box::new(nested), SubqueryKind::Exists),
            },
            vec![PlanNode::new(OpKind::Argument, Vec::new(), 1.0)],
            1.0,
        );
        let mut order = Vec::new();
        let up = filter.clone().transform_up(&mut |n| {
            order.push(n.name());
            n
        });
        assert_eq!(up, filter);
        assert_eq!(order, ["Argument", "Argument", "Filter"]);
        order.clear();
        filter.transform_down(&mut |n| {
            order.push(n.name());
            n
        });
        assert_eq!(order, ["Filter", "Argument", "Argument"]);
    }
}
