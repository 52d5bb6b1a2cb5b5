//! Commands from Python project configuration: a tool configured in `pyproject.toml`,
//! `setup.cfg`, `pytest.ini` or `tox.ini` is a tool the project runs.
//!
//! Order: `pyproject.toml` tool tables (`[tool.ruff]` → `ruff check .`), then the build of the
//! tool that manages the project (`poetry build` for Poetry, `uv build` for a uv project), then
//! tox environments (`[testenv:lint]` → `tox -e
//! lint`; tox installs each environment's own dependencies, so these run even when the tools
//! are not installed globally) from `tox.ini`, `tox.toml` or `pyproject.toml`'s `[tool.tox]`
//! (its `legacy_tox_ini` string or the native `env_run_base`/`env.<name>` tables), then the
//! tool sections of `setup.cfg`, `pytest.ini` and `tox.ini` (`[flake8]` → `flake8`). A tox
//! environment is judged by [`super::is_safe`] through its `commands`, so an environment named
//! `format` that runs `black .` is not taken as a format check.

use toml::{Table, Value};

use super::{Candidate, CommandKind, DetectError, Directory};
use prpd_base::config_file::parse_toml;

/// `pyproject.toml` tables and the command each implies.
const PYPROJECT_TABLES: &[(&[&str], CommandKind, &str)] = &[
    (
        &["tool", "pytest", "ini_options"],
        CommandKind::Test,
        "pytest",
    ),
    (&["tool", "ruff"], CommandKind::Lint, "ruff check ."),
    (
        &["tool", "ruff", "format"],
        CommandKind::FormatCheck,
        "ruff format --check .",
    ),
    (
        &["tool", "black"],
        CommandKind::FormatCheck,
        "black --check .",
    ),
    (&["tool", "mypy"], CommandKind::Typecheck, "mypy ."),
    (&["tool", "pyright"], CommandKind::Typecheck, "pyright"),
    (
        &["tool", "radon"],
        CommandKind::Complexity,
        "radon cc . -a -nc",
    ),
];

/// INI files, their sections, and the command each section implies.
const INI_SECTIONS: &[(&str, &str, CommandKind, &str)] = &[
    ("setup.cfg", "tool:pytest", CommandKind::Test, "pytest"),
    ("pytest.ini", "pytest", CommandKind::Test, "pytest"),
    ("tox.ini", "pytest", CommandKind::Test, "pytest"),
    ("setup.cfg", "flake8", CommandKind::Lint, "flake8"),
    ("tox.ini", "flake8", CommandKind::Lint, "flake8"),
    (".flake8", "flake8", CommandKind::Lint, "flake8"),
    ("setup.cfg", "mypy", CommandKind::Typecheck, "mypy ."),
    ("mypy.ini", "mypy", CommandKind::Typecheck, "mypy ."),
];

/// The files of [`INI_SECTIONS`], in the order they are read.
const INI_FILES: [&str; 5] = ["setup.cfg", "pytest.ini", "tox.ini", ".flake8", "mypy.ini"];

/// tox environment names per kind, best first. The test kind also falls back to the base
/// `[testenv]`, run as `tox -e py` (the current interpreter).
fn tox_env_names(kind: CommandKind) -> &'static [&'static str] {
    match kind {
        CommandKind::Test => &["test", "tests", "unit", "py"],
        CommandKind::Lint => &["lint", "ruff", "flake8", "pylint", "style"],
        CommandKind::Typecheck => &["typecheck", "type", "types", "typing", "mypy"],
        CommandKind::Build => &["build"],
        CommandKind::FormatCheck => &["format-check", "fmt-check", "format", "fmt"],
        CommandKind::Complexity => &["complexity"],
        CommandKind::Duplication => &["duplication"],
    }
}

