//! A command whose program is not installed is not a command that found a problem, and what
//! its absence means depends on who chose the command. A command the project declares (its
//! scripts, targets, CI, configuration, `prpd.toml`) must run, so its missing tool is a
//! failure; a default prpd guessed from the tools mapping names a tool the project may not use
//! at all, so its absence means the check does not apply. QA's checks (`runner.rs`) and the
//! phases' own measurements (`prpd-run/src/measure.rs`, REFACTOR's lint) judge it here, so that a
//! guessed default is never a blocker in one phase and skipped in another.

use std::path::Path;

use crate::discover::PackageManager;

/// Exit codes with which `sh` says the program itself could not be run.
const COMMAND_NOT_FOUND: i32 = 127;
const COMMAND_NOT_EXECUTABLE: i32 = 126;

/// What package runners print, with a non-zero exit, when the tool they were asked to run is not
/// installed (`npx --no`, pnpm, yarn, `python -m`).
const MISSING_TOOL_MESSAGES: &[&str] = &[
    "npx canceled due to missing packages",
    // npm 9's npx (Debian 12's `npm` package) with `--no`: it runs no program from PATH, so a
    // tool found there (Debian's npm brings eslint 6) is still missing to it.
    "npm ERR! canceled",
    "could not determine executable to run",
    "command not found",
    "ERR_PNPM_RECURSIVE_EXEC_FIRST_FAIL",
    "No module named",
];

/// For a tool run through a package manager's exec (`npx --no <tool> …`, `pnpm exec`, `yarn
/// run`, `bunx --no-install`: the mapping's defaults for Node tools): the tool, when it is not
/// installed. Checked before running because npx asks the registry first, and without network
/// its failure would look like the tool's own.
pub fn uninstalled_npx_tool(command: &str, repo: &Path) -> Option<String> {
    let (directory, tool) = PackageManager::exec_tool(command)?;
    let directory = directory.map_or_else(|| repo.to_path_buf(), |directory| repo.join(directory));
    let installed = directory
        .ancestors()
        .take_while(|dir| dir.starts_with(repo))
        .any(|dir| dir.join("node_modules/.bin").join(tool).exists())
        || std::env::var_os("PATH")
            .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(tool).is_file()));
    (!installed).then(|| tool.to_owned())
}

/// How prpd knows that `tool` ([`uninstalled_npx_tool`]) is missing, for a message.
pub fn not_installed(tool: &str) -> String {
    format!(
        "`{tool}` is neither in node_modules/.bin nor on PATH, and the package manager's exec will not download it"
    )
}

/// When `command` failed because its program is not installed (rather than because the
/// program found a problem): how prpd knows, for a message.
pub fn could_not_run(command: &str, exit_code: i32, tail: &str) -> Option<String> {
    let evidence = missing_tool(exit_code, tail)?;
    Some(format!(
        "`{command}` could not run its program (exit {exit_code}: {evidence})"
    ))
}

/// When the command failed because its program is not installed: the output line that says
/// so.
fn missing_tool(exit_code: i32, tail: &str) -> Option<String> {
    if exit_code == 0 {
        return None;
    }
    let evidence = tail.lines().map(str::trim).find(|line| {
        MISSING_TOOL_MESSAGES
            .iter()
            .any(|message| line.contains(message))
    });
    match evidence {
        Some(line) => Some(line.to_owned()),
        None if exit_code == COMMAND_NOT_FOUND || exit_code == COMMAND_NOT_EXECUTABLE => Some(
            last_line(tail)
                .unwrap_or("the shell could not run it")
                .to_owned(),
        ),
        None => None,
    }
}

/// The last non-empty line of `text`.
fn last_line(text: &str) -> Option<&str> {
    text.lines()
        .rev()
        .map(str::trim)
        .find(|line| !line.is_empty())
}

/// Why a command the project declares (found at `source`) fails when its tool is missing
/// (`what` says how prpd knows): it applies, so the tool must be installed.
pub fn declared_tool_missing(what: &str, source: Option<&str>) -> String {
    format!(
        "the tool is missing: {what}; the project declares this command ({}), so the check applies: install the tool",
        source.unwrap_or("its configuration")
    )
}

/// Why prpd's own default (from `source`, the tools mapping) does not apply when its tool is
/// missing (`what` says how prpd knows): the project does not use that tool.
pub fn guessed_tool_missing(what: &str, source: Option<&str>) -> String {
    format!(
        "the tool is missing: {what}; the project declares no such command and this is prpd's default ({}), so the check does not apply (install the tool, or set the command in prpd.toml [commands])",
        source.unwrap_or("the tools mapping")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A program that ran and found problems is not a missing tool; one the shell or the
    /// package manager could not start is.
    #[test]
    fn a_missing_program_is_told_from_one_that_found_problems() {
        let cases = [
            (
                "golangci-lint run",
                127,
                "sh: 1: golangci-lint: not found\n",
                Some(
                    "`golangci-lint run` could not run its program (exit 127: sh: 1: golangci-lint: not found)",
                ),
            ),
            (
                "npx --no eslint .",
                1,
                "npm error npx canceled due to missing packages and no YES option: [\"eslint@9.0.0\"]\nnpm error A complete log of this run can be found in: /tmp/x.log\n",
                Some(
                    "`npx --no eslint .` could not run its program (exit 1: npm error npx canceled due to missing packages and no YES option: [\"eslint@9.0.0\"])",
                ),
            ),
            (
                // npm 9 (Debian 12's package), whose npx runs nothing from PATH with `--no`.
                "npx --no eslint . --rule 'complexity: [error, 10]'",
                1,
                "npm ERR! canceled\n\nnpm ERR! A complete log of this run can be found in:\nnpm ERR!     /root/.npm/_logs/2026-11-27T10_11_42_543Z-debug-0.log\n",
                Some(
                    "`npx --no eslint . --rule 'complexity: [error, 10]'` could not run its program (exit 1: npm ERR! canceled)",
                ),
            ),
            (
                "npx --no eslint .",
                1,
                "/repo/index.js\n  3:7  error  'x' is assigned a value but never used  no-unused-vars\n\n✖ 1 problem (1 error, 0 warnings)\n",
                None,
            ),
            ("golangci-lint run", 0, "0 issues.\n", None),
        ];
        for (command, exit_code, tail, expected) in cases {
            assert_eq!(
                could_not_run(command, exit_code, tail).as_deref(),
                expected,
                "{command} {exit_code}"
            );
        }
    }

    #[test]
    fn an_npx_tool_is_missing_unless_installed_in_node_modules() {
        let dir = tempfile::tempdir().expect("temp dir");
        let repo = dir.path();
        let tool = "prpd-test-linter-that-is-on-no-path";
        let command = format!("npx --no {tool} .");
        assert_eq!(uninstalled_npx_tool(&command, repo).as_deref(), Some(tool));
        std::fs::create_dir_all(repo.join("node_modules/.bin")).expect("node_modules/.bin");
        std::fs::write(repo.join("node_modules/.bin").join(tool), "").expect("the tool");
        assert_eq!(uninstalled_npx_tool(&command, repo), None);
        assert_eq!(
            uninstalled_npx_tool("npm run lint", repo),
            None,
            "a script is not an exec"
        );
    }
}
