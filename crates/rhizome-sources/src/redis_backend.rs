//! The Redis backend: a pool of multiplexed connections; a round is one
//! pipeline (`HMGET` per node hash, `LRANGE` per adjacency list, or
//! `ZRANGE` where the mapping says the neighbours are a sorted set), and
//! lookahead is one Lua script that walks the lists server-side.
//!
//! Values are strings in Redis; they are parsed as the mapping declares
//! (a value that does not parse is an error naming the key and field).

use crate::cache::AdjacencyList;
use crate::fetch::{bad_data, unavailable, value_bytes, Fetched, ListRef, Round};
use crate::mapping::{Mapping, PropertyType};
use redis::aio::MultiplexedConnection;
use rhizome_common::{Result, Value};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// How one node space is laid out.
struct NodeLayout {
    /// Key pattern split around the key: (before, after).
    pattern: (String, String),
    /// Hash field names and types, in the mapping's order.
    fields: Vec<(String, PropertyType)>,
}

/// How one list is laid out.
struct ListLayout {
    list: ListRef,
    pattern: (String, String),
    /// `LRANGE` for a list, `ZRANGE` for a sorted set (both `key 0 -1`).
    range: &'static str,
    /// Index of the neighbour field in an element.
    neighbour: usize,
    /// Index of the relationship key field (spaces with a key).
    rel_key: Option<usize>,
    /// Index in an element of each mapped property, in the mapping's order.
    properties: Vec<(usize, PropertyType)>,
}

/// A Redis source's connections.
pub struct Redis {
    name: String,
    client: redis::Client,
    nodes: Vec<NodeLayout>,
    lists: Vec<ListLayout>,
    pool: Vec<Mutex<Option<MultiplexedConnection>>>,
    next: AtomicUsize,
    lookahead: redis::Script,
}

/// Splits `prefix{key}suffix` around the braces.
fn split_pattern(pattern: &str) -> (String, String) {
    let open = pattern.find('{').unwrap_or(pattern.len());
    let close = pattern[open..]
        .find('}')
        .map_or(pattern.len(), |c| open + c + 1);
    (
        pattern[..open].to_string(),
        pattern[close.min(pattern.len())..].to_string(),
    )
}

