//! The arguments of each task runner, as prpd reads them to know what a call runs: the folder
//! flags (`make -C`, `npm --prefix`, `pnpm -C`/`--dir`, `yarn`/`bun --cwd`, `just -d`), the
//! file flags (`make -f`, `just -f`), the variables set on the command line, and which words
//! name the goal, script or recipe. A package manager's own commands (`npm ci`, `bun test`,
//! `yarn add`) run no script; workspace-wide runs (`pnpm -r`, `npm --workspaces`, `yarn
//! workspace`) are kept as calls prpd cannot read.

use std::path::PathBuf;

use super::{Missing, Runs, join};
use crate::discover::make::Override;

/// pnpm's own commands, which `pnpm <name>` runs instead of a script of that name.
const PNPM_COMMANDS: &[&str] = &[
    "add", "audit", "bin", "config", "create", "dedupe", "deploy", "dlx", "doctor", "env", "exec",
    "fetch", "i", "import", "init", "install", "licenses", "link", "list", "ln", "ls", "outdated",
    "pack", "patch", "prune", "publish", "rebuild", "remove", "rm", "root", "server", "setup",
    "store", "unlink", "up", "update", "why",
];

/// yarn's own commands, which `yarn <name>` runs instead of a script of that name.
const YARN_COMMANDS: &[&str] = &[
    "add",
    "bin",
    "cache",
    "config",
    "constraints",
    "dlx",
    "exec",
    "explain",
    "info",
    "init",
    "install",
    "link",
    "node",
    "npm",
    "pack",
    "patch",
    "plugin",
    "publish",
    "rebuild",
    "remove",
    "set",
    "unlink",
    "up",
    "upgrade",
    "version",
    "why",
];

/// bun's own commands, which `bun <name>` runs instead of a script of that name (`bun test`
/// is bun's test runner; `bun run test` is the script).
const BUN_COMMANDS: &[&str] = &[
    "add", "build", "create", "exec", "i", "init", "install", "link", "outdated", "pm", "publish",
    "remove", "repl", "rm", "test", "unlink", "update", "upgrade", "x",
];

/// `folder` moved by a flag's value.
fn moved_to(folder: Result<PathBuf, String>, to: Option<&str>) -> Result<PathBuf, String> {
    match to {
        Some(to) => folder.and_then(|folder| join(&folder, to)),
        None => Err("a folder flag names no folder".to_owned()),
    }
}

/// `make`'s arguments: `-C dir`, `-f file`, `NAME=value` overrides and the goals, one run per
/// goal (the default goal `""` when none is named).
pub(super) fn parse_make(
    arguments: &[&str],
    folder: Result<PathBuf, String>,
) -> Vec<(Result<PathBuf, String>, Runs)> {
    let mut folder = folder;
    let mut file = None;
    let mut goals: Vec<String> = Vec::new();
    let mut overrides = Vec::new();
    let mut rest = arguments.iter().copied();
    while let Some(word) = rest.next() {
        if let Some(directory) = word
            .strip_prefix("--directory=")
            .or_else(|| word.strip_prefix("-C").filter(|dir| !dir.is_empty()))
        {
            folder = moved_to(folder, Some(directory));
        } else if matches!(word, "-C" | "--directory") {
            folder = moved_to(folder, rest.next());
        } else if let Some(name) = word
            .strip_prefix("--file=")
            .or_else(|| word.strip_prefix("--makefile="))
            .or_else(|| word.strip_prefix("-f").filter(|name| !name.is_empty()))
        {
            file = Some(name.to_owned());
        } else if matches!(word, "-f" | "--file" | "--makefile") {
            file = rest.next().map(str::to_owned);
        } else if matches!(
            word,
            "-I" | "-o"
                | "-W"
                | "--include-dir"
                | "--old-file"
                | "--new-file"
                | "--what-if"
                | "--assume-old"
                | "--assume-new"
        ) {
            rest.next();
        } else if !word.starts_with('-') && !word.chars().all(|c| c.is_ascii_digit()) {
            match Override::parse(word) {
                Some(parsed) => overrides.push(parsed),
                None => goals.push(word.to_owned()),
            }
        }
    }
    if goals.is_empty() {
        goals.push(String::new());
    }
    goals
        .into_iter()
        .map(|goal| {
            (
                folder.clone(),
                Runs::Make {
                    file: file.clone(),
                    goal,
                    overrides: overrides.clone(),
                },
            )
        })
        .collect()
}

