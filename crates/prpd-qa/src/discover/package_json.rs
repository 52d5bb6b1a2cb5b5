//! `package.json` scripts and the JavaScript package manager that runs them.
//!
//! The package manager comes from the `packageManager` field (Corepack's explicit choice),
//! else from a lockfile in the package's directory or the nearest parent up to the repository
//! root (workspaces keep one lockfile at the top), else npm, which is what runs a
//! `package.json` when nothing says otherwise. Scripts run through it (`pnpm run lint`), and
//! so do the tools of the mapping's defaults, through its own exec that never downloads
//! (`npx --no`, `pnpm exec`, `yarn run`, `bunx --no-install`).
//!
//! A script is judged by what it really runs: its own text, its `pre`/`post` scripts (npm
//! runs those around it: `npm test` runs `pretest` and `posttest` too), and every script it
//! runs in turn through a script runner (`run-s lint:*`), recursively; a package manager's
//! own call (`npm run lint:js`, `yarn fix`, `npm --prefix web test`) is followed by
//! `follow.rs`, into this `package.json` or another folder's. So `"lint": "npm run lint:fix"`
//! is refused like `eslint --fix`.
//! Script names have synonyms ([`CommandKind::task_names`]): `check:lint`, `lint:check`,
//! `check:types`, `test:types`, `format:check`, `testformat`, …

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::{Candidate, CommandKind, DetectError, Directory};
use crate::safety::segments;
use prpd_base::config_file::ConfigError;

/// A JavaScript package manager.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PackageManager {
    Npm,
    Pnpm,
    Yarn,
    Bun,
}

/// Lockfiles and the package manager each belongs to, in the order they are trusted when a
/// directory holds several (a stray `package-lock.json` is the most common leftover).
const LOCKFILES: &[(&str, PackageManager)] = &[
    ("pnpm-lock.yaml", PackageManager::Pnpm),
    ("yarn.lock", PackageManager::Yarn),
    ("bun.lock", PackageManager::Bun),
    ("bun.lockb", PackageManager::Bun),
    ("package-lock.json", PackageManager::Npm),
    ("npm-shrinkwrap.json", PackageManager::Npm),
];

impl PackageManager {
    /// The program's name, as in JSON.
    pub fn name(self) -> &'static str {
        match self {
            PackageManager::Npm => "npm",
            PackageManager::Pnpm => "pnpm",
            PackageManager::Yarn => "yarn",
            PackageManager::Bun => "bun",
        }
    }

    /// The command that runs `script`: `npm test`, `npm run lint`, `pnpm run lint`,
    /// `yarn lint`, `bun run test` (`bun test` would start bun's own test runner instead).
    pub fn run_script(self, script: &str) -> String {
        match self {
            PackageManager::Npm | PackageManager::Pnpm if script == "test" => {
                format!("{} test", self.name())
            }
            PackageManager::Npm | PackageManager::Pnpm | PackageManager::Bun => {
                format!("{} run {script}", self.name())
            }
            PackageManager::Yarn => format!("yarn {script}"),
        }
    }

    /// How the manager runs a tool installed in the project without ever downloading it.
    pub fn exec_prefix(self) -> &'static str {
        match self {
            PackageManager::Npm => "npx --no",
            PackageManager::Pnpm => "pnpm exec",
            PackageManager::Yarn => "yarn run",
            PackageManager::Bun => "bunx --no-install",
        }
    }

    /// A default command of the tools mapping, written for npm (`npm test`, `npx --no eslint
    /// .`), as this manager runs it (`pnpm test`, `pnpm exec eslint .`).
    pub fn rewrite(self, command: &str) -> String {
        let words: Vec<&str> = command.split(' ').collect();
        let mut out: Vec<String> = Vec::with_capacity(words.len());
        let mut index = 0;
        while index < words.len() {
            let pair = (words[index], words.get(index + 1).copied());
            let starts_segment = index == 0 || matches!(words[index - 1], "&&" | "||" | ";" | "|");
            match pair {
                ("npx", Some("--no")) if starts_segment => {
                    out.push(self.exec_prefix().to_owned());
                    index += 2;
                }
                ("npm", Some("test")) if starts_segment => {
                    out.push(self.run_script("test"));
                    index += 2;
                }
                ("npm", Some("run")) if starts_segment && index + 2 < words.len() => {
                    out.push(self.run_script(words[index + 2]));
                    index += 3;
                }
                _ => {
                    out.push(words[index].to_owned());
                    index += 1;
                }
            }
        }
        out.join(" ")
    }

    /// The tool a command runs through a manager's exec (`npx --no eslint .` → `eslint`),
    /// after an optional `cd <dir> && `; with the directory it runs in, relative to the
    /// command's start. `None` for anything else, scripts included.
    pub fn exec_tool(command: &str) -> Option<(Option<&str>, &str)> {
        let mut rest = command.trim_start();
        let mut directory = None;
        if let Some(after_cd) = rest.strip_prefix("cd ") {
            let (dir, after) = after_cd.split_once(" && ")?;
            directory = Some(dir.trim());
            rest = after.trim_start();
        }
        [
            PackageManager::Npm,
            PackageManager::Pnpm,
            PackageManager::Yarn,
            PackageManager::Bun,
        ]
        .into_iter()
        .find_map(|manager| {
            let after = rest
                .strip_prefix(manager.exec_prefix())?
                .strip_prefix(' ')?;
            let tool = after.split_whitespace().next()?;
            (!tool.starts_with('-')).then_some((directory, tool))
        })
    }

    /// The package manager of a directory without a `package.json` of its own: the nearest
    /// lockfile up to the repository root, else npm.
    pub(super) fn of_directory(directory: &Directory<'_>) -> PackageManager {
        directory
            .absolute()
            .ancestors()
            .take(directory.depth() + 1)
            .find_map(PackageManager::from_lockfile)
            .unwrap_or(PackageManager::Npm)
    }

    /// The manager a `packageManager` field such as `pnpm@9.1.0+sha512…` names.
    fn from_field(field: &str) -> Option<PackageManager> {
        match field.split('@').next().unwrap_or(field).trim() {
            "npm" => Some(PackageManager::Npm),
            "pnpm" => Some(PackageManager::Pnpm),
            "yarn" => Some(PackageManager::Yarn),
            "bun" => Some(PackageManager::Bun),
            _ => None,
        }
    }

    /// The manager of the first lockfile found in `directory`.
    fn from_lockfile(directory: &Path) -> Option<PackageManager> {
        LOCKFILES
            .iter()
            .find(|(name, _)| directory.join(name).is_file())
            .map(|(_, manager)| *manager)
    }
}

