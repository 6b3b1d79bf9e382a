//! Column types the source reads, values decoded from rows, and key
//! arrays bound as the narrowest integer array a statement takes.

use super::*;

pub(super) fn supported(ty: &Type) -> bool {
    [
        Type::INT2,
        Type::INT4,
        Type::INT8,
        Type::FLOAT4,
        Type::FLOAT8,
        Type::TEXT,
        Type::VARCHAR,
        Type::BPCHAR,
        Type::NAME,
        Type::BOOL,
        Type::TEXT_ARRAY,
        Type::VARCHAR_ARRAY,
    ]
    .contains(ty)
}

pub(super) fn is_integer(ty: &Type) -> bool {
    [Type::INT2, Type::INT4, Type::INT8].contains(ty)
}

/// Finds the columns of a prepared statement.
pub(super) fn columns(
    statement: &Statement,
    at: &str,
    properties: &[(String, PropertyType)],
    extra: &[&str],
) -> Result<(Vec<usize>, Vec<usize>)> {
    let cols = statement.columns();
    let find = |name: &str| cols.iter().position(|c| c.name() == name);
    let mut props = Vec::new();
    for (name, ty) in properties {
        let i = find(name).ok_or_else(|| {
            mapping_error(
                at,
                format!(
                    "the query returns no column `{name}` (it returns {})",
                    cols.iter().map(|c| c.name()).collect::<Vec<_>>().join(", ")
                ),
            )
        })?;
        let col_ty = cols[i].type_();
        let fits = match ty {
            PropertyType::Integer => is_integer(col_ty),
            PropertyType::Float => {
                is_integer(col_ty) || [Type::FLOAT4, Type::FLOAT8].contains(col_ty)
            }
            PropertyType::String => {
                [Type::TEXT, Type::VARCHAR, Type::BPCHAR, Type::NAME].contains(col_ty)
            }
            PropertyType::Boolean => *col_ty == Type::BOOL,
            PropertyType::StringList => [Type::TEXT_ARRAY, Type::VARCHAR_ARRAY].contains(col_ty),
        };
        if !fits || !supported(col_ty) {
            return Err(mapping_error(
                at,
                format!(
                    "column `{name}` has SQL type {col_ty}, which does not fit the declared {ty:?}"
                ),
            ));
        }
        props.push(i);
    }
    let mut more = Vec::new();
    for name in extra {
        let i = find(name)
            .ok_or_else(|| mapping_error(at, format!("the query returns no column `{name}`")))?;
        if !is_integer(cols[i].type_()) {
            return Err(mapping_error(
                at,
                format!("column `{name}` must be an integer"),
            ));
        }
        more.push(i);
    }
    Ok((props, more))
}

pub(super) fn check_key_array(statement: &Statement, at: &str) -> Result<()> {
    match statement.params().first() {
        Some(t) if *t == Type::INT4_ARRAY || *t == Type::INT8_ARRAY || *t == Type::INT2_ARRAY => {
            Ok(())
        }
        Some(t) => Err(mapping_error(
            at,
            format!("$1 must be an array of integer keys, PostgreSQL reads it as {t}"),
        )),
        None => Err(mapping_error(at, "has no parameter $1")),
    }
}

/// Decodes column `i` of `row` as a value.
pub(super) fn decode(row: &Row, i: usize) -> std::result::Result<Value, tokio_postgres::Error> {
    let ty = row.columns()[i].type_().clone();
    Ok(match ty {
        Type::INT2 => row
            .try_get::<_, Option<i16>>(i)?
            .map_or(Value::Null, |v| Value::Int(v.into())),
        Type::INT4 => row
            .try_get::<_, Option<i32>>(i)?
            .map_or(Value::Null, |v| Value::Int(v.into())),
        Type::INT8 => row
            .try_get::<_, Option<i64>>(i)?
            .map_or(Value::Null, Value::Int),
        Type::FLOAT4 => row
            .try_get::<_, Option<f32>>(i)?
            .map_or(Value::Null, |v| Value::Float(v.into())),
        Type::FLOAT8 => row
            .try_get::<_, Option<f64>>(i)?
            .map_or(Value::Null, Value::Float),
        Type::BOOL => row
            .try_get::<_, Option<bool>>(i)?
            .map_or(Value::Null, Value::Bool),
        Type::TEXT_ARRAY | Type::VARCHAR_ARRAY => row
            .try_get::<_, Option<Vec<Option<String>>>>(i)?
            .map_or(Value::Null, |items| {
                Value::List(
                    items
                        .into_iter()
                        .map(|s| s.map_or(Value::Null, Value::String))
                        .collect(),
                )
            }),
        _ => row
            .try_get::<_, Option<String>>(i)?
            .map_or(Value::Null, Value::String),
    })
}

pub(super) fn int_at(row: &Row, i: usize, source: &str, what: &str) -> Result<i64> {
    match decode(row, i).map_err(|e| unavailable(source, e))? {
        Value::Int(v) => Ok(v),
        other => Err(bad_data(
            source,
            format!("{what} is {}, not an integer", other.type_name()),
        )),
    }
}

/// Keys as the statement's array type wants them.
pub(super) fn narrow(statement: &Statement, keys: &[i64]) -> KeyArray {
    if statement.params().first() == Some(&Type::INT8_ARRAY) {
        KeyArray::Big(keys.to_vec())
    } else {
        KeyArray::Int(
            keys.iter()
                .map(|&k| k.clamp(i32::MIN.into(), i32::MAX.into()) as i32)
                .collect(),
        )
    }
}

/// An array parameter of the right width.
#[derive(Debug)]
pub(super) enum KeyArray {
    Int(Vec<i32>),
    Big(Vec<i64>),
}

impl tokio_postgres::types::ToSql for KeyArray {
    fn to_sql(
        &self,
        ty: &Type,
        out: &mut tokio_postgres::types::private::BytesMut,
    ) -> std::result::Result<tokio_postgres::types::IsNull, Box<dyn std::error::Error + Sync + Send>>
    {
        match self {
            KeyArray::Int(v) => v.to_sql(ty, out),
            KeyArray::Big(v) => v.to_sql(ty, out),
        }
    }

    fn accepts(ty: &Type) -> bool {
        <Vec<i32> as tokio_postgres::types::ToSql>::accepts(ty)
            || <Vec<i64> as tokio_postgres::types::ToSql>::accepts(ty)
    }

    tokio_postgres::types::to_sql_checked!();
}