/// `just`'s arguments: `-f file`, `-d dir`, `NAME=value` and `--set NAME value` overrides,
/// then the recipe (`sub/recipe` runs the justfile `sub` finds). `None` for just's own modes
/// (`--list`, `--evaluate`, …), which run no recipe.
pub(super) fn parse_just(
    arguments: &[&str],
    folder: Result<PathBuf, String>,
) -> Option<(Result<PathBuf, String>, Runs)> {
    let mut folder = folder;
    let mut file = None;
    let mut overrides = Vec::new();
    let mut recipe = None;
    let mut rest = arguments.iter().copied();
    while let Some(word) = rest.next() {
        match word {
            "-f" | "--justfile" => file = rest.next().map(str::to_owned),
            "-d" | "--working-directory" => folder = moved_to(folder, rest.next()),
            "--set" => {
                if let (Some(name), Some(value)) = (rest.next(), rest.next()) {
                    overrides.push((name.to_owned(), value.to_owned()));
                }
            }
            "-c" | "--command" | "-l" | "--list" | "--summary" | "--dump" | "--evaluate"
            | "--variables" | "--show" | "-s" | "--version" | "-V" | "--help" | "-h"
            | "--groups" | "--completions" | "--init" | "--fmt" | "--edit" | "--choose" => {
                return None;
            }
            "--shell" | "--shell-arg" | "--dotenv-filename" | "--dotenv-path" | "-E"
            | "--color" | "--command-color" | "--chooser" | "--list-heading" | "--list-prefix"
            | "--timestamp-format" => {
                rest.next();
            }
            _ if word.starts_with("--justfile=") => {
                file = word.split_once('=').map(|(_, name)| name.to_owned());
            }
            _ if word.starts_with('-') => {}
            _ => {
                if let Some((name, value)) = word.split_once('=') {
                    overrides.push((name.to_owned(), value.to_owned()));
                } else {
                    recipe = Some(word);
                    break;
                }
            }
        }
    }
    let recipe = match recipe {
        Some(path) if path.contains("::") => {
            return Some((
                folder,
                Runs::Unreadable(format!("`{path}` is a recipe of a just module")),
            ));
        }
        Some(path) => match path.rsplit_once('/') {
            Some((sub, name)) => {
                folder = folder.and_then(|folder| join(&folder, sub));
                (!name.is_empty()).then(|| name.to_owned())
            }
            None => Some(path.to_owned()),
        },
        None => None,
    };
    Some((
        folder,
        Runs::Just {
            file,
            recipe,
            overrides,
        },
    ))
}

/// A package manager's arguments: its flags (wherever they stand before `--`: npm reads them
/// after the script's name too), the script it runs and the words after the script's name,
/// passed on to it. `None` when it runs no script (`npm ci`, `bun test`, `yarn add`).
pub(super) fn parse_script(
    manager: &str,
    arguments: &[&str],
    folder: Result<PathBuf, String>,
) -> Option<(Result<PathBuf, String>, Runs)> {
    let mut folder = folder;
    let mut positional: Vec<(usize, &str)> = Vec::new();
    let mut if_present = false;
    let mut index = 0;
    while index < arguments.len() {
        let word = arguments[index];
        index += 1;
        if word == "--" {
            break;
        }
        if !word.starts_with('-') {
            positional.push((index - 1, word));
            continue;
        }
        let (flag, value) = match word.split_once('=') {
            Some((flag, value)) => (flag, Some(value)),
            None => (word, None),
        };
        let mut value_of_flag = || {
            value.or_else(|| {
                index += 1;
                arguments.get(index - 1).copied()
            })
        };
        match flag {
            "--prefix" | "-C" | "--dir" | "--cwd" => folder = moved_to(folder, value_of_flag()),
            "-w" | "--workspace" | "-ws" | "--workspaces" | "-r" | "--recursive" | "--filter"
            | "-F" => {
                return Some((
                    folder,
                    Runs::Unreadable(format!(
                        "`{manager} {flag}` runs the scripts of workspace packages, which prpd does not read"
                    )),
                ));
            }
            "--if-present" => if_present = true,
            "--loglevel" | "--registry" | "--cache" | "--userconfig" | "--script-shell" => {
                value_of_flag();
            }
            _ => {}
        }
    }
    let &(first_index, subcommand) = positional.first()?;
    let second = positional.get(1).copied();
    let strict = Missing::Unreadable;
    let lenient = Missing::RunsAProgram;
    let (name, missing, name_index) = match (manager, subcommand) {
        ("yarn", "workspace" | "workspaces") => {
            return Some((
                folder,
                Runs::Unreadable(
                    "`yarn workspace` runs the scripts of workspace packages, which prpd does not read"
                        .to_owned(),
                ),
            ));
        }
        ("npm" | "pnpm", "run" | "run-script" | "rum" | "urn") => {
            let (at, name) = second?;
            (name, strict, at)
        }
        ("yarn" | "bun", "run") => {
            let (at, name) = second?;
            if manager == "bun" && name.contains(['.', '/']) {
                return None;
            }
            (name, lenient, at)
        }
        ("npm" | "pnpm", "test" | "t" | "tst") => ("test", strict, first_index),
        ("npm" | "pnpm", "start" | "stop" | "restart") => (subcommand, strict, first_index),
        ("yarn", "test") => ("test", lenient, first_index),
        ("pnpm", name) if !PNPM_COMMANDS.contains(&name) => (name, lenient, first_index),
        ("yarn", name) if !YARN_COMMANDS.contains(&name) => (name, lenient, first_index),
        ("bun", name) if !BUN_COMMANDS.contains(&name) && !name.contains(['.', '/']) => {
            (name, lenient, first_index)
        }
        _ => return None,
    };
    let arguments = arguments[name_index + 1..]
        .iter()
        .filter(|word| **word != "--")
        .map(|word| (*word).to_owned())
        .collect();
    Some((
        folder,
        Runs::Script {
            name: name.to_owned(),
            arguments,
            missing: if if_present {
                Missing::RunsNothing
            } else {
                missing
            },
        },
    ))
}
