//! Expression checking and static type inference.

use super::patterns::PatternMode;
use super::{Analyzer, Ctx, QueryKind, Type};
use crate::ast::*;
use crate::functions::{self, ArgKind};
use rhizome_common::Result;

impl<'a> Analyzer<'a> {
    /// A boolean predicate (`WHERE`): pattern predicates allowed, aggregates not.
    pub(crate) fn predicate(&mut self, e: &Expr) -> Result<()> {
        let ty = self.expr(
            e,
            Ctx {
                aggregates: false,
                predicate: true,
                in_aggregate: false,
            },
        )?;
        self.expect_boolean(e, &ty)
    }

    fn expect_boolean(&self, e: &Expr, ty: &Type) -> Result<()> {
        if !ty.may_be_boolean() {
            return Err(self.err(
                e.span,
                "InvalidArgumentType",
                format!("expected a boolean but got {ty}"),
            ));
        }
        Ok(())
    }

    fn bool_operand(&mut self, e: &Expr, ctx: Ctx) -> Result<()> {
        let ty = self.expr(e, ctx)?;
        self.expect_boolean(e, &ty)
    }

    /// Checks the list of a comprehension, `reduce` or quantifier and
    /// returns its type; a type that can never be a list is an
    /// `InvalidArgumentType` error at the list.
    fn list_operand(&mut self, list: &Expr, ctx: Ctx) -> Result<Type> {
        let ty = self.expr(list, ctx)?;
        if !ty.may_be_list() {
            return Err(self.err(
                list.span,
                "InvalidArgumentType",
                format!("expected a list but got {ty}"),
            ));
        }
        Ok(ty)
    }

    /// Checks the `WHERE` of a comprehension or quantifier, if any, as a
    /// boolean predicate in the element scope described by `ctx`.
    fn element_predicate(&mut self, predicate: Option<&Expr>, ctx: Ctx) -> Result<()> {
        match predicate {
            Some(p) => self.bool_operand(
                p,
                Ctx {
                    predicate: true,
                    ..ctx
                },
            ),
            None => Ok(()),
        }
    }

