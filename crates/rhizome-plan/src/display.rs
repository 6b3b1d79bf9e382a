//! Printing plans for EXPLAIN and PROFILE.

use crate::*;
use std::fmt::{self, Write};

/// Formats an expression with slot names instead of numbers.
pub struct ExprDisplay<'a> {
    /// The expression.
    pub expr: &'a Expr,
    /// Names of the slots.
    pub names: &'a [String],
}

fn slot_name(names: &[String], slot: Slot) -> String {
    names
        .get(slot)
        .cloned()
        .unwrap_or_else(|| format!("#{slot}"))
}

impl<'a> fmt::Display for ExprDisplay<'a> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names = self.names;
        let sub = |e: &'a Expr| ExprDisplay { expr: e, names };
        match self.expr {
            Expr::Literal(v) => write!(f, "{v}"),
            Expr::Parameter(p) => write!(f, "${p}"),
            Expr::Slot(s) => f.write_str(&slot_name(names, *s)),
            Expr::Property(b, k) => write!(f, "{}.{k}", sub(b)),
            Expr::Index(b, i) => write!(f, "{}[{}]", sub(b), sub(i)),
            Expr::Slice(b, x, y) => {
                write!(f, "{}[", sub(b))?;
                if let Some(x) = x {
                    write!(f, "{}", sub(x))?;
                }
                f.write_str("..")?;
                if let Some(y) = y {
                    write!(f, "{}", sub(y))?;
                }
                f.write_str("]")
            }
            Expr::List(items) => {
                f.write_str("[")?;
                for (i, e) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{}", sub(e))?;
                }
                f.write_str("]")
            }
            Expr::Map(items) => {
                f.write_str("{")?;
                for (i, (k, e)) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{k}: {}", sub(e))?;
                }
                f.write_str("}")
            }
            Expr::Unary(op, e) => match op {
                UnaryOp::Not => write!(f, "NOT {}", sub(e)),
                UnaryOp::Neg => write!(f, "-{}", sub(e)),
                UnaryOp::Plus => write!(f, "+{}", sub(e)),
            },
            Expr::Binary(op, a, b) => {
                let op = match op {
                    BinaryOp::And => "AND",
                    BinaryOp::Or => "OR",
                    BinaryOp::Xor => "XOR",
                    BinaryOp::Add => "+",
                    BinaryOp::Sub => "-",
                    BinaryOp::Mul => "*",
                    BinaryOp::Div => "/",
                    BinaryOp::Mod => "%",
                    BinaryOp::Pow => "^",
                    BinaryOp::Eq => "=",
                    BinaryOp::Ne => "<>",
                    BinaryOp::Lt => "<",
                    BinaryOp::Gt => ">",
                    BinaryOp::Le => "<=",
                    BinaryOp::Ge => ">=",
                    BinaryOp::StartsWith => "STARTS WITH",
                    BinaryOp::EndsWith => "ENDS WITH",
                    BinaryOp::Contains => "CONTAINS",
                    BinaryOp::RegexMatch => "=~",
                    BinaryOp::In => "IN",
                };
                write!(f, "({} {op} {})", sub(a), sub(b))
            }
            Expr::IsNull(e, negated) => {
                write!(
                    f,
                    "{} IS {}NULL",
                    sub(e),
                    if *negated { "NOT " } else { "" }
                )
            }
            Expr::HasLabels(e, labels) => {
                write!(f, "{}", sub(e))?;
                labels.iter().try_for_each(|l| write!(f, ":{l}"))
            }
            Expr::Case { .. } => f.write_str("CASE ... END"),
            Expr::Function(name, args) => {
                write!(f, "{name}(")?;
                for (i, e) in args.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{}", sub(e))?;
                }
                f.write_str(")")
            }
            Expr::ListComprehension { .. } => f.write_str("[list comprehension]"),
            Expr::Quantified { quantifier, .. } => write!(f, "{quantifier:?}(...)"),
            Expr::Reduce { .. } => f.write_str("reduce(...)"),
            Expr::MapProjection(b, _) => write!(f, "{}{{...}}", sub(b)),
            Expr::Subquery(_, kind) => match kind {
                SubqueryKind::Exists => f.write_str("EXISTS {...}"),
                SubqueryKind::Count => f.write_str("COUNT {...}"),
                SubqueryKind::Collect(_) => f.write_str("[pattern comprehension]"),
            },
            Expr::Path(_) => f.write_str("path(...)"),
        }
    }
}

