//! Updating clauses: `CREATE`, `SET`, `REMOVE`, `DELETE`, `MERGE`, `FOREACH`.
//!
//! Each becomes one write operator over the plan so far (the runtime
//! computes a write operator's input completely before writing). When a
//! reading clause follows a write, [`Planner::barrier`] puts an
//! [`OpKind::Eager`] between them, so the reads see every write before them
//! and none after.

use super::{argument, over, unsupported, Planner, Scope, VarKind};
use rhizome_common::Result;
use rhizome_cypher::ast;
use rhizome_plan::{
    CreateNode, CreateRel, Expr, OpKind, PathStep, PlanNode, RemoveItem, SetItem, Slot,
};

/// What a `CREATE` pattern (or a `MERGE`'s create side) makes.
#[derive(Default)]
struct Creation {
    nodes: Vec<CreateNode>,
    rels: Vec<CreateRel>,
    /// Named paths: slot and steps, projected after the writes.
    paths: Vec<(Slot, Vec<PathStep>)>,
}

impl Planner<'_> {
    /// `plan`, behind an `Eager` barrier if its top writes (a read follows).
    pub(crate) fn barrier(plan: PlanNode) -> PlanNode {
        if plan.kind.is_update() {
            over(OpKind::Eager, plan)
        } else {
            plan
        }
    }

    /// Plans one updating clause over `plan`.
    pub(crate) fn update_clause(
        &mut self,
        clause: &ast::Clause,
        plan: PlanNode,
        scope: &Scope,
    ) -> Result<(PlanNode, Scope)> {
        match clause {
            ast::Clause::Create(c) => {
                let mut scope = scope.clone();
                let creation = self.creation(&c.pattern, &mut scope)?;
                let mut plan = over(
                    OpKind::Create {
                        nodes: creation.nodes,
                        rels: creation.rels,
                    },
                    plan,
                );
                if !creation.paths.is_empty() {
                    plan = over(
                        OpKind::Project {
                            items: creation
                                .paths
                                .into_iter()
                                .map(|(s, steps)| (s, Expr::Path(steps)))
                                .collect(),
                        },
                        Self::barrier(plan),
                    );
                }
                Ok((plan, scope))
            }
            ast::Clause::Set(s) => {
                let items = self.set_items(&s.items, scope)?;
                Ok((over(OpKind::SetItems { items }, plan), scope.clone()))
            }
            ast::Clause::Remove(r) => {
                let mut items = Vec::new();
                for item in &r.items {
                    items.push(match item {
                        ast::RemoveItem::Property(e) => {
                            let (entity, key) = self.property_target(e, scope)?;
                            RemoveItem::Property { entity, key }
                        }
                        ast::RemoveItem::Labels {
                            variable, labels, ..
                        } => RemoveItem::Labels {
                            entity: self.variable(variable, scope)?,
                            labels: labels.iter().map(|l| l.name.clone()).collect(),
                        },
                    });
                }
                Ok((over(OpKind::RemoveItems { items }, plan), scope.clone()))
            }
            ast::Clause::Delete(d) => {
                let exprs = d
                    .exprs
                    .iter()
                    .map(|e| self.lower(e, scope))
                    .collect::<Result<Vec<_>>>()?;
                Ok((
                    over(
                        OpKind::Delete {
                            exprs,
                            detach: d.detach,
                        },
                        plan,
                    ),
                    scope.clone(),
                ))
            }
            ast::Clause::Merge(m) => self.merge(m, plan, scope),
            ast::Clause::Foreach(f) => {
                let list = self.lower(&f.list, scope)?;
                let variable = self.slots.named(&f.variable.name);
                let mut body_scope = scope.clone();
                body_scope.bind(&f.variable.name, variable, VarKind::Value);
                let mut body = argument();
                for clause in &f.clauses {
                    let (b, s) = self.update_clause(clause, body, &body_scope)?;
                    body = b;
                    body_scope = s;
                }
                Ok((
                    PlanNode::new(OpKind::Foreach { variable, list }, vec![plan, body], 0.0),
                    scope.clone(),
                ))
            }
            _ => Err(unsupported("this clause inside FOREACH")),
        }
    }

    fn variable(&mut self, v: &ast::Ident, scope: &Scope) -> Result<Expr> {
        let e = ast::Expr {
            kind: ast::ExprKind::Variable(v.name.clone()),
            span: v.span,
        };
        self.lower(&e, scope)
    }

    /// `base.key` as (entity expression, key).
    fn property_target(&mut self, e: &ast::Expr, scope: &Scope) -> Result<(Expr, String)> {
        match &e.kind {
            ast::ExprKind::Property(base, key) => Ok((self.lower(base, scope)?, key.name.clone())),
            _ => Err(unsupported("this SET/REMOVE target")),
        }
    }

    fn set_items(&mut self, items: &[ast::SetItem], scope: &Scope) -> Result<Vec<SetItem>> {
        let mut out = Vec::new();
        for item in items {
            out.push(match item {
                ast::SetItem::Property { target, value, .. } => {
                    let (entity, key) = self.property_target(target, scope)?;
                    SetItem::Property {
                        entity,
                        key,
                        value: self.lower(value, scope)?,
                    }
                }
                ast::SetItem::Replace {
                    variable, value, ..
                } => SetItem::Properties {
                    entity: self.variable(variable, scope)?,
                    map: self.lower(value, scope)?,
                    replace: true,
                },
                ast::SetItem::Merge {
                    variable, value, ..
                } => SetItem::Properties {
                    entity: self.variable(variable, scope)?,
                    map: self.lower(value, scope)?,
                    replace: false,
                },
                ast::SetItem::Labels {
                    variable, labels, ..
                } => SetItem::Labels {
                    entity: self.variable(variable, scope)?,
                    labels: labels.iter().map(|l| l.name.clone()).collect(),
                },
            });
        }
        Ok(out)
    }

    /// The node of a pattern: its slot, and whether it is created here.
    fn create_node(
        &mut self,
        n: &ast::NodePattern,
        scope: &mut Scope,
        out: &mut Creation,
    ) -> Result<Slot> {
        if let Some(v) = &n.variable {
            if let Some(var) = scope.get(&v.name) {
                return Ok(var.slot);
            }
        }
        let properties = match &n.properties {
            Some(p) => Some(self.lower(p, scope)?),
            None => None,
        };
        let slot = match &n.variable {
            Some(v) => {
                let s = self.slots.named(&v.name);
                scope.bind(&v.name, s, VarKind::Node);
                s
            }
            None => self.slots.anon(),
        };
        out.nodes.push(CreateNode {
            slot,
            labels: n.labels.iter().map(|l| l.name.clone()).collect(),
            properties,
        });
        Ok(slot)
    }

    /// The entities a pattern creates (bound nodes are reused).
    fn creation(&mut self, parts: &[ast::PatternPart], scope: &mut Scope) -> Result<Creation> {
        let mut out = Creation::default();
        for part in parts {
            let mut left = self.create_node(&part.element.start, scope, &mut out)?;
            let mut steps = vec![PathStep::Node(left)];
            for (r, n) in &part.element.chain {
                let right = self.create_node(n, scope, &mut out)?;
                let Some(rel_type) = r.types.first() else {
                    return Err(unsupported("a relationship without a type in CREATE"));
                };
                let properties = match &r.properties {
                    Some(p) => Some(self.lower(p, scope)?),
                    None => None,
                };
                let slot = match &r.variable {
                    Some(v) => match scope.get(&v.name) {
                        Some(var) => var.slot,
                        None => {
                            let s = self.slots.named(&v.name);
                            scope.bind(&v.name, s, VarKind::Rel);
                            s
                        }
                    },
                    None => self.slots.anon(),
                };
                let (start, end) = match r.direction {
                    ast::Direction::Incoming => (right, left),
                    _ => (left, right),
                };
                out.rels.push(CreateRel {
                    slot,
                    start,
                    end,
                    rel_type: rel_type.name.clone(),
                    properties,
                });
                steps.push(PathStep::Rel(slot, right));
                left = right;
            }
            if let Some(p) = &part.variable {
                let s = self.slots.named(&p.name);
                scope.bind(&p.name, s, VarKind::Path);
                out.paths.push((s, steps));
            }
        }
        Ok(out)
    }

    /// `MERGE`: match the pattern per row, or create it.
    fn merge(
        &mut self,
        m: &ast::Merge,
        plan: PlanNode,
        scope: &Scope,
    ) -> Result<(PlanNode, Scope)> {
        // Name every element so both sides write the same slots.
        let mut part = m.pattern.clone();
        let path_var = part.variable.take();
        let mut hidden = 0;
        let mut name = |v: &mut Option<ast::Ident>, span| {
            if v.is_none() {
                hidden += 1;
                *v = Some(ast::Ident {
                    name: format!("  merge_{hidden}"),
                    span,
                });
            }
        };
        name(&mut part.element.start.variable, part.span);
        for (r, n) in &mut part.element.chain {
            name(&mut r.variable, part.span);
            name(&mut n.variable, part.span);
        }
        let (inner, matched_scope) =
            self.pattern(std::slice::from_ref(&part), None, argument(), scope)?;
        let mut create_scope = scope.clone();
        let mut creation = Creation::default();
        {
            let mut left =
                self.merge_node(&part.element.start, &matched_scope, scope, &mut creation)?;
            let mut steps = vec![PathStep::Node(left)];
            for (r, n) in &part.element.chain {
                let right = self.merge_node(n, &matched_scope, scope, &mut creation)?;
                let Some(rel_type) = r.types.first() else {
                    return Err(unsupported("a relationship without a type in MERGE"));
                };
                let properties = match &r.properties {
                    Some(p) => Some(self.lower(p, &matched_scope)?),
                    None => None,
                };
                let rv = r.variable.as_ref().map(|v| v.name.as_str()).unwrap_or("");
                let slot = matched_scope
                    .get(rv)
                    .map(|v| v.slot)
                    .unwrap_or_else(|| self.slots.anon());
                let (start, end) = match r.direction {
                    ast::Direction::Incoming => (right, left),
                    _ => (left, right),
                };
                creation.rels.push(CreateRel {
                    slot,
                    start,
                    end,
                    rel_type: rel_type.name.clone(),
                    properties,
                });
                steps.push(PathStep::Rel(slot, right));
                left = right;
            }
            if let Some(p) = &path_var {
                let s = self.slots.named(&p.name);
                creation.paths.push((s, steps));
            }
        }
        // The scope after MERGE: the pattern's own names (not the hidden ones).
        for (n, kind) in std::iter::once((&m.pattern.element.start.variable, VarKind::Node)).chain(
            m.pattern
                .element
                .chain
                .iter()
                .flat_map(|(r, n)| [(&r.variable, VarKind::Rel), (&n.variable, VarKind::Node)]),
        ) {
            if let Some(v) = n {
                if let Some(var) = matched_scope.get(&v.name) {
                    create_scope.bind(&v.name, var.slot, kind);
                }
            }
        }
        let mut on_create = Vec::new();
        let mut on_match = Vec::new();
        for action in &m.actions {
            let items = self.set_items(&action.items, &create_scope)?;
            if action.on_create {
                on_create.extend(items);
            } else {
                on_match.extend(items);
            }
        }
        let mut plan = PlanNode::new(
            OpKind::Merge {
                nodes: creation.nodes,
                rels: creation.rels,
                on_create,
                on_match,
            },
            vec![plan, inner],
            0.0,
        );
        if let Some(p) = &path_var {
            let (slot, steps) = creation.paths.pop().expect("path steps");
            create_scope.bind(&p.name, slot, VarKind::Path);
            plan = over(
                OpKind::Project {
                    items: vec![(slot, Expr::Path(steps))],
                },
                Self::barrier(plan),
            );
        }
        Ok((plan, create_scope))
    }

    /// A node of a `MERGE` pattern: bound before (reused) or created into the slot the match binds.
    fn merge_node(
        &mut self,
        n: &ast::NodePattern,
        matched: &Scope,
        before: &Scope,
        out: &mut Creation,
    ) -> Result<Slot> {
        let name = n.variable.as_ref().map(|v| v.name.as_str()).unwrap_or("");
        if let Some(var) = before.get(name) {
            return Ok(var.slot);
        }
        let slot = match matched.get(name) {
            Some(v) => v.slot,
            None => self.slots.anon(),
        };
        if out.nodes.iter().any(|c| c.slot == slot) {
            return Ok(slot);
        }
        let properties = match &n.properties {
            Some(p) => Some(self.lower(p, before)?),
            None => None,
        };
        out.nodes.push(CreateNode {
            slot,
            labels: n.labels.iter().map(|l| l.name.clone()).collect(),
            properties,
        });
        Ok(slot)
    }
}
