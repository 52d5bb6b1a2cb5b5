//! `package.json` scripts and the JavaScript package manager that runs them.
//!
//! The package manager comes from the `packageManager` field (Corepack's explicit choice),
//! else from a lockfile in the package's directory or the nearest parent up to the repository
//! root (workspaces keep one lockfile at the top), else npm, which is what runs a
//! `package.json` when nothing says otherwise. A script is judged by its own text together with
//! its `pre`/`post` scripts, because npm runs those around it.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::{Candidate, CommandKind, DetectError, Directory};
use crate::base::config_file::ConfigError;

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

/// What a directory's `package.json` offers.
#[derive(Debug)]
pub(super) struct Scripts {
    pub(super) package_manager: PackageManager,
    pub(super) candidates: Vec<Candidate>,
}

/// The scripts of `directory`'s `package.json`, or `None` when it has none.
pub(super) fn scripts(directory: &Directory<'_>) -> Result<Option<Scripts>, DetectError> {
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
    let package_manager = package
        .package_manager
        .as_deref()
        .and_then(PackageManager::from_field)
        .or_else(|| {
            directory
                .absolute()
                .ancestors()
                .take(directory.depth() + 1)
                .find_map(PackageManager::from_lockfile)
        })
        .unwrap_or(PackageManager::Npm);
    let file = directory.display("package.json");
    let mut candidates = Vec::new();
    for kind in CommandKind::ALL {
        for name in kind.task_names() {
            if package.scripts.contains_key(*name) {
                let judged = [
                    format!("pre{name}"),
                    (*name).to_owned(),
                    format!("post{name}"),
                ]
                .iter()
                .filter_map(|hook| package.scripts.get(hook))
                .map(String::as_str)
                .collect::<Vec<_>>()
                .join("\n");
                candidates.push(Candidate::new(
                    kind,
                    package_manager.run_script(name),
                    judged,
                    format!("{file} scripts.{name}"),
                ));
            }
        }
    }
    Ok(Some(Scripts {
        package_manager,
        candidates,
    }))
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
}
