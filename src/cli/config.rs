//! `prpd.toml` as a command checks it before it starts. Each crate reads only the tables it owns
//! and ignores the others; the binary is the one place that knows every crate, so it asks each
//! to check the keys of its tables first: a typo anywhere in the file stops any command and names
//! its line, as one configuration file should. The daemon needs no such check: it reads every
//! table itself, once, at start and on each reload.

use std::path::Path;

use prpd_base::config_file::{ConfigError, ConfigFile};

/// Every table of the repository's `prpd.toml` (or of `explicit`) holds only keys prpd knows,
/// with values of the right types; no file is fine.
pub fn check(repo: &Path, explicit: Option<&Path>) -> Result<(), ConfigError> {
    let Some(file) = ConfigFile::find(repo, explicit)? else {
        return Ok(());
    };
    prpd_qa::config::check_keys(&file)?;
    prpd_run::config::check_keys(&file)?;
    prpd_ship::config::check_keys(&file)?;
    prpd_memory::config::check_keys(&file)?;
    prpd_web::config::check_keys(&file)?;
    prpd_watch::config::check_keys(&file)
}