    /// Checks `e` and returns its static type.
    pub(crate) fn expr(&mut self, e: &Expr, ctx: Ctx) -> Result<Type> {
        self.check_stack(e.span)?;
        let value_ctx = Ctx {
            predicate: false,
            ..ctx
        };
        let ty = match &e.kind {
            ExprKind::Literal(l) => match l {
                Literal::Null => Type::Null,
                Literal::Bool(_) => Type::Boolean,
                Literal::Integer(_) => Type::Integer,
                Literal::Float(_) => Type::Float,
                Literal::String(_) => Type::String,
            },
            ExprKind::Parameter(_) => Type::Any,
            ExprKind::Variable(name) => match self.lookup(name) {
                Some(i) => {
                    self.references.push((e.span, i));
                    self.ty_of(i)
                }
                None => {
                    return Err(self.err(
                        e.span,
                        "UndefinedVariable",
                        format!("variable `{name}` not defined"),
                    ))
                }
            },
            ExprKind::List(items) => {
                let mut elem = Type::Null;
                for (i, item) in items.iter().enumerate() {
                    let t = self.expr(item, value_ctx)?;
                    elem = if i == 0 { t } else { elem.join(&t) };
                }
                if items.is_empty() {
                    elem = Type::Any;
                }
                Type::List(Box::new(elem))
            }
            ExprKind::Map(entries) => {
                for (_, v) in entries {
                    self.expr(v, value_ctx)?;
                }
                Type::Map
            }
            ExprKind::Property(base, key) => {
                let t = self.expr(base, value_ctx)?;
                if !t.may_have_properties() {
                    return Err(self.err_kind(
                        e.span,
                        rhizome_common::ErrorKind::TypeError,
                        "InvalidArgumentType",
                        format!("cannot access property `{}` of a {t}", key.name),
                    ));
                }
                Type::Any
            }
            ExprKind::Index(base, index) => {
                // Indexing with a value of the wrong type is a TypeError
                // whenever it is found: here when the types are known, at
                // run time (`rhizome_functions::ops::index`) otherwise.
                let t = self.expr(base, value_ctx)?;
                let it = self.expr(index, value_ctx)?;
                let type_error = |span, code, message: String| {
                    self.err_kind(span, rhizome_common::ErrorKind::TypeError, code, message)
                };
                match t {
                    Type::List(elem) => {
                        if !it.may_be_integer() {
                            return Err(type_error(
                                index.span,
                                "ListElementAccessByNonInteger",
                                format!("a list can only be indexed by an integer, not by {it}"),
                            ));
                        }
                        *elem
                    }
                    Type::Node | Type::Relationship | Type::Map => {
                        if !it.may_be_string() {
                            return Err(type_error(
                                index.span,
                                "MapElementAccessByNonString",
                                format!("a map can only be indexed by a string, not by {it}"),
                            ));
                        }
                        Type::Any
                    }
                    Type::Integer | Type::Float | Type::Boolean | Type::String | Type::Path => {
                        return Err(type_error(
                            e.span,
                            "InvalidArgumentType",
                            format!("cannot index into a {t}"),
                        ));
                    }
                    _ => Type::Any,
                }
            }
            ExprKind::Slice(base, from, to) => {
                let t = self.expr(base, value_ctx)?;
                for b in [from, to].into_iter().flatten() {
                    self.expr(b, value_ctx)?;
                }
                if !t.may_be_list() {
                    return Err(self.err(
                        e.span,
                        "InvalidArgumentType",
                        format!("cannot slice a {t}"),
                    ));
                }
                t
            }
            ExprKind::Unary(op, operand) => match op {
                // The operand of NOT is a boolean position, so a pattern
                // predicate is allowed there in any clause (Neo4j accepts
                // `RETURN NOT (a)-[:KNOWS]-(b) AS stranger`).
                UnaryOp::Not => {
                    self.bool_operand(
                        operand,
                        Ctx {
                            predicate: true,
                            ..ctx
                        },
                    )?;
                    Type::Boolean
                }
                UnaryOp::Neg | UnaryOp::Plus => {
                    let t = self.expr(operand, value_ctx)?;
                    match t {
                        Type::Integer | Type::Float => t,
                        Type::Boolean
                        | Type::String
                        | Type::List(_)
                        | Type::Map
                        | Type::Node
                        | Type::Relationship
                        | Type::Path => {
                            return Err(self.err(
                                e.span,
                                "InvalidArgumentType",
                                format!("cannot negate a {t}"),
                            ));
                        }
                        _ => Type::Any,
                    }
                }
            },
            ExprKind::Binary(op, l, r) => match op {
                BinaryOp::And | BinaryOp::Or | BinaryOp::Xor => {
                    self.bool_operand(l, ctx)?;
                    self.bool_operand(r, ctx)?;
                    Type::Boolean
                }
                BinaryOp::StartsWith
                | BinaryOp::EndsWith
                | BinaryOp::Contains
                | BinaryOp::RegexMatch => {
                    self.expr(l, value_ctx)?;
                    self.expr(r, value_ctx)?;
                    Type::Boolean
                }
                BinaryOp::In => {
                    self.expr(l, value_ctx)?;
                    let rt = self.expr(r, value_ctx)?;
                    if !rt.may_be_list() {
                        return Err(self.err(
                            r.span,
                            "InvalidArgumentType",
                            format!("IN expects a list but got {rt}"),
                        ));
                    }
                    Type::Boolean
                }
                _ => {
                    let lt = self.expr(l, value_ctx)?;
                    let rt = self.expr(r, value_ctx)?;
                    if let Some(bad) = arithmetic_mismatch(*op, &lt, &rt) {
                        return Err(self.err(
                            e.span,
                            "InvalidArgumentType",
                            format!("arithmetic is not defined for {bad}"),
                        ));
                    }
                    arithmetic_type(*op, &lt, &rt)
                }
            },
            ExprKind::Comparison(first, rest) => {
                self.expr(first, value_ctx)?;
                for (_, operand) in rest {
                    self.expr(operand, value_ctx)?;
                }
                Type::Boolean
            }
            ExprKind::IsNull(operand, _) => {
                self.expr(operand, value_ctx)?;
                Type::Boolean
            }
            ExprKind::HasLabels(operand, _) => {
                let t = self.expr(operand, value_ctx)?;
                if !(t.may_be_node() || t.may_be_relationship()) {
                    return Err(self.err(
                        e.span,
                        "InvalidArgumentType",
                        format!("label predicates need a node but got {t}"),
                    ));
                }
                Type::Boolean
            }
            ExprKind::Case {
                operand,
                whens,
                else_,
            } => {
                if let Some(o) = operand {
                    self.expr(o, value_ctx)?;
                }
                let mut result = Type::Null;
                for (cond, value) in whens {
                    if operand.is_some() {
                        self.expr(cond, value_ctx)?;
                    } else {
                        self.bool_operand(
                            cond,
                            Ctx {
                                predicate: true,
                                ..ctx
                            },
                        )?;
                    }
                    let t = self.expr(value, value_ctx)?;
                    result = result.join(&t);
                }
                if let Some(e) = else_ {
                    let t = self.expr(e, value_ctx)?;
                    result = result.join(&t);
                }
                result
            }
            ExprKind::FunctionCall {
                name,
                distinct,
                args,
            } => self.function_call(e, name, *distinct, args, ctx)?,
            ExprKind::CountStar => {
                if !ctx.aggregates {
                    return Err(self.err(
                        e.span,
                        misplaced_aggregate(ctx),
                        "aggregate function `count(*)` is not allowed here",
                    ));
                }
                self.aggregates.push(e.span);
                Type::Integer
            }
            ExprKind::ListComprehension {
                variable,
                list,
                predicate,
                projection,
            } => {
                let lt = self.list_operand(list, value_ctx)?;
                let r = self.scoped(|this| {
                    this.bind(&variable.name, lt.element(), variable.span);
                    let inner = Ctx {
                        aggregates: false,
                        predicate: false,
                        in_aggregate: ctx.in_aggregate,
                    };
                    this.element_predicate(predicate.as_deref(), inner)?;
                    match projection {
                        Some(p) => Ok(Type::List(Box::new(this.expr(p, inner)?))),
                        None => Ok(lt.clone()),
                    }
                });
                r?
            }
            ExprKind::PatternComprehension {
                variable,
                pattern,
                predicate,
                projection,
            } => {
                let r = self.scoped(|this| {
                    let part = PatternPart {
                        variable: variable.clone(),
                        shortest: None,
                        element: pattern.clone(),
                        span: pattern.span,
                    };
                    this.pattern_part(&part, PatternMode::Match, &mut Vec::new())?;
                    let inner = Ctx {
                        aggregates: false,
                        predicate: false,
                        in_aggregate: ctx.in_aggregate,
                    };
                    this.element_predicate(predicate.as_deref(), inner)?;
                    Ok(Type::List(Box::new(this.expr(projection, inner)?)))
                });
                r?
            }
            ExprKind::Reduce {
                accumulator,
                init,
                variable,
                list,
                expr,
            } => {
                let it = self.expr(init, value_ctx)?;
                let lt = self.list_operand(list, value_ctx)?;
                let r = self.scoped(|this| {
                    this.bind(&accumulator.name, it.clone(), accumulator.span);
                    this.bind(&variable.name, lt.element(), variable.span);
                    this.expr(expr, Ctx::plain())
                });
                r?
            }
            ExprKind::Quantified {
                variable,
                list,
                predicate,
                ..
            } => {
                let lt = self.list_operand(list, value_ctx)?;
                let r = self.scoped(|this| {
                    this.bind(&variable.name, lt.element(), variable.span);
                    this.element_predicate(
                        predicate.as_deref(),
                        Ctx {
                            aggregates: false,
                            predicate: false,
                            in_aggregate: ctx.in_aggregate,
                        },
                    )
                });
                r?;
                Type::Boolean
            }
            ExprKind::PatternPredicate(element) => {
                if !ctx.predicate {
                    return Err(self.err(
                        e.span,
                        "UnexpectedSyntax",
                        "a pattern expression can only be used as a predicate (in WHERE or EXISTS); use a pattern comprehension or COUNT { } for values",
                    ));
                }
                let part = PatternPart {
                    variable: None,
                    shortest: None,
                    element: element.clone(),
                    span: element.span,
                };
                self.pattern_part(&part, PatternMode::Predicate, &mut Vec::new())?;
                Type::Boolean
            }
            ExprKind::Exists(body) => {
                self.subquery_body(body)?;
                Type::Boolean
            }
            ExprKind::CountSubquery(body) => {
                self.subquery_body(body)?;
                Type::Integer
            }
            ExprKind::MapProjection(var, items) => {
                let Some(i) = self.lookup(&var.name) else {
                    return Err(self.err(
                        var.span,
                        "UndefinedVariable",
                        format!("variable `{}` not defined", var.name),
                    ));
                };
                self.references.push((var.span, i));
                let t = self.ty_of(i);
                if !t.may_have_properties() {
                    return Err(self.err(
                        var.span,
                        "InvalidArgumentType",
                        format!("map projection needs a node, relationship or map but got {t}"),
                    ));
                }
                for item in items {
                    match item {
                        MapProjectionItem::Literal(_, v) => {
                            self.expr(v, value_ctx)?;
                        }
                        MapProjectionItem::Variable(v) => match self.lookup(&v.name) {
                            Some(i) => self.references.push((v.span, i)),
                            None => {
                                return Err(self.err(
                                    v.span,
                                    "UndefinedVariable",
                                    format!("variable `{}` not defined", v.name),
                                ))
                            }
                        },
                        _ => {}
                    }
                }
                Type::Map
            }
        };
        Ok(ty)
    }