/// The fields of `package.json` that discovery reads; the others are ignored.
#[derive(Debug, Deserialize)]
struct PackageJson {
    #[serde(default)]
    scripts: BTreeMap<String, String>,
    #[serde(rename = "packageManager")]
    package_manager: Option<String>,
}

/// A directory's `package.json`, as discovery and the task-runner follower read it.
#[derive(Debug)]
pub(super) struct Package {
    /// Every script by name.
    pub(super) scripts: BTreeMap<String, String>,
    /// The manager that runs its scripts: the `packageManager` field's, else the lockfile's.
    pub(super) manager: PackageManager,
}

/// What a directory's `package.json` offers.
#[derive(Debug)]
pub(super) struct Scripts {
    pub(super) package_manager: PackageManager,
    pub(super) candidates: Vec<Candidate>,
}

/// The `package.json` of `directory`, or `None` when it has none; malformed JSON is an error
/// naming file and line.
pub(super) fn read(directory: &Directory<'_>) -> Result<Option<Package>, DetectError> {
    let Some(text) = directory.read("package.json")? else {
        return Ok(None);
    };
    let package: PackageJson = serde_json::from_str(&text).map_err(|error| {
        DetectError::Malformed(ConfigError::Invalid {
            path: directory.path("package.json"),
            line: error.line(),
            column: error.column(),
            message: format!("malformed package.json: {}", without_location(&error)),
        })
    })?;
    let manager = package
        .package_manager
        .as_deref()
        .and_then(PackageManager::from_field)
        .unwrap_or_else(|| PackageManager::of_directory(directory));
    Ok(Some(Package {
        scripts: package.scripts,
        manager,
    }))
}

/// The scripts of `directory`'s `package.json`, or `None` when it has none.
pub(super) fn scripts(directory: &Directory<'_>) -> Result<Option<Scripts>, DetectError> {
    let Some(package) = read(directory)? else {
        return Ok(None);
    };
    let file = directory.display("package.json");
    let mut candidates = Vec::new();
    for kind in CommandKind::ALL {
        for name in kind.task_names() {
            if package
                .scripts
                .get(*name)
                .is_some_and(|script| !is_placeholder_test(script))
            {
                candidates.push(Candidate::new(
                    kind,
                    package.manager.run_script(name),
                    script_text(&package.scripts, name),
                    format!("{file} scripts.{name}"),
                ));
            }
        }
    }
    Ok(Some(Scripts {
        package_manager: package.manager,
        candidates,
    }))
}

