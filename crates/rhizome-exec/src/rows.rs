//! Result rows: blocks of row-major values, one block per chunk the query
//! produced, so collecting a result allocates per chunk rather than per row
//! and concatenating the workers' results moves no values.

use rhizome_common::Value;
use std::fmt;
use std::ops::Index;

/// The rows of a query result, each a slice of values in column order.
///
/// Rows are read by index (`rows[i]`, `rows.get(i)`), iterated as `&[Value]`
/// (`for row in &rows`), or turned into owned vectors ([`Rows::to_vecs`],
/// `into_iter`). Every row has the same number of values, [`Rows::width`].
#[derive(Clone, Default)]
pub struct Rows {
    width: usize,
    len: usize,
    /// Row-major values; each block holds whole rows.
    blocks: Vec<Vec<Value>>,
    /// Index of each block's first row, ascending.
    starts: Vec<usize>,
}

impl Rows {
    /// No rows of `width` values.
    pub fn new(width: usize) -> Rows {
        Rows {
            width,
            ..Rows::default()
        }
    }

    /// Rows of `width` values from row-major blocks, in order; a block whose
    /// length is not a multiple of `width` has its partial last row dropped.
    /// With `width` zero there are no rows.
    pub fn from_blocks(width: usize, blocks: Vec<Vec<Value>>) -> Rows {
        let mut rows = Rows::new(width);
        if width == 0 {
            return rows;
        }
        for mut block in blocks {
            let n = block.len() / width;
            if n == 0 {
                continue;
            }
            block.truncate(n * width);
            rows.starts.push(rows.len);
            rows.blocks.push(block);
            rows.len += n;
        }
        rows
    }

    /// The row-major blocks, in order (none if the width is zero).
    pub fn into_blocks(self) -> std::vec::IntoIter<Vec<Value>> {
        self.blocks.into_iter()
    }

    /// Appends one row (for rows built one at a time, as small results
    /// are). Panics if its length is not [`Rows::width`]: a wrong-width row
    /// would shift every later row of its block.
    pub fn push(&mut self, row: Vec<Value>) {
        assert_eq!(row.len(), self.width, "row of the wrong width");
        if self.width > 0 {
            match self.blocks.last_mut() {
                Some(last) if last.len() < BLOCK_VALUES => last.extend(row),
                _ => {
                    self.starts.push(self.len);
                    self.blocks.push(row);
                }
            }
        }
        self.len += 1;
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True if there are no rows.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Values per row.
    pub fn width(&self) -> usize {
        self.width
    }

    /// Row `index`, if there is one.
    pub fn get(&self, index: usize) -> Option<&[Value]> {
        if index >= self.len {
            return None;
        }
        if self.width == 0 {
            return Some(&[]);
        }
        let block = self.starts.partition_point(|&s| s <= index) - 1;
        let at = (index - self.starts[block]) * self.width;
        Some(&self.blocks[block][at..at + self.width])
    }

    /// The first row, if any.
    pub fn first(&self) -> Option<&[Value]> {
        self.get(0)
    }

    /// The rows in order.
    pub fn iter(&self) -> RowsIter<'_> {
        RowsIter {
            rows: self,
            block: 0,
            at: 0,
            left: self.len,
        }
    }

    /// Each row as an owned vector.
    pub fn to_vecs(&self) -> Vec<Vec<Value>> {
        self.iter().map(<[Value]>::to_vec).collect()
    }
}

/// Values per block when rows are pushed one at a time.
const BLOCK_VALUES: usize = 4096;

impl Extend<Vec<Value>> for Rows {
    /// Appends rows, each [`Rows::width`] values long.
    fn extend<I: IntoIterator<Item = Vec<Value>>>(&mut self, rows: I) {
        for row in rows {
            self.push(row);
        }
    }
}

impl From<Vec<Vec<Value>>> for Rows {
    /// Rows from owned rows, which must all be as wide as the first.
    fn from(rows: Vec<Vec<Value>>) -> Rows {
        let mut out = Rows::new(rows.first().map_or(0, Vec::len));
        out.extend(rows);
        out
    }
}

impl Index<usize> for Rows {
    type Output = [Value];

    /// Row `index`; panics if there is no such row, as slices do.
    fn index(&self, index: usize) -> &[Value] {
        match self.get(index) {
            Some(row) => row,
            None => panic!("row {index} out of range for {} rows", self.len),
        }
    }
}

