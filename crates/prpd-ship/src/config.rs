//! `[ship]` of `prpd.toml`: where and how an approved run ships — the remote it pushes to, the
//! branch pattern, the PR's base, the environment variable that holds the token, the GitHub API
//! and the pull request's settings. Parsed from a raw table (unknown keys refused) into one
//! validated [`ShipConfig`]; every refusal names the file, the line and what was expected.
//!
//! The token itself never appears here: `token_env` names the variable that holds it, and a
//! value that looks like a token rather than a name is refused without being echoed.

use std::path::Path;
use std::time::Duration;

use serde::Deserialize;

use prpd_base::config_file::{self, ConfigError, ConfigFile};
use prpd_base::process::is_secret_name;

/// The placeholder of `branch` that the PRP's slug replaces.
pub const SLUG_PLACEHOLDER: &str = "{slug}";

/// `[ship]`, validated, with every default filled in.
#[derive(Debug, Clone, PartialEq, Eq)]
#[expect(
    clippy::struct_excessive_bools,
    reason = "each is a yes/no key of prpd.toml's [ship], independent of the others"
)]
pub struct ShipConfig {
    /// A remote's name, a URL or a local path: pushes go there.
    pub remote: String,
    /// The branch pattern, holding [`SLUG_PLACEHOLDER`] once.
    pub branch: String,
    /// The PR's base branch; `None`: the branch checked out when the run started.
    pub base: Option<String>,
    /// The environment variable that holds the token.
    pub token_env: String,
    /// The GitHub API's base URL, without a trailing `/`.
    pub api_url: String,
    /// `(owner, name)`; `None`: read from the remote's URL.
    pub repository: Option<(String, String)>,
    pub labels: Vec<String>,
    pub draft: bool,
    /// Comment on an open PR that a later run updates.
    pub comment_on_update: bool,
    /// Wait for the PR's remote checks after it is opened.
    pub wait_for_checks: bool,
    /// How long to wait for them.
    pub checks_timeout: Duration,
    /// Open an issue with the escalation report when a run escalates.
    pub issue_on_escalation: bool,
}

impl Default for ShipConfig {
    fn default() -> Self {
        ShipConfig {
            remote: "origin".to_owned(),
            branch: format!("prp/{SLUG_PLACEHOLDER}"),
            base: None,
            token_env: "GITHUB_TOKEN".to_owned(),
            api_url: "https://api.github.com".to_owned(),
            repository: None,
            labels: vec!["prpd".to_owned()],
            draft: false,
            comment_on_update: true,
            wait_for_checks: false,
            checks_timeout: Duration::from_secs(30 * 60),
            issue_on_escalation: false,
        }
    }
}

