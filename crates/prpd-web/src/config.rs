//! `[plan]` of `prpd.toml`: how `prpd plan` explores the running web app and what it plans for
//! (seed `001_…`'s `PlanConfig`, with prpd's names for the guardrails), and optionally how to
//! start the app first (`serve`, then wait for the base URL's port). Parsed from raw tables
//! (unknown keys refused) into validated values; every refusal names the file and the line.

use std::num::NonZeroUsize;
use std::path::Path;
use std::time::Duration;

use serde::Deserialize;

use prpd_base::config_file::{self, ConfigError, ConfigFile};

/// The test types the seed names; `test_types` may list only these.
pub const TEST_TYPES: [&str; 6] = [
    "functional",
    "form",
    "navigation",
    "responsive",
    "boundary",
    "security",
];

/// The most tabs a walk may load pages in at once (each is a renderer of its own).
pub const MAX_TABS: u32 = 16;

/// `[plan]`, validated, with every default filled in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanSection {
    /// Where exploring starts; `prpd plan -u` overrides it.
    pub base_url: Option<String>,
    pub max_depth: u32,
    pub max_pages: u32,
    /// How many tabs of the browser load pages at once during the walk.
    pub tabs: NonZeroUsize,
    /// Regular expressions; an address must match one (when any are given).
    pub include_patterns: Vec<String>,
    /// Regular expressions; an address matching one is not visited.
    pub exclude_patterns: Vec<String>,
    /// Of [`TEST_TYPES`]; empty means every type.
    pub test_types: Vec<String>,
    pub max_agent_turns: Option<u32>,
    pub max_snapshots: Option<u32>,
    pub max_tokens: Option<u64>,
    pub auth: Option<PlanAuthSection>,
    /// A shell command that starts the app; prpd waits for the base URL's port to accept.
    pub serve: Option<String>,
    /// How long the port may take to open.
    pub serve_timeout: Duration,
}

/// `[plan.auth]`: the names of the variables that hold the credentials, never the values.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PlanAuthSection {
    pub login_url: Option<String>,
    pub username_var: Option<String>,
    pub password_var: Option<String>,
}

