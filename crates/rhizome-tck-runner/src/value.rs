//! Values as the TCK writes them, and the comparison of expected with actual.
//!
//! Expected cells are parsed into a [`TckValue`]; actual [`Value`]s are
//! resolved into the same structure through the snapshot (labels, types,
//! properties, endpoints), so that comparison is structural: maps by key,
//! node labels as sets, integers never equal to floats, lists in order unless
//! the step ignores list element order. Temporal values are compared by
//! their ISO string form, which is how the TCK writes them (as strings).

use rhizome_common::Value;
use rhizome_functions::display::{format_float, format_value};
use rhizome_functions::EntityAccess;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

/// A value in the TCK's result syntax, or an actual value resolved into it.
#[derive(Debug, Clone, PartialEq)]
pub enum TckValue {
    /// `null`
    Null,
    /// `true` / `false`
    Bool(bool),
    /// An integer (`1`, `-7`).
    Int(i64),
    /// A float (`1.0`, `1e-5`, `NaN`, `Inf`).
    Float(f64),
    /// A string (`'text'`); actual temporal values resolve to their ISO form.
    String(String),
    /// `[a, b]`
    List(Vec<TckValue>),
    /// `{k: v}`
    Map(BTreeMap<String, TckValue>),
    /// `(:A:B {k: v})`
    Node(TckNode),
    /// `[:T {k: v}]`
    Relationship(TckRel),
    /// `<(a)-[:T]->(b)<-[:U]-(c)>`
    Path(TckPath),
    /// An actual entity that could not be read (deleted, or a read error).
    Unreadable(String),
}

/// A node: labels (a set) and properties.
#[derive(Debug, Clone, PartialEq)]
pub struct TckNode {
    /// The labels.
    pub labels: BTreeSet<String>,
    /// The properties.
    pub properties: BTreeMap<String, TckValue>,
}

/// A relationship: type and properties.
#[derive(Debug, Clone, PartialEq)]
pub struct TckRel {
    /// The relationship type.
    pub rel_type: String,
    /// The properties.
    pub properties: BTreeMap<String, TckValue>,
}

/// A path: a start node and hops.
#[derive(Debug, Clone, PartialEq)]
pub struct TckPath {
    /// The first node.
    pub start: TckNode,
    /// Each hop: whether the relationship points along the path, the
    /// relationship, the node reached.
    pub hops: Vec<(bool, TckRel, TckNode)>,
}

/// A malformed expected value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError(pub String);

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ParseError {}

/// Parses one cell of an expected-result or parameter table.
pub fn parse_value(text: &str) -> Result<TckValue, ParseError> {
    let mut p = Parser {
        chars: text.chars().collect(),
        pos: 0,
    };
    let v = p.value()?;
    p.ws();
    if p.pos != p.chars.len() {
        return Err(p.error("trailing characters"));
    }
    Ok(v)
}

struct Parser {
    chars: Vec<char>,
    pos: usize,
}

