//! The `ellipse` prefetcher's geometry and what one region fetch returns.
//!
//! A* from `a` to `b` with the great-circle heuristic settles only nodes
//! `n` with `g(n) + h(n) <= C*`; since a road is never shorter than the
//! straight line, `d(a, n) + d(n, b) <= C*` for each of them: they lie in
//! the ellipse with foci `a` and `b` whose distance sum is the route's
//! cost. The cost is unknown before the search, so the prefetcher fetches
//! the ellipse of a guessed *stretch* (sum = stretch × `d(a, b)`) in one
//! round trip — the rows of its nodes and every followed adjacency list of
//! them — and a search that expands a node outside it fetches the next
//! *ring* (the nodes between the old sum and a larger one), again in one
//! round trip. What is fetched only decides speed, never answers: a node
//! the region lacks is fetched as without a prefetcher.
//!
//! A *start weight* `w` above 1 narrows the region to the nodes with `w
//! × d(a, n) + d(n, b)` at most the sum: roads are longer than the
//! straight line, so the search from `a` reaches less far aside near `b`
//! than near `a`, and the egg-shaped region holds fewer nodes that it
//! never settles (the bench's long routes: a fifth to a third fewer
//! nodes for one round trip). It is a guess, as the stretch is: only the
//! ellipse (`w` = 1) of the route's cost is sure to hold every settled
//! node.
//!
//! Distances here are planar (an equirectangular projection at the mean
//! latitude of the two ends), the same formula in Rust and in the SQL the
//! PostgreSQL backend sends, so both agree on which nodes a region holds.
//! Rows are fetched a `margin` beyond the lists, so the neighbours of the
//! region's nodes (one road away) mostly come in the same round trip.

use crate::fetch::ListRef;
use crate::mapping::RegionShape;

/// Metres per degree of latitude (earth radius 6,371,008.8 m, as the
/// route searches' great-circle heuristic).
pub const METRES_PER_DEGREE: f64 = 6_371_008.8 * std::f64::consts::PI / 180.0;

/// The least detour (metres of distance sum, on each side) a first
/// region allows, and the least a ring grows by.
pub const MARGIN_M: f64 = 1_000.0;

/// Rows are fetched this far (metres of distance sum, on each side)
/// beyond the lists, so that neighbours across a region's edge are
/// known: a road of length `d` leaving the lists band ends at most `2d`
/// beyond it. 99% of Luxembourg's roads are at most 259 m long; with 500
/// m the rows band of the bench's six first regions holds 7–27% fewer
/// junctions than with 1,000 m, and two roads of route 6 reach beyond it
/// (one more round trip for their rows).
pub const ROWS_MARGIN_M: f64 = 500.0;

/// The outer sum of a route's first region: `stretch` times the ends'
/// distance `span`, at least the span plus twice [`MARGIN_M`] (the SQL of
/// a first region from the ends computes the same).
pub fn first_outer(span: f64, stretch: f64) -> f64 {
    (stretch * span).max(span + 2.0 * MARGIN_M)
}

/// A region's two foci in a local planar projection, and the weight of
/// the distance to the first.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Foci {
    /// The first end (latitude, longitude) in degrees: the route's start.
    pub a: (f64, f64),
    /// The second end.
    pub b: (f64, f64),
    /// Metres per degree of longitude at the mean latitude.
    pub kx: f64,
    /// Metres per degree of latitude.
    pub ky: f64,
    /// How many times the distance to `a` counts in a sum (at least 1).
    pub start_weight: f64,
}

impl Foci {
    /// The foci `a` and `b` (latitude, longitude in degrees), the
    /// distance to `a` weighted `start_weight`, at least 1 (as
    /// [`RegionShape::weight`] gives it): the bounding box holds the
    /// region only then.
    pub fn new(a: (f64, f64), b: (f64, f64), start_weight: f64) -> Foci {
        debug_assert!(start_weight >= 1.0, "start weight {start_weight}");
        let mean = ((a.0 + b.0) / 2.0).to_radians();
        Foci {
            a,
            b,
            kx: METRES_PER_DEGREE * mean.cos().abs().max(1e-6),
            ky: METRES_PER_DEGREE,
            start_weight,
        }
    }

    /// The distance in metres from `at` to `a`, times the start weight,
    /// plus that to `b` (the SQL of the PostgreSQL backend computes the
    /// same expression).
    #[inline]
    pub fn sum(&self, at: (f64, f64)) -> f64 {
        let to = |f: (f64, f64)| {
            let dx = (at.1 - f.1) * self.kx;
            let dy = (at.0 - f.0) * self.ky;
            (dx * dx + dy * dy).sqrt()
        };
        self.start_weight * to(self.a) + to(self.b)
    }

