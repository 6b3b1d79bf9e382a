//! Great-circle distance, the A* heuristic of road networks.

/// The mean earth radius in metres (IUGG), as the DIMACS road networks'
/// arc lengths assume: arcs are never shorter than this distance.
pub const EARTH_RADIUS_M: f64 = 6_371_008.8;

/// Great-circle (haversine) distance in metres between two points given as
/// (latitude, longitude) in degrees.
#[inline]
pub fn great_circle_m(a: (f64, f64), b: (f64, f64)) -> f64 {
    let (lat1, lon1) = (a.0.to_radians(), a.1.to_radians());
    let (lat2, lon2) = (b.0.to_radians(), b.1.to_radians());
    let s1 = ((lat2 - lat1) / 2.0).sin();
    let s2 = ((lon2 - lon1) / 2.0).sin();
    let h = (s1 * s1 + lat1.cos() * lat2.cos() * s2 * s2).clamp(0.0, 1.0);
    2.0 * EARTH_RADIUS_M * h.sqrt().asin()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_distances() {
        assert_eq!(great_circle_m((49.6, 6.1), (49.6, 6.1)), 0.0);
        // One degree of latitude is R * pi / 180.
        let d = great_circle_m((0.0, 0.0), (1.0, 0.0));
        assert!((d - EARTH_RADIUS_M.to_radians()).abs() < 1e-6, "{d}");
        // Antipodes: half the circumference, no NaN from rounding.
        let d = great_circle_m((0.0, 0.0), (0.0, 180.0));
        assert!(
            (d - EARTH_RADIUS_M * std::f64::consts::PI).abs() < 1e-3,
            "{d}"
        );
    }
}
