//! A tiny Cypher expression evaluator over `rhizome-functions`, for tests
//! only: literals, lists, maps, parameters, variables bound by `WITH`,
//! function calls, property access, subscripts and the usual operators.
//! Enough to run the graph-free expression scenarios of the TCK.

#![allow(dead_code)]

use rhizome_common::{Error, ErrorKind, Result, Value};
use rhizome_functions::aggregate::{Accumulator, AggregateKind};
use rhizome_functions::{functions, ops, EntityAccess, NoGraph};
use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    Int(i128),
    Float(f64),
    Str(String),
    Param(String),
    Sym(&'static str),
}

fn lex(src: &str) -> Result<Vec<Tok>> {
    let chars: Vec<char> = src.chars().collect();
    let mut i = 0;
    let mut out = Vec::new();
    let err = |m: String| Error::new(ErrorKind::SyntaxError, m);
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        if c == '0' && i + 1 < chars.len() && (chars[i + 1] == 'x' || chars[i + 1] == 'o') {
            let radix = if chars[i + 1] == 'x' { 16 } else { 8 };
            let start = i + 2;
            i += 2;
            while i < chars.len() && chars[i].is_ascii_alphanumeric() {
                i += 1;
            }
            let text: String = chars[start..i].iter().collect();
            out.push(Tok::Int(
                i128::from_str_radix(&text, radix).map_err(|_| err(text.clone()))?,
            ));
            continue;
        }
        let after_value = match out.last() {
            Some(Tok::Ident(w)) => !["RETURN", "WITH", "AND", "OR", "XOR", "NOT", "IN"]
                .iter()
                .any(|k| w.eq_ignore_ascii_case(k)),
            Some(Tok::Sym(")")) | Some(Tok::Sym("]")) | Some(Tok::Sym("}")) => true,
            _ => false,
        };
        let leading_dot =
            c == '.' && chars.get(i + 1).is_some_and(|d| d.is_ascii_digit()) && !after_value;
        if c.is_ascii_digit() || leading_dot {
            let start = i;
            while i < chars.len() && chars[i].is_ascii_digit() {
                i += 1;
            }
            let mut is_float = false;
            if i < chars.len()
                && chars[i] == '.'
                && (leading_dot || chars.get(i + 1).is_some_and(|d| d.is_ascii_digit()))
            {
                is_float = true;
                i += 1;
                while i < chars.len() && chars[i].is_ascii_digit() {
                    i += 1;
                }
            }
            if i < chars.len() && (chars[i] == 'e' || chars[i] == 'E') {
                is_float = true;
                i += 1;
                if i < chars.len() && (chars[i] == '-' || chars[i] == '+') {
                    i += 1;
                }
                while i < chars.len() && chars[i].is_ascii_digit() {
                    i += 1;
                }
            }
            let text: String = chars[start..i].iter().collect();
            out.push(if is_float {
                Tok::Float(text.parse().map_err(|_| err(text.clone()))?)
            } else {
                Tok::Int(text.parse().map_err(|_| err(text.clone()))?)
            });
            continue;
        }
        if c == '`' {
            let start = i + 1;
            i += 1;
            while i < chars.len() && chars[i] != '`' {
                i += 1;
            }
            out.push(Tok::Ident(chars[start..i].iter().collect()));
            i += 1;
            continue;
        }
        if c.is_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            out.push(Tok::Ident(chars[start..i].iter().collect()));
            continue;
        }
        if c == '$' {
            let start = i + 1;
            i += 1;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            out.push(Tok::Param(chars[start..i].iter().collect()));
            continue;
        }
        if c == '\'' || c == '"' {
            let quote = c;
            i += 1;
            let mut s = String::new();
            while i < chars.len() && chars[i] != quote {
                if chars[i] == '\\' {
                    i += 1;
                    if chars[i] == 'u' {
                        let hex: String = chars[i + 1..i + 5].iter().collect();
                        let code = u32::from_str_radix(&hex, 16).map_err(|_| err(hex.clone()))?;
                        s.push(char::from_u32(code).unwrap_or('?'));
                        i += 5;
                        continue;
                    }
                    s.push(match chars[i] {
                        'n' => '\n',
                        't' => '\t',
                        'r' => '\r',
                        other => other,
                    });
                } else {
                    s.push(chars[i]);
                }
                i += 1;
            }
            i += 1;
            out.push(Tok::Str(s));
            continue;
        }
        let two: String = chars[i..(i + 2).min(chars.len())].iter().collect();
        if let Some(s) = ["<>", "<=", ">=", "..", "=~"].iter().find(|s| **s == two) {
            out.push(Tok::Sym(s));
            i += 2;
            continue;
        }
        const SINGLE: &[&str] = &[
            "(", ")", "[", "]", "{", "}", ",", ":", ".", "+", "-", "*", "/", "%", "^", "=", "<",
            ">", "|",
        ];
        let s = SINGLE
            .iter()
            .find(|s| s.starts_with(c))
            .ok_or_else(|| err(format!("unexpected `{c}`")))?;
        out.push(Tok::Sym(s));
        i += 1;
    }
    Ok(out)
}