fn types_text(types: &[String]) -> String {
    if types.is_empty() {
        String::new()
    } else {
        format!(":{}", types.join("|"))
    }
}

fn arrow(direction: ExpandDirection, inner: &str) -> String {
    match direction {
        ExpandDirection::Outgoing => format!("-[{inner}]->"),
        ExpandDirection::Incoming => format!("<-[{inner}]-"),
        ExpandDirection::Both => format!("-[{inner}]-"),
    }
}

fn labels_text(labels: &[String]) -> String {
    labels.iter().map(|l| format!(":{l}")).collect()
}

impl PlanNode {
    /// The operator's name, e.g. `Expand`, `LabelScan`.
    pub fn name(&self) -> &'static str {
        match &self.kind {
            OpKind::Argument => "Argument",
            OpKind::AllNodesScan { .. } => "AllNodesScan",
            OpKind::LabelScan { .. } => "LabelScan",
            OpKind::IndexSeek { .. } => "IndexSeek",
            OpKind::NodeByIdSeek { .. } => "NodeByIdSeek",
            OpKind::Expand { optional: true, .. } => "OptionalExpand",
            OpKind::Expand { .. } => "Expand",
            OpKind::ExpandInto { .. } => "ExpandInto",
            OpKind::VarExpand { .. } => "VarLengthExpand",
            OpKind::ShortestPath { .. } => "ShortestPath",
            OpKind::Filter { .. } => "Filter",
            OpKind::Project { .. } => "Projection",
            OpKind::Aggregate { .. } => "Aggregate",
            OpKind::Distinct { .. } => "Distinct",
            OpKind::Sort { .. } => "Sort",
            OpKind::Top { .. } => "Top",
            OpKind::Skip { .. } => "Skip",
            OpKind::Limit { .. } => "Limit",
            OpKind::Unwind { .. } => "Unwind",
            OpKind::Optional { .. } => "Optional",
            OpKind::Apply { .. } => "Apply",
            OpKind::SemiApply { anti: false, .. } => "SemiApply",
            OpKind::SemiApply { anti: true, .. } => "AntiSemiApply",
            OpKind::CartesianProduct => "CartesianProduct",
            OpKind::HashJoin { .. } => "HashJoin",
            OpKind::Union { .. } => "Union",
            OpKind::ProcedureCall { .. } => "ProcedureCall",
            OpKind::ExpandCount { .. } => "ExpandCount",
            OpKind::DistinctEndpoints { .. } => "DistinctEndpoints",
            OpKind::Eager => "Eager",
            OpKind::Create { .. } => "Create",
            OpKind::SetItems { .. } => "Set",
            OpKind::RemoveItems { .. } => "Remove",
            OpKind::Delete { detach: false, .. } => "Delete",
            OpKind::Delete { detach: true, .. } => "DetachDelete",
            OpKind::Merge { .. } => "Merge",
            OpKind::Foreach { .. } => "Foreach",
        }
    }

    /// One line: the operator's name and its arguments, with slot names.
    pub fn describe(&self, names: &[String]) -> String {
        let n = |s: &Slot| slot_name(names, *s);
        let e = |x: &Expr| ExprDisplay { expr: x, names }.to_string();
        let keys = |keys: &[SortKey]| {
            keys.iter()
                .map(|k| format!("{}{}", n(&k.slot), if k.descending { " DESC" } else { "" }))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let detail = match &self.kind {
            OpKind::Argument => String::new(),
            OpKind::AllNodesScan { out } => format!("({})", n(out)),
            OpKind::LabelScan { out, label } => format!("({}:{label})", n(out)),
            OpKind::IndexSeek {
                out,
                label,
                key,
                lookup,
            } => {
                let how = match lookup {
                    IndexLookup::Equal(x) => format!("= {}", e(x)),
                    IndexLookup::AnyOf(x) => format!("IN {}", e(x)),
                    IndexLookup::Range(lo, hi) => {
                        let b = |b: &SeekBound, inc: &str, exc: &str| match b {
                            SeekBound::Unbounded => String::new(),
                            SeekBound::Inclusive(x) => format!(" {inc} {}", e(x)),
                            SeekBound::Exclusive(x) => format!(" {exc} {}", e(x)),
                        };
                        format!("range{}{}", b(lo, ">=", ">"), b(hi, "<=", "<"))
                    }
                };
                format!("({}:{label} {{{key} {how}}})", n(out))
            }
            OpKind::NodeByIdSeek { out, ids } => format!("({}) WHERE id = {}", n(out), e(ids)),
            OpKind::Expand {
                from,
                rel,
                to,
                types,
                direction,
                to_labels,
                ..
            } => format!(
                "({}){}({}{})",
                n(from),
                arrow(*direction, &format!("{}{}", n(rel), types_text(types))),
                n(to),
                labels_text(to_labels)
            ),
            OpKind::ExpandInto {
                from,
                rel,
                to,
                types,
                direction,
                ..
            } => format!(
                "({}){}({})",
                n(from),
                arrow(*direction, &format!("{}{}", n(rel), types_text(types))),
                n(to)
            ),
            OpKind::VarExpand {
                from,
                rels,
                to,
                types,
                direction,
                min,
                max,
                node_predicate,
                scope,
                ..
            } => {
                let mut text = format!(
                    "({}){}({})",
                    n(from),
                    arrow(
                        *direction,
                        &format!(
                            "{}{}*{min}..{}",
                            n(rels),
                            types_text(types),
                            max.map_or(String::new(), |m| m.to_string())
                        )
                    ),
                    n(to)
                );
                if scope.policy != ScopePolicy::Off {
                    let _ = write!(
                        text,
                        " scope: {} max_si={}{}",
                        scope.policy.name(),
                        scope.max_si,
                        match scope.prune_ends {
                            PruneEnds::Off => "",
                            PruneEnds::Shared => " prune ends",
                            PruneEnds::PerRow => " prune ends per row",
                        }
                    );
                }
                if let Some(np) = node_predicate {
                    let _ = write!(
                        text,
                        " per hop: all({} IN nodes[{}..] WHERE {})",
                        n(&np.var),
                        np.from_hop,
                        e(&np.predicate)
                    );
                }
                text
            }
            OpKind::ShortestPath {
                from,
                to,
                path,
                kind,
                ..
            } => {
                format!("{} = {kind:?}(({})..({}))", n(path), n(from), n(to))
            }
            OpKind::Filter { predicate } => e(predicate),
            OpKind::Project { items } => items
                .iter()
                .map(|(s, x)| format!("{} AS {}", e(x), n(s)))
                .collect::<Vec<_>>()
                .join(", "),
            OpKind::Aggregate { keys, aggregates } => {
                let k: Vec<String> = keys
                    .iter()
                    .map(|(s, x)| format!("{} AS {}", e(x), n(s)))
                    .collect();
                let a: Vec<String> = aggregates
                    .iter()
                    .map(|a| {
                        let args: Vec<String> = a.args.iter().map(e).collect();
                        format!(
                            "{:?}({}{}) AS {}",
                            a.function,
                            if a.distinct { "DISTINCT " } else { "" },
                            args.join(", "),
                            n(&a.slot)
                        )
                    })
                    .collect();
                format!("keys [{}], aggregates [{}]", k.join(", "), a.join(", "))
            }
            OpKind::Distinct { slots } => slots.iter().map(n).collect::<Vec<_>>().join(", "),
            OpKind::Sort { keys: k } => keys(k),
            OpKind::Top { keys: k, limit } => format!("{} LIMIT {}", keys(k), e(limit)),
            OpKind::Skip { count } | OpKind::Limit { count } => e(count),
            OpKind::Unwind { list, out } => format!("{} AS {}", e(list), n(out)),
            OpKind::Optional { scope, .. }
            | OpKind::Apply { scope }
            | OpKind::SemiApply { scope, .. } => {
                if scope.policy != ScopePolicy::Off {
                    format!("scope: {} max_si={}", scope.policy.name(), scope.max_si)
                } else {
                    String::new()
                }
            }
            OpKind::CartesianProduct => String::new(),
            OpKind::HashJoin { build_keys, .. } => {
                build_keys.iter().map(n).collect::<Vec<_>>().join(", ")
            }
            OpKind::Union { distinct, .. } => {
                if *distinct { "distinct" } else { "all" }.to_string()
            }
            OpKind::ProcedureCall { name, .. } => name.clone(),
            OpKind::ExpandCount {
                from,
                prefix,
                types,
                direction,
                to_labels,
                count_slot,
                ..
            } => {
                let walk: String = prefix
                    .iter()
                    .map(|h| {
                        format!(
                            "{}({})",
                            arrow(h.direction, &types_text(&h.types)),
                            labels_text(&h.to_labels)
                        )
                    })
                    .collect();
                format!(
                    "count of ({}){walk}{}({}) AS {}",
                    n(from),
                    arrow(*direction, &types_text(types)),
                    labels_text(to_labels),
                    n(count_slot)
                )
            }
            OpKind::DistinctEndpoints { from, hops, to } => {
                let walk: String = hops
                    .iter()
                    .enumerate()
                    .map(|(i, h)| {
                        let end = if i + 1 == hops.len() {
                            n(to)
                        } else {
                            String::new()
                        };
                        format!(
                            "{}({end}{})",
                            arrow(h.direction, &types_text(&h.types)),
                            labels_text(&h.to_labels)
                        )
                    })
                    .collect();
                format!("distinct {} of ({}){walk}", n(to), n(from))
            }
            OpKind::Eager => String::new(),
            OpKind::Create { nodes, rels } => create_text(nodes, rels, names),
            OpKind::SetItems { items } => set_text(items, names),
            OpKind::RemoveItems { items } => items
                .iter()
                .map(|i| match i {
                    RemoveItem::Property { entity, key } => format!("{}.{key}", e(entity)),
                    RemoveItem::Labels { entity, labels } => {
                        format!("{}{}", e(entity), labels_text(labels))
                    }
                })
                .collect::<Vec<_>>()
                .join(", "),
            OpKind::Delete { exprs, .. } => exprs.iter().map(e).collect::<Vec<_>>().join(", "),
            OpKind::Merge {
                nodes,
                rels,
                on_create,
                on_match,
            } => {
                let mut t = format!("create {}", create_text(nodes, rels, names));
                if !on_create.is_empty() {
                    t += &format!(" on create {}", set_text(on_create, names));
                }
                if !on_match.is_empty() {
                    t += &format!(" on match {}", set_text(on_match, names));
                }
                t
            }
            OpKind::Foreach { variable, list } => format!("{} IN {}", n(variable), e(list)),
        };
        if detail.is_empty() {
            self.name().to_string()
        } else {
            format!("{} {detail}", self.name())
        }
    }
}