/// Breadth-first search over adjacency lists, server-side.
/// ARGV: depth, list prefix, list suffix, node prefix, node suffix,
/// neighbour field index (1-based), the range command (`LRANGE` or
/// `ZRANGE`), field count F, F field names, seeds...
/// Returns { expanded keys, their lists, reached keys, their field values }.
const LOOKAHEAD_LUA: &str = r#"
local depth = tonumber(ARGV[1])
local lp, ls, np, ns = ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local nb = tonumber(ARGV[6])
local range = ARGV[7]
local nf = tonumber(ARGV[8])
local fields = {}
for i = 1, nf do fields[i] = ARGV[8 + i] end
local seen, frontier, all = {}, {}, {}
for i = 9 + nf, #ARGV do
  local k = ARGV[i]
  if not seen[k] then seen[k] = true; frontier[#frontier + 1] = k; all[#all + 1] = k end
end
local expanded, lists = {}, {}
for d = 1, depth do
  local nextf = {}
  for _, k in ipairs(frontier) do
    local list = redis.call(range, lp .. k .. ls, 0, -1)
    expanded[#expanded + 1] = k
    lists[#lists + 1] = list
    for _, e in ipairs(list) do
      local i, n = 0, nil
      for part in string.gmatch(e, '[^:]+') do
        i = i + 1
        if i == nb then n = part; break end
      end
      if n and not seen[n] then seen[n] = true; nextf[#nextf + 1] = n; all[#all + 1] = n end
    end
  end
  frontier = nextf
end
local values = {}
for i, k in ipairs(all) do
  values[i] = redis.call('HMGET', np .. k .. ns, unpack(fields))
end
return { expanded, lists, all, values }
"#;

fn parse_value(text: &str, ty: PropertyType) -> Option<Value> {
    Some(match ty {
        PropertyType::Integer => Value::Int(text.trim().parse().ok()?),
        PropertyType::Float => Value::Float(text.trim().parse().ok()?),
        PropertyType::String => Value::String(text.to_string()),
        PropertyType::Boolean => Value::Bool(match text.trim() {
            "true" | "1" => true,
            "false" | "0" => false,
            _ => return None,
        }),
        PropertyType::StringList if text.is_empty() => Value::List(Vec::new()),
        PropertyType::StringList => Value::List(
            text.split(';')
                .map(|s| Value::String(s.to_string()))
                .collect(),
        ),
    })
}

fn as_text(value: &redis::Value) -> Option<String> {
    match value {
        redis::Value::BulkString(bytes) => Some(String::from_utf8_lossy(bytes).into_owned()),
        redis::Value::SimpleString(s) => Some(s.clone()),
        redis::Value::Int(i) => Some(i.to_string()),
        _ => None,
    }
}

impl Redis {
    /// Opens the pool (one connection now, to fail early) and lays out the mapping.
    pub async fn connect(mapping: &Mapping) -> Result<Redis> {
        let client = redis::Client::open(mapping.connection.as_str())
            .map_err(|e| unavailable(&mapping.name, format!("bad Redis URL: {e}")))?;
        let nodes = mapping
            .nodes
            .iter()
            .map(|space| NodeLayout {
                pattern: split_pattern(&space.fetch),
                fields: space.properties.clone(),
            })
            .collect();
        let mut lists = Vec::new();
        for (r, rel) in mapping.relationships.iter().enumerate() {
            for (outgoing, fetch) in [(true, &rel.outgoing), (false, &rel.incoming)] {
                let Some(fetch) = fetch else { continue };
                let index = |name: &str| {
                    fetch
                        .element
                        .iter()
                        .position(|f| f == name)
                        .expect("validated")
                };
                lists.push(ListLayout {
                    list: ListRef {
                        rel: r as u16,
                        outgoing,
                    },
                    pattern: split_pattern(&fetch.template),
                    range: if fetch.sorted_set { "ZRANGE" } else { "LRANGE" },
                    neighbour: index("neighbour"),
                    rel_key: rel.key.as_deref().map(index),
                    properties: rel
                        .properties
                        .iter()
                        .map(|(name, ty)| {
                            (
                                fetch
                                    .element
                                    .iter()
                                    .position(|f| f == name)
                                    .unwrap_or(usize::MAX),
                                *ty,
                            )
                        })
                        .collect(),
                });
            }
        }
        let redis = Redis {
            name: mapping.name.clone(),
            client,
            nodes,
            lists,
            pool: (0..mapping.pool_size).map(|_| Mutex::new(None)).collect(),
            next: AtomicUsize::new(0),
            lookahead: redis::Script::new(LOOKAHEAD_LUA),
        };
        redis.connection().await?;
        Ok(redis)
    }

    async fn connection(&self) -> Result<MultiplexedConnection> {
        let slot = self.next.fetch_add(1, Ordering::Relaxed) % self.pool.len();
        if let Some(c) = self.pool[slot]
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
        {
            return Ok(c);
        }
        let c = self
            .client
            .get_multiplexed_async_connection()
            .await
            .map_err(|e| unavailable(&self.name, format!("cannot connect to Redis: {e}")))?;
        *self.pool[slot].lock().unwrap_or_else(|p| p.into_inner()) = Some(c.clone());
        Ok(c)
    }

    /// Forgets every pooled connection (after an I/O error), so the next
    /// request reconnects.
    fn drop_connections(&self) {
        for slot in &self.pool {
            *slot.lock().unwrap_or_else(|p| p.into_inner()) = None;
        }
    }

    fn failed(&self, e: redis::RedisError) -> rhizome_common::Error {
        if e.is_io_error()
            || e.is_connection_dropped()
            || e.is_connection_refusal()
            || e.is_timeout()
        {
            self.drop_connections();
            unavailable(&self.name, format!("the connection to Redis failed: {e}"))
        } else {
            unavailable(&self.name, format!("Redis: {e}"))
        }
    }

    fn layout(&self, list: ListRef) -> &ListLayout {
        self.lists
            .iter()
            .find(|l| l.list == list)
            .expect("every list has a layout")
    }

    /// A node's properties from an HMGET reply; `None` when every field is nil.
    fn node_values(
        &self,
        space: u16,
        key: i64,
        reply: &redis::Value,
        out: &mut Fetched,
    ) -> Result<Option<Vec<Value>>> {
        let layout = &self.nodes[space as usize];
        let redis::Value::Array(items) = reply else {
            return Err(bad_data(
                &self.name,
                format!(
                    "{}{key}{} is not a hash",
                    layout.pattern.0, layout.pattern.1
                ),
            ));
        };
        if items.iter().all(|v| matches!(v, redis::Value::Nil)) {
            return Ok(None);
        }
        let mut values = Vec::with_capacity(items.len());
        for ((field, ty), item) in layout.fields.iter().zip(items) {
            let value = match as_text(item) {
                None => Value::Null,
                Some(text) => parse_value(&text, *ty).ok_or_else(|| {
                    bad_data(
                        &self.name,
                        format!(
                            "field `{field}` of {}{key}{} is `{text}`, not a {ty:?}",
                            layout.pattern.0, layout.pattern.1
                        ),
                    )
                })?,
            };
            out.bytes += value_bytes(&value);
            values.push(value);
        }
        out.rows += 1;
        Ok(Some(values))
    }

    /// An adjacency list from an `LRANGE` or `ZRANGE` reply.
    fn list_values(
        &self,
        list: ListRef,
        key: i64,
        reply: &redis::Value,
        out: &mut Fetched,
    ) -> Result<AdjacencyList> {
        let layout = self.layout(list);
        let name = || format!("{}{key}{}", layout.pattern.0, layout.pattern.1);
        let redis::Value::Array(items) = reply else {
            return Err(bad_data(&self.name, format!("{} is not a list", name())));
        };
        let mut adjacency = AdjacencyList::default();
        for item in items {
            let text = as_text(item).ok_or_else(|| {
                bad_data(&self.name, format!("{} holds a non-string element", name()))
            })?;
            out.bytes += text.len() as u64;
            out.rows += 1;
            let parts: Vec<&str> = text.split(':').collect();
            let int = |i: usize, what: &str| -> Result<i64> {
                parts.get(i).and_then(|p| p.parse().ok()).ok_or_else(|| {
                    bad_data(
                        &self.name,
                        format!("element `{text}` of {} has no integer {what}", name()),
                    )
                })
            };
            adjacency
                .neighbours
                .push(int(layout.neighbour, "neighbour")?);
            // Without a key the query graph tells relationships apart by
            // their endpoints.
            adjacency.rels.push(match layout.rel_key {
                Some(i) => int(i, "relationship key")?,
                None => 0,
            });
            adjacency.properties.push(
                layout
                    .properties
                    .iter()
                    .map(|&(i, ty)| {
                        parts
                            .get(i)
                            .and_then(|p| parse_value(p, ty))
                            .unwrap_or(Value::Null)
                    })
                    .collect(),
            );
        }
        Ok(adjacency)
    }

    /// Every key of a node space: the members of the sorted set `set`,
    /// for a label scan.
    pub async fn keys(&self, set: &str) -> Result<Vec<i64>> {
        let mut conn = self.connection().await?;
        let members: Vec<String> = redis::cmd("ZRANGE")
            .arg(set)
            .arg(0)
            .arg(-1)
            .query_async(&mut conn)
            .await
            .map_err(|e| self.failed(e))?;
        members
            .iter()
            .map(|m| {
                m.parse::<i64>().map_err(|_| {
                    bad_data(
                        &self.name,
                        format!("member `{m}` of sorted set `{set}` is not an integer key"),
                    )
                })
            })
            .collect()
    }

    /// How many keys the sorted set `set` holds (`ZCARD`), for the
    /// planner's label counts.
    pub async fn count_keys(&self, set: &str) -> Result<u64> {
        let mut conn = self.connection().await?;
        redis::cmd("ZCARD")
            .arg(set)
            .query_async(&mut conn)
            .await
            .map_err(|e| self.failed(e))
    }

    /// How many relationships list `list` holds over every member of the
    /// sorted set `set` (the `LLEN` of each member's list, pipelined
    /// 10,000 at a time), for the planner's relationship counts.
    pub async fn count_relationships(&self, list: ListRef, set: &str) -> Result<u64> {
        let Some(layout) = self.lists.iter().find(|l| l.list == list) else {
            return Ok(0);
        };
        let keys = self.keys(set).await?;
        let mut conn = self.connection().await?;
        let mut total = 0u64;
        for chunk in keys.chunks(10_000) {
            let mut pipe = redis::pipe();
            for k in chunk {
                pipe.cmd("LLEN")
                    .arg(format!("{}{k}{}", layout.pattern.0, layout.pattern.1));
            }
            let lengths: Vec<u64> = pipe
                .query_async(&mut conn)
                .await
                .map_err(|e| self.failed(e))?;
            total += lengths.iter().sum::<u64>();
        }
        Ok(total)
    }

    /// Runs a round as one pipeline.
    pub async fn round(&self, round: &Round) -> Result<Fetched> {
        let mut pipe = redis::pipe();
        for (space, keys) in &round.nodes {
            let layout = &self.nodes[*space as usize];
            for k in keys {
                let mut cmd = redis::cmd("HMGET");
                cmd.arg(format!("{}{k}{}", layout.pattern.0, layout.pattern.1));
                for (field, _) in &layout.fields {
                    cmd.arg(field);
                }
                pipe.add_command(cmd);
            }
        }
        for (list, keys) in &round.adjacency {
            let layout = self.layout(*list);
            for k in keys {
                pipe.cmd(layout.range)
                    .arg(format!("{}{k}{}", layout.pattern.0, layout.pattern.1))
                    .arg(0)
                    .arg(-1);
            }
        }
        let mut conn = self.connection().await?;
        let replies: Vec<redis::Value> = pipe
            .query_async(&mut conn)
            .await
            .map_err(|e| self.failed(e))?;
        let mut replies = replies.iter();
        let mut out = Fetched::default();
        for (space, keys) in &round.nodes {
            for &k in keys {
                let reply = replies
                    .next()
                    .ok_or_else(|| bad_data(&self.name, "too few replies"))?;
                let values = self.node_values(*space, k, reply, &mut out)?;
                out.nodes.push((*space, k, values));
            }
        }
        for (list, keys) in &round.adjacency {
            for &k in keys {
                let reply = replies
                    .next()
                    .ok_or_else(|| bad_data(&self.name, "too few replies"))?;
                let adjacency = self.list_values(*list, k, reply, &mut out)?;
                out.adjacency.push((*list, k, adjacency));
            }
        }
        Ok(out)
    }

    /// The depth-`depth` neighbourhood of `keys` along `list` (node space 0)
    /// in one round trip (a Lua script).
    pub async fn lookahead(&self, list: ListRef, keys: &[i64], depth: u32) -> Result<Fetched> {
        let layout = self.layout(list);
        let node = &self.nodes[0];
        let mut invocation = self.lookahead.prepare_invoke();
        invocation
            .arg(depth)
            .arg(&layout.pattern.0)
            .arg(&layout.pattern.1)
            .arg(&node.pattern.0)
            .arg(&node.pattern.1)
            .arg(layout.neighbour + 1)
            .arg(layout.range)
            .arg(node.fields.len());
        for (field, _) in &node.fields {
            invocation.arg(field);
        }
        for k in keys {
            invocation.arg(*k);
        }
        let mut conn = self.connection().await?;
        let reply: redis::Value = invocation
            .invoke_async(&mut conn)
            .await
            .map_err(|e| self.failed(e))?;
        let redis::Value::Array(parts) = reply else {
            return Err(bad_data(
                &self.name,
                "the lookahead script returned no array",
            ));
        };
        let array = |i: usize| match parts.get(i) {
            Some(redis::Value::Array(a)) => Ok(a.as_slice()),
            _ => Err(bad_data(
                &self.name,
                "the lookahead script returned a malformed reply",
            )),
        };
        let key_of = |v: &redis::Value| -> Result<i64> {
            as_text(v).and_then(|t| t.parse().ok()).ok_or_else(|| {
                bad_data(
                    &self.name,
                    "the lookahead script returned a non-integer key",
                )
            })
        };
        let mut out = Fetched::default();
        for (k, list_reply) in array(0)?.iter().zip(array(1)?) {
            let key = key_of(k)?;
            let adjacency = self.list_values(list, key, list_reply, &mut out)?;
            out.adjacency.push((list, key, adjacency));
        }
        for (k, values) in array(2)?.iter().zip(array(3)?) {
            let key = key_of(k)?;
            let values = self.node_values(0, key, values, &mut out)?;
            out.nodes.push((0, key, values));
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_split_around_the_key() {
        assert_eq!(
            split_pattern("lux:junction:{id}"),
            ("lux:junction:".into(), String::new())
        );
        assert_eq!(split_pattern("a{id}b"), ("a".into(), "b".into()));
    }

    #[test]
    fn values_parse_as_declared() {
        assert_eq!(
            parse_value("42", PropertyType::Integer),
            Some(Value::Int(42))
        );
        assert_eq!(
            parse_value("49.5", PropertyType::Float),
            Some(Value::Float(49.5))
        );
        assert_eq!(parse_value("x", PropertyType::Integer), None);
        assert_eq!(
            parse_value("es;en", PropertyType::StringList),
            Some(Value::List(vec![
                Value::String("es".into()),
                Value::String("en".into())
            ]))
        );
        assert_eq!(
            parse_value("", PropertyType::StringList),
            Some(Value::List(Vec::new()))
        );
        assert_eq!(
            parse_value("true", PropertyType::Boolean),
            Some(Value::Bool(true))
        );
    }
}
