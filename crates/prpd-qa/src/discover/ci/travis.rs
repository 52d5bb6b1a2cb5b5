//! Travis CI: the `script` lines of `.travis.yml`, at the top level and in each
//! `jobs.include` (or the older `matrix.include`) entry. A top level or an entry whose `os`
//! is another operating system only (`osx`, `windows`, `freebsd`) is skipped; `install` and
//! `before_script` are set-up, not checks.

use super::{
    Candidate, DetectError, Directory, command_lines, line_candidates, names_other_system,
};

/// Travis's CI file.
const TRAVIS_FILE: &str = ".travis.yml";

pub(super) fn candidates(directory: &Directory<'_>) -> Result<Vec<Candidate>, DetectError> {
    Ok(directory
        .read(TRAVIS_FILE)?
        .map(|text| travis_candidates(&text))
        .unwrap_or_default())
}

/// The lines of a `script` value: a string or a list of strings.
fn script_lines(script: Option<&yaml_serde::Value>) -> Vec<String> {
    let scripts: Vec<&str> = match script {
        Some(yaml_serde::Value::String(script)) => vec![script.as_str()],
        Some(yaml_serde::Value::Sequence(lines)) => {
            lines.iter().filter_map(yaml_serde::Value::as_str).collect()
        }
        _ => Vec::new(),
    };
    scripts.into_iter().flat_map(command_lines).collect()
}

/// Whether `os` (a string or a list) names only other operating systems.
fn only_other_systems(os: Option<&yaml_serde::Value>) -> bool {
    let systems: Vec<&str> = match os {
        Some(yaml_serde::Value::String(os)) => vec![os.as_str()],
        Some(yaml_serde::Value::Sequence(items)) => {
            items.iter().filter_map(yaml_serde::Value::as_str).collect()
        }
        _ => Vec::new(),
    };
    !systems.is_empty() && systems.iter().all(|os| names_other_system(os))
}

fn travis_candidates(text: &str) -> Vec<Candidate> {
    let document: yaml_serde::Value = match yaml_serde::from_str(text) {
        Ok(document) => document,
        Err(error) => {
            tracing::warn!(file = TRAVIS_FILE, %error, "skipping a CI file prpd cannot parse");
            return Vec::new();
        }
    };
    let mut candidates = Vec::new();
    if !only_other_systems(document.get("os")) {
        let source = format!("{TRAVIS_FILE} script");
        for line in script_lines(document.get("script")) {
            candidates.extend(line_candidates(&line, &source, None));
        }
    }
    for section in ["jobs", "matrix"] {
        let Some(entries) = document
            .get(section)
            .and_then(|jobs| jobs.get("include"))
            .and_then(yaml_serde::Value::as_sequence)
        else {
            continue;
        };
        for (index, entry) in entries.iter().enumerate() {
            if only_other_systems(entry.get("os")) {
                continue;
            }
            let label = entry
                .get("name")
                .or_else(|| entry.get("stage"))
                .and_then(yaml_serde::Value::as_str)
                .map_or_else(|| index.to_string(), |name| format!("\"{name}\""));
            let source = format!("{TRAVIS_FILE} {section}.include {label}");
            for line in script_lines(entry.get("script")) {
                candidates.extend(line_candidates(&line, &source, None));
            }
        }
    }
    candidates
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::CommandKind;

    #[test]
    fn top_level_and_included_scripts_give_lines_other_systems_skipped() {
        let text = "language: python\ninstall: pip install -e .[test]\nscript:\n  - PYTHONPATH=src pytest -q\njobs:\n  include:\n    - os: osx\n      script: make lint\n    - name: lint\n      script: flake8 src\n    - stage: types\n      script:\n        - mypy src\n";
        let summary: Vec<(CommandKind, String, String)> = travis_candidates(text)
            .into_iter()
            .map(|candidate| (candidate.kind, candidate.command, candidate.source))
            .collect();
        assert_eq!(
            summary,
            [
                (
                    CommandKind::Test,
                    "pytest -q".to_owned(),
                    ".travis.yml script".to_owned()
                ),
                (
                    CommandKind::Lint,
                    "flake8 src".to_owned(),
                    ".travis.yml jobs.include \"lint\"".to_owned()
                ),
                (
                    CommandKind::Typecheck,
                    "mypy src".to_owned(),
                    ".travis.yml jobs.include \"types\"".to_owned()
                ),
            ]
        );
    }

    #[test]
    fn a_travis_file_for_macos_only_gives_nothing() {
        assert!(travis_candidates("os: osx\nscript: make test\n").is_empty());
        assert!(travis_candidates("script: [unclosed").is_empty());
    }
}