impl ShipConfig {
    /// The branch a PRP with `slug` ships on.
    pub fn branch_for(&self, slug: &str) -> String {
        self.branch.replace(SLUG_PLACEHOLDER, slug)
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawShip {
    remote: Option<String>,
    branch: Option<String>,
    base: Option<String>,
    token_env: Option<String>,
    api_url: Option<String>,
    repository: Option<String>,
    labels: Option<Vec<String>>,
    draft: Option<bool>,
    comment_on_update: Option<bool>,
    wait_for_checks: Option<bool>,
    checks_timeout: Option<String>,
    issue_on_escalation: Option<bool>,
}

/// Validates `[ship]` of the file at `path` (whose text is `text`).
fn ship(path: &Path, text: &str, raw: RawShip) -> Result<ShipConfig, ConfigError> {
    let defaults = ShipConfig::default();
    let refuse =
        |key: &str, message: String| ConfigError::at_key(path, text, "[ship]", key, message);
    let remote = match raw.remote {
        Some(remote) if remote.trim().is_empty() => {
            return Err(refuse(
                "remote",
                "`ship.remote` is empty; expected a remote's name (\"origin\"), a URL or a local path".to_owned(),
            ));
        }
        Some(remote) => remote.trim().to_owned(),
        None => defaults.remote,
    };
    let branch = match raw.branch {
        Some(pattern) => branch_pattern(&pattern).map_err(|why| refuse("branch", why))?,
        None => defaults.branch,
    };
    let base = match raw.base.as_deref().map(str::trim) {
        None | Some("") => None,
        Some(base) if !git2::Branch::name_is_valid(base).unwrap_or(false) => {
            return Err(refuse(
                "base",
                format!(
                    "`ship.base` = {base:?} is not a valid branch name; expected e.g. \"main\", or \"\" for the branch checked out when the run starts"
                ),
            ));
        }
        Some(base) => Some(base.to_owned()),
    };
    let token_env = match raw.token_env {
        Some(name) => token_env(&name).map_err(|why| refuse("token_env", why))?,
        None => defaults.token_env,
    };
    let api_url = match raw.api_url {
        Some(url) => api_url(&url).map_err(|why| refuse("api_url", why))?,
        None => defaults.api_url,
    };
    let repository = match raw.repository.as_deref().map(str::trim) {
        None | Some("") => None,
        Some(value) => Some(repository(value).map_err(|why| refuse("repository", why))?),
    };
    let labels = match raw.labels {
        Some(labels) => {
            if labels.iter().any(|label| label.trim().is_empty()) {
                return Err(refuse(
                    "labels",
                    "`ship.labels` holds an empty label; expected names such as [\"prpd\"]"
                        .to_owned(),
                ));
            }
            labels
        }
        None => defaults.labels,
    };
    Ok(ShipConfig {
        remote,
        branch,
        base,
        token_env,
        api_url,
        repository,
        labels,
        draft: raw.draft.unwrap_or(defaults.draft),
        comment_on_update: raw.comment_on_update.unwrap_or(defaults.comment_on_update),
        wait_for_checks: raw.wait_for_checks.unwrap_or(defaults.wait_for_checks),
        checks_timeout: config_file::duration(path, text, "checks_timeout", raw.checks_timeout)?
            .unwrap_or(defaults.checks_timeout),
        issue_on_escalation: raw
            .issue_on_escalation
            .unwrap_or(defaults.issue_on_escalation),
    })
}

/// `branch`: one `{slug}`, no other placeholder, and a valid branch name once filled.
fn branch_pattern(pattern: &str) -> Result<String, String> {
    let pattern = pattern.trim();
    if pattern.matches(SLUG_PLACEHOLDER).count() != 1 {
        return Err(format!(
            "`ship.branch` = {pattern:?} must hold `{SLUG_PLACEHOLDER}` once (each PRP ships on a branch of its own), e.g. \"prp/{SLUG_PLACEHOLDER}\""
        ));
    }
    let filled = pattern.replace(SLUG_PLACEHOLDER, "x");
    if filled.contains(['{', '}']) {
        return Err(format!(
            "`ship.branch` = {pattern:?} holds a placeholder prpd does not know; only `{SLUG_PLACEHOLDER}` is replaced"
        ));
    }
    if !git2::Branch::name_is_valid(&filled).unwrap_or(false) {
        return Err(format!(
            "`ship.branch` = {pattern:?} does not make a valid branch name (no spaces, `..`, `~`, `^`, `:` or a trailing `/`), e.g. \"prp/{SLUG_PLACEHOLDER}\""
        ));
    }
    Ok(pattern.to_owned())
}

/// `token_env`: the name of an environment variable that prpd withholds from the commands it
/// runs (a secret-looking name), never the token itself.
fn token_env(name: &str) -> Result<String, String> {
    let name = name.trim();
    let is_name = !name.is_empty()
        && !name.starts_with(|first: char| first.is_ascii_digit())
        && name
            .chars()
            .all(|character| character.is_ascii_alphanumeric() || character == '_');
    if !is_name || looks_like_a_token(name) {
        // The value is not repeated: it may be the token itself.
        return Err(
            "`ship.token_env` must name the environment variable that holds the token (e.g. \"GITHUB_TOKEN\"), not hold the token; letters, digits and `_` only"
                .to_owned(),
        );
    }
    if !is_secret_name(name) {
        return Err(format!(
            "`ship.token_env` = {name:?}: prpd keeps a token out of the commands it runs (tests, checks) by its variable's name, and {name:?} does not read as a secret; use a name with TOKEN, SECRET or _KEY in it, e.g. \"GITHUB_TOKEN\""
        ));
    }
    Ok(name.to_owned())
}

/// Whether `name` reads as a GitHub token rather than a variable's name.
fn looks_like_a_token(name: &str) -> bool {
    ["ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"]
        .iter()
        .any(|prefix| name.starts_with(prefix))
}

/// `api_url`: an http(s) URL, kept without its trailing `/`.
fn api_url(url: &str) -> Result<String, String> {
    let url = url.trim().trim_end_matches('/');
    let rest = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"));
    match rest {
        Some(host)
            if !host.is_empty() && !host.contains(char::is_whitespace) && !host.contains('@') =>
        {
            Ok(url.to_owned())
        }
        _ => Err(format!(
            "`ship.api_url` = {url:?} is not an http(s) URL without credentials; expected \"https://api.github.com\", or \"https://HOST/api/v3\" for GitHub Enterprise"
        )),
    }
}

/// `repository`: `owner/name`.
fn repository(value: &str) -> Result<(String, String), String> {
    let valid = |part: &str| {
        !part.is_empty()
            && part
                .chars()
                .all(|character| character.is_ascii_alphanumeric() || "-_.".contains(character))
    };
    match value.split_once('/') {
        Some((owner, name)) if valid(owner) && valid(name) => {
            Ok((owner.to_owned(), name.trim_end_matches(".git").to_owned()))
        }
        _ => Err(format!(
            "`ship.repository` = {value:?} is not \"owner/name\"; leave it \"\" to read it from the remote's URL"
        )),
    }
}

/// The tables of `prpd.toml` this crate reads; the others are their crates' to read.
#[derive(Debug, Default, Deserialize)]
struct Tables {
    ship: Option<RawShip>,
}

impl ShipConfig {
    /// `[ship]` of `file`, validated, with every default filled in.
    pub fn from_file(file: &ConfigFile) -> Result<ShipConfig, ConfigError> {
        let tables: Tables = file.tables()?;
        ship(file.path(), file.text(), tables.ship.unwrap_or_default())
    }
}

/// Whether every key of this crate's tables in `file` is one it knows, with a value of the right
/// type (nothing more is judged): the binary asks every crate before any command starts, so a
/// typo in any table stops every command, naming its line.
pub fn check_keys(file: &ConfigFile) -> Result<(), ConfigError> {
    file.tables::<Tables>().map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Deserialize)]
    struct File {
        ship: RawShip,
    }