/// Whether `script` is the test script `npm init` writes, `echo "Error: no test specified"
/// && exit 1`: it tests nothing and only fails, so the package has no test command. Taken as
/// one, it would fail every QA run as if the project's tests failed; left out, QA says there
/// is no test command, which is what is true.
pub(super) fn is_placeholder_test(script: &str) -> bool {
    static PLACEHOLDER: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r#"^\s*echo\s+(?:"Error: no test specified"|'Error: no test specified'|Error: no test specified)\s*(?:&&|;)\s*exit\s+1\s*$"#)
            .expect("the placeholder pattern is a valid regex (tested)")
    });
    PLACEHOLDER.is_match(script)
}

/// Programs that run other scripts of the same `package.json`, named by the words after them.
/// A package manager's own `run` (`npm run x`, `yarn x`) is a task-runner call that
/// `follow.rs` follows, into this `package.json` or another.
const SCRIPT_RUNNERS: &[&str] = &[
    "run-s",
    "run-p",
    "npm-run-all",
    "npm-run-all2",
    "concurrently",
];

/// What running script `name` runs: its `pre`/`post` scripts and itself, and, recursively,
/// every script they run through a script runner (`run-s lint:*`, `concurrently "npm:x"`).
pub(super) fn script_text(scripts: &BTreeMap<String, String>, name: &str) -> String {
    let mut lines: Vec<&str> = Vec::new();
    let mut pending = vec![name.to_owned()];
    let mut visited: Vec<String> = Vec::new();
    while let Some(current) = pending.pop() {
        if visited.contains(&current) {
            continue;
        }
        for hook in [
            format!("pre{current}"),
            current.clone(),
            format!("post{current}"),
        ] {
            let Some(text) = scripts.get(&hook) else {
                continue;
            };
            lines.push(text);
            pending.extend(scripts_run_by(scripts, text));
        }
        visited.push(current);
    }
    lines.join("\n")
}

/// The names of the scripts that `text` runs through a script runner.
fn scripts_run_by(scripts: &BTreeMap<String, String>, text: &str) -> Vec<String> {
    let mut names = Vec::new();
    for segment in segments(text) {
        let mut runner_seen = false;
        for word in segment.words() {
            if SCRIPT_RUNNERS.contains(&word) {
                runner_seen = true;
                continue;
            }
            if !runner_seen {
                continue;
            }
            let word = word.strip_prefix("npm:").unwrap_or(word);
            if let Some(prefix) = word.strip_suffix('*') {
                names.extend(
                    scripts
                        .keys()
                        .filter(|script| script.starts_with(prefix))
                        .cloned(),
                );
            } else if scripts.contains_key(word) {
                names.push(word.to_owned());
            }
        }
    }
    names
}

