//! A cache prefetch hint for loops that read scattered memory: start loading
//! what an iteration a few steps ahead will read, so its cache miss overlaps
//! with the work in between.

/// Hints the CPU to load the cache line holding `value` into all cache
/// levels. Reads nothing and has no effect on program state; on targets
/// without a prefetch instruction it does nothing.
#[inline(always)]
pub fn prefetch<T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is a hint that never faults; `value` is a valid reference.
    unsafe {
        std::arch::x86_64::_mm_prefetch(
            (value as *const T).cast::<i8>(),
            std::arch::x86_64::_MM_HINT_T0,
        )
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}
