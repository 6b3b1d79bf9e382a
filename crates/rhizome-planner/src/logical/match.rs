//! `MATCH` / `OPTIONAL MATCH`: patterns to scans, expands and joins.
//!
//! A pattern is first turned into a small query graph (nodes, relationships,
//! shortest-path parts, named paths) with a slot for every element, then
//! the `WHERE` predicate and the property maps are lowered into conjuncts.
//! Planning is greedy and cost-based ([`crate::cost`]): each connected
//! component starts at its cheapest node (or at a node bound by an earlier
//! clause, which is never re-scanned), then expands along the relationship
//! with the smallest estimated fan-out; a relationship whose ends are both
//! bound becomes `ExpandInto` (cycles). Each conjunct is applied as soon as
//! the slots it reads are bound. Disconnected components are joined by a
//! `HashJoin` when an equality predicate links them, else by a
//! `CartesianProduct`. Relationship uniqueness across the whole `MATCH`
//! is kept with `distinct_from` (and by a filter after joins).

use super::{argument, over, Planner, Scope, VarKind};
use crate::cost;
use crate::usage::{and_all, conjuncts, expr_reads};
use rhizome_common::{Error, ErrorKind, Result};
use rhizome_cypher::ast;
use rhizome_plan::{
    BinaryOp, ExpandDirection, Expr, OpKind, PathStep, PlanNode, Quantifier, ShortestPathKind,
    Slot, UnaryOp,
};
use std::collections::BTreeSet;

/// Most nodes plus relationships in one pattern (planning is quadratic in it).
const MAX_PATTERN_ELEMENTS: usize = 1_000;

/// A node of the query graph.
#[derive(Debug, Clone)]
struct QNode {
    slot: Slot,
    labels: Vec<String>,
    /// Bound before this pattern (never scanned).
    bound: bool,
}

/// A relationship of the query graph, oriented as written (left to right).
#[derive(Debug, Clone)]
struct QRel {
    /// The slot the relationship (or list) is written to.
    slot: Slot,
    left: usize,
    right: usize,
    types: Vec<String>,
    direction: ExpandDirection,
    /// `Some((min, max))` for variable length.
    length: Option<(u64, Option<u64>)>,
    /// Predicate on each relationship of a variable-length path (from a property map).
    rel_predicate: Option<(Slot, Expr)>,
    /// Named, or part of a named path (its value is needed).
    needed: bool,
}

/// A `shortestPath` / `allShortestPaths` part.
#[derive(Debug, Clone)]
struct QShortest {
    from: usize,
    to: usize,
    path: Slot,
    rels: Option<Slot>,
    types: Vec<String>,
    direction: ExpandDirection,
    min: u64,
    max: Option<u64>,
    kind: ShortestPathKind,
    rel_map: Option<ast::Expr>,
}

/// One conjunct with the slots it reads.
#[derive(Debug, Clone)]
struct Pred {
    expr: Expr,
    reads: BTreeSet<Slot>,
}

/// The query graph of one pattern.
#[derive(Debug, Default)]
struct QueryGraph {
    nodes: Vec<QNode>,
    rels: Vec<QRel>,
    shortest: Vec<QShortest>,
    /// Named paths: slot and steps.
    paths: Vec<(Slot, Vec<PathStep>)>,
    /// Slots bound by this pattern.
    new_slots: BTreeSet<Slot>,
    /// Relationship slots that are lists.
    list_rels: BTreeSet<Slot>,
    preds: Vec<Pred>,
    /// Planning a component from `Argument` for a join: only its own slots are available.
    isolated: bool,
}

fn direction(d: ast::Direction) -> ExpandDirection {
    match d {
        ast::Direction::Outgoing => ExpandDirection::Outgoing,
        ast::Direction::Incoming => ExpandDirection::Incoming,
        ast::Direction::Both => ExpandDirection::Both,
    }
}

pub(crate) fn reverse(d: ExpandDirection) -> ExpandDirection {
    match d {
        ExpandDirection::Outgoing => ExpandDirection::Incoming,
        ExpandDirection::Incoming => ExpandDirection::Outgoing,
        ExpandDirection::Both => ExpandDirection::Both,
    }
}

fn bin(op: BinaryOp, a: Expr, b: Expr) -> Expr {
    Expr::Binary(op, Box::new(a), Box::new(b))
}

/// A planned component: its plan, whether it started from `Argument`
/// (uncorrelated) and the relationship slots it bound.
struct Component {
    plan: PlanNode,
    rels: Vec<Slot>,
}

