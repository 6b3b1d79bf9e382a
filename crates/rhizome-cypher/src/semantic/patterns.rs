//! Pattern binding rules for MATCH, CREATE, MERGE and pattern expressions.

use super::{Analyzer, Ctx, Type};
use crate::ast::*;
use rhizome_common::Result;

/// Where a pattern occurs; the rules for binding differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PatternMode {
    /// `MATCH` / `OPTIONAL MATCH`, `EXISTS { pattern }`, pattern comprehensions.
    Match,
    /// `CREATE`.
    Create,
    /// `MERGE`.
    Merge,
    /// A pattern predicate in an expression: may not introduce variables.
    Predicate,
}

impl<'a> Analyzer<'a> {
    /// Analyses one pattern part; `seen` collects relationship variables
    /// bound by the enclosing clause (for uniqueness checks).
    pub(crate) fn pattern_part(
        &mut self,
        part: &PatternPart,
        mode: PatternMode,
        seen: &mut Vec<String>,
    ) -> Result<()> {
        if let Some(v) = &part.variable {
            if self.lookup(&v.name).is_some() {
                return Err(self.already_bound(v));
            }
        }
        if part.shortest.is_some() && part.element.chain.len() != 1 {
            return Err(self.err(
                part.span,
                "UnexpectedSyntax",
                "shortestPath requires a pattern with exactly one relationship",
            ));
        }
        let standalone = part.element.chain.is_empty();
        self.node_pattern(&part.element.start, mode, standalone)?;
        for (rel, node) in &part.element.chain {
            self.rel_pattern(rel, mode, seen)?;
            self.node_pattern(node, mode, false)?;
        }
        if let Some(v) = &part.variable {
            if self.lookup(&v.name).is_some() {
                return Err(self.already_bound(v));
            }
            if mode == PatternMode::Predicate {
                return Err(self.err(
                    v.span,
                    "UnexpectedSyntax",
                    "a pattern predicate cannot bind a path variable",
                ));
            }
            self.bind(&v.name, Type::Path, v.span);
        }
        Ok(())
    }

    fn properties(&mut self, props: &Option<Box<Expr>>, mode: PatternMode) -> Result<()> {
        let Some(p) = props else { return Ok(()) };
        if let ExprKind::Parameter(_) = p.kind {
            if matches!(
                mode,
                PatternMode::Match | PatternMode::Merge | PatternMode::Predicate
            ) {
                return Err(self.err(
                    p.span,
                    "InvalidParameterUse",
                    "parameter maps cannot be used in MATCH or MERGE patterns; use a literal map, e.g. {key: $param.key}",
                ));
            }
            return Ok(());
        }
        self.expr(p, Ctx::plain())?;
        Ok(())
    }

    fn node_pattern(&mut self, n: &NodePattern, mode: PatternMode, standalone: bool) -> Result<()> {
        if let Some(v) = &n.variable {
            match self.lookup(&v.name) {
                Some(i) => {
                    self.references.push((v.span, i));
                    let ty = self.ty_of(i);
                    if !ty.may_be_node() {
                        return Err(self.err(
                            v.span,
                            "VariableTypeConflict",
                            format!("variable `{}` is {ty}, not a node", v.name),
                        ));
                    }
                    let decorated = !n.labels.is_empty() || n.properties.is_some();
                    if matches!(mode, PatternMode::Create | PatternMode::Merge)
                        && (decorated || standalone)
                    {
                        return Err(self.already_bound(v));
                    }
                    self.refine(i, Type::Node);
                }
                None => {
                    if mode == PatternMode::Predicate {
                        return Err(self.err(
                            v.span,
                            "UndefinedVariable",
                            format!("variable `{}` not defined (a pattern predicate cannot introduce new variables)", v.name),
                        ));
                    }
                    self.bind(&v.name, Type::Node, v.span);
                }
            }
        }
        self.properties(&n.properties, mode)
    }

    fn rel_pattern(
        &mut self,
        r: &RelationshipPattern,
        mode: PatternMode,
        seen: &mut Vec<String>,
    ) -> Result<()> {
        if let (Some(v), PatternMode::Create | PatternMode::Merge) = (&r.variable, mode) {
            if self.lookup(&v.name).is_some() {
                return Err(self.already_bound(v));
            }
        }
        if matches!(mode, PatternMode::Create | PatternMode::Merge) {
            let what = if mode == PatternMode::Create {
                "CREATE"
            } else {
                "MERGE"
            };
            if r.length.is_some() {
                return Err(self.err(
                    r.span,
                    "CreatingVarLength",
                    format!("variable length relationships cannot be used in {what}"),
                ));
            }
            if r.types.len() != 1 {
                return Err(self.err(
                    r.span,
                    "NoSingleRelationshipType",
                    format!("exactly one relationship type must be specified for {what}"),
                ));
            }
            if mode == PatternMode::Create && r.direction == Direction::Both {
                return Err(self.err(
                    r.span,
                    "RequiresDirectedRelationship",
                    "only directed relationships are supported in CREATE",
                ));
            }
        }
        let ty = if r.length.is_some() {
            Type::List(Box::new(Type::Relationship))
        } else {
            Type::Relationship
        };
        if let Some(v) = &r.variable {
            match self.lookup(&v.name) {
                Some(i) => {
                    self.references.push((v.span, i));
                    if matches!(mode, PatternMode::Create | PatternMode::Merge) {
                        return Err(self.already_bound(v));
                    }
                    let bound = self.ty_of(i);
                    let compatible = match (&bound, &ty) {
                        (Type::Any | Type::Null, _) => true,
                        (Type::Relationship, Type::Relationship) => true,
                        (Type::List(e), Type::List(_)) => {
                            matches!(**e, Type::Relationship | Type::Any | Type::Null)
                        }
                        _ => false,
                    };
                    if !compatible {
                        return Err(self.err(
                            v.span,
                            "VariableTypeConflict",
                            format!("variable `{}` is {bound}, not {ty}", v.name),
                        ));
                    }
                    if seen.contains(&v.name) && ty == Type::Relationship {
                        return Err(self.err(
                            v.span,
                            "RelationshipUniquenessViolation",
                            format!("relationship variable `{}` is used more than once in the same pattern", v.name),
                        ));
                    }
                    self.refine(i, ty);
                }
                None => {
                    if mode == PatternMode::Predicate {
                        return Err(self.err(
                            v.span,
                            "UndefinedVariable",
                            format!("variable `{}` not defined (a pattern predicate cannot introduce new variables)", v.name),
                        ));
                    }
                    self.bind(&v.name, ty, v.span);
                }
            }
            seen.push(v.name.clone());
        }
        self.properties(&r.properties, mode)
    }
}
