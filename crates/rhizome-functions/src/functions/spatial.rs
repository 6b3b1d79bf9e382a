//! Spatial functions: `point`, `point.distance` (also `distance`) and
//! `point.withinBBox`.
//!
//! `Value` has no point type yet, so a point is a map with its coordinates
//! as floats plus `crs` and `srid`: `{crs: 'cartesian', srid: 7203, x, y}`,
//! `'cartesian-3d'`/9157 with `z`, `'wgs-84'`/4326 with `longitude`,
//! `latitude` (and `x`/`y` aliases), `'wgs-84-3d'`/4979 with `height`.
//! Property access (`p.x`, `p.latitude`) therefore works as for maps.

use crate::errors::{argument, invalid_type, wrong_type};
use rhizome_common::{Result, Value};
use std::collections::BTreeMap;

/// Mean Earth radius Neo4j uses for WGS-84 distances, in metres.
const EARTH_RADIUS_METERS: f64 = 6_378_140.0;

fn coord(map: &BTreeMap<String, Value>, keys: &[&str]) -> Result<Option<f64>> {
    for k in keys {
        match map.get(*k) {
            None | Some(Value::Null) => continue,
            Some(Value::Int(i)) => return Ok(Some(*i as f64)),
            Some(Value::Float(x)) => return Ok(Some(*x)),
            Some(other) => return Err(wrong_type("point coordinate", other)),
        }
    }
    Ok(None)
}

/// `point({x, y[, z]})` or `point({longitude, latitude[, height]})`
/// (an explicit `crs` or `srid` may choose the system).
pub fn point(v: &Value) -> Result<Value> {
    let map = match v {
        Value::Null => return Ok(Value::Null),
        Value::Map(m) => m,
        other => return Err(wrong_type("point", other)),
    };
    let crs = match map.get("crs") {
        Some(Value::String(s)) => Some(s.to_ascii_lowercase()),
        _ => None,
    };
    let geographic = crs.as_deref().is_some_and(|c| c.starts_with("wgs-84"))
        || matches!(map.get("srid"), Some(Value::Int(4326 | 4979)))
        || map.contains_key("longitude")
        || map.contains_key("latitude");
    let (x, y, z) = if geographic {
        (
            coord(map, &["longitude", "x"])?,
            coord(map, &["latitude", "y"])?,
            coord(map, &["height", "z"])?,
        )
    } else {
        (
            coord(map, &["x"])?,
            coord(map, &["y"])?,
            coord(map, &["z"])?,
        )
    };
    let (Some(x), Some(y)) = (x, y) else {
        return Err(argument(
            "InvalidArgumentValue",
            "a point needs x and y, or longitude and latitude",
        ));
    };
    let mut out = BTreeMap::new();
    let f = |v: f64| Value::Float(v);
    if geographic {
        out.insert("longitude".into(), f(x));
        out.insert("latitude".into(), f(y));
    }
    out.insert("x".into(), f(x));
    out.insert("y".into(), f(y));
    let (name, srid) = match (geographic, z) {
        (false, None) => ("cartesian", 7203),
        (false, Some(z)) => {
            out.insert("z".into(), f(z));
            ("cartesian-3d", 9157)
        }
        (true, None) => ("wgs-84", 4326),
        (true, Some(h)) => {
            out.insert("height".into(), f(h));
            out.insert("z".into(), f(h));
            ("wgs-84-3d", 4979)
        }
    };
    out.insert("crs".into(), Value::String(name.into()));
    out.insert("srid".into(), Value::Int(srid));
    Ok(Value::Map(out))
}

struct Point {
    crs: String,
    x: f64,
    y: f64,
    z: Option<f64>,
}