/// Variables and parameters of an evaluation.
#[derive(Debug, Default, Clone)]
pub struct Env {
    pub vars: BTreeMap<String, Value>,
    pub params: BTreeMap<String, Value>,
    /// The statement's clock (UTC seconds, nanos).
    pub now: (i64, u32),
}

/// No graph, but a fixed statement time.
struct FixedClock((i64, u32));

impl EntityAccess for FixedClock {
    fn node_labels(&self, node: u64) -> Result<Vec<String>> {
        NoGraph.node_labels(node)
    }
    fn node_properties(&self, node: u64) -> Result<BTreeMap<String, Value>> {
        NoGraph.node_properties(node)
    }
    fn rel_type(&self, rel: u64) -> Result<String> {
        NoGraph.rel_type(rel)
    }
    fn rel_endpoints(&self, rel: u64) -> Result<(u64, u64)> {
        NoGraph.rel_endpoints(rel)
    }
    fn rel_properties(&self, rel: u64) -> Result<BTreeMap<String, Value>> {
        NoGraph.rel_properties(rel)
    }
    fn statement_time(&self) -> Option<(i64, u32)> {
        // An unset clock (the default environment) reads the system clock.
        (self.0 != (0, 0)).then_some(self.0)
    }
}

struct Parser<'a> {
    toks: Vec<Tok>,
    pos: usize,
    env: &'a Env,
}

fn kw(t: Option<&Tok>, word: &str) -> bool {
    matches!(t, Some(Tok::Ident(s)) if s.eq_ignore_ascii_case(word))
}

fn bool_of(v: Option<bool>) -> Value {
    v.map_or(Value::Null, Value::Bool)
}

