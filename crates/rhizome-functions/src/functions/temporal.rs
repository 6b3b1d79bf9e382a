//! Dispatch of the temporal functions (`date`, `datetime.truncate`,
//! `duration.between`, ...) onto [`crate::temporal`].

use crate::entity::EntityAccess;
use crate::errors::wrong_type;
use crate::temporal::between::{between, Unit};
use crate::temporal::construct::{construct, from_epoch, from_epoch_millis, Kind};
use crate::temporal::truncate::truncate;
use crate::temporal::{duration, Zone};
use rhizome_common::{Error, Result, Value};

/// `duration(x)` from a map or an ISO 8601 string.
pub fn duration_of(v: &Value) -> Result<Value> {
    Ok(match v {
        Value::Null => Value::Null,
        Value::Map(m) => Value::Duration(duration::from_map(m)?),
        Value::String(s) => Value::Duration(duration::parse(s)?),
        Value::Duration(d) => Value::Duration(*d),
        _ => return Err(wrong_type("duration", v)),
    })
}

/// The current time as `kind`, in an optional zone given as a string.
fn current(kind: Kind, zone: Option<&Value>, now: (i64, u32)) -> Result<Value> {
    let zone = match zone {
        None => Zone::Offset(0),
        Some(Value::Null) => return Ok(Value::Null),
        Some(Value::String(s)) => Zone::parse(s)?,
        Some(Value::Map(m)) => {
            return crate::temporal::construct::from_map(kind, m, now);
        }
        Some(other) => return Err(wrong_type("time zone", other)),
    };
    crate::temporal::construct::at_instant(kind, now.0, now.1, &zone)
}

/// Evaluates a temporal function by lower-case name (arity already checked).
/// The current time comes from [`EntityAccess::statement_time`] when the
/// graph provides it.
pub fn call(name: &str, args: &[Value], graph: &dyn EntityAccess) -> Result<Value> {
    let statement_now = graph
        .statement_time()
        .unwrap_or_else(crate::temporal::construct::now_utc);
    let (base, member) = match name.split_once('.') {
        Some((b, m)) => (b, Some(m)),
        None => (name, None),
    };
    if base == "duration" {
        let unit = match member {
            None => return duration_of(&args[0]),
            Some("between") => Unit::All,
            Some("inmonths") => Unit::Months,
            Some("indays") => Unit::Days,
            Some("inseconds") => Unit::Seconds,
            Some(_) => return Err(Error::internal(format!("no function {name}"))),
        };
        return between(unit, &args[0], &args[1]);
    }
    let kind =
        Kind::from_name(base).ok_or_else(|| Error::internal(format!("no function {name}")))?;
    match member {
        None => construct(kind, args.first(), statement_now),
        Some("statement" | "transaction") => current(kind, args.first(), statement_now),
        Some("realtime") => current(kind, args.first(), crate::temporal::construct::now_utc()),
        Some("truncate") => match args.get(1) {
            Some(value) => truncate(kind, &args[0], value, args.get(2)),
            None => {
                let now = construct(kind, None, statement_now)?;
                truncate(kind, &args[0], &now, None)
            }
        },
        Some("fromepoch") => from_epoch(&args[0], &args[1]),
        Some("fromepochmillis") => from_epoch_millis(&args[0]),
        Some(_) => Err(Error::internal(format!("no function {name}"))),
    }
}
