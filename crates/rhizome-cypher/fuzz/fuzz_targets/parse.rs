//! Fuzzes the parser and the printer round trip: parsing must never panic or
//! hang, and whatever parses must print to text that parses to the same AST.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(ast) = rhizome_cypher::parse(text) {
        let printed = rhizome_cypher::printer::print_statement(&ast);
        let again = rhizome_cypher::parse(&printed).expect("printed statement must parse");
        assert_eq!(again, ast, "round trip changed the AST: {printed}");
    }
});
