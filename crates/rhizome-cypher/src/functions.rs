//! The registry of built-in function signatures used for checking calls:
//! name, arity range, whether it aggregates, and the argument kinds that can
//! be rejected at compile time when an argument's type is statically known.
//! The planner/runtime implements the functions; this module only describes
//! them.

/// What an argument must be (checked only against statically known types).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArgKind {
    /// Anything.
    Any,
    /// A node, relationship or map (`properties`, `keys`).
    EntityOrMap,
    /// A node.
    Node,
    /// A relationship.
    Relationship,
    /// A path.
    Path,
    /// A node or relationship.
    Entity,
    /// A list.
    List,
    /// A number.
    Number,
    /// A string.
    String,
    /// A list, string or path (`size`, `length`-like).
    Sized,
}

/// The signature of one function.
#[derive(Debug, Clone, Copy)]
pub struct FunctionSignature {
    /// Lower-case qualified name, e.g. `count`, `date.truncate`.
    pub name: &'static str,
    /// Fewest arguments.
    pub min_args: usize,
    /// Most arguments (`usize::MAX` for variadic).
    pub max_args: usize,
    /// Whether it is an aggregate function.
    pub aggregate: bool,
    /// Kinds of the leading arguments (missing entries mean [`ArgKind::Any`]).
    pub args: &'static [ArgKind],
}

const fn f(
    name: &'static str,
    min_args: usize,
    max_args: usize,
    args: &'static [ArgKind],
) -> FunctionSignature {
    FunctionSignature {
        name,
        min_args,
        max_args,
        aggregate: false,
        args,
    }
}

const fn agg(name: &'static str, min_args: usize, max_args: usize) -> FunctionSignature {
    FunctionSignature {
        name,
        min_args,
        max_args,
        aggregate: true,
        args: &[],
    }
}

use ArgKind::*;

const V: usize = usize::MAX;