impl Parser<'_> {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos)
    }
    fn peek_at(&self, n: usize) -> Option<&Tok> {
        self.toks.get(self.pos + n)
    }
    fn eat_sym(&mut self, s: &str) -> bool {
        if matches!(self.peek(), Some(Tok::Sym(x)) if *x == s) {
            self.pos += 1;
            true
        } else {
            false
        }
    }
    fn eat_kw(&mut self, w: &str) -> bool {
        if kw(self.peek(), w) {
            self.pos += 1;
            true
        } else {
            false
        }
    }
    fn expect_sym(&mut self, s: &str) -> Result<()> {
        if self.eat_sym(s) {
            Ok(())
        } else {
            Err(Error::new(
                ErrorKind::SyntaxError,
                format!("expected `{s}` at {:?}", self.peek()),
            ))
        }
    }

    fn expr(&mut self) -> Result<Value> {
        let mut v = self.xor()?;
        while self.eat_kw("OR") {
            let r = self.xor()?;
            v = ops::or(&v, &r)?;
        }
        Ok(v)
    }
    fn xor(&mut self) -> Result<Value> {
        let mut v = self.and()?;
        while self.eat_kw("XOR") {
            let r = self.and()?;
            v = ops::xor(&v, &r)?;
        }
        Ok(v)
    }
    fn and(&mut self) -> Result<Value> {
        let mut v = self.not()?;
        while self.eat_kw("AND") {
            let r = self.not()?;
            v = ops::and(&v, &r)?;
        }
        Ok(v)
    }
    fn not(&mut self) -> Result<Value> {
        if self.eat_kw("NOT") {
            let v = self.not()?;
            return ops::not(&v);
        }
        self.comparison()
    }
    fn comparison(&mut self) -> Result<Value> {
        let mut left = self.predicate()?;
        let mut result: Option<Value> = None;
        loop {
            let op = match self.peek() {
                Some(Tok::Sym(s)) if ["=", "<>", "<", ">", "<=", ">=", "=~"].contains(s) => *s,
                _ => break,
            };
            self.pos += 1;
            let right = self.predicate()?;
            let v = match op {
                "=" => bool_of(ops::equals(&left, &right)),
                "<>" => bool_of(ops::equals(&left, &right).map(|b| !b)),
                "<" => bool_of(ops::less_than(&left, &right)),
                ">" => bool_of(ops::greater_than(&left, &right)),
                "<=" => bool_of(ops::less_equal(&left, &right)),
                ">=" => bool_of(ops::greater_equal(&left, &right)),
                _ => bool_of(ops::regex_match(&left, &right)?),
            };
            // Chained comparisons: a < b < c means a < b AND b < c.
            result = Some(match result {
                None => v,
                Some(prev) => ops::and(&prev, &v)?,
            });
            left = right;
        }
        Ok(result.unwrap_or(left))
    }
    /// String, list and null predicates bind tighter than comparisons.
    fn predicate(&mut self) -> Result<Value> {
        let mut left = self.additive()?;
        loop {
            if kw(self.peek(), "IS") {
                self.pos += 1;
                let negated = self.eat_kw("NOT");
                self.eat_kw("NULL");
                left = Value::Bool(left.is_null() != negated);
            } else if kw(self.peek(), "IN") {
                self.pos += 1;
                let r = self.additive()?;
                left = bool_of(ops::in_list(&left, &r)?);
            } else if kw(self.peek(), "STARTS") || kw(self.peek(), "ENDS") {
                let starts = kw(self.peek(), "STARTS");
                self.pos += 2;
                let r = self.additive()?;
                left = bool_of(if starts {
                    ops::starts_with(&left, &r)
                } else {
                    ops::ends_with(&left, &r)
                });
            } else if kw(self.peek(), "CONTAINS") {
                self.pos += 1;
                let r = self.additive()?;
                left = bool_of(ops::contains(&left, &r));
            } else {
                return Ok(left);
            }
        }
    }
    fn additive(&mut self) -> Result<Value> {
        let mut v = self.multiplicative()?;
        loop {
            if self.eat_sym("+") {
                let r = self.multiplicative()?;
                v = ops::add(&v, &r)?;
            } else if self.eat_sym("-") {
                let r = self.multiplicative()?;
                v = ops::subtract(&v, &r)?;
            } else {
                return Ok(v);
            }
        }
    }
    fn multiplicative(&mut self) -> Result<Value> {
        let mut v = self.power()?;
        loop {
            if self.eat_sym("*") {
                let r = self.power()?;
                v = ops::multiply(&v, &r)?;
            } else if self.eat_sym("/") {
                let r = self.power()?;
                v = ops::divide(&v, &r)?;
            } else if self.eat_sym("%") {
                let r = self.power()?;
                v = ops::modulo(&v, &r)?;
            } else {
                return Ok(v);
            }
        }
    }
    fn power(&mut self) -> Result<Value> {
        let mut v = self.unary()?;
        while self.eat_sym("^") {
            let r = self.unary()?;
            v = ops::power(&v, &r)?;
        }
        Ok(v)
    }
    fn unary(&mut self) -> Result<Value> {
        if self.eat_sym("-") {
            // Fold `-<integer literal>` so that -9223372036854775808 works.
            if let Some(Tok::Int(i)) = self.peek().cloned() {
                self.pos += 1;
                let v = i64::try_from(-i)
                    .map_err(|_| Error::new(ErrorKind::SyntaxError, "integer overflow"))?;
                return self.postfix_ops(Value::Int(v));
            }
            let v = self.unary()?;
            return ops::negate(&v);
        }
        if self.eat_sym("+") {
            let v = self.unary()?;
            return ops::unary_plus(&v);
        }
        let v = self.atom()?;
        self.postfix_ops(v)
    }
    fn slice_end(&mut self) -> Result<Option<Value>> {
        if self.eat_sym("]") {
            return Ok(None);
        }
        let t = self.expr()?;
        self.expect_sym("]")?;
        Ok(Some(t))
    }
    fn postfix_ops(&mut self, mut v: Value) -> Result<Value> {
        loop {
            if self.eat_sym(".") {
                let Some(Tok::Ident(name)) = self.peek().cloned() else {
                    return Err(Error::new(ErrorKind::SyntaxError, "expected a property"));
                };
                self.pos += 1;
                v = ops::property(&v, &name, &NoGraph)?;
            } else if self.eat_sym("[") {
                if self.eat_sym("..") {
                    let to = self.slice_end()?;
                    v = ops::slice(&v, None, to.as_ref())?;
                    continue;
                }
                let idx = self.expr()?;
                if self.eat_sym("..") {
                    let to = self.slice_end()?;
                    v = ops::slice(&v, Some(&idx), to.as_ref())?;
                    continue;
                }
                self.expect_sym("]")?;
                v = ops::index(&v, &idx, &NoGraph)?;
            } else {
                return Ok(v);
            }
        }
    }
    fn atom(&mut self) -> Result<Value> {
        let tok = self
            .peek()
            .cloned()
            .ok_or_else(|| Error::new(ErrorKind::SyntaxError, "unexpected end"))?;
        self.pos += 1;
        match tok {
            Tok::Int(i) => i64::try_from(i)
                .map(Value::Int)
                .map_err(|_| Error::new(ErrorKind::SyntaxError, "integer overflow")),
            Tok::Float(x) => Ok(Value::Float(x)),
            Tok::Str(s) => Ok(Value::String(s)),
            Tok::Param(p) => self
                .env
                .params
                .get(&p)
                .cloned()
                .ok_or_else(|| Error::new(ErrorKind::ParameterMissing, p)),
            Tok::Sym("(") => {
                let v = self.expr()?;
                self.expect_sym(")")?;
                Ok(v)
            }
            Tok::Sym("[") => {
                let mut items = Vec::new();
                if !self.eat_sym("]") {
                    loop {
                        items.push(self.expr()?);
                        if self.eat_sym("]") {
                            break;
                        }
                        self.expect_sym(",")?;
                    }
                }
                Ok(Value::List(items))
            }
            Tok::Sym("{") => {
                let mut map = BTreeMap::new();
                if !self.eat_sym("}") {
                    loop {
                        let key = match self.peek().cloned() {
                            Some(Tok::Ident(k)) | Some(Tok::Str(k)) => k,
                            other => {
                                return Err(Error::new(
                                    ErrorKind::SyntaxError,
                                    format!("bad map key {other:?}"),
                                ))
                            }
                        };
                        self.pos += 1;
                        self.expect_sym(":")?;
                        let v = self.expr()?;
                        map.insert(key, v);
                        if self.eat_sym("}") {
                            break;
                        }
                        self.expect_sym(",")?;
                    }
                }
                Ok(Value::Map(map))
            }
            Tok::Ident(name) => {
                match name.to_ascii_lowercase().as_str() {
                    "null" => return Ok(Value::Null),
                    "true" => return Ok(Value::Bool(true)),
                    "false" => return Ok(Value::Bool(false)),
                    _ => {}
                }
                // A possibly namespaced function name: `a.b(...)`.
                let mut full = name.clone();
                let mut look = 0;
                while matches!(self.peek_at(look), Some(Tok::Sym("."))) {
                    if let Some(Tok::Ident(part)) = self.peek_at(look + 1) {
                        full = format!("{full}.{part}");
                        look += 2;
                    } else {
                        break;
                    }
                }
                if matches!(self.peek_at(look), Some(Tok::Sym("(")))
                    && functions::function_signature(&full).is_some()
                {
                    self.pos += look + 1;
                    let mut args = Vec::new();
                    if !self.eat_sym(")") {
                        loop {
                            args.push(self.expr()?);
                            if self.eat_sym(")") {
                                break;
                            }
                            self.expect_sym(",")?;
                        }
                    }
                    return functions::call(&full, &args, &FixedClock(self.env.now));
                }
                self.env.vars.get(&name).cloned().ok_or_else(|| {
                    Error::new(ErrorKind::SemanticError, format!("unknown `{name}`"))
                })
            }
            other => Err(Error::new(
                ErrorKind::SyntaxError,
                format!("unexpected {other:?}"),
            )),
        }
    }
}

