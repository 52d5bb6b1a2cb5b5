//! `prpd.toml` as a command checks it before it starts. Each crate reads only the tables it owns
//! and ignores the others; the binary is the one place that knows every crate, so it asks each
//! to check the keys of its tables first: a typo anywhere in the file stops any command and names
//! its line, as one configuration file should. The daemon needs no such check: it reads every
//! table itself, once, at start and on each reload.

use std::path::Path;

use prpd_base::config_file::{ConfigError, ConfigFile};

/// The repository's `prpd.toml` (or `explicit`), once every table was found to hold only keys
/// prpd knows, with values of the right types; `None` when there is no file. A command that
/// reads its tables itself takes them from this reading.
pub fn read(repo: &Path, explicit: Option<&Path>) -> Result<Option<ConfigFile>, ConfigError> {
    let Some(file) = ConfigFile::find(repo, explicit)? else {
        return Ok(None);
    };
    prpd_qa::config::check_keys(&file)?;
    prpd_run::config::check_keys(&file)?;
    prpd_ship::config::check_keys(&file)?;
    prpd_memory::config::check_keys(&file)?;
    prpd_web::config::check_keys(&file)?;
    prpd_watch::config::check_keys(&file)?;
    Ok(Some(file))
}
