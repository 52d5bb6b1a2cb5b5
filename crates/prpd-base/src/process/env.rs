//! Which of prpd's environment variables a child sees. The policy lives apart from the code
//! that starts processes because it is a rule about secrets, not about processes: the project's
//! own commands get the environment without anything that looks like a token, and agents get
//! only what their configuration allows.

use tokio::process::Command;

/// Which of prpd's environment variables the child sees.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EnvPolicy {
    /// All of them except those whose names mark them as secrets ([`is_secret_name`]): the
    /// project's own commands (tests, linters) need the environment, but a test that prints it
    /// must not carry a token into a report, a prompt or a pull request.
    WithoutSecrets,
    /// Only these names, plus `PATH` and `HOME`, which every tool expects.
    AllowList(Vec<String>),
    /// A measurement (a test run, a QA check): [`EnvPolicy::WithoutSecrets`] in an environment
    /// the agent cannot have shaped. `HOME` is a fresh directory, so nothing an agent left in
    /// the user's home (a `.pth` file in the user site-packages, an `.npmrc`, a git config)
    /// reaches the tests; Python ignores the user site-packages, writes no bytecode and reads
    /// none from the tree's `__pycache__` (its cache goes under `home`); `CI=true`, so runners
    /// behave as in CI (Jest and Vitest fail on a missing snapshot instead of writing one);
    /// `npm_config_yes=false`, so an `npx` anywhere in the command (a project's script included)
    /// never downloads a tool that is not installed, but fails at once as a missing tool (with
    /// `CI=true` alone, npx would fetch it without asking), and `npm_config_update_notifier=false`,
    /// so npm does not ask the registry for a newer npm on every run from the fresh home. The
    /// toolchains, package caches and git identity that live in the real home keep their real
    /// place, so a healthy project builds as it does for its developers.
    Measurement {
        /// The fresh home directory.
        home: std::path::PathBuf,
    },
}

/// The variable that marks a process as started by one of prpd's measurements, with
/// [`measurement_mark`] as its value: a process a test run leaves behind inherits it, so the
/// warning that stops it blames the measurement, not the agent (`descendants.rs`).
pub(super) const MEASUREMENT_MARK: &str = "PRPD_MEASUREMENT";

/// The value of [`MEASUREMENT_MARK`] in this prpd's measurements: its pid and start time, which
/// no agent sees (no agent runs while a measurement does).
pub(super) fn measurement_mark() -> &'static str {
    static MARK: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    MARK.get_or_init(|| {
        let started = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
            .as_nanos();
        format!("{}-{started}", std::process::id())
    })
}

/// Tool homes that default to a place under `HOME`: `(variable, default relative to HOME)`.
/// A measurement sets each one that is unset to its real place, since its `HOME` is fresh.
const TOOL_HOMES: &[(&str, &str)] = &[
    ("CARGO_HOME", ".cargo"),
    ("RUSTUP_HOME", ".rustup"),
    ("GOPATH", "go"),
    ("GOMODCACHE", "go/pkg/mod"),
    ("GOCACHE", ".cache/go-build"),
    ("npm_config_cache", ".npm"),
    ("PIP_CACHE_DIR", ".cache/pip"),
    ("UV_CACHE_DIR", ".cache/uv"),
    ("NVM_DIR", ".nvm"),
    ("PYENV_ROOT", ".pyenv"),
    ("DENO_DIR", ".cache/deno"),
    ("BUN_INSTALL", ".bun"),
    ("GRADLE_USER_HOME", ".gradle"),
    ("XDG_CACHE_HOME", ".cache"),
    ("GIT_CONFIG_GLOBAL", ".gitconfig"),
];

impl EnvPolicy {
    /// Removes from `command`'s environment what this policy hides from the child.
    pub(super) fn apply_to(&self, command: &mut Command) {
        match self {
            EnvPolicy::WithoutSecrets => {
                for (name, _) in std::env::vars_os() {
                    if is_secret_name(&name.to_string_lossy()) {
                        command.env_remove(name);
                    }
                }
            }
            EnvPolicy::Measurement { home } => {
                EnvPolicy::WithoutSecrets.apply_to(command);
                if let Some(real_home) = std::env::var_os("HOME") {
                    let real_home = std::path::PathBuf::from(real_home);
                    for (name, default) in TOOL_HOMES {
                        let place = real_home.join(default);
                        if std::env::var_os(name).is_none() && place.exists() {
                            command.env(name, place);
                        }
                    }
                }
                if std::env::var_os("MAVEN_OPTS").is_none()
                    && let Some(real_home) = std::env::var_os("HOME")
                {
                    let repository = std::path::Path::new(&real_home).join(".m2/repository");
                    if repository.exists() {
                        command.env(
                            "MAVEN_OPTS",
                            format!("-Dmaven.repo.local={}", repository.display()),
                        );
                    }
                }
                command
                    .env("HOME", home)
                    .env(MEASUREMENT_MARK, measurement_mark())
                    .env("CI", "true")
                    .env("npm_config_yes", "false")
                    .env("npm_config_update_notifier", "false")
                    .env("PYTHONNOUSERSITE", "1")
                    .env("PYTHONDONTWRITEBYTECODE", "1")
                    .env("PYTHONPYCACHEPREFIX", home.join(".pycache"));
            }
            EnvPolicy::AllowList(names) => {
                command.env_clear();
                let patterns: Vec<&str> = names.iter().map(String::as_str).collect();
                for (name, value) in std::env::vars_os() {
                    let shown = name.to_string_lossy();
                    if ["PATH", "HOME"].contains(&shown.as_ref())
                        || patterns.iter().any(|pattern| name_matches(pattern, &shown))
                    {
                        command.env(name, value);
                    }
                }
            }
        }
    }
}