/// Evaluates one expression.
pub fn eval(src: &str, env: &Env) -> Result<Value> {
    let toks = lex(src)?;
    let mut p = Parser { toks, pos: 0, env };
    let v = p.expr()?;
    if p.pos != p.toks.len() {
        return Err(Error::new(
            ErrorKind::SyntaxError,
            format!("trailing input at {:?}", p.peek()),
        ));
    }
    Ok(v)
}

/// One projection item: an expression (token range) or an aggregate.
struct Item {
    alias: Option<String>,
    start: usize,
    end: usize,
    aggregate: Option<(AggregateKind, bool)>,
}

fn aggregate_at(toks: &[Tok], pos: usize) -> Option<(AggregateKind, bool, usize, usize)> {
    let Tok::Ident(name) = toks.get(pos)? else {
        return None;
    };
    let kind = AggregateKind::from_name(name)?;
    if toks.get(pos + 1) != Some(&Tok::Sym("(")) {
        return None;
    }
    let mut depth = 0;
    let mut close = None;
    for (k, t) in toks.iter().enumerate().skip(pos + 1) {
        match t {
            Tok::Sym("(") | Tok::Sym("[") | Tok::Sym("{") => depth += 1,
            Tok::Sym(")") | Tok::Sym("]") | Tok::Sym("}") => {
                depth -= 1;
                if depth == 0 {
                    close = Some(k);
                    break;
                }
            }
            _ => {}
        }
    }
    let close = close?;
    let mut start = pos + 2;
    let distinct = kw(toks.get(start), "DISTINCT");
    if distinct {
        start += 1;
    }
    if toks.get(start) == Some(&Tok::Sym("*")) && close == start + 1 {
        return Some((AggregateKind::CountStar, false, start, start));
    }
    Some((kind, distinct, start, close))
}