/// `serde_json`'s message without its " at line L column C" suffix, which the error prints
/// in front already.
fn without_location(error: &serde_json::Error) -> String {
    let message = error.to_string();
    match message.find(" at line ") {
        Some(index) => message[..index].to_owned(),
        None => message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn npm_inits_placeholder_is_told_from_a_test_script() {
        for placeholder in [
            "echo \"Error: no test specified\" && exit 1",
            "echo 'Error: no test specified' && exit 1",
            "  echo \"Error: no test specified\"  &&  exit 1 ",
            "echo Error: no test specified; exit 1",
        ] {
            assert!(is_placeholder_test(placeholder), "{placeholder}");
        }
        for script in [
            "node --test",
            "jest",
            "echo \"Error: no test specified\" && exit 1 || jest",
            "echo \"Error: no test specified\" && exit 0",
            "jest && echo \"Error: no test specified\" && exit 1",
        ] {
            assert!(!is_placeholder_test(script), "{script}");
        }
    }

    #[test]
    fn scripts_run_through_each_package_manager() {
        let cases = [
            (PackageManager::Npm, "test", "npm test"),
            (PackageManager::Npm, "lint", "npm run lint"),
            (PackageManager::Pnpm, "test", "pnpm test"),
            (PackageManager::Pnpm, "check-types", "pnpm run check-types"),
            (PackageManager::Yarn, "lint", "yarn lint"),
            (PackageManager::Yarn, "test", "yarn test"),
            (PackageManager::Bun, "test", "bun run test"),
        ];
        for (manager, script, expected) in cases {
            assert_eq!(manager.run_script(script), expected);
        }
    }

    #[test]
    fn package_manager_field_names_the_manager() {
        let cases = [
            ("pnpm@9.1.0+sha512.abc", Some(PackageManager::Pnpm)),
            ("yarn@4.0.2", Some(PackageManager::Yarn)),
            ("npm@10.2.0", Some(PackageManager::Npm)),
            ("bun@1.1.0", Some(PackageManager::Bun)),
            ("deno@2", None),
        ];
        for (field, expected) in cases {
            assert_eq!(PackageManager::from_field(field), expected, "{field}");
        }
    }

    fn manager_of(files: &[&str], package_json: &str, relative: &str) -> PackageManager {
        let dir = tempfile::tempdir().expect("temp dir");
        for file in files {
            let path = dir.path().join(file);
            std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
            std::fs::write(path, "").expect("write");
        }
        let package = dir.path().join(relative).join("package.json");
        std::fs::create_dir_all(package.parent().expect("parent")).expect("mkdir");
        std::fs::write(package, package_json).expect("write");
        let directory = Directory::new(dir.path(), Path::new(relative));
        scripts(&directory)
            .expect("valid package.json")
            .expect("package.json exists")
            .package_manager
    }

    #[test]
    fn package_manager_comes_from_field_then_lockfiles_then_npm() {
        let cases = [
            (&[][..], "{}", ".", PackageManager::Npm),
            (&["package-lock.json"][..], "{}", ".", PackageManager::Npm),
            (&["pnpm-lock.yaml"][..], "{}", ".", PackageManager::Pnpm),
            (
                &["yarn.lock", "package-lock.json"][..],
                "{}",
                ".",
                PackageManager::Yarn,
            ),
            (&["bun.lockb"][..], "{}", ".", PackageManager::Bun),
            (
                &["yarn.lock"][..],
                r#"{"packageManager": "pnpm@9.0.0"}"#,
                ".",
                PackageManager::Pnpm,
            ),
            (
                &["pnpm-lock.yaml"][..],
                "{}",
                "packages/web",
                PackageManager::Pnpm,
            ),
            (
                &["pnpm-lock.yaml", "packages/web/yarn.lock"][..],
                "{}",
                "packages/web",
                PackageManager::Yarn,
            ),
        ];
        for (files, package_json, relative, expected) in cases {
            assert_eq!(
                manager_of(files, package_json, relative),
                expected,
                "{files:?} {package_json} {relative}"
            );
        }
    }

    #[test]
    fn mapping_defaults_run_through_the_package_manager() {
        let cases = [
            (
                PackageManager::Npm,
                "npx --no eslint .",
                "npx --no eslint .",
            ),
            (
                PackageManager::Pnpm,
                "npx --no eslint .",
                "pnpm exec eslint .",
            ),
            (
                PackageManager::Yarn,
                "npx --no tsc --noEmit",
                "yarn run tsc --noEmit",
            ),
            (
                PackageManager::Bun,
                "npx --no jscpd --threshold 5 .",
                "bunx --no-install jscpd --threshold 5 .",
            ),
            (PackageManager::Pnpm, "npm test", "pnpm test"),
            (PackageManager::Yarn, "npm run lint", "yarn lint"),
            (PackageManager::Bun, "npm test", "bun run test"),
            (PackageManager::Pnpm, "echo npx --no x", "echo npx --no x"),
        ];
        for (manager, command, expected) in cases {
            assert_eq!(manager.rewrite(command), expected, "{manager:?} {command}");
        }
    }

    #[test]
    fn exec_tool_names_the_tool_a_manager_runs() {
        let cases = [
            ("npx --no eslint .", Some((None, "eslint"))),
            (
                "cd web && pnpm exec tsc --noEmit",
                Some((Some("web"), "tsc")),
            ),
            ("yarn run jscpd .", Some((None, "jscpd"))),
            (
                "bunx --no-install prettier --check .",
                Some((None, "prettier")),
            ),
            ("yarn lint", None),
            ("pnpm run lint", None),
            ("npm test", None),
        ];
        for (command, expected) in cases {
            assert_eq!(PackageManager::exec_tool(command), expected, "{command}");
        }
    }

    #[test]
    fn a_script_is_judged_with_the_scripts_it_runs() {
        let scripts: BTreeMap<String, String> = [
            ("lint", "npm run lint:js && run-s 'lint:css:*'"),
            ("lint:js", "eslint ."),
            ("lint:css:a", "stylelint a"),
            ("lint:css:b", "stylelint --fix b"),
            ("prelint", "echo start"),
            ("check", "concurrently \"npm:lint\" \"npm:test\""),
            ("test", "node --test"),
            ("loop", "npm run loop"),
        ]
        .into_iter()
        .map(|(name, text)| (name.to_owned(), text.to_owned()))
        .collect();
        assert_eq!(
            script_text(&scripts, "lint"),
            "echo start\nnpm run lint:js && run-s 'lint:css:*'\nstylelint --fix b\nstylelint a"
        );
        assert!(script_text(&scripts, "check").contains("stylelint --fix b"));
        assert!(script_text(&scripts, "check").contains("node --test"));
        assert_eq!(script_text(&scripts, "loop"), "npm run loop");
    }
}
