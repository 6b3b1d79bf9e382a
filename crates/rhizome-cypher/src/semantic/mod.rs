//! Semantic analysis: scoping, static types, aggregation rules, function
//! signatures and clause composition.
//!
//! [`analyze`] checks a parsed [`Statement`] and returns an
//! [`AnalyzedStatement`] holding the AST plus what the planner needs:
//! every variable with its kind/type and where it is bound, which span each
//! variable reference resolves to, the output columns of every projection
//! and the spans of all aggregate function calls.
//!
//! Compile-time errors carry the kind and detail code the openCypher TCK
//! expects (mostly `SyntaxError` with codes such as `UndefinedVariable`,
//! `VariableTypeConflict`, `InvalidAggregation`), a message and a position.
//! Analysis recursion is bounded because the parser bounds AST depth.

mod clauses;
mod expressions;
mod patterns;
mod projection;
pub mod types;

use crate::ast::*;
use crate::error::{error_at, with_stack_fallback, StackGuard};
use rhizome_common::{Error, ErrorKind, Result};
pub use types::Type;

/// The declared signature of a procedure, for checking `CALL`.
#[derive(Debug, Clone, PartialEq)]
pub struct ProcedureSignature {
    /// Qualified name, e.g. `db.labels` (compared case-sensitively).
    pub name: String,
    /// Input parameters (name, type).
    pub inputs: Vec<(String, Type)>,
    /// How many of the last inputs have a default and may be left out.
    pub optional: usize,
    /// Output fields (name, type).
    pub outputs: Vec<(String, Type)>,
}

/// Knowledge that sharpens analysis. The default knows no procedures (so
/// `CALL` of any name is accepted and checked at run time) and no parameters.
#[derive(Debug, Clone, Default)]
pub struct AnalyzeOptions {
    /// Known procedures; when `Some`, calls to other names fail with
    /// `ProcedureError: ProcedureNotFound` and arguments are counted.
    pub procedures: Option<Vec<ProcedureSignature>>,
    /// Names of the parameters supplied with the query; when `Some`,
    /// implicit procedure arguments must be among them (`ParameterMissing`).
    pub parameters: Option<Vec<String>>,
}

/// A variable binding found by analysis.
#[derive(Debug, Clone, PartialEq)]
pub struct VariableInfo {
    /// The variable's name.
    pub name: String,
    /// Its static type: `Node`, `Relationship`, `List<Relationship>` (variable
    /// length), `Path`, or a value type (`Any` when unknown).
    pub ty: Type,
    /// The span of the binding occurrence (pattern element, alias, ...).
    pub declared_at: Span,
}

/// The output of one `WITH` / `RETURN` (or of a `YIELD`).
#[derive(Debug, Clone, PartialEq)]
pub struct ProjectionInfo {
    /// The span of the clause.
    pub span: Span,
    /// Column names in order.
    pub columns: Vec<String>,
    /// Whether the projection aggregates (has grouping semantics).
    pub aggregating: bool,
}

/// A statement that passed semantic analysis, with resolved information.
#[derive(Debug, Clone)]
pub struct AnalyzedStatement {
    /// The statement.
    pub statement: Statement,
    /// Every variable binding, in order of discovery.
    pub variables: Vec<VariableInfo>,
    /// Each variable reference's span and the index of its binding in `variables`.
    pub references: Vec<(Span, usize)>,
    /// Every projection, in source order.
    pub projections: Vec<ProjectionInfo>,
    /// The spans of aggregate function calls (including `count(*)`).
    pub aggregates: Vec<Span>,
    /// The result columns of the statement (empty when it returns nothing).
    pub columns: Vec<String>,
    /// Whether the statement writes to the graph.
    pub updating: bool,
}

/// Analyses `statement`, whose source text is `source` (used for error
/// positions; pass `""` for ASTs without source), with default options.
pub fn analyze(statement: &Statement, source: &str) -> Result<AnalyzedStatement> {
    analyze_with(statement, source, &AnalyzeOptions::default())
}

/// Analyses `statement` with extra knowledge about procedures and parameters.
pub fn analyze_with(
    statement: &Statement,
    source: &str,
    options: &AnalyzeOptions,
) -> Result<AnalyzedStatement> {
    let parts = run(statement, source, options)?;
    Ok(parts.finish(statement.clone()))
}

/// Like [`analyze_with`] but takes ownership of the statement, avoiding a copy.
pub fn analyze_owned(
    statement: Statement,
    source: &str,
    options: &AnalyzeOptions,
) -> Result<AnalyzedStatement> {
    let parts = run(&statement, source, options)?;
    Ok(parts.finish(statement))
}

/// What analysis found, before it is joined with the statement.
struct Parts {
    variables: Vec<VariableInfo>,
    references: Vec<(Span, usize)>,
    projections: Vec<ProjectionInfo>,
    aggregates: Vec<Span>,
    columns: Vec<String>,
    updating: bool,
}

impl Parts {
    fn finish(self, statement: Statement) -> AnalyzedStatement {
        AnalyzedStatement {
            statement,
            variables: self.variables,
            references: self.references,
            projections: self.projections,
            aggregates: self.aggregates,
            columns: self.columns,
            updating: self.updating,
        }
    }
}

fn run(statement: &Statement, source: &str, options: &AnalyzeOptions) -> Result<Parts> {
    with_stack_fallback(|budget| {
        let mut a = Analyzer::new(source, options, budget);
        let result = a.statement(statement);
        let tripped = result.is_err() && a.guard.tripped.get();
        (result, tripped)
    })
}

