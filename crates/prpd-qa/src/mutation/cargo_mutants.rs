//! cargo-mutants' record of a run (`mutants.out/outcomes.json`): one outcome per mutant, with
//! the file, the span and the mutation in words. prpd hands it the change as a unified diff
//! (`--in-diff`), so it makes mutants only on the changed lines; it runs `--in-place` in the
//! copy of the tree prpd made for it.

use serde::Deserialize;

use super::mutant::{Mutant, Status};

/// Where cargo-mutants writes its record, relative to the directory it runs in.
pub(crate) const OUTCOMES: &str = "mutants.out/outcomes.json";

/// The extension cargo-mutants mutates.
pub(crate) const EXTENSIONS: &[&str] = &["rs"];

#[derive(Debug, Deserialize)]
struct Outcomes {
    outcomes: Vec<Outcome>,
}

#[derive(Debug, Deserialize)]
struct Outcome {
    /// `"Baseline"`, or `{"Mutant": {…}}`.
    scenario: serde_json::Value,
    summary: String,
}

#[derive(Debug, Deserialize)]
struct RawMutant {
    /// `src/lib.rs:6:14: replace < with <= in clamp`.
    name: String,
    file: String,
    span: Span,
}

#[derive(Debug, Deserialize)]
struct Span {
    start: Position,
}

#[derive(Debug, Deserialize)]
struct Position {
    line: u32,
}

/// Why the record does not measure the change.
#[derive(Debug, thiserror::Error)]
pub(crate) enum OutcomesError {
    #[error("its record does not parse: {0}")]
    Json(#[from] serde_json::Error),
    /// The tests fail without any mutant, so no mutant can be told caught from missed.
    #[error("the tests fail on the unmutated tree (cargo-mutants' baseline: {0})")]
    Baseline(String),
}

/// The mutants of the record.
pub(crate) fn parse(json: &str) -> Result<Vec<Mutant>, OutcomesError> {
    let outcomes: Outcomes = serde_json::from_str(json)?;
    let mut mutants = Vec::new();
    for outcome in outcomes.outcomes {
        let Some(raw) = outcome.scenario.get("Mutant") else {
            if outcome.summary != "Success" {
                return Err(OutcomesError::Baseline(outcome.summary));
            }
            continue;
        };
        let raw: RawMutant = serde_json::from_value(raw.clone())?;
        let mutation = raw
            .name
            .split_once(": ")
            .map_or_else(|| raw.name.clone(), |(_, words)| words.to_owned());
        mutants.push(Mutant {
            file: raw.file,
            line: Some(raw.span.start.line),
            mutation,
            status: status(&outcome.summary),
        });
    }
    Ok(mutants)
}

/// cargo-mutants' summaries: `CaughtMutant`, `MissedMutant`, `Timeout`, `Unviable` (did not
/// build); anything else (`Failure`) was not tested.
fn status(summary: &str) -> Status {
    match summary {
        "CaughtMutant" => Status::Killed,
        "MissedMutant" => Status::Survived,
        "Timeout" => Status::TimedOut,
        _ => Status::Unviable,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mutation::mutant::Tally;

    /// The real record of `tests/fixtures/mutation/cargo-mutants/` (see its README).
    const RECORD: &str =
        include_str!("../../../../tests/fixtures/mutation/cargo-mutants/outcomes.json");

    #[test]
    fn the_captured_record_gives_the_counts_cargo_mutants_printed() {
        let mut tally = Tally::default();
        tally.add(parse(RECORD).expect("a record"));
        assert_eq!((tally.total(), tally.killed, tally.survived), (9, 6, 3));
        let survivors: Vec<String> = tally
            .survivors
            .iter()
            .map(|mutant| format!("{}:{:?} {}", mutant.file, mutant.line, mutant.mutation))
            .collect();
        assert_eq!(
            survivors,
            [
                "src/lib.rs:Some(6) replace < with <= in clamp",
                "src/lib.rs:Some(9) replace > with == in clamp",
                "src/lib.rs:Some(9) replace > with >= in clamp",
            ]
        );
    }

    #[test]
    fn a_failing_baseline_is_no_measurement() {
        let record = r#"{"outcomes": [{"scenario": "Baseline", "summary": "Failure"}]}"#;
        let error = parse(record).expect_err("no baseline");
        assert_eq!(
            error.to_string(),
            "the tests fail on the unmutated tree (cargo-mutants' baseline: Failure)"
        );
        assert!(parse("{}").is_err());
    }
}
