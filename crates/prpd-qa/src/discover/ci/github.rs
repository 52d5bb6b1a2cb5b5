//! GitHub Actions: the `run:` lines of every workflow under `.github/workflows/`.
//!
//! A step's `working-directory` (or the job's or workflow's default) becomes a `cd` prefix.
//! Jobs that run on another operating system only (`runs-on: windows-latest`, or a matrix of
//! `os` values none of which is Linux) and steps limited to one (`if: runner.os ==
//! 'Windows'`, `shell: pwsh`) are skipped.

use serde::Deserialize;

use super::{
    Candidate, DetectError, Directory, command_lines, condition_is_for_other_system,
    line_candidates, names_other_system, yaml_files,
};
use crate::tools_mapping::Ordered;

/// Where GitHub keeps workflows.
const WORKFLOW_DIR: &str = ".github/workflows";

/// Shells that exist on Windows runners only, as a step's `shell:` names them.
const WINDOWS_SHELLS: &[&str] = &["pwsh", "powershell", "cmd"];

/// The candidates of every workflow, files sorted by name.
pub(super) fn candidates(directory: &Directory<'_>) -> Result<Vec<Candidate>, DetectError> {
    let mut candidates = Vec::new();
    for name in yaml_files(directory, WORKFLOW_DIR) {
        let relative = format!("{WORKFLOW_DIR}/{name}");
        if let Some(text) = directory.read(&relative)? {
            candidates.extend(github_candidates(&relative, &text));
        }
    }
    Ok(candidates)
}

#[derive(Debug, Deserialize)]
struct Workflow {
    #[serde(default)]
    jobs: Ordered<Job>,
    defaults: Option<Defaults>,
}

#[derive(Debug, Deserialize)]
struct Job {
    #[serde(default)]
    steps: Vec<Step>,
    defaults: Option<Defaults>,
    #[serde(rename = "runs-on")]
    runs_on: Option<yaml_serde::Value>,
    strategy: Option<yaml_serde::Value>,
}

#[derive(Debug, Deserialize)]
struct Defaults {
    run: Option<RunDefaults>,
}

#[derive(Debug, Deserialize)]
struct RunDefaults {
    #[serde(rename = "working-directory")]
    working_directory: Option<String>,
}

#[derive(Debug, Deserialize)]
struct Step {
    name: Option<String>,
    run: Option<String>,
    #[serde(rename = "working-directory")]
    working_directory: Option<String>,
    #[serde(rename = "if")]
    condition: Option<yaml_serde::Value>,
    shell: Option<String>,
}

fn default_directory(defaults: Option<&Defaults>) -> Option<&str> {
    defaults?.run.as_ref()?.working_directory.as_deref()
}

/// The strings of a YAML value: itself, or the items of a list.
fn strings(value: &yaml_serde::Value) -> Vec<&str> {
    match value {
        yaml_serde::Value::String(text) => vec![text.as_str()],
        yaml_serde::Value::Sequence(items) => {
            items.iter().filter_map(yaml_serde::Value::as_str).collect()
        }
        _ => Vec::new(),
    }
}

impl Job {
    /// Whether the job runs only on another operating system: its runner names one, or its
    /// runner comes from a matrix `os` whose values all do.
    fn is_for_other_system(&self) -> bool {
        let Some(runs_on) = &self.runs_on else {
            return false;
        };
        let labels = strings(runs_on);
        if labels.iter().any(|label| label.contains("matrix.")) {
            let matrix_os: Vec<&str> = self
                .strategy
                .as_ref()
                .and_then(|strategy| strategy.get("matrix"))
                .and_then(|matrix| matrix.get("os"))
                .map(strings)
                .unwrap_or_default();
            return !matrix_os.is_empty() && matrix_os.iter().all(|os| names_other_system(os));
        }
        !labels.is_empty() && labels.iter().any(|label| names_other_system(label))
    }
}

impl Step {
    fn is_for_other_system(&self) -> bool {
        let condition = self
            .condition
            .as_ref()
            .and_then(yaml_serde::Value::as_str)
            .is_some_and(condition_is_for_other_system);
        let windows_shell = self
            .shell
            .as_deref()
            .is_some_and(|shell| WINDOWS_SHELLS.contains(&shell.trim()));
        condition || windows_shell
    }
}