/// The Python candidates of `directory`.
pub(super) fn candidates(directory: &Directory<'_>) -> Result<Vec<Candidate>, DetectError> {
    let mut candidates = Vec::new();
    let pyproject = match directory.read("pyproject.toml")? {
        Some(text) => {
            let path = directory.path("pyproject.toml");
            Some(parse_toml::<Table>(&path, &text).map_err(DetectError::Malformed)?)
        }
        None => None,
    };
    let pyproject_file = directory.display("pyproject.toml");
    if let Some(table) = &pyproject {
        candidates.extend(pyproject_candidates(table, &pyproject_file));
        let uv_lock = directory.path("uv.lock").is_file();
        candidates.extend(build_candidate(table, &pyproject_file, uv_lock));
    }
    let tox = directory.read("tox.ini")?.map(|text| parse_ini(&text));
    if let Some(tox) = &tox {
        candidates.extend(tox_candidates(tox, &directory.display("tox.ini")));
    }
    if let Some(text) = directory.read("tox.toml")? {
        let path = directory.path("tox.toml");
        let table: Table = parse_toml(&path, &text).map_err(DetectError::Malformed)?;
        let ini = native_tox(&table);
        candidates.extend(tox_candidates(&ini, &directory.display("tox.toml")));
    }
    if let Some(Value::Table(tox)) = pyproject
        .as_ref()
        .and_then(|table| table.get("tool"))
        .and_then(|tool| tool.get("tox"))
    {
        let ini = match tox.get("legacy_tox_ini").and_then(Value::as_str) {
            Some(legacy) => parse_ini(legacy),
            None => native_tox(tox),
        };
        let label = format!("{pyproject_file} [tool.tox]");
        candidates.extend(tox_candidates(&ini, &label));
    }
    for file in INI_FILES {
        let ini = if file == "tox.ini" {
            tox.clone()
        } else {
            directory.read(file)?.map(|text| parse_ini(&text))
        };
        if let Some(ini) = ini {
            candidates.extend(section_candidates(&ini, file, &directory.display(file)));
        }
    }
    Ok(candidates)
}

/// The build of the tool that manages the project: Poetry's (`[tool.poetry]` or its backend),
/// uv's (`[tool.uv]` or a `uv.lock`). A `[build-system]` table alone declares no build step: it
/// tells pip how to install the project, and every packaged project has one. Building from it
/// (`python -m build`) needs the `build` package, which a healthy project's machine often
/// lacks, and the network for its isolated environment, which the gate does not have; a
/// project that does build its distributions says so in a CI step, a Makefile target or a tox
/// environment, and the command is taken from there.
fn build_candidate(table: &Table, file: &str, uv_lock: bool) -> Option<Candidate> {
    let backend = table
        .get("build-system")
        .and_then(|system| system.get("build-backend"))
        .and_then(Value::as_str)
        .unwrap_or("");
    let (command, source) =
        if has_table(table, &["tool", "poetry"]) || backend.starts_with("poetry") {
            ("poetry build", format!("{file} [tool.poetry]"))
        } else if has_table(table, &["tool", "uv"]) {
            ("uv build", format!("{file} [tool.uv]"))
        } else if uv_lock {
            ("uv build", "uv.lock".to_owned())
        } else {
            return None;
        };
    Some(Candidate::plain(CommandKind::Build, command, source))
}