/// Whether the variable `name` is allowed by `pattern`: the name itself, or a glob where `*`
/// matches any run of characters (`ANTHROPIC_*`, `*_CA_*`). Case counts, as it does for the
/// programs that read them.
fn name_matches(pattern: &str, name: &str) -> bool {
    let mut parts = pattern.split('*');
    let first = parts.next().unwrap_or_default();
    let Some(mut rest) = name.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else {
        return rest.is_empty();
    };
    for part in middle {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

/// The value of prpd's variable `name` when `patterns` pass it to an agent (and it is set).
pub fn passed_value(patterns: &[String], name: &str) -> Option<String> {
    patterns
        .iter()
        .any(|pattern| name_matches(pattern, name))
        .then(|| std::env::var(name).ok())
        .flatten()
}

/// The values of prpd's variables that `patterns` pass to an agent and whose names mark them as
/// secrets (see [`is_secret_name`]), longest first, so that what the agent prints can be
/// redacted before prpd keeps it. Values shorter than 8 characters are left out: they are not
/// tokens, and replacing them would mangle ordinary text.
pub fn passed_secret_values(patterns: &[String]) -> Vec<String> {
    let mut values: Vec<String> = std::env::vars_os()
        .filter_map(|(name, value)| {
            let name = name.to_string_lossy();
            let passed = patterns.iter().any(|pattern| name_matches(pattern, &name));
            let value = value.to_string_lossy().into_owned();
            (passed && is_secret_name(&name) && value.len() >= 8).then_some(value)
        })
        .collect();
    values.sort_by_key(|value| std::cmp::Reverse(value.len()));
    values.dedup();
    values
}

/// prpd's variables that a measurement inherits ([`EnvPolicy::Measurement`]: all but the
/// secret-named ones), sorted by name. A test run's result depends on them besides the tree and the
/// command, so a cached result is reused only where they are the same (`prpd-run/src/cache.rs`).
pub fn inherited_by_measurements() -> Vec<(String, String)> {
    let mut variables: Vec<(String, String)> = std::env::vars_os()
        .map(|(name, value)| {
            (
                name.to_string_lossy().into_owned(),
                value.to_string_lossy().into_owned(),
            )
        })
        .filter(|(name, _)| !is_secret_name(name))
        .collect();
    variables.sort();
    variables
}

/// Words that mark an environment variable as a secret (matched in its upper-cased name).
const SECRET_WORDS: &[&str] = &[
    "TOKEN",
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "API_KEY",
    "APIKEY",
    "PRIVATE_KEY",
    "ACCESS_KEY",
    "CREDENTIAL",
];

/// Whether an environment variable's name marks it as a secret: `GITHUB_TOKEN`,
/// `ANTHROPIC_API_KEY`, `AWS_SECRET_ACCESS_KEY`, `DB_PASSWORD`, anything ending in `_KEY`.
pub fn is_secret_name(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    upper.ends_with("_KEY") || SECRET_WORDS.iter().any(|word| upper.contains(word))
}

#[cfg(test)]
mod secret_tests {
    use super::{is_secret_name, name_matches};

    #[test]
    fn names_match_patterns_with_stars() {
        let cases = [
            ("ANTHROPIC_*", "ANTHROPIC_BASE_URL", true),
            ("ANTHROPIC_*", "ANTHROPIC_", true),
            ("ANTHROPIC_*", "MY_ANTHROPIC_KEY", false),
            ("*_CA_*", "REQUESTS_CA_BUNDLE", true),
            ("*_CA_*", "CURL_CA_BUNDLE", true),
            ("*_CA_*", "CA_BUNDLE", false),
            ("SSL_CERT_*", "SSL_CERT_FILE", true),
            ("HTTPS_PROXY", "HTTPS_PROXY", true),
            ("HTTPS_PROXY", "https_proxy", false),
            ("HTTPS_PROXY", "HTTPS_PROXY_X", false),
            ("A*B*A", "ABA", true),
            ("AB*BA", "ABA", false),
            ("A*B*A", "AXBYA", true),
            ("*", "ANYTHING", true),
        ];
        for (pattern, name, expected) in cases {
            assert_eq!(name_matches(pattern, name), expected, "{pattern} {name}");
        }
    }

    #[test]
    fn secret_names_are_recognised() {
        for name in [
            "GITHUB_TOKEN",
            "ANTHROPIC_API_KEY",
            "openai_api_key",
            "AWS_SECRET_ACCESS_KEY",
            "DB_PASSWORD",
            "NPM_TOKEN",
            "SIGNING_KEY",
            "GOOGLE_APPLICATION_CREDENTIALS",
        ] {
            assert!(is_secret_name(name), "{name}");
        }
        for name in [
            "PATH",
            "HOME",
            "CI",
            "NODE_ENV",
            "KEYBOARD",
            "PRPD_PHASE",
            "TOKENIZERS_X",
        ] {
            assert_eq!(is_secret_name(name), name.contains("TOKEN"), "{name}");
        }
    }
}
