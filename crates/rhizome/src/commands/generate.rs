//! `rhizome generate`: writes a synthetic data set with the import library's
//! generators and prints the `rhizome import` command that loads it.

use crate::cli::GenerateCommand;
use crate::Failure;
use rhizome_import::{generate_chain, generate_likes, ChainOptions, ImportOptions, LikesOptions};

/// Runs `rhizome generate`.
pub fn run(command: GenerateCommand) -> Result<(), Failure> {
    let (out_dir, options) = match command {
        GenerateCommand::Likes(args) => {
            let defaults = LikesOptions::default();
            let likes = LikesOptions {
                persons: args.persons,
                items: args.items,
                likes_per_person: args.likes_per_person,
                seed: args.seed.unwrap_or(defaults.seed),
            };
            (args.out_dir.clone(), generate_likes(&args.out_dir, &likes)?)
        }
        GenerateCommand::Chain(args) => {
            let chain = ChainOptions {
                nodes: args.nodes.unwrap_or(ChainOptions::default().nodes),
                degree: args.degree,
            };
            (args.out_dir.clone(), generate_chain(&args.out_dir, &chain)?)
        }
    };
    println!("Wrote {}", out_dir.display());
    println!("Import it with:");
    println!("  {}", import_command("<DB_DIR>", &options));
    Ok(())
}

/// The `rhizome import` command line that imports what `options` describe.
pub fn import_command(db_dir: &str, options: &ImportOptions) -> String {
    let mut words = vec![
        "rhizome".to_string(),
        "import".to_string(),
        db_dir.to_string(),
    ];
    words.extend(options.to_args().iter().map(|a| shell_quote(a)));
    words.join(" ")
}

/// Quotes `word` for a POSIX shell when it holds anything but safe characters.
pub fn shell_quote(word: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "-_=.,/:@%+".contains(c);
    if !word.is_empty() && word.chars().all(safe) {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rhizome_import::InputGroup;

    #[test]
    fn command_line_quotes_unsafe_words() {
        let options = ImportOptions {
            nodes: vec![InputGroup::new(["Person"], ["out dir/persons.csv"])],
            relationships: vec![InputGroup::new(["LIKES"], ["out/likes.csv"])],
            delimiter: b'|',
            ..ImportOptions::default()
        };
        assert_eq!(
            import_command("db", &options),
            "rhizome import db '--nodes=Person=out dir/persons.csv' \
             --relationships=LIKES=out/likes.csv '--delimiter=|'"
        );
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
    }
}