impl Planner<'_> {
    /// Plans a `MATCH` clause over `input`; returns the plan and the scope after it.
    pub(crate) fn match_clause(
        &mut self,
        m: &ast::Match,
        input: PlanNode,
        scope: &Scope,
    ) -> Result<(PlanNode, Scope)> {
        if m.optional {
            let (inner, new_scope) =
                self.pattern(&m.pattern, m.where_.as_ref(), argument(), scope)?;
            let mut nullable: Vec<Slot> =
                crate::usage::subtree_writes(&inner).into_iter().collect();
            nullable.sort_unstable();
            let plan = PlanNode::new(
                OpKind::Optional {
                    nullable,
                    scope: Default::default(),
                },
                vec![input, inner],
                0.0,
            );
            Ok((plan, new_scope))
        } else {
            self.pattern(&m.pattern, m.where_.as_ref(), input, scope)
        }
    }

    /// Plans pattern parts with an optional `WHERE` on top of `input`.
    pub(crate) fn pattern(
        &mut self,
        parts: &[ast::PatternPart],
        where_: Option<&ast::Expr>,
        input: PlanNode,
        scope: &Scope,
    ) -> Result<(PlanNode, Scope)> {
        let mut scope = scope.clone();
        let mut g = QueryGraph::default();
        for part in parts {
            self.add_part(part, &mut g, &mut scope)?;
        }
        if let Some(w) = where_ {
            let e = self.lower(w, &scope)?;
            for c in conjuncts(e) {
                g.preds.push(Pred {
                    reads: expr_reads(&c),
                    expr: c,
                });
            }
        }
        let plan = self.plan_graph(g, input)?;
        Ok((plan, scope))
    }

    fn node_for(
        &mut self,
        np: &ast::NodePattern,
        g: &mut QueryGraph,
        scope: &mut Scope,
        pending: &mut Vec<(Slot, ast::Expr)>,
    ) -> Result<usize> {
        let index = match &np.variable {
            Some(v) => {
                let existing = scope.get(&v.name).map(|x| x.slot);
                match existing {
                    Some(slot) => match g.nodes.iter().position(|n| n.slot == slot) {
                        Some(i) => i,
                        None => {
                            g.nodes.push(QNode {
                                slot,
                                labels: Vec::new(),
                                bound: !g.new_slots.contains(&slot),
                            });
                            g.nodes.len() - 1
                        }
                    },
                    None => {
                        let slot = self.slots.named(&v.name);
                        scope.bind(&v.name, slot, VarKind::Node);
                        g.new_slots.insert(slot);
                        g.nodes.push(QNode {
                            slot,
                            labels: Vec::new(),
                            bound: false,
                        });
                        g.nodes.len() - 1
                    }
                }
            }
            None => {
                let slot = self.slots.anon();
                g.new_slots.insert(slot);
                g.nodes.push(QNode {
                    slot,
                    labels: Vec::new(),
                    bound: false,
                });
                g.nodes.len() - 1
            }
        };
        let node = &mut g.nodes[index];
        for l in &np.labels {
            if !node.labels.contains(&l.name) {
                node.labels.push(l.name.clone());
            }
        }
        if let Some(props) = &np.properties {
            pending.push((node.slot, (**props).clone()));
        }
        Ok(index)
    }

    /// Adds one pattern part to the query graph, binding its variables.
    fn add_part(
        &mut self,
        part: &ast::PatternPart,
        g: &mut QueryGraph,
        scope: &mut Scope,
    ) -> Result<()> {
        // Property maps are lowered once every variable of the part is bound.
        let mut pending: Vec<(Slot, ast::Expr)> = Vec::new();
        let mut rel_pending: Vec<(usize, ast::Expr)> = Vec::new();
        let el = &part.element;
        let start = self.node_for(&el.start, g, scope, &mut pending)?;
        let mut steps = vec![PathStep::Node(g.nodes[start].slot)];
        if let Some(kind) = part.shortest {
            let [(rp, np)] = el.chain.as_slice() else {
                return Err(Error::new(
                    ErrorKind::SemanticError,
                    "shortestPath requires a pattern with exactly one relationship",
                ));
            };
            let end = self.node_for(np, g, scope, &mut pending)?;
            let rels = match &rp.variable {
                Some(v) => {
                    let s = self.slots.named(&v.name);
                    scope.bind(&v.name, s, VarKind::RelList);
                    g.new_slots.insert(s);
                    Some(s)
                }
                None if rp.properties.is_some() => {
                    let s = self.slots.anon();
                    g.new_slots.insert(s);
                    Some(s)
                }
                None => None,
            };
            let path = match &part.variable {
                Some(v) => {
                    let s = self.slots.named(&v.name);
                    scope.bind(&v.name, s, VarKind::Path);
                    s
                }
                None => self.slots.anon(),
            };
            g.new_slots.insert(path);
            let (min, max) = match rp.length {
                Some(l) => (l.min.unwrap_or(1), l.max),
                None => (1, Some(1)),
            };
            g.shortest.push(QShortest {
                from: start,
                to: end,
                path,
                rels,
                types: rp.types.iter().map(|t| t.name.clone()).collect(),
                direction: direction(rp.direction),
                min,
                max,
                kind,
                rel_map: rp.properties.as_deref().cloned(),
            });
        } else {
            let mut left = start;
            for (rp, np) in &el.chain {
                let right = self.node_for(np, g, scope, &mut pending)?;
                let is_list = rp.length.is_some();
                let prior = rp
                    .variable
                    .as_ref()
                    .and_then(|v| scope.get(&v.name).map(|x| x.slot));
                let slot = match (&rp.variable, prior) {
                    (Some(v), None) => {
                        let s = self.slots.named(&v.name);
                        scope.bind(
                            &v.name,
                            s,
                            if is_list {
                                VarKind::RelList
                            } else {
                                VarKind::Rel
                            },
                        );
                        s
                    }
                    (Some(_), Some(bound)) => {
                        // Already bound: match a fresh relationship, then require equality.
                        let s = self.slots.anon();
                        g.preds.push(Pred {
                            expr: bin(BinaryOp::Eq, Expr::Slot(s), Expr::Slot(bound)),
                            reads: [s, bound].into_iter().collect(),
                        });
                        s
                    }
                    (None, _) => self.slots.anon(),
                };
                g.new_slots.insert(slot);
                if is_list {
                    g.list_rels.insert(slot);
                }
                let length = rp.length.map(|l| (l.min.unwrap_or(1), l.max));
                g.rels.push(QRel {
                    slot,
                    left,
                    right,
                    types: rp.types.iter().map(|t| t.name.clone()).collect(),
                    direction: direction(rp.direction),
                    length,
                    rel_predicate: None,
                    needed: rp.variable.is_some() || part.variable.is_some(),
                });
                if let Some(props) = &rp.properties {
                    rel_pending.push((g.rels.len() - 1, (**props).clone()));
                }
                steps.push(if is_list {
                    PathStep::Rels(slot, g.nodes[right].slot)
                } else {
                    PathStep::Rel(slot, g.nodes[right].slot)
                });
                left = right;
            }
            if let Some(v) = &part.variable {
                let s = self.slots.named(&v.name);
                scope.bind(&v.name, s, VarKind::Path);
                g.new_slots.insert(s);
                g.paths.push((s, steps));
            }
        }
        for (slot, props) in pending {
            for p in self.property_predicates(Expr::Slot(slot), &props, scope)? {
                g.preds.push(Pred {
                    reads: expr_reads(&p),
                    expr: p,
                });
            }
        }
        for (ri, props) in rel_pending {
            let rel_slot = g.rels[ri].slot;
            if g.rels[ri].length.is_some() {
                let var = self.slots.anon();
                let preds = self.property_predicates(Expr::Slot(var), &props, scope)?;
                if let Some(p) = and_all(preds) {
                    g.rels[ri].rel_predicate = Some((var, p));
                }
            } else {
                for p in self.property_predicates(Expr::Slot(rel_slot), &props, scope)? {
                    g.preds.push(Pred {
                        reads: expr_reads(&p),
                        expr: p,
                    });
                }
            }
        }
        for sp in g.shortest.iter_mut() {
            if let Some(props) = sp.rel_map.take() {
                let var = self.slots.anon();
                let preds = self.property_predicates(Expr::Slot(var), &props, scope)?;
                if let (Some(p), Some(rels)) = (and_all(preds), sp.rels) {
                    let all = Expr::Quantified {
                        quantifier: Quantifier::All,
                        variable: var,
                        list: Box::new(Expr::Slot(rels)),
                        predicate: Box::new(p),
                    };
                    g.preds.push(Pred {
                        reads: expr_reads(&all),
                        expr: all,
                    });
                }
            }
        }
        Ok(())
    }

    /// `{k: v, ...}` on `target` as equality conjuncts; a parameter map
    /// becomes `all(k IN keys($m) WHERE target[k] = $m[k])`.
    fn property_predicates(
        &mut self,
        target: Expr,
        props: &ast::Expr,
        scope: &Scope,
    ) -> Result<Vec<Expr>> {
        match &props.kind {
            ast::ExprKind::Map(entries) => entries
                .iter()
                .map(|(k, v)| {
                    Ok(bin(
                        BinaryOp::Eq,
                        Expr::Property(Box::new(target.clone()), k.name.clone()),
                        self.lower(v, scope)?,
                    ))
                })
                .collect(),
            _ => {
                let map = self.lower(props, scope)?;
                let k = self.slots.anon();
                Ok(vec![Expr::Quantified {
                    quantifier: Quantifier::All,
                    variable: k,
                    list: Box::new(Expr::Function("keys".into(), vec![map.clone()])),
                    predicate: Box::new(bin(
                        BinaryOp::Eq,
                        Expr::Index(Box::new(target), Box::new(Expr::Slot(k))),
                        Expr::Index(Box::new(map), Box::new(Expr::Slot(k))),
                    )),
                }])
            }
        }
    }

    /// Plans the query graph on top of `input`.
    fn plan_graph(&mut self, mut g: QueryGraph, input: PlanNode) -> Result<PlanNode> {
        if g.rels.len() + g.nodes.len() > MAX_PATTERN_ELEMENTS {
            return Err(Error::new(
                ErrorKind::SemanticError,
                format!("the pattern is too large to plan (more than {MAX_PATTERN_ELEMENTS} nodes and relationships)"),
            ));
        }
        // Bound nodes with labels: check the labels.
        for n in &g.nodes {
            if n.bound && !n.labels.is_empty() {
                let e = Expr::HasLabels(Box::new(Expr::Slot(n.slot)), n.labels.clone());
                g.preds.push(Pred {
                    reads: [n.slot].into_iter().collect(),
                    expr: e,
                });
            }
        }
        // Predicates that mention a shortest path (or its relationships) go into it.
        let mut sp_preds: Vec<Vec<Expr>> = vec![Vec::new(); g.shortest.len()];
        let mut i = 0;
        while i < g.preds.len() {
            let hit = g.shortest.iter().position(|s| {
                g.preds[i].reads.contains(&s.path)
                    || s.rels.is_some_and(|r| g.preds[i].reads.contains(&r))
            });
            if let Some(si) = hit {
                sp_preds[si].push(g.preds.remove(i).expr);
            } else {
                i += 1;
            }
        }

        let components = components(&g);
        let mut covered: Vec<bool> = g.nodes.iter().map(|n| n.bound).collect();
        let mut done: Vec<bool> = vec![false; g.rels.len()];
        let mut bound: BTreeSet<Slot> = BTreeSet::new();
        let mut plan = input;
        let mut started = false;
        let mut all_rels: Vec<Slot> = Vec::new();
        let trivial_input = matches!(plan.kind, OpKind::Argument);
        // Correlated components first, then the rest cheapest first.
        let mut order: Vec<(bool, f64, usize)> = components
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let correlated = c.iter().any(|&n| g.nodes[n].bound);
                let best = c
                    .iter()
                    .map(|&n| self.start_estimate(&g, n))
                    .fold(f64::INFINITY, f64::min);
                (!correlated, best, i)
            })
            .collect();
        order.sort_by(|a, b| {
            a.0.cmp(&b.0)
                .then(a.1.partial_cmp(&b.1).unwrap_or(std::cmp::Ordering::Equal))
                .then(a.2.cmp(&b.2))
        });
        for (fresh, _, ci) in order {
            let comp = &components[ci];
            let chain =
                !fresh || (!started && trivial_input) || self.chain_is_cheaper(&g, comp, &plan);
            if chain {
                let c = self.plan_component(
                    &mut g,
                    comp,
                    plan,
                    &mut covered,
                    &mut done,
                    &mut bound,
                    &all_rels,
                )?;
                plan = c.plan;
                all_rels.extend(c.rels);
            } else {
                let mut local_bound = BTreeSet::new();
                g.isolated = true;
                let c = self.plan_component(
                    &mut g,
                    comp,
                    argument(),
                    &mut covered,
                    &mut done,
                    &mut local_bound,
                    &[],
                );
                g.isolated = false;
                let c = c?;
                let comp_slots = local_bound.clone();
                bound.extend(local_bound);
                plan = self.join(&mut g, plan, c.plan, &bound, &comp_slots)?;
                if let Some(f) =
                    uniqueness_filter(&all_rels, &c.rels, &g.list_rels, &mut self.slots)
                {
                    plan = over(OpKind::Filter { predicate: f }, plan);
                }
                all_rels.extend(c.rels);
            }
            started = true;
            plan = apply_ready(&mut g, &bound, plan);
        }
        // Shortest paths, once both ends are bound.
        for (si, sp) in g.shortest.clone().into_iter().enumerate() {
            let path_predicate = and_all(std::mem::take(&mut sp_preds[si]));
            plan = over(
                OpKind::ShortestPath {
                    from: g.nodes[sp.from].slot,
                    to: g.nodes[sp.to].slot,
                    path: sp.path,
                    rels: sp.rels,
                    types: sp.types,
                    direction: sp.direction,
                    min: sp.min,
                    max: sp.max,
                    kind: sp.kind,
                    path_predicate,
                    optional: false,
                },
                plan,
            );
            bound.insert(sp.path);
            bound.extend(sp.rels);
            plan = apply_ready(&mut g, &bound, plan);
        }
        if !g.paths.is_empty() {
            let items = g
                .paths
                .iter()
                .map(|(slot, steps)| (*slot, Expr::Path(steps.clone())))
                .collect();
            plan = over(OpKind::Project { items }, plan);
            bound.extend(g.paths.iter().map(|(s, _)| *s));
        }
        // Whatever is left (reads slots bound above, or nothing).
        let rest: Vec<Expr> = g.preds.drain(..).map(|p| p.expr).collect();
        if let Some(predicate) = and_all(rest) {
            plan = over(OpKind::Filter { predicate }, plan);
        }
        Ok(plan)
    }

    /// Whether scanning a fresh component once per row of `plan` (which
    /// lets it use the row's values, e.g. for index seeks) is cheaper than
    /// planning it once and joining.
    fn chain_is_cheaper(&self, g: &QueryGraph, comp: &[usize], plan: &PlanNode) -> bool {
        let mut probe = plan.clone();
        cost::annotate(&mut probe, self.ctx);
        let rows = probe.estimated_rows.max(1.0);
        let per_row = comp
            .iter()
            .map(|&n| self.start_estimate(g, n))
            .fold(f64::INFINITY, f64::min);
        let alone = comp
            .iter()
            .map(|&n| {
                let node = &g.nodes[n];
                let mut best = cost::scan_rows(self.ctx, &node.labels);
                for p in &g.preds {
                    let own = p
                        .reads
                        .iter()
                        .all(|s| comp.iter().any(|&m| g.nodes[m].slot == *s));
                    if let (true, Some((key, _))) = (own, equality_on(&p.expr, node.slot)) {
                        for l in &node.labels {
                            if self.ctx.has_index(l, &key) {
                                best = best.min(cost::seek_rows(self.ctx, l, &key));
                            }
                        }
                    }
                }
                best
            })
            .fold(f64::INFINITY, f64::min);
        rows * per_row < alone + rows
    }

    /// Estimated rows of starting a pattern at node `n`.
    fn start_estimate(&self, g: &QueryGraph, n: usize) -> f64 {
        let node = &g.nodes[n];
        if node.bound {
            return 1.0;
        }
        let mut best = cost::scan_rows(self.ctx, &node.labels);
        for p in &g.preds {
            // Only predicates that can be applied right after the scan make a seek.
            let usable = p
                .reads
                .iter()
                .all(|s| *s == node.slot || (!g.isolated && !g.new_slots.contains(s)));
            if !usable {
                continue;
            }
            if let Some((key, _)) = equality_on(&p.expr, node.slot) {
                for l in &node.labels {
                    if self.ctx.has_index(l, &key) {
                        best = best.min(cost::seek_rows(self.ctx, l, &key));
                    }
                }
            }
        }
        best
    }

    /// The scan that starts at node `n`: a label scan on the label with an
    /// index usable by an equality predicate, else the rarest label, else all nodes.
    fn start_scan(&mut self, g: &QueryGraph, n: usize, input: PlanNode) -> PlanNode {
        let node = &g.nodes[n];
        let out = node.slot;
        if node.labels.is_empty() {
            return over(OpKind::AllNodesScan { out }, input);
        }
        let mut choice: Option<&String> = None;
        'outer: for p in &g.preds {
            if let Some((key, _)) = equality_on(&p.expr, out) {
                for l in &node.labels {
                    if self.ctx.has_index(l, &key) {
                        choice = Some(l);
                        break 'outer;
                    }
                }
            }
        }
        let label = match choice {
            Some(l) => l.clone(),
            None => node
                .labels
                .iter()
                .min_by(|a, b| {
                    let ca = self.ctx.label_count(a).unwrap_or(0);
                    let cb = self.ctx.label_count(b).unwrap_or(0);
                    ca.cmp(&cb)
                })
                .cloned()
                .unwrap_or_default(),
        };
        let mut plan = over(
            OpKind::LabelScan {
                out,
                label: label.clone(),
            },
            input,
        );
        let others: Vec<String> = node
            .labels
            .iter()
            .filter(|l| **l != label)
            .cloned()
            .collect();
        if !others.is_empty() {
            plan = over(
                OpKind::Filter {
                    predicate: Expr::HasLabels(Box::new(Expr::Slot(out)), others),
                },
                plan,
            );
        }
        plan
    }

    /// Plans one connected component greedily on top of `plan`.
    #[allow(clippy::too_many_arguments)]
    fn plan_component(
        &mut self,
        g: &mut QueryGraph,
        comp: &[usize],
        mut plan: PlanNode,
        covered: &mut [bool],
        done: &mut [bool],
        bound: &mut BTreeSet<Slot>,
        earlier_rels: &[Slot],
    ) -> Result<Component> {
        let mut rels_here: Vec<Slot> = Vec::new();
        let mut in_comp = vec![false; g.nodes.len()];
        for &n in comp {
            in_comp[n] = true;
        }
        // Start node: a bound one, else the cheapest.
        if !comp.iter().any(|&n| covered[n]) {
            let start = comp
                .iter()
                .copied()
                .min_by(|&a, &b| {
                    self.start_estimate(g, a)
                        .partial_cmp(&self.start_estimate(g, b))
                        .unwrap_or(std::cmp::Ordering::Equal)
                        .then(a.cmp(&b))
                })
                .unwrap_or(comp[0]);
            plan = self.start_scan(g, start, plan);
            covered[start] = true;
            bound.insert(g.nodes[start].slot);
            plan = apply_ready(g, bound, plan);
        }
        loop {
            // Candidate relationships touching the covered part.
            let mut best: Option<(bool, f64, usize)> = None;
            for (ri, r) in g.rels.iter().enumerate() {
                if done[ri] || !in_comp[r.left] {
                    continue;
                }
                let (l, rt) = (covered[r.left], covered[r.right]);
                if !l && !rt {
                    continue;
                }
                let into = l && rt;
                let est = if into {
                    0.0
                } else {
                    let (from, to, dir) = if l {
                        (r.left, r.right, r.direction)
                    } else {
                        (r.right, r.left, reverse(r.direction))
                    };
                    let mut e = cost::expand_factor(
                        self.ctx,
                        &g.nodes[from].labels,
                        &r.types,
                        dir,
                        &g.nodes[to].labels,
                    );
                    if r.length.is_some() {
                        e = e.max(1.0) * 10.0;
                    }
                    // Prefer expanding from the written left end on ties.
                    if !l {
                        e += 1e-9;
                    }
                    e
                };
                let key = (!into, est, ri);
                if best.is_none_or(|b| {
                    (key.0, key.1) < (b.0, b.1) || ((key.0, key.1) == (b.0, b.1) && key.2 < b.2)
                }) {
                    best = Some(key);
                }
            }
            let Some((_, _, ri)) = best else {
                // Nodes of the component not reachable from covered ones (cannot happen
                // in a connected component, but stay total): scan them.
                if let Some(&n) = comp.iter().find(|&&n| !covered[n]) {
                    plan = self.start_scan(g, n, plan);
                    covered[n] = true;
                    bound.insert(g.nodes[n].slot);
                    plan = apply_ready(g, bound, plan);
                    continue;
                }
                break;
            };
            done[ri] = true;
            let r = g.rels[ri].clone();
            let distinct_from: Vec<Slot> = earlier_rels
                .iter()
                .chain(rels_here.iter())
                .copied()
                .collect();
            let (l, rt) = (covered[r.left], covered[r.right]);
            let types = r.types.clone();
            if l && rt {
                let from = g.nodes[r.left].slot;
                let to = g.nodes[r.right].slot;
                plan = match r.length {
                    None => over(
                        OpKind::ExpandInto {
                            from,
                            rel: r.slot,
                            to,
                            types,
                            direction: r.direction,
                            distinct_from,
                            optional: false,
                        },
                        plan,
                    ),
                    Some((min, max)) => over(
                        OpKind::VarExpand {
                            from,
                            rels: r.slot,
                            to,
                            types,
                            direction: r.direction,
                            min,
                            max,
                            to_labels: Vec::new(),
                            rel_predicate: r.rel_predicate.clone(),
                            node_predicate: None,
                            scope: Default::default(),
                            into: true,
                            distinct_from,
                            optional: false,
                        },
                        plan,
                    ),
                };
            } else {
                let (from_i, to_i, dir) = if l {
                    (r.left, r.right, r.direction)
                } else {
                    (r.right, r.left, reverse(r.direction))
                };
                let from = g.nodes[from_i].slot;
                let to = g.nodes[to_i].slot;
                let to_labels = g.nodes[to_i].labels.clone();
                plan = match r.length {
                    None => over(
                        OpKind::Expand {
                            from,
                            rel: r.slot,
                            to,
                            types,
                            direction: dir,
                            to_labels,
                            distinct_from,
                            optional: false,
                        },
                        plan,
                    ),
                    Some((min, max)) => {
                        // Expanding from the right end yields the list reversed.
                        let reversed = !l && r.needed;
                        let rels = if reversed { self.slots.anon() } else { r.slot };
                        let mut p = over(
                            OpKind::VarExpand {
                                from,
                                rels,
                                to,
                                types,
                                direction: dir,
                                min,
                                max,
                                to_labels,
                                rel_predicate: r.rel_predicate.clone(),
                                node_predicate: None,
                                scope: Default::default(),
                                into: false,
                                distinct_from,
                                optional: false,
                            },
                            plan,
                        );
                        if reversed {
                            p = over(
                                OpKind::Project {
                                    items: vec![(
                                        r.slot,
                                        Expr::Function("reverse".into(), vec![Expr::Slot(rels)]),
                                    )],
                                },
                                p,
                            );
                        }
                        p
                    }
                };
                covered[to_i] = true;
                bound.insert(to);
            }
            bound.insert(r.slot);
            rels_here.push(r.slot);
            plan = apply_ready(g, bound, plan);
        }
        Ok(Component {
            plan,
            rels: rels_here,
        })
    }

    /// Joins a fresh component (`right`, planned from `Argument`) to `left`:
    /// a hash join on an equality predicate linking them, else a cartesian product.
    fn join(
        &mut self,
        g: &mut QueryGraph,
        left: PlanNode,
        right: PlanNode,
        bound: &BTreeSet<Slot>,
        right_slots: &BTreeSet<Slot>,
    ) -> Result<PlanNode> {
        let pending: BTreeSet<Slot> = g.new_slots.difference(bound).copied().collect();
        let pos = g.preds.iter().position(|p| {
            if let Expr::Binary(BinaryOp::Eq, a, b) = &p.expr {
                let ra = expr_reads(a);
                let rb = expr_reads(b);
                let side = |r: &BTreeSet<Slot>| -> Option<bool> {
                    if r.is_empty() || r.iter().any(|s| pending.contains(s)) {
                        return None;
                    }
                    if r.iter().all(|s| right_slots.contains(s)) {
                        Some(true)
                    } else if r.iter().all(|s| !right_slots.contains(s)) {
                        Some(false)
                    } else {
                        None
                    }
                };
                matches!((side(&ra), side(&rb)), (Some(x), Some(y)) if x != y)
            } else {
                false
            }
        });
        let Some(pos) = pos else {
            return Ok(PlanNode::new(
                OpKind::CartesianProduct,
                vec![left, right],
                0.0,
            ));
        };
        let Expr::Binary(_, a, b) = g.preds.remove(pos).expr else {
            return Err(Error::internal("hash join predicate is not an equality"));
        };
        let (right_key, left_key) = if expr_reads(&a).iter().all(|s| right_slots.contains(s)) {
            (*a, *b)
        } else {
            (*b, *a)
        };
        let key_slot = |planner: &mut Self, e: Expr, plan: PlanNode| -> (Slot, PlanNode) {
            if let Expr::Slot(s) = e {
                return (s, plan);
            }
            let s = planner.slots.anon();
            (
                s,
                over(
                    OpKind::Project {
                        items: vec![(s, e)],
                    },
                    plan,
                ),
            )
        };
        let (build_key, build) = key_slot(self, right_key, right);
        let (probe_key, probe) = key_slot(self, left_key, left);
        Ok(PlanNode::new(
            OpKind::HashJoin {
                build_keys: vec![build_key],
                probe_keys: vec![probe_key],
            },
            vec![build, probe],
            0.0,
        ))
    }
}