/// The candidates of one workflow file, `file` being its path from the root.
fn github_candidates(file: &str, text: &str) -> Vec<Candidate> {
    let workflow: Workflow = match yaml_serde::from_str(text) {
        Ok(workflow) => workflow,
        Err(error) => {
            tracing::warn!(file, %error, "skipping a CI workflow prpd cannot parse");
            return Vec::new();
        }
    };
    let mut candidates = Vec::new();
    for (_, job) in &workflow.jobs.0 {
        if job.is_for_other_system() {
            continue;
        }
        for step in &job.steps {
            let Some(run) = &step.run else {
                continue;
            };
            if step.is_for_other_system() {
                continue;
            }
            let directory = step
                .working_directory
                .as_deref()
                .or_else(|| default_directory(job.defaults.as_ref()))
                .or_else(|| default_directory(workflow.defaults.as_ref()));
            for line in command_lines(run) {
                let label = step.name.as_deref().unwrap_or(&line);
                let source = format!("{file} step \"{label}\"");
                candidates.extend(line_candidates(&line, &source, directory));
            }
        }
    }
    candidates
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::CommandKind;

    const WORKFLOW: &str = r"
name: CI
on: [push]
defaults:
  run:
    working-directory: .
jobs:
  build:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - name: Install
        run: pip install -r requirements.txt
      - name: Run tests
        run: |
          # the suite
          python -m pytest \
            -q
          ruff check .
      - run: cargo fmt --check
  web:
    defaults:
      run:
        working-directory: web
    steps:
      - run: npm test
";

    #[test]
    fn workflow_steps_give_lines_with_step_names_and_directories() {
        let candidates = github_candidates(".github/workflows/ci.yml", WORKFLOW);
        let summary: Vec<(CommandKind, &str, &str)> = candidates
            .iter()
            .map(|candidate| {
                (
                    candidate.kind,
                    candidate.command.as_str(),
                    candidate.source.as_str(),
                )
            })
            .collect();
        assert_eq!(
            summary,
            [
                (
                    CommandKind::Test,
                    "python -m pytest -q",
                    ".github/workflows/ci.yml step \"Run tests\""
                ),
                (
                    CommandKind::Lint,
                    "ruff check .",
                    ".github/workflows/ci.yml step \"Run tests\""
                ),
                (
                    CommandKind::FormatCheck,
                    "cargo fmt --check",
                    ".github/workflows/ci.yml step \"cargo fmt --check\""
                ),
                (
                    CommandKind::Test,
                    "cd web && npm test",
                    ".github/workflows/ci.yml step \"npm test\""
                ),
            ]
        );
    }

    #[test]
    fn unparsable_workflow_is_skipped() {
        assert!(github_candidates("ci.yml", "jobs: [unclosed").is_empty());
    }

    #[test]
    fn jobs_and_steps_for_other_systems_are_skipped() {
        let workflow = r"
jobs:
  windows:
    runs-on: windows-latest
    steps:
      - run: cargo test --workspace
  mac-only-matrix:
    runs-on: ${{ matrix.os }}
    strategy:
      matrix:
        os: [macos-13, macos-14]
    steps:
      - run: cargo test --lib
  linux:
    runs-on: ${{ matrix.os }}
    strategy:
      matrix:
        os: [ubuntu-latest, windows-latest]
    steps:
      - if: runner.os == 'Windows'
        run: cargo test --no-default-features
      - shell: pwsh
        run: cargo clippy --all
      - if: matrix.os != 'windows-latest'
        run: RUSTFLAGS=-Dwarnings cargo test --target ${{ matrix.target }} --all
";
        let summary: Vec<(CommandKind, String)> = github_candidates("ci.yml", workflow)
            .into_iter()
            .map(|candidate| (candidate.kind, candidate.command))
            .collect();
        assert_eq!(
            summary,
            [(CommandKind::Test, "cargo test --all".to_owned())]
        );
    }
}
