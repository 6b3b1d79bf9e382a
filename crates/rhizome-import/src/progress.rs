//! Progress reporting hooks (the CLI draws a bar from them).

/// Receives progress while an import runs. Calls come from the importing
/// thread only, in the order `begin`, `advance`*, `end` per stage; stages are
/// `"nodes"`, `"relationships"` and `"writing"`. Implementations must be cheap:
/// `advance` is called once per parsed block (about every megabyte).
pub trait ImportProgress: Send + Sync {
    /// A stage starts; `total_bytes` is the size of its input files (0 when
    /// unknown, as for `"writing"`).
    fn begin(&self, stage: &str, total_bytes: u64);
    /// `bytes` more input bytes holding `rows` more rows were processed.
    fn advance(&self, bytes: u64, rows: u64);
    /// The current stage finished.
    fn end(&self);
}

/// Progress that is ignored.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoProgress;

impl ImportProgress for NoProgress {
    fn begin(&self, _stage: &str, _total_bytes: u64) {}
    fn advance(&self, _bytes: u64, _rows: u64) {}
    fn end(&self) {}
}