/// Applies every pending predicate whose slots are bound, as one filter.
fn apply_ready(g: &mut QueryGraph, bound: &BTreeSet<Slot>, plan: PlanNode) -> PlanNode {
    let mut ready = Vec::new();
    let mut i = 0;
    while i < g.preds.len() {
        let ok = g.preds[i]
            .reads
            .iter()
            .all(|s| bound.contains(s) || (!g.isolated && !g.new_slots.contains(s)));
        if ok {
            ready.push(g.preds.remove(i).expr);
        } else {
            i += 1;
        }
    }
    match and_all(ready) {
        Some(predicate) => over(OpKind::Filter { predicate }, plan),
        None => plan,
    }
}

/// `target.key = value` where `value` does not read `target`: the key and value.
pub(crate) fn equality_on(e: &Expr, target: Slot) -> Option<(String, &Expr)> {
    let Expr::Binary(BinaryOp::Eq, a, b) = e else {
        return None;
    };
    for (x, y) in [(a, b), (b, a)] {
        if let Expr::Property(base, key) = &**x {
            if **base == Expr::Slot(target) && !expr_reads(y).contains(&target) {
                return Some((key.clone(), &**y));
            }
        }
    }
    None
}

/// Connected components of the query graph (node indices), in order of first node.
fn components(g: &QueryGraph) -> Vec<Vec<usize>> {
    let n = g.nodes.len();
    let mut parent: Vec<usize> = (0..n).collect();
    fn find(p: &mut [usize], x: usize) -> usize {
        let mut x = x;
        while p[x] != x {
            p[x] = p[p[x]];
            x = p[x];
        }
        x
    }
    for r in &g.rels {
        let (a, b) = (find(&mut parent, r.left), find(&mut parent, r.right));
        if a != b {
            parent[a.max(b)] = a.min(b);
        }
    }
    let mut out: Vec<Vec<usize>> = Vec::new();
    let mut roots: Vec<usize> = Vec::new();
    for i in 0..n {
        let r = find(&mut parent, i);
        match roots.iter().position(|&x| x == r) {
            Some(k) => out[k].push(i),
            None => {
                roots.push(r);
                out.push(vec![i]);
            }
        }
    }
    out
}