impl Parser {
    fn error(&self, what: &str) -> ParseError {
        let text: String = self.chars.iter().collect();
        ParseError(format!("{what} at {} in `{text}`", self.pos))
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn ws(&mut self) {
        while self.peek().is_some_and(char::is_whitespace) {
            self.pos += 1;
        }
    }

    fn eat(&mut self, c: char) -> bool {
        self.ws();
        if self.peek() == Some(c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, c: char) -> Result<(), ParseError> {
        if self.eat(c) {
            Ok(())
        } else {
            Err(self.error(&format!("expected `{c}`")))
        }
    }

    fn starts_with(&self, s: &str) -> bool {
        s.chars()
            .enumerate()
            .all(|(i, c)| self.chars.get(self.pos + i) == Some(&c))
    }

    fn word(&mut self) -> String {
        let start = self.pos;
        while self
            .peek()
            .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$')
        {
            self.pos += 1;
        }
        self.chars[start..self.pos].iter().collect()
    }

    /// A map key, label or type: an identifier, or a back-quoted name.
    fn name(&mut self) -> Result<String, ParseError> {
        self.ws();
        if self.peek() == Some('`') {
            self.pos += 1;
            let mut out = String::new();
            loop {
                match self.peek() {
                    None => return Err(self.error("unterminated `name`")),
                    Some('`') if self.chars.get(self.pos + 1) == Some(&'`') => {
                        out.push('`');
                        self.pos += 2;
                    }
                    Some('`') => {
                        self.pos += 1;
                        return Ok(out);
                    }
                    Some(c) => {
                        out.push(c);
                        self.pos += 1;
                    }
                }
            }
        }
        let w = self.word();
        if w.is_empty() {
            Err(self.error("expected a name"))
        } else {
            Ok(w)
        }
    }

    fn value(&mut self) -> Result<TckValue, ParseError> {
        self.ws();
        match self.peek() {
            None => Err(self.error("expected a value")),
            Some('\'') | Some('"') => self.string().map(TckValue::String),
            Some('[') => {
                let save = self.pos;
                self.pos += 1;
                self.ws();
                if self.peek() == Some(':') {
                    self.pos = save;
                    return self.rel().map(TckValue::Relationship);
                }
                let mut items = Vec::new();
                if !self.eat(']') {
                    loop {
                        items.push(self.value()?);
                        if self.eat(']') {
                            break;
                        }
                        self.expect(',')?;
                    }
                }
                Ok(TckValue::List(items))
            }
            Some('{') => self.map().map(TckValue::Map),
            Some('(') => self.node().map(TckValue::Node),
            Some('<') => self.path().map(TckValue::Path),
            Some(c) if c == '-' || c == '+' || c == '.' || c.is_ascii_digit() => self.number(),
            Some(_) => {
                let w = self.word();
                match w.as_str() {
                    "null" => Ok(TckValue::Null),
                    "true" => Ok(TckValue::Bool(true)),
                    "false" => Ok(TckValue::Bool(false)),
                    "NaN" => Ok(TckValue::Float(f64::NAN)),
                    "Inf" | "Infinity" => Ok(TckValue::Float(f64::INFINITY)),
                    _ => Err(self.error(&format!("unknown value `{w}`"))),
                }
            }
        }
    }

    fn number(&mut self) -> Result<TckValue, ParseError> {
        let start = self.pos;
        let mut negative = false;
        if let Some(c @ ('-' | '+')) = self.peek() {
            negative = c == '-';
            self.pos += 1;
        }
        if self.starts_with("Inf") {
            self.word();
            return Ok(TckValue::Float(if negative {
                f64::NEG_INFINITY
            } else {
                f64::INFINITY
            }));
        }
        if self.starts_with("NaN") {
            self.word();
            return Ok(TckValue::Float(f64::NAN));
        }
        let mut float = false;
        while let Some(c) = self.peek() {
            if c.is_ascii_digit() {
                self.pos += 1;
            } else if c == '.' || c == 'e' || c == 'E' {
                float = true;
                self.pos += 1;
                if (c == 'e' || c == 'E') && matches!(self.peek(), Some('-' | '+')) {
                    self.pos += 1;
                }
            } else {
                break;
            }
        }
        let text: String = self.chars[start..self.pos].iter().collect();
        let text = text.trim_start_matches('+');
        if float {
            text.parse::<f64>()
                .map(TckValue::Float)
                .map_err(|_| self.error(&format!("bad float `{text}`")))
        } else {
            text.parse::<i64>()
                .map(TckValue::Int)
                .map_err(|_| self.error(&format!("bad integer `{text}`")))
        }
    }

    fn string(&mut self) -> Result<String, ParseError> {
        let quote = self.peek().unwrap_or('\'');
        self.pos += 1;
        let mut out = String::new();
        loop {
            match self.peek() {
                None => return Err(self.error("unterminated string")),
                Some('\\') => {
                    self.pos += 1;
                    let c = self.peek().ok_or_else(|| self.error("dangling escape"))?;
                    self.pos += 1;
                    match c {
                        'n' => out.push('\n'),
                        't' => out.push('\t'),
                        'r' => out.push('\r'),
                        'b' => out.push('\u{8}'),
                        'f' => out.push('\u{c}'),
                        'u' => {
                            let hex: String =
                                self.chars[self.pos..].iter().take(4).collect::<String>();
                            match u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32) {
                                Some(ch) if hex.len() == 4 => {
                                    out.push(ch);
                                    self.pos += 4;
                                }
                                _ => out.push_str("\\u"),
                            }
                        }
                        other => out.push(other),
                    }
                }
                Some(c) if c == quote => {
                    self.pos += 1;
                    return Ok(out);
                }
                Some(c) => {
                    out.push(c);
                    self.pos += 1;
                }
            }
        }
    }

    fn map(&mut self) -> Result<BTreeMap<String, TckValue>, ParseError> {
        self.expect('{')?;
        let mut map = BTreeMap::new();
        if self.eat('}') {
            return Ok(map);
        }
        loop {
            let key = self.name()?;
            self.expect(':')?;
            let v = self.value()?;
            map.insert(key, v);
            if self.eat('}') {
                return Ok(map);
            }
            self.expect(',')?;
        }
    }

    fn properties(&mut self) -> Result<BTreeMap<String, TckValue>, ParseError> {
        self.ws();
        if self.peek() == Some('{') {
            self.map()
        } else {
            Ok(BTreeMap::new())
        }
    }

    fn node(&mut self) -> Result<TckNode, ParseError> {
        self.expect('(')?;
        let mut labels = BTreeSet::new();
        while self.eat(':') {
            labels.insert(self.name()?);
        }
        let properties = self.properties()?;
        self.expect(')')?;
        Ok(TckNode { labels, properties })
    }

    fn rel(&mut self) -> Result<TckRel, ParseError> {
        self.expect('[')?;
        self.expect(':')?;
        let rel_type = self.name()?;
        let properties = self.properties()?;
        self.expect(']')?;
        Ok(TckRel {
            rel_type,
            properties,
        })
    }

    fn path(&mut self) -> Result<TckPath, ParseError> {
        self.expect('<')?;
        let start = self.node()?;
        let mut hops = Vec::new();
        loop {
            self.ws();
            if self.eat('>') {
                return Ok(TckPath { start, hops });
            }
            let forward = if self.starts_with("<-") {
                self.pos += 2;
                false
            } else if self.eat('-') {
                true
            } else {
                return Err(self.error("expected a hop"));
            };
            let rel = self.rel()?;
            self.ws();
            if forward {
                if !self.starts_with("->") {
                    return Err(self.error("expected `->`"));
                }
                self.pos += 2;
            } else {
                self.expect('-')?;
            }
            let node = self.node()?;
            hops.push((forward, rel, node));
        }
    }
}

impl TckValue {
    /// The value as a query parameter (graph entities cannot be parameters).
    pub fn to_value(&self) -> Result<Value, ParseError> {
        Ok(match self {
            TckValue::Null => Value::Null,
            TckValue::Bool(b) => Value::Bool(*b),
            TckValue::Int(i) => Value::Int(*i),
            TckValue::Float(f) => Value::Float(*f),
            TckValue::String(s) => Value::String(s.clone()),
            TckValue::List(items) => Value::List(
                items
                    .iter()
                    .map(|v| v.to_value())
                    .collect::<Result<_, _>>()?,
            ),
            TckValue::Map(m) => Value::Map(
                m.iter()
                    .map(|(k, v)| Ok((k.clone(), v.to_value()?)))
                    .collect::<Result<_, ParseError>>()?,
            ),
            other => return Err(ParseError(format!("`{other}` cannot be a parameter value"))),
        })
    }

