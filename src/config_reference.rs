//! The configuration chapter of the book (`docs/src/configuration.md`) and the commented example
//! (`config/prpd.toml`) checked against the parsers, so the reference cannot drift from what prpd
//! accepts: every table a crate reads is documented with every key it accepts (and shown in the
//! example), and the chapter documents no key that would be refused.
//! The parsers say what they accept themselves: a key no table has is refused with the list of
//! the keys it does have.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use prpd_base::config_file::{ConfigError, ConfigFile, TABLES};
use prpd_run::config::Config;
use prpd_watch::config::DaemonSettings;

const CHAPTER: &str = include_str!("../docs/src/configuration.md");

/// The commented example, `config/prpd.toml`, which names every key (most with their default).
const EXAMPLE: &str = prpd_base::config_file::EXAMPLE;

/// The names a `<phase>` placeholder of the chapter stands for.
const PHASES: [&str; 6] = ["default", "red", "green", "refactor", "document", "qa"];

/// One `## [table]` section of the chapter: the keys of its rows (first column) and the other
/// names a row accepts for its key ("`comando` is accepted too").
#[derive(Debug, Default)]
struct Section {
    keys: BTreeSet<String>,
    aliases: BTreeSet<String>,
}

fn chapter() -> BTreeMap<String, Section> {
    let mut sections: BTreeMap<String, Section> = BTreeMap::new();
    let mut current = None;
    for line in CHAPTER.lines() {
        if let Some(header) = line.strip_prefix("## [") {
            let name = header.trim_end_matches(']').replace('\\', "");
            sections.entry(name.clone()).or_default();
            current = Some(name);
        } else if line.starts_with("## ") {
            current = None;
        } else if let (Some(name), Some(row)) = (&current, line.strip_prefix("| `")) {
            let section = sections.get_mut(name).expect("entered above");
            if let Some((key, _)) = row.split_once('`') {
                section.keys.insert(key.to_owned());
            }
            section.aliases.extend(
                line.split(" is accepted too")
                    .filter_map(|before| before.strip_suffix('`')?.rsplit_once('`'))
                    .map(|(_, alias)| alias.to_owned()),
            );
        }
    }
    sections
}

/// The keys the parsers accept in `table` (`agents.green`), from the refusal of a key it
/// cannot have.
fn accepted(table: &str) -> BTreeSet<String> {
    let text = format!("[{table}]\nzz_not_a_key = 1\n");
    let parsed = |text: &str| -> Result<(), ConfigError> {
        let file = ConfigFile::from_text("prpd.toml".into(), text.to_owned())?;
        Config::from_file(&file)?;
        DaemonSettings::from_file(&file)?;
        Ok(())
    };
    let error = parsed(&text)
        .expect_err("an unknown key is refused")
        .to_string();
    let Some((_, expected)) = error.split_once("unknown field `zz_not_a_key`, expected ") else {
        panic!("[{table}]: expected a refusal that lists the keys, got {error}");
    };
    expected
        .split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_owned)
        .collect()
}

#[test]
fn the_chapter_documents_every_table_prpd_toml_may_hold() {
    let documented: BTreeSet<String> = chapter()
        .keys()
        .map(|name| name.split('.').next().expect("a name").to_owned())
        .collect();
    let tables: BTreeSet<String> = TABLES.iter().map(|table| (*table).to_owned()).collect();
    assert_eq!(documented, tables);
    let error = ConfigFile::from_text(Path::new("prpd.toml").into(), "[nope]\n".to_owned())
        .expect_err("an unknown table is refused");
    assert!(
        error.to_string().contains("unknown table `nope`"),
        "{error}"
    );
}

#[test]
fn every_key_the_parsers_accept_is_documented_and_no_other() {
    let sections = chapter();
    assert!(
        sections.len() >= 15,
        "the chapter's tables were not found: {sections:?}"
    );
    let mut problems = Vec::new();
    for (name, section) in &sections {
        if section.keys.is_empty() {
            problems.push(format!("[{name}]: no row with a key in backticks"));
        }
        let concrete = name
            .replace("<phase>", "green")
            .replace("<id>", "F1")
            .replace("<model>", "gpt-5");
        let accepted = accepted(&concrete);
        for key in &accepted {
            let sub_table = sections.contains_key(&format!("{name}.{key}"))
                || (sections.contains_key(&format!("{name}.<phase>"))
                    && PHASES.contains(&key.as_str()));
            if sub_table {
                continue;
            }
            if !section.keys.contains(key) && !section.aliases.contains(key) {
                problems.push(format!("[{name}] {key}: accepted, not documented"));
            }
            let in_example = EXAMPLE
                .split(|character: char| !(character.is_alphanumeric() || character == '_'))
                .any(|word| word == key);
            if section.keys.contains(key) && !in_example {
                problems.push(format!("[{name}] {key}: not in config/prpd.toml"));
            }
        }
        for key in &section.keys {
            if !accepted.contains(key) {
                problems.push(format!("[{name}] {key}: documented, refused by the parser"));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "docs/src/configuration.md and config/prpd.toml:\n{}",
        problems.join("\n")
    );
}
