//! The scalar function library: [`call`] evaluates a function by name and
//! [`function_signature`] is the runtime registry of every function this
//! crate implements (scalar and aggregate).
//!
//! Names are case-insensitive and may be namespaced (`date.truncate`,
//! `duration.between`, `datetime.fromepochmillis`). Argument counts are
//! checked against the registry (`SyntaxError: InvalidNumberOfArguments`
//! when wrong, so a front end that skipped the check still reports it).
//! Null arguments give null unless the function says otherwise
//! (`coalesce`).

pub mod convert;
pub mod entity;
pub mod list;
pub mod math;
pub mod misc;
pub mod spatial;
pub mod string;
pub mod temporal;

use crate::entity::EntityAccess;
use rhizome_common::{Error, ErrorKind, Result, Value};

/// Arity and kind of a function.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Signature {
    /// Least number of arguments.
    pub min_args: usize,
    /// Greatest number of arguments (`usize::MAX` for variadic functions).
    pub max_args: usize,
    /// True for aggregate functions (evaluated by [`crate::aggregate`]).
    pub is_aggregate: bool,
}

const fn sig(min_args: usize, max_args: usize) -> Signature {
    Signature {
        min_args,
        max_args,
        is_aggregate: false,
    }
}

const fn agg(min_args: usize, max_args: usize) -> Signature {
    Signature {
        min_args,
        max_args,
        is_aggregate: true,
    }
}

/// Every function, by lower-case name.
const REGISTRY: &[(&str, Signature)] = &[
    // Aggregates.
    ("count", agg(1, 1)),
    ("sum", agg(1, 1)),
    ("avg", agg(1, 1)),
    ("min", agg(1, 1)),
    ("max", agg(1, 1)),
    ("collect", agg(1, 1)),
    ("stdev", agg(1, 1)),
    ("stdevp", agg(1, 1)),
    ("percentilecont", agg(2, 2)),
    ("percentiledisc", agg(2, 2)),
    // Math.
    ("abs", sig(1, 1)),
    ("ceil", sig(1, 1)),
    ("floor", sig(1, 1)),
    ("round", sig(1, 3)),
    ("sign", sig(1, 1)),
    ("rand", sig(0, 0)),
    ("sqrt", sig(1, 1)),
    ("exp", sig(1, 1)),
    ("log", sig(1, 1)),
    ("log10", sig(1, 1)),
    ("e", sig(0, 0)),
    ("pi", sig(0, 0)),
    ("sin", sig(1, 1)),
    ("cos", sig(1, 1)),
    ("tan", sig(1, 1)),
    ("cot", sig(1, 1)),
    ("asin", sig(1, 1)),
    ("acos", sig(1, 1)),
    ("atan", sig(1, 1)),
    ("atan2", sig(2, 2)),
    ("degrees", sig(1, 1)),
    ("radians", sig(1, 1)),
    ("haversin", sig(1, 1)),
    // Strings.
    ("tolower", sig(1, 1)),
    ("toupper", sig(1, 1)),
    ("lower", sig(1, 1)),
    ("upper", sig(1, 1)),
    ("ltrim", sig(1, 2)),
    ("rtrim", sig(1, 2)),
    ("trim", sig(1, 1)),
    ("btrim", sig(1, 2)),
    ("left", sig(2, 2)),
    ("right", sig(2, 2)),
    ("substring", sig(2, 3)),
    ("replace", sig(3, 3)),
    ("split", sig(2, 2)),
    ("reverse", sig(1, 1)),
    ("size", sig(1, 1)),
    ("char_length", sig(1, 1)),
    ("character_length", sig(1, 1)),
    // Lists and maps.
    ("head", sig(1, 1)),
    ("last", sig(1, 1)),
    ("tail", sig(1, 1)),
    ("range", sig(2, 3)),
    ("coalesce", sig(1, usize::MAX)),
    ("isempty", sig(1, 1)),
    ("keys", sig(1, 1)),
    // Conversion.
    ("toboolean", sig(1, 1)),
    ("tointeger", sig(1, 1)),
    ("tofloat", sig(1, 1)),
    ("tostring", sig(1, 1)),
    ("tobooleanornull", sig(1, 1)),
    ("tointegerornull", sig(1, 1)),
    ("tofloatornull", sig(1, 1)),
    ("tostringornull", sig(1, 1)),
    ("tobooleanlist", sig(1, 1)),
    ("tointegerlist", sig(1, 1)),
    ("tofloatlist", sig(1, 1)),
    ("tostringlist", sig(1, 1)),
    // Entities and paths.
    ("id", sig(1, 1)),
    ("elementid", sig(1, 1)),
    ("labels", sig(1, 1)),
    ("type", sig(1, 1)),
    ("properties", sig(1, 1)),
    ("startnode", sig(1, 1)),
    ("endnode", sig(1, 1)),
    ("nodes", sig(1, 1)),
    ("relationships", sig(1, 1)),
    ("length", sig(1, 1)),
    // Misc.
    ("timestamp", sig(0, 0)),
    ("randomuuid", sig(0, 0)),
    ("exists", sig(1, 1)),
    ("isnan", sig(1, 1)),
    ("valuetype", sig(1, 1)),
    // Spatial.
    ("point", sig(1, 1)),
    ("distance", sig(2, 2)),
    ("point.distance", sig(2, 2)),
    ("point.withinbbox", sig(3, 3)),
    // Temporal.
    ("date", sig(0, 1)),
    ("date.statement", sig(0, 1)),
    ("date.transaction", sig(0, 1)),
    ("date.realtime", sig(0, 1)),
    ("date.truncate", sig(1, 3)),
    ("localtime", sig(0, 1)),
    ("localtime.statement", sig(0, 1)),
    ("localtime.transaction", sig(0, 1)),
    ("localtime.realtime", sig(0, 1)),
    ("localtime.truncate", sig(1, 3)),
    ("time", sig(0, 1)),
    ("time.statement", sig(0, 1)),
    ("time.transaction", sig(0, 1)),
    ("time.realtime", sig(0, 1)),
    ("time.truncate", sig(1, 3)),
    ("localdatetime", sig(0, 1)),
    ("localdatetime.statement", sig(0, 1)),
    ("localdatetime.transaction", sig(0, 1)),
    ("localdatetime.realtime", sig(0, 1)),
    ("localdatetime.truncate", sig(1, 3)),
    ("datetime", sig(0, 1)),
    ("datetime.statement", sig(0, 1)),
    ("datetime.transaction", sig(0, 1)),
    ("datetime.realtime", sig(0, 1)),
    ("datetime.truncate", sig(1, 3)),
    ("datetime.fromepoch", sig(2, 2)),
    ("datetime.fromepochmillis", sig(1, 1)),
    ("duration", sig(1, 1)),
    ("duration.between", sig(2, 2)),
    ("duration.inmonths", sig(2, 2)),
    ("duration.indays", sig(2, 2)),
    ("duration.inseconds", sig(2, 2)),
];