    /// Resolves an actual value through `graph` into the TCK's structure.
    pub fn from_actual(v: &Value, graph: &dyn EntityAccess) -> TckValue {
        match v {
            Value::Null => TckValue::Null,
            Value::Bool(b) => TckValue::Bool(*b),
            Value::Int(i) => TckValue::Int(*i),
            Value::Float(f) => TckValue::Float(*f),
            Value::String(s) => TckValue::String(s.clone()),
            Value::List(items) => {
                TckValue::List(items.iter().map(|v| Self::from_actual(v, graph)).collect())
            }
            Value::Map(m) => TckValue::Map(
                m.iter()
                    .map(|(k, v)| (k.clone(), Self::from_actual(v, graph)))
                    .collect(),
            ),
            Value::Node(id) => match node(*id, graph) {
                Ok(n) => TckValue::Node(n),
                Err(e) => TckValue::Unreadable(format!("node {id}: {e}")),
            },
            Value::Relationship(id) => match rel(*id, graph) {
                Ok(r) => TckValue::Relationship(r),
                Err(e) => TckValue::Unreadable(format!("relationship {id}: {e}")),
            },
            Value::Path(p) => {
                let resolve = || -> rhizome_common::Result<TckPath> {
                    let first = *p.nodes.first().ok_or_else(|| {
                        rhizome_common::Error::new(
                            rhizome_common::ErrorKind::Internal,
                            "a path without nodes",
                        )
                    })?;
                    let mut hops = Vec::new();
                    for (i, r) in p.rels.iter().enumerate() {
                        let from = p.nodes.get(i).copied();
                        let to = p.nodes.get(i + 1).copied().unwrap_or(first);
                        let (start, _) = graph.rel_endpoints(*r)?;
                        hops.push((Some(start) == from, rel(*r, graph)?, node(to, graph)?));
                    }
                    Ok(TckPath {
                        start: node(first, graph)?,
                        hops,
                    })
                };
                match resolve() {
                    Ok(p) => TckValue::Path(p),
                    Err(e) => TckValue::Unreadable(format!("path: {e}")),
                }
            }
            temporal => {
                // Temporal values print as quoted ISO strings; the TCK
                // expects exactly that string.
                let text = format_value(temporal, graph);
                TckValue::String(
                    text.strip_prefix('\'')
                        .and_then(|t| t.strip_suffix('\''))
                        .unwrap_or(&text)
                        .to_string(),
                )
            }
        }
    }

