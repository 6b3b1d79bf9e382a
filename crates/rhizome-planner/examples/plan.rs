//! Prints the EXPLAIN output (against empty statistics) of the queries given
//! as arguments: `cargo run -p rhizome-planner --example plan -- "MATCH ..."`.
fn main() {
    for q in std::env::args().skip(1) {
        match rhizome_cypher::compile(&q) {
            Ok(a) => match rhizome_planner::plan_statement(&a, &rhizome_planner::EmptyContext) {
                Ok(p) => println!("{q}\n{}", rhizome_planner::explain(&p)),
                Err(e) => println!("{q}\nPLAN ERROR: {e}"),
            },
            Err(e) => println!("{q}\nCOMPILE ERROR: {e}"),
        }
    }
}
