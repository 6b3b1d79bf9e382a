//! Hashing of ids: the hasher of hash maps keyed by node, relationship or
//! import ids.

use std::hash::{BuildHasherDefault, Hasher};

/// A fast non-cryptographic hasher for ids (FxHash-style multiply-rotate with
/// a final mix) for ids the database or a trusted import file chose; not for
/// keys an adversary picks (no protection against collision flooding).
#[derive(Debug, Default, Clone, Copy)]
pub struct IdHasher {
    hash: u64,
}

const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl IdHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.hash = (self.hash.rotate_left(5) ^ word).wrapping_mul(SEED);
    }
}

impl Hasher for IdHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            self.add(u64::from_le_bytes(chunk.try_into().expect("8 bytes")));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut word = [0u8; 8];
            word[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(word));
        }
    }

    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }

    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }

    #[inline]
    fn finish(&self) -> u64 {
        let h = self.hash;
        (h ^ (h >> 32)).wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ (h >> 29)
    }
}

/// Builds [`IdHasher`]s, for `HashMap<K, V, IdBuildHasher>`.
pub type IdBuildHasher = BuildHasherDefault<IdHasher>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hasher_spreads_sequential_ids() {
        let mut buckets = [0u32; 64];
        for i in 0..64_000i64 {
            let mut h = IdHasher::default();
            h.write_u64(i as u64 * 1024);
            buckets[(h.finish() >> 58) as usize] += 1;
        }
        assert!(buckets.iter().all(|&b| b > 500), "{buckets:?}");
    }
}