    /// How far (metres of sum) a node one road of `length` metres beyond
    /// another can lie beyond it: the road moves it that far from each end.
    pub fn sum_reach(&self, length: f64) -> f64 {
        (1.0 + self.start_weight) * length
    }

    /// The distance between the foci in metres.
    pub fn span(&self) -> f64 {
        self.sum(self.a)
    }

    /// The latitude and longitude ranges of the box around every point
    /// whose sum is at most `limit` (slightly widened): the box of the
    /// ellipse of that sum (which holds the egg of a start weight above 1),
    /// and with such a weight also within the distance `(limit + span) /
    /// (weight + 1)` of `a` (as `d(n, b) >= d(a, n) - span`).
    pub fn bounding_box(&self, limit: f64) -> ((f64, f64), (f64, f64)) {
        let span = self.span();
        let major = (limit.max(span) / 2.0) + 1.0;
        let minor = (major * major - (span / 2.0) * (span / 2.0))
            .max(0.0)
            .sqrt();
        let dx = (self.b.1 - self.a.1) * self.kx;
        let dy = (self.b.0 - self.a.0) * self.ky;
        let (cos, sin) = if span > 0.0 {
            (dx / span, dy / span)
        } else {
            (1.0, 0.0)
        };
        let half_x = (major * major * cos * cos + minor * minor * sin * sin).sqrt();
        let half_y = (major * major * sin * sin + minor * minor * cos * cos).sqrt();
        let centre = ((self.a.0 + self.b.0) / 2.0, (self.a.1 + self.b.1) / 2.0);
        let (dlat, dlon) = (half_y / self.ky, half_x / self.kx);
        let ellipse = (
            (centre.0 - dlat, centre.0 + dlat),
            (centre.1 - dlon, centre.1 + dlon),
        );
        if self.start_weight <= 1.0 {
            return ellipse;
        }
        let reach = (limit.max(span) + span) / (self.start_weight + 1.0) + 1.0;
        let (rlat, rlon) = (reach / self.ky, reach / self.kx);
        (
            (
                ellipse.0 .0.max(self.a.0 - rlat),
                ellipse.0 .1.min(self.a.0 + rlat),
            ),
            (
                ellipse.1 .0.max(self.a.1 - rlon),
                ellipse.1 .1.min(self.a.1 + rlon),
            ),
        )
    }
}

/// The nodes whose sum lies in `(inner, outer]`, and their box.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Band {
    /// Sums at most this are not in the band (negative: none excluded).
    pub inner: f64,
    /// Sums above this are not in the band.
    pub outer: f64,
    /// Latitude range of a box holding the band.
    pub lat: (f64, f64),
    /// Longitude range of a box holding the band.
    pub lon: (f64, f64),
}

impl Band {
    /// The band `(inner, outer]` around `foci`.
    pub fn new(foci: &Foci, inner: f64, outer: f64) -> Band {
        let (lat, lon) = foci.bounding_box(outer);
        Band {
            inner,
            outer,
            lat,
            lon,
        }
    }
}

/// One region fetch: rows of the nodes in `rows`, followed lists of the
/// nodes in `lists` (a band inside `rows`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RegionQuery {
    /// The ellipse's foci.
    pub foci: Foci,
    /// Whose rows are fetched.
    pub rows: Band,
    /// Whose adjacency lists are fetched.
    pub lists: Band,
}

impl RegionQuery {
    /// The region from sum `inner` (exclusive; negative for none) to
    /// `outer`, rows a road of [`ROWS_MARGIN_M`] further on both sides.
    pub fn ring(foci: Foci, inner: f64, outer: f64) -> RegionQuery {
        let margin = foci.sum_reach(ROWS_MARGIN_M);
        let rows_inner = if inner < 0.0 { inner } else { inner + margin };
        RegionQuery {
            foci,
            rows: Band::new(&foci, rows_inner, outer + margin),
            lists: Band::new(&foci, inner, outer),
        }
    }
}