fn row_env(base: &Env, vars: &BTreeMap<String, Value>) -> Env {
    Env {
        vars: vars.clone(),
        params: base.params.clone(),
        now: base.now,
    }
}

/// Evaluates the expression at `toks[start..]`, returning its value and end.
fn eval_at(toks: &[Tok], start: usize, env: &Env) -> Result<(Value, usize)> {
    let mut p = Parser {
        toks: toks.to_vec(),
        pos: start,
        env,
    };
    let v = p.expr()?;
    Ok((v, p.pos))
}

/// The end of the expression at `start`, found by parsing it against a row
/// (needed before any row exists is an unsupported case).
fn is_clause_end(t: Option<&Tok>) -> bool {
    t.is_none()
        || [
            "WITH", "RETURN", "UNWIND", "WHERE", "ORDER", "SKIP", "LIMIT", "AS",
        ]
        .iter()
        .any(|k| kw(t, k))
        || t == Some(&Tok::Sym(","))
}

/// Runs `UNWIND`/`WITH [WHERE]`/`RETURN` queries without a graph and returns
/// the result rows; `None` if the query uses anything else. Aggregates must
/// be whole projection items (`RETURN count(*), max(x) AS m`).
pub fn run_query(query: &str, params: &BTreeMap<String, Value>) -> Option<Result<Vec<Vec<Value>>>> {
    let toks = lex(query).ok()?;
    const UNSUPPORTED: &[&str] = &[
        "MATCH", "CREATE", "MERGE", "CALL", "OPTIONAL", "UNION", "CASE", "EXISTS", "SET", "DELETE",
    ];
    if toks
        .iter()
        .any(|t| UNSUPPORTED.iter().any(|k| kw(Some(t), k)))
    {
        return None;
    }
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let base = Env {
        vars: BTreeMap::new(),
        params: params.clone(),
        now: (now.as_secs() as i64, now.subsec_nanos()),
    };
    let mut rows: Vec<BTreeMap<String, Value>> = vec![BTreeMap::new()];
    let mut pos = 0;
    loop {
        if kw(toks.get(pos), "UNWIND") {
            pos += 1;
            let mut next = Vec::new();
            let mut end = None;
            for row in &rows {
                let (v, e) = match eval_at(&toks, pos, &row_env(&base, row)) {
                    Ok(x) => x,
                    Err(e) if e.kind == ErrorKind::SemanticError => return None,
                    Err(e) => return Some(Err(e)),
                };
                end = Some(e);
                let items = match v {
                    Value::List(items) => items,
                    Value::Null => vec![],
                    other => vec![other],
                };
                if !kw(toks.get(e), "AS") {
                    return None;
                }
                let Some(Tok::Ident(name)) = toks.get(e + 1) else {
                    return None;
                };
                if next.len() + items.len() > 10_000 {
                    return None;
                }
                for item in items {
                    let mut r = row.clone();
                    r.insert(name.clone(), item);
                    next.push(r);
                }
            }
            pos = end? + 2;
            if next.len() > 10_000 {
                return None;
            }
            rows = next;
            continue;
        }
        let is_with = kw(toks.get(pos), "WITH");
        let is_return = kw(toks.get(pos), "RETURN");
        if !is_with && !is_return {
            return None;
        }
        pos += 1;
        if toks.get(pos) == Some(&Tok::Sym("*")) {
            return None;
        }
        let distinct = kw(toks.get(pos), "DISTINCT");
        if distinct {
            pos += 1;
        }
        // Items: find their token ranges by parsing against the first row.
        let probe = row_env(&base, rows.first()?);
        let mut items = Vec::new();
        loop {
            let (aggregate, start, end) = match aggregate_at(&toks, pos) {
                Some((kind, d, s, close)) if is_clause_end(toks.get(close + 1)) => {
                    (Some((kind, d)), s, close)
                }
                _ => {
                    let end = match eval_at(&toks, pos, &probe) {
                        Ok((_, e)) => e,
                        Err(e) if e.kind == ErrorKind::SemanticError => return None,
                        Err(e) => return Some(Err(e)),
                    };
                    (None, pos, end)
                }
            };
            pos = if aggregate.is_some() { end + 1 } else { end };
            let alias = if kw(toks.get(pos), "AS") {
                let Some(Tok::Ident(a)) = toks.get(pos + 1) else {
                    return None;
                };
                pos += 2;
                Some(a.clone())
            } else {
                None
            };
            items.push(Item {
                alias,
                start,
                end,
                aggregate,
            });
            if toks.get(pos) == Some(&Tok::Sym(",")) {
                pos += 1;
            } else {
                break;
            }
        }
        let out = match project(&toks, &items, &rows, &base) {
            Ok(out) => out,
            Err(e) => return Some(Err(e)),
        };
        let mut out = out;
        let plain = !distinct && items.iter().all(|i| i.aggregate.is_none());
        if distinct {
            let mut seen = std::collections::HashSet::new();
            out.retain(|r| seen.insert(r.iter().cloned().map(ops::GroupKey).collect::<Vec<_>>()));
        }
        let mut names = Vec::new();
        for item in &items {
            names.push(match &item.alias {
                Some(a) => a.clone(),
                None => match (&toks[item.start], item.end == item.start + 1) {
                    (Tok::Ident(n), true) => n.clone(),
                    _ if is_return => String::new(),
                    _ => return None,
                },
            });
        }
        // Variables visible after the projection (and to ORDER BY).
        let mut next = Vec::new();
        for (k, values) in out.iter().enumerate() {
            let mut vars = if plain && is_return {
                rows[k].clone()
            } else {
                BTreeMap::new()
            };
            for (name, v) in names.iter().zip(values) {
                if !name.is_empty() {
                    vars.insert(name.clone(), v.clone());
                }
            }
            next.push(vars);
        }
        if kw(toks.get(pos), "ORDER") {
            if !kw(toks.get(pos + 1), "BY") {
                return None;
            }
            pos += 2;
            let mut keys: Vec<(usize, bool)> = Vec::new();
            loop {
                let end = match eval_at(&toks, pos, &row_env(&base, next.first()?)) {
                    Ok((_, e)) => e,
                    Err(e) if e.kind == ErrorKind::SemanticError => return None,
                    Err(e) => return Some(Err(e)),
                };
                let start = pos;
                pos = end;
                let mut descending = false;
                if kw(toks.get(pos), "DESC") || kw(toks.get(pos), "DESCENDING") {
                    descending = true;
                    pos += 1;
                } else if kw(toks.get(pos), "ASC") || kw(toks.get(pos), "ASCENDING") {
                    pos += 1;
                }
                keys.push((start, descending));
                if toks.get(pos) == Some(&Tok::Sym(",")) {
                    pos += 1;
                } else {
                    break;
                }
            }
            let mut keyed = Vec::new();
            for (vars, values) in next.into_iter().zip(out) {
                let env = row_env(&base, &vars);
                let mut kv = Vec::new();
                for (start, _) in &keys {
                    match eval_at(&toks, *start, &env) {
                        Ok((v, _)) => kv.push(v),
                        Err(e) => return Some(Err(e)),
                    }
                }
                keyed.push((kv, vars, values));
            }
            keyed.sort_by(|a, b| {
                for (k, (_, descending)) in keys.iter().enumerate() {
                    let o = ops::order(&a.0[k], &b.0[k]);
                    let o = if *descending { o.reverse() } else { o };
                    if o != std::cmp::Ordering::Equal {
                        return o;
                    }
                }
                std::cmp::Ordering::Equal
            });
            next = Vec::new();
            out = Vec::new();
            for (_, vars, values) in keyed {
                next.push(vars);
                out.push(values);
            }
        }
        for clause in ["SKIP", "LIMIT"] {
            if kw(toks.get(pos), clause) {
                let Some(Tok::Int(n)) = toks.get(pos + 1) else {
                    return None;
                };
                let n = *n as usize;
                pos += 2;
                if clause == "SKIP" {
                    out = out.into_iter().skip(n).collect();
                    next = next.into_iter().skip(n).collect();
                } else {
                    out.truncate(n);
                    next.truncate(n);
                }
            }
        }
        if is_return {
            if pos != toks.len() {
                return None;
            }
            return Some(Ok(out));
        }
        if names.iter().any(String::is_empty) {
            return None;
        }
        rows = next;
        if kw(toks.get(pos), "WHERE") {
            pos += 1;
            let mut kept = Vec::new();
            let mut end = None;
            for row in rows {
                let (v, e) = match eval_at(&toks, pos, &row_env(&base, &row)) {
                    Ok(x) => x,
                    Err(e) if e.kind == ErrorKind::SemanticError => return None,
                    Err(e) => return Some(Err(e)),
                };
                end = Some(e);
                if v == Value::Bool(true) {
                    kept.push(row);
                }
            }
            pos = end?;
            rows = kept;
        }
        if rows.is_empty() {
            return None;
        }
    }
}

