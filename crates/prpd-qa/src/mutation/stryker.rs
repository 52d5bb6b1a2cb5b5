//! Stryker's JSON report (`reports/mutation/mutation.json`, the mutation-testing-elements
//! schema): every mutant of the files it was told to mutate, with its status, mutator,
//! replacement and location. prpd runs Stryker only through `npx --no-install`, so a Stryker
//! that is not in the project's `node_modules` is never downloaded.

use std::collections::BTreeMap;

use serde::Deserialize;

use super::changed::ChangedLines;
use super::mutant::{Mutant, Status};

/// Where the JSON reporter writes, relative to the directory Stryker runs in.
pub(crate) const REPORT: &str = "reports/mutation/mutation.json";

/// The extensions Stryker mutates.
pub(crate) const EXTENSIONS: &[&str] = &[
    "js", "mjs", "cjs", "jsx", "ts", "mts", "cts", "tsx", "vue", "svelte",
];

/// The `--mutate` argument: each changed file with its changed line ranges
/// (`src/calc.js:5-13,src/calc.js:20-20`).
pub(crate) fn mutate_argument(changed: &ChangedLines) -> String {
    changed
        .with_extension(EXTENSIONS)
        .into_iter()
        .flat_map(|file| {
            changed.files[file]
                .iter()
                .map(move |(start, end)| format!("{file}:{start}-{end}"))
        })
        .collect::<Vec<_>>()
        .join(",")
}

#[derive(Debug, Deserialize)]
struct Report {
    files: BTreeMap<String, File>,
}

#[derive(Debug, Deserialize)]
struct File {
    mutants: Vec<RawMutant>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawMutant {
    mutator_name: String,
    replacement: Option<String>,
    status: String,
    location: Location,
}

#[derive(Debug, Deserialize)]
struct Location {
    start: Position,
}

#[derive(Debug, Deserialize)]
struct Position {
    line: u32,
}

/// The mutants of the report that start on a changed line.
pub(crate) fn parse(json: &str, changed: &ChangedLines) -> Result<Vec<Mutant>, serde_json::Error> {
    let report: Report = serde_json::from_str(json)?;
    let mut mutants = Vec::new();
    for (file, entry) in report.files {
        for raw in entry.mutants {
            let line = raw.location.start.line;
            if !changed.contains(&file, line) {
                continue;
            }
            let mutation = match &raw.replacement {
                Some(replacement) => format!("{}: `{}`", raw.mutator_name, one_line(replacement)),
                None => raw.mutator_name.clone(),
            };
            mutants.push(Mutant {
                file: file.clone(),
                line: Some(line),
                mutation,
                status: status(&raw.status),
            });
        }
    }
    Ok(mutants)
}

/// The schema's statuses: `NoCoverage` (no test runs the code) is a survivor; `CompileError`,
/// `RuntimeError`, `Ignored` and `Pending` were not tested.
fn status(name: &str) -> Status {
    match name {
        "Killed" => Status::Killed,
        "Survived" | "NoCoverage" => Status::Survived,
        "Timeout" => Status::TimedOut,
        _ => Status::Unviable,
    }
}

/// A replacement that spans lines, shortened to its first line.
fn one_line(text: &str) -> String {
    let first = text.lines().next().unwrap_or("").trim();
    if text.trim().lines().count() > 1 {
        format!("{first} …")
    } else {
        first.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mutation::mutant::Tally;

    /// The real report of `tests/fixtures/mutation/stryker/` (see its README).
    const REPORT_FIXTURE: &str =
        include_str!("../../../../tests/fixtures/mutation/stryker/mutation.json");

    fn changed(ranges: &[(&str, u32, u32)]) -> ChangedLines {
        let mut changed = ChangedLines::default();
        for (file, start, end) in ranges {
            changed
                .files
                .entry((*file).to_owned())
                .or_default()
                .push((*start, *end));
        }
        changed
    }

    /// The change the report was made on.
    const CHANGE: &str = include_str!("../../../../tests/fixtures/mutation/stryker/change.diff");

    #[test]
    fn the_captured_report_gives_the_counts_stryker_printed() {
        let change = ChangedLines::from_diff(CHANGE);
        assert_eq!(mutate_argument(&change), "src/calc.js:5-15");
        let mutants = parse(REPORT_FIXTURE, &change).expect("a report");
        let mut tally = Tally::default();
        tally.add(mutants);
        assert_eq!((tally.total(), tally.killed, tally.survived), (11, 7, 4));
        assert_eq!(tally.score(), Some(63.64));
        let survivors: Vec<String> = tally
            .survivors
            .iter()
            .map(|mutant| format!("{}:{:?} {}", mutant.file, mutant.line, mutant.mutation))
            .collect();
        assert!(
            survivors.contains(&"src/calc.js:Some(6) EqualityOperator: `value <= low`".to_owned()),
            "{survivors:?}"
        );
        assert!(
            survivors.contains(&"src/calc.js:Some(9) BlockStatement: `{}`".to_owned()),
            "{survivors:?}"
        );
    }

    #[test]
    fn mutants_off_the_changed_lines_do_not_count() {
        let mutants = parse(REPORT_FIXTURE, &changed(&[("src/calc.js", 9, 9)])).expect("a report");
        assert!(!mutants.is_empty());
        assert!(
            mutants.iter().all(|mutant| mutant.line == Some(9)),
            "{mutants:?}"
        );
        assert!(parse("{\"files\": 3}", &ChangedLines::default()).is_err());
    }

    #[test]
    fn the_mutate_argument_lists_each_range_of_a_source_file() {
        let changed = changed(&[
            ("src/calc.js", 5, 13),
            ("src/calc.js", 20, 20),
            ("calc.py", 1, 2),
            ("web/app.tsx", 3, 4),
        ]);
        assert_eq!(
            mutate_argument(&changed),
            "src/calc.js:5-13,src/calc.js:20-20,web/app.tsx:3-4"
        );
    }
}