/// tox's native TOML configuration (`tox.toml`, or `[tool.tox]` in `pyproject.toml`) as the
/// INI sections [`tox_candidates`] reads: `env_run_base` is `[testenv]`, `env.<name>` is
/// `[testenv:<name>]`, and each `commands` list of argument lists becomes one line per
/// command.
fn native_tox(tox: &Table) -> Ini {
    let mut ini = Ini::default();
    let commands_of = |env: &Value| -> Option<String> {
        let commands = env.get("commands")?.as_array()?;
        let lines: Vec<String> = commands
            .iter()
            .filter_map(Value::as_array)
            .map(|command| {
                command
                    .iter()
                    .filter_map(Value::as_str)
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect();
        Some(lines.join("\n"))
    };
    if let Some(commands) = tox.get("env_run_base").and_then(commands_of) {
        ini.sections.push((
            "testenv".to_owned(),
            vec![("commands".to_owned(), commands)],
        ));
    }
    if let Some(Value::Table(envs)) = tox.get("env") {
        for (name, env) in envs {
            if let Some(commands) = commands_of(env) {
                ini.sections.push((
                    format!("testenv:{name}"),
                    vec![("commands".to_owned(), commands)],
                ));
            }
        }
    }
    ini
}

fn pyproject_candidates(table: &Table, file: &str) -> Vec<Candidate> {
    PYPROJECT_TABLES
        .iter()
        .filter(|(keys, ..)| has_table(table, keys))
        .map(|(keys, kind, command)| {
            Candidate::plain(*kind, command, format!("{file} [{}]", keys.join(".")))
        })
        .collect()
}

fn has_table(table: &Table, keys: &[&str]) -> bool {
    let mut current = table;
    for key in keys {
        match current.get(*key) {
            Some(Value::Table(next)) => current = next,
            _ => return false,
        }
    }
    true
}

fn tox_candidates(tox: &Ini, file: &str) -> Vec<Candidate> {
    let mut candidates = Vec::new();
    for kind in CommandKind::ALL {
        for name in tox_env_names(kind) {
            if let Some(commands) = tox.value(&format!("testenv:{name}"), "commands") {
                candidates.push(Candidate::new(
                    kind,
                    format!("tox -e {name}"),
                    commands.to_owned(),
                    format!("{file} env {name}"),
                ));
            }
        }
        if kind == CommandKind::Test
            && let Some(commands) = tox.value("testenv", "commands")
        {
            candidates.push(Candidate::new(
                kind,
                "tox -e py".to_owned(),
                commands.to_owned(),
                format!("{file} [testenv]"),
            ));
        }
    }
    candidates
}

fn section_candidates(ini: &Ini, name: &str, file: &str) -> Vec<Candidate> {
    INI_SECTIONS
        .iter()
        .filter(|(section_file, section, ..)| *section_file == name && ini.has_section(section))
        .map(|(_, section, kind, command)| {
            Candidate::plain(*kind, command, format!("{file} [{section}]"))
        })
        .collect()
}

/// An INI file as Python's configparser reads it, enough for tox and setup.cfg: sections of
/// `key = value` entries, where indented lines continue the previous value.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Ini {
    sections: Vec<(String, Vec<(String, String)>)>,
}

impl Ini {
    fn has_section(&self, name: &str) -> bool {
        self.sections.iter().any(|(section, _)| section == name)
    }

    fn value(&self, section: &str, key: &str) -> Option<&str> {
        self.sections
            .iter()
            .find(|(name, _)| name == section)?
            .1
            .iter()
            .find(|(name, _)| name == key)
            .map(|(_, value)| value.as_str())
    }
}

fn parse_ini(text: &str) -> Ini {
    let mut ini = Ini::default();
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with(['#', ';']) {
            continue;
        }
        if let Some(name) = trimmed
            .strip_prefix('[')
            .and_then(|rest| rest.strip_suffix(']'))
        {
            ini.sections.push((name.trim().to_owned(), Vec::new()));
            continue;
        }
        let Some((_, entries)) = ini.sections.last_mut() else {
            continue;
        };
        if line.starts_with([' ', '\t']) {
            if let Some((_, value)) = entries.last_mut() {
                value.push('\n');
                value.push_str(trimmed);
            }
            continue;
        }
        if let Some((key, value)) = trimmed.split_once(['=', ':']) {
            entries.push((key.trim().to_owned(), value.trim().to_owned()));
        }
    }
    ini
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOX: &str = "\
[tox]
envlist = py311, lint, format

[testenv]
deps = pytest
commands = pytest {posargs}

[testenv:lint]
deps = ruff
commands =
    ruff check .
    ruff format --check .

[testenv:format]
commands = black .

[flake8]
max-line-length = 100
";

    #[test]
    fn ini_parses_sections_and_continued_values() {
        let ini = parse_ini(TOX);
        assert_eq!(
            ini.value("testenv:lint", "commands"),
            Some("\nruff check .\nruff format --check .")
        );
        assert_eq!(ini.value("testenv", "commands"), Some("pytest {posargs}"));
        assert!(ini.has_section("flake8"));
        assert_eq!(ini.value("tox", "missing"), None);
    }

    #[test]
    fn tox_envs_and_sections_become_candidates() {
        let ini = parse_ini(TOX);
        let mut candidates = tox_candidates(&ini, "tox.ini");
        candidates.extend(section_candidates(&ini, "tox.ini", "tox.ini"));
        let summary: Vec<(CommandKind, &str, &str)> = candidates
            .iter()
            .map(|candidate| {
                (
                    candidate.kind,
                    candidate.command.as_str(),
                    candidate.source.as_str(),
                )
            })
            .collect();
        assert_eq!(
            summary,
            [
                (CommandKind::Test, "tox -e py", "tox.ini [testenv]"),
                (CommandKind::Lint, "tox -e lint", "tox.ini env lint"),
                (
                    CommandKind::FormatCheck,
                    "tox -e format",
                    "tox.ini env format"
                ),
                (CommandKind::Lint, "flake8", "tox.ini [flake8]"),
            ]
        );
        assert_eq!(candidates[2].judged, "black .");
    }

    #[test]
    fn pyproject_tables_become_candidates() {
        let table: Table = toml::from_str(
            "[project]\nname = \"x\"\n[tool.pytest.ini_options]\naddopts = \"-q\"\n[tool.ruff]\nline-length = 100\n[tool.mypy]\nstrict = true\n",
        )
        .expect("valid toml");
        let candidates = pyproject_candidates(&table, "pyproject.toml");
        assert_eq!(
            candidates,
            [
                Candidate::plain(
                    CommandKind::Test,
                    "pytest",
                    "pyproject.toml [tool.pytest.ini_options]".to_owned()
                ),
                Candidate::plain(
                    CommandKind::Lint,
                    "ruff check .",
                    "pyproject.toml [tool.ruff]".to_owned()
                ),
                Candidate::plain(
                    CommandKind::Typecheck,
                    "mypy .",
                    "pyproject.toml [tool.mypy]".to_owned()
                ),
            ]
        );
    }

    #[test]
    fn builds_come_from_the_tool_that_manages_the_project() {
        let cases = [
            (
                "[tool.poetry]\nname = 'x'\n",
                false,
                Some(("poetry build", "pyproject.toml [tool.poetry]")),
            ),
            (
                "[build-system]\nbuild-backend = 'poetry.core.masonry.api'\n",
                false,
                Some(("poetry build", "pyproject.toml [tool.poetry]")),
            ),
            (
                "[tool.uv]\ndev-dependencies = []\n",
                false,
                Some(("uv build", "pyproject.toml [tool.uv]")),
            ),
            (
                "[build-system]\nrequires = ['hatchling']\nbuild-backend = 'hatchling.build'\n",
                true,
                Some(("uv build", "uv.lock")),
            ),
            (
                "[build-system]\nrequires = ['setuptools']\nbuild-backend = 'setuptools.build_meta'\n",
                false,
                None,
            ),
            ("[project]\nname = 'x'\n", false, None),
        ];
        for (text, uv_lock, expected) in cases {
            let table: Table = toml::from_str(text).expect("valid toml");
            let found = build_candidate(&table, "pyproject.toml", uv_lock)
                .map(|candidate| (candidate.command, candidate.source));
            let expected =
                expected.map(|(command, source)| (command.to_owned(), source.to_owned()));
            assert_eq!(found, expected, "{text}");
        }
    }

    #[test]
    fn native_tox_tables_read_like_tox_ini() {
        let table: Table = toml::from_str(
            "env_list = ['3.12', 'lint']\n[env_run_base]\ncommands = [['pytest', '{posargs}']]\n[env.lint]\ncommands = [['ruff', 'check', '.'], ['ruff', 'format', '--check', '.']]\n[env.fix]\ncommands = [['ruff', 'check', '--fix', '.']]\n",
        )
        .expect("valid toml");
        let ini = native_tox(&table);
        assert_eq!(ini.value("testenv", "commands"), Some("pytest {posargs}"));
        assert_eq!(
            ini.value("testenv:lint", "commands"),
            Some("ruff check .\nruff format --check .")
        );
        let summary: Vec<(CommandKind, String)> = tox_candidates(&ini, "tox.toml")
            .into_iter()
            .map(|candidate| (candidate.kind, candidate.command))
            .collect();
        assert_eq!(
            summary,
            [
                (CommandKind::Test, "tox -e py".to_owned()),
                (CommandKind::Lint, "tox -e lint".to_owned()),
            ]
        );
    }
}