/// A predicate keeping relationships of `a` and `b` pairwise distinct.
fn uniqueness_filter(
    a: &[Slot],
    b: &[Slot],
    lists: &BTreeSet<Slot>,
    slots: &mut crate::slots::Slots,
) -> Option<Expr> {
    let mut parts = Vec::new();
    for &x in a {
        for &y in b {
            let (lx, ly) = (lists.contains(&x), lists.contains(&y));
            parts.push(match (lx, ly) {
                (false, false) => bin(BinaryOp::Ne, Expr::Slot(x), Expr::Slot(y)),
                (false, true) => Expr::Unary(
                    UnaryOp::Not,
                    Box::new(bin(BinaryOp::In, Expr::Slot(x), Expr::Slot(y))),
                ),
                (true, false) => Expr::Unary(
                    UnaryOp::Not,
                    Box::new(bin(BinaryOp::In, Expr::Slot(y), Expr::Slot(x))),
                ),
                (true, true) => {
                    let v = slots.anon();
                    Expr::Quantified {
                        quantifier: Quantifier::None,
                        variable: v,
                        list: Box::new(Expr::Slot(x)),
                        predicate: Box::new(bin(BinaryOp::In, Expr::Slot(v), Expr::Slot(y))),
                    }
                }
            });
        }
    }
    and_all(parts)
}