fn as_point(v: &Value) -> Result<Option<Point>> {
    let map = match v {
        Value::Null => return Ok(None),
        Value::Map(m) => m,
        other => return Err(wrong_type("a point argument", other)),
    };
    let crs = match map.get("crs") {
        Some(Value::String(s)) => s.clone(),
        _ => return Err(invalid_type("the map is not a point (no `crs`)")),
    };
    let x = coord(map, &["x"])?.ok_or_else(|| invalid_type("a point needs x"))?;
    let y = coord(map, &["y"])?.ok_or_else(|| invalid_type("a point needs y"))?;
    Ok(Some(Point {
        crs,
        x,
        y,
        z: coord(map, &["z"])?,
    }))
}

/// `point.distance(a, b)`: Euclidean for cartesian points, haversine
/// great-circle metres for WGS-84 (with height difference in 3D); null for
/// points of different coordinate systems.
pub fn distance(a: &Value, b: &Value) -> Result<Value> {
    let (Some(p), Some(q)) = (as_point(a)?, as_point(b)?) else {
        return Ok(Value::Null);
    };
    if p.crs != q.crs {
        return Ok(Value::Null);
    }
    let dz = match (p.z, q.z) {
        (Some(a), Some(b)) => a - b,
        _ => 0.0,
    };
    let d = if p.crs.starts_with("wgs-84") {
        let (lat1, lat2) = (p.y.to_radians(), q.y.to_radians());
        let dlat = lat2 - lat1;
        let dlon = (q.x - p.x).to_radians();
        let h = (dlat / 2.0).sin().powi(2) + lat1.cos() * lat2.cos() * (dlon / 2.0).sin().powi(2);
        let ground = 2.0 * EARTH_RADIUS_METERS * h.sqrt().atan2((1.0 - h).sqrt());
        (ground * ground + dz * dz).sqrt()
    } else {
        ((p.x - q.x).powi(2) + (p.y - q.y).powi(2) + dz * dz).sqrt()
    };
    Ok(Value::Float(d))
}

/// `point.withinBBox(p, lowerLeft, upperRight)`.
pub fn within_bbox(p: &Value, lower: &Value, upper: &Value) -> Result<Value> {
    let (Some(p), Some(lo), Some(hi)) = (as_point(p)?, as_point(lower)?, as_point(upper)?) else {
        return Ok(Value::Null);
    };
    if p.crs != lo.crs || p.crs != hi.crs {
        return Ok(Value::Null);
    }
    let x_ok = if p.crs.starts_with("wgs-84") && lo.x > hi.x {
        // The box crosses the antimeridian.
        p.x >= lo.x || p.x <= hi.x
    } else {
        p.x >= lo.x && p.x <= hi.x
    };
    Ok(Value::Bool(x_ok && p.y >= lo.y && p.y <= hi.y))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(pairs: &[(&str, Value)]) -> Value {
        Value::Map(
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect(),
        )
    }

    #[test]
    fn points_and_distances() {
        let a = point(&m(&[("x", Value::Int(0)), ("y", Value::Int(0))])).unwrap();
        let b = point(&m(&[("x", Value::Int(3)), ("y", Value::Int(4))])).unwrap();
        assert_eq!(distance(&a, &b).unwrap(), Value::Float(5.0));
        let malmo = point(&m(&[
            ("longitude", Value::Float(12.99)),
            ("latitude", Value::Float(55.6)),
        ]))
        .unwrap();
        let stockholm = point(&m(&[
            ("longitude", Value::Float(18.07)),
            ("latitude", Value::Float(59.33)),
        ]))
        .unwrap();
        let Value::Float(d) = distance(&malmo, &stockholm).unwrap() else {
            panic!()
        };
        assert!((d - 513_000.0).abs() < 5_000.0, "{d}");
        assert_eq!(distance(&a, &malmo).unwrap(), Value::Null);
        let lo = point(&m(&[("x", Value::Int(-1)), ("y", Value::Int(-1))])).unwrap();
        assert_eq!(within_bbox(&a, &lo, &b).unwrap(), Value::Bool(true));
        assert_eq!(within_bbox(&lo, &a, &b).unwrap(), Value::Bool(false));
        assert!(point(&m(&[("x", Value::Int(0))])).is_err());
    }
}
