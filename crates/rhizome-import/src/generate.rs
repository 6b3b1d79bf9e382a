//! Generators of import-ready data sets.
//!
//! - **likes**: `Person(id)`, `Item(id)` and `(:Person)-[:LIKES {weight}]->(:Item)`,
//!   every person liking `likes_per_person` items drawn uniformly at random
//!   (with repetition), `weight` a float in `[0, 10)` with three decimals.
//! - **chain**: the data set of the parallel-Cypher thesis: `N` nodes
//!   labelled `LBL_ALL` with `id = 0..N-1` and `idMod7 = id % 7`, the first
//!   10% also labelled `LBL_10M`, and `(n)-[:REL_ONE]->((n + k) mod N)` for
//!   `k = 1..=degree`.
//!
//! Output is a pure function of the options: the random numbers come from a
//! SplitMix64 generator written here, so no dependency update can change the
//! bytes. Files are comma-separated with integer ids (`id:ID(<Space>)`,
//! imported with `--id-type=integer`, which also stores `id` as an integer
//! property); each generator returns the [`ImportOptions`] that import them.

use crate::options::{IdType, ImportOptions, InputGroup};
use rhizome_common::{Error, ErrorKind, Result};
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

/// SplitMix64 (Steele, Lea, Flood 2014): tiny, fast and good enough for
/// benchmark data; fixed here so generated files never change.
#[derive(Debug, Clone)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// A generator seeded with `seed`.
    pub fn new(seed: u64) -> SplitMix64 {
        SplitMix64 { state: seed }
    }

    /// The next 64 random bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (multiply-shift; the bias is below 2^-40 for n < 2^24).
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }
}

/// Options of the likes graph (`rhizome generate likes`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LikesOptions {
    /// Number of `Person` nodes (ids `0..persons`).
    pub persons: u64,
    /// Number of `Item` nodes (ids `0..items`).
    pub items: u64,
    /// `LIKES` relationships per person.
    pub likes_per_person: u64,
    /// Seed of the random targets and weights.
    pub seed: u64,
}

impl Default for LikesOptions {
    /// 100,000 persons, 2,000 items, 100 likes per person (10M relationships), seed 42.
    fn default() -> LikesOptions {
        LikesOptions {
            persons: 100_000,
            items: 2_000,
            likes_per_person: 100,
            seed: 42,
        }
    }
}

/// Options of the chain graph (`rhizome generate chain`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChainOptions {
    /// Number of nodes `N`.
    pub nodes: u64,
    /// Relationships per node.
    pub degree: u64,
}

impl Default for ChainOptions {
    /// 100,000 nodes of degree 50 (5M relationships).
    fn default() -> ChainOptions {
        ChainOptions {
            nodes: 100_000,
            degree: 50,
        }
    }
}

/// A buffered CSV writer with allocation-free integer formatting.
struct CsvOut {
    path: PathBuf,
    file: File,
    buf: Vec<u8>,
}

impl CsvOut {
    fn create(path: PathBuf) -> Result<CsvOut> {
        let file = File::create(&path).map_err(|e| Error::io(path.display(), e))?;
        Ok(CsvOut {
            path,
            file,
            buf: Vec::with_capacity(1 << 20),
        })
    }

