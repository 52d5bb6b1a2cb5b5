//! The mutation tool of each language and how prpd drives it: cargo-mutants for Rust, mutmut
//! for Python, Stryker for JavaScript and TypeScript. A tool runs only where it is installed
//! (on `PATH`; Stryker in the project's `node_modules`, never downloaded) and only when the
//! change touched files of its language; what it needs besides its arguments (the diff file,
//! mutmut's settings) is written into the copy of the tree it runs in, never the tree itself.

use std::path::Path;

use prpd_base::process::find_program;

use super::changed::ChangedLines;
use super::mutant::Mutant;
use super::{cargo_mutants, mutmut, stryker};
use crate::missing_tool;

/// Where prpd writes the change for cargo-mutants, in the copy.
const DIFF_FILE: &str = ".prpd-change.diff";

/// A mutation tool prpd knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tool {
    CargoMutants,
    Mutmut,
    Stryker,
}

impl Tool {
    /// Every tool, in the order they run.
    pub(crate) const ALL: [Tool; 3] = [Tool::CargoMutants, Tool::Mutmut, Tool::Stryker];

    pub(crate) fn name(self) -> &'static str {
        match self {
            Tool::CargoMutants => "cargo-mutants",
            Tool::Mutmut => "mutmut",
            Tool::Stryker => "Stryker",
        }
    }

    /// The language whose files it mutates, for messages.
    pub(crate) fn language(self) -> &'static str {
        match self {
            Tool::CargoMutants => "Rust",
            Tool::Mutmut => "Python",
            Tool::Stryker => "JavaScript/TypeScript",
        }
    }

    /// The extensions of the files it mutates.
    pub(crate) fn extensions(self) -> &'static [&'static str] {
        match self {
            Tool::CargoMutants => cargo_mutants::EXTENSIONS,
            Tool::Mutmut => mutmut::EXTENSIONS,
            Tool::Stryker => stryker::EXTENSIONS,
        }
    }

    /// `Err(why)` when the tool is not installed for `repo`.
    pub(crate) fn installed(self, repo: &Path) -> Result<(), String> {
        let path = std::env::var_os("PATH");
        let on_path = |program: &str| {
            find_program(program, repo, path.as_deref())
                .map(drop)
                .map_err(|_| format!("`{program}` is not on PATH"))
        };
        match self {
            Tool::CargoMutants => on_path("cargo-mutants"),
            Tool::Mutmut => on_path("mutmut"),
            Tool::Stryker => match missing_tool::uninstalled_npx_tool("npx --no stryker", repo) {
                Some(tool) => Err(missing_tool::not_installed(&tool)),
                None => Ok(()),
            },
        }
    }

    /// Writes what the tool needs into the copy `sandbox`, and gives its argv.
    pub(crate) fn prepare(
        self,
        sandbox: &Path,
        changed: &ChangedLines,
    ) -> Result<Vec<String>, String> {
        let write = |name: &str, text: &str| {
            std::fs::write(sandbox.join(name), text)
                .map_err(|error| format!("could not write {name} into the copy: {error}"))
        };
        let argv: &[&str] = match self {
            Tool::CargoMutants => {
                write(DIFF_FILE, &changed.diff)?;
                &["cargo", "mutants", "--in-place", "--in-diff", DIFF_FILE]
            }
            Tool::Mutmut => {
                let existing =
                    std::fs::read_to_string(sandbox.join("pyproject.toml")).unwrap_or_default();
                let text =
                    mutmut::pyproject_with(&existing, &changed.with_extension(mutmut::EXTENSIONS))
                        .map_err(|error| {
                            format!("the project's pyproject.toml does not parse: {error}")
                        })?;
                write("pyproject.toml", &text)?;
                &["mutmut", "run"]
            }
            Tool::Stryker => {
                let mut argv: Vec<String> = [
                    "npx",
                    "--no-install",
                    "stryker",
                    "run",
                    "--reporters",
                    "json",
                    "--mutate",
                ]
                .map(str::to_owned)
                .to_vec();
                argv.push(stryker::mutate_argument(changed));
                return Ok(argv);
            }
        };
        Ok(argv.iter().map(|part| (*part).to_owned()).collect())
    }

    /// The mutants of the changed lines, from what the tool left in `sandbox`.
    pub(crate) fn results(
        self,
        sandbox: &Path,
        changed: &ChangedLines,
    ) -> Result<Vec<Mutant>, String> {
        let read = |name: &str| {
            std::fs::read_to_string(sandbox.join(name))
                .map_err(|error| format!("{name} could not be read ({error})"))
        };
        match self {
            Tool::CargoMutants => cargo_mutants::parse(&read(cargo_mutants::OUTCOMES)?)
                .map_err(|error| error.to_string())
                .map(|mutants| {
                    mutants
                        .into_iter()
                        .filter(|mutant| {
                            mutant
                                .line
                                .is_none_or(|line| changed.contains(&mutant.file, line))
                        })
                        .collect()
                }),
            Tool::Stryker => stryker::parse(&read(stryker::REPORT)?, changed)
                .map_err(|error| format!("{} does not parse: {error}", stryker::REPORT)),
            Tool::Mutmut => {
                let mut mutants = Vec::new();
                for file in changed.with_extension(mutmut::EXTENSIONS) {
                    let meta_name = format!("mutants/{file}.meta");
                    let Ok(meta) = std::fs::read_to_string(sandbox.join(&meta_name)) else {
                        // mutmut writes no record for a file with nothing to mutate.
                        continue;
                    };
                    let mutated = read(&format!("mutants/{file}"))?;
                    let source = read(file)?;
                    mutants.extend(
                        mutmut::parse(file, &source, &meta, &mutated, changed)
                            .map_err(|error| format!("{meta_name} does not parse: {error}"))?,
                    );
                }
                Ok(mutants)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_tool_gets_the_change_written_into_the_copy() {
        let copy = tempfile::tempdir().expect("a copy");
        std::fs::write(
            copy.path().join("pyproject.toml"),
            "[project]\nname = \"calc\"\n",
        )
        .expect("the project's file");
        let diff = "--- a/calc.py\n+++ b/calc.py\n@@ -2,0 +3,2 @@\n+x\n+y\n\
                    --- a/src/calc.ts\n+++ b/src/calc.ts\n@@ -1 +1 @@\n-a\n+b\n";
        let changed = ChangedLines::from_diff(diff);
        assert_eq!(
            Tool::CargoMutants
                .prepare(copy.path(), &changed)
                .expect("argv"),
            [
                "cargo",
                "mutants",
                "--in-place",
                "--in-diff",
                ".prpd-change.diff"
            ]
        );
        assert_eq!(
            std::fs::read_to_string(copy.path().join(DIFF_FILE)).expect("the diff"),
            diff
        );
        assert_eq!(
            Tool::Mutmut.prepare(copy.path(), &changed).expect("argv"),
            ["mutmut", "run"]
        );
        let pyproject =
            std::fs::read_to_string(copy.path().join("pyproject.toml")).expect("settings");
        assert!(pyproject.contains("name = \"calc\""), "{pyproject}");
        assert!(
            pyproject.contains("[tool.mutmut]\nsource_paths = [\"calc.py\"]"),
            "{pyproject}"
        );
        assert_eq!(
            Tool::Stryker.prepare(copy.path(), &changed).expect("argv"),
            [
                "npx",
                "--no-install",
                "stryker",
                "run",
                "--reporters",
                "json",
                "--mutate",
                "src/calc.ts:1-1"
            ]
        );
    }

    /// Stryker counts only from the project's `node_modules` (or PATH), never from a download.
    #[test]
    fn stryker_is_installed_only_in_node_modules_or_on_path() {
        let repo = tempfile::tempdir().expect("a repository");
        let global = std::env::var_os("PATH").is_some_and(|path| {
            std::env::split_paths(&path).any(|dir| dir.join("stryker").is_file())
        });
        let expected = if global {
            Ok(())
        } else {
            Err(
                "`stryker` is neither in node_modules/.bin nor on PATH, and the package \
                 manager's exec will not download it"
                    .to_owned(),
            )
        };
        assert_eq!(Tool::Stryker.installed(repo.path()), expected);
        std::fs::create_dir_all(repo.path().join("node_modules/.bin")).expect("node_modules");
        std::fs::write(repo.path().join("node_modules/.bin/stryker"), "").expect("stryker");
        assert_eq!(Tool::Stryker.installed(repo.path()), Ok(()));
    }
}
