//! Checked integer arithmetic over whole columns without nulls, for the
//! vector evaluator ([`crate::vector`]).
//!
//! A kernel first finds out whether any row fails (overflow, division by
//! zero) — against a constant from the column's least and greatest values
//! alone, since `x + c`, `x - c` and `x * c` are monotonic in `x`; between
//! two columns in one branch-free pass — and then computes every row in a
//! loop of its own per operator, without checks or early exits, which
//! compiles to straight-line (vectorized where the target allows) code. A
//! failed chunk returns `None` and goes to the row evaluator, which raises
//! the error where Cypher says. The results are those of
//! `rhizome_functions`' checked operations on every row.
//!
//! Division and remainder by a constant — the common `n.id % 7` — use a
//! multiplication by a precomputed reciprocal instead of a hardware
//! division (Lemire, Kaser and Kurz, "Faster remainder by direct
//! computation", 2019) whenever every dividend of the chunk and the divisor
//! are below 2^32 in magnitude, where that computation is exact; the signs
//! are applied after (Cypher truncates toward zero, like Rust). Two
//! columns whose values all fit in 32 bits divide in 32 bits.

use rhizome_plan::BinaryOp;

/// The arithmetic operators these kernels compute.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum IntOp {
    Add,
    Sub,
    Mul,
    Div,
    Mod,
}

impl IntOp {
    /// The kernel operator of `op`, if it is an arithmetic one.
    pub(crate) fn of(op: BinaryOp) -> Option<IntOp> {
        Some(match op {
            BinaryOp::Add => IntOp::Add,
            BinaryOp::Sub => IntOp::Sub,
            BinaryOp::Mul => IntOp::Mul,
            BinaryOp::Div => IntOp::Div,
            BinaryOp::Mod => IntOp::Mod,
            _ => return None,
        })
    }

    /// `p op q` and whether it fails (the value is then meaningless):
    /// overflow, or division or remainder by zero. `i64::MIN % -1` is 0.
    #[inline(always)]
    fn apply(self, p: i64, q: i64) -> (i64, bool) {
        match self {
            IntOp::Add => p.overflowing_add(q),
            IntOp::Sub => p.overflowing_sub(q),
            IntOp::Mul => p.overflowing_mul(q),
            IntOp::Div => {
                if q == 0 {
                    (0, true)
                } else {
                    p.overflowing_div(q)
                }
            }
            IntOp::Mod => {
                if q == 0 {
                    (0, true)
                } else {
                    (p.wrapping_rem(q), false)
                }
            }
        }
    }
}

/// `p op q`, `None` if it fails.
#[inline]
pub(crate) fn checked_op(op: IntOp, p: i64, q: i64) -> Option<i64> {
    let (x, failed) = op.apply(p, q);
    (!failed).then_some(x)
}

/// `p[i] op q` for every row; `None` if a row fails.
pub(crate) fn column_const(op: IntOp, p: &[i64], q: i64) -> Option<Vec<i64>> {
    if p.is_empty() {
        return Some(Vec::new());
    }
    // `x op q` is monotonic in `x` for `+`, `-` and `*`, so it overflows
    // on some row exactly when it does on the column's least or greatest
    // value: one pass for the range, then a loop without checks.
    let (lo, hi) = range(p);
    let fails_at = |x: i64| op.apply(x, q).1;
    match op {
        IntOp::Add | IntOp::Sub | IntOp::Mul if fails_at(lo) || fails_at(hi) => None,
        IntOp::Add => Some(p.iter().map(|&x| x.wrapping_add(q)).collect()),
        IntOp::Sub => Some(p.iter().map(|&x| x.wrapping_sub(q)).collect()),
        IntOp::Mul => Some(p.iter().map(|&x| x.wrapping_mul(q)).collect()),
        _ if q == 0 => None,
        // Only `i64::MIN / -1` overflows.
        IntOp::Div if q == -1 && lo == i64::MIN => None,
        IntOp::Div | IntOp::Mod => {
            let small = lo > -(1 << 32) && hi < 1 << 32;
            match (Reciprocal::new(q), op) {
                (Some(r), IntOp::Div) if small => Some(p.iter().map(|&x| r.div(x)).collect()),
                (Some(r), _) if small => Some(p.iter().map(|&x| r.rem(x)).collect()),
                (_, IntOp::Div) => Some(p.iter().map(|&x| x.wrapping_div(q)).collect()),
                _ => Some(p.iter().map(|&x| x.wrapping_rem(q)).collect()),
            }
        }
    }
}

/// `p op q[i]` for every row; `None` if a row fails.
pub(crate) fn const_column(op: IntOp, p: i64, q: &[i64]) -> Option<Vec<i64>> {
    match op {
        // Commutative: the column–constant kernel.
        IntOp::Add | IntOp::Mul => column_const(op, q, p),
        _ => checked(q.iter().map(|&y| op.apply(p, y))),
    }
}