#[cfg(test)]
mod tests {
    use crate::rules::test_util::plan_empty;

    fn distinct_froms(q: &str) -> Vec<(String, Vec<String>)> {
        let analyzed = rhizome_cypher::compile(q).unwrap();
        let planned = crate::plan_statement_with(&analyzed, &crate::EmptyContext, &[]).unwrap();
        let names = planned.plan.slot_names.clone();
        let mut out = Vec::new();
        planned.plan.root.walk(&mut |n| match &n.kind {
            OpKind::Expand {
                rel, distinct_from, ..
            }
            | OpKind::ExpandInto {
                rel, distinct_from, ..
            }
            | OpKind::VarExpand {
                rels: rel,
                distinct_from,
                ..
            } => out.push((
                names[*rel].clone(),
                distinct_from.iter().map(|s| names[*s].clone()).collect(),
            )),
            _ => {}
        });
        out.reverse();
        out
    }

    use rhizome_plan::OpKind;

    #[test]
    fn relationships_of_one_match_are_distinct() {
        assert_eq!(
            distinct_froms("MATCH (a)-[r]->(b)-[s*]->(c), (c)-[t]->(d) RETURN a"),
            vec![
                ("r".to_string(), vec![]),
                ("s".to_string(), vec!["r".to_string()]),
                ("t".to_string(), vec!["r".to_string(), "s".to_string()]),
            ]
        );
        // A later MATCH does not need to differ from an earlier one.
        assert_eq!(
            distinct_froms("MATCH (a)-[r]->(b) MATCH (b)-[s]->(c) RETURN a"),
            vec![("r".to_string(), vec![]), ("s".to_string(), vec![])]
        );
    }