/// A resolved function: resolve a name once (at plan time) with
/// [`resolve`], then [`Function::call`] it per row without allocating or
/// searching the registry again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Function {
    name: &'static str,
    signature: Signature,
}

/// Looks up function `name` (case-insensitive); `None` if this crate does
/// not implement it.
pub fn resolve(name: &str) -> Option<Function> {
    REGISTRY
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(n, s)| Function {
            name: n,
            signature: *s,
        })
}

/// The signature of function `name` (case-insensitive), `None` if this
/// crate does not implement it.
pub fn function_signature(name: &str) -> Option<Signature> {
    resolve(name).map(|f| f.signature)
}

/// All function names in the registry (lower case), for front ends that
/// want to list or cross-check them.
pub fn function_names() -> impl Iterator<Item = &'static str> {
    REGISTRY.iter().map(|(n, _)| *n)
}

/// Evaluates the scalar function `name` on `args` (see [`Function::call`]);
/// an unknown name is `SyntaxError: UnknownFunction`.
pub fn call(name: &str, args: &[Value], graph: &dyn EntityAccess) -> Result<Value> {
    resolve(name)
        .ok_or_else(|| {
            Error::new(ErrorKind::SyntaxError, format!("unknown function `{name}`"))
                .with_code("UnknownFunction")
        })?
        .call(args, graph)
}

impl Function {
    /// The lower-case registry name (`date.truncate`).
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// Arity and kind.
    pub fn signature(&self) -> Signature {
        self.signature
    }

