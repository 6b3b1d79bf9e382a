//! A bounded, deterministic stand-in for the cargo-fuzz targets that runs on
//! stable Rust in CI: mutates every TCK query (truncation, byte deletion and
//! duplication, splicing in tokens, swapping fragments between queries) and
//! checks that parsing and analysis never panic and that whatever parses
//! round-trips through the printer.

mod common;

use rhizome_cypher::printer::print_statement;
use rhizome_cypher::{compile, parse};

/// A small deterministic PRNG (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

const TOKENS: &[&str] = &[
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    ",",
    ".",
    "..",
    ":",
    "|",
    "-",
    "->",
    "<-",
    "*",
    "=",
    "<>",
    "$p",
    "'s'",
    "\"\\u00e9\"",
    "`q`",
    "0x1F",
    "1e9",
    "9223372036854775808",
    "MATCH ",
    " RETURN ",
    " WITH ",
    " WHERE ",
    " AS ",
    " UNION ",
    " CALL {",
    " EXISTS {",
    " COUNT {",
    "count(*)",
    " NOT ",
    " AND ",
    " IN ",
    " IS NULL",
    " CASE WHEN ",
    " END",
    " ORDER BY ",
    " SKIP ",
    " LIMIT ",
    "/* c */",
    "// c\n",
    "shortestPath(",
    "reduce(",
    "all(x IN ",
    "—",
    "\u{0}",
];

fn mutate(rng: &mut Rng, base: &str, other: &str) -> String {
    let mut bytes = base.as_bytes().to_vec();
    for _ in 0..1 + rng.below(3) {
        match rng.below(6) {
            0 => bytes.truncate(rng.below(bytes.len() + 1)),
            1 if !bytes.is_empty() => {
                let at = rng.below(bytes.len());
                bytes.remove(at);
            }
            2 => {
                let at = rng.below(bytes.len() + 1);
                let tok = TOKENS[rng.below(TOKENS.len())];
                bytes.splice(at..at, tok.bytes());
            }
            3 if !bytes.is_empty() => {
                let a = rng.below(bytes.len());
                let b = (a + rng.below(16)).min(bytes.len());
                let frag = bytes[a..b].to_vec();
                let at = rng.below(bytes.len() + 1);
                bytes.splice(at..at, frag);
            }
            4 => {
                let o = other.as_bytes();
                let a = rng.below(o.len() + 1);
                let b = (a + rng.below(40)).min(o.len());
                let at = rng.below(bytes.len() + 1);
                bytes.splice(at..at, o[a..b].iter().copied());
            }
            _ => {
                let at = rng.below(bytes.len() + 1);
                bytes.insert(at, rng.below(128) as u8);
            }
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

#[test]
fn mutated_tck_queries_never_panic_and_round_trip() {
    let seeds: Vec<String> = common::tck_cases().into_iter().map(|c| c.query).collect();
    let iterations: usize = std::env::var("FUZZ_SMOKE_ITERATIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20_000);
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut parsed = 0;
    for i in 0..iterations {
        let base = &seeds[rng.below(seeds.len())];
        let other = &seeds[rng.below(seeds.len())];
        let text = mutate(&mut rng, base, other);
        if let Err(e) = compile(&text) {
            let _ = e.render_with_source(&text);
        }
        if let Ok(ast) = parse(&text) {
            parsed += 1;
            let printed = print_statement(&ast);
            match parse(&printed) {
                Ok(again) => assert_eq!(
                    again, ast,
                    "iteration {i}: round trip changed the AST\n{text}\n{printed}"
                ),
                Err(e) => {
                    panic!("iteration {i}: printed text does not parse: {e}\n{text}\n{printed}")
                }
            }
        }
    }
    println!("fuzz smoke: {iterations} mutated inputs, {parsed} parsed");
}