fn project(
    toks: &[Tok],
    items: &[Item],
    rows: &[BTreeMap<String, Value>],
    base: &Env,
) -> Result<Vec<Vec<Value>>> {
    let eval_item = |item: &Item, env: &Env| -> Result<Value> {
        let (v, end) = eval_at(toks, item.start, env)?;
        if end != item.end {
            return Err(Error::new(ErrorKind::SyntaxError, "item parse mismatch"));
        }
        Ok(v)
    };
    if items.iter().all(|i| i.aggregate.is_none()) {
        return rows
            .iter()
            .map(|row| {
                let env = row_env(base, row);
                items.iter().map(|i| eval_item(i, &env)).collect()
            })
            .collect();
    }
    // Group by the non-aggregate items, in first-seen order.
    let mut groups: Vec<(Vec<Value>, Vec<Accumulator>)> = Vec::new();
    let mut index: std::collections::HashMap<Vec<ops::GroupKey>, usize> =
        std::collections::HashMap::new();
    for row in rows {
        let env = row_env(base, row);
        let mut key = Vec::new();
        for item in items.iter().filter(|i| i.aggregate.is_none()) {
            key.push(eval_item(item, &env)?);
        }
        let gk: Vec<ops::GroupKey> = key.iter().cloned().map(ops::GroupKey).collect();
        let g = *index.entry(gk).or_insert_with(|| {
            let accs = items
                .iter()
                .filter_map(|i| i.aggregate)
                .map(|(k, d)| Accumulator::new(k, d))
                .collect();
            groups.push((key.clone(), accs));
            groups.len() - 1
        });
        let mut accs = std::mem::take(&mut groups[g].1);
        for (acc, item) in accs
            .iter_mut()
            .zip(items.iter().filter(|i| i.aggregate.is_some()))
        {
            if acc.kind() == AggregateKind::CountStar {
                acc.update_row();
                continue;
            }
            let mut p = Parser {
                toks: toks.to_vec(),
                pos: item.start,
                env: &env,
            };
            let mut args = vec![p.expr()?];
            while p.eat_sym(",") {
                args.push(p.expr()?);
            }
            acc.update_args(&args)?;
        }
        groups[g].1 = accs;
    }
    if groups.is_empty() && items.iter().all(|i| i.aggregate.is_some()) {
        let accs = items
            .iter()
            .filter_map(|i| i.aggregate)
            .map(|(k, d)| Accumulator::new(k, d))
            .collect();
        groups.push((Vec::new(), accs));
    }
    let mut out = Vec::new();
    for (key, accs) in groups {
        let mut key = key.into_iter();
        let mut accs = accs.into_iter();
        let mut row = Vec::new();
        for item in items {
            row.push(match item.aggregate {
                Some(_) => accs
                    .next()
                    .expect("one accumulator per aggregate")
                    .finish()?,
                None => key.next().expect("one key per item"),
            });
        }
        out.push(row);
    }
    Ok(out)
}
