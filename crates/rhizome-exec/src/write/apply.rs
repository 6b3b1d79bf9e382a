//! Applying one write operator to its input rows, row by row, in order.

use super::{UpdateRun, Values};
use crate::compile::CNode;
use crate::context::GraphAccess;
use rhizome_common::{Error, ErrorKind, Result, Value};
use rhizome_functions::EntityAccess;
use rhizome_plan::{CreateNode, CreateRel, Expr, OpKind, RemoveItem, SetItem};
use rhizome_storage::GraphRead;
use std::collections::BTreeMap;

fn type_error(message: String) -> Error {
    Error::new(ErrorKind::TypeError, message).with_code("InvalidArgumentType")
}

impl UpdateRun<'_> {
    /// Applies the write operator `node` to `rows`; returns its output rows.
    pub(crate) fn apply(&mut self, node: &CNode, rows: Vec<Values>) -> Result<Vec<Values>> {
        let mut out = Vec::with_capacity(rows.len());
        match &node.kind {
            OpKind::Create { nodes, rels } => {
                for mut row in rows {
                    self.create(nodes, rels, &mut row)?;
                    out.push(row);
                }
            }
            OpKind::SetItems { items } => {
                for row in rows {
                    self.set_items(items, &row)?;
                    out.push(row);
                }
            }
            OpKind::RemoveItems { items } => {
                for row in rows {
                    self.remove_items(items, &row)?;
                    out.push(row);
                }
            }
            OpKind::Delete { exprs, detach } => {
                self.delete(exprs, *detach, &rows)?;
                out = rows;
            }
            OpKind::Merge {
                nodes,
                rels,
                on_create,
                on_match,
            } => {
                let inner = node.inputs[1].id;
                for mut row in rows {
                    self.merge_properties_not_null(nodes, rels, &row)?;
                    let matched = self.inner_rows(inner, &row)?;
                    if matched.is_empty() {
                        self.create(nodes, rels, &mut row)?;
                        self.set_items(on_create, &row)?;
                        out.push(row);
                    } else {
                        for m in matched {
                            self.set_items(on_match, &m)?;
                            out.push(m);
                        }
                    }
                }
            }
            OpKind::Foreach { variable, list } => {
                let body = node.inputs[1].id;
                for row in rows {
                    let elements = match self.eval(list, &row)? {
                        Value::Null => Vec::new(),
                        Value::List(items) => items,
                        other => {
                            return Err(type_error(format!(
                                "FOREACH expects a list, got {}",
                                other.type_name()
                            )))
                        }
                    };
                    for element in elements {
                        let mut inner = row.clone();
                        inner[*variable] = element;
                        self.chain_rows(body, &inner)?;
                    }
                    out.push(row);
                }
            }
            other => {
                return Err(Error::new(
                    ErrorKind::Internal,
                    format!("{other:?} is not a write operator"),
                ))
            }
        }
        Ok(out)
    }

    /// `MERGE` cannot match or create a property with a null value.
    fn merge_properties_not_null(
        &mut self,
        nodes: &[CreateNode],
        rels: &[CreateRel],
        row: &[Value],
    ) -> Result<()> {
        let maps = nodes
            .iter()
            .map(|n| &n.properties)
            .chain(rels.iter().map(|r| &r.properties));
        for map in maps.flatten() {
            if let Value::Map(m) = self.eval(map, row)? {
                if let Some((key, _)) = m.iter().find(|(_, v)| v.is_null()) {
                    return Err(Error::new(
                        ErrorKind::SemanticError,
                        format!("cannot merge using a null property value for `{key}`"),
                    )
                    .with_code("MergeReadOwnWrites"));
                }
            }
        }
        Ok(())
    }

    /// The entries of a property map expression (nulls dropped).
    fn property_map(&mut self, e: &Option<Expr>, row: &[Value]) -> Result<Vec<(String, Value)>> {
        let Some(e) = e else {
            return Ok(Vec::new());
        };
        match self.eval(e, row)? {
            Value::Map(m) => Ok(m.into_iter().filter(|(_, v)| !v.is_null()).collect()),
            Value::Null => Ok(Vec::new()),
            other => Err(type_error(format!(
                "expected a map of properties, got {}",
                other.type_name()
            ))),
        }
    }

    /// Creates `nodes` then `rels` on `row`.
    fn create(&mut self, nodes: &[CreateNode], rels: &[CreateRel], row: &mut Values) -> Result<()> {
        for n in nodes {
            let props = self.property_map(&n.properties, row)?;
            let labels: Vec<&str> = n.labels.iter().map(String::as_str).collect();
            let props: Vec<(&str, Value)> =
                props.iter().map(|(k, v)| (k.as_str(), v.clone())).collect();
            let id = self.writer().create_node(&labels, &props)?;
            self.wrote();
            row[n.slot] = Value::Node(id);
        }
        for r in rels {
            let props = self.property_map(&r.properties, row)?;
            let (Value::Node(start), Value::Node(end)) = (&row[r.start], &row[r.end]) else {
                return Err(Error::new(
                    ErrorKind::SemanticError,
                    "cannot create a relationship with a missing (null) end node",
                )
                .with_code("CreatingRelationshipWithNullEndpoint"));
            };
            let props: Vec<(&str, Value)> =
                props.iter().map(|(k, v)| (k.as_str(), v.clone())).collect();
            let id = self
                .writer()
                .create_relationship(*start, *end, &r.rel_type, &props)?;
            self.wrote();
            row[r.slot] = Value::Relationship(id);
        }
        Ok(())
    }

    /// Sets (null: removes) one property of a node or relationship.
    fn set_property(&mut self, entity: &Value, key: &str, value: Value) -> Result<()> {
        match entity {
            Value::Null => return Ok(()),
            Value::Node(id) => {
                if !GraphRead::node_exists(&*self.txn, *id) {
                    return Ok(());
                }
                self.writer().set_node_property(*id, key, value)?
            }
            Value::Relationship(id) => {
                if GraphRead::relationship(&*self.txn, *id).is_none() {
                    return Ok(());
                }
                self.writer().set_rel_property(*id, key, value)?
            }
            other => {
                return Err(type_error(format!(
                    "cannot set a property on a {}",
                    other.type_name()
                )))
            }
        }
        self.wrote();
        Ok(())
    }

    /// The properties of an entity (for `SET n = m` with `m` a node or relationship).
    fn properties_of(&mut self, v: &Value) -> Result<BTreeMap<String, Value>> {
        let q = self.context()?;
        let g = GraphAccess(&q.snapshot);
        match v {
            Value::Null => Ok(BTreeMap::new()),
            Value::Map(m) => Ok(m.clone()),
            Value::Node(id) => g.node_properties(*id),
            Value::Relationship(id) => g.rel_properties(*id),
            other => Err(type_error(format!(
                "expected a map, node or relationship, got {}",
                other.type_name()
            ))),
        }
    }

    /// Applies assignments in order to `row`.
    pub(crate) fn set_items(&mut self, items: &[SetItem], row: &[Value]) -> Result<()> {
        for item in items {
            match item {
                SetItem::Property { entity, key, value } => {
                    let target = self.eval(entity, row)?;
                    let value = self.eval(value, row)?;
                    self.set_property(&target, key, value)?;
                }
                SetItem::Properties {
                    entity,
                    map,
                    replace,
                } => {
                    let target = self.eval(entity, row)?;
                    let source = self.eval(map, row)?;
                    let new = self.properties_of(&source)?;
                    if target.is_null() {
                        continue;
                    }
                    if *replace {
                        for key in self.properties_of(&target)?.into_keys() {
                            if !new.contains_key(&key) {
                                self.set_property(&target, &key, Value::Null)?;
                            }
                        }
                    }
                    for (key, value) in new {
                        self.set_property(&target, &key, value)?;
                    }
                }
                SetItem::Labels { entity, labels } => match self.eval(entity, row)? {
                    Value::Null => {}
                    Value::Node(id) => {
                        for l in labels {
                            self.writer().add_label(id, l)?;
                        }
                        self.wrote();
                    }
                    other => {
                        return Err(type_error(format!(
                            "cannot set labels on a {}",
                            other.type_name()
                        )))
                    }
                },
            }
        }
        Ok(())
    }

    /// Removes properties and labels in order.
    fn remove_items(&mut self, items: &[RemoveItem], row: &[Value]) -> Result<()> {
        for item in items {
            match item {
                RemoveItem::Property { entity, key } => {
                    let target = self.eval(entity, row)?;
                    self.set_property(&target, key, Value::Null)?;
                }
                RemoveItem::Labels { entity, labels } => match self.eval(entity, row)? {
                    Value::Null => {}
                    Value::Node(id) => {
                        for l in labels {
                            self.writer().remove_label(id, l)?;
                        }
                        self.wrote();
                    }
                    other => {
                        return Err(type_error(format!(
                            "cannot remove labels from a {}",
                            other.type_name()
                        )))
                    }
                },
            }
        }
        Ok(())
    }
}