    #[inline]
    fn int(&mut self, mut n: u64) {
        let mut tmp = [0u8; 20];
        let mut i = tmp.len();
        loop {
            i -= 1;
            tmp[i] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        self.buf.extend_from_slice(&tmp[i..]);
    }

    #[inline]
    fn text(&mut self, s: &[u8]) {
        self.buf.extend_from_slice(s);
    }

    #[inline]
    fn end_row(&mut self) -> Result<()> {
        self.buf.push(b'\n');
        if self.buf.len() >= (1 << 20) - 64 {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        self.file
            .write_all(&self.buf)
            .map_err(|e| Error::io(self.path.display(), e))?;
        self.buf.clear();
        Ok(())
    }

    fn finish(mut self) -> Result<()> {
        self.flush()?;
        self.file
            .sync_all()
            .map_err(|e| Error::io(self.path.display(), e))
    }
}

fn create_out_dir(out: &Path) -> Result<()> {
    std::fs::create_dir_all(out).map_err(|e| Error::io(out.display(), e))
}

fn write_ids(path: PathBuf, header: &[u8], ids: std::ops::Range<u64>) -> Result<()> {
    let mut csv = CsvOut::create(path)?;
    csv.text(header);
    csv.end_row()?;
    for id in ids {
        csv.int(id);
        csv.end_row()?;
    }
    csv.finish()
}

/// Writes the likes graph into `out` (created if needed; the files
/// `persons.csv`, `items.csv` and `likes.csv` are overwritten) and returns
/// the options that import it. Errors with `ArgumentError` when likes are
/// asked for but there are no items.
pub fn generate_likes(out: &Path, options: &LikesOptions) -> Result<ImportOptions> {
    if options.items == 0 && options.likes_per_person > 0 && options.persons > 0 {
        return Err(Error::new(
            ErrorKind::ArgumentError,
            "the likes graph needs at least one item",
        ));
    }
    create_out_dir(out)?;
    let persons = out.join("persons.csv");
    let items = out.join("items.csv");
    let likes = out.join("likes.csv");
    write_ids(persons.clone(), b"id:ID(Person)", 0..options.persons)?;
    write_ids(items.clone(), b"id:ID(Item)", 0..options.items)?;
    let mut csv = CsvOut::create(likes.clone())?;
    csv.text(b":START_ID(Person),:END_ID(Item),weight:float");
    csv.end_row()?;
    let mut rng = SplitMix64::new(options.seed);
    for person in 0..options.persons {
        for _ in 0..options.likes_per_person {
            let item = rng.below(options.items);
            let weight = rng.below(10_000);
            csv.int(person);
            csv.text(b",");
            csv.int(item);
            csv.text(b",");
            csv.int(weight / 1000);
            let frac = weight % 1000;
            csv.text(&[
                b'.',
                b'0' + (frac / 100) as u8,
                b'0' + (frac / 10 % 10) as u8,
                b'0' + (frac % 10) as u8,
            ]);
            csv.end_row()?;
        }
    }
    csv.finish()?;
    Ok(ImportOptions {
        nodes: vec![
            InputGroup::new(["Person"], [persons]),
            InputGroup::new(["Item"], [items]),
        ],
        relationships: vec![InputGroup::new(["LIKES"], [likes])],
        id_type: IdType::Integer,
        ..ImportOptions::default()
    })
}

/// Writes the chain graph into `out` (files `nodes_10pct.csv`, `nodes.csv`,
/// `rels.csv`) and returns the options that import it: the first
/// `nodes / 10` nodes form a group labelled `LBL_ALL:LBL_10M`, the rest a
/// group labelled `LBL_ALL`, both in id space `Chain`. Errors with
/// `ArgumentError` for zero nodes.
pub fn generate_chain(out: &Path, options: &ChainOptions) -> Result<ImportOptions> {
    if options.nodes == 0 {
        return Err(Error::new(
            ErrorKind::ArgumentError,
            "the chain graph needs at least one node",
        ));
    }
    create_out_dir(out)?;
    let n = options.nodes;
    let tenth = n / 10;
    let first = out.join("nodes_10pct.csv");
    let rest = out.join("nodes.csv");
    let rels = out.join("rels.csv");
    for (path, range) in [(&first, 0..tenth), (&rest, tenth..n)] {
        let mut csv = CsvOut::create(path.clone())?;
        csv.text(b"id:ID(Chain),idMod7:int");
        csv.end_row()?;
        for id in range {
            csv.int(id);
            csv.text(b",");
            csv.int(id % 7);
            csv.end_row()?;
        }
        csv.finish()?;
    }
    let mut csv = CsvOut::create(rels.clone())?;
    csv.text(b":START_ID(Chain),:END_ID(Chain)");
    csv.end_row()?;
    for id in 0..n {
        for k in 1..=options.degree {
            csv.int(id);
            csv.text(b",");
            csv.int((id + k % n) % n);
            csv.end_row()?;
        }
    }
    csv.finish()?;
    Ok(ImportOptions {
        nodes: vec![
            InputGroup::new(["LBL_ALL", "LBL_10M"], [first]),
            InputGroup::new(["LBL_ALL"], [rest]),
        ],
        relationships: vec![InputGroup::new(["REL_ONE"], [rels])],
        id_type: IdType::Integer,
        ..ImportOptions::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix_is_fixed() {
        // Reference values of SplitMix64 seeded with 1234567.
        let mut rng = SplitMix64::new(1234567);
        assert_eq!(rng.next_u64(), 6457827717110365317);
        assert_eq!(rng.next_u64(), 3203168211198807973);
        let mut rng = SplitMix64::new(7);
        assert!((0..1000).all(|_| rng.below(10) < 10));
    }

    #[test]
    fn likes_are_deterministic_and_counted() {
        let a = tempfile::tempdir().unwrap();
        let b = tempfile::tempdir().unwrap();
        let options = LikesOptions {
            persons: 50,
            items: 7,
            likes_per_person: 3,
            seed: 9,
        };
        let import = generate_likes(a.path(), &options).unwrap();
        generate_likes(b.path(), &options).unwrap();
        for name in ["persons.csv", "items.csv", "likes.csv"] {
            assert_eq!(
                std::fs::read(a.path().join(name)).unwrap(),
                std::fs::read(b.path().join(name)).unwrap(),
                "{name}"
            );
        }
        let likes = std::fs::read_to_string(a.path().join("likes.csv")).unwrap();
        let lines: Vec<&str> = likes.lines().collect();
        assert_eq!(lines[0], ":START_ID(Person),:END_ID(Item),weight:float");
        assert_eq!(lines.len(), 1 + 150);
        for (i, line) in lines[1..].iter().enumerate() {
            let f: Vec<&str> = line.split(',').collect();
            assert_eq!(f[0].parse::<u64>().unwrap(), i as u64 / 3);
            assert!(f[1].parse::<u64>().unwrap() < 7);
            let w: f64 = f[2].parse().unwrap();
            assert!((0.0..10.0).contains(&w), "{w}");
        }
        let persons = std::fs::read_to_string(a.path().join("persons.csv")).unwrap();
        assert_eq!(persons.lines().count(), 51);
        assert_eq!(import.id_type, IdType::Integer);
        assert_eq!(import.relationships[0].names, vec!["LIKES"]);
        let other = tempfile::tempdir().unwrap();
        generate_likes(
            other.path(),
            &LikesOptions {
                seed: 10,
                ..options
            },
        )
        .unwrap();
        assert_ne!(
            std::fs::read(other.path().join("likes.csv")).unwrap(),
            likes.as_bytes()
        );
    }

    #[test]
    fn chain_edges_wrap_around() {
        let dir = tempfile::tempdir().unwrap();
        let import = generate_chain(
            dir.path(),
            &ChainOptions {
                nodes: 20,
                degree: 3,
            },
        )
        .unwrap();
        let first = std::fs::read_to_string(dir.path().join("nodes_10pct.csv")).unwrap();
        assert_eq!(first, "id:ID(Chain),idMod7:int\n0,0\n1,1\n");
        let rest = std::fs::read_to_string(dir.path().join("nodes.csv")).unwrap();
        assert_eq!(rest.lines().count(), 1 + 18);
        assert!(rest.contains("\n9,2\n"));
        let rels = std::fs::read_to_string(dir.path().join("rels.csv")).unwrap();
        let rows: Vec<(u64, u64)> = rels
            .lines()
            .skip(1)
            .map(|l| {
                let (a, b) = l.split_once(',').unwrap();
                (a.parse().unwrap(), b.parse().unwrap())
            })
            .collect();
        assert_eq!(rows.len(), 60);
        for (i, &(a, b)) in rows.iter().enumerate() {
            assert_eq!(a, i as u64 / 3);
            assert_eq!(b, (a + 1 + i as u64 % 3) % 20);
        }
        assert_eq!(import.nodes[0].names, vec!["LBL_ALL", "LBL_10M"]);
        assert_eq!(import.relationships[0].names, vec!["REL_ONE"]);
    }
}
