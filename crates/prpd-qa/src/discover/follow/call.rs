//! Finding task-runner calls in a command's text: `make`, `npm`, `pnpm`, `yarn`, `bun` and
//! `just`, each with the folder it runs in and what it names (a goal, a script, a recipe).
//!
//! The text is split into segments as [`crate::safety`] splits it. A runner counts where
//! a program runs: first in its segment (after `NAME=value` assignments and wrappers such as
//! `env` or `time`), or quoted inside a program that runs commands (`sh -c "make lint"`,
//! `concurrently "npm run a" "npm run b"`, concurrently's `npm:lint`); `echo make` calls
//! nothing. The folder starts where the text runs and moves with `cd` (within the line; a
//! subshell's `cd` ends with it) and with each runner's own flags (`make -C`, `npm --prefix`,
//! `pnpm -C`/`--dir`, `yarn --cwd`, `bun --cwd`, `just -d`, `just sub/recipe`), which
//! `call/arguments.rs` reads with the rest of each runner's arguments. A folder
//! prpd cannot tell (`cd $DIR`, `cd` alone) is kept as the reason, so that a call from it is
//! refused by name rather than read from the wrong folder.

use std::path::{Component, Path, PathBuf};

mod arguments;

use arguments::{parse_just, parse_make, parse_script};

use crate::discover::make::Override;
use crate::safety::{Segment, segments};

/// Programs that are task runners: their calls are followed.
const RUNNERS: &[&str] = &["make", "gmake", "npm", "pnpm", "yarn", "bun", "just"];

/// Programs that run the command after them as it is: `env X=1 make test`.
const WRAPPERS: &[&str] = &["env", "exec", "time", "nice", "nohup"];

/// Programs that run commands given as quoted arguments.
const COMMAND_TAKERS: &[&str] = &["sh", "bash", "dash", "zsh", "concurrently"];

/// What a script call does when the script is not in `package.json`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Missing {
    /// The manager fails (`npm run x`, `pnpm run x`, `npm test`): prpd cannot read the call.
    Unreadable,
    /// The manager runs the program `x` instead (`yarn x`, `bun run x`): no script is called.
    RunsAProgram,
    /// `--if-present`: nothing runs.
    RunsNothing,
}

/// What one call runs, before its file is read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Runs {
    /// `make [-f file] goal VAR=value…`; the default goal is `""`.
    Make {
        file: Option<String>,
        goal: String,
        overrides: Vec<Override>,
    },
    /// A `package.json` script run through a package manager, with the words passed on to it.
    Script {
        name: String,
        arguments: Vec<String>,
        missing: Missing,
    },
    /// `just [-f file] [recipe]`; `None` runs the default recipe.
    Just {
        file: Option<String>,
        recipe: Option<String>,
        overrides: Vec<(String, String)>,
    },
    /// A call prpd cannot read, and why (`pnpm -r test`).
    Unreadable(String),
}

/// One task-runner call found in a command's text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Call {
    /// The call as written (`npm --prefix web run lint`), after `cd web && ` when a `cd`
    /// before it chose its folder.
    pub(super) written: String,
    /// The folder it runs in, relative to the repository root (`.` for the root), or why
    /// prpd cannot tell.
    pub(super) folder: Result<PathBuf, String>,
    pub(super) runs: Runs,
}

impl Call {
    /// What identifies the call: the same folder and the same runs read the same text.
    pub(super) fn key(&self) -> String {
        let folder = match &self.folder {
            Ok(folder) => folder.display().to_string(),
            Err(reason) => reason.clone(),
        };
        format!("{folder}\u{0}{:?}", self.runs)
    }
}

