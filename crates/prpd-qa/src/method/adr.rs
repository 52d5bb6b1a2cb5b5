//! The `check_docs_adr` method: where a project keeps architecture decision records, a change
//! is reviewed alongside them, so this check looks for at least one record in the usual
//! folders. A project without such a folder keeps no ADRs and the check does not apply to it
//! (the checklist may still insist, with `optional: false`).

use std::path::Path;

use super::files::extension;
use super::{MethodOutcome, one_flag};

/// Where projects keep their architecture decision records.
const ADR_DIRECTORIES: &[&str] = &[
    "docs/adr",
    "docs/adrs",
    "doc/adr",
    "doc/adrs",
    "docs/decisions",
    "doc/decisions",
    "adr",
    "adrs",
    "decisions",
    "docs/architecture/decisions",
    "docs/architecture/adr",
    "architecture/decisions",
];

/// Extensions of a decision record.
const RECORD_EXTENSIONS: &[&str] = &["md", "markdown", "rst", "adoc", "txt"];

/// `adr_file_exists`: a decision record exists in one of [`ADR_DIRECTORIES`].
pub(super) fn check_docs_adr(repo: &Path) -> MethodOutcome {
    const METRIC: &str = "adr_file_exists";
    if !ADR_DIRECTORIES
        .iter()
        .any(|directory| repo.join(directory).is_dir())
    {
        return MethodOutcome::NotApplicable {
            reason: format!(
                "the project keeps no decision records (none of {} exists), so none is asked for",
                ADR_DIRECTORIES.join(", ")
            ),
        };
    }
    for directory in ADR_DIRECTORIES {
        let Ok(entries) = std::fs::read_dir(repo.join(directory)) else {
            continue;
        };
        let mut records: Vec<String> = entries
            .filter_map(Result::ok)
            .filter(|entry| entry.file_type().is_ok_and(|kind| kind.is_file()))
            .map(|entry| entry.file_name().to_string_lossy().into_owned())
            .filter(|name| {
                let lower = name.to_lowercase();
                let stem = lower.split('.').next().unwrap_or("");
                RECORD_EXTENSIONS.contains(&extension(Path::new(&lower)).as_str())
                    && stem != "readme"
                    && stem != "index"
                    && !lower.contains("template")
            })
            .collect();
        records.sort();
        if let Some(latest) = records.last() {
            let count = records.len();
            let plural = if count == 1 { "" } else { "s" };
            return one_flag(
                METRIC,
                true,
                format!("{directory}/{latest} ({count} decision record{plural} in {directory}/)"),
            );
        }
    }
    one_flag(
        METRIC,
        false,
        format!(
            "no decision record (a .md, .rst or .adoc file other than README, index or a \
             template) in {}",
            ADR_DIRECTORIES
                .iter()
                .filter(|directory| repo.join(directory).is_dir())
                .copied()
                .collect::<Vec<_>>()
                .join(", ")
        ),
    )
}

#[cfg(test)]
mod tests {
    use crate::method::tests::{Repo, figure};
    use crate::method::{Method, MethodOutcome};
    use crate::metrics::MetricValue;

    #[test]
    fn check_docs_adr_needs_a_record_not_a_template() {
        let repo = Repo::new();
        repo.file("docs/adr/README.md", "# ADRs\n")
            .file("docs/adr/0000-template.md", "# Title\n");
        let (value, detail) = figure(&repo.run_changed(Method::CheckDocsAdr), "adr_file_exists");
        assert_eq!(value, MetricValue::Bool(false));
        assert_eq!(
            detail,
            "no decision record (a .md, .rst or .adoc file other than README, index or a \
             template) in docs/adr"
        );

        repo.file("docs/adr/0001-use-sqlite.md", "# Use SQLite\n")
            .file("docs/adr/0002-rate-limits.md", "# Rate limits\n");
        let (value, detail) = figure(&repo.run_changed(Method::CheckDocsAdr), "adr_file_exists");
        assert_eq!(value, MetricValue::Bool(true));
        assert_eq!(
            detail,
            "docs/adr/0002-rate-limits.md (2 decision records in docs/adr/)"
        );

        let other = Repo::new();
        other.file("docs/architecture/decisions/0001-x.rst", "X\n=\n");
        let (value, _) = figure(&other.run_changed(Method::CheckDocsAdr), "adr_file_exists");
        assert_eq!(value, MetricValue::Bool(true));
    }

    #[test]
    fn a_project_without_an_adr_folder_is_not_asked_for_one() {
        let repo = Repo::new();
        repo.file("docs/index.md", "# Docs\n");
        match repo.run_changed(Method::CheckDocsAdr) {
            MethodOutcome::NotApplicable { reason } => assert!(
                reason.starts_with("the project keeps no decision records (none of docs/adr,"),
                "{reason}"
            ),
            other => panic!("expected not applicable, got {other:?}"),
        }
    }
}