impl<'a> Analyzer<'a> {
    fn new(source: &'a str, options: &'a AnalyzeOptions, budget: usize) -> Analyzer<'a> {
        Analyzer {
            src: source,
            opts: options,
            variables: Vec::new(),
            references: Vec::new(),
            projections: Vec::new(),
            aggregates: Vec::new(),
            frames: vec![Vec::new()],
            updating: false,
            guard: StackGuard::new(budget),
        }
    }

    fn statement(&mut self, statement: &Statement) -> Result<Parts> {
        let columns = match &statement.kind {
            StatementKind::Query(q) => self.query(q, QueryKind::Top)?,
            StatementKind::TerminateTransactions(ids) => {
                for e in ids {
                    self.expr(e, Ctx::plain())?;
                }
                Vec::new()
            }
            _ => Vec::new(),
        };
        Ok(Parts {
            variables: std::mem::take(&mut self.variables),
            references: std::mem::take(&mut self.references),
            projections: std::mem::take(&mut self.projections),
            aggregates: std::mem::take(&mut self.aggregates),
            columns,
            updating: self.updating,
        })
    }
}

/// Where a query sits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum QueryKind {
    /// The statement's query.
    Top,
    /// Inside `CALL { }`.
    CallSubquery,
    /// Inside `EXISTS { }` / `COUNT { }`.
    ExpressionSubquery,
}

/// Expression context flags.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Ctx {
    /// Aggregate function calls are allowed here.
    pub aggregates: bool,
    /// A pattern predicate is allowed here (boolean position in WHERE).
    pub predicate: bool,
    /// Inside the arguments of an aggregate function: another aggregate is
    /// a `NestedAggregation`, a non-deterministic function a
    /// `NonConstantExpression`.
    pub in_aggregate: bool,
}

impl Ctx {
    pub(crate) fn plain() -> Ctx {
        Ctx {
            aggregates: false,
            predicate: false,
            in_aggregate: false,
        }
    }
}

pub(crate) struct Analyzer<'a> {
    pub(crate) src: &'a str,
    pub(crate) opts: &'a AnalyzeOptions,
    pub(crate) variables: Vec<VariableInfo>,
    pub(crate) references: Vec<(Span, usize)>,
    pub(crate) projections: Vec<ProjectionInfo>,
    pub(crate) aggregates: Vec<Span>,
    /// Scope frames, innermost last; each maps names to `variables` indices.
    pub(crate) frames: Vec<Vec<(String, usize)>>,
    pub(crate) updating: bool,
    pub(crate) guard: StackGuard,
}

impl<'a> Analyzer<'a> {
    pub(crate) fn err(&self, span: Span, code: &'static str, message: impl Into<String>) -> Error {
        error_at(self.src, span, ErrorKind::SyntaxError, code, message)
    }

    pub(crate) fn err_kind(
        &self,
        span: Span,
        kind: ErrorKind,
        code: &'static str,
        message: impl Into<String>,
    ) -> Error {
        error_at(self.src, span, kind, code, message)
    }

    /// Fails cleanly when analysis has used up its stack budget.
    pub(crate) fn check_stack(&self, span: Span) -> Result<()> {
        if self.guard.exhausted() {
            return Err(self.err(
                span,
                "UnexpectedSyntax",
                "query is nested too deeply to analyse",
            ));
        }
        Ok(())
    }

    pub(crate) fn lookup(&self, name: &str) -> Option<usize> {
        for frame in self.frames.iter().rev() {
            if let Some((_, i)) = frame.iter().rev().find(|(n, _)| n == name) {
                return Some(*i);
            }
        }
        None
    }

    pub(crate) fn ty_of(&self, index: usize) -> Type {
        self.variables[index].ty.clone()
    }

    /// Binds `name` in the innermost frame.
    pub(crate) fn bind(&mut self, name: &str, ty: Type, span: Span) -> usize {
        let index = self.variables.len();
        self.variables.push(VariableInfo {
            name: name.to_string(),
            ty,
            declared_at: span,
        });
        if let Some(frame) = self.frames.last_mut() {
            frame.push((name.to_string(), index));
        }
        index
    }

    /// Refines the type of a bound variable (e.g. `Any` becomes `Node` once matched).
    pub(crate) fn refine(&mut self, index: usize, ty: Type) {
        if self.variables[index].ty == Type::Any || self.variables[index].ty == Type::Null {
            self.variables[index].ty = ty;
        }
    }

    /// Runs `f` with a fresh innermost frame, removed afterwards.
    pub(crate) fn scoped<T>(&mut self, f: impl FnOnce(&mut Self) -> Result<T>) -> Result<T> {
        self.push_frame();
        let result = f(self);
        self.pop_frame();
        result
    }

    pub(crate) fn push_frame(&mut self) {
        self.frames.push(Vec::new());
    }

    pub(crate) fn pop_frame(&mut self) {
        self.frames.pop();
    }

    /// Names visible in the innermost frame, in binding order, deduplicated.
    pub(crate) fn current_names(&self) -> Vec<(String, usize)> {
        let mut out: Vec<(String, usize)> = Vec::new();
        if let Some(frame) = self.frames.last() {
            for (n, i) in frame {
                if let Some(existing) = out.iter_mut().find(|(m, _)| m == n) {
                    existing.1 = *i;
                } else {
                    out.push((n.clone(), *i));
                }
            }
        }
        out
    }
}