/// Every task-runner call in `text`, run from `base` (a folder relative to the repository
/// root), in order. Each line starts again from `base`, as make and just run each recipe line
/// in a shell of its own.
pub(super) fn calls(base: &Path, text: &str) -> Vec<Call> {
    let mut found = Vec::new();
    let mut folder: Result<PathBuf, String> = Ok(base.to_path_buf());
    let mut saved: Vec<Result<PathBuf, String>> = Vec::new();
    for segment in segments(text) {
        match segment.after {
            Some('\n') => {
                folder = Ok(base.to_path_buf());
                saved.clear();
            }
            Some('(') => saved.push(folder.clone()),
            Some(')') => {
                if let Some(outer) = saved.pop() {
                    folder = outer;
                }
            }
            Some(_) | None => {}
        }
        let words = segment.words();
        if matches!(words.first(), Some(&("cd" | "pushd"))) {
            folder = match words.get(1) {
                Some(target) => folder.and_then(|current| join(&current, target)),
                None => Err("`cd` alone moves to the home folder".to_owned()),
            };
            continue;
        }
        let moved = folder.as_ref().ok().filter(|current| *current != base);
        let starts = call_starts(&segment, &words);
        for (index, start) in starts.iter().enumerate() {
            let end = starts.get(index + 1).copied().unwrap_or(words.len());
            let words = shell_words(&segment.raw[*start..end]);
            let words: Vec<&str> = words.iter().map(String::as_str).collect();
            for mut call in parse_call(&words, &folder) {
                if let Some(moved) = moved {
                    call.written = format!("cd {} && {}", moved.display(), call.written);
                }
                found.push(call);
            }
        }
    }
    found
}

/// Where the task-runner calls of a segment start.
fn call_starts(segment: &Segment, words: &[&str]) -> Vec<usize> {
    let mut starts = Vec::new();
    let mut in_program_place = true;
    let mut takes_commands = false;
    for (index, word) in words.iter().enumerate() {
        let program = base_name(word);
        let quoted = segment.raw[index].starts_with(['"', '\'']);
        let runner = RUNNERS.contains(&program);
        let shorthand = ["npm:", "pnpm:", "yarn:", "bun:"]
            .iter()
            .any(|prefix| word.starts_with(prefix));
        if (runner && (in_program_place || (quoted && takes_commands)))
            || (shorthand && takes_commands)
        {
            starts.push(index);
        }
        takes_commands |= COMMAND_TAKERS.contains(&program);
        let assignment = !word.starts_with('-') && word.contains('=');
        in_program_place &= assignment || WRAPPERS.contains(&program);
    }
    starts
}

/// The calls that `words` (a runner and its arguments) make from `folder`: one per make goal,
/// none when the runner is asked for something other than a task (`npm ci`, `bun test`).
fn parse_call(words: &[&str], folder: &Result<PathBuf, String>) -> Vec<Call> {
    let Some((program, arguments)) = words.split_first() else {
        return Vec::new();
    };
    let written = words.join(" ");
    if let Some((manager, name)) = program.split_once(':')
        && matches!(manager, "npm" | "pnpm" | "yarn" | "bun")
    {
        let runs = if name.contains('*') {
            Runs::Unreadable(format!("`{program}` names scripts by a pattern"))
        } else {
            Runs::Script {
                name: name.to_owned(),
                arguments: Vec::new(),
                missing: Missing::Unreadable,
            }
        };
        return vec![Call {
            written: format!("{manager} run {name}"),
            folder: folder.clone(),
            runs,
        }];
    }
    let parsed: Vec<(Result<PathBuf, String>, Runs)> = match base_name(program) {
        "make" | "gmake" => parse_make(arguments, folder.clone()),
        "just" => parse_just(arguments, folder.clone()).into_iter().collect(),
        manager => parse_script(manager, arguments, folder.clone())
            .into_iter()
            .collect(),
    };
    parsed
        .into_iter()
        .map(|(folder, runs)| Call {
            written: written.clone(),
            folder,
            runs,
        })
        .collect()
}

/// The words of one call as the shell passes them: quotes removed, and a quoted value with
/// spaces kept whole (`fmt_cmd='black .'`). A call that starts inside a quoted command
/// (`concurrently "npm run a" --kill-others`) ends where that quote closes.
fn shell_words(raw: &[String]) -> Vec<String> {
    let outer = raw
        .first()
        .and_then(|word| word.chars().next())
        .filter(|c| matches!(c, '"' | '\''));
    let mut quotes: Vec<char> = Vec::new();
    let mut words = Vec::new();
    let mut current = String::new();
    for (index, word) in raw.iter().enumerate() {
        let mut chars = word.chars();
        if index == 0
            && let Some(outer) = outer
        {
            chars.next();
            quotes.push(outer);
        }
        let mut closed_outer = false;
        for c in chars {
            if quotes.last() == Some(&c) {
                quotes.pop();
                closed_outer = outer.is_some() && quotes.is_empty();
            } else if matches!(c, '"' | '\'') {
                quotes.push(c);
            } else {
                current.push(c);
            }
        }
        let inner_open = quotes.len() > usize::from(outer.is_some() && !closed_outer);
        if inner_open && !closed_outer {
            current.push(' ');
            continue;
        }
        words.push(std::mem::take(&mut current));
        if closed_outer {
            break;
        }
    }
    if !current.trim().is_empty() {
        words.push(current.trim_end().to_owned());
    }
    words
}

