//! `[qa] junit = "<glob>"` of `prpd.toml`: where the project's test command writes a JUnit XML
//! report. When it is set, prpd takes the test figures and names from the report the run wrote
//! instead of the console output (`junit.rs` of this crate), so a runner whose console prpd does
//! not read still counts.
//!
//! Only the pattern's shape is judged here: a glob relative to the repository root that
//! cannot leave it. Whether the run wrote a report is the QA gate's to judge, after the run.

use std::path::{Component, Path};

use prpd_base::config_file::ConfigError;

/// The validated pattern of `[qa] junit`, without a leading `./`; `None` when it is not set.
pub(super) fn pattern(
    path: &Path,
    text: &str,
    value: Option<String>,
) -> Result<Option<String>, ConfigError> {
    let Some(value) = value else {
        return Ok(None);
    };
    let refuse = |why: String| ConfigError::at(path, text, "junit", why);
    let pattern = value.trim().trim_start_matches("./");
    if pattern.is_empty() {
        return Err(refuse(
            "`qa.junit` is empty; name the report the test command writes, e.g. \"junit.xml\" or \"build/test-results/**/*.xml\"".to_owned(),
        ));
    }
    let relative = Path::new(pattern);
    if relative.is_absolute()
        || relative
            .components()
            .any(|part| part == Component::ParentDir)
    {
        return Err(refuse(format!(
            "`qa.junit` = \"{value}\" must be a glob relative to the repository root, inside it (no leading `/`, no `..`)"
        )));
    }
    globset::Glob::new(pattern).map_err(|error| {
        refuse(format!(
            "`qa.junit` = \"{value}\" is not a valid glob: {}",
            error.kind()
        ))
    })?;
    Ok(Some(pattern.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(value: &str) -> Result<Option<String>, String> {
        let text = format!("[qa]\njobs = 2\njunit = \"{value}\"\n");
        pattern(Path::new("prpd.toml"), &text, Some(value.to_owned()))
            .map_err(|error| error.to_string())
    }

    #[test]
    fn a_relative_glob_is_kept_without_its_leading_dot() {
        assert_eq!(read("junit.xml"), Ok(Some("junit.xml".to_owned())));
        assert_eq!(
            read("./build/test-results/**/*.xml"),
            Ok(Some("build/test-results/**/*.xml".to_owned()))
        );
        assert_eq!(pattern(Path::new("prpd.toml"), "", None).ok(), Some(None));
    }

    #[test]
    fn a_pattern_outside_the_repository_or_broken_is_refused_at_its_line() {
        for (value, expected) in [
            ("/tmp/junit.xml", "relative to the repository root"),
            ("../reports/*.xml", "relative to the repository root"),
            ("reports/[a.xml", "not a valid glob"),
            ("  ", "is empty"),
        ] {
            let error = read(value).expect_err(value);
            assert!(error.starts_with("prpd.toml:3:"), "{error}");
            assert!(error.contains(expected), "{value}: {error}");
        }
    }
}
