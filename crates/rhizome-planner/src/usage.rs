//! Which slots an expression or operator reads and writes: the analysis
//! lives in [`rhizome_plan::usage`] (the runtime uses it too, to key
//! memoized subqueries); re-exported here for the planner's rules.

pub use rhizome_plan::usage::*;
