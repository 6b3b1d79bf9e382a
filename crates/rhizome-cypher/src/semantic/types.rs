//! Static types inferred during analysis.

use std::fmt;

/// The statically known type of an expression or variable. `Any` means
/// unknown; checks only reject what is definitely wrong.
#[derive(Debug, Clone, PartialEq)]
pub enum Type {
    /// Unknown / any type.
    Any,
    /// Only `null`.
    Null,
    /// A boolean.
    Boolean,
    /// An integer.
    Integer,
    /// A float.
    Float,
    /// A string.
    String,
    /// A list of the given element type.
    List(Box<Type>),
    /// A map.
    Map,
    /// A node.
    Node,
    /// A relationship.
    Relationship,
    /// A path.
    Path,
}

impl Type {
    /// Whether a value of this type could be a boolean (or null).
    pub fn may_be_boolean(&self) -> bool {
        matches!(self, Type::Any | Type::Null | Type::Boolean)
    }

    /// Whether a value of this type could be a list (or null).
    pub fn may_be_list(&self) -> bool {
        matches!(self, Type::Any | Type::Null | Type::List(_))
    }

    /// Whether a value of this type could be a number (or null).
    pub fn may_be_number(&self) -> bool {
        matches!(self, Type::Any | Type::Null | Type::Integer | Type::Float)
    }

    /// Whether a value of this type could be an integer (or null).
    pub fn may_be_integer(&self) -> bool {
        matches!(self, Type::Any | Type::Null | Type::Integer)
    }

    /// Whether a value of this type could be a string (or null).
    pub fn may_be_string(&self) -> bool {
        matches!(self, Type::Any | Type::Null | Type::String)
    }

    /// Whether property access `x.key` can succeed on this type.
    pub fn may_have_properties(&self) -> bool {
        matches!(
            self,
            Type::Any | Type::Null | Type::Map | Type::Node | Type::Relationship
        )
    }

    /// Whether the type can be used where a node is needed.
    pub fn may_be_node(&self) -> bool {
        matches!(self, Type::Any | Type::Null | Type::Node)
    }

    /// Whether the type can be used where a relationship is needed.
    pub fn may_be_relationship(&self) -> bool {
        matches!(self, Type::Any | Type::Null | Type::Relationship)
    }

    /// The element type if this is a list, else `Any`.
    pub fn element(&self) -> Type {
        match self {
            Type::List(t) => (**t).clone(),
            _ => Type::Any,
        }
    }

    /// The least general type covering both.
    pub fn join(&self, other: &Type) -> Type {
        match (self, other) {
            (a, b) if a == b => a.clone(),
            (Type::Null, b) => b.clone(),
            (a, Type::Null) => a.clone(),
            (Type::List(a), Type::List(b)) => Type::List(Box::new(a.join(b))),
            _ => Type::Any,
        }
    }
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Type::Any => f.write_str("ANY"),
            Type::Null => f.write_str("NULL"),
            Type::Boolean => f.write_str("BOOLEAN"),
            Type::Integer => f.write_str("INTEGER"),
            Type::Float => f.write_str("FLOAT"),
            Type::String => f.write_str("STRING"),
            Type::List(t) => write!(f, "LIST<{t}>"),
            Type::Map => f.write_str("MAP"),
            Type::Node => f.write_str("NODE"),
            Type::Relationship => f.write_str("RELATIONSHIP"),
            Type::Path => f.write_str("PATH"),
        }
    }
}
