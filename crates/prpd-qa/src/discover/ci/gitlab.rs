//! GitLab CI: each job's `script` lines in `.gitlab-ci.yml`, jobs in file order. Hidden jobs
//! (`.template`), the reserved top-level keys and jobs tagged for another operating system
//! (`tags: [windows]`, `saas-macos-…`) are skipped.

use super::{
    Candidate, DetectError, Directory, command_lines, line_candidates, names_other_system,
};

/// GitLab's CI file.
const GITLAB_FILE: &str = ".gitlab-ci.yml";

/// Top-level `.gitlab-ci.yml` keys that are not jobs.
const GITLAB_RESERVED: &[&str] = &[
    "default",
    "include",
    "stages",
    "variables",
    "workflow",
    "image",
    "services",
    "cache",
    "before_script",
    "after_script",
];

pub(super) fn candidates(directory: &Directory<'_>) -> Result<Vec<Candidate>, DetectError> {
    Ok(directory
        .read(GITLAB_FILE)?
        .map(|text| gitlab_candidates(&text))
        .unwrap_or_default())
}

/// The candidates of `.gitlab-ci.yml`.
fn gitlab_candidates(text: &str) -> Vec<Candidate> {
    let document: yaml_serde::Value = match yaml_serde::from_str(text) {
        Ok(document) => document,
        Err(error) => {
            tracing::warn!(file = GITLAB_FILE, %error, "skipping a CI file prpd cannot parse");
            return Vec::new();
        }
    };
    let Some(jobs) = document.as_mapping() else {
        return Vec::new();
    };
    let mut candidates = Vec::new();
    for (name, job) in jobs {
        let Some(name) = name.as_str() else {
            continue;
        };
        if name.starts_with('.') || GITLAB_RESERVED.contains(&name) {
            continue;
        }
        let tagged_elsewhere = job
            .get("tags")
            .and_then(yaml_serde::Value::as_sequence)
            .is_some_and(|tags| {
                tags.iter()
                    .filter_map(yaml_serde::Value::as_str)
                    .any(names_other_system)
            });
        if tagged_elsewhere {
            continue;
        }
        let scripts: Vec<&str> = match job.get("script") {
            Some(yaml_serde::Value::String(script)) => vec![script.as_str()],
            Some(yaml_serde::Value::Sequence(lines)) => {
                lines.iter().filter_map(yaml_serde::Value::as_str).collect()
            }
            _ => Vec::new(),
        };
        let source = format!("{GITLAB_FILE} job {name}");
        for line in scripts.into_iter().flat_map(command_lines) {
            candidates.extend(line_candidates(&line, &source, None));
        }
    }
    candidates
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::CommandKind;

    #[test]
    fn gitlab_jobs_give_their_script_lines() {
        let text = "stages: [test]\nvariables:\n  X: 1\n.template:\n  script: [pytest]\nlint:\n  script:\n    - pip install ruff\n    - ruff check .\ntest:\n  script: go test ./...\nmac:\n  tags: [saas-macos-medium-m1]\n  script: [make check]\n";
        let candidates = gitlab_candidates(text);
        assert_eq!(
            candidates,
            [
                Candidate::plain(
                    CommandKind::Lint,
                    "ruff check .",
                    ".gitlab-ci.yml job lint".to_owned()
                ),
                Candidate::plain(
                    CommandKind::Test,
                    "go test ./...",
                    ".gitlab-ci.yml job test".to_owned()
                ),
            ]
        );
    }
}