    fn subquery_body(&mut self, body: &SubqueryBody) -> Result<()> {
        match body {
            SubqueryBody::Pattern { pattern, where_ } => self.scoped(|this| {
                let mut seen = Vec::new();
                for part in pattern {
                    this.pattern_part(part, PatternMode::Match, &mut seen)?;
                }
                if let Some(w) = where_ {
                    this.predicate(w)?;
                }
                Ok(())
            }),
            SubqueryBody::Query(q) => {
                self.query(q, QueryKind::ExpressionSubquery)?;
                Ok(())
            }
        }
    }

    fn function_call(
        &mut self,
        e: &Expr,
        name: &[Ident],
        distinct: bool,
        args: &[Expr],
        ctx: Ctx,
    ) -> Result<Type> {
        let sig = match name {
            [single] => functions::lookup_parts(&[single.name.as_str()]),
            _ => functions::lookup(&join_names(name)),
        };
        let Some(sig) = sig else {
            return Err(self.err(
                e.span,
                "UnknownFunction",
                format!("unknown function `{}`", join_names(name)),
            ));
        };
        let qualified = sig.name;
        if args.len() < sig.min_args || args.len() > sig.max_args {
            let expected = if sig.min_args == sig.max_args {
                format!("{}", sig.min_args)
            } else if sig.max_args == usize::MAX {
                format!("at least {}", sig.min_args)
            } else {
                format!("{} to {}", sig.min_args, sig.max_args)
            };
            return Err(self.err(
                e.span,
                "InvalidNumberOfArguments",
                format!(
                    "function `{qualified}` takes {expected} argument(s) but {} were given",
                    args.len()
                ),
            ));
        }
        if sig.aggregate {
            if !ctx.aggregates {
                return Err(self.err(
                    e.span,
                    misplaced_aggregate(ctx),
                    format!("aggregate function `{qualified}` is not allowed here"),
                ));
            }
            self.aggregates.push(e.span);
        } else if distinct {
            return Err(self.err(
                e.span,
                "InvalidAggregation",
                format!("DISTINCT can only be used with aggregate functions, not `{qualified}`"),
            ));
        }
        if ctx.in_aggregate && sig.name == "rand" {
            // An aggregate's argument must be the same expression of each
            // row; a random number is not (openCypher: `count(rand())`).
            return Err(self.err(
                e.span,
                "NonConstantExpression",
                "a non-deterministic function such as `rand()` cannot be aggregated",
            ));
        }
        let inner = Ctx {
            aggregates: ctx.aggregates && !sig.aggregate,
            predicate: sig.name == "exists",
            in_aggregate: ctx.in_aggregate || sig.aggregate,
        };
        let mut types = Vec::with_capacity(args.len());
        for (i, arg) in args.iter().enumerate() {
            let t = self.expr(arg, inner)?;
            let kind = sig.args.get(i).copied().unwrap_or(ArgKind::Any);
            if !arg_accepts(kind, &t) {
                return Err(self.err(
                    arg.span,
                    "InvalidArgumentType",
                    format!("argument {} of `{qualified}` cannot be a {t}", i + 1),
                ));
            }
            types.push(t);
        }
        let first = types.first().cloned().unwrap_or(Type::Any);
        Ok(match sig.name {
            "count" | "size" | "length" | "id" | "timestamp" | "tointeger" | "sign" => {
                Type::Integer
            }
            "tofloat" | "avg" | "stdev" | "stdevp" | "rand" | "sqrt" | "e" | "pi" => Type::Float,
            "tostring" | "type" | "elementid" | "tolower" | "toupper" | "trim" | "substring"
            | "replace" | "left" | "right" => Type::String,
            "toboolean" | "exists" | "isempty" | "isnan" => Type::Boolean,
            "labels" | "keys" | "split" => Type::List(Box::new(Type::String)),
            "nodes" => Type::List(Box::new(Type::Node)),
            "relationships" => Type::List(Box::new(Type::Relationship)),
            "startnode" | "endnode" => Type::Node,
            "properties" => Type::Map,
            "collect" => Type::List(Box::new(if first == Type::Null {
                Type::Any
            } else {
                first
            })),
            "range" => Type::List(Box::new(Type::Integer)),
            "head" | "last" => first.element(),
            "tail" | "reverse" => match first {
                Type::List(_) => first,
                _ => Type::Any,
            },
            "min" | "max" | "sum" | "abs" => match first {
                Type::Integer | Type::Float => first,
                _ => Type::Any,
            },
            _ => Type::Any,
        })
    }
}