/// What a region fetch asks for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RegionAsk<'a> {
    /// A band around foci known already (a ring, or a first region whose
    /// ends' rows were cached).
    Band(&'a RegionQuery),
    /// A route's first region from its ends' keys alone: the backend
    /// reads the ends' places and computes the foci and the bands of
    /// [`RegionQuery::ring`]`(foci, -1, max(stretch × span, span + 2 ×`
    /// [`MARGIN_M`]`))` itself, so the ends cost no round trip of their
    /// own.
    Ends {
        /// The first end's key (the route's start).
        a: i64,
        /// The second end's key.
        b: i64,
        /// The first region's stretch and start weight.
        shape: RegionShape,
    },
}

/// One followed list's relationships in a region, column by column.
#[derive(Debug, Clone, PartialEq)]
pub struct RegionList {
    /// The list.
    pub list: ListRef,
    /// Start node keys (`None`: NULL in the backend).
    pub nodes: Vec<Option<i64>>,
    /// Neighbour keys.
    pub neighbours: Vec<Option<i64>>,
    /// Relationship keys.
    pub rels: Vec<Option<i64>>,
    /// (index of a numeric relationship property, its values as floats).
    pub properties: Vec<(usize, Vec<Option<f64>>)>,
}

impl RegionList {
    /// The values of property `index`, if it was fetched.
    pub fn property(&self, index: usize) -> Option<&[Option<f64>]> {
        self.properties
            .iter()
            .find(|(i, _)| *i == index)
            .map(|(_, v)| v.as_slice())
    }
}

/// What a region fetch returns: node keys and coordinates, then the
/// lists, each as columns (a few allocations per fetch, none per row).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RegionRows {
    /// Node keys.
    pub keys: Vec<Option<i64>>,
    /// Their latitudes.
    pub lats: Vec<Option<f64>>,
    /// Their longitudes.
    pub lons: Vec<Option<f64>>,
    /// The followed lists of the nodes in the lists band.
    pub lists: Vec<RegionList>,
    /// Values (array elements, 8 bytes each) received: fewer than the
    /// keys, places and list entries when pairs come packed.
    pub values: u64,
}

impl RegionRows {
    /// Adds the rows and lists of another part of the same region (the
    /// same lists, in the same order).
    pub fn append(&mut self, mut part: RegionRows) {
        self.keys.append(&mut part.keys);
        self.lats.append(&mut part.lats);
        self.lons.append(&mut part.lons);
        self.values += part.values;
        debug_assert_eq!(self.lists.len(), part.lists.len());
        for (mine, theirs) in self.lists.iter_mut().zip(part.lists) {
            mine.nodes.extend(theirs.nodes);
            mine.neighbours.extend(theirs.neighbours);
            mine.rels.extend(theirs.rels);
            for ((i, values), (j, more)) in mine.properties.iter_mut().zip(theirs.properties) {
                debug_assert_eq!(*i, j);
                values.extend(more);
            }
        }
    }

    /// Rows received (nodes plus relationships).
    pub fn rows(&self) -> u64 {
        (self.keys.len() + self.lists.iter().map(|l| l.nodes.len()).sum::<usize>()) as u64
    }

    /// Bytes of the values received (8 a value).
    pub fn bytes(&self) -> u64 {
        8 * self.values
    }
}

/// The next list band's outer sum when a search expanded a node of sum
/// `needed` (or of unknown place: `None`) beyond `outer`, for ends `span`
/// apart: at least [`RING_GROWTH`] times the detour allowed so far, and
/// the node with half that detour again to spare.
pub fn grown(span: f64, outer: f64, needed: Option<f64>) -> f64 {
    let allowed = (outer - span).max(2.0 * MARGIN_M);
    let least = span + RING_GROWTH * allowed;
    match needed {
        Some(n) if n.is_finite() => least.max(n + allowed / 2.0),
        _ => least,
    }
}