    /// Evaluates the function on `args`.
    ///
    /// Aggregate functions are an internal error here (the runtime
    /// evaluates those with [`crate::aggregate::Accumulator`]); a wrong
    /// argument count is `SyntaxError: InvalidNumberOfArguments`.
    pub fn call(&self, args: &[Value], graph: &dyn EntityAccess) -> Result<Value> {
        let (name, signature) = (self.name, self.signature);
        if signature.is_aggregate {
            return Err(Error::internal(format!(
                "aggregate function `{name}` must be evaluated by an accumulator"
            )));
        }
        if args.len() < signature.min_args || args.len() > signature.max_args {
            return Err(Error::new(
                ErrorKind::SyntaxError,
                format!("wrong number of arguments ({}) for `{name}`", args.len()),
            )
            .with_code("InvalidNumberOfArguments"));
        }
        dispatch(name, args, graph)
    }
}

fn dispatch(lower: &'static str, args: &[Value], graph: &dyn EntityAccess) -> Result<Value> {
    let name = lower;
    let a = |i: usize| &args[i];
    match lower {
        "abs" => math::abs(a(0)),
        "ceil" => math::ceil(a(0)),
        "floor" => math::floor(a(0)),
        "round" => math::round(args),
        "sign" => math::sign(a(0)),
        "rand" => Ok(math::rand()),
        "e" => Ok(Value::Float(std::f64::consts::E)),
        "pi" => Ok(Value::Float(std::f64::consts::PI)),
        "sqrt" | "exp" | "log" | "log10" | "sin" | "cos" | "tan" | "cot" | "asin" | "acos"
        | "atan" | "degrees" | "radians" | "haversin" => math::unary(lower, a(0)),
        "atan2" => math::atan2(a(0), a(1)),
        "tolower" | "lower" => string::unary("tolower", a(0)),
        "toupper" | "upper" => string::unary("toupper", a(0)),
        "ltrim" | "rtrim" | "btrim" if args.len() == 2 => string::trim_chars(lower, a(0), a(1)),
        "ltrim" | "rtrim" | "trim" | "btrim" => string::unary(lower, a(0)),
        "left" => string::left(a(0), a(1)),
        "right" => string::right(a(0), a(1)),
        "substring" => string::substring(args),
        "replace" => string::replace(a(0), a(1), a(2)),
        "split" => string::split(a(0), a(1)),
        "reverse" => list::reverse(a(0)),
        "size" | "char_length" | "character_length" => list::size(a(0)),
        "head" => list::head(a(0)),
        "last" => list::last(a(0)),
        "tail" => list::tail(a(0)),
        "range" => list::range(args),
        "coalesce" => Ok(list::coalesce(args)),
        "isempty" => list::is_empty(a(0)),
        "keys" => entity::keys(a(0), graph),
        "toboolean" => convert::to_boolean(a(0)),
        "tointeger" => convert::to_integer(a(0)),
        "tofloat" => convert::to_float(a(0)),
        "tostring" => convert::to_string(a(0)),
        "tobooleanornull" => Ok(convert::or_null(convert::to_boolean, a(0))),
        "tointegerornull" => Ok(convert::or_null(convert::to_integer, a(0))),
        "tofloatornull" => Ok(convert::or_null(convert::to_float, a(0))),
        "tostringornull" => Ok(convert::or_null(convert::to_string, a(0))),
        "tobooleanlist" => convert::list_of(name, convert::to_boolean, a(0)),
        "tointegerlist" => convert::list_of(name, convert::to_integer, a(0)),
        "tofloatlist" => convert::list_of(name, convert::to_float, a(0)),
        "tostringlist" => convert::list_of(name, convert::to_string, a(0)),
        "id" => entity::id(a(0)),
        "elementid" => entity::element_id(a(0)),
        "labels" => entity::labels(a(0), graph),
        "type" => entity::rel_type(a(0), graph),
        "properties" => entity::properties(a(0), graph),
        "startnode" => entity::start_node(a(0), graph),
        "endnode" => entity::end_node(a(0), graph),
        "nodes" => entity::nodes(a(0)),
        "relationships" => entity::relationships(a(0)),
        "length" => entity::length(a(0)),
        "timestamp" => Ok(match graph.statement_time() {
            Some((s, ns)) => Value::Int(s * 1000 + ns as i64 / 1_000_000),
            None => misc::timestamp(),
        }),
        "randomuuid" => Ok(misc::random_uuid()),
        "exists" => Ok(Value::Bool(!a(0).is_null())),
        "isnan" => math::is_nan(a(0)),
        "valuetype" => Ok(misc::value_type(a(0))),
        "point" => spatial::point(a(0)),
        "distance" | "point.distance" => spatial::distance(a(0), a(1)),
        "point.withinbbox" => spatial::within_bbox(a(0), a(1), a(2)),
        _ => temporal::call(lower, args, graph),
    }
}