/// Every built-in function.
pub static FUNCTIONS: &[FunctionSignature] = &[
    // aggregates
    agg("count", 1, 1),
    agg("sum", 1, 1),
    agg("avg", 1, 1),
    agg("min", 1, 1),
    agg("max", 1, 1),
    agg("collect", 1, 1),
    agg("stdev", 1, 1),
    agg("stdevp", 1, 1),
    agg("percentilecont", 2, 2),
    agg("percentiledisc", 2, 2),
    // graph
    f("id", 1, 1, &[Entity]),
    f("elementid", 1, 1, &[Entity]),
    f("labels", 1, 1, &[Node]),
    f("type", 1, 1, &[Relationship]),
    f("properties", 1, 1, &[EntityOrMap]),
    f("keys", 1, 1, &[EntityOrMap]),
    f("nodes", 1, 1, &[Path]),
    f("relationships", 1, 1, &[Path]),
    f("startnode", 1, 1, &[Relationship]),
    f("endnode", 1, 1, &[Relationship]),
    f("length", 1, 1, &[Path]),
    f("exists", 1, 1, &[]),
    // lists and scalars
    f("size", 1, 1, &[Sized]),
    f("head", 1, 1, &[List]),
    f("last", 1, 1, &[List]),
    f("tail", 1, 1, &[List]),
    f("reverse", 1, 1, &[]),
    f("range", 2, 3, &[]),
    f("coalesce", 1, V, &[]),
    f("isempty", 1, 1, &[]),
    f("timestamp", 0, 0, &[]),
    f("randomuuid", 0, 0, &[]),
    f("valuetype", 1, 1, &[]),
    f("tointeger", 1, 1, &[]),
    f("tofloat", 1, 1, &[]),
    f("tostring", 1, 1, &[]),
    f("toboolean", 1, 1, &[]),
    f("tointegerornull", 1, 1, &[]),
    f("tofloatornull", 1, 1, &[]),
    f("tostringornull", 1, 1, &[]),
    f("tobooleanornull", 1, 1, &[]),
    f("tointegerlist", 1, 1, &[List]),
    f("tofloatlist", 1, 1, &[List]),
    f("tostringlist", 1, 1, &[List]),
    f("tobooleanlist", 1, 1, &[List]),
    // math
    f("abs", 1, 1, &[Number]),
    f("ceil", 1, 1, &[Number]),
    f("floor", 1, 1, &[Number]),
    f("round", 1, 3, &[Number, Number]),
    f("sign", 1, 1, &[Number]),
    f("rand", 0, 0, &[]),
    f("sqrt", 1, 1, &[Number]),
    f("exp", 1, 1, &[Number]),
    f("log", 1, 1, &[Number]),
    f("log10", 1, 1, &[Number]),
    f("e", 0, 0, &[]),
    f("pi", 0, 0, &[]),
    f("sin", 1, 1, &[Number]),
    f("cos", 1, 1, &[Number]),
    f("tan", 1, 1, &[Number]),
    f("cot", 1, 1, &[Number]),
    f("asin", 1, 1, &[Number]),
    f("acos", 1, 1, &[Number]),
    f("atan", 1, 1, &[Number]),
    f("atan2", 2, 2, &[Number, Number]),
    f("haversin", 1, 1, &[Number]),
    f("degrees", 1, 1, &[Number]),
    f("radians", 1, 1, &[Number]),
    f("isnan", 1, 1, &[Number]),
    // strings
    f("left", 2, 2, &[String, Number]),
    f("right", 2, 2, &[String, Number]),
    f("substring", 2, 3, &[String, Number, Number]),
    f("tolower", 1, 1, &[String]),
    f("toupper", 1, 1, &[String]),
    f("lower", 1, 1, &[String]),
    f("upper", 1, 1, &[String]),
    f("trim", 1, 1, &[String]),
    f("ltrim", 1, 2, &[String, String]),
    f("rtrim", 1, 2, &[String, String]),
    f("btrim", 1, 2, &[String, String]),
    f("replace", 3, 3, &[String, String, String]),
    f("split", 2, 2, &[String]),
    f("char_length", 1, 1, &[String]),
    f("character_length", 1, 1, &[String]),
    // spatial
    f("point", 1, 1, &[]),
    f("distance", 2, 2, &[]),
    f("point.distance", 2, 2, &[]),
    f("point.withinbbox", 3, 3, &[]),
    // temporal
    f("date", 0, 1, &[]),
    f("datetime", 0, 1, &[]),
    f("localdatetime", 0, 1, &[]),
    f("time", 0, 1, &[]),
    f("localtime", 0, 1, &[]),
    f("duration", 1, 1, &[]),
    f("date.truncate", 1, 3, &[String]),
    f("datetime.truncate", 1, 3, &[String]),
    f("localdatetime.truncate", 1, 3, &[String]),
    f("time.truncate", 1, 3, &[String]),
    f("localtime.truncate", 1, 3, &[String]),
    f("date.transaction", 0, 1, &[]),
    f("date.statement", 0, 1, &[]),
    f("date.realtime", 0, 1, &[]),
    f("datetime.transaction", 0, 1, &[]),
    f("datetime.statement", 0, 1, &[]),
    f("datetime.realtime", 0, 1, &[]),
    f("localdatetime.transaction", 0, 1, &[]),
    f("localdatetime.statement", 0, 1, &[]),
    f("localdatetime.realtime", 0, 1, &[]),
    f("time.transaction", 0, 1, &[]),
    f("time.statement", 0, 1, &[]),
    f("time.realtime", 0, 1, &[]),
    f("localtime.transaction", 0, 1, &[]),
    f("localtime.statement", 0, 1, &[]),
    f("localtime.realtime", 0, 1, &[]),
    f("datetime.fromepoch", 2, 2, &[Number, Number]),
    f("datetime.fromepochmillis", 1, 1, &[Number]),
    f("duration.between", 2, 2, &[]),
    f("duration.inmonths", 2, 2, &[]),
    f("duration.indays", 2, 2, &[]),
    f("duration.inseconds", 2, 2, &[]),
];

/// Looks a function up by its qualified name (case-insensitive).
pub fn lookup(name: &str) -> Option<&'static FunctionSignature> {
    FUNCTIONS.iter().find(|f| f.name.eq_ignore_ascii_case(name))
}

/// Looks a function up by its name parts (namespace parts then name),
/// without allocating.
pub fn lookup_parts<S: AsRef<str>>(parts: &[S]) -> Option<&'static FunctionSignature> {
    let total: usize =
        parts.iter().map(|p| p.as_ref().len()).sum::<usize>() + parts.len().saturating_sub(1);
    FUNCTIONS.iter().find(|f| {
        if f.name.len() != total {
            return false;
        }
        let mut rest = f.name;
        for (i, p) in parts.iter().enumerate() {
            let p = p.as_ref();
            if i > 0 {
                match rest.strip_prefix('.') {
                    Some(r) => rest = r,
                    None => return false,
                }
            }
            match rest.get(..p.len()) {
                Some(head) if head.eq_ignore_ascii_case(p) => rest = &rest[p.len()..],
                _ => return false,
            }
        }
        rest.is_empty()
    })
}

/// Whether `name` is an aggregate function.
pub fn is_aggregate(name: &str) -> bool {
    lookup(name).is_some_and(|f| f.aggregate)
}

#[cfg(test)]
mod tests {
    #[test]
    fn lookup_is_case_insensitive() {
        assert!(super::lookup("toUpper").is_some());
        assert!(super::is_aggregate("COUNT"));
        assert!(super::lookup("date.TRUNCATE").is_some());
        assert!(super::lookup("nope").is_none());
    }
}
