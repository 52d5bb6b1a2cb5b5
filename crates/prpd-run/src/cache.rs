//! What a cached measurement measured. prpd runs the test command once per tree (the book's
//! "One test run per tree", docs/src/loop.md) and keeps the run on the tree without the feature for the fail-to-pass
//! proof; a result read back stands for a new run only when it measured the same thing: the
//! same tree, the exact same command, and the same measurement settings. The settings are the
//! configuration that shapes how a run is made and read (`[qa]`'s timeouts and JUnit glob, the
//! configuration file prpd loaded, prpd's frozen inputs) and the environment a measurement
//! inherits from prpd. [`CacheKey`] holds all three.
//!
//! The settings change only between two prpd processes (a resume with another configuration,
//! `prpd resume --reload-config`, another shell's environment): the driver drops every cached
//! result whose settings are not the current ones before it measures anything, so the worst a
//! changed setting costs is one test run more.

use std::fmt::Write as _;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::config::Config;
use prpd_base::files;
use prpd_base::process;

/// What a cached result measured: a command on a tree, with the run's measurement settings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CacheKey {
    /// The snapshot tree id the command ran on.
    pub tree: String,
    /// The command exactly as it ran.
    pub command: String,
    /// The hash of the measurement settings ([`settings`]).
    pub settings: String,
}

/// The hash of the measurement settings of a run with `config`, whose frozen inputs are
/// `prpd_inputs` (`Freeze::prpd_inputs_text`). Equal hashes mean a test run would be made, and
/// read, the same way.
pub fn settings(config: &Config, prpd_inputs: &str) -> String {
    let mut text = format!("qa: {:?}\n", config.qa);
    text.push_str(&config_file(config.source.as_deref()));
    text.push_str(prpd_inputs);
    for (name, value) in process::inherited_by_measurements() {
        let _ = writeln!(text, "env {name}={value}");
    }
    hash(text.as_bytes())
}

/// The configuration file's own hash: `--config` may name a file outside the repository, which
/// prpd's frozen inputs do not cover.
fn config_file(source: Option<&Path>) -> String {
    match source {
        Some(path) => match std::fs::read(path) {
            Ok(bytes) => format!("config {}: {}\n", path.display(), hash(&bytes)),
            Err(error) => format!("config {}: unreadable ({error})\n", path.display()),
        },
        None => "config: built-in\n".to_owned(),
    }
}

/// The hash of `bytes`.
fn hash(bytes: &[u8]) -> String {
    files::content_hash(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_settings_change_with_the_config_and_prpds_frozen_inputs() {
        let config = Config::default();
        let base = settings(&config, "prpd.toml: a\n");
        assert_eq!(base, settings(&config, "prpd.toml: a\n"), "stable");
        assert_ne!(
            base,
            settings(&config, "prpd.toml: b\n"),
            "a reloaded prpd.toml is another measurement"
        );
        let mut junit = Config::default();
        junit.qa.junit = Some("junit.xml".to_owned());
        assert_ne!(base, settings(&junit, "prpd.toml: a\n"), "[qa] junit");
        let mut timeout = Config::default();
        timeout.qa.check_timeout = std::time::Duration::from_secs(1);
        assert_ne!(
            base,
            settings(&timeout, "prpd.toml: a\n"),
            "[qa] check_timeout"
        );
    }

    #[test]
    fn an_external_config_file_is_part_of_the_settings() {
        let directory = tempfile::tempdir().expect("temporary directory");
        let path = directory.path().join("other.toml");
        std::fs::write(&path, "[qa]\njobs = 2\n").expect("test fixture");
        let config = Config {
            source: Some(path.clone()),
            ..Config::default()
        };
        let before = settings(&config, "");
        std::fs::write(&path, "[qa]\njobs = 3\n").expect("test fixture");
        assert_ne!(before, settings(&config, ""));
    }
}
