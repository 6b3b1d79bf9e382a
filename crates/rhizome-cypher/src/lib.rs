//! Rhizome's Cypher front end: text → tokens → AST with spans → semantically
//! checked statement ready for the planner.
//!
//! * [`parse`] turns query text into an [`ast::Statement`] (syntax errors are
//!   `SyntaxError`s with the TCK's detail codes and a position).
//! * [`analyze`] checks a parsed statement (scoping, types, aggregation,
//!   function signatures, clause rules) and returns an
//!   [`semantic::AnalyzedStatement`] carrying the AST plus resolved variable
//!   information, the output columns of every projection and which function
//!   calls aggregate.
//! * [`compile`] does both.
//! * [`printer::print_statement`] prints an AST back to Cypher such that
//!   parsing the output yields an equal AST.
//!
//! None of these functions panics or recurses without bound, whatever the input.

pub mod ast;
pub mod error;
pub mod functions;
pub mod lexer;
pub mod parser;
pub mod printer;
pub mod query_options;
pub mod semantic;

pub use parser::{parse, parse_expression};
pub use semantic::{analyze, analyze_owned, analyze_with, AnalyzeOptions, AnalyzedStatement};

/// Parses and analyses `text` in one step.
pub fn compile(text: &str) -> rhizome_common::Result<AnalyzedStatement> {
    let statement = parse(text)?;
    analyze_owned(statement, text, &AnalyzeOptions::default())
}