    /// Whether `self` (expected) matches `actual`. With `unordered_lists`,
    /// lists compare as multisets at every depth.
    pub fn matches(&self, actual: &TckValue, unordered_lists: bool) -> bool {
        use TckValue as T;
        match (self, actual) {
            (T::Null, T::Null) => true,
            (T::Bool(a), T::Bool(b)) => a == b,
            (T::Int(a), T::Int(b)) => a == b,
            (T::Float(a), T::Float(b)) => (a.is_nan() && b.is_nan()) || a == b,
            (T::String(a), T::String(b)) => a == b,
            (T::List(a), T::List(b)) => {
                if a.len() != b.len() {
                    return false;
                }
                if unordered_lists {
                    multiset_match(a, b, |x, y| x.matches(y, true))
                } else {
                    a.iter().zip(b).all(|(x, y)| x.matches(y, false))
                }
            }
            (T::Map(a), T::Map(b)) => map_matches(a, b, unordered_lists),
            (T::Node(a), T::Node(b)) => a.matches(b, unordered_lists),
            (T::Relationship(a), T::Relationship(b)) => a.matches(b, unordered_lists),
            (T::Path(a), T::Path(b)) => {
                a.start.matches(&b.start, unordered_lists)
                    && a.hops.len() == b.hops.len()
                    && a.hops.iter().zip(&b.hops).all(|(x, y)| {
                        x.0 == y.0
                            && x.1.matches(&y.1, unordered_lists)
                            && x.2.matches(&y.2, unordered_lists)
                    })
            }
            _ => false,
        }
    }
}

fn node(id: rhizome_common::NodeId, graph: &dyn EntityAccess) -> rhizome_common::Result<TckNode> {
    Ok(TckNode {
        labels: graph.node_labels(id)?.into_iter().collect(),
        properties: graph
            .node_properties(id)?
            .iter()
            .map(|(k, v)| (k.clone(), TckValue::from_actual(v, graph)))
            .collect(),
    })
}

fn rel(id: rhizome_common::RelId, graph: &dyn EntityAccess) -> rhizome_common::Result<TckRel> {
    Ok(TckRel {
        rel_type: graph.rel_type(id)?,
        properties: graph
            .rel_properties(id)?
            .iter()
            .map(|(k, v)| (k.clone(), TckValue::from_actual(v, graph)))
            .collect(),
    })
}

fn map_matches(
    a: &BTreeMap<String, TckValue>,
    b: &BTreeMap<String, TckValue>,
    unordered_lists: bool,
) -> bool {
    a.len() == b.len()
        && a.iter()
            .all(|(k, v)| b.get(k).is_some_and(|w| v.matches(w, unordered_lists)))
}

impl TckNode {
    fn matches(&self, other: &TckNode, unordered_lists: bool) -> bool {
        self.labels == other.labels
            && map_matches(&self.properties, &other.properties, unordered_lists)
    }
}

impl TckRel {
    fn matches(&self, other: &TckRel, unordered_lists: bool) -> bool {
        self.rel_type == other.rel_type
            && map_matches(&self.properties, &other.properties, unordered_lists)
    }
}

/// Whether every element of `expected` can be paired with a distinct
/// element of `actual` (same lengths assumed). Matching is an equivalence,
/// so greedy pairing is exact.
pub fn multiset_match<A, B>(expected: &[A], actual: &[B], eq: impl Fn(&A, &B) -> bool) -> bool {
    let mut used = vec![false; actual.len()];
    expected.iter().all(
        |e| match (0..actual.len()).find(|&i| !used[i] && eq(e, &actual[i])) {
            Some(i) => {
                used[i] = true;
                true
            }
            None => false,
        },
    )
}

fn write_props(f: &mut fmt::Formatter<'_>, props: &BTreeMap<String, TckValue>) -> fmt::Result {
    if props.is_empty() {
        return Ok(());
    }
    f.write_str("{")?;
    for (i, (k, v)) in props.iter().enumerate() {
        if i > 0 {
            f.write_str(", ")?;
        }
        write!(f, "{k}: {v}")?;
    }
    f.write_str("}")
}

impl fmt::Display for TckNode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("(")?;
        for l in &self.labels {
            write!(f, ":{l}")?;
        }
        if !self.labels.is_empty() && !self.properties.is_empty() {
            f.write_str(" ")?;
        }
        write_props(f, &self.properties)?;
        f.write_str(")")
    }
}

