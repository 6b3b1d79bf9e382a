//! Slot allocation: one slot space per statement, shared by nested plans.
//!
//! Every variable binding and every temporary gets a fresh slot; slots are
//! never reused, so a nested plan (apply, subquery) can read any outer slot
//! without renaming. Names are for EXPLAIN only: variables keep their
//! names, temporaries are called `  anon_N` (the leading spaces cannot be
//! written as a Cypher identifier, so they never clash with user names).

use rhizome_plan::Slot;

/// Hands out slots and remembers their names.
#[derive(Debug, Clone, Default)]
pub struct Slots {
    names: Vec<String>,
    anon: usize,
}

impl Slots {
    /// An empty slot space.
    pub fn new() -> Slots {
        Slots::default()
    }

    /// A new slot for the variable `name`.
    pub fn named(&mut self, name: &str) -> Slot {
        self.names.push(name.to_string());
        self.names.len() - 1
    }

    /// A new slot for a temporary value.
    pub fn anon(&mut self) -> Slot {
        let name = format!("  anon_{}", self.anon);
        self.anon += 1;
        self.named(&name)
    }

    /// Number of slots handed out (the plan's row width).
    pub fn width(&self) -> usize {
        self.names.len()
    }

    /// The name of every slot, by slot number.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// Consumes the allocator, returning the slot names.
    pub fn into_names(self) -> Vec<String> {
        self.names
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_fresh_and_named() {
        let mut s = Slots::new();
        assert_eq!(s.named("n"), 0);
        assert_eq!(s.anon(), 1);
        assert_eq!(s.anon(), 2);
        assert_eq!(s.named("n"), 3);
        assert_eq!(s.width(), 4);
        assert_eq!(s.names()[1], "  anon_0");
        assert_eq!(s.names()[2], "  anon_1");
    }
}