/// Iterator over [`Rows`], yielding each row as a slice.
pub struct RowsIter<'r> {
    rows: &'r Rows,
    block: usize,
    at: usize,
    left: usize,
}

impl<'r> Iterator for RowsIter<'r> {
    type Item = &'r [Value];

    fn next(&mut self) -> Option<&'r [Value]> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let width = self.rows.width;
        if width == 0 {
            return Some(&[]);
        }
        let mut block = &self.rows.blocks[self.block];
        if self.at == block.len() {
            self.block += 1;
            self.at = 0;
            block = &self.rows.blocks[self.block];
        }
        let row = &block[self.at..self.at + width];
        self.at += width;
        Some(row)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl ExactSizeIterator for RowsIter<'_> {}

impl<'r> IntoIterator for &'r Rows {
    type Item = &'r [Value];
    type IntoIter = RowsIter<'r>;

    fn into_iter(self) -> RowsIter<'r> {
        self.iter()
    }
}

impl IntoIterator for Rows {
    type Item = Vec<Value>;
    type IntoIter = std::vec::IntoIter<Vec<Value>>;

    /// The rows as owned vectors; the values are moved, not cloned.
    fn into_iter(self) -> Self::IntoIter {
        if self.width == 0 {
            return vec![Vec::new(); self.len].into_iter();
        }
        let mut rows = Vec::with_capacity(self.len);
        for block in self.blocks {
            let mut values = block.into_iter();
            while values.len() > 0 {
                rows.push(values.by_ref().take(self.width).collect());
            }
        }
        rows.into_iter()
    }
}

impl PartialEq for Rows {
    fn eq(&self, other: &Rows) -> bool {
        self.len == other.len && self.iter().eq(other.iter())
    }
}

impl Rows {
    /// True if the rows equal `other`'s, one by one.
    fn equals<R: AsRef<[Value]>>(&self, other: &[R]) -> bool {
        self.len == other.len() && self.iter().eq(other.iter().map(AsRef::as_ref))
    }
}

impl<R: AsRef<[Value]>> PartialEq<Vec<R>> for Rows {
    fn eq(&self, other: &Vec<R>) -> bool {
        self.equals(other)
    }
}

impl<R: AsRef<[Value]>, const N: usize> PartialEq<[R; N]> for Rows {
    fn eq(&self, other: &[R; N]) -> bool {
        self.equals(other)
    }
}

impl fmt::Debug for Rows {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ints(xs: &[i64]) -> Vec<Value> {
        xs.iter().map(|&x| Value::Int(x)).collect()
    }

    #[test]
    fn blocks_read_as_rows_in_order() {
        let rows = Rows::from_blocks(2, vec![ints(&[1, 2, 3, 4]), vec![], ints(&[5, 6, 7])]);
        assert_eq!(rows.len(), 3);
        assert_eq!(rows, vec![ints(&[1, 2]), ints(&[3, 4]), ints(&[5, 6])]);
        assert_eq!(&rows[2], &ints(&[5, 6])[..]);
        assert_eq!(rows.get(3), None);
        assert_eq!(rows.iter().len(), 3);
        let owned: Vec<Vec<Value>> = rows.clone().into_iter().collect();
        assert_eq!(owned, rows.to_vecs());
        assert_eq!(owned[1], ints(&[3, 4]));
        assert!(Rows::from_blocks(0, vec![ints(&[1])]).is_empty());
    }

    #[test]
    #[should_panic(expected = "row of the wrong width")]
    fn a_row_of_the_wrong_width_is_refused() {
        let _ = Rows::from(vec![ints(&[1, 2]), ints(&[3])]);
    }

    #[test]
    fn pushed_rows_and_empty_rows() {
        let mut rows = Rows::new(1);
        for i in 0..10_000 {
            rows.push(ints(&[i]));
        }
        assert_eq!(rows.len(), 10_000);
        assert!(rows
            .iter()
            .enumerate()
            .all(|(i, r)| r == &ints(&[i as i64])[..]));
        assert_eq!(&rows[9_999], &ints(&[9_999])[..]);
        let empty = Rows::from(vec![vec![], vec![]]);
        assert_eq!((empty.len(), empty.width()), (2, 0));
        assert_eq!(empty.iter().collect::<Vec<_>>(), vec![&[] as &[Value]; 2]);
        assert_eq!(
            empty.into_iter().collect::<Vec<_>>(),
            vec![Vec::<Value>::new(); 2]
        );
        assert_eq!(format!("{:?}", Rows::from(vec![ints(&[1])])), "[[Int(1)]]");
    }
}