/// `p[i] op q[i]` for every row; `None` if a row fails.
pub(crate) fn column_column(op: IntOp, p: &[i64], q: &[i64]) -> Option<Vec<i64>> {
    let pairs = || p.iter().zip(q).map(|(&x, &y)| (x, y));
    // One pass for whether any row fails, one loop without checks (each
    // operator its own loop).
    let fails = |f: fn(i64, i64) -> bool| pairs().fold(false, |any, (x, y)| any | f(x, y));
    match op {
        IntOp::Add if !fails(|x, y| x.overflowing_add(y).1) => {
            Some(pairs().map(|(x, y)| x.wrapping_add(y)).collect())
        }
        IntOp::Sub if !fails(|x, y| x.overflowing_sub(y).1) => {
            Some(pairs().map(|(x, y)| x.wrapping_sub(y)).collect())
        }
        IntOp::Mul if !fails(|x, y| x.overflowing_mul(y).1) => {
            Some(pairs().map(|(x, y)| x.wrapping_mul(y)).collect())
        }
        IntOp::Add | IntOp::Sub | IntOp::Mul => None,
        IntOp::Div | IntOp::Mod => {
            let zero_or_overflow = |x: i64, y: i64| (y == 0) | ((x == i64::MIN) & (y == -1));
            let failed = match op {
                IntOp::Div => fails(zero_or_overflow),
                _ => fails(|_, y| y == 0),
            };
            if failed {
                return None;
            }
            if fits_i32(p) && fits_i32(q) {
                // 32-bit hardware division is the faster one; no quotient
                // of such operands overflows (`i32::MIN` is excluded).
                return Some(match op {
                    IntOp::Div => pairs()
                        .map(|(x, y)| i64::from(x as i32 / y as i32))
                        .collect(),
                    _ => pairs()
                        .map(|(x, y)| i64::from(x as i32 % y as i32))
                        .collect(),
                });
            }
            Some(match op {
                IntOp::Div => pairs().map(|(x, y)| x.wrapping_div(y)).collect(),
                _ => pairs().map(|(x, y)| x.wrapping_rem(y)).collect(),
            })
        }
    }
}

/// The least and greatest of `xs` (not empty).
fn range(xs: &[i64]) -> (i64, i64) {
    xs.iter()
        .fold((i64::MAX, i64::MIN), |(lo, hi), &x| (lo.min(x), hi.max(x)))
}

/// The values of `results`, or `None` if any failed.
fn checked(results: impl ExactSizeIterator<Item = (i64, bool)>) -> Option<Vec<i64>> {
    let mut failed = false;
    let out: Vec<i64> = results
        .map(|(x, bad)| {
            failed |= bad;
            x
        })
        .collect();
    (!failed).then_some(out)
}

/// True if every value lies strictly between `i32::MIN` and `2^31`.
fn fits_i32(xs: &[i64]) -> bool {
    let (lo, hi) = (i64::from(i32::MIN), i64::from(i32::MAX));
    xs.iter().fold(true, |ok, &x| ok & (x > lo) & (x <= hi))
}

/// Division by a constant `d` (`0 < |d| < 2^32`) as multiplications,
/// exact for dividends below 2^32 in magnitude.
#[derive(Debug, Clone, Copy)]
struct Reciprocal {
    /// `|d|`.
    d: u64,
    /// `2^64 / |d|` rounded up (`u64::MAX / |d| + 1`); 0 for `|d| = 1`.
    m: u64,
    /// All ones if `d < 0`, else zero.
    d_sign: i64,
}

impl Reciprocal {
    fn new(d: i64) -> Option<Reciprocal> {
        let magnitude = d.unsigned_abs();
        if d == 0 || magnitude >= 1 << 32 {
            return None;
        }
        Some(Reciprocal {
            d: magnitude,
            m: (u64::MAX / magnitude).wrapping_add(1),
            d_sign: d >> 63,
        })
    }

    /// `|x| / |d|` and `|x| % |d|` for `|x| < 2^32`.
    #[inline(always)]
    fn unsigned(&self, x: u64) -> (u64, u64) {
        if self.m == 0 {
            return (x, 0);
        }
        let quotient = ((u128::from(self.m) * u128::from(x)) >> 64) as u64;
        let low = self.m.wrapping_mul(x);
        let remainder = ((u128::from(low) * u128::from(self.d)) >> 64) as u64;
        (quotient, remainder)
    }

    /// `x / d`, truncated toward zero.
    #[inline(always)]
    fn div(&self, x: i64) -> i64 {
        let sign = x >> 63;
        let (q, _) = self.unsigned(((x ^ sign) - sign) as u64);
        let s = sign ^ self.d_sign;
        ((q as i64) ^ s) - s
    }