impl fmt::Display for TckRel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[:{}", self.rel_type)?;
        if !self.properties.is_empty() {
            f.write_str(" ")?;
        }
        write_props(f, &self.properties)?;
        f.write_str("]")
    }
}

impl fmt::Display for TckValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TckValue::Null => f.write_str("null"),
            TckValue::Bool(b) => write!(f, "{b}"),
            TckValue::Int(i) => write!(f, "{i}"),
            TckValue::Float(x) => f.write_str(&format_float(*x)),
            TckValue::String(s) => {
                write!(f, "'{}'", s.replace('\\', "\\\\").replace('\'', "\\'"))
            }
            TckValue::List(items) => {
                f.write_str("[")?;
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{v}")?;
                }
                f.write_str("]")
            }
            TckValue::Map(m) => {
                if m.is_empty() {
                    f.write_str("{}")
                } else {
                    write_props(f, m)
                }
            }
            TckValue::Node(n) => write!(f, "{n}"),
            TckValue::Relationship(r) => write!(f, "{r}"),
            TckValue::Path(p) => {
                write!(f, "<{}", p.start)?;
                for (forward, r, n) in &p.hops {
                    if *forward {
                        write!(f, "-{r}->{n}")?;
                    } else {
                        write!(f, "<-{r}-{n}")?;
                    }
                }
                f.write_str(">")
            }
            TckValue::Unreadable(what) => write!(f, "<unreadable {what}>"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> TckValue {
        parse_value(s).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn parses_every_kind_of_value() {
        assert_eq!(p("null"), TckValue::Null);
        assert_eq!(p("-12"), TckValue::Int(-12));
        assert_eq!(p("-9223372036854775808"), TckValue::Int(i64::MIN));
        assert_eq!(p("1.5e-3"), TckValue::Float(0.0015));
        assert_eq!(p("-Inf"), TckValue::Float(f64::NEG_INFINITY));
        assert_eq!(p("'it\\'s'"), TckValue::String("it's".into()));
        assert_eq!(p("[1, [2.0], 'a']").to_string(), "[1, [2.0], 'a']");
        assert_eq!(
            p("{b: 1, a: {c: null}}").to_string(),
            "{a: {c: null}, b: 1}"
        );
        assert_eq!(p("(:B:A {name: 'x'})").to_string(), "(:A:B {name: 'x'})");
        assert_eq!(p("()").to_string(), "()");
        assert_eq!(p("({k: 1})").to_string(), "({k: 1})");
        assert_eq!(p("[:T {k: 1}]").to_string(), "[:T {k: 1}]");
        assert_eq!(
            p("<(:A)-[:T]->({n: 1})<-[:U]-()>").to_string(),
            "<(:A)-[:T]->({n: 1})<-[:U]-()>"
        );
        assert_eq!(p("[]"), TckValue::List(vec![]));
        assert_eq!(p("{}"), TckValue::Map(BTreeMap::new()));
        assert!(parse_value("[1, 2").is_err());
    }

    #[test]
    fn integers_and_floats_differ_and_lists_can_ignore_order() {
        assert!(!p("1").matches(&p("1.0"), false));
        assert!(p("NaN").matches(&p("NaN"), false));
        assert!(!p("[1, 2]").matches(&p("[2, 1]"), false));
        assert!(p("[1, 2, 2]").matches(&p("[2, 1, 2]"), true));
        assert!(!p("[1, 1, 2]").matches(&p("[2, 1, 2]"), true));
        assert!(p("(:A:B {x: [1]})").matches(&p("(:B:A {x: [1]})"), false));
    }
}
