//! Terms of Cypher that every layer names the same way — the parser's
//! syntax tree, the plan and the runtime — declared once here and shared.
//! A layer adds what it must (the plan's `BinaryOp`
//! folds comparisons in); it does not retype these lists.

/// An aggregate function.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AggregateKind {
    /// `count(*)`: counts rows, nulls included.
    CountStar,
    /// `count(x)`: counts non-null values.
    Count,
    /// `sum(x)`: numbers (integer while all are integers) or durations.
    Sum,
    /// `avg(x)`: float average of numbers, or average duration.
    Avg,
    /// `min(x)`: least value under orderability.
    Min,
    /// `max(x)`: greatest value under orderability.
    Max,
    /// `collect(x)`: list of non-null values in input order.
    Collect,
    /// `stDev(x)`: sample standard deviation.
    StDev,
    /// `stDevP(x)`: population standard deviation.
    StDevP,
    /// `percentileCont(x, p)`: interpolated percentile.
    PercentileCont,
    /// `percentileDisc(x, p)`: nearest-rank percentile.
    PercentileDisc,
}

impl AggregateKind {
    /// The aggregate named `name` (case-insensitive), `None` if `name` is not
    /// an aggregate function. `count` means `count(x)`; `count(*)` is a
    /// form of its own ([`AggregateKind::CountStar`]).
    pub fn from_name(name: &str) -> Option<AggregateKind> {
        Some(match name.to_ascii_lowercase().as_str() {
            "count" => AggregateKind::Count,
            "sum" => AggregateKind::Sum,
            "avg" => AggregateKind::Avg,
            "min" => AggregateKind::Min,
            "max" => AggregateKind::Max,
            "collect" => AggregateKind::Collect,
            "stdev" => AggregateKind::StDev,
            "stdevp" => AggregateKind::StDevP,
            "percentilecont" => AggregateKind::PercentileCont,
            "percentiledisc" => AggregateKind::PercentileDisc,
            _ => return None,
        })
    }

    /// Number of arguments the aggregate takes (percentiles take two).
    pub fn arity(self) -> usize {
        match self {
            AggregateKind::CountStar => 0,
            AggregateKind::PercentileCont | AggregateKind::PercentileDisc => 2,
            _ => 1,
        }
    }
}

/// `all`, `any`, `none`, `single` over a list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Quantifier {
    /// True if the predicate holds for every element.
    All,
    /// True if it holds for at least one.
    Any,
    /// True if it holds for none.
    None,
    /// True if it holds for exactly one.
    Single,
}

/// `NOT`, `-`, `+`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnaryOp {
    /// Boolean negation (three-valued).
    Not,
    /// Arithmetic negation.
    Neg,
    /// Unary plus (checks the operand is a number).
    Plus,
}

/// Which shortest-path function wraps a pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShortestPathKind {
    /// `shortestPath(...)`: one shortest path per pair.
    Single,
    /// `allShortestPaths(...)`: all shortest paths per pair.
    All,
}

#[cfg(test)]
mod tests {
    use super::AggregateKind;

    #[test]
    fn aggregate_names_are_case_insensitive_and_count_star_has_none() {
        assert_eq!(
            AggregateKind::from_name("stDevP"),
            Some(AggregateKind::StDevP)
        );
        assert_eq!(
            AggregateKind::from_name("COLLECT"),
            Some(AggregateKind::Collect)
        );
        assert_eq!(AggregateKind::from_name("size"), None);
        assert_eq!(AggregateKind::PercentileDisc.arity(), 2);
        assert_eq!(AggregateKind::CountStar.arity(), 0);
    }
}