/// The detail code of an aggregate where none may be: inside another
/// aggregate's arguments it is nested, elsewhere misplaced.
fn misplaced_aggregate(ctx: Ctx) -> &'static str {
    if ctx.in_aggregate {
        "NestedAggregation"
    } else {
        "InvalidAggregation"
    }
}

fn arg_accepts(kind: ArgKind, t: &Type) -> bool {
    if matches!(t, Type::Any | Type::Null) {
        return true;
    }
    match kind {
        ArgKind::Any => true,
        ArgKind::EntityOrMap => matches!(t, Type::Map | Type::Node | Type::Relationship),
        ArgKind::Node => matches!(t, Type::Node),
        ArgKind::Relationship => matches!(t, Type::Relationship),
        ArgKind::Path => matches!(t, Type::Path),
        ArgKind::Entity => matches!(t, Type::Node | Type::Relationship),
        ArgKind::List => matches!(t, Type::List(_)),
        ArgKind::Number => matches!(t, Type::Integer | Type::Float),
        ArgKind::String => matches!(t, Type::String),
        // A path's length is `length(p)`; `size(p)` is a type error.
        ArgKind::Sized => matches!(t, Type::List(_) | Type::String),
    }
}

/// A statically known operand type that arithmetic cannot accept.
fn arithmetic_mismatch(op: BinaryOp, l: &Type, r: &Type) -> Option<Type> {
    let never = |t: &Type| {
        matches!(
            t,
            Type::Boolean | Type::Map | Type::Node | Type::Relationship | Type::Path
        )
    };
    if op == BinaryOp::Add {
        let concat = |t: &Type| matches!(t, Type::List(_) | Type::String | Type::Any | Type::Null);
        if concat(l) || concat(r) {
            return None;
        }
        return [l, r].into_iter().find(|t| never(t)).cloned();
    }
    [l, r]
        .into_iter()
        .find(|t| never(t) || matches!(t, Type::String | Type::List(_)))
        .cloned()
}

fn arithmetic_type(op: BinaryOp, l: &Type, r: &Type) -> Type {
    use Type::*;
    match (op, l, r) {
        (BinaryOp::Add, String, _) | (BinaryOp::Add, _, String) => String,
        (BinaryOp::Add, List(a), List(b)) => List(Box::new(a.join(b))),
        (BinaryOp::Add, List(a), other) | (BinaryOp::Add, other, List(a)) => {
            List(Box::new(a.join(other)))
        }
        (_, Integer, Integer) => Integer,
        (BinaryOp::Pow, _, _) if matches!(l, Integer | Float) && matches!(r, Integer | Float) => {
            Float
        }
        (_, Integer | Float, Integer | Float) => Float,
        _ => Any,
    }
}