/// `(a:L {..}), (a)-[r:T]->(b)` for created entities.
fn create_text(nodes: &[CreateNode], rels: &[CreateRel], names: &[String]) -> String {
    let props = |p: &Option<Expr>| {
        p.as_ref().map_or(String::new(), |x| {
            format!(" {}", ExprDisplay { expr: x, names })
        })
    };
    let mut parts: Vec<String> = nodes
        .iter()
        .map(|c| {
            format!(
                "({}{}{})",
                slot_name(names, c.slot),
                labels_text(&c.labels),
                props(&c.properties)
            )
        })
        .collect();
    parts.extend(rels.iter().map(|r| {
        format!(
            "({})-[{}:{}{}]->({})",
            slot_name(names, r.start),
            slot_name(names, r.slot),
            r.rel_type,
            props(&r.properties),
            slot_name(names, r.end)
        )
    }));
    parts.join(", ")
}

/// `n.k = v, n += {..}, n:L` for assignments.
fn set_text(items: &[SetItem], names: &[String]) -> String {
    let e = |x: &Expr| ExprDisplay { expr: x, names }.to_string();
    items
        .iter()
        .map(|i| match i {
            SetItem::Property { entity, key, value } => {
                format!("{}.{key} = {}", e(entity), e(value))
            }
            SetItem::Properties {
                entity,
                map,
                replace,
            } => format!(
                "{} {} {}",
                e(entity),
                if *replace { "=" } else { "+=" },
                e(map)
            ),
            SetItem::Labels { entity, labels } => format!("{}{}", e(entity), labels_text(labels)),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// One operator of a plan as a listing shows it, whoever produced it: the
/// planner's tree ([`render_plan`] goes through it) or a plan a server
/// sent (the shell's Bolt client builds one from the summary's `plan` /
/// `profile`), so both print alike.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PlanOutline {
    /// The operator and what it works on (`Expand (a)-[r]->(b)`).
    pub description: String,
    /// The planner's estimate of its rows.
    pub estimated_rows: f64,
    /// The optimizer rule that produced it, if one did.
    pub rule: Option<String>,
    /// Text after the estimate and rule (PROFILE's counters); empty for none.
    pub annotation: String,
    /// Its inputs.
    pub inputs: Vec<PlanOutline>,
}

/// PROFILE's counters of one operator, as the plan listing shows them.
pub fn profile_annotation(
    rows: u64,
    time: std::time::Duration,
    morsels: u64,
    workers: u32,
) -> String {
    format!(
        "rows={rows} time={:.3}ms morsels={morsels} workers={workers}",
        time.as_secs_f64() * 1e3
    )
}

/// Renders the plan tree, one operator per line, with estimated rows and the
/// optimizer rule that produced each changed operator; a plan nested in an
/// expression (`COUNT { }`, `EXISTS { }`, `COLLECT { }`) is listed under its
/// operator after the inputs, marked `[COUNT subquery]`. `annotate` can add
/// text per operator (PROFILE uses it for counters); it receives operators
/// numbered from 0 as the runtime numbers them: an operator, the plans
/// nested in its expressions, then its inputs.
pub fn render_plan(plan: &Plan, annotate: &mut dyn FnMut(usize, &PlanNode) -> String) -> String {
    let mut counter = 0usize;
    let outline = outline_of(&plan.root, &plan.slot_names, &mut counter, annotate);
    render_outline(&outline)
}

/// The listing of `node`'s tree, operators numbered depth first.
fn outline_of(
    node: &PlanNode,
    names: &[String],
    counter: &mut usize,
    annotate: &mut dyn FnMut(usize, &PlanNode) -> String,
) -> PlanOutline {
    let id = *counter;
    *counter += 1;
    let annotation = annotate(id, node);
    // Numbered as the runtime numbers them (the plans nested in the
    // operator's expressions, then its inputs), listed inputs first, as a
    // server's plan lists them.
    let nested: Vec<PlanOutline> = crate::describe::nested_plans(node)
        .into_iter()
        .map(|(plan, kind)| {
            let mut outline = outline_of(plan, names, counter, annotate);
            outline.description = format!("[{kind} subquery] {}", outline.description);
            outline
        })
        .collect();
    let mut inputs: Vec<PlanOutline> = node
        .inputs
        .iter()
        .map(|input| outline_of(input, names, counter, annotate))
        .collect();
    inputs.extend(nested);
    PlanOutline {
        description: node.describe(names),
        estimated_rows: node.estimated_rows,
        rule: node.rule.map(str::to_string),
        annotation,
        inputs,
    }
}

/// Renders a plan tree, one operator per line (depth first, inputs under
/// their operator with `├─` / `└─` branches): its description, `[est. N
/// rows]`, the rule in brackets, then the annotation.
pub fn render_outline(root: &PlanOutline) -> String {
    let mut out = String::new();
    render_node(root, "", true, true, &mut out);
    out
}

fn render_node(node: &PlanOutline, prefix: &str, last: bool, root: bool, out: &mut String) {
    let branch = if root {
        ""
    } else if last {
        "└─ "
    } else {
        "├─ "
    };
    let _ = write!(out, "{prefix}{branch}{}", node.description);
    let _ = write!(out, "  [est. {:.0} rows]", node.estimated_rows);
    if let Some(rule) = &node.rule {
        let _ = write!(out, " [{rule}]");
    }
    if !node.annotation.is_empty() {
        let _ = write!(out, " {}", node.annotation);
    }
    out.push('\n');
    let child_prefix = if root {
        String::new()
    } else {
        format!("{prefix}{}", if last { "   " } else { "│  " })
    };
    for (i, input) in node.inputs.iter().enumerate() {
        render_node(input, &child_prefix, i + 1 == node.inputs.len(), false, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_a_tree() {
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
                to_labels: vec!["Item".into()],
                distinct_from: vec![],
                optional: false,
            },
            vec![scan],
            1000.0,
        );
        let plan = Plan {
            root: expand,
            width: 3,
            columns: vec![],
            slot_names: vec!["p".into(), "r".into(), "i".into()],
            ordered: false,
            updating: false,
        };
        let text = render_plan(&plan, &mut |_, _| String::new());
        assert_eq!(
            text,
            "Expand (p)-[r:LIKES]->(i:Item)  [est. 1000 rows]\n└─ LabelScan (p:Person)  [est. 100 rows]\n   └─ Argument  [est. 1 rows]\n"
        );
    }
}
