//! Cypher's operators over [`Value`](rhizome_common::Value)s.
//!
//! Every function is pure. Null handling follows Cypher: arithmetic and
//! comparisons with null give null; `AND`/`OR` use three-valued logic.

mod access;
mod arith;
mod compare;
mod group_key;
mod logic;
mod strings;

pub use access::{index, property, slice};
pub use arith::{add, divide, modulo, multiply, negate, power, subtract, unary_plus};
pub use compare::{
    compare, equals, equivalent, greater_equal, greater_than, less_equal, less_than, order,
    order_desc,
};
pub use group_key::{hash_equivalent, GroupKey, KeyHasher, KeyMap, KeySet};
pub use logic::{and, eq_value, in_list, is_not_null, is_null, ne_value, not, or, xor};
pub use strings::{contains, ends_with, regex_match, starts_with};