    /// `[ship]` with `table` as its body, which starts on line 5.
    fn parse(table: &str) -> Result<ShipConfig, String> {
        let text = format!("# prpd.toml\n# the ship table\n\n[ship]\n{table}");
        let path = Path::new("prpd.toml");
        let file: File = config_file::parse_toml(path, &text).map_err(|error| error.to_string())?;
        ship(path, &text, file.ship).map_err(|error| error.to_string())
    }

    #[test]
    fn an_empty_table_gives_the_defaults() {
        assert_eq!(parse(""), Ok(ShipConfig::default()));
        assert_eq!(
            ShipConfig::default().branch_for("word-statistics"),
            "prp/word-statistics"
        );
    }

    #[test]
    fn every_key_is_read() {
        let config = parse(
            "remote = \"../remote.git\"\nbranch = \"feature/{slug}\"\nbase = \"develop\"\n\
             token_env = \"GHE_TOKEN\"\napi_url = \"https://ghe.example.com/api/v3/\"\n\
             repository = \"acme/widgets\"\nlabels = [\"prpd\", \"bot\"]\ndraft = true\n\
             comment_on_update = false\nwait_for_checks = true\nchecks_timeout = \"10m\"\n\
             issue_on_escalation = true\n",
        )
        .expect("valid");
        assert_eq!(
            config,
            ShipConfig {
                remote: "../remote.git".to_owned(),
                branch: "feature/{slug}".to_owned(),
                base: Some("develop".to_owned()),
                token_env: "GHE_TOKEN".to_owned(),
                api_url: "https://ghe.example.com/api/v3".to_owned(),
                repository: Some(("acme".to_owned(), "widgets".to_owned())),
                labels: vec!["prpd".to_owned(), "bot".to_owned()],
                draft: true,
                comment_on_update: false,
                wait_for_checks: true,
                checks_timeout: Duration::from_secs(600),
                issue_on_escalation: true,
            }
        );
    }

    #[test]
    fn bad_values_are_refused_at_their_line_with_what_was_expected() {
        for (table, line, expected) in [
            ("remote = \" \"\n", 5, "`ship.remote` is empty"),
            ("branch = \"prp/x\"\n", 5, "must hold `{slug}` once"),
            (
                "branch = \"prp/{slug}/{id}\"\n",
                5,
                "placeholder prpd does not know",
            ),
            ("branch = \"prp/{slug} now\"\n", 5, "valid branch name"),
            ("\nbase = \"a..b\"\n", 6, "not a valid branch name"),
            (
                "token_env = \"MY VAR\"\n",
                5,
                "must name the environment variable",
            ),
            ("token_env = \"GH_HOST\"\n", 5, "does not read as a secret"),
            ("api_url = \"api.github.com\"\n", 5, "not an http(s) URL"),
            (
                "api_url = \"https://x:y@ghe.example.com\"\n",
                5,
                "without credentials",
            ),
            ("repository = \"acme\"\n", 5, "is not \"owner/name\""),
            ("labels = [\"\"]\n", 5, "empty label"),
            ("checks_timeout = \"later\"\n", 5, "not a duration"),
        ] {
            let error = parse(table).expect_err(table);
            assert!(
                error.starts_with(&format!("prpd.toml:{line}:")),
                "{table}: {error}"
            );
            assert!(error.contains(expected), "{table}: {error}");
        }
    }

    #[test]
    fn a_token_written_where_its_variable_belongs_is_refused_and_not_repeated() {
        let token = "ghp_0123456789abcdefghijklmnopqrstuvwxyz";
        let error = parse(&format!("token_env = \"{token}\"\n")).expect_err("a token");
        assert!(error.contains("not hold the token"), "{error}");
        assert!(!error.contains(token), "{error}");
    }
}