impl Default for PlanSection {
    fn default() -> Self {
        PlanSection {
            base_url: None,
            max_depth: 2,
            max_pages: 20,
            tabs: NonZeroUsize::new(4).unwrap_or(NonZeroUsize::MIN),
            include_patterns: Vec::new(),
            exclude_patterns: Vec::new(),
            test_types: Vec::new(),
            max_agent_turns: None,
            max_snapshots: None,
            max_tokens: None,
            auth: None,
            serve: None,
            serve_timeout: Duration::from_secs(60),
        }
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPlan {
    base_url: Option<String>,
    max_depth: Option<u32>,
    max_pages: Option<u32>,
    tabs: Option<u32>,
    include_patterns: Option<Vec<String>>,
    exclude_patterns: Option<Vec<String>>,
    test_types: Option<Vec<String>>,
    max_agent_turns: Option<u32>,
    max_snapshots: Option<u32>,
    max_tokens: Option<u64>,
    auth: Option<RawAuth>,
    serve: Option<String>,
    serve_timeout: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawAuth {
    login_url: Option<String>,
    username_var: Option<String>,
    password_var: Option<String>,
}

/// Validates `[plan]` of the file at `path` (whose text is `text`).
fn plan(path: &Path, text: &str, raw: RawPlan) -> Result<PlanSection, ConfigError> {
    let defaults = PlanSection::default();
    let refuse =
        |key: &str, message: String| ConfigError::at_key(path, text, "[plan]", key, message);
    let max_pages = raw.max_pages.unwrap_or(defaults.max_pages);
    if max_pages == 0 {
        return Err(refuse(
            "max_pages",
            "`plan.max_pages` must be at least 1".to_owned(),
        ));
    }
    let tabs = match raw.tabs {
        None => defaults.tabs,
        Some(tabs) => usize::try_from(tabs)
            .ok()
            .filter(|_| tabs <= MAX_TABS)
            .and_then(NonZeroUsize::new)
            .ok_or_else(|| {
                refuse(
                    "tabs",
                    format!("`plan.tabs` = {tabs}; expected a number of tabs from 1 to {MAX_TABS}"),
                )
            })?,
    };
    if let Some(url) = &raw.base_url
        && !(url.starts_with("http://") || url.starts_with("https://"))
    {
        return Err(refuse(
            "base_url",
            format!(
                "`plan.base_url` = {url:?} is not an http(s) address; expected e.g. \"http://127.0.0.1:3000\""
            ),
        ));
    }
    let test_types = raw.test_types.unwrap_or_default();
    if let Some(unknown) = test_types
        .iter()
        .find(|name| !TEST_TYPES.contains(&name.as_str()))
    {
        return Err(refuse(
            "test_types",
            format!(
                "`plan.test_types` has {unknown:?}; expected some of {}",
                TEST_TYPES.join(", ")
            ),
        ));
    }
    for (key, patterns) in [
        ("include_patterns", &raw.include_patterns),
        ("exclude_patterns", &raw.exclude_patterns),
    ] {
        for pattern in patterns.iter().flatten() {
            if let Err(error) = regex::Regex::new(pattern) {
                return Err(refuse(
                    key,
                    format!(
                        "`plan.{key}` has {pattern:?}, which is not a regular expression: {error}"
                    ),
                ));
            }
        }
    }
    for (key, value) in [
        ("max_agent_turns", raw.max_agent_turns.map(u64::from)),
        ("max_snapshots", raw.max_snapshots.map(u64::from)),
        ("max_tokens", raw.max_tokens),
    ] {
        if value == Some(0) {
            return Err(refuse(
                key,
                format!("`plan.{key}` must be at least 1 (leave it out for no limit)"),
            ));
        }
    }
    let auth = auth(path, text, raw.auth)?;
    Ok(PlanSection {
        base_url: raw.base_url,
        max_depth: raw.max_depth.unwrap_or(defaults.max_depth),
        max_pages,
        tabs,
        include_patterns: raw.include_patterns.unwrap_or_default(),
        exclude_patterns: raw.exclude_patterns.unwrap_or_default(),
        test_types,
        max_agent_turns: raw.max_agent_turns,
        max_snapshots: raw.max_snapshots,
        max_tokens: raw.max_tokens,
        auth,
        serve: raw.serve.filter(|command| !command.trim().is_empty()),
        serve_timeout: config_file::duration(path, text, "serve_timeout", raw.serve_timeout)?
            .unwrap_or(defaults.serve_timeout),
    })
}

/// `[plan.auth]`, whose variables must be names, not values.
fn auth(
    path: &Path,
    text: &str,
    raw: Option<RawAuth>,
) -> Result<Option<PlanAuthSection>, ConfigError> {
    let auth = raw.map(|auth| PlanAuthSection {
        login_url: auth.login_url,
        username_var: auth.username_var,
        password_var: auth.password_var,
    });
    if let Some(name) = auth
        .iter()
        .flat_map(|auth| [&auth.username_var, &auth.password_var])
        .flatten()
        .find(|name| {
            name.is_empty()
                || !name
                    .chars()
                    .all(|character| character.is_ascii_alphanumeric() || character == '_')
        })
    {
        return Err(ConfigError::at_key(
            path,
            text,
            "[plan.auth]",
            if auth.as_ref().and_then(|auth| auth.username_var.as_ref()) == Some(name) {
                "username_var"
            } else {
                "password_var"
            },
            format!(
                "{name:?} is not a variable name; `[plan.auth]` takes the *names* of the variables that hold the credentials (e.g. \"APP_PASSWORD\"), never the values"
            ),
        ));
    }
    Ok(auth)
}

/// The tables of `prpd.toml` this crate reads; the others are their crates' to read.
#[derive(Debug, Default, Deserialize)]
struct Tables {
    plan: Option<RawPlan>,
}

impl PlanSection {
    /// `[plan]` of `file`, validated; `None` when the project has no web app to explore.
    pub fn from_file(file: &ConfigFile) -> Result<Option<PlanSection>, ConfigError> {
        let tables: Tables = file.tables()?;
        tables
            .plan
            .map(|raw| plan(file.path(), file.text(), raw))
            .transpose()
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

    fn parse(text: &str) -> Result<Option<PlanSection>, String> {
        ConfigFile::from_text("prpd.toml".into(), text.to_owned())
            .and_then(|file| PlanSection::from_file(&file))
            .map_err(|error| error.to_string())
    }

    #[test]
    fn the_section_is_optional_and_its_keys_validated() {
        assert_eq!(parse("").expect("empty"), None);
        let config = parse(
            "[plan]\nbase_url = \"http://127.0.0.1:3000\"\nmax_depth = 3\nexclude_patterns = [\"/logout\"]\n\
             test_types = [\"form\"]\nmax_snapshots = 30\nserve = \"npm start\"\n\
             [plan.auth]\nusername_var = \"APP_USER\"\npassword_var = \"APP_PASSWORD\"\n",
        )
        .expect("valid");
        let plan = config.expect("[plan]");
        assert_eq!(
            (
                plan.max_depth,
                plan.max_pages,
                plan.tabs.get(),
                plan.max_snapshots
            ),
            (3, 20, 4, Some(30))
        );
        assert_eq!(plan.serve.as_deref(), Some("npm start"));
        assert_eq!(
            plan.auth.and_then(|auth| auth.password_var).as_deref(),
            Some("APP_PASSWORD")
        );
    }

    #[test]
    fn the_examples_commented_section_parses_once_uncommented() {
        let start = config_file::EXAMPLE
            .find("# [plan]")
            .expect("the example documents [plan]");
        let section = config_file::EXAMPLE[start..]
            .lines()
            .filter_map(|line| line.strip_prefix("# "))
            .filter(|line| line.starts_with('[') || line.contains(" = "))
            .fold(String::new(), |text, line| text + line + "\n");
        let plan = parse(&section).expect("parses").expect("[plan]");
        assert_eq!(plan.max_snapshots, Some(40));
        assert_eq!(plan.exclude_patterns, ["/logout", "/admin"]);
        assert_eq!(
            plan.auth.and_then(|auth| auth.username_var).as_deref(),
            Some("APP_USER")
        );
    }

    #[test]
    fn a_wrong_value_is_refused_on_its_line() {
        for (text, line, words) in [
            ("[plan]\nmax_pages = 0\n", 2, "at least 1"),
            ("[plan]\ntabs = 0\n", 2, "from 1 to 16"),
            ("[plan]\n\ntabs = 17\n", 3, "`plan.tabs` = 17"),
            ("[plan]\n\ntest_types = [\"smoke\"]\n", 3, "\"smoke\""),
            ("[plan]\nbase_url = \"localhost:3000\"\n", 2, "http(s)"),
            (
                "[plan]\nexclude_patterns = [\"(\"]\n",
                2,
                "regular expression",
            ),
            (
                "[plan]\n[plan.auth]\npassword_var = \"hunter2!\"\n",
                3,
                "names",
            ),
            ("[plan]\nmax_tokens = 0\n", 2, "at least 1"),
            ("[plan]\nserve_timeout = \"soon\"\n", 2, "not a duration"),
        ] {
            let error = parse(text).expect_err(text);
            assert!(
                error.contains(&format!("prpd.toml:{line}:")),
                "{text}: {error}"
            );
            assert!(error.contains(words), "{text}: {error}");
        }
        assert!(parse("[plan]\nmax_page = 3\n").is_err(), "unknown key");
    }
}