    #[test]
    fn bound_nodes_are_not_rescanned_and_cycles_expand_into() {
        assert_eq!(
            plan_empty("MATCH (a) WITH a MATCH (a)-[r]->(b)-[s]->(a) RETURN b", None),
            "ExpandInto (b)-[s]->(a)\n└─ Expand (a)-[r]->(b)\n   └─ AllNodesScan (a)\n      └─ Argument"
        );
    }

    #[test]
    fn var_length_from_the_right_end_is_reversed() {
        let text = plan_empty("MATCH (a:A) WITH a MATCH (b)-[r*2]->(a) RETURN r", None);
        assert!(
            text.starts_with(
                "Projection reverse(  anon_0) AS r\n└─ VarLengthExpand (a)<-[  anon_0*2..2]-(b)"
            ),
            "{text}"
        );
    }

    #[test]
    fn named_paths_and_shortest_paths() {
        assert_eq!(
            plan_empty("MATCH p = (a)-[r]->(b) RETURN p", None),
            "Projection path(...) AS p\n└─ Expand (a)-[r]->(b)\n   └─ AllNodesScan (a)\n      └─ Argument"
        );
        let text = plan_empty(
            "MATCH (a), (b) MATCH p = allShortestPaths((a)-[*]-(b)) WHERE length(p) > 1 RETURN p",
            None,
        );
        assert!(text.starts_with("ShortestPath p = All((a)..(b))"), "{text}");
    }

    #[test]
    fn optional_match_keeps_its_where_inside() {
        assert_eq!(
            plan_empty("MATCH (a) OPTIONAL MATCH (a)-->(b) WHERE b.x = 1 RETURN b", None),
            "Optional\n├─ AllNodesScan (a)\n│  └─ Argument\n└─ Filter (b.x = 1)\n   └─ Expand (a)-[  anon_0]->(b)\n      └─ Argument"
        );
    }
}