/// How many times the detour allowed so far a ring allows at least. A
/// ring's rows grow faster than its detour (the area of an ellipse grows
/// with the square root of its sum's excess over the span, and its
/// length too), so a ring that overshoots costs more than one more round
/// trip: over the bench's twenty routes from `ellipse:1.4:1.3` (an A*
/// in Python replaying each search's misses) 1.5 fetches 13% fewer
/// junctions than doubling, for 2 more round trips in 30.
pub const RING_GROWTH: f64 = 1.5;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_boxes_and_growth() {
        let foci = Foci::new((49.6, 6.1), (49.7, 6.2), 1.0);
        let span = foci.span();
        // About 13.4 km between the two ends at this latitude.
        assert!((13_000.0..14_000.0).contains(&span), "{span}");
        assert!((foci.sum((49.65, 6.15)) - span).abs() < 1e-6);
        // Every point of sum <= limit is inside the box; points of the
        // ellipse's extremes lie near its edges.
        let limit = 1.3 * span;
        let ((lat0, lat1), (lon0, lon1)) = foci.bounding_box(limit);
        let mut inside = 0;
        for i in 0..200 {
            for j in 0..200 {
                let p = (49.5 + 0.3 * i as f64 / 200.0, 6.0 + 0.4 * j as f64 / 200.0);
                if foci.sum(p) <= limit {
                    inside += 1;
                    assert!(
                        p.0 >= lat0 && p.0 <= lat1 && p.1 >= lon0 && p.1 <= lon1,
                        "{p:?}"
                    );
                }
            }
        }
        assert!(inside > 1000);
        // The box is tight: a point just inside each edge of it is in the ellipse's reach.
        assert!(lat1 - lat0 < 0.2 && lon1 - lon0 < 0.3);
        // Equal ends: a disc.
        let point = Foci::new((49.6, 6.1), (49.6, 6.1), 1.0);
        let ((a, b), _) = point.bounding_box(2_000.0);
        assert!((b - a) * METRES_PER_DEGREE > 1_900.0);
        // Growth allows half as much detour again at least and covers the
        // node asking with half the detour to spare.
        assert_eq!(grown(10_000.0, 12_000.0, None), 13_000.0);
        assert_eq!(grown(10_000.0, 12_000.0, Some(20_000.0)), 21_000.0);
        assert_eq!(grown(10_000.0, 12_000.0, Some(12_500.0)), 13_500.0);
        assert_eq!(grown(10_000.0, 10_000.0, None), 13_000.0);
        let ring = RegionQuery::ring(foci, 1_000.0, 2_000.0);
        assert_eq!((ring.rows.inner, ring.rows.outer), (2_000.0, 3_000.0));
        let first = RegionQuery::ring(foci, -1.0, 2_000.0);
        assert_eq!(first.rows.inner, -1.0);
    }

    #[test]
    fn a_weighted_start_narrows_the_region_inside_its_box() {
        let limit_of = |f: &Foci| 1.4 * f.span();
        for (a, b) in [
            ((49.6, 6.1), (49.7, 6.2)),
            ((49.7, 6.2), (49.6, 6.1)),
            ((49.6, 6.0), (49.6, 6.3)),
            ((49.5, 6.1), (49.8, 6.1)),
        ] {
            let ellipse = Foci::new(a, b, 1.0);
            let egg = Foci::new(a, b, 1.3);
            assert_eq!(egg.span(), ellipse.span());
            let limit = limit_of(&egg);
            let ((lat0, lat1), (lon0, lon1)) = egg.bounding_box(limit);
            let ((elat0, elat1), (elon0, elon1)) = ellipse.bounding_box(limit);
            // Within the ellipse's box, and smaller.
            assert!(lat0 >= elat0 && lat1 <= elat1 && lon0 >= elon0 && lon1 <= elon1);
            // Smaller beyond `b`: by a tenth for ends due east or north
            // of each other, less for diagonal ones.
            let area = (lat1 - lat0) * (lon1 - lon0) / ((elat1 - elat0) * (elon1 - elon0));
            assert!(area < 0.99, "{a:?} {b:?}: {area}");
            let (mut in_egg, mut in_ellipse) = (0, 0);
            for i in 0..300 {
                for j in 0..300 {
                    let p = (49.3 + 0.7 * i as f64 / 300.0, 5.8 + 0.8 * j as f64 / 300.0);
                    if ellipse.sum(p) <= limit {
                        in_ellipse += 1;
                    }
                    if egg.sum(p) <= limit {
                        in_egg += 1;
                        assert!(ellipse.sum(p) <= limit, "{p:?}");
                        assert!(
                            p.0 >= lat0 && p.0 <= lat1 && p.1 >= lon0 && p.1 <= lon1,
                            "{p:?} outside the egg's box"
                        );
                    }
                }
            }
            assert!(
                in_egg > 500 && in_egg < in_ellipse * 9 / 10,
                "{in_egg} {in_ellipse}"
            );
        }
        // Rows reach a road further by each end's weight.
        let egg = Foci::new((49.6, 6.1), (49.7, 6.2), 1.5);
        let ring = RegionQuery::ring(egg, 1_000.0, 2_000.0);
        assert_eq!(ring.rows.inner, 1_000.0 + 2.5 * ROWS_MARGIN_M);
        assert_eq!(ring.rows.outer, 2_000.0 + 2.5 * ROWS_MARGIN_M);
    }
}
