//! The `check_docs_adr` method: decisions worth a PRP are worth a written record, so this
//! check looks for at least one architecture decision record in the usual folders.

use std::path::Path;

use super::files::extension;
use super::{MethodOutcome, one_flag};

/// Where projects keep their architecture decision records.
const ADR_DIRECTORIES: &[&str] = &[
    "docs/adr",
    "doc/adr",
    "docs/decisions",
    "adr",
    "docs/architecture/decisions",
];

/// `adr_file_exists`: a decision record exists in one of [`ADR_DIRECTORIES`].
pub(super) fn check_docs_adr(repo: &Path) -> MethodOutcome {
    const METRIC: &str = "adr_file_exists";
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
                extension(Path::new(&lower)) == "md"
                    && lower != "readme.md"
                    && lower != "index.md"
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
            "no decision record (a .md file other than README, index or a template) in {}",
            ADR_DIRECTORIES.join(", ")
        ),
    )
}

#[cfg(test)]
mod tests {
    use crate::qa::method::Method;
    use crate::qa::method::tests::{Repo, figure};
    use crate::qa::metrics::MetricValue;

    #[test]
    fn check_docs_adr_needs_a_record_not_a_template() {
        let repo = Repo::new();
        repo.file("docs/adr/README.md", "# ADRs\n")
            .file("docs/adr/0000-template.md", "# Title\n");
        let (value, detail) = figure(&repo.run(Method::CheckDocsAdr, None), "adr_file_exists");
        assert_eq!(value, MetricValue::Bool(false));
        assert!(detail.starts_with("no decision record"), "{detail}");

        repo.file("docs/adr/0001-use-sqlite.md", "# Use SQLite\n")
            .file("docs/adr/0002-rate-limits.md", "# Rate limits\n");
        let (value, detail) = figure(&repo.run(Method::CheckDocsAdr, None), "adr_file_exists");
        assert_eq!(value, MetricValue::Bool(true));
        assert_eq!(
            detail,
            "docs/adr/0002-rate-limits.md (2 decision records in docs/adr/)"
        );

        let other = Repo::new();
        other.file("docs/architecture/decisions/0001-x.md", "# X\n");
        let (value, _) = figure(&other.run(Method::CheckDocsAdr, None), "adr_file_exists");
        assert_eq!(value, MetricValue::Bool(true));
    }
}