/// The last path component of a word: `/usr/bin/make` → `make`.
fn base_name(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

/// `relative` (as written in a command) from `folder`, as a clean path relative to the
/// repository root (`.` for the root); `Err` for a path prpd cannot follow: one that leaves
/// the repository, is absolute, or is computed by the shell (`$DIR`, `~`).
pub(super) fn join(folder: &Path, relative: &str) -> Result<PathBuf, String> {
    let relative = relative.trim_end_matches('/');
    let computed = relative.contains(['$', '`', '~', '*', '?']);
    if relative.is_empty() || computed || Path::new(relative).is_absolute() {
        return Err(format!(
            "the folder `{relative}` is not a path inside the repository that prpd can follow"
        ));
    }
    let mut joined: Vec<&std::ffi::OsStr> = folder
        .components()
        .filter_map(|component| match component {
            Component::Normal(name) => Some(name),
            Component::CurDir
            | Component::ParentDir
            | Component::RootDir
            | Component::Prefix(_) => None,
        })
        .collect();
    for component in Path::new(relative).components() {
        match component {
            Component::Normal(name) => joined.push(name),
            Component::CurDir => {}
            Component::ParentDir => {
                if joined.pop().is_none() {
                    return Err(format!("the folder `{relative}` leaves the repository"));
                }
            }
            Component::RootDir | Component::Prefix(_) => {
                return Err(format!(
                    "the folder `{relative}` is not inside the repository"
                ));
            }
        }
    }
    Ok(if joined.is_empty() {
        PathBuf::from(".")
    } else {
        joined.iter().collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each call of `text` run from `base`, in a line of its own: the folder, then what runs.
    fn found(base: &str, text: &str) -> Vec<String> {
        calls(Path::new(base), text)
            .into_iter()
            .map(|call| {
                let folder = match &call.folder {
                    Ok(folder) => folder.display().to_string(),
                    Err(reason) => format!("?{reason}"),
                };
                let runs = match &call.runs {
                    Runs::Make {
                        file,
                        goal,
                        overrides,
                    } => format!(
                        "make {}{goal:?}{}",
                        file.as_ref()
                            .map_or(String::new(), |file| format!("-f {file} ")),
                        if overrides.is_empty() {
                            ""
                        } else {
                            " with overrides"
                        }
                    ),
                    Runs::Script {
                        name,
                        arguments,
                        missing,
                    } => format!("script {name} {arguments:?} {missing:?}"),
                    Runs::Just {
                        file,
                        recipe,
                        overrides,
                    } => format!("just {file:?} {recipe:?} {overrides:?}"),
                    Runs::Unreadable(reason) => format!("unreadable: {reason}"),
                };
                format!("{folder}: {runs}")
            })
            .collect()
    }

    /// What a text says, the text, and the calls found in it.
    const CASES: &[(&str, &str, &[&str])] = &[
        (
            "Makefile recipe",
            "npm run check",
            &[".: script check [] Unreadable"],
        ),
        (
            "sub-make and its directory",
            "make -C sub -j 4 lint test V=1",
            &[
                "sub: make \"lint\" with overrides",
                "sub: make \"test\" with overrides",
            ],
        ),
        ("default goal", "make", &[".: make \"\""]),
        (
            "make -f",
            "make -f ci.mk --directory=web check",
            &["web: make -f ci.mk \"check\""],
        ),
        (
            "cd and a chain",
            "cd web && npm test -- -u; yarn lint",
            &[
                "web: script test [\"-u\"] Unreadable",
                "web: script lint [] RunsAProgram",
            ],
        ),
        (
            "a subshell's cd ends with it",
            "(cd sub; npm run lint) && make lint",
            &["sub: script lint [] Unreadable", ".: make \"lint\""],
        ),
        (
            "each line starts again",
            "cd sub\nmake lint",
            &[".: make \"lint\""],
        ),
        (
            "a folder prpd cannot tell",
            "cd $DIR && make lint",
            &[
                "?the folder `$DIR` is not a path inside the repository that prpd can follow: make \"lint\"",
            ],
        ),
        (
            "leaving the repository",
            "make -C ../.. test",
            &["?the folder `../..` leaves the repository: make \"test\""],
        ),
        (
            "package managers' folder flags",
            "npm --prefix sub run lint && pnpm -C a test && yarn --cwd=b fix && bun --cwd c run x",
            &[
                "sub: script lint [] Unreadable",
                "a: script test [] Unreadable",
                "b: script fix [] RunsAProgram",
                "c: script x [] RunsAProgram",
            ],
        ),
        (
            "npm's script commands",
            "npm run-script a; npm t; npm start; npm run b --if-present; npm ci; npm exec x; npx y",
            &[
                ".: script a [] Unreadable",
                ".: script test [] Unreadable",
                ".: script start [] Unreadable",
                ".: script b [\"--if-present\"] RunsNothing",
            ],
        ),
        (
            "shorthands and own commands",
            "pnpm fix; pnpm install; yarn add x; yarn run tsc --noEmit; bun test; bun fix; bun run index.ts",
            &[
                ".: script fix [] RunsAProgram",
                ".: script tsc [\"--noEmit\"] RunsAProgram",
                ".: script fix [] RunsAProgram",
            ],
        ),
        (
            "workspaces",
            "pnpm -r test; npm test --workspaces; yarn workspace web lint",
            &[
                ".: unreadable: `pnpm -r` runs the scripts of workspace packages, which prpd does not read",
                ".: unreadable: `npm --workspaces` runs the scripts of workspace packages, which prpd does not read",
                ".: unreadable: `yarn workspace` runs the scripts of workspace packages, which prpd does not read",
            ],
        ),
        (
            "just with overrides, a folder, a file and modes",
            "just fmt_cmd='black .' fmt; just -d sub test; just -f other.just lint; just docs/; just --list; just tools::fmt",
            &[
                ".: just None Some(\"fmt\") [(\"fmt_cmd\", \"black .\")]",
                "sub: just None Some(\"test\") []",
                ".: just Some(\"other.just\") Some(\"lint\") []",
                "docs: just None None []",
                ".: unreadable: `tools::fmt` is a recipe of a just module",
            ],
        ),
        (
            "wrappers and assignments keep the program's place",
            "env CI=1 time make test; FOO=1 npm test; echo make test; command -v make",
            &[".: make \"test\"", ".: script test [] Unreadable"],
        ),
        (
            "quoted commands given to a program that runs them",
            "concurrently \"npm run a\" 'npm:b' && sh -c \"make lint\"; echo \"make sure\"",
            &[
                ".: script a [] Unreadable",
                ".: script b [] Unreadable",
                ".: make \"lint\"",
            ],
        ),
    ];

    #[test]
    fn calls_are_found_where_a_program_runs_with_their_folder() {
        for (what, text, expected) in CASES {
            assert_eq!(found(".", text), *expected, "{what}: {text}");
        }
        assert_eq!(
            found(
                ".",
                "concurrently \"npm run a\" --kill-others 'make lint ARGS=\"--fix -q\"'"
            ),
            [
                ".: script a [] Unreadable",
                ".: make \"lint\" with overrides"
            ]
        );
        assert_eq!(
            shell_words(&["make", "lint", "ARGS=\"--fix", "-q\""].map(str::to_owned)),
            ["make", "lint", "ARGS=--fix -q"]
        );
        assert_eq!(
            found("web", "make -C .. test && cd ../api && npm test"),
            [".: make \"test\"", "api: script test [] Unreadable"]
        );
        let written: Vec<String> = calls(Path::new("."), "cd sub && make lint; npm test")
            .into_iter()
            .map(|call| call.written)
            .collect();
        assert_eq!(written, ["cd sub && make lint", "cd sub && npm test"]);
    }

    #[test]
    fn folders_join_inside_the_repository() {
        let cases = [
            (".", "sub", Ok("sub")),
            ("a/b", "../c/./d/", Ok("a/c/d")),
            ("a", "..", Ok(".")),
            (
                "a",
                "../..",
                Err("the folder `../..` leaves the repository"),
            ),
            (
                ".",
                "/tmp",
                Err("the folder `/tmp` is not a path inside the repository that prpd can follow"),
            ),
            (
                ".",
                "~/x",
                Err("the folder `~/x` is not a path inside the repository that prpd can follow"),
            ),
        ];
        for (folder, relative, expected) in cases {
            assert_eq!(
                join(Path::new(folder), relative),
                expected.map(PathBuf::from).map_err(str::to_owned),
                "{folder} {relative}"
            );
        }
    }
}