    /// `x % d`, with the sign of `x`.
    #[inline(always)]
    fn rem(&self, x: i64) -> i64 {
        let sign = x >> 63;
        let (_, r) = self.unsigned(((x ^ sign) - sign) as u64);
        ((r as i64) ^ sign) - sign
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rhizome_common::Value;

    /// The row-at-a-time answer: the row evaluator's operation.
    fn reference(op: IntOp, p: i64, q: i64) -> Option<i64> {
        let op = match op {
            IntOp::Add => BinaryOp::Add,
            IntOp::Sub => BinaryOp::Sub,
            IntOp::Mul => BinaryOp::Mul,
            IntOp::Div => BinaryOp::Div,
            IntOp::Mod => BinaryOp::Mod,
        };
        match crate::expr::binary_op(op, &Value::Int(p), &Value::Int(q)) {
            Ok(Value::Int(x)) => Some(x),
            Ok(other) => panic!("{op:?} gave {other:?}"),
            Err(_) => None,
        }
    }

    fn expected(op: IntOp, pairs: impl Iterator<Item = (i64, i64)>) -> Option<Vec<i64>> {
        pairs.map(|(p, q)| reference(op, p, q)).collect()
    }

    const OPS: [IntOp; 5] = [IntOp::Add, IntOp::Sub, IntOp::Mul, IntOp::Div, IntOp::Mod];

    /// Seeded values: small, near 2^32 either side, extremes.
    fn values() -> Vec<i64> {
        let mut xs = vec![
            0,
            1,
            -1,
            2,
            -2,
            7,
            -7,
            (1 << 32) - 1,
            -(1 << 32) + 1,
            1 << 32,
            -(1 << 32),
            u32::MAX as i64 / 3,
            i64::MAX,
            i64::MIN,
            i64::MAX - 1,
            i64::MIN + 1,
            i32::MIN as i64,
            i32::MAX as i64,
        ];
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        for i in 0..400 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let x = state as i64;
            xs.push(match i % 4 {
                0 => x,
                1 => x % (1 << 32),
                2 => x % 1000,
                _ => x >> 40,
            });
        }
        xs
    }

    #[test]
    fn every_shape_agrees_with_the_checked_operations() {
        let xs = values();
        for op in OPS {
            for &q in &xs {
                // One column against a constant, as a whole column and as
                // each single row (a chunk whose rows all fit, or not).
                assert_eq!(
                    column_const(op, &xs, q),
                    expected(op, xs.iter().map(|&p| (p, q))),
                    "{op:?} column {q}"
                );
                for &p in &xs {
                    assert_eq!(
                        column_const(op, &[p], q),
                        expected(op, std::iter::once((p, q))),
                        "{op:?} {p} {q}"
                    );
                }
                assert_eq!(
                    const_column(op, q, &xs),
                    expected(op, xs.iter().map(|&p| (q, p))),
                    "{op:?} {q} column"
                );
            }
            // Columns of small values (the 32-bit division), zeros included.
            let small: Vec<i64> = xs.iter().map(|x| x % 100).collect();
            let shifted: Vec<i64> = small.iter().rev().map(|x| x / 3).collect();
            assert_eq!(
                column_column(op, &small, &shifted),
                expected(op, small.iter().copied().zip(shifted.iter().copied())),
                "{op:?} small columns"
            );
            let nonzero: Vec<i64> = shifted
                .iter()
                .map(|&x| if x == 0 { 7 } else { x })
                .collect();
            assert_eq!(
                column_column(op, &small, &nonzero),
                expected(op, small.iter().copied().zip(nonzero.iter().copied())),
                "{op:?} small columns without zeros"
            );
            assert!(column_column(op, &small, &nonzero).is_some());
            let ys: Vec<i64> = xs.iter().rev().copied().collect();
            assert_eq!(
                column_column(op, &xs, &ys),
                expected(op, xs.iter().copied().zip(ys.iter().copied())),
                "{op:?} columns"
            );
        }
    }

    #[test]
    fn division_by_constants_through_reciprocals_is_exact() {
        // Every divisor magnitude class against every dividend below 2^32
        // in a stride, both signs.
        let divisors = [
            1,
            2,
            3,
            5,
            7,
            10,
            1000,
            65_537,
            (1 << 31) - 1,
            (1 << 32) - 1,
        ];
        for &d in &divisors {
            for d in [d, -d] {
                let r = Reciprocal::new(d).unwrap();
                let mut x: i64 = -(1 << 32) + 1;
                while x < 1 << 32 {
                    assert_eq!(r.div(x), x / d, "{x} / {d}");
                    assert_eq!(r.rem(x), x % d, "{x} % {d}");
                    x += 9_999_991;
                }
                for x in [0, 1, -1, (1 << 32) - 1, -(1 << 32) + 1, d - 1, d, d + 1] {
                    assert_eq!(r.div(x), x / d, "{x} / {d}");
                    assert_eq!(r.rem(x), x % d, "{x} % {d}");
                }
            }
        }
        assert!(Reciprocal::new(0).is_none());
        assert!(Reciprocal::new(1 << 32).is_none());
        assert!(Reciprocal::new(i64::MIN).is_none());
    }
}
